/* sd_bias.c — see sd_bias.h. */
#include "sd_bias.h"

#include <math.h>
#include <stdlib.h>

#include "../../src/sd_exact.h"
#include "../exact/sd_exact_gen.h"

int sd_bias_exact(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, double *tv,
                  double *max, size_t *argmax, sd_error *err)
{
    size_t V = c->V, T = c->T;
    double *P = malloc(T * V * sizeof *P), *Q = malloc((T + 1) * V * sizeof *Q);
    int rc = (!P || !Q) ? sd_error_set(err, SD_ENOMEM, "out of memory for the laws of %zu tokens", T)
                        : sd_exact_gen_marginals(vt, c, par, P, err);
    if (!rc) {
        sd_exact_target_marginals(c, Q);
        *max = -1.0;
        for (size_t n = 1; n <= T; n++) {
            double s = 0.0;
            for (size_t b = 0; b < V; b++)
                s += fabs(P[(n - 1) * V + b] - Q[n * V + b]);
            if (tv)
                tv[n - 1] = 0.5 * s;
            if (0.5 * s > *max) {
                *max = 0.5 * s;
                *argmax = n;
            }
        }
    }
    free(P);
    free(Q);
    return rc;
}

/* Var h(X, Y) for X, Y ~ P i.i.d., h(x, y) = 1[x=y] - Q_x - Q_y + s with
 * s = Σ Q²: E h² = Σ P² - 2 Σ P² (2Q - s) + 2 m2 + 2 m1² - 4 s m1 + s²
 * (m1 = Σ P Q, m2 = Σ P Q²) and E h = Σ (P - Q)². */
static double S_zeta2(const double *P, const double *Q, size_t V)
{
    double s = 0.0, pp = 0.0, ppq = 0.0, m1 = 0.0, m2 = 0.0, d2 = 0.0;
    for (size_t b = 0; b < V; b++) {
        s += Q[b] * Q[b];
        pp += P[b] * P[b];
        ppq += P[b] * P[b] * Q[b];
        m1 += P[b] * Q[b];
        m2 += P[b] * Q[b] * Q[b];
        d2 += (P[b] - Q[b]) * (P[b] - Q[b]);
    }
    double eh2 = pp - 2.0 * (2.0 * ppq - s * pp) + 2.0 * m2 + 2.0 * m1 * m1 - 4.0 * s * m1 + s * s;
    double v = eh2 - d2 * d2;
    return v > 0.0 ? v : 0.0;
}

int sd_bias_estimate_counts(const double *counts, uint64_t N, const sd_chain *c, sd_bias_estimate *out,
                            sd_error *err)
{
    if (N < 2)
        return sd_error_set(err, SD_EUSAGE, "the bias estimate needs at least 2 trials, got %llu",
                            (unsigned long long)N);
    size_t V = c->V, T = c->T;
    double *P = malloc(V * sizeof *P), *Q = malloc((T + 1) * V * sizeof *Q);
    if (!P || !Q) {
        free(P);
        free(Q);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the target's laws of %zu tokens", T);
    }
    sd_exact_target_marginals(c, Q);
    double n = (double)N, pairs = n * (n - 1.0), sum = 0.0, se = 0.0, floor = 0.0;
    for (size_t t = 1; t <= T; t++) {
        const double *k = counts + (t - 1) * V, *q = Q + t * V;
        double u = 0.0, pd = 0.0, pd2 = 0.0;
        for (size_t b = 0; b < V; b++) {
            P[b] = k[b] / n;
            u += k[b] * (k[b] - 1.0) / pairs - 2.0 * q[b] * P[b] + q[b] * q[b];
            double d = P[b] - q[b];
            pd += P[b] * d;
            pd2 += P[b] * d * d;
        }
        double z1 = pd2 - pd * pd;
        sum += u;
        se += sqrt((4.0 * (n - 2.0) * (z1 > 0.0 ? z1 : 0.0) + 2.0 * S_zeta2(P, q, V)) / pairs);
        floor += sqrt(2.0 * S_zeta2(q, q, V) / pairs);
    }
    free(P);
    free(Q);
    out->value = sum / (double)T;
    out->stderr = se / (double)T;
    out->noise_floor = floor / (double)T;
    return SD_OK;
}
