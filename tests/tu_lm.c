/* tu_lm.c — the n-gram tests' hand-written models (tu_lm.h). */
#include "tu_lm.h"
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_backoff.h"
#include "../src/sd_chain.h"
#include "../src/sd_model.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/exact/sd_exact_gen.h"

const tu_lmdef tu_lm_target = {{-0.6990, -INFINITY, -0.5229, -0.6990, -0.5229}, {0.0, -0.30103, -0.1, -0.2, 0.05},
                               {{1, 2, -0.3010}, {1, 3, -0.6021}, {2, 3, -0.2218}, {2, 0, -0.4}, {3, 4, -0.1},
                                {4, 2, -0.5}}, 6};
const tu_lmdef tu_lm_draft = {{-0.5229, -INFINITY, -0.6990, -0.3979, -0.8239}, {-0.2, -0.1, 0.0, -0.3, -0.05},
                              {{1, 3, -0.2}, {2, 2, -0.7}, {2, 4, -0.3}, {3, 0, -0.25}, {4, 4, -0.9}, {4, 3, -0.15},
                               {0, 2, -0.6}}, 7};

char *tu_lm_arpa_text(const tu_lmdef *d)
{
    static const char *const w[5] = {"</s>", "<s>", "a", "b", "c"};
    char *s = malloc(4096), *o = s;
    o += sprintf(o, "\n\\data\\\nngram 1=5\nngram 2=%zu\n\n\\1-grams:\n", d->nbi);
    for (int x = 0; x < 5; x++)
        o += x == 1 ? sprintf(o, "-99\t<s>\t%.5f\n", d->bo[x]) : sprintf(o, "%.4f\t%s\t%.5f\n", d->uni[x], w[x], d->bo[x]);
    o += sprintf(o, "\n\\2-grams:\n");
    for (size_t i = 0; i < d->nbi; i++)
        o += sprintf(o, "%.4f %s %s\n", d->bi[i].lp, w[d->bi[i].a], w[d->bi[i].x]);
    sprintf(o, "\n\\end\\\n");
    return s;
}

void tu_lm_dense_rows(const tu_lmdef *d, double r[5][5])
{
    for (int a = 0; a < 5; a++) {
        double z = 0.0;
        for (int x = 0; x < 5; x++) {
            double v = x == 1 ? 0.0 : pow(10.0, d->bo[a] + d->uni[x]);
            for (size_t i = 0; i < d->nbi; i++)
                if (d->bi[i].a == a && d->bi[i].x == x)
                    v = pow(10.0, d->bi[i].lp);
            z += r[a][x] = v;
        }
        for (int x = 0; x < 5; x++)
            r[a][x] /= z;
    }
}

const char tu_lm_draft_own[] = "\n\\data\\\nngram 1=5\nngram 2=6\n\n\\1-grams:\n"
                               "-0.6021\t</s>\t-0.1\n-99\t<s>\t-0.2\n-0.5229\ta\t-0.3\n-0.6990\tb\t0.1\n"
                               "-0.3979\td\t-0.25\n\n\\2-grams:\n"
                               "-0.4 <s> a\n-0.9 <s> d\n-0.3 a a\n-0.2 a d\n-0.5 b </s>\n-0.35 d b\n\n\\end\\\n";

void tu_lm_dense_draft_own(double p[5][5])
{
    /* draft ids 0 </s>, 1 <s>, 2 a, 3 b, 4 d; target ids 0 </s>, 1 <s>, 2 a, 3 b, 4 c */
    static const double uni[5] = {-0.6021, -INFINITY, -0.5229, -0.6990, -0.3979}, bo[5] = {-0.1, -0.2, -0.3, 0.1, -0.25};
    static const struct { int a, x; double lp; } bi[] = {{1, 2, -0.4}, {1, 4, -0.9}, {2, 2, -0.3}, {2, 4, -0.2},
                                                  {3, 0, -0.5}, {4, 3, -0.35}};
    for (int a = 0; a < 5; a++) { /* target context a: the draft's row, or its unigram after c */
        double z = 0.0;
        for (int x = 0; x < 4; x++) { /* target words the draft has: </s> <s> a b */
            double v = x == 1 ? 0.0 : a == 4 ? pow(10.0, uni[x]) : pow(10.0, bo[a] + uni[x]);
            for (size_t i = 0; a < 4 && i < sizeof bi / sizeof *bi; i++)
                if (bi[i].a == a && bi[i].x == x)
                    v = pow(10.0, bi[i].lp);
            z += p[a][x] = v;
        }
        p[a][4] = 0.0;
        for (int x = 0; x < 4; x++)
            p[a][x] /= z;
    }
}

void tu_lm_kernel_vs_exact(const sd_verifier_type *vt, const sd_params *par, const sd_backoff *m, const sd_chain *c,
                           uint64_t seed, sd_exact_values *ex, sd_sim_result *res, double *zr, double *zc)
{
    sd_model sparse = sd_model_of_backoff(m, m->V, m->T), stored = sd_model_of_chain(c);
    sd_error err;
    cr_assert_eq(vt->exact ? vt->exact(&stored, par, ex, &err) : sd_exact_gen_values(vt, &stored, par, ex, &err),
                 SD_OK, "%s", err.msg);
    sd_sim_opts so = {.seed = seed, .trials = 40000, .threads = 2};
    memset(res, 0, sizeof *res);
    sd_sim_job job = {vt, &sparse, par};
    cr_assert_eq(sd_sim_run_job(&job, &so, res, &err), SD_OK, "%s", err.msg);
    char kname[64];
    snprintf(kname, sizeof kname, "%s-backoff", vt->name);
    cr_assert_str_eq(res->kernel, kname);
    *zr = (res->rejections.mean - ex->rejections) / sd_welford_stderr(&res->rejections);
    *zc = (res->target_calls.mean - ex->target_calls) / sd_welford_stderr(&res->target_calls);
}

sd_chain *tu_lm_stored(const sd_backoff *m)
{
    sd_error err;
    sd_chain *c = sd_chain_alloc(m->V, m->T, 1, 1, &err);
    cr_assert_not_null(c, "%s", err.msg);
    c->init[m->start] = 1.0;
    for (size_t a = 0; a < m->V; a++)
        sd_backoff_rows(m, a, c->draft + a * m->V, c->target + a * m->V);
    cr_assert_eq(sd_chain_validate(c, "backoff", &err), SD_OK, "%s", err.msg);
    return c;
}
