/* sd_dist.h — operations on probability vectors (notation of docs/notation.md).
 *
 * All vectors have V entries; p is the draft, q the target.  Sums run in
 * index order, so results are deterministic to the last bit. */
#ifndef SD_DIST_H
#define SD_DIST_H

#include <stddef.h>

/* TV(p,q) = ½ Σ|p-q| = Σ max(0, q-p).  Computed as Σ max(0,q-p). */
double sd_dist_tv(const double *p, const double *q, size_t V);

/* The residual [q-p]+ : out(x) = max(0, q(x)-p(x)) / Σ max(0, q-p).
 * Returns the mass Σ max(0,q-p) (= TV).  When the mass is 0 (p >= q
 * everywhere, e.g. p = q) out is left all zero and 0 is returned: there is
 * nothing to sample, and callers must not sample it.  out may be q itself
 * (the recursion q^{m+1} = [q^m - p]+ in place). */
double sd_dist_residual(const double *p, const double *q, size_t V, double *out);

/* Samples an index from non-negative weights w (not necessarily summing to
 * 1) with total = Σ w, given u uniform in [0,1): the smallest i with
 * u·total < w_0+...+w_i.  Never returns an index whose weight is 0: when
 * rounding leaves u·total beyond the running sum, the last index with
 * positive weight is returned.  Requires total > 0. */
size_t sd_dist_sample(const double *w, size_t V, double total, double u);

/* Samples from the residual max(0, q-p) without building it (mass must be
 * > 0; it is Σ max(0,q-p) as returned by sd_dist_tv). */
size_t sd_dist_sample_residual(const double *p, const double *q, size_t V,
                               double mass, double u);

/* Checks that x is a probability vector: finite, >= 0, Σ within tol of 1.
 * Returns -1 if so; otherwise the index of the first bad entry, or V when
 * only the sum is off (*sum receives the sum either way). */
long sd_dist_check(const double *x, size_t V, double tol, double *sum);

/* Divides x by its sum (which must be > 0). */
void sd_dist_normalise(double *x, size_t V);

#endif
