/* sd_token_dp.c — the token-level DP on sparse backoff rows (sd_token_dp.h). */
#include "sd_token_dp.h"

#include <math.h>
#include <string.h>

void sd_token_dp_push_q(const sd_backoff *m, const double *M, double *out)
{
    size_t V = m->V;
    double mc = 0.0;
    for (size_t a = 0; a < V; a++)
        mc += M[a] * m->c[a];
    for (size_t x = 0; x < V; x++)
        out[x] = mc * m->u[x];
    for (size_t a = 0; a < V; a++) {
        if (M[a] == 0.0)
            continue;
        for (size_t i = m->off[a]; i < m->off[a + 1]; i++)
            out[m->tok[i]] += M[a] * (m->qe[i] - m->c[a] * m->u[m->tok[i]]);
    }
}

size_t sd_token_dp_vectors(const sd_backoff *m, size_t gamma)
{
    return gamma == 0 || gamma >= m->T ? 2 : 2 * (gamma + 1) + 1;
}

/* Σ_a M(a) tv[a] over the contexts with mass (tv may be NaN elsewhere);
 * *bad the first context with mass and a non-finite tv (-1: none). */
static double S_dot(const double *M, const double *tv, size_t V, long *bad)
{
    double s = 0.0;
    for (size_t a = 0; a < V; a++)
        if (M[a] != 0.0) {
            if (!isfinite(tv[a]) && *bad < 0)
                *bad = (long)a;
            s += M[a] * tv[a];
        }
    return s;
}

long sd_token_dp_run(const sd_backoff *m, size_t gamma, const double *tv, sd_token_dp_min_fn push_min, const void *ctx,
                     double *buf, size_t *bad_n, double *rejections, double *target_calls)
{
    size_t T = m->T, V = m->V;
    double rej = 0.0, calls = 0.0;
    long bad = -1;
    if (sd_token_dp_vectors(m, gamma) == 2) { /* Theorem 1 */
        double *Q = buf, *N = buf + V, last = 0.0;
        Q[m->start] = 1.0;
        for (size_t n = 1; n <= T && bad < 0; n++) {
            last = S_dot(Q, tv, V, &bad);
            rej += last;
            if (bad >= 0)
                *bad_n = n;
            if (n < T) {
                sd_token_dp_push_q(m, Q, N);
                double *t = Q;
                Q = N;
                N = t;
            }
        }
        calls = 1.0 + rej - last;
    } else {
        double *cur = buf, *nxt = buf + (gamma + 1) * V, *sum = buf + 2 * (gamma + 1) * V;
        cur[m->start] = 1.0; /* j = 0 */
        for (size_t n = 1; n <= T && bad < 0; n++) {
            for (size_t a = 0; a < V; a++)
                calls += cur[a];
            for (size_t j = 0; j < gamma; j++)
                rej += S_dot(cur + j * V, tv, V, &bad);
            if (bad >= 0)
                *bad_n = n;
            if (n == T)
                break;
            /* j+1 <- the min push of j; 0 <- the q push of everything minus the min pushes */
            memset(sum, 0, V * sizeof *sum);
            for (size_t j = 0; j <= gamma; j++)
                for (size_t a = 0; a < V; a++)
                    sum[a] += cur[j * V + a];
            sd_token_dp_push_q(m, sum, nxt);
            for (size_t j = 0; j < gamma; j++) {
                double *dst = nxt + (j + 1) * V;
                push_min(ctx, cur + j * V, dst);
                for (size_t x = 0; x < V; x++)
                    nxt[x] -= dst[x];
            }
            for (size_t x = 0; x < V; x++)
                if (nxt[x] < 0.0)
                    nxt[x] = 0.0;
            double *t = cur;
            cur = nxt;
            nxt = t;
        }
    }
    if (rejections)
        *rejections = rej;
    if (target_calls)
        *target_calls = calls;
    return bad;
}
