/* model_arpa.c — --arpa FILE and friends (model_arpa.h): an ARPA backoff
 * language model as a chain (src/sd_arpa.h, src/sd_backoff.h). */
#include "model_arpa.h"

#include "../src/sd_arpa_draft2.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "../src/sd_arpa.h"
#include "../src/sd_ngram.h"
#include "../src/sd_trace_write.h"
#include "../src/sd_parse.h"
#include "../src/sd_sha256.h"
#include "cli.h"

const char cli_arpa_help[] =
    "  --arpa FILE         an ARPA backoff language model (SRILM, KenLM, IRSTLM):\n"
    "                      the target is its bigram (--order 2) or unigram (1), a\n"
    "                      chain that starts after <s> (never generated); rows on\n"
    "                      demand from the sparse bigrams, never V x V; horizon --T\n"
    "                      (default 50); verifiers with a sparse-row kernel: token,\n"
    "                      block, rrs, spectr (k-Seq), tree-rrs\n"
    "  --draft-arpa FILE   the draft's file (default: the same); --draft-order 1:\n"
    "                      its unigram; 2: its bigram (token exact at any gamma;\n"
    "                      kernels of token, block, rrs, spectr, tree-rrs)\n";

int cli_arpa_option(cli_arpa_opts *ao, int c, const char *arg, sd_error *err)
{
    int rc = SD_OK;
    switch (c) {
    case CLI_OPT_ARPA:
        ao->file = arg;
        if (!*arg)
            rc = sd_error_set(err, SD_EUSAGE, "--arpa: expected a file name, got ''");
        break;
    case CLI_OPT_DRAFT_ARPA:
        ao->draft_file = arg;
        if (!*arg)
            rc = sd_error_set(err, SD_EUSAGE, "--draft-arpa: expected a file name, got ''");
        break;
    case CLI_OPT_ORDER:
        rc = sd_parse_size("--order", arg, 1, 9, &ao->order, err);
        if (!rc && ao->order > 3)
            rc = sd_error_set(err, SD_EUSAGE, "--order %zu: the target is the unigram (1), the bigram (2) or, for "
                                              "traces only, the trigram (3)", ao->order);
        break;
    case CLI_OPT_DRAFT_ORDER:
        rc = sd_parse_size("--draft-order", arg, 1, 9, &ao->draft_order, err);
        if (!rc && ao->draft_order > 3)
            rc = sd_error_set(err, SD_EUSAGE, "--draft-order %zu: the draft is the unigram (1) or, for traces only, "
                                              "the bigram (2) or trigram (3)", ao->draft_order);
        break;
    default: return 0;
    }
    ao->given = 1;
    return rc ? -1 : 1;
}

int cli_arpa_open(const cli_arpa_opts *ao, size_t T, size_t budget, sd_backoff **out, char sha256[65],
                  sd_error *err)
{
    *out = NULL;
    sha256[0] = '\0';
    if (!ao->file)
        return sd_error_set(err, SD_EUSAGE, "--order/--draft-arpa/--draft-order need --arpa FILE");
    if (ao->order > 2)
        return sd_error_set(err, SD_EUSAGE, "--order %zu: a trigram target is not a first-order chain: the exact "
                                            "values and kernels take --order 1 or 2; traces take 3 (gen --arpa FILE "
                                            "--order 3 --trace N -o DIR, then simdec trace)", ao->order);
    if (ao->draft_order == 2 && (ao->order ? ao->order : 2) != 2)
        return sd_error_set(err, SD_EUSAGE, "--draft-order 2 with --order %zu: a context-dependent draft takes a "
                            "bigram target and a bigram draft (--order 2 --draft-order 2)", ao->order);
    if (ao->draft_order > 2)
        return sd_error_set(err, SD_EUSAGE, "--draft-order %zu: the exact values and kernels of --arpa take a unigram "
                                            "draft or a bigram one (--draft-order 2: token's exact values at every "
                                            "gamma, the kernels of token, block, rrs, spectr and tree-rrs), whose "
                                            "rows depend on the previous token only; a trigram draft's row depends "
                                            "on two, which a first-order chain does not carry: traces take it (gen "
                                            "--arpa FILE --draft-order %zu --trace N -o DIR, then simdec trace)",
                            ao->draft_order, ao->draft_order);
    sd_arpa *ta = NULL, *da = NULL;
    int rc = sd_arpa_load(ao->file, budget, &ta, err);
    if (!rc && ao->draft_file && strcmp(ao->draft_file, ao->file) != 0)
        rc = sd_arpa_load(ao->draft_file, budget, &da, err);
    if (!rc)
        rc = sd_sha256_file(ao->file, sha256, err);
    if (!rc)
        rc = sd_backoff_from_arpa(ta, ao->order ? ao->order : 2, da ? da : ta, T, budget, out, err);
    if (!rc && ao->draft_order == 2) { /* a bigram draft (sd_arpa_draft2.h): token's exact values, the sparse kernels */
        rc = sd_arpa_draft2_attach(*out, ta, da ? da : ta, budget, err);
        if (rc) {
            sd_backoff_free(*out);
            *out = NULL;
        }
    }
    static int noted; /* once per process (a sweep opens the model at every point) */
    if (!rc && (*out)->row_dev > 1e-9 && !noted++) {
        const sd_backoff *m = *out;
        fprintf(stderr, "simdec: note: %s: rows renormalised; largest |row sum - 1| = %.6g (%s%s%s)\n",
                ao->file, m->row_dev, m->row_dev_ctx >= 0 ? "the row after '" : "the unigram",
                m->row_dev_ctx >= 0 ? m->words[m->row_dev_ctx] : "", m->row_dev_ctx >= 0 ? "'" : "");
    }
    sd_arpa_free(ta);
    sd_arpa_free(da);
    return rc;
}

int cli_arpa_theorem1_draft2(const cli_arpa_opts *ao, size_t T, size_t budget, double *rejections,
                             double *target_calls, size_t *V, char sha256[65], sd_error *err)
{
    sha256[0] = '\0';
    if (!ao->file)
        return sd_error_set(err, SD_EUSAGE, "--order/--draft-arpa/--draft-order need --arpa FILE");
    if ((ao->order ? ao->order : 2) != 2 || ao->draft_order != 2)
        return sd_error_set(err, SD_EUSAGE, "--draft-order %zu with --order %zu: a context-dependent draft takes a "
                            "bigram target and a bigram draft (--order 2 --draft-order 2)", ao->draft_order,
                            ao->order ? ao->order : 2);
    if (T < 1 || T > SD_BACKOFF_MAX_T)
        return sd_error_set(err, SD_EUSAGE, "--T %zu: expected 1..%zu", T, SD_BACKOFF_MAX_T);
    sd_arpa *ta = NULL, *da = NULL;
    sd_backoff *m = NULL;
    double *tv = NULL;
    int rc = sd_arpa_load(ao->file, budget, &ta, err);
    int same = !ao->draft_file || strcmp(ao->draft_file, ao->file) == 0;
    if (!rc && !same)
        rc = sd_arpa_load(ao->draft_file, budget, &da, err);
    if (!rc && (da ? da : ta)->order < 2)
        rc = sd_error_set(err, SD_EUSAGE, "--draft-order 2: %s has order 1", same ? ao->file : ao->draft_file);
    if (!rc)
        rc = sd_sha256_file(ao->file, sha256, err);
    if (!rc)
        rc = sd_backoff_from_arpa(ta, 2, da ? da : ta, T, budget, &m, err);
    if (!rc && sd_backoff_bytes(m->V, m->nnz, 0) + 5 * m->V * sizeof(double) > budget)
        rc = sd_error_set(err, SD_ETOOBIG, "a bigram draft's TV needs 5 vectors of V = %zu beside the model; "
                          "memory budget %zu bytes", m->V, budget);
    if (!rc && !(tv = calloc(m->V, sizeof *tv)))
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
    double dev = 0.0;
    long dev_ctx = -1, bad = -1;
    if (!rc && !same) { /* the same file at the same order: p_a = q_a, every TV 0 */
        rc = sd_arpa_draft2_attach(m, ta, da, budget, err);
        if (!rc)
            rc = sd_backoff_draft2_tv(m, tv, err);
        if (!rc && m->draft2->row_dev > dev) {
            dev = m->draft2->row_dev;
            dev_ctx = m->draft2->row_dev_ctx;
        }
    }
    if (!rc) {
        rc = sd_backoff_theorem1_tv(m, tv, rejections, target_calls, &bad, err);
        if (rc == SD_EDATA && bad >= 0)
            sd_error_set(err, SD_EDATA, "%s: the draft's bigram row after '%s' has no mass on the target's words, "
                         "and the target reaches that context", ao->draft_file, m->words[bad]);
    }
    if (!rc && dev > 1e-9)
        fprintf(stderr, "simdec: note: %s: draft rows renormalised; largest |row sum - 1| = %.6g (the row after "
                "'%s')\n", ao->draft_file, dev, dev_ctx >= 0 ? da->words[dev_ctx] : "its unigram");
    if (!rc)
        *V = m->V;
    free(tv);
    sd_backoff_free(m);
    sd_arpa_free(ta);
    sd_arpa_free(da);
    return rc;
}

void cli_arpa_summary(FILE *f, const cli_arpa_opts *ao, const sd_backoff *m)
{
    if (ao->file)
        fprintf(f, "%s (ARPA), target order %zu, draft %s %s, V=%zu, T=%zu\n          (%zu seen bigrams; "
                   "rows on demand, largest row deviation %.6g renormalised)\n",
                ao->file, ao->order ? ao->order : 2, ao->draft_file ? ao->draft_file : "its",
                m->draft2 ? "bigram" : "unigram", m->V, m->T, m->nnz, m->row_dev);
    else
        fprintf(f, "single-token problem (--p/--q), V=%zu, T=%zu\n          (one row pair kept: O(V) memory, "
                   "TV %.6f)\n", m->V, m->T, m->tv[0]);
}

void cli_arpa_describe(const cli_arpa_opts *ao, const sd_backoff *m, json_t *o)
{
    if (ao->file) {
        json_object_set_new(o, "source", json_string("arpa"));
        json_object_set_new(o, "arpa", json_string(ao->file));
        json_object_set_new(o, "order", json_integer((json_int_t)(ao->order ? ao->order : 2)));
        json_object_set_new(o, "draft_arpa", json_string(ao->draft_file ? ao->draft_file : ao->file));
        json_object_set_new(o, "draft_order", json_integer((json_int_t)(ao->draft_order ? ao->draft_order : 1)));
        json_object_set_new(o, "bigrams", json_integer((json_int_t)m->nnz));
        json_object_set_new(o, "row_max_deviation", json_real(m->row_dev));
    } else {
        json_object_set_new(o, "source", json_string("pq"));
    }
    json_object_set_new(o, "vocab", json_integer((json_int_t)m->V));
    json_object_set_new(o, "horizon", json_integer((json_int_t)m->T));
    json_object_set_new(o, "table_bytes", json_integer((json_int_t)sd_backoff_bytes(m->V, m->nnz, !m->off)));
}

int cli_model_lists_check(const cli_model_opts *mo, sd_error *err)
{
    double tol = mo->tol > 0.0 ? mo->tol : 1e-9;
    const char *name[2] = {"--p", "--q"};
    double sum[2] = {mo->psum, mo->qsum};
    int given[2] = {mo->p != NULL, mo->q != NULL};
    for (int i = 0; i < 2; i++)
        if (given[i] && !(fabs(sum[i] - 1.0) <= tol))
            return sd_error_set(err, mo->pq_file[i] ? SD_EDATA : SD_EUSAGE,
                                "%s list: the entries sum to %.12g; expected 1 (within %s)%s", name[i], sum[i],
                                mo->tol > 0.0 ? "--tol" : "1e-9",
                                mo->tol > 0.0 ? "" : "; --tol admits more, e.g. --tol 1e-6 for float32 rows");
    return SD_OK;
}

int cli_sparse_open(const cli_model_opts *mo, cli_model *m, int *opened, sd_error *err)
{
    *opened = 0;
    if (mo->arpa.given) {
        if (mo->file || mo->p || mo->q || mo->gen_given || mo->stream)
            return sd_error_set(err, SD_EUSAGE, "--arpa is a model of its own: drop --model/--p/--q/--V/--stream");
        int rc = cli_arpa_open(&mo->arpa, mo->T_given ? mo->gen.T : 50, m->budget, &m->backoff, m->sha256, err);
        if (rc)
            return rc;
        m->view = sd_model_of_backoff(m->backoff, m->backoff->V, m->backoff->T);
        *opened = 1;
        return SD_OK;
    }
    if (mo->p && mo->q && cli_model_lists_check(mo, err))
        return err ? (int)err->code : SD_EDATA;
    if (mo->p && mo->q && mo->pV == mo->qV && !mo->file && !mo->gen_given &&
        sd_gen_chain_bytes(mo->pV, mo->T_given ? mo->gen.T : 1) > m->budget / 2) {
        /* a chain of identical rows that would not fit: keep the one row pair */
        int rc = sd_backoff_iid(mo->p, mo->q, mo->pV, mo->T_given ? mo->gen.T : 1, m->budget, &m->backoff, err);
        if (rc)
            return rc;
        m->view = sd_model_of_backoff(m->backoff, mo->pV, m->backoff->T);
        *opened = 1;
    }
    return SD_OK;
}

/* --- traces (gen --arpa FILE --trace N) ---------------------------------- */

typedef struct {
    sd_ngram *draft, *target;
    double *dev;     /* largest row deviation so far */
    long *dev_ctx;   /* its context (-1: none) */
} S_trace_ctx;

static int S_trace_rows(const void *vctx, const int64_t *hist, size_t t, double *p, double *q, sd_error *err)
{
    const S_trace_ctx *c = vctx;
    double d1 = 0.0, d2 = 0.0;
    int rc = sd_ngram_row(c->draft, hist, t, p, &d1, err);
    if (!rc)
        rc = sd_ngram_row(c->target, hist, t, q, &d2, err);
    if (!rc && (d1 > *c->dev || d2 > *c->dev)) {
        *c->dev = d1 > d2 ? d1 : d2;
        *c->dev_ctx = (long)hist[t - 1];
    }
    return rc;
}

/* Without rows, a bigram or unigram target with a unigram or bigram draft
 * draws each token from its sparse row (sd_backoff_q_inverse: the inverse
 * CDF at the same uniform, without O(V) work) and writes p(y)/q(y). */
typedef struct {
    const sd_backoff *m;
    const double *ucum;
} S_draw_ctx;

static int S_trace_draw(const void *vctx, const int64_t *hist, size_t t, double v, size_t *y, double *r, sd_error *err)
{
    (void)err;
    const S_draw_ctx *c = vctx;
    size_t a = (size_t)hist[t - 1];
    *y = sd_backoff_q_inverse(c->m, c->ucum, a, v);
    double q = sd_backoff_q(c->m, a, *y), p = c->m->draft2 ? sd_backoff_draft2_p(c->m, a, *y) : c->m->p[*y];
    *r = p / q;
    return SD_OK;
}

static int S_trace_sparse(const cli_arpa_opts *ao, const sd_arpa *ta, const sd_arpa *da, size_t order, size_t dorder,
                          size_t T, size_t n, uint64_t seed, const char *dir, size_t budget, sd_error *err)
{
    sd_backoff *m = NULL;
    double *init = NULL, *ucum = NULL;
    int rc = sd_backoff_from_arpa(ta, order, da ? da : ta, T, budget, &m, err);
    if (!rc && dorder == 2)
        rc = sd_arpa_draft2_attach(m, ta, da ? da : ta, budget, err);
    size_t used = rc ? 0 : sd_arpa_bytes(ta->V, ta->n2, ta->n3) + sd_backoff_bytes(m->V, m->nnz, 0) +
                               (2 * m->V + 1) * sizeof(double);
    if (!rc && budget && used >= budget)
        rc = sd_error_set(err, SD_ETOOBIG, "%s: the sparse rows take about %.3g MB; memory budget %.3g MB", ao->file,
                          (double)used / 1e6, (double)budget / 1e6);
    if (!rc && (!(init = calloc(m->V, sizeof *init)) || !(ucum = malloc((m->V + 1) * sizeof *ucum))))
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
    if (!rc) {
        init[m->start] = 1.0; /* x_0 = <s> */
        sd_backoff_ucum(m, ucum);
        S_draw_ctx c = {m, ucum};
        rc = sd_trace_write_draw(n, T, m->V, init, S_trace_draw, &c, seed, dir, budget ? budget - used : 0, err);
    }
    if (!rc && m->row_dev > 1e-9)
        fprintf(stderr, "simdec: note: %s: rows renormalised; largest |row sum - 1| = %.6g (%s%s%s)\n", ao->file,
                m->row_dev, m->row_dev_ctx >= 0 ? "the row after '" : "the unigram",
                m->row_dev_ctx >= 0 ? m->words[m->row_dev_ctx] : "", m->row_dev_ctx >= 0 ? "'" : "");
    free(init);
    free(ucum);
    sd_backoff_free(m);
    return rc;
}

int cli_arpa_trace(const cli_arpa_opts *ao, size_t T, size_t n, uint64_t seed, int rows, const char *dir,
                   size_t budget, sd_error *err)
{
    if (!ao->file)
        return sd_error_set(err, SD_EUSAGE, "--order/--draft-arpa/--draft-order need --arpa FILE");
    if (T < 1 || T > SD_BACKOFF_MAX_T)
        return sd_error_set(err, SD_EUSAGE, "--T %zu: expected 1..%zu", T, SD_BACKOFF_MAX_T);
    sd_arpa *ta = NULL, *da = NULL;
    sd_ngram *gt = NULL, *gd = NULL;
    double *init = NULL;
    int rc = sd_arpa_load(ao->file, budget, &ta, err);
    if (!rc && ao->draft_file && strcmp(ao->draft_file, ao->file) != 0)
        rc = sd_arpa_load(ao->draft_file, budget, &da, err);
    size_t order = ao->order ? ao->order : 2, dorder = ao->draft_order ? ao->draft_order : 1;
    if (!rc && order > ta->order)
        rc = sd_error_set(err, SD_EUSAGE, "--order %zu: %s has order %zu", order, ao->file, ta->order);
    if (!rc && dorder > (da ? da : ta)->order)
        rc = sd_error_set(err, SD_EUSAGE, "--draft-order %zu: %s has order %zu", dorder,
                          da ? ao->draft_file : ao->file, (da ? da : ta)->order);
    if (!rc && !rows && order <= 2 && dorder <= 2 && (dorder == 1 || order == 2)) {
        rc = S_trace_sparse(ao, ta, da, order, dorder, T, n, seed, dir, budget, err);
        sd_arpa_free(ta);
        sd_arpa_free(da);
        return rc;
    }
    if (!rc)
        rc = sd_ngram_open(ta, order, NULL, &gt, err);
    if (!rc)
        rc = sd_ngram_open(da ? da : ta, dorder, ta, &gd, err);
    if (!rc && !(init = calloc(ta->V, sizeof *init)))
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
    double dev = 0.0;
    long dev_ctx = -1;
    if (!rc) {
        init[ta->bos >= 0 ? (size_t)ta->bos : 0] = 1.0; /* x_0 = <s> */
        S_trace_ctx c = {gd, gt, &dev, &dev_ctx};
        size_t left = budget > sd_arpa_bytes(ta->V, ta->n2, ta->n3) ? budget - sd_arpa_bytes(ta->V, ta->n2, ta->n3)
                                                                     : 1;
        /* rows met again are copied, not recomputed (the same bits): up to 64
         * histories per model, within a quarter of what is left.  The cache
         * is optional: when it cannot be allocated the rows are recomputed */
        size_t slots = left / 4 / (2 * (ta->V + 4) * sizeof(double));
        slots = slots > 64 ? 64 : slots;
        sd_error ce;
        if (slots && !sd_ngram_cache(gd, slots, &ce) && !sd_ngram_cache(gt, slots, &ce))
            left -= 2 * slots * (ta->V + 4) * sizeof(double);
        else if (slots) {
            sd_ngram_cache(gd, 0, &ce); /* 0 slots: frees, cannot fail */
            sd_ngram_cache(gt, 0, &ce);
        }
        if (!rc)
            rc = sd_trace_write_fn(n, T, ta->V, init, S_trace_rows, &c, rows, seed, dir, left, err);
    }
    if (!rc && dev > 1e-9)
        fprintf(stderr, "simdec: note: %s: rows renormalised; largest |row sum - 1| on the traces = %.6g (the row "
                        "after '%s')\n", ao->file, dev, dev_ctx >= 0 ? ta->words[dev_ctx] : "?");
    free(init);
    sd_ngram_free(gt);
    sd_ngram_free(gd);
    sd_arpa_free(ta);
    sd_arpa_free(da);
    return rc;
}
