/* test_kernel_block.c — block verification's fast kernel
 * (sims/kernels/kernel_block.c): suite kernel_block.
 *
 * The kernel has block verification's law with other random numbers, so
 * its means are compared with the generic (mechanistic) path's in
 * standard errors: |kernel - generic| < 4 sqrt(se_k² + se_g²), which a
 * correct kernel fails with probability ~6e-5 per comparison (fixed seeds:
 * the outcome is deterministic).  The joint law itself is checked by
 * `check` (the engine runs the kernel there too), which must pass block
 * and flag the control broken-block-kernel (residual with π = 1). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

extern const sd_verifier_type sd_verifier_block;
extern const sd_verifier_type sd_verifier_broken_block_kernel;

static void S_close(const sd_welford *a, const sd_welford *b, const char *what, size_t cs)
{
    double se = sqrt(pow(sd_welford_stderr(a), 2) + pow(sd_welford_stderr(b), 2));
    cr_expect(fabs(a->mean - b->mean) <= 4.0 * se, "case %zu %s: kernel %.6f generic %.6f (4 se = %.2g)", cs, what,
              a->mean, b->mean, 4.0 * se);
}

Test(kernel_block, means_agree_with_the_generic_path)
{
    sd_chain *c1 = tu_chain(7, 40, 3), *c2 = tu_chain(5, 12, 8), *cz = tu_zero_chain(4, 10, 7);
    cr_assert(c1 && c2 && cz);
    const struct {
        const sd_chain *c;
        size_t gamma;
    } cases[] = {{c1, 4}, {c1, 0}, {c2, 3}, {cz, 2}, {cz, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sd_params par;
        sd_params_defaults(&par, &sd_verifier_block);
        par.gamma = cases[i].gamma;
        sd_sim_opts so = {.seed = 70 + i, .trials = 40000, .want_rb = 1};
        sd_sim_result k, g;
        cr_assert_eq(sd_sim_run(&sd_verifier_block, cases[i].c, &par, &so, &k, NULL), SD_OK);
        so.generic = 1;
        so.seed = 80 + i;
        cr_assert_eq(sd_sim_run(&sd_verifier_block, cases[i].c, &par, &so, &g, NULL), SD_OK);
        cr_assert_str_eq(k.kernel, "block-sorted");
        cr_assert_str_eq(g.kernel, "generic");
        S_close(&k.rejections, &g.rejections, "rejections", i);
        S_close(&k.target_calls, &g.target_calls, "target calls", i);
        S_close(&k.accepted, &g.accepted, "accepted per iteration", i);
        /* the kernel's Rao-Blackwellised rejections (1 - p_G per iteration) */
        cr_assert(sd_sim_has_rb(&k));
        S_close(&k.rejections_rb, &g.rejections, "rb rejections vs plain", i);
        sd_sim_result_free(&k);
        sd_sim_result_free(&g);
    }
    sd_chain_free(c1);
    sd_chain_free(c2);
    sd_chain_free(cz);
}

/* The first-iteration stop rule (lp --compare): the engine hands it to
 * the kernel (sd_observe.first_iteration), which stops after one
 * iteration; its mean accepted length is the generic path's. */
Test(kernel_block, first_iteration_agrees_with_the_generic_path)
{
    sd_chain *c = tu_chain(5, 4, 10);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, &sd_verifier_block);
    par.gamma = 3;
    sd_sim_opts so = {.seed = 21, .trials = 60000, .stop = {.first_iteration = 1}};
    sd_sim_result k, g;
    cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &k, NULL), SD_OK);
    so.generic = 1;
    so.seed = 22;
    cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &g, NULL), SD_OK);
    cr_assert_str_eq(k.kernel, "block-sorted");
    cr_expect_eq(k.iterations, (double)so.trials);
    S_close(&k.accepted, &g.accepted, "first iteration: accepted", 0);
    S_close(&k.rejections, &g.rejections, "first iteration: rejections", 0);
    sd_sim_result_free(&k);
    sd_sim_result_free(&g);
    sd_chain_free(c);
}

Test(kernel_block, bit_identical_across_threads)
{
    sd_chain *c = tu_chain(6, 15, 4);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, &sd_verifier_block);
    par.gamma = 3;
    sd_sim_opts so = {.seed = 9, .trials = 2 * SD_SIM_BLOCK + 101, .threads = 1, .want_positions = 1,
                      .want_rb = 1};
    sd_sim_result a, b;
    cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &a, NULL), SD_OK);
    cr_assert_str_eq(a.kernel, "block-sorted");
    so.threads = 2;
    cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &b, NULL), SD_OK);
    cr_expect_eq(memcmp(&a.rejections, &b.rejections, sizeof a.rejections), 0);
    cr_expect_eq(memcmp(&a.target_calls, &b.target_calls, sizeof a.target_calls), 0);
    cr_expect_eq(memcmp(&a.accepted, &b.accepted, sizeof a.accepted), 0);
    cr_expect_eq(memcmp(&a.rejections_rb, &b.rejections_rb, sizeof a.rejections_rb), 0);
    cr_expect_eq(memcmp(a.accept_hist, b.accept_hist, (a.T + 1) * sizeof *a.accept_hist), 0);
    cr_expect_eq(memcmp(a.pos_counts, b.pos_counts, a.T * a.V * sizeof *a.pos_counts), 0);
    sd_sim_result_free(&a);
    sd_sim_result_free(&b);
    sd_chain_free(c);
}

/* check runs the kernel: block passes on several chains, the control with
 * the π = 1 residual is flagged (alpha 1e-3; fixed seeds). */
Test(kernel_block, check_passes_block_and_flags_the_broken_kernel)
{
    sd_chain *cs[3] = {tu_chain(7, 20, 1), tu_chain(5, 8, 2), tu_zero_chain(4, 6, 3)};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_not_null(cs[i]);
        for (int broken = 0; broken < 2; broken++) {
            const sd_verifier_type *vt = broken ? &sd_verifier_broken_block_kernel : &sd_verifier_block;
            sd_params par;
            sd_params_defaults(&par, vt);
            par.gamma = i == 1 ? 3 : 0;
            sd_check_opts o;
            sd_check_defaults(&o);
            o.seed = 300 + i;
            o.trials = 400000; /* power: on chain 1 at gamma 3 the pi = 1 residual's bias is small (p-value 4e-3 at 100000 trials) */
            o.L = 2;
            sd_check_result r;
            sd_error err;
            cr_assert_eq(sd_check_run(vt, cs[i], &par, &o, &r, &err), SD_OK, "%s", err.msg);
            cr_expect_str_eq(r.kernel, broken ? "block-sorted-broken" : "block-sorted");
            cr_expect_eq(r.unbiased, !broken, "chain %zu %s: p-value %.3g", i, vt->name, r.chi.p_value);
            sd_check_result_free(&r);
        }
        sd_chain_free(cs[i]);
    }
}

/* The AVX-512 passes (drafting steps, last tokens) do the scalar code's
 * arithmetic: with the vector paths switched off (sd_rngbuf_cap_isa(0):
 * scalar Philox too) every statistic is the same bits.  Rows of 5 (j* by
 * counting in both), 20 (scalar binary search, vector count) and 70
 * (binary search by gathers) tokens; gamma 3, the horizon, and a chain
 * with exact zeros (p_i = 0 stops drafting); group tails (trials not a
 * multiple of 8 or of the group). */
Test(kernel_block, vector_passes_equal_the_scalar_code)
{
    sd_chain *cs[4] = {tu_chain(5, 12, 31), tu_chain(20, 9, 32), tu_chain(70, 6, 33), tu_zero_chain(6, 10, 34)};
    const size_t gammas[2] = {3, 0};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_not_null(cs[i]);
        for (size_t g = 0; g < 2; g++) {
            sd_params par;
            sd_params_defaults(&par, &sd_verifier_block);
            par.gamma = gammas[g];
            sd_sim_opts so = {.seed = 90 + i, .trials = 3001, .threads = 1, .want_positions = 1, .want_rb = 1};
            char what[64];
            snprintf(what, sizeof what, "chain %zu gamma %zu", i, gammas[g]);
            tu_same_sim_scalar(&sd_verifier_block, cs[i], &par, &so, "block-sorted", what);
        }
        sd_chain_free(cs[i]);
    }
}

/* The statistics' contract: the kernel merges each lockstep group of trials
 * into the observers once per statistic, from exact integer sums
 * (sd_welford_merge_sums), not trial by trial.  A run of fewer trials than
 * one group (and one engine block) is one such merge into empty
 * accumulators, so the result is reproduced bit for bit from integers:
 * accepted per iteration from the histogram of accepted drafts (its count,
 * Σ a h_a, Σ a² h_a), target calls' mean as Σ h_a / n (each iteration is
 * one call), and rejections and target calls from the integers n·mean and
 * m2 + (n·mean)²/n that their mean and m2 must encode.  (Welford additions
 * trial by trial would give other last bits.) */
Test(kernel_block, statistics_are_exact_group_sums)
{
    sd_chain *c = tu_chain(7, 30, 6);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, &sd_verifier_block);
    par.gamma = 4;
    sd_sim_opts so = {.seed = 12, .trials = 200, .threads = 1};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &r, NULL), SD_OK);
    cr_assert_str_eq(r.kernel, "block-sorted");
    uint64_t k = 0, s1 = 0, s2 = 0;
    for (uint64_t a = 0; a <= r.T; a++) {
        uint64_t h = (uint64_t)r.accept_hist[a];
        cr_assert_eq((double)h, r.accept_hist[a]);
        k += h;
        s1 += a * h;
        s2 += a * a * h;
    }
    sd_welford acc = {0, 0, 0};
    sd_welford_merge_sums(&acc, k, s1, s2);
    cr_expect_eq(memcmp(&acc, &r.accepted, sizeof acc), 0, "accepted: %.17g %.17g vs %.17g %.17g", acc.mean,
                 acc.m2, r.accepted.mean, r.accepted.m2);
    cr_expect_eq(r.target_calls.mean, (double)k / (double)so.trials);
    const sd_welford *ws[2] = {&r.rejections, &r.target_calls};
    for (int i = 0; i < 2; i++) {
        double n = ws[i]->n, t1 = nearbyint(ws[i]->mean * n), t2 = nearbyint(ws[i]->m2 + t1 * t1 / n);
        sd_welford ref = {0, 0, 0};
        sd_welford_merge_sums(&ref, (uint64_t)n, (uint64_t)t1, (uint64_t)t2);
        cr_expect_eq(memcmp(&ref, ws[i], sizeof ref), 0, "statistic %d: %.17g %.17g vs %.17g %.17g", i, ref.mean,
                     ref.m2, ws[i]->mean, ws[i]->m2);
    }
    sd_sim_result_free(&r);
    sd_chain_free(c);
}
