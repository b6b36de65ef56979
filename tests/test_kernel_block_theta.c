/* test_kernel_block_theta.c — the thresholds the block kernel stores in
 * place of its sorted ratios (sd_block_threshold, sims/verifiers/sd_block.h): suite
 * kernel_block_theta.
 *
 * The kernel counts j*(π) = #{j : π >= θ_j} where it counted
 * #{j : fl(π r_j) > 1}; the two must be the same number for every double π
 * in (0, 1] (the p_i of Sun et al. 2025, Alg. 2), ties and r = +inf, 0, -1
 * included.  The kernel's own output is compared bit for bit with the
 * scalar code (kernel_block/vector_passes_equal_the_scalar_code) and its
 * law with the generic path (kernel_block/means_agree_with_the_generic_path);
 * these tests pin the equivalence itself, at and around each threshold,
 * where random π would almost never land. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../sims/verifiers/sd_block.h"
#include "test_util.h"

/* θ is the least double with fl(θ r) > 1 within (0, 1], or +inf when no
 * π <= 1 has it. */
static void S_check_least(double r)
{
    const double th = sd_block_threshold(r);
    if (th == HUGE_VAL) {
        cr_assert(!(1.0 * r > 1.0), "r = %a: θ = +inf but fl(1 r) > 1", r);
        return;
    }
    cr_assert(th > 0.0 && th <= 1.0, "r = %a: θ = %a outside (0, 1]", r, th);
    cr_assert(th * r > 1.0, "r = %a: fl(θ r) = %a, not > 1 (θ = %a)", r, th * r, th);
    const double below = nextafter(th, 0.0);
    cr_assert(!(below * r > 1.0), "r = %a: θ = %a is not the least (its predecessor %a has it)", r, th, below);
}

/* fl(π r) > 1 <=> π >= θ at π and at its two neighbours within (0, 1]. */
static void S_check_around(double r, double th, double pi)
{
    const double at[3] = {nextafter(pi, 0.0), pi, nextafter(pi, 2.0)};
    for (int k = 0; k < 3; k++) {
        const double x = at[k];
        if (!(x > 0.0 && x <= 1.0))
            continue;
        cr_assert_eq(x * r > 1.0, x >= th, "r = %a, θ = %a, π = %a: fl(π r) > 1 is %d, π >= θ is %d", r, th, x,
                     x * r > 1.0, x >= th);
    }
}

Test(kernel_block_theta, threshold_is_the_least_pi_with_pi_r_above_one)
{
    /* the rows' special values, the edges of (1, inf) and ratios whose
     * reciprocal rounds either way */
    const double special[] = {HUGE_VAL,    -1.0,         0.0,         1.0,       nextafter(1.0, 2.0),
                              nextafter(1.0, 0.0), 2.0,   3.0,         7.0 / 3.0, 1e300,
                              DBL_MAX,     1.0 / DBL_MIN, 1.0 / 3e-310, 1.5,      1.0 + 0x1p-30};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        S_check_least(special[k]);
    cr_assert_eq(sd_block_threshold(HUGE_VAL), DBL_TRUE_MIN);
    cr_assert_eq(sd_block_threshold(-1.0), HUGE_VAL);
    cr_assert_eq(sd_block_threshold(1.0), HUGE_VAL);
    /* ratios q/p of random probabilities, over many binades */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 14);
    for (int n = 0; n < 200000; n++) {
        const double q = gsl_rng_uniform_pos(g), p = gsl_rng_uniform_pos(g) * ldexp(1.0, -(int)gsl_rng_uniform_int(g, 60));
        S_check_least(q / p);
        S_check_least(p / q);
        /* ratios above 2^1022, whose reciprocals are subnormal: there 1/r
         * can round above θ and the walk goes down (for normal 1/r,
         * fl(fl(1/r) r) <= 1: it goes up) */
        S_check_least(ldexp(1.0 + gsl_rng_uniform(g), 1022 + (int)(n & 1)));
    }
    gsl_rng_free(g);
}

/* The kernel's count on whole sorted rows (sd_block_sort_row's order and
 * ratios), with ties (equal ratios, p = q), p = 0 < q (+inf) and
 * p = q = 0 (-1): at every threshold of the row, its neighbours, 1, the
 * least positive double and random π. */
Test(kernel_block_theta, counts_equal_the_ratio_counts)
{
    enum { V = 12 };
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 47);
    sd_block_key key[V];
    double rs[16], Q[V + 1], P[V + 1], th[16];
    uint32_t ord[V];
    for (int row = 0; row < 4000; row++) {
        double p[V], q[V], sp = 0.0, sq = 0.0;
        for (size_t x = 0; x < V; x++) {
            const unsigned kind = (unsigned)gsl_rng_uniform_int(g, 6);
            p[x] = gsl_rng_uniform_pos(g);
            q[x] = kind == 0 ? p[x] : kind == 1 ? 2.0 * p[x] : gsl_rng_uniform_pos(g); /* ties */
            if (kind == 2)
                p[x] = 0.0; /* r = +inf */
            if (kind == 3)
                p[x] = q[x] = 0.0; /* r = -1 */
            if (kind == 4)
                q[x] = 0.0; /* r = 0 */
            sp += p[x];
            sq += q[x];
        }
        if (!(sp > 0.0) || !(sq > 0.0))
            continue;
        for (size_t x = 0; x < V; x++) {
            p[x] /= sp;
            q[x] /= sq;
        }
        sd_block_sort_row(p, q, V, key, rs, Q, P, ord);
        for (size_t j = 0; j < 16; j++)
            th[j] = sd_block_threshold(rs[j]);
        double pis[V + 3];
        size_t n = 0;
        for (size_t j = 0; j < V; j++)
            if (th[j] <= 1.0)
                pis[n++] = th[j];
        pis[n++] = 1.0;
        pis[n++] = DBL_TRUE_MIN;
        pis[n++] = gsl_rng_uniform_pos(g);
        for (size_t k = 0; k < n; k++) {
            const double at[3] = {nextafter(pis[k], 0.0), pis[k], nextafter(pis[k], 2.0)};
            for (int a = 0; a < 3; a++) {
                const double pi = at[a];
                if (!(pi > 0.0 && pi <= 1.0))
                    continue;
                size_t jr = 0, jt = 0;
                for (size_t j = 0; j < 16; j++) {
                    jr += pi * rs[j] > 1.0;
                    jt += pi >= th[j];
                    S_check_around(rs[j], th[j], pi);
                }
                cr_assert_eq(jr, jt, "row %d, π = %a: %zu ratios with fl(π r) > 1, %zu thresholds <= π", row, pi,
                             jr, jt);
            }
        }
    }
    gsl_rng_free(g);
}
