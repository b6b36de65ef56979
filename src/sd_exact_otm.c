/* sd_exact_otm.c — k-draft acceptance probabilities (sd_exact_otm.h).
 *
 * Why the maximising set is a prefix of the q/p order (full version in
 * docs/otm-prefix.md).  Let f(B) = p(B)^k - q(B), k >= 1.  Relax the
 * indicator of B to w ∈ [0,1]^V and put φ(w) = (Σ w p)^k - Σ w q.
 * (i) Every subset is a vertex w, so max_B f <= max_w φ.
 * (ii) Fix s = Σ w p ∈ [0,1].  Minimising Σ w q under Σ w p = s,
 *      0 <= w <= 1, is a fractional knapsack: the greedy fill in q/p order
 *      is optimal (exchange argument: moving p-mass from a token of higher
 *      ratio to one of lower ratio never raises the cost).  Its value C(s)
 *      is the piecewise-linear, convex interpolation of the prefix points
 *      (P_j, Q_j) = (Σ_{i<=j} p, Σ_{i<=j} q) in that order; tokens with
 *      p = 0 add no p-mass, only cost, and come last.
 * (iii) So max_w φ = max_s [s^k - C(s)].  On each linear piece of C the
 *      function s^k - C(s) is convex (s^k is, for s >= 0 and k >= 1), so
 *      its maximum over the piece is at an end: a prefix point.
 * Hence max_B f <= max_j [P_j^k - Q_j] <= max_B f (prefixes are subsets):
 * equality, with a prefix attaining it.  Ties in q/p may be ordered
 * arbitrarily (tied tokens form one linear piece). */
#include "sd_exact_otm.h"

#include <math.h>
#include <stdlib.h>

#include "sd_exact_batch.h"

typedef struct {
    double key; /* q/p, +∞ where p = 0 */
    double p, q;
} S_tok;

static int S_cmp(const void *x, const void *y)
{
    double a = ((const S_tok *)x)->key, b = ((const S_tok *)y)->key;
    return (a > b) - (a < b);
}

/* s + x with the compensation c (Neumaier's variant of Kahan summation):
 * prefix sums over 10^6 tokens stay exact to a few ulps. */
static void S_add(double *s, double *c, double x)
{
    double t = *s + x;
    if (fabs(*s) >= fabs(x))
        *c += (*s - t) + x;
    else
        *c += (x - t) + *s;
    *s = t;
}

int sd_exact_otm_acceptance(const double *p, const double *q, size_t V, size_t k,
                            double *out, size_t *best_len, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V < 1)
        return sd_error_set(err, SD_EUSAGE, "vocabulary size 0: expected at least 1 token");
    if (V > SD_EXACT_OTM_MAX_V)
        return sd_error_set(err, SD_ETOOBIG, "optimal acceptance at V = %zu exceeds the limit %zu",
                            V, SD_EXACT_OTM_MAX_V);
    S_tok *tk = malloc(V * sizeof *tk);
    if (!tk)
        return sd_error_set(err, SD_ENOMEM, "out of memory (optimal acceptance, vocab %zu)", V);
    for (size_t x = 0; x < V; x++) {
        tk[x].p = p[x];
        tk[x].q = q[x];
        tk[x].key = p[x] > 0.0 ? q[x] / p[x] : HUGE_VAL;
    }
    qsort(tk, V, sizeof *tk, S_cmp);
    /* max over prefixes j = 0..V of P_j^k - Q_j; j = 0 (B = ∅) gives 0 */
    double best = 0.0, ps = 0.0, pc = 0.0, qs = 0.0, qc = 0.0, kd = (double)k;
    size_t bj = 0;
    for (size_t j = 0; j < V; j++) {
        S_add(&ps, &pc, tk[j].p);
        S_add(&qs, &qc, tk[j].q);
        double P = ps + pc, Q = qs + qc;
        if (P > 1.0)
            P = 1.0;
        double f = pow(P, kd) - Q;
        if (f > best) {
            best = f;
            bj = j + 1;
        }
    }
    free(tk);
    *out = 1.0 - best;
    if (best_len)
        *best_len = bj;
    return SD_OK;
}

int sd_exact_otm_acceptance_brute(const double *p, const double *q, size_t V, size_t k,
                                  double *out, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V > SD_EXACT_OTM_BRUTE_MAX_V)
        return sd_error_set(err, SD_ETOOBIG, "brute force over 2^%zu subsets exceeds the limit 2^%d",
                            V, SD_EXACT_OTM_BRUTE_MAX_V);
    double best = 0.0;
    for (unsigned long B = 1; B < (1UL << V); B++) {
        double pb = 0.0, qb = 0.0;
        for (size_t x = 0; x < V; x++)
            if (B >> x & 1UL) {
                pb += p[x];
                qb += q[x];
            }
        double f = pow(pb, (double)k) - qb;
        if (f > best)
            best = f;
    }
    *out = 1.0 - best;
    return SD_OK;
}

int sd_exact_rrs_acceptance(const double *p, const double *q, size_t V, size_t k,
                            double *out, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if ((double)V * (double)k > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "RRS acceptance at V = %zu, k = %zu needs %.3g operations, beyond the "
                            "limit %.3g (V·k)",
                            V, k, (double)V * (double)k, SD_EXACT_MAX_WORK);
    double *u = malloc(V * sizeof *u);
    if (!u)
        return sd_error_set(err, SD_ENOMEM, "out of memory (RRS acceptance, vocab %zu)", V);
    *out = 1.0 - sd_exact_batch_row(p, q, V, k, u);
    free(u);
    return SD_OK;
}

double sd_exact_otm_bernoulli(double a, double b, size_t k)
{
    double kd = (double)k;
    double x = 1.0 - pow(1.0 - a, kd), y = 1.0 - pow(a, kd);
    return (b < x ? b : x) + (1.0 - b < y ? 1.0 - b : y);
}

double sd_exact_otm_uniform(double r, size_t k)
{
    return 1.0 - pow(1.0 - 1.0 / r, (double)k);
}
