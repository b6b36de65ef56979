/* sd_power.c — see sd_power.h. */
#include "sd_power.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

double sd_power_chisq(double dof, double lambda, double alpha)
{
    double crit = gsl_cdf_chisq_Qinv(alpha, dof);
    if (lambda <= 0.0)
        return alpha;
    double c = (dof + 2.0 * lambda) / (dof + lambda), f = (dof + lambda) * (dof + lambda) / (dof + 2.0 * lambda);
    return gsl_cdf_chisq_Q(crit / c, f);
}

double sd_power_lambda(double dof, double alpha, double power)
{
    double lo = 0.0, hi = 1.0;
    while (sd_power_chisq(dof, hi, alpha) < power && hi < 1e300)
        hi *= 2.0;
    while (hi - lo > 1e-10 * hi) {
        double mid = 0.5 * (lo + hi);
        if (sd_power_chisq(dof, mid, alpha) < power)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

double sd_power_detectable_tv(double dof, double alpha, double power, double trials)
{
    if (!(dof >= 1.0) || !(trials > 0.0))
        return NAN;
    return sqrt(sd_power_lambda(dof, alpha, power) / (4.0 * trials));
}

uint64_t sd_power_trials(double dof, double alpha, double power, double tv)
{
    if (!(tv > 0.0 && tv <= 1.0) || !(dof >= 1.0))
        return 0;
    double n = ceil(sd_power_lambda(dof, alpha, power) / (4.0 * tv * tv));
    return n > 9e18 ? UINT64_MAX : (uint64_t)n;
}
