/* test_rng_buffered.c — the vectorised Philox refill (sd_rngbuf) is the
 * sd_stream bit for bit; suite rng_buffered. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_zipf.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

/* --- random streams ------------------------------------------------------ */

Test(rng_buffered, rngbuf_is_the_sd_stream)
{
    /* Same key/counter layout and word order: word for word identical,
     * across refills and for trials with high counter words set. */
    const uint64_t seeds[] = {0, 1, 0xFFFFFFFFFFFFFFFFull, 12345678901ull};
    for (size_t s = 0; s < 4; s++)
        for (uint64_t tr = 0; tr < 6; tr++) {
            uint64_t trial = tr * 0x100000001ull;
            sd_stream a;
            sd_rngbuf b;
            sd_stream_init(&a, seeds[s], trial);
            sd_rngbuf_init(&b, seeds[s], trial);
            for (int i = 0; i < 3; i++)
                cr_assert_eq(sd_stream_u32(&a), sd_rngbuf_u32(&b));
            for (int i = 0; i < 200; i++) /* now at odd word offsets */
                cr_assert_eq(sd_stream_uniform(&a), sd_rngbuf_uniform(&b), "seed %zu trial %llu draw %d", s,
                             (unsigned long long)trial, i);
        }
}
