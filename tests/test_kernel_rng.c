/* test_kernel_rng.c — the lockstep token kernel's random numbers are the
 * sd_stream exactly; suite kernel_rng. */
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

/* === the lockstep alias-table token kernel ============================ */

/* --- its random numbers ------------------------------------------------------ */

/* Uniforms 2·blk and 2·blk+1 of sd_stream(seed, t). */
static void S_stream_pair(uint64_t seed, uint64_t t, uint64_t blk, double *u0, double *u1)
{
    sd_stream s;
    sd_stream_init(&s, seed, t);
    s.ctr.v[0] = (uint32_t)blk;
    s.ctr.v[1] = (uint32_t)(blk >> 32);
    *u0 = sd_stream_uniform(&s);
    *u1 = sd_stream_uniform(&s);
}

Test(kernel_rng, trials_are_the_sd_stream)
{
    /* Every lane count (AVX-512 sixteens, AVX2 eights, scalar tail), trial
     * counters crossing 2^32 and Philox blocks with the high word set:
     * uniforms 2·blk and 2·blk+1 of sd_stream(seed, t0+i), bit for bit. */
    const uint64_t seeds[] = {1, 0xFEDCBA9876543210ull};
    const uint64_t t0s[] = {0, 5, 0xFFFFFFFFull - 20};
    const uint64_t blks[] = {0, 1, 7, 0x100000003ull};
    const size_t ns[] = {1, 7, 8, 15, 16, 17, 41, 71};
    uint64_t ev[80], od[80];
    /* isa: every vector path the processor has, then AVX2 and scalar
     * forced (sd_rngbuf_cap_isa) */
    for (int isa = 2; isa >= 0; isa--) {
        sd_rngbuf_cap_isa(isa);
        for (size_t a = 0; a < 2; a++)
            for (size_t b = 0; b < 3; b++)
                for (size_t k = 0; k < 4; k++)
                    for (size_t m = 0; m < 8; m++) {
                        sd_rngbuf_trials(seeds[a], blks[k], t0s[b], ns[m], ev, od);
                        for (size_t i = 0; i < ns[m]; i++) {
                            double u0, u1;
                            S_stream_pair(seeds[a], t0s[b] + i, blks[k], &u0, &u1);
                            cr_assert_eq((double)ev[i] * 0x1p-53, u0, "isa %d seed %zu t0 %zu blk %zu n %zu lane %zu",
                                         isa, a, b, k, ns[m], i);
                            cr_assert_eq((double)od[i] * 0x1p-53, u1, "isa %d seed %zu t0 %zu blk %zu n %zu lane %zu",
                                         isa, a, b, k, ns[m], i);
                        }
                    }
    }
    sd_rngbuf_cap_isa(-1);
}

/* sd_rngbuf_trials_hi: words 4·blk..4·blk+3 of sd_stream(seed, t0+i), times
 * 2^21, on every lane path (AVX-512 32s and 8s, AVX2 8s, scalar tail); and
 * sd_rngbuf_trials_hi_at for trials named by index (the block kernel's
 * active lists), in any order, with repeats. */
Test(kernel_rng, trials_hi_are_the_sd_stream_words)
{
    const uint64_t t0s[] = {0, 0xFFFFFFFFull - 40}, blks[] = {0, 3, 0x100000001ull};
    const size_t ns[] = {1, 9, 40, 71};
    uint32_t idx[71];
    for (size_t i = 0; i < 71; i++)
        idx[i] = (uint32_t)((i * 37 + 11) % 64); /* a permutation-like order with repeats */
    uint64_t buf[4][80];
    uint64_t *const w[4] = {buf[0], buf[1], buf[2], buf[3]};
    for (int at = 0; at < 2; at++) { /* sd_rngbuf_trials_hi, then _hi_at */
        for (int isa = 2; isa >= 0; isa--) {
            sd_rngbuf_cap_isa(isa);
            for (size_t b = 0; b < 2; b++)
                for (size_t k = 0; k < 3; k++)
                    for (size_t m = 0; m < 4; m++) {
                        if (at)
                            sd_rngbuf_trials_hi_at(0xFEDCBA9876543210ull, blks[k], t0s[b], idx, ns[m], w);
                        else
                            sd_rngbuf_trials_hi(0xFEDCBA9876543210ull, blks[k], t0s[b], ns[m], w);
                        for (size_t i = 0; i < ns[m]; i++) {
                            sd_stream st;
                            sd_stream_init(&st, 0xFEDCBA9876543210ull, t0s[b] + (at ? idx[i] : i));
                            st.ctr.v[0] = (uint32_t)blks[k];
                            st.ctr.v[1] = (uint32_t)(blks[k] >> 32);
                            for (int r = 0; r < 4; r++)
                                cr_assert_eq(w[r][i], (uint64_t)sd_stream_u32(&st) << 21,
                                             "at %d isa %d t0 %zu blk %zu n %zu lane %zu word %d", at, isa, b, k, ns[m],
                                             i, r);
                        }
                    }
        }
    }
    sd_rngbuf_cap_isa(-1);
}

/* sd_rngbuf_trials_at: trials named by index (the block kernel's active
 * lists), in any order, with repeats, every lane path. */
Test(kernel_rng, trials_at_are_the_sd_stream)
{
    const uint64_t t0s[] = {0, 0xFFFFFFFFull - 40};
    const uint64_t blks[] = {0, 3, 0x100000003ull};
    uint32_t idx[71];
    for (size_t i = 0; i < 71; i++)
        idx[i] = (uint32_t)((i * 37 + 11) % 64); /* a permutation-like order with repeats */
    uint64_t ev[71], od[71];
    for (int isa = 2; isa >= 0; isa--) {
        sd_rngbuf_cap_isa(isa);
        for (size_t b = 0; b < 2; b++)
            for (size_t k = 0; k < 3; k++)
                for (size_t n = 1; n <= 71; n += 7) {
                    sd_rngbuf_trials_at(0xFEDCBA9876543210ull, blks[k], t0s[b], idx, n, ev, od);
                    for (size_t i = 0; i < n; i++) {
                        double u0, u1;
                        S_stream_pair(0xFEDCBA9876543210ull, t0s[b] + idx[i], blks[k], &u0, &u1);
                        cr_assert_eq((double)ev[i] * 0x1p-53, u0, "isa %d t0 %zu blk %zu n %zu i %zu", isa, b, k, n, i);
                        cr_assert_eq((double)od[i] * 0x1p-53, u1, "isa %d t0 %zu blk %zu n %zu i %zu", isa, b, k, n, i);
                    }
                }
    }
    sd_rngbuf_cap_isa(-1);
}
