/* block_ot.c — block-level optimal transport (Sun et al. 2024
 * Def. 1; Sun et al. 2025, App. C.3, eqs. 40–42; SPEC §4).
 *
 *   max Σ_{x,y} π(x,y) β(x,y)
 *   s.t. Σ_y π(x,y) = p(x^γ),  Σ_x π(x,y) = q(y^γ),  π >= 0,
 * over draft blocks x and target blocks y in V^γ, where
 * β(x,y) = max{l : x^l = y^l} is the common-prefix length and p, q are the
 * γ-block laws of the chain from position t after state a.  Sun et al. 2024, Thm 1
 * (Sun et al. 2025, Lemma 10 and Theorem 3): the optimum is the full-information value
 * Σ_{l=1..γ} Σ_{x^l} min(p(x^l), q(x^l)).
 *
 * Blocks of probability 0 are left out; the last target balance row is
 * dropped (the rows are linearly dependent, SPEC §6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sd_lp.h"

sd_lp_size sd_lp_block_ot_size(size_t V, size_t gamma)
{
    size_t n = sd_lp_pow(V, gamma);
    sd_lp_size s = {0};
    s.vars = sd_lp_mul(n, n);
    s.rows = sd_lp_mul(n, 2);
    s.nnz = sd_lp_mul(s.vars, 2);
    snprintf(s.what, sizeof s.what, "block-ot --gamma %zu at V = %zu", gamma, V);
    return s;
}

typedef struct S_bot {
    size_t V, G, n;
    const double *p, *q; /* block laws, n entries each */
    int *col;            /* [n][n] */
    double *pi;          /* [n][n] after read */
} S_bot;

/* β(x,y): the number of leading base-V digits (of G; n = V^G) on which
 * the block indices x and y agree. */
static size_t S_common_prefix(size_t x, size_t y, size_t V, size_t G, size_t n)
{
    size_t div = n;
    for (size_t l = 0; l < G; l++) {
        div /= V; /* x / V^{G-l-1} is the prefix of length l+1 */
        if (x / div != y / div)
            return l;
    }
    return G;
}

static double S_gain(size_t x, size_t y, const void *ctx)
{
    const S_bot *o = ctx;
    return (double)S_common_prefix(x, y, o->V, o->G, o->n);
}

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    S_bot *o = ctx;
    return sd_lp_transport_build(b, o->p, o->n, o->q, o->n, S_gain, o, o->col, err);
}

static int S_read(glp_prob *lp, void *ctx, sd_error *err)
{
    (void)err;
    S_bot *o = ctx;
    sd_lp_read_cols(lp, o->col, o->n * o->n, o->pi);
    return SD_OK;
}

int sd_lp_block_ot(const sd_chain *c, size_t t, size_t a, size_t gamma,
                   const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
                   sd_error *err)
{
    sd_lp_result_reset(res, plan);
    size_t V = c->V;
    if (gamma < 1)
        return sd_error_set(err, SD_EUSAGE, "block-ot: --gamma must be >= 1");
    if (t < 1 || t > c->T || gamma > c->T - t + 1)
        return sd_error_set(err, SD_EUSAGE,
                            "block-ot: --step %zu --gamma %zu needs positions %zu..%zu; the model's horizon is %zu",
                            t, gamma, t, t + gamma - 1, c->T);
    if (a >= V)
        return sd_error_set(err, SD_EUSAGE, "block-ot: --state %zu is not a token; expected 0 to %zu", a, V - 1);
    sd_lp_size sz = sd_lp_block_ot_size(V, gamma);
    const char *what = sz.what;
    int rc = sd_lp_check_size(&sz, opts && opts->max_vars ? opts->max_vars : SD_LP_DEFAULT_MAX_VARS, err);
    if (rc)
        return rc;
    double **lp_ = NULL, **lq = NULL;
    if ((rc = sd_lp_prefix_laws(c, t, a, gamma, 0, &lp_, err)) ||
        (rc = sd_lp_prefix_laws(c, t, a, gamma, 1, &lq, err))) {
        free(lp_);
        return rc;
    }
    S_bot o = {V, gamma, sd_lp_pow(V, gamma), lp_[gamma], lq[gamma], NULL, NULL};
    o.col = calloc(sz.vars, sizeof *o.col);
    o.pi = calloc(sz.vars, sizeof *o.pi);
    if (!o.col || !o.pi)
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", what);
    else
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_CPX_BASIS, opts, S_build, S_read, &o, res, err);
    if (!rc && plan && res->optimal) {
        size_t groups[2] = {gamma, gamma};
        sd_lp_plan *pl = sd_lp_plan_new("draft,target,mass", 2, groups, 1, 64);
        size_t *keys = malloc(2 * gamma * sizeof *keys);
        int bad = !pl || !keys;
        for (size_t i = 0; !bad && i < o.n * o.n; i++) {
            double m = o.pi[i];
            if (!(m > 1e-12))
                continue;
            sd_lp_digits(i / o.n, V, gamma, keys);
            sd_lp_digits(i % o.n, V, gamma, keys + gamma);
            bad = sd_lp_plan_add(pl, keys, &m) != SD_OK;
        }
        free(keys);
        if (bad) {
            sd_lp_plan_free(pl);
            pl = NULL;
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", what);
        }
        *plan = pl;
    }
    free(o.col);
    free(o.pi);
    free(lp_);
    free(lq);
    return rc;
}
