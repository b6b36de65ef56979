/* sd_exact_policy.c — the dynamic program of sd_exact_policy.h. */
#include "sd_exact_policy.h"

#include <math.h>
#include <stdlib.h>

#include "sd_dist.h"
#include "sd_exact.h"

typedef struct {
    const sd_chain *c;
    const sd_draft_policy *pol; /* NULL: the best rule */
    double cost;
    size_t V, T;
    const double *C, *D; /* [(T+2)·V]: C(n, a), D(n, a) at n·V + a */
} S_dp;

/* The calls and draft tokens to go from the drafted prefix of depth i
 * (last token x, next draft position t = n + i, all-accepted probability
 * A_i = alive, the rejections' value so far accC, accD, the SpecDec++
 * product prod), the iteration's own call and drafts included. */
static void S_node(const S_dp *d, size_t n, size_t i, size_t cap, size_t x, double alive, double accC,
                   double accD, double prod, double *outC, double *outD)
{
    size_t V = d->V, T = d->T, t = n + i;
    /* stopping here (only after a first token) */
    double sC = 0.0, sD = 0.0;
    if (i > 0) {
        double bC = 0.0, bD = 0.0;
        if (t <= T) {
            const double *q = sd_chain_q(d->c, t, x);
            for (size_t z = 0; z < V; z++) {
                bC += q[z] * d->C[(t + 1) * V + z];
                bD += q[z] * d->D[(t + 1) * V + z];
            }
        }
        sC = 1.0 + accC + alive * bC;
        sD = (double)i + accD + alive * bD;
    }
    int go;
    if (i == 0)
        go = 1;
    else if (i >= cap)
        go = 0;
    else if (d->pol)
        go = sd_draft_policy_continue(d->pol, prod, sd_chain_p(d->c, t, x), V);
    else
        go = -1; /* decided below on the cost */
    if (!go) {
        *outC = sC;
        *outD = sD;
        return;
    }
    /* going on: x' ~ p_t(.|x); a rejection of x' at t emits its residual
     * y there and the next iteration starts at (t + 1, y) */
    const double *p = sd_chain_p(d->c, t, x), *q = sd_chain_q(d->c, t, x);
    double tv = sd_dist_tv(p, q, V), rC = 0.0, rD = 0.0;
    if (tv > 0.0) {
        for (size_t y = 0; y < V; y++) {
            double r = q[y] > p[y] ? (q[y] - p[y]) / tv : 0.0;
            rC += r * d->C[(t + 1) * V + y];
            rD += r * d->D[(t + 1) * V + y];
        }
    }
    double gC = 0.0, gD = 0.0;
    for (size_t y = 0; y < V; y++) {
        if (!(p[y] > 0.0))
            continue;
        double a = sd_draft_accept_prob(p[y], q[y]), cC, cD;
        S_node(d, n, i + 1, cap, y, alive * a, accC + alive * (1.0 - a) * rC, accD + alive * (1.0 - a) * rD,
               prod * a, &cC, &cD);
        gC += p[y] * cC;
        gD += p[y] * cD;
    }
    if (go < 0 && sC + d->cost * sD <= gC + d->cost * gD) {
        *outC = sC;
        *outD = sD;
        return;
    }
    *outC = gC;
    *outD = gD;
}

static int S_run(const sd_chain *c, size_t gamma, const sd_draft_policy *pol, double cost, double *calls,
                 double *drafted, sd_error *err)
{
    size_t V = c->V, T = c->T;
    double work = 0.0;
    for (size_t n = 1; n <= T; n++) {
        double level = 1.0;
        for (size_t i = 0; i <= sd_draft_len_at(gamma, T, n) && work <= SD_EXACT_MAX_WORK; i++, level *= (double)V)
            work += (double)V * level * 3.0 * (double)V;
    }
    if (work > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "the draft-policy DP at V = %zu, T = %zu, gamma %zu visits the drafted prefixes: "
                            "over %.3g operations; limit 2^36 (give a smaller --gamma, V or T)",
                            V, T, gamma, work);
    double *C = calloc((T + 2) * V, sizeof *C), *D = calloc((T + 2) * V, sizeof *D);
    if (!C || !D) {
        free(C);
        free(D);
        return sd_error_set(err, SD_ENOMEM, "out of memory (draft-policy DP, V = %zu, T = %zu)", V, T);
    }
    S_dp d = {c, pol, cost, V, T, C, D};
    for (size_t n = T; n >= 1; n--)
        for (size_t a = 0; a < V; a++)
            S_node(&d, n, 0, sd_draft_len_at(gamma, T, n), a, 1.0, 0.0, 0.0, 1.0, &C[n * V + a], &D[n * V + a]);
    double ec = 0.0, ed = 0.0;
    for (size_t a = 0; a < V; a++) {
        ec += c->init[a] * C[V + a];
        ed += c->init[a] * D[V + a];
    }
    free(C);
    free(D);
    if (calls)
        *calls = ec;
    if (drafted)
        *drafted = ed;
    return SD_OK;
}

int sd_exact_policy(const sd_chain *c, size_t gamma, const sd_draft_policy *pol, double *calls,
                    double *drafted, sd_error *err)
{
    return S_run(c, gamma, pol, 0.0, calls, drafted, err);
}

int sd_exact_policy_best(const sd_chain *c, size_t gamma, double cost, double *calls, double *drafted,
                         sd_error *err)
{
    if (!(cost >= 0.0) || !isfinite(cost))
        return sd_error_set(err, SD_EUSAGE, "draft cost ratio %g: expected a finite number >= 0", cost);
    return S_run(c, gamma, NULL, cost, calls, drafted, err);
}

double sd_exact_policy_speedup(double T, double calls, double drafted, double cost)
{
    return T / (calls + cost * drafted);
}

static int S_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int sd_exact_policy_entropies(const sd_chain *c, double *out, size_t max, size_t *n, sd_error *err)
{
    size_t k = 0;
    for (size_t t = 1; t <= c->T; t++)
        for (size_t a = 0; a < c->V; a++) {
            double h = sd_draft_entropy(sd_chain_p(c, t, a), c->V);
            size_t j = 0;
            while (j < k && out[j] != h)
                j++;
            if (j < k)
                continue;
            if (k == max)
                return sd_error_set(err, SD_ETOOBIG, "more than %zu distinct draft-row entropies", max);
            out[k++] = h;
        }
    qsort(out, k, sizeof *out, S_cmp);
    *n = k;
    return SD_OK;
}
