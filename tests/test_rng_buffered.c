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
#include <Random123/philox.h>
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

Test(rng_buffered, every_refill_path_is_the_philox_stream)
{
    /* The scalar, AVX2 and AVX-512 refills (sd_rngbuf_cap_isa) against
     * philox4x32 of the counter (block, trial), word by word, with the block
     * counter started just below 2^32 so that its high word changes between
     * refills, and draws mixing single words and uniforms so that pairs of
     * words straddle refills. */
    const uint64_t seeds[] = {0, 0xFFFFFFFFFFFFFFFFull, 12345678901ull};
    /* next_block is a multiple of SD_RNGBUF_BLOCKS (sd_rngbuf.h) */
    const uint64_t starts[] = {0, (1ull << 32) - 4 * SD_RNGBUF_BLOCKS, (1ull << 32) - SD_RNGBUF_BLOCKS};
    for (int isa = 0; isa <= 2; isa++) {
        sd_rngbuf_cap_isa(isa);
        for (size_t s = 0; s < 3; s++)
            for (size_t b0 = 0; b0 < 3; b0++)
                for (uint64_t tr = 0; tr < 3; tr++) {
                    uint64_t trial = tr * 0x100000001ull + tr;
                    sd_rngbuf b;
                    sd_rngbuf_init(&b, seeds[s], trial);
                    b.next_block = starts[b0];
                    philox4x32_key_t key = {{(uint32_t)seeds[s], (uint32_t)(seeds[s] >> 32)}};
                    uint32_t want[4 * 12 * SD_RNGBUF_BLOCKS];
                    for (uint64_t k = 0; k < 12 * SD_RNGBUF_BLOCKS; k++) {
                        uint64_t blk = starts[b0] + k;
                        philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)trial,
                                                 (uint32_t)(trial >> 32)}};
                        philox4x32_ctr_t w = philox4x32(ctr, key);
                        memcpy(want + 4 * k, w.v, sizeof w.v);
                    }
                    size_t i = 0;
                    for (int d = 0; i + 2 <= sizeof want / sizeof *want; d++) {
                        if (d % 7 == 3) {
                            cr_assert_eq(sd_rngbuf_u32(&b), want[i], "isa %d word %zu", isa, i);
                            i++;
                        } else {
                            double u = (double)(((uint64_t)(want[i] >> 5) << 26) | (want[i + 1] >> 6)) * 0x1p-53;
                            cr_assert_eq(sd_rngbuf_uniform(&b), u, "isa %d words %zu s %zu b0 %zu tr %llu", isa, i, s, b0, (unsigned long long)tr);
                            i += 2;
                        }
                    }
                }
    }
    sd_rngbuf_cap_isa(-1);
}
