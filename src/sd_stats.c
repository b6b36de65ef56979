/* sd_stats.c — see sd_stats.h. */
#include "sd_stats.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

void sd_welford_init(sd_welford *w)
{
    w->n = 0.0;
    w->mean = 0.0;
    w->m2 = 0.0;
}

void sd_welford_add(sd_welford *w, double x)
{
    w->n += 1.0;
    double d = x - w->mean;
    w->mean += d / w->n;
    w->m2 += d * (x - w->mean);
}

void sd_welford_merge(sd_welford *a, const sd_welford *b)
{
    if (b->n == 0.0)
        return;
    if (a->n == 0.0) {
        *a = *b;
        return;
    }
    double n = a->n + b->n, d = b->mean - a->mean;
    a->mean += d * (b->n / n);
    a->m2 += b->m2 + d * d * (a->n * b->n / n);
    a->n = n;
}

void sd_welford_merge_sums(sd_welford *a, uint64_t n, uint64_t s1, uint64_t s2)
{
    if (n == 0)
        return;
    double dn = (double)n, d1 = (double)s1, mean = d1 / dn;
    sd_welford one = {dn, mean, fma(-d1, mean, (double)s2)};
    if (one.m2 < 0.0)
        one.m2 = 0.0;
    sd_welford_merge(a, &one);
}

double sd_welford_var(const sd_welford *w)
{
    return w->n < 2.0 ? 0.0 : w->m2 / (w->n - 1.0);
}

double sd_welford_stderr(const sd_welford *w)
{
    return w->n < 2.0 ? 0.0 : sqrt(sd_welford_var(w) / w->n);
}

void sd_welford_ci95(const sd_welford *w, double *lo, double *hi)
{
    double z = gsl_cdf_ugaussian_Pinv(0.975), se = sd_welford_stderr(w);
    *lo = w->mean - z * se;
    *hi = w->mean + z * se;
}

int sd_chisq_test(const double *observed, const double *prob, size_t cells,
                  double min_expected, sd_chisq *res)
{
    double n = 0.0;
    for (size_t i = 0; i < cells; i++)
        n += observed[i];
    sd_chisq r = {0};
    /* Pool sparse cells: walk in index order, accumulating cells whose
     * expected count is below min_expected into one pooled cell; it is
     * tested as a cell of its own once it reaches min_expected. */
    double chi2 = 0.0, pool_o = 0.0, pool_e = 0.0;
    double last_o = 0.0, last_e = 0.0; /* the last tested cell, to absorb a short pool */
    size_t tested = 0;
    for (size_t i = 0; i < cells; i++) {
        double e = n * prob[i], o = observed[i];
        double dev = fabs(o / (n > 0 ? n : 1.0) - prob[i]);
        if (dev > r.max_abs_dev)
            r.max_abs_dev = dev;
        if (prob[i] == 0.0) {
            r.zero_hits += o;
            continue;
        }
        if (e >= min_expected) {
            if (tested)
                chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
            last_o = o;
            last_e = e;
            tested++;
        } else {
            pool_o += o;
            pool_e += e;
            if (pool_e >= min_expected) {
                if (tested)
                    chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
                last_o = pool_o;
                last_e = pool_e;
                tested++;
                pool_o = pool_e = 0.0;
            }
        }
    }
    if (pool_e > 0.0) {
        if (tested) {
            last_o += pool_o;
            last_e += pool_e;
        } else {
            last_o = pool_o;
            last_e = pool_e;
            tested = 1;
        }
    }
    if (tested)
        chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
    r.chi2 = chi2;
    r.cells_tested = tested;
    r.dof = tested > 1 ? (double)(tested - 1) : 0.0;
    if (r.zero_hits > 0.0)
        r.p_value = 0.0;
    else if (r.dof > 0.0)
        r.p_value = gsl_cdf_chisq_Q(chi2, r.dof);
    else
        r.p_value = 1.0;
    if (res)
        *res = r;
    return 0;
}
