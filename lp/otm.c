/* otm.c — the OTM-k linear program (Sun et al. 2023, §4, eq. 4)
 * and the optimal plan for simulators (sd_lp_otm.h).
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
 * target row is dropped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_dist.h"
#include "sd_lp.h"
#include "sd_lp_flow.h"
#include "sd_lp_otm.h"

#define S_MAX_K 64

sd_lp_size sd_lp_otm_size(size_t V, size_t k, int ordered)
{
    size_t n = ordered ? sd_lp_pow(V, k) : sd_lp_binom(sd_lp_add(V, k - 1), k);
    sd_lp_size s = {0};
    s.vars = sd_lp_mul(n, V);
    s.rows = sd_lp_add(n, V);
    s.nnz = sd_lp_mul(s.vars, 2);
    snprintf(s.what, sizeof s.what, "otm --k %zu at V = %zu%s", k, V, ordered ? " (ordered tuples)" : "");
    return s;
}

sd_lp_size sd_lp_otm_flow_size(size_t V, size_t k, int ordered)
{
    size_t n = ordered ? sd_lp_pow(V, k) : sd_lp_binom(sd_lp_add(V, k - 1), k);
    sd_lp_size s = {0};
    s.vars = sd_lp_add(sd_lp_mul(n, 1 + (k < V ? k : V)), V); /* <= min(k, V) tokens a row */
    s.rows = sd_lp_add(n, sd_lp_add(V, 2));
    s.nnz = sd_lp_mul(s.vars, 2);
    s.flow = 1;
    snprintf(s.what, sizeof s.what, "otm --k %zu at V = %zu%s", k, V, ordered ? " (ordered tuples)" : "");
    return s;
}

int sd_lp_otm_uses_flow(const sd_lp_opts *opts)
{
    return sd_lp_uses_flow(opts);
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

/* The LP as a maximum flow.  Network: source -> draft row r (capacity
 * P(r)), r -> y for each distinct token y in r with q(y) > 0 (capacity
 * P(r); any bound >= P(r) is equivalent, the inflow of r is at most P(r)),
 * y -> sink (capacity q(y)).
 *
 * Equivalence with the LP.  A feasible plan π gives the flow f(r,y) =
 * π(r,y) on the arcs r -> y (y ∈ S(r)): row and column sums of π bound
 * the flow through r and y by P(r) and q(y), and the flow value is the
 * LP objective Σ π(r,y) 1{y ∈ S(r)}.  Conversely, from a flow f of value
 * F the leftover masses a(r) = P(r) - out(r) >= 0, b(y) = q(y) - in(y)
 * >= 0 both sum to 1 - F, and π = f + a b^T / (1 - F) (0 when F = 1) has
 * the marginals P and q and objective >= F.  So the LP optimum is the
 * maximum flow, and the completed plan of a maximum flow is optimal.
 * (By max-flow/min-cut this is also 1 - max_B [q(B) - p(B)^k], the
 * closed form of src/sd_exact_otm.h.) */
static int S_otm_flow(S_otm *o, const sd_lp_size *sz, sd_lp_result *res, sd_error *err)
{
    size_t n = o->n, V = o->V, k = o->k, na = 0;
    size_t nv = n + V + 2, src = 0, snk = n + V + 1;
    size_t cap_arcs = sz->vars;
    size_t *tail = malloc(cap_arcs * sizeof *tail), *head = malloc(cap_arcs * sizeof *head);
    double *cap = malloc(cap_arcs * sizeof *cap), *x = malloc(cap_arcs * sizeof *x);
    if (!tail || !head || !cap || !x) {
        free(tail);
        free(head);
        free(cap);
        free(x);
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory", sz->what);
    }
    for (size_t r = 0; r < n; r++) {
        if (!(o->mass[r] > 0.0))
            continue;
        tail[na] = src, head[na] = 1 + r, cap[na++] = o->mass[r];
        /* the row's distinct tokens, in decreasing q/p (the greedy start
         * below fills the most abundant target mass first) */
        size_t t[S_MAX_K], m = 0;
        for (size_t i = 0; i < k; i++) {
            size_t y = o->tok[r * k + i], j = m;
            int dup = 0;
            for (size_t l = 0; l < m; l++)
                dup |= t[l] == y;
            if (dup || !(o->q[y] > 0.0))
                continue;
            while (j > 0 && o->q[t[j - 1]] * o->p[y] < o->q[y] * o->p[t[j - 1]]) {
                t[j] = t[j - 1];
                j--;
            }
            t[j] = y;
            m++;
        }
        for (size_t i = 0; i < m; i++)
            tail[na] = 1 + r, head[na] = 1 + n + t[i], cap[na++] = o->mass[r];
    }
    for (size_t y = 0; y < V; y++)
        if (o->q[y] > 0.0)
            tail[na] = 1 + n + y, head[na] = snk, cap[na++] = o->q[y];
    /* A greedy start (a blocking flow: each row fills its tokens in turn),
     * so that GLPK's augmenting paths only repair its mistakes.  Arcs of a
     * row follow its source arc; sink arcs come last. */
    double *left = calloc(V, sizeof *left);
    if (!left) {
        free(tail);
        free(head);
        free(cap);
        free(x);
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory", sz->what);
    }
    memcpy(left, o->q, V * sizeof *left);
    double *from = NULL;
    for (size_t e = 0; e < na; e++) {
        x[e] = 0.0;
        if (tail[e] == src) {
            from = x + e;
        } else if (head[e] != snk) {
            size_t y = head[e] - 1 - n;
            double push = fmin(cap[e] - *from, left[y]);
            if (push > 0.0) {
                x[e] = push;
                *from += push;
                left[y] -= push;
            }
        }
    }
    for (size_t e = 0; e < na; e++)
        if (head[e] == snk)
            x[e] = o->q[tail[e] - 1 - n] - left[tail[e] - 1 - n];
    free(left);
    double value, gap;
    int rc = sd_lp_flow_max(nv, na, tail, head, cap, src, snk, x, &value, &gap, err);
    res->variables = na;
    res->constraints = nv;
    res->nonzeros = 2 * na;
    snprintf(res->method, sizeof res->method, "flow");
    if (!rc) {
        res->optimal = gap <= SD_LP_FLOW_GAP;
        res->optimum = res->optimal ? value : NAN;
        snprintf(res->status, sizeof res->status, "%s", res->optimal ? "optimal" : "flow gap too large");
    }
    if (!rc && res->optimal && o->pi) {
        /* the plan: f on the membership arcs, then a b^T / (1 - F) */
        double *a = calloc(n + V, sizeof *a), *b;
        if (!a) {
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", sz->what);
        } else {
            b = a + n;
            memset(o->pi, 0, n * V * sizeof *o->pi);
            for (size_t r = 0; r < n; r++)
                a[r] = o->mass[r];
            for (size_t y = 0; y < V; y++)
                b[y] = o->q[y];
            for (size_t e = 0; e < na; e++)
                if (tail[e] != src && head[e] != snk) {
                    size_t r = tail[e] - 1, y = head[e] - 1 - n;
                    o->pi[r * V + y] = x[e];
                    a[r] -= x[e];
                    b[y] -= x[e];
                }
            double rest = 0.0;
            for (size_t y = 0; y < V; y++)
                rest += (b[y] = fmax(0.0, b[y]));
            for (size_t r = 0; r < n && rest > 0.0; r++) {
                double ar = fmax(0.0, a[r]) / rest;
                for (size_t y = 0; ar > 0.0 && y < V; y++)
                    o->pi[r * V + y] += ar * b[y];
            }
            free(a);
        }
    }
    free(tail);
    free(head);
    free(cap);
    free(x);
    return rc;
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
                       int ordered, int want_plan, const sd_lp_opts *opts, sd_lp_result *res,
                       sd_error *err)
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
    int flow = sd_lp_otm_uses_flow(opts);
    sd_lp_size sz = flow ? sd_lp_otm_flow_size(V, k, ordered) : sd_lp_otm_size(V, k, ordered);
    const char *what = sz.what;
    int rc = sd_lp_check_size(&sz, opts ? opts->max_vars : 0, err);
    if (rc)
        return rc;
    o->p = p;
    o->q = q;
    o->V = V;
    o->k = k;
    o->ordered = ordered;
    o->n = ordered ? sd_lp_pow(V, k) : sd_lp_binom(V + k - 1, k);
    if (flow && want_plan && sd_lp_mul(o->n, V) > SD_LP_MAX_NNZ)
        return sd_error_set(err, SD_ETOOBIG, "%s: the plan needs %zu entries; the limit is %zu", what,
                            sd_lp_mul(o->n, V), SD_LP_MAX_NNZ);
    o->tok = malloc(o->n * k * sizeof *o->tok);
    o->mass = malloc(o->n * sizeof *o->mass);
    o->col = flow ? NULL : calloc(o->n * V, sizeof *o->col);
    o->pi = flow && !want_plan ? NULL : calloc(o->n * V, sizeof *o->pi);
    if (!o->tok || !o->mass || (!flow && !o->col) || ((!flow || want_plan) && !o->pi)) {
        S_otm_free(o);
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory", what);
    }
    S_enumerate(o);
    if (flow) {
        double t0 = sd_lp_now();
        rc = S_otm_flow(o, &sz, res, err);
        res->seconds = sd_lp_now() - t0;
    } else {
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_CPX_BASIS, opts, S_build, S_read, o, res, err);
    }
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
    int rc = S_otm_solve(&o, p, q, V, k, ordered, plan != NULL, opts, res, err);
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
    int rc = S_otm_solve(&o, p, q, V, k, 0, 1, &opts, &res, err);
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

/* ---- without replacement ------------------------------------------------------ */

/* P(the set x[0..k-1]) drawn without replacement: the sum over its orders
 * (Heap-free: recursion over the next element). */
static double S_wor_set(const double *p, const size_t *x, size_t k, unsigned char *used,
                        size_t left, double removed)
{
    if (left == 0)
        return 1.0;
    double s = 0.0, d = 1.0 - removed;
    if (!(d > 0.0))
        return 0.0;
    for (size_t i = 0; i < k; i++) {
        if (used[i])
            continue;
        used[i] = 1;
        s += p[x[i]] / d * S_wor_set(p, x, k, used, left - 1, removed + p[x[i]]);
        used[i] = 0;
    }
    return s;
}

int sd_lp_otm_wor(const double *p, const double *q, size_t V, size_t k, const sd_lp_opts *opts,
                  sd_lp_result *res, sd_error *err)
{
    sd_lp_result_reset(res, NULL);
    if (V == 0)
        return sd_error_set(err, SD_EUSAGE, "otm: the vocabulary is empty");
    if (k < 1 || k > S_MAX_K)
        return sd_error_set(err, SD_EUSAGE, "otm: --k %zu is out of range; expected 1 to %d", k, S_MAX_K);
    double sum;
    if (sd_dist_check(p, V, 1e-9, &sum) >= 0 || sd_dist_check(q, V, 1e-9, &sum) >= 0)
        return sd_error_set(err, SD_EDATA, "otm: p and q must be probability vectors");
    size_t supp = 0;
    for (size_t x = 0; x < V; x++)
        supp += p[x] > 0.0;
    size_t ke = k < supp ? k : supp;
    S_otm o;
    memset(&o, 0, sizeof o);
    o.n = sd_lp_binom(V, ke);
    sd_lp_size sz = {0};
    sz.vars = sd_lp_mul(o.n, V);
    sz.rows = sd_lp_add(o.n, V);
    sz.nnz = sd_lp_mul(sz.vars, 2);
    snprintf(sz.what, sizeof sz.what, "otm --k %zu --draw wor at V = %zu", k, V);
    int rc = sd_lp_check_size(&sz, opts ? opts->max_vars : 0, err);
    if (rc)
        return rc;
    o.p = p;
    o.q = q;
    o.V = V;
    o.k = ke;
    o.tok = malloc(o.n * ke * sizeof *o.tok);
    o.mass = malloc(o.n * sizeof *o.mass);
    o.col = calloc(o.n * V, sizeof *o.col);
    o.pi = calloc(o.n * V, sizeof *o.pi);
    if (!o.tok || !o.mass || !o.col || !o.pi) {
        S_otm_free(&o);
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory", sz.what);
    }
    /* the k'-subsets as increasing tuples (an odometer) */
    size_t x[S_MAX_K];
    unsigned char used[S_MAX_K];
    for (size_t i = 0; i < ke; i++)
        x[i] = i;
    for (size_t r = 0; r < o.n; r++) {
        memcpy(o.tok + r * ke, x, ke * sizeof *x);
        memset(used, 0, sizeof used);
        o.mass[r] = S_wor_set(p, x, ke, used, ke, 0.0);
        size_t i = ke;
        while (i > 0 && x[i - 1] == V - ke + i - 1)
            i--;
        if (i == 0)
            break;
        x[i - 1]++;
        for (size_t j = i; j < ke; j++)
            x[j] = x[j - 1] + 1;
    }
    rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_CPX_BASIS, opts, S_build, S_read, &o, res, err);
    S_otm_free(&o);
    return rc;
}
