/* test_kdraft_opt.c — the k-draft optimum three ways (suite kdraft_opt):
 * i.i.d. drafts by the sorted prefix, brute force over subsets, the GLPK
 * transport LP and the convex problem (Thomas & Pal 2025); drafts without
 * replacement (Hu et al. 2025) by the prefix, brute force and the LP. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "../lp/sd_lp.h"
#include "../src/sd_exact_otm.h"
#include "test_exact_util.h"

/* The tolerance of the agreement: 1e-9, the brief's; GLPK's simplex is
 * feasible to 1e-9 relative (its default tolerances), the closed forms to
 * rounding. */
#define TOL 1e-9

static double S_lp(const double *p, const double *q, size_t V, size_t k, int wor)
{
    sd_lp_result res;
    sd_error err;
    int rc = wor ? sd_lp_otm_wor(p, q, V, k, NULL, &res, &err) : sd_lp_otm(p, q, V, k, 0, NULL, &res, NULL, &err);
    cr_assert_eq(rc, SD_OK, "%s", err.msg);
    cr_assert(res.optimal);
    return res.optimum;
}

/* Instance it of a random sweep: V = vmin + U{0..vspan-1}, then k =
 * 1 + U{0..kmax-1}, then p and q with zero fraction (it % 3) 0.2 and, at
 * every fourth instance, 3 zeros (tx_random_dist), drawn from r in that
 * order. */
static void S_instance(gsl_rng *r, int it, size_t vmin, size_t vspan, size_t kmax, double *p, double *q, size_t *V,
                       size_t *k)
{
    *V = vmin + gsl_rng_uniform_int(r, vspan);
    *k = 1 + gsl_rng_uniform_int(r, kmax);
    double zf = (it % 3) * 0.2;
    tx_random_dist(r, p, *V, zf, it % 4 == 0 ? 3 : 0);
    tx_random_dist(r, q, *V, zf, it % 4 == 0 ? 3 : 0);
}

Test(kdraft_opt, iid_prefix_brute_lp_convex_agree)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4242);
    double p[7], q[7];
    for (int it = 0; it < 60; it++) {
        size_t V, k;
        S_instance(r, it, 2, 6, 3, p, q, &V, &k);
        double a, b, c, l = S_lp(p, q, V, k, 0);
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &a, NULL, NULL), SD_OK);
        cr_assert_eq(sd_exact_otm_acceptance_brute(p, q, V, k, &b, NULL), SD_OK);
        cr_assert_eq(sd_exact_otm_convex(p, q, V, k, &c, NULL, NULL), SD_OK);
        cr_expect(fabs(a - b) < TOL && fabs(a - c) < TOL && fabs(a - l) < TOL,
                  "it %d V %zu k %zu: prefix %.17g brute %.17g convex %.17g lp %.17g", it, V, k, a, b, c, l);
    }
    gsl_rng_free(r);
}

Test(kdraft_opt, wor_prefix_brute_lp_agree_and_beat_iid)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2502);
    double p[7], q[7];
    for (int it = 0; it < 60; it++) {
        size_t V, k;
        S_instance(r, it, 2, 6, 3, p, q, &V, &k);
        double a, b, iid, l = S_lp(p, q, V, k, 1);
        cr_assert_eq(sd_exact_otm_wor_acceptance(p, q, V, k, 0, &a, NULL, NULL), SD_OK);
        cr_assert_eq(sd_exact_otm_wor_acceptance(p, q, V, k, 1, &b, NULL, NULL), SD_OK);
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &iid, NULL, NULL), SD_OK);
        cr_expect(fabs(a - b) < TOL && fabs(a - l) < TOL, "it %d V %zu k %zu: prefix %.17g brute %.17g lp %.17g",
                  it, V, k, a, b, l);
        cr_expect(a >= iid - 1e-12, "it %d: without replacement %.17g below i.i.d. %.17g", it, a, iid);
        if (k == 1)
            cr_expect(fabs(a - iid) < 1e-12, "one draft: wor = iid");
    }
    gsl_rng_free(r);
}

Test(kdraft_opt, wor_prefix_equals_brute_many)
{
    /* the prefix restriction for draws without replacement, without the LP:
     * 3000 instances, V <= 9, k <= 4 */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 18779);
    double p[9], q[9];
    for (int it = 0; it < 3000; it++) {
        size_t V, k;
        S_instance(r, it, 2, 8, 4, p, q, &V, &k);
        double a, b;
        cr_assert_eq(sd_exact_otm_wor_acceptance(p, q, V, k, 0, &a, NULL, NULL), SD_OK);
        cr_assert_eq(sd_exact_otm_wor_acceptance(p, q, V, k, 1, &b, NULL, NULL), SD_OK);
        cr_expect(fabs(a - b) < 1e-12, "it %d V %zu k %zu: prefix %.17g brute %.17g", it, V, k, a, b);
    }
    gsl_rng_free(r);
}

Test(kdraft_opt, convex_equals_prefix_at_large_vocabulary)
{
    /* V = 10^5 (the convex method is O(V log V)); Dirichlet-like rows */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 15898);
    size_t V = 100000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    for (int it = 0; it < 3; it++) {
        tx_random_dist(r, p, V, 0.1 * it, 0);
        tx_random_dist(r, q, V, 0.1 * it, 0);
        for (size_t k = 1; k <= 8; k *= 2) {
            double a, c;
            cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &a, NULL, NULL), SD_OK);
            cr_assert_eq(sd_exact_otm_convex(p, q, V, k, &c, NULL, NULL), SD_OK);
            cr_expect(fabs(a - c) < TOL, "it %d k %zu: prefix %.17g convex %.17g", it, k, a, c);
        }
    }
    free(p);
    free(q);
    gsl_rng_free(r);
}

/* Wolfe's minimum-norm point (wor: over draws without replacement) against
 * the prefix optimum on n random instances (S_instance, seed), 1e-9 as
 * above. */
static void S_mnp_equals_prefix(unsigned long seed, int n, size_t vmin, size_t vspan, size_t kmax, int wor)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    double p[40], q[40]; /* V <= vmin + vspan - 1 <= 40 */
    for (int it = 0; it < n; it++) {
        size_t V, k;
        S_instance(r, it, vmin, vspan, kmax, p, q, &V, &k);
        double a, m;
        size_t iters;
        cr_assert_eq(wor ? sd_exact_otm_wor_acceptance(p, q, V, k, 0, &a, NULL, NULL)
                         : sd_exact_otm_acceptance(p, q, V, k, &a, NULL, NULL),
                     SD_OK);
        cr_assert_eq(sd_exact_otm_convex_mnp(p, q, V, k, wor, &m, &iters, NULL), SD_OK);
        cr_expect(fabs(a - m) < TOL, "it %d V %zu k %zu: prefix %.17g, min-norm point %.17g (%zu iterations)", it,
                  V, k, a, m, iters);
    }
    gsl_rng_free(r);
}

Test(kdraft_opt, generic_min_norm_point_equals_prefix)
{
    /* Wolfe's minimum-norm point assumes no token order: its best level set
     * must reach the q/p-prefix optimum (20 instances, V = 12..40, k <= 8,
     * zeros) */
    S_mnp_equals_prefix(1980, 20, 12, 29, 8, 0);
}

Test(kdraft_opt, generic_min_norm_point_equals_prefix_without_replacement)
{
    /* the same without replacement, where the prefix restriction is only
     * checked: 12 instances, V = 10..24, k <= 3 */
    S_mnp_equals_prefix(2502, 12, 10, 15, 3, 1);
}
