/* sd_dist.c — see sd_dist.h. */
#include "sd_dist.h"

#include <assert.h>
#include <math.h>

double sd_dist_tv(const double *p, const double *q, size_t V)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++) {
        double d = q[x] - p[x];
        if (d > 0.0)
            s += d;
    }
    return s;
}

double sd_dist_residual(const double *p, const double *q, size_t V, double *out)
{
    double mass = 0.0;
    for (size_t x = 0; x < V; x++) {
        double d = q[x] - p[x];
        out[x] = d > 0.0 ? d : 0.0;
        mass += out[x];
    }
    if (mass > 0.0)
        for (size_t x = 0; x < V; x++)
            out[x] /= mass;
    return mass;
}

size_t sd_dist_sample(const double *w, size_t V, double total, double u)
{
    assert(total > 0.0);
    double target = u * total, run = 0.0;
    size_t last = V;
    for (size_t x = 0; x < V; x++) {
        if (w[x] > 0.0) {
            run += w[x];
            last = x;
            if (target < run)
                return x;
        }
    }
    assert(last < V);
    return last;
}

size_t sd_dist_sample_residual(const double *p, const double *q, size_t V,
                               double mass, double u)
{
    assert(mass > 0.0);
    double target = u * mass, run = 0.0;
    size_t last = V;
    for (size_t x = 0; x < V; x++) {
        double d = q[x] - p[x];
        if (d > 0.0) {
            run += d;
            last = x;
            if (target < run)
                return x;
        }
    }
    assert(last < V);
    return last;
}

long sd_dist_check(const double *x, size_t V, double tol, double *sum)
{
    double s = 0.0;
    long bad = -1;
    for (size_t i = 0; i < V; i++) {
        if (bad < 0 && (!isfinite(x[i]) || x[i] < 0.0))
            bad = (long)i;
        s += x[i];
    }
    if (sum)
        *sum = s;
    if (bad >= 0)
        return bad;
    if (!(fabs(s - 1.0) <= tol))
        return (long)V;
    return -1;
}

void sd_dist_normalise(double *x, size_t V)
{
    double s = 0.0;
    for (size_t i = 0; i < V; i++)
        s += x[i];
    assert(s > 0.0);
    for (size_t i = 0; i < V; i++)
        x[i] /= s;
}
