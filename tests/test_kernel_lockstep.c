/* test_kernel_lockstep.c — the lockstep alias-table token kernel
 * (sims/verifiers/sd_token.h) against its scalar reference bit for bit,
 * and the driver's per-block statistics; suite kernel_lockstep. */
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

/* --- chains ------------------------------------------------------------------ */

/* V = 3, q = 0.99 p + 0.01 fresh: most trials accept every draft. */
static sd_chain *S_near_chain(size_t T)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = 3;
    gp.T = T;
    gp.mix = 0.01;
    sd_chain *c = sd_chain_generate(&gp, NULL);
    cr_assert_not_null(c);
    return c;
}

/* --- lockstep = scalar reference, and the driver's statistics ---------------- */

static sd_token_plan *S_plan(const sd_chain *c, size_t gamma)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    sd_token_plan *plan = NULL;
    sd_error e;
    cr_assert_eq(sd_token_plan_new(c, &par, SD_TOKEN_EXACT, 0, 1, &plan, &e), SD_OK, "%s", e.msg);
    return plan;
}

/* The reference statistics of trials lo..hi-1 of run `seed`, one by one
 * through sd_token_plan_trial (tokens of trial lo + i into tok[i·(T+1)..]
 * when tok is not NULL), merged as sd_token.h promises: per group of
 * sd_token_group(T) trials from lo, the exact integer sums Σx, Σx² of
 * rejections and of iterations, and of the accepted drafts over the group's
 * iterations (from the group's histogram), one sd_welford_merge_sums each;
 * hist += the histograms. */
static void S_reference(const sd_token_plan *plan, size_t T, uint64_t seed, uint64_t lo, uint64_t hi,
                        size_t *tok, sd_welford *rej, sd_welford *calls, sd_welford *acc, double *hist)
{
    const size_t G = sd_token_group(T);
    size_t *row = malloc((T + 1) * sizeof *row);
    double *hg = malloc((T + 1) * sizeof *hg);
    cr_assert(row && hg);
    for (uint64_t g0 = lo; g0 < hi; g0 += G) {
        uint64_t g1 = hi - g0 < G ? hi : g0 + G, r1 = 0, r2 = 0, c1 = 0, c2 = 0, k = 0, s1 = 0, s2 = 0;
        memset(hg, 0, (T + 1) * sizeof *hg);
        for (uint64_t t = g0; t < g1; t++) {
            size_t r, its;
            sd_token_plan_trial(plan, seed, t, tok ? tok + (t - lo) * (T + 1) : row, &r, &its, hg);
            r1 += r;
            r2 += (uint64_t)r * r;
            c1 += its;
            c2 += (uint64_t)its * its;
        }
        for (uint64_t a = 0; a <= T; a++) {
            k += (uint64_t)hg[a];
            s1 += a * (uint64_t)hg[a];
            s2 += a * a * (uint64_t)hg[a];
            hist[a] += hg[a];
        }
        sd_welford_merge_sums(rej, g1 - g0, r1, r2);
        sd_welford_merge_sums(calls, g1 - g0, c1, c2);
        sd_welford_merge_sums(acc, k, s1, s2);
    }
    free(row);
    free(hg);
}

/* Trials lo..hi-1 through the lockstep code and one by one through
 * sd_token_plan_trial: same tokens, and the same Welford bits when the
 * scalar results are merged by the kernel's groups (S_reference). */
static void S_lockstep_vs_scalar(const sd_chain *c, size_t gamma, uint64_t lo, uint64_t hi)
{
    sd_token_plan *plan = S_plan(c, gamma);
    sd_token_work *w = NULL;
    cr_assert_eq(sd_token_work_new(plan, &w, NULL), SD_OK);
    size_t T = c->T, n = (size_t)(hi - lo);
    size_t *tok = malloc(n * (T + 1) * sizeof *tok), *ref = malloc(n * (T + 1) * sizeof *ref);
    double *h1 = calloc(T + 1, sizeof *h1), *h2 = calloc(T + 1, sizeof *h2);
    sd_welford r1, c1, a1, r2, c2, a2;
    sd_welford_init(&r1);
    sd_welford_init(&c1);
    sd_welford_init(&a1);
    sd_welford_init(&r2);
    sd_welford_init(&c2);
    sd_welford_init(&a2);
    sd_observe o = {.rej = &r1, .calls = &c1, .acc = &a1, .hist = h1, .tokens = tok};
    sd_token_plan_run(plan, w, 77, lo, hi, &o);
    S_reference(plan, T, 77, lo, hi, ref, &r2, &c2, &a2, h2);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(memcmp(ref + i * (T + 1), tok + i * (T + 1), (T + 1) * sizeof *ref), 0,
                     "V=%zu T=%zu gamma %zu trial %llu: tokens differ", c->V, T, gamma,
                     (unsigned long long)(lo + i));
    cr_assert_eq(memcmp(&r1, &r2, sizeof r1), 0, "V=%zu gamma %zu: rejections", c->V, gamma);
    cr_assert_eq(memcmp(&c1, &c2, sizeof c1), 0, "V=%zu gamma %zu: calls", c->V, gamma);
    cr_assert_eq(memcmp(&a1, &a2, sizeof a1), 0, "V=%zu gamma %zu: accepted", c->V, gamma);
    cr_assert_eq(memcmp(h1, h2, (T + 1) * sizeof *h1), 0, "V=%zu gamma %zu: histogram", c->V, gamma);
    /* Statistics only (nothing observed per position, the histogram kept in
     * integers per group): the same bits. */
    sd_welford r3, c3, a3;
    sd_welford_init(&r3);
    sd_welford_init(&c3);
    sd_welford_init(&a3);
    double *h3 = calloc(T + 1, sizeof *h3);
    sd_observe o3 = {.rej = &r3, .calls = &c3, .acc = &a3, .hist = h3};
    sd_token_plan_run(plan, w, 77, lo, hi, &o3);
    cr_assert_eq(memcmp(&r1, &r3, sizeof r1), 0, "V=%zu gamma %zu: rejections (stats only)", c->V, gamma);
    cr_assert_eq(memcmp(&c1, &c3, sizeof c1), 0, "V=%zu gamma %zu: calls (stats only)", c->V, gamma);
    cr_assert_eq(memcmp(&a1, &a3, sizeof a1), 0, "V=%zu gamma %zu: accepted (stats only)", c->V, gamma);
    cr_assert_eq(memcmp(h1, h3, (T + 1) * sizeof *h1), 0, "V=%zu gamma %zu: histogram (stats only)", c->V, gamma);
    free(h3);
    free(tok);
    free(ref);
    free(h1);
    free(h2);
    sd_token_work_free(w);
    sd_token_plan_free(plan);
}

/* The kernels draw with a uniform's 32 high bits and compute its 21 low
 * bits (sd_token_low21) only where the high bits leave the alias test
 * open, which random uniforms do with probability <= 2^-(32-lgK): too
 * rarely to be seen in a run.  Here the high bits are chosen to leave it
 * open: for every column k of rows of random weights, hi puts U mod C
 * just below thr (f_w = the multiple of 2^21 below thr), so that the
 * outcome is k iff L < thr - f_w.  The scalar (sd_token_draw_hi) and the
 * eight-lane (sd_token_position) draws must both give the outcome of the
 * whole uniform hi + L, and both outcomes must occur. */
Test(kernel_lockstep, low_bits_decide_open_draws_exactly)
{
    const unsigned lgK = 3; /* V = 4: 8 outcomes, 8 columns */
    const size_t V = 4, K = (size_t)1 << lgK, S = 64;
    const unsigned sh = 53 - lgK;
    uint64_t tab[4 * 8], hi[64], ends[64];
    double tv[4] = {0};
    uint32_t prev[64], rej[64], jv[64];
    size_t by_low[2] = {0, 0};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    for (int isa = 2; isa >= 0; isa -= 2) {
        sd_rngbuf_cap_isa(isa);
        for (int rep = 0; rep < 40; rep++) {
            for (size_t a = 0; a < V; a++) {
                double w[8];
                for (size_t o = 0; o < 2 * V; o++)
                    w[o] = gsl_rng_uniform_pos(r);
                sd_error e;
                cr_assert_eq(sd_token_alias_build(w, 2 * V, lgK, tab + a * K, &e), SD_OK, "%s", e.msg);
            }
            const uint64_t seed = 11 + (uint64_t)rep, t0 = 1000 * (uint64_t)rep;
            const size_t n = 1 + (size_t)rep % 7;
            for (size_t i = 0; i < S; i++) {
                size_t a = i % V, k = (i / V) % K;
                uint64_t thr = tab[a * K + k] >> lgK;
                uint64_t fw = thr ? (thr - 1) & ~(((uint64_t)1 << 21) - 1) : 0;
                hi[i] = ((uint64_t)k << sh) | fw;
                prev[i] = (uint32_t)a;
                rej[i] = jv[i] = 0;
                ends[i] = 0;
            }
            uint32_t want[64];
            for (size_t i = 0; i < S; i++) {
                uint64_t L = sd_token_low21(seed, t0 + i, n);
                size_t o = sd_token_alias_draw(tab + prev[i] * K, lgK, hi[i] | L);
                size_t o0 = sd_token_alias_draw(tab + prev[i] * K, lgK, hi[i]);
                by_low[o != o0]++;
                want[i] = (uint32_t)o;
                cr_assert_eq(sd_token_draw_hi(tab + prev[i] * K, lgK, hi[i], seed, t0 + i, n), o,
                             "isa %d rep %d trial %zu: scalar draw", isa, rep, i);
            }
            sd_token_position(tab, tv, lgK, 0, S, hi, prev, rej, jv, NULL, ends, 5, seed, t0, n);
            for (size_t i = 0; i < S; i++) {
                cr_assert_eq(prev[i], want[i] >> 1, "isa %d rep %d trial %zu: lockstep draw", isa, rep, i);
                cr_assert_eq(rej[i], want[i] & 1);
                cr_assert_eq(ends[i], (uint64_t)(want[i] & 1) << 5);
            }
        }
    }
    sd_rngbuf_cap_isa(-1);
    gsl_rng_free(r);
    /* both outcomes came from the low bits (the test would pass with them
     * ignored otherwise) */
    cr_assert_gt(by_low[1], 100, "draws decided by the low bits: %zu of %zu", by_low[1], by_low[0] + by_low[1]);
}

Test(kernel_lockstep, lockstep_equals_scalar_reference)
{
    /* Groups of 1024 trials with a ragged tail (lo = 5), horizons across a
     * 64-bit word of end bits (T = 70) and at the vector replay's bound
     * (T = 62, an end at T + 1 in bit 63; 63 replays scalar), sparse rows,
     * exact zeros, a homogeneous chain, gamma 0, 1, 3, T-1 (a bonus at T)
     * and >= T; at T = 62, 63 q close to p (mix 0.01: runs of accepts to
     * the horizon). */
    sd_chain *c62 = S_near_chain(62), *c63 = S_near_chain(63);
    sd_chain *c7 = tu_chain_alpha(7, 70, 10, 1.0), *c37 = tu_chain_alpha(37, 20, 3, 0.05), *c300 = tu_chain_alpha(300, 4, 4, 1.0);
    sd_chain *cz = tu_zero3_chain();
    double p[4] = {0.1, 0.2, 0.3, 0.4}, q[4] = {0.4, 0.0, 0.3, 0.3};
    sd_chain *ch = sd_chain_from_pq(p, q, 4, 12, NULL);
    cr_assert_not_null(ch);
    /* isa: the vector paths the processor has (the replay's eight-lane
     * popcounts at T <= 62), then all scalar (sd_rngbuf_cap_isa); trust:
     * the uniforms' low bits computed only where a draw's 32 high bits
     * leave it open (at most 2^-(32-lgK) of the draws, never seen here),
     * then wherever the top 6 bits do (most draws): the same tokens as the
     * reference's whole uniforms either way. */
    for (int k = 0; k < 4; k++) {
        int isa = k % 2 ? 0 : 2;
        sd_rngbuf_cap_isa(isa);
        sd_token_test_trust_bits(k < 2 ? 32 : 6);
        S_lockstep_vs_scalar(c7, 0, 5, 2105);
        S_lockstep_vs_scalar(c7, 3, 5, 1500);
        S_lockstep_vs_scalar(c7, 69, 0, 300);
        S_lockstep_vs_scalar(c37, 0, 1, 600);
        S_lockstep_vs_scalar(c37, 2, 1, 600);
        S_lockstep_vs_scalar(c300, 0, 0, 200);
        S_lockstep_vs_scalar(cz, 0, 0, 500);
        S_lockstep_vs_scalar(cz, 1, 0, 500);
        S_lockstep_vs_scalar(cz, 3, 0, 100);
        S_lockstep_vs_scalar(ch, 0, 3, 700);
        S_lockstep_vs_scalar(ch, 5, 3, 700);
        S_lockstep_vs_scalar(c62, 0, 0, 333);
        S_lockstep_vs_scalar(c62, 61, 0, 333);
        S_lockstep_vs_scalar(c63, 0, 0, 333);
    }
    sd_rngbuf_cap_isa(-1);
    sd_token_test_trust_bits(32);
    sd_chain_free(c62);
    sd_chain_free(c63);
    sd_chain_free(c7);
    sd_chain_free(c37);
    sd_chain_free(c300);
    sd_chain_free(cz);
    sd_chain_free(ch);
}

Test(kernel_lockstep, driver_statistics_are_per_block_in_trial_order)
{
    /* sd_sim_run on the kernel = the scalar reference merged per group
     * within each block (S_reference), blocks merged in order; any thread
     * count. */
    sd_chain *c = tu_chain_alpha(5, 30, 12, 1.0);
    for (size_t gamma = 0; gamma <= 2; gamma += 2) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.gamma = gamma;
        sd_token_plan *plan = S_plan(c, gamma);
        uint64_t trials = 2 * SD_SIM_BLOCK + 77, nb = sd_sim_block_count(trials);
        sd_sim_block *blocks = calloc(nb, sizeof *blocks);
        double *hist = calloc(31, sizeof *hist);
        for (uint64_t b = 0; b < nb; b++) {
            sd_welford_init(&blocks[b].rej);
            sd_welford_init(&blocks[b].calls);
            sd_welford_init(&blocks[b].acc);
            uint64_t hi = (b + 1) * SD_SIM_BLOCK < trials ? (b + 1) * SD_SIM_BLOCK : trials;
            S_reference(plan, 30, 6, b * SD_SIM_BLOCK, hi, NULL, &blocks[b].rej, &blocks[b].calls,
                        &blocks[b].acc, hist);
        }
        sd_sim_result ref, r;
        sd_sim_opts so = {.seed = 6, .trials = trials, .threads = 1};
        sd_model md = sd_model_of_chain(c);
    sd_sim_job job = {&sd_verifier_token, &md, &par};
        cr_assert_eq(sd_sim_result_alloc(&job, &so, &ref, NULL), SD_OK);
        memcpy(ref.accept_hist, hist, 31 * sizeof *hist);
        sd_sim_result_merge(&ref, blocks, nb);
        const unsigned th[] = {1, 2, 7};
        for (size_t k = 0; k < 3; k++) {
            so.threads = th[k];
            cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, NULL), SD_OK);
            cr_assert_str_eq(r.kernel, SD_SIM_KERNEL_TOKEN);
            tu_same_sim(&ref, &r, "kernel vs scalar reference");
            sd_sim_result_free(&r);
        }
        sd_sim_result_free(&ref);
        free(blocks);
        free(hist);
        sd_token_plan_free(plan);
    }
    sd_chain_free(c);
}
