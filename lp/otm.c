/* otm.c — the OTM-k linear program (Sun et al. 2023, §4, eq. 4;
 * SPEC §4 "otm") and the optimal plan for simulators (sd_lp_otm.h).
 *
 *   max Σ_{x,y} π(x,y) 1{y ∈ S(x)}
 *   s.t. Σ_y π(x,y) = p^{⊗k}(x)   for every draft tuple x,
 *        Σ_x π(x,y) = q(y)        for every token y,      π >= 0,
 * where S(x) is the set of tokens in x.  The optimum is α_k, the largest
 * probability that the output (law q) is one of the k i.i.d. drafts.
 *
 * Exchangeability: p^{⊗k} and the cost depend on x only through its
 * multiset m, so symmetrising any ordered plan over permutations keeps it
 * feasible and optimal, and summing it over the tuples of one multiset
 * gives a multiset plan with P(m) = k!/Π_x mult_m(x)! Π_i p(x_i): both LPs
 * have the same optimum (checked in tests/test_lp.c, lp5_otm/multiset_*).
 *
 * Only rows with P(x) > 0 and columns with q(y) > 0 enter the LP; the
 * balance rows are linearly dependent (both sides sum to 1), so the last
 * target row is dropped (SPEC §6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_dist.h"
#include "sd_lp.h"
#include "sd_lp_otm.h"

#define S_MAX_K 64

sd_lp_size sd_lp_otm_size(size_t V, size_t k, int ordered)
{
    size_t n = ordered ? sd_lp_pow(V, k) : sd_lp_binom(sd_lp_add(V, k - 1), k);
    sd_lp_size s;
    s.vars = sd_lp_mul(n, V);
    s.rows = sd_lp_add(n, V);
    s.nnz = sd_lp_mul(s.vars, 2);
    snprintf(s.what, sizeof s.what, "otm --k %zu at V = %zu%s", k, V, ordered ? " (ordered tuples)" : "");
    return s;
}

/* Colex rank of a sorted tuple x_0 <= ... <= x_{k-1}: Σ_i C(x_i + i, i+1)
 * (the combinatorial number system applied to c_i = x_i + i). */
static size_t S_rank_sorted(const size_t *x, size_t k)
{
    size_t r = 0;
    for (size_t i = 0; i < k; i++)
        r += sd_lp_binom(x[i] + i, i + 1);
    return r;
}

size_t sd_lp_otm_multiset_rank(const sd_lp_otm_plan *plan, const size_t *drafts)
{
    size_t s[S_MAX_K], k = plan->k;
    for (size_t i = 0; i < k; i++) { /* insertion sort, k small */
        size_t v = drafts[i], j = i;
        while (j > 0 && s[j - 1] > v) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = v;
    }
    return S_rank_sorted(s, k);
}

const double *sd_lp_otm_plan_row(const sd_lp_otm_plan *plan, const size_t *drafts)
{
    return plan->cond + sd_lp_otm_multiset_rank(plan, drafts) * plan->V;
}

size_t sd_lp_otm_plan_sample(const sd_lp_otm_plan *plan, const size_t *drafts, double u)
{
    return sd_dist_sample(sd_lp_otm_plan_row(plan, drafts), plan->V, 1.0, u);
}

void sd_lp_otm_plan_free(sd_lp_otm_plan *plan)
{
    if (!plan)
        return;
    free(plan->cond);
    free(plan);
}

/* ---- the LP ---------------------------------------------------------------- */

typedef struct S_otm {
    const double *p, *q;
    size_t V, k, n; /* n draft rows: multisets or tuples */
    int ordered;
    size_t *tok;    /* [n][k]: the drafts of row r (sorted for multisets) */
    double *mass;   /* [n]: P(row r) under p^{⊗k} */
    int *col;       /* [n][V]: GLPK column of π(r,y), 0 if none */
    double *pi;     /* [n][V]: the optimal plan (after read) */
} S_otm;

/* Fills tok and mass.  Multisets are enumerated as nondecreasing tuples
 * (an odometer) and stored at their colex rank. */
static void S_enumerate(S_otm *o)
{
    size_t V = o->V, k = o->k, x[S_MAX_K];
    if (o->ordered) {
        for (size_t r = 0; r < o->n; r++) {
            sd_lp_digits(r, V, k, o->tok + r * k);
            double m = 1.0;
            for (size_t i = 0; i < k; i++)
                m *= o->p[o->tok[r * k + i]];
            o->mass[r] = m;
        }
        return;
    }
    memset(x, 0, sizeof x);
    for (;;) {
        size_t r = S_rank_sorted(x, k);
        memcpy(o->tok + r * k, x, k * sizeof *x);
        /* P(m) = Π_i p(x_i) × k! / Π mult! = Π over runs of C(left, run) p^run */
        double m = 1.0;
        size_t left = k;
        for (size_t i = 0; i < k;) {
            size_t j = i;
            while (j < k && x[j] == x[i])
                j++;
            m *= (double)sd_lp_binom(left, j - i) * pow(o->p[x[i]], (double)(j - i));
            left -= j - i;
            i = j;
        }
        o->mass[r] = m;
        /* next nondecreasing tuple */
        size_t i = k;
        while (i > 0 && x[i - 1] == V - 1)
            i--;
        if (i == 0)
            break;
        x[i - 1]++;
        for (size_t j = i; j < k; j++)
            x[j] = x[i - 1];
    }
}

static int S_contains(const size_t *t, size_t k, size_t y)
{
    for (size_t i = 0; i < k; i++)
        if (t[i] == y)
            return 1;
    return 0;
}

static double S_gain(size_t r, size_t y, const void *ctx)
{
    const S_otm *o = ctx;
    return S_contains(o->tok + r * o->k, o->k, y) ? 1.0 : 0.0;
}

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    S_otm *o = ctx;
    return sd_lp_transport_build(b, o->mass, o->n, o->q, o->V, S_gain, o, o->col, err);
}

static int S_read(glp_prob *lp, void *ctx, sd_error *err)
{
    (void)err;
    S_otm *o = ctx;
    sd_lp_read_cols(lp, o->col, o->n * o->V, o->pi);
    return SD_OK;
}

static void S_otm_free(S_otm *o)
{
    free(o->tok);
    free(o->mass);
    free(o->col);
    free(o->pi);
}

/* Validates, estimates, refuses, allocates, solves.  On SD_OK with an
 * optimal status o->pi holds the plan. */
static int S_otm_solve(S_otm *o, const double *p, const double *q, size_t V, size_t k,
                       int ordered, const sd_lp_opts *opts, sd_lp_result *res, sd_error *err)
{
    memset(o, 0, sizeof *o);
    sd_lp_result_reset(res, NULL);
    if (V == 0)
        return sd_error_set(err, SD_EUSAGE, "otm: the vocabulary is empty");
    if (k < 1 || k > S_MAX_K)
        return sd_error_set(err, SD_EUSAGE, "otm: --k %zu is out of range; expected 1 to %d", k, S_MAX_K);
    double sum;
    if (sd_dist_check(p, V, 1e-9, &sum) >= 0 || sd_dist_check(q, V, 1e-9, &sum) >= 0)
        return sd_error_set(err, SD_EDATA, "otm: p and q must be probability vectors");
    sd_lp_size sz = sd_lp_otm_size(V, k, ordered);
    const char *what = sz.what;
    size_t max_vars = opts && opts->max_vars ? opts->max_vars : SD_LP_DEFAULT_MAX_VARS;
    int rc = sd_lp_check_size(&sz, max_vars, err);
    if (rc)
        return rc;
    o->p = p;
    o->q = q;
    o->V = V;
    o->k = k;
    o->ordered = ordered;
    o->n = sz.vars / V;
    o->tok = malloc(o->n * k * sizeof *o->tok);
    o->mass = malloc(o->n * sizeof *o->mass);
    o->col = calloc(o->n * V, sizeof *o->col);
    o->pi = calloc(o->n * V, sizeof *o->pi);
    if (!o->tok || !o->mass || !o->col || !o->pi) {
        S_otm_free(o);
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory", what);
    }
    S_enumerate(o);
    rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_CPX_BASIS, opts, S_build, S_read, o, res, err);
    if (rc)
        S_otm_free(o);
    return rc;
}

int sd_lp_otm(const double *p, const double *q, size_t V, size_t k, int ordered,
              const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
              sd_error *err)
{
    S_otm o;
    if (plan)
        *plan = NULL;
    int rc = S_otm_solve(&o, p, q, V, k, ordered, opts, res, err);
    if (rc)
        return rc;
    if (plan && res->optimal) {
        size_t groups[2] = {k, 1};
        sd_lp_plan *pl = sd_lp_plan_new("drafts,y,mass", 2, groups, 1, 64);
        size_t keys[S_MAX_K + 1];
        int bad = !pl;
        for (size_t i = 0; !bad && i < o.n * V; i++) {
            double m = o.pi[i];
            if (!(m > 1e-12))
                continue;
            memcpy(keys, o.tok + (i / V) * k, k * sizeof *keys);
            keys[k] = i % V;
            bad = sd_lp_plan_add(pl, keys, &m) != SD_OK;
        }
        if (bad) {
            sd_lp_plan_free(pl);
            pl = NULL;
        }
        if (!pl)
            rc = sd_error_set(err, SD_ENOMEM, "otm: out of memory for the plan");
        *plan = pl;
    }
    S_otm_free(&o);
    return rc;
}

int sd_lp_otm_plan_solve(const double *p, const double *q, size_t V, size_t k,
                         size_t max_vars, sd_lp_otm_plan **out, sd_error *err)
{
    *out = NULL;
    sd_lp_opts opts;
    sd_lp_opts_default(&opts);
    opts.max_vars = max_vars ? max_vars : SD_LP_OTM_PLAN_MAX_VARS;
    sd_lp_result res;
    S_otm o;
    int rc = S_otm_solve(&o, p, q, V, k, 0, &opts, &res, err);
    if (rc)
        return rc;
    if (!res.optimal) {
        S_otm_free(&o);
        return sd_error_set(err, SD_ESOLVER, "otm --k %zu at V = %zu: GLPK status '%s'", k, V, res.status);
    }
    sd_lp_otm_plan *pl = calloc(1, sizeof *pl);
    if (pl)
        pl->cond = malloc(o.n * V * sizeof *pl->cond);
    if (!pl || !pl->cond) {
        sd_lp_otm_plan_free(pl);
        S_otm_free(&o);
        return sd_error_set(err, SD_ENOMEM, "otm: out of memory for the plan");
    }
    pl->V = V;
    pl->k = k;
    pl->nsets = o.n;
    pl->alpha = res.optimum;
    for (size_t r = 0; r < o.n; r++) {
        double *row = pl->cond + r * V, s = 0.0;
        for (size_t y = 0; y < V; y++)
            s += (row[y] = o.pi[r * V + y]);
        if (o.mass[r] > 0 && s > 0) {
            for (size_t y = 0; y < V; y++)
                row[y] /= s;
        } else {
            memcpy(row, q, V * sizeof *row);
        }
    }
    S_otm_free(&o);
    *out = pl;
    return SD_OK;
}
