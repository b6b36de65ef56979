/* test_stats.c — running statistics (Welford, merged and below two
 * observations) and the pooled chi-square test; suite stats. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_rng.h"
#include "../src/sd_stats.h"

/* --- statistics --------------------------------------------------------- */

Test(stats, welford_merge_matches_one_pass)
{
    sd_welford all, a, b;
    sd_welford_init(&all);
    sd_welford_init(&a);
    sd_welford_init(&b);
    for (int i = 0; i < 1000; i++) {
        double x = sin(i * 0.37) * 3.0 + (i % 7);
        sd_welford_add(&all, x);
        sd_welford_add(i < 377 ? &a : &b, x);
    }
    sd_welford_merge(&a, &b);
    cr_assert_eq(a.n, all.n);
    cr_assert(fabs(a.mean - all.mean) < 1e-12);
    cr_assert(fabs(sd_welford_var(&a) - sd_welford_var(&all)) < 1e-10);
}

/* Fewer than two observations carry no spread: variance and standard
 * error are 0 (sd_stats.h), and the interval is the mean alone. */
Test(stats, welford_below_two_observations)
{
    sd_welford w;
    sd_welford_init(&w);
    cr_expect_eq(sd_welford_var(&w), 0.0);
    cr_expect_eq(sd_welford_stderr(&w), 0.0);
    sd_welford_add(&w, 3.0);
    cr_expect_eq(sd_welford_var(&w), 0.0);
    cr_expect_eq(sd_welford_stderr(&w), 0.0);
    double lo, hi;
    sd_welford_ci95(&w, &lo, &hi);
    cr_expect(lo == 3.0 && hi == 3.0, "%g %g", lo, hi);
    /* two: var ((1-2)² + (3-2)²) / 1 = 2, se sqrt(2/2) = 1 */
    sd_welford_add(&w, 1.0);
    cr_expect_eq(sd_welford_var(&w), 2.0);
    cr_expect_eq(sd_welford_stderr(&w), 1.0);
}

/* A cell whose expected count is exactly min_expected is tested alone;
 * the small cell before it stays in the pool, which joins the last tested
 * cell at the end (sd_stats.h).  prob (1/8, 7/16, 7/16), n = 16: expected
 * (2, 7, 7), min_expected 7, observed (3, 8, 5): cells {1} and {2, 0},
 * chi2 = (8-7)²/7 + (8-9)²/9 = 16/63 on 1 dof (pooling {0, 1} and {2}
 * instead would give 64/63). */
Test(stats, chisq_cell_at_the_pooling_threshold_is_tested_alone)
{
    double prob[3] = {0.125, 0.4375, 0.4375}, obs[3] = {3, 8, 5};
    sd_chisq r;
    sd_chisq_test(obs, prob, 3, 7.0, &r);
    cr_expect_eq(r.cells_tested, 2u);
    cr_expect_eq(r.dof, 1.0);
    cr_expect(fabs(r.chi2 - 16.0 / 63.0) < 1e-15, "%.17g", r.chi2);
    cr_expect(fabs(r.p_value - erfc(sqrt(8.0 / 63.0))) < 1e-14, "%.17g", r.p_value);
}

Test(stats, chisq_detects_and_accepts)
{
    double prob[4] = {0.1, 0.2, 0.3, 0.4};
    double good[4] = {1000, 2000, 3000, 4000}, bad[4] = {1300, 1700, 3000, 4000};
    sd_chisq r;
    sd_chisq_test(good, prob, 4, 5.0, &r);
    cr_assert_eq(r.dof, 3.0);
    cr_assert(r.p_value > 0.99);
    sd_chisq_test(bad, prob, 4, 5.0, &r);
    cr_assert(r.p_value < 1e-6);
    /* An observation where the law has probability 0 is a certain bias. */
    double prob0[3] = {0.5, 0.5, 0.0}, obs0[3] = {50, 49, 1};
    sd_chisq_test(obs0, prob0, 3, 5.0, &r);
    cr_assert_eq(r.zero_hits, 1.0);
    cr_assert_eq(r.p_value, 0.0);
}

/* Two cells, computed by hand: observed (6, 2) against (1/2, 1/2), n = 8,
 * expected 4 each: chi2 = 2²/4 + 2²/4 = 2 on 1 degree of freedom, whose
 * upper tail is P(Z² > 2) = erfc(1); the largest deviation |6/8 - 1/2| =
 * 1/4 (binary fractions: exact). */
Test(stats, chisq_two_cells_by_hand)
{
    double prob[2] = {0.5, 0.5}, obs[2] = {6, 2};
    sd_chisq r;
    sd_chisq_test(obs, prob, 2, 1.0, &r);
    cr_expect_eq(r.cells_tested, 2u);
    cr_expect_eq(r.dof, 1.0);
    cr_expect_eq(r.chi2, 2.0);
    cr_expect(fabs(r.p_value - erfc(1.0)) < 1e-14, "%.17g", r.p_value);
    cr_expect_eq(r.max_abs_dev, 0.25);
    cr_expect_eq(r.zero_hits, 0.0);
}
