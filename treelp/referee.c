/* referee.c — the referee's table (sd_referee.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../src/sd_arpa.h"
#include "../src/sd_backoff.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_exact_otm.h"
#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../sims/verifiers/sd_tree.h"
#include "sd_referee.h"
#include "sd_treelp.h"

#define S_NGRAM_TOKENS 16

enum { S_SINGLE, S_KDRAFT, S_TREE };

/* Sets parameter `name` of vt in par to the number v when vt declares it. */
static int S_set(sd_params *par, const sd_verifier_type *vt, const char *name, size_t v, sd_error *err)
{
    if (!sd_params_decl(vt, name, NULL))
        return SD_OK;
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    return sd_params_parse(par, vt, name, buf, err);
}

/* Exact expected accepted drafts of one iteration from (1, prev): a tree
 * verifier's tree enumeration (its kind in vt->tree), else its iteration
 * law with G drafted positions (the tree depth for a tree class). */
static int S_exact(const sd_verifier_type *vt, const sd_params *par, int tree, const sd_chain *c, size_t prev,
                   double *out, sd_error *err)
{
    if (vt->tree)
        return sd_exact_tree_accept(c, 1, prev, par, vt->tree, out, NULL, err);
    if (vt->iteration_law) {
        sd_iter_law law = {0};
        int rc = vt->iteration_law(c, par, 1, prev, &law, err);
        if (rc) {
            sd_iter_law_free(&law);
            return rc;
        }
        size_t G = tree ? par->tree_depth : sd_draft_len(c, par, 1);
        double s = 0.0;
        for (size_t i = 0; i < law.n; i++) {
            const sd_iter_outcome *o = &law.o[i];
            size_t a = o->rejected ? o->emitted - 1 : (o->emitted > G ? G : o->emitted);
            s += o->prob * (double)a;
        }
        sd_iter_law_free(&law);
        *out = s;
        return SD_OK;
    }
    return sd_error_set(err, SD_EUSAGE, "no exact law of an iteration");
}

static void S_params_text(const sd_verifier_type *vt, const sd_params *par, char *buf, size_t len)
{
    static const char *const names[] = {"k", "M", "gamma", "tree", "draw"};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!sd_params_decl(vt, names[i], NULL))
            continue;
        char v[96];
        if (strcmp(names[i], "k") == 0 || strcmp(names[i], "M") == 0)
            snprintf(v, sizeof v, "%zu", par->k);
        else if (strcmp(names[i], "gamma") == 0)
            snprintf(v, sizeof v, "%zu", par->gamma);
        else if (strcmp(names[i], "tree") == 0) {
            size_t o = 0;
            v[0] = '\0';
            for (size_t l = 0; l < par->tree_depth && o < sizeof v - 12; l++)
                o += (size_t)snprintf(v + o, sizeof v - o, "%s%zu", l ? "," : "", par->tree[l]);
        } else
            snprintf(v, sizeof v, "%s", sd_tree_draw_name(sd_tree_draw_of(par)));
        int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", names[i], v);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
}

static void S_note(sd_referee_row *r, const char *what, const sd_error *e)
{
    size_t l = strlen(r->note);
    snprintf(r->note + l, sizeof r->note - l, "%s%s: %s", l ? "; " : "", what, e->msg[0] ? e->msg : "refused");
}

int sd_referee_model(const sd_chain *c, const char *model, size_t prev, const sd_referee_opts *o,
                     sd_referee_row **rows, size_t *n, sd_error *err)
{
    if (prev >= c->V)
        return sd_error_set(err, SD_EUSAGE, "referee: x_0 = %zu is outside the vocabulary of %zu tokens", prev,
                            c->V);
    const double *p = sd_chain_p(c, 1, prev), *q = sd_chain_q(c, 1, prev);
    /* the k-draft class at draft length G > 1: tree-valid on the tree
     * (k, 1, ..., 1) drafted i.i.d., solved once for all its verifiers */
    double seq_opt = NAN;
    int seq_solved = 0;
    char seq_note[SD_ERROR_MSG_MAX + 256] = "";
    for (size_t i = 0, pass = 0;; pass = !pass, i += pass == 0) {
        const sd_verifier_type *vt = sd_verifier_at(i);
        if (!vt)
            break;
        if (vt->flags & SD_VERIFIER_CONTROL)
            continue;
        int cls = sd_params_decl(vt, "tree", NULL)                                   ? S_TREE
                  : (sd_params_decl(vt, "k", NULL) || sd_params_decl(vt, "M", NULL)) ? S_KDRAFT
                                                                                     : S_SINGLE;
        /* pass 1: the k-draft verifiers again at gamma G (when they read it) */
        if (pass == 1 && !(cls == S_KDRAFT && o->gamma > 1 && sd_params_decl(vt, "gamma", NULL)))
            continue;
        sd_params par;
        sd_error e = {0};
        sd_params_defaults(&par, vt);
        int rc = S_set(&par, vt, "k", o->k, &e);
        if (!rc)
            rc = S_set(&par, vt, "M", o->k, &e);
        if (!rc)
            rc = S_set(&par, vt, "gamma", cls == S_KDRAFT && pass == 0 ? 1 : o->gamma, &e);
        if (!rc && cls == S_TREE && o->tree)
            rc = sd_params_parse(&par, vt, "tree", o->tree, &e);
        if (!rc && !sd_verifier_claims_lossless(vt, &par))
            continue;
        sd_referee_row *nr = realloc(*rows, (*n + 1) * sizeof **rows);
        if (!nr)
            return sd_error_set(err, SD_ENOMEM, "out of memory (referee rows)");
        *rows = nr;
        sd_referee_row *r = &nr[(*n)++];
        memset(r, 0, sizeof *r);
        r->algo = vt->name;
        snprintf(r->model, sizeof r->model, "%s", model);
        S_params_text(vt, &par, r->params, sizeof r->params);
        r->exact_accepted = r->optimum = r->fraction = r->optimum_wor = r->tree_ot = NAN;
        r->optimum_kind = cls == S_TREE ? "tree-valid" : cls == S_KDRAFT ? (pass ? "tree-valid" : "k-draft") : "valid-verify";
        if (rc) { /* the referee's parameters do not fit this verifier */
            S_note(r, "parameters", &e);
            continue;
        }
        e = (sd_error){0};
        if (S_exact(vt, &par, cls == S_TREE, c, prev, &r->exact_accepted, &e)) {
            r->exact_accepted = NAN;
            S_note(r, "exact value", &e);
        }
        e = (sd_error){0};
        if (cls == S_SINGLE) {
            double ex[SD_ACCEPT_NALGO];
            r->optimum_kind = "valid-verify";
            if (!sd_params_decl(vt, "gamma", NULL)) {
                snprintf(e.msg, sizeof e.msg, "it declares no gamma, so no fixed draft length to compare with");
                S_note(r, "valid-verify optimum", &e);
            } else if (sd_exact_accept_length(c, 1, prev, par.gamma, ex, NULL, &e))
                S_note(r, "valid-verify optimum", &e);
            else
                r->optimum = ex[SD_ACCEPT_BLOCK];
        } else if (cls == S_KDRAFT && pass == 1) {
            r->optimum_kind = "tree-valid";
            if (!seq_solved) {
                seq_solved = 1;
                sd_params tp;
                sd_lp_result res;
                char shape[160];
                size_t used = (size_t)snprintf(shape, sizeof shape, "%zu", par.k);
                for (size_t l = 1; l < par.gamma && used < sizeof shape - 4; l++)
                    used += (size_t)snprintf(shape + used, sizeof shape - used, ",1");
                sd_params_defaults(&tp, NULL);
                if (sd_params_parse_decl(&tp, &sd_tree_decls[SD_TREE_DECL_SHAPE], shape, &e) ||
                    sd_lp_tree_valid(c, 1, prev, &tp, SD_DRAW_IID, NULL, &res, &e))
                    snprintf(seq_note, sizeof seq_note, "tree-valid --tree %s --draw iid (the LP does not reach): %s",
                             shape, e.msg);
                else if (!res.optimal)
                    snprintf(seq_note, sizeof seq_note, "tree-valid --tree %s: solver status '%s'", shape, res.status);
                else
                    seq_opt = res.optimum;
            }
            r->optimum = seq_opt;
            if (seq_note[0]) {
                size_t l = strlen(r->note);
                snprintf(r->note + l, sizeof r->note - l, "%s%s", l ? "; " : "", seq_note);
            }
        } else if (cls == S_KDRAFT) {
            r->optimum_kind = "k-draft";
            if (sd_exact_otm_acceptance(p, q, c->V, par.k, &r->optimum, NULL, &e)) {
                r->optimum = NAN;
                S_note(r, "k-draft optimum", &e);
            }
            e = (sd_error){0};
            if (sd_exact_otm_wor_acceptance(p, q, c->V, par.k, 0, &r->optimum_wor, NULL, &e)) {
                r->optimum_wor = NAN;
                S_note(r, "optimum without replacement", &e);
            }
        } else {
            int draw = sd_params_decl(vt, "draw", NULL) ? (int)sd_tree_draw_of(&par) : SD_DRAW_IID;
            sd_lp_result res;
            r->optimum_kind = "tree-valid";
            if (sd_lp_tree_valid(c, 1, prev, &par, draw, NULL, &res, &e))
                S_note(r, "tree-valid (the LP does not reach)", &e);
            else if (!res.optimal) {
                snprintf(e.msg, sizeof e.msg, "solver status '%s'", res.status);
                S_note(r, "tree-valid", &e);
            } else
                r->optimum = res.optimum;
            e = (sd_error){0};
            if (sd_lp_tree_ot(c, 1, prev, &par, draw, NULL, &res, &e))
                S_note(r, "tree-ot (the LP does not reach)", &e);
            else if (res.optimal)
                r->tree_ot = res.optimum;
        }
        if (cls == S_KDRAFT && (vt->flags & SD_VERIFIER_OWN_DRAFTS)) {
            /* shown for reference; its drafts are not i.i.d., so it is not its class */
            r->optimum_kind = "k-draft (i.i.d. drafts; not this verifier's drafting)";
            snprintf(e.msg, sizeof e.msg, "its drafts are not k i.i.d. draws from p; no fraction");
            S_note(r, "class", &e);
        } else if (isfinite(r->exact_accepted) && isfinite(r->optimum))
            r->fraction = r->optimum > 0.0 ? r->exact_accepted / r->optimum : (r->exact_accepted > 0.0 ? INFINITY : 1.0);
    }
    return SD_OK;
}

/* --- the benchmark models ------------------------------------------------ */

/* A chain with zeros: the generated chain (V 5, T 8, seed 10) with the
 * zero pattern of the help, rows renormalised. */
static sd_chain *S_zeros(sd_error *err)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = 5;
    gp.T = 8;
    sd_chain *c = sd_chain_generate(&gp, err);
    if (!c)
        return NULL;
    size_t V = c->V;
    for (int which = 0; which < 2; which++) {
        size_t steps = which ? c->target_steps : c->draft_steps;
        double *rows = which ? c->target : c->draft;
        for (size_t s = 0; s < steps; s++)
            for (size_t a = 0; a < V; a++) {
                double *r = rows + (s * V + a) * V, sum = 0.0;
                for (size_t b = 0; b < V; b++) {
                    if (which ? (a + 2 * b) % 4 == 1 : (a + b) % 3 == 0)
                        r[b] = 0.0;
                    sum += r[b];
                }
                for (size_t b = 0; b < V; b++)
                    r[b] /= sum;
            }
    }
    if (sd_chain_validate(c, "chain-zeros", err)) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}

/* The fortunes bigram on <s> and the 15 words of highest unigram
 * probability; NULL with err set (SD_EIO when the file is absent). */
static sd_chain *S_fortunes(const char *path, sd_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        sd_error_set(err, SD_EIO, "%s not found (make lm)", path);
        return NULL;
    }
    sd_arpa *ta = NULL;
    sd_backoff *m = NULL;
    int rc = sd_arpa_load(path, 0, &ta, err);
    if (!rc)
        rc = sd_backoff_from_arpa(ta, 2, ta, 8, 0, &m, err);
    sd_arpa_free(ta);
    if (rc) {
        if (rc != SD_EIO)
            err->code = SD_EIO; /* unreadable: skipped like an absent file */
        return NULL;
    }
    size_t V = m->V, W = S_NGRAM_TOKENS, tok[S_NGRAM_TOKENS];
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    sd_chain *c = NULL;
    if (!p || !q) {
        sd_error_set(err, SD_ENOMEM, "out of memory");
        goto done;
    }
    sd_backoff_rows(m, m->start, p, NULL);
    tok[0] = m->start;
    size_t n = 1;
    for (; n < W && n < V; n++) { /* the next most probable word not taken */
        size_t best = SIZE_MAX;
        for (size_t x = 0; x < V; x++) {
            int taken = 0;
            for (size_t j = 0; j < n; j++)
                taken |= tok[j] == x;
            if (!taken && (best == SIZE_MAX || p[x] > p[best]))
                best = x;
        }
        tok[n] = best;
    }
    c = sd_chain_alloc(n, 8, 1, 1, err);
    if (!c)
        goto done;
    double ps = 0.0;
    for (size_t j = 0; j < n; j++)
        ps += p[tok[j]];
    for (size_t a = 0; a < n; a++) {
        sd_backoff_rows(m, tok[a], NULL, q);
        double qs = 0.0;
        for (size_t j = 0; j < n; j++)
            qs += q[tok[j]];
        for (size_t j = 0; j < n; j++) {
            c->draft[a * n + j] = p[tok[j]] / ps;
            c->target[a * n + j] = q[tok[j]] / qs;
        }
    }
    c->init[0] = 1.0;
    if (sd_chain_validate(c, "fortunes-bigram", err)) {
        sd_chain_free(c);
        c = NULL;
    }
done:
    free(p);
    free(q);
    sd_backoff_free(m);
    return c;
}

int sd_referee_bench_model(size_t i, const char *arpa_path, sd_chain **out, const char **name, sd_error *err)
{
    static const char *const names[SD_REFEREE_NMODELS] = {"default", "spectr-bernoulli", "chain-zeros",
                                                          "fortunes-bigram"};
    *out = NULL;
    if (i >= SD_REFEREE_NMODELS)
        return sd_error_set(err, SD_EUSAGE, "referee: no benchmark model %zu", i);
    *name = names[i];
    if (i == 0) {
        sd_gen_params gp;
        sd_gen_defaults(&gp);
        *out = sd_chain_generate(&gp, err);
    } else if (i == 1) {
        double p[2] = {0.75, 0.25}, q[2] = {0.25, 0.75};
        *out = sd_chain_from_pq(p, q, 2, 8, err);
    } else if (i == 2) {
        *out = S_zeros(err);
    } else {
        *out = S_fortunes(arpa_path, err);
    }
    return *out ? SD_OK : (int)err->code;
}
