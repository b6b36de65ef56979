/* sd_exact_single.c — single-token closed forms (sd_exact_single.h). */
#include "sd_exact_single.h"

#include <math.h>
#include <stdlib.h>

#include "sd_dist.h"
#include "sd_exact_batch.h"

int sd_exact_batch_improvement(const double *p, const double *q, size_t V, size_t M,
                               double *out, sd_error *err)
{
    double tv = sd_dist_tv(p, q, V), R;
    if (M == 0) {
        /* R_∞ = q({p = 0}) (sd_exact_batch.c, the corrected Proposition 1) */
        R = 0.0;
        for (size_t x = 0; x < V; x++)
            if (p[x] == 0.0)
                R += q[x];
    } else {
        if ((double)V * (double)M > SD_EXACT_MAX_WORK)
            return sd_error_set(err, SD_ETOOBIG,
                                "batch improvement at V = %zu, M = %zu needs %.3g operations, beyond "
                                "the limit %.3g (V·M); use M = inf",
                                V, M, (double)V * (double)M, SD_EXACT_MAX_WORK);
        double *u = malloc(V * sizeof *u);
        if (!u)
            return sd_error_set(err, SD_ENOMEM, "out of memory (batch improvement, vocab %zu)", V);
        R = sd_exact_batch_row(p, q, V, M, u);
        free(u);
    }
    *out = tv - R;
    return SD_OK;
}

int sd_exact_pareto_b(const double *p, const double *q, const double *b, size_t V,
                      sd_pareto *out, double *pstar, sd_error *err)
{
    for (size_t x = 0; x < V; x++)
        if (!(b[x] >= 0.0 && b[x] <= 1.0))
            return sd_error_set(err, SD_EUSAGE,
                                "acceptance b(%zu) = %g: expected a probability in [0, 1]", x, b[x]);
    /* Yin et al. 2024, Theorem 4: Loss*_TV(b) = ½ Σ|q - b p| - ½ Σ(1-b) p. */
    double rej = 0.0, l1 = 0.0;
    for (size_t x = 0; x < V; x++) {
        rej += (1.0 - b[x]) * p[x];
        l1 += fabs(q[x] - b[x] * p[x]);
    }
    out->reject_prob = rej;
    out->loss_tv = 0.5 * l1 - 0.5 * rej;
    out->tv = sd_dist_tv(p, q, V);
    if (pstar) {
        /* P* = [A]+ normalised; the factor 1/Σ(1-b)p of A cancels. */
        double mass = 0.0;
        for (size_t x = 0; x < V; x++) {
            double a = q[x] - b[x] * p[x];
            pstar[x] = a > 0.0 ? a : 0.0;
            mass += pstar[x];
        }
        for (size_t x = 0; x < V; x++)
            pstar[x] = (rej > 0.0 && mass > 0.0) ? pstar[x] / mass : 0.0;
    }
    return SD_OK;
}

int sd_exact_pareto(const double *p, const double *q, size_t V, double eps,
                    sd_pareto *out, double *pstar, sd_error *err)
{
    if (!(eps >= 0.0 && isfinite(eps)))
        return sd_error_set(err, SD_EUSAGE, "--eps %g: expected a finite number >= 0", eps);
    double *b = malloc(V * sizeof *b);
    if (!b)
        return sd_error_set(err, SD_ENOMEM, "out of memory (Pareto, vocab %zu)", V);
    for (size_t x = 0; x < V; x++)
        b[x] = (p[x] <= q[x] + eps) ? 1.0 : (q[x] + eps) / p[x];
    int st = sd_exact_pareto_b(p, q, b, V, out, pstar, err);
    free(b);
    return st;
}

double sd_exact_output_tv(const double *p, const double *q, const double *b,
                          const double *P, size_t V)
{
    double rej = 0.0, s = 0.0;
    for (size_t x = 0; x < V; x++)
        rej += (1.0 - b[x]) * p[x];
    for (size_t x = 0; x < V; x++)
        s += fabs(b[x] * p[x] + rej * P[x] - q[x]);
    return 0.5 * s;
}

int sd_exact_sprinter(double tp, double fp, size_t r, double td, double *expected_tokens,
                      double *expected_stop_time, sd_error *err)
{
    if (!(tp >= 0.0 && tp <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "--tp %g: expected a rate in [0, 1]", tp);
    if (!(fp >= 0.0 && fp <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "--fp %g: expected a rate in [0, 1]", fp);
    if (!(td >= 0.0 && isfinite(td)))
        return sd_error_set(err, SD_EUSAGE, "--td %g: expected a finite time >= 0", td);
    /* E[N] = Σ_{i=1..r} tp^i + tp^r fp/(1-fp)  (Zhong et al. 2025, Theorem 3.3) */
    double pw = pow(tp, (double)r);
    double sum = tp >= 1.0 ? (double)r : tp * (1.0 - pw) / (1.0 - tp);
    double en = fp >= 1.0 ? (pw > 0.0 ? HUGE_VAL : sum) : sum + pw * fp / (1.0 - fp);
    *expected_tokens = en;
    /* E[T_stop] = t_d (E[N] + 1)  (Zhong et al. 2025, Theorem 3.4) */
    *expected_stop_time = isinf(en) ? HUGE_VAL : td * (en + 1.0);
    return SD_OK;
}

double sd_exact_sprinter_bias(const double *p, const double *q, size_t V, double fp)
{
    return fp * sd_dist_tv(p, q, V);
}
