/* cli_verifiers.c — several verifiers named by one option (cli_verifiers.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "cli.h"
#include "cli_verifiers.h"
#include "suggest.h"

static int S_listed(const char *const *skip, const char *name)
{
    for (size_t i = 0; skip && skip[i]; i++)
        if (!strcmp(skip[i], name))
            return 1;
    return 0;
}

int cli_verifiers_prescan(const char *cmd, int argc, char **argv, const char *opt, const struct option *base,
                          const char *const *skip, cli_verifiers *vs, struct option **opts)
{
    sd_error err;
    memset(vs, 0, sizeof *vs);
    *opts = NULL;
    cli_args args; /* the one argv pass (cli_opts.h): plugins, then the list */
    if (cli_args_scan(argc, argv, &args))
        return cli_out_of_memory();
    int rc = cli_plugins_load(&args, &err);
    const char *list = cli_args_last(&args, opt, NULL, NULL); /* points into argv */
    cli_args_free(&args);
    if (rc)
        return cli_fail(&err);
    return cli_verifiers_choose(cmd, opt, list, base, skip, vs, opts);
}

int cli_verifiers_choose(const char *cmd, const char *opt, const char *list, const struct option *base,
                         const char *const *skip, cli_verifiers *vs, struct option **opts)
{
    sd_error err;
    memset(vs, 0, sizeof *vs);
    *opts = NULL;
    for (const char *s = list; s;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char name[128];
        if (len == 0 || len >= sizeof name)
            return cli_usage_error(cmd, "--%s '%s': expected verifier names separated by commas", opt, list);
        if (vs->n == CLI_VERIFIERS_MAX)
            return cli_usage_error(cmd, "--%s '%s': at most %d verifiers", opt, list, CLI_VERIFIERS_MAX);
        memcpy(name, s, len);
        name[len] = '\0';
        cli_verifier *cv = &vs->v[vs->n];
        if (!(cv->vt = sd_verifier_find(name))) {
            char hint[160];
            cli_suggest sg;
            cli_suggest_init(&sg, name);
            const sd_verifier_type *v;
            for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
                cli_suggest_add(&sg, v->name);
            return cli_usage_error(cmd, "unknown verifier '%s'%s (see 'simdec run --list')", name,
                                   cli_suggest_text(&sg, "", hint, sizeof hint));
        }
        cv->named = 1;
        sd_params_defaults(&cv->par, cv->vt);
        /* the union of the parameters, and no parameter hidden by an option */
        for (size_t i = 0; i < sd_params_count(cv->vt); i++) {
            const char *pn = cv->vt->params[i].name;
            for (const struct option *b = base; b->name; b++)
                if (!strcmp(b->name, pn) && !S_listed(skip, pn)) {
                    sd_error_set(&err, SD_EDATA, "verifier %s: its parameter '%s' has the name of an option of %s "
                                 "(--%s), so it could never be set; rename the parameter", cv->vt->name, pn, cmd, pn);
                    return cli_fail(&err);
                }
            int seen = S_listed(skip, pn);
            for (size_t u = 0; u < vs->nparam && !seen; u++)
                seen = !strcmp(vs->param[u], pn);
            if (!seen)
                vs->param[vs->nparam++] = pn;
        }
        vs->n++;
        s = comma ? comma + 1 : NULL;
    }
    size_t nb = 0;
    while (base[nb].name)
        nb++;
    struct option *o = calloc(nb + vs->nparam + 1, sizeof *o);
    if (!o) {
        fprintf(stderr, "simdec: out of memory\n");
        return EX_OSERR_;
    }
    memcpy(o, base, nb * sizeof *o);
    for (size_t u = 0; u < vs->nparam; u++) {
        o[nb + u].name = vs->param[u];
        o[nb + u].has_arg = required_argument;
        o[nb + u].val = CLI_OPT_PARAM + (int)u;
    }
    *opts = o;
    return -1;
}

int cli_verifiers_option(cli_verifiers *vs, int c, const char *arg, sd_error *err)
{
    if (c == CLI_OPT_PLUGIN)
        return 1; /* loaded by cli_verifiers_prescan */
    if (c < CLI_OPT_PARAM || c >= CLI_OPT_PARAM + (int)vs->nparam)
        return 0;
    const char *name = vs->param[c - CLI_OPT_PARAM];
    for (size_t j = 0; j < vs->n; j++)
        if (sd_params_decl(vs->v[j].vt, name, NULL) && sd_params_parse(&vs->v[j].par, vs->v[j].vt, name, arg, err))
            return -1;
    return 1;
}

const char *cli_verifiers_names(const cli_verifiers *vs, char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < vs->n && u < len; j++) {
        int w = snprintf(buf + u, len - u, "%s%s", j == 0 ? "" : j + 1 == vs->n ? " and " : ", ", vs->v[j].vt->name);
        if (w < 0)
            break;
        u += (size_t)w;
    }
    return buf;
}

/* The chain restricted to one iteration from the context: horizon h, steps
 * t..t+h-1 of c, x_0 = a with probability 1.  The first iteration of any
 * verifier on it (n = 1, prev = a) is the iteration from the context. */
static sd_chain *S_subchain(const sd_chain *c, size_t t, size_t a, size_t h, sd_error *err)
{
    size_t V = c->V;
    sd_chain *s = sd_chain_alloc(V, h, h, h, err);
    if (!s)
        return NULL;
    s->init[a] = 1.0;
    for (size_t i = 0; i < h; i++)
        for (size_t r = 0; r < V; r++) {
            memcpy(s->draft + (i * V + r) * V, sd_chain_p(c, t + i, r), V * sizeof(double));
            memcpy(s->target + (i * V + r) * V, sd_chain_q(c, t + i, r), V * sizeof(double));
        }
    return s;
}

int cli_first_iteration(const sd_verifier_type *vt, const sd_params *par, const sd_chain *c, size_t t, size_t a,
                        size_t G, uint64_t trials, uint64_t seed, sd_welford *acc, double *exact, char *why,
                        size_t whylen, sd_error *err)
{
    size_t h = c->T - t + 1 < G + 1 ? c->T - t + 1 : G + 1;
    sd_chain *s = S_subchain(c, t, a, h, err);
    if (!s)
        return err ? (int)err->code : SD_ENOMEM;
    int rc = SD_OK;
    if (exact) {
        *exact = NAN;
        if (why && whylen)
            snprintf(why, whylen, "%s has no iteration law", vt->name);
        if (vt->iteration_law) {
            sd_iter_law law;
            sd_error lerr;
            memset(&law, 0, sizeof law);
            if (vt->iteration_law(s, par, 1, a, &law, &lerr) == SD_OK) {
                double e = 0.0;
                for (size_t i = 0; i < law.n; i++)
                    if (law.o[i].emitted > 0)
                        e += law.o[i].prob * (double)(law.o[i].emitted - 1);
                *exact = e;
            } else if (why && whylen) {
                snprintf(why, whylen, "%s", lerr.msg);
            }
            sd_iter_law_free(&law);
        }
    }
    if (trials > 0) {
        sd_model m = sd_model_of_chain(s);
        sd_sim_job job = {vt, &m, par};
        sd_sim_opts so = {.seed = seed, .trials = trials, .stop = {.first_iteration = 1}};
        sd_sim_result res;
        rc = sd_sim_run_job(&job, &so, &res, err);
        if (!rc) {
            *acc = res.accepted;
            sd_sim_result_free(&res);
        }
    }
    sd_chain_free(s);
    return rc;
}
