/* test_rng.c — the counter-based random stream (Philox): known answers, a
 * golden value, and streams that differ by trial and are uniform; suite rng. */
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

/* Golden values recorded from this implementation (2026-11-22). */
#define GOLDEN_U10000 0.09212702603790468

/* --- random stream: known answers -------------------------------------- */

Test(rng, philox_known_answer)
{
    /* Random123's published known-answer vector for Philox4x32-10 with
     * counter 0 and key 0 (kat_vectors): 6627e8d5 e169c58d bc57ac4c 9b00dbd8.
     * sd_stream(seed 0, trial 0) starts at exactly that counter and key. */
    sd_stream s;
    sd_stream_init(&s, 0, 0);
    cr_assert_eq(sd_stream_u32(&s), 0x6627e8d5u);
    cr_assert_eq(sd_stream_u32(&s), 0xe169c58du);
    cr_assert_eq(sd_stream_u32(&s), 0xbc57ac4cu);
    cr_assert_eq(sd_stream_u32(&s), 0x9b00dbd8u);
}

Test(rng, golden_10000th_uniform)
{
    /* Golden value (as GSL's rng/test.c checks the 10000th output): pins the
     * stream layout (key = seed, counter high words = trial) and the 53-bit
     * construction.  Recorded from this implementation; a change here
     * changes every simulated number simdec prints. */
    sd_stream s;
    sd_stream_init(&s, 1, 0);
    double u = 0.0;
    for (int i = 0; i < 10000; i++)
        u = sd_stream_uniform(&s);
    cr_assert_eq(u, GOLDEN_U10000, "10000th uniform %.17g", u);
}

Test(rng, streams_differ_by_trial_and_are_uniform)
{
    /* The mean of 2^16 uniforms is 1/2 within 5 standard errors
     * (se = sqrt(1/12/n)); a stuck or biased stream fails. */
    sd_stream a, b;
    sd_stream_init(&a, 7, 0);
    sd_stream_init(&b, 7, 1);
    cr_assert_neq(sd_stream_u32(&a), sd_stream_u32(&b));
    double s = 0.0, n = 65536.0;
    for (int i = 0; i < 65536; i++) {
        double u = sd_stream_uniform(&a);
        cr_assert(u >= 0.0 && u < 1.0);
        s += u;
    }
    cr_assert(fabs(s / n - 0.5) < 5.0 * sqrt(1.0 / 12.0 / n));
}
