/* sd_kseq.c — k-Seq of Sun et al. 2023, Algorithm 2 (sd_kseq.h). */
#include "sd_kseq.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>

double sd_kseq_beta(const double *p, const double *q, size_t V, double rho)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++) {
        double a = q[x] / rho;
        s += p[x] < a ? p[x] : a;
    }
    return s;
}

double sd_kseq_pacc(double beta, size_t k)
{
    if (beta >= 1.0)
        return 1.0;
    return -expm1((double)k * log1p(-beta));
}

typedef struct {
    const double *p, *q;
    size_t V, k;
} S_kseq_ctx;

/* f(ρ) = 1 - (1 - β(ρ))^k - ρ β(ρ) (eq. 6), non-increasing in ρ. */
static double S_f(double rho, void *params)
{
    const S_kseq_ctx *c = params;
    double b = sd_kseq_beta(c->p, c->q, c->V, rho);
    return sd_kseq_pacc(b, c->k) - rho * b;
}

int sd_kseq_solve(const double *p, const double *q, size_t V, size_t k,
                  double *rho, double *beta, sd_error *err)
{
    if (V == 0)
        return sd_error_set(err, SD_EUSAGE, "k-Seq: vocabulary size V = 0; expected >= 1");
    if (k == 0)
        return sd_error_set(err, SD_EUSAGE, "k-Seq: number of drafts k = 0; expected >= 1");
    S_kseq_ctx ctx = {p, q, V, k};
    double b1 = sd_kseq_beta(p, q, V, 1.0);
    double r = 1.0;
    /* ρ = 1 is valid when f(1) <= 0: k = 1 (f ≡ β(1-ρ) vanishes there), p = q,
     * or disjoint supports (β ≡ 0). */
    if (k > 1 && b1 > 0.0 && S_f(1.0, &ctx) > 0.0) {
        double fk = S_f((double)k, &ctx);
        if (fk >= 0.0) {
            /* f(k) <= 0 always; == 0 only by rounding: ρ = k is valid. */
            r = (double)k;
        } else {
            sd_gsl_quiet();
            gsl_function F = {S_f, &ctx};
            gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
            if (!s)
                return sd_error_set(err, SD_ENOMEM, "k-Seq: out of memory for the root solver");
            int st = gsl_root_fsolver_set(s, &F, 1.0, (double)k);
            double lo = 1.0, hi = (double)k;
            if (st == GSL_SUCCESS)
                st = GSL_CONTINUE;
            for (int iter = 0; iter < 200 && st == GSL_CONTINUE; iter++) {
                st = gsl_root_fsolver_iterate(s);
                if (st != GSL_SUCCESS)
                    break;
                lo = gsl_root_fsolver_x_lower(s);
                hi = gsl_root_fsolver_x_upper(s);
                st = gsl_root_test_interval(lo, hi, 0.0, 1e-13);
            }
            if (st == GSL_CONTINUE)
                st = GSL_EMAXITER;
            gsl_root_fsolver_free(s);
            if (st != GSL_SUCCESS)
                return sd_error_set(err, SD_ESOLVER,
                                    "k-Seq: Brent's method for rho* (k = %zu, V = %zu) failed: %s",
                                    k, V, gsl_strerror(st));
            /* f is non-increasing and the bracket straddles its root, so
             * f(hi) <= 0: hi is a valid division factor. */
            r = hi;
        }
    }
    if (rho)
        *rho = r;
    if (beta)
        *beta = r == 1.0 ? b1 : sd_kseq_beta(p, q, V, r);
    return SD_OK;
}

int sd_kseq_acceptance(const double *p, const double *q, size_t V, size_t k,
                       double *out, sd_error *err)
{
    double b;
    int rc = sd_kseq_solve(p, q, V, k, NULL, &b, err);
    if (rc)
        return rc;
    *out = sd_kseq_pacc(b, k);
    return SD_OK;
}

double sd_kseq_residual(const double *p, const double *q, size_t V, size_t k,
                        double rho, double beta, double *out)
{
    double c = beta > 0.0 ? sd_kseq_pacc(beta, k) / beta : (double)k;
    double s = 0.0;
    for (size_t x = 0; x < V; x++) {
        double a = q[x] / rho, m = p[x] < a ? p[x] : a;
        double w = q[x] - m * c;
        out[x] = w > 0.0 ? w : 0.0;
        s += out[x];
    }
    return s;
}
