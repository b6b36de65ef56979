/* test_kernel_greedy.c — greedy block verification's fast kernel
 * (sims/kernels/kernel_greedy.c): suite kernel_greedy.
 *
 * The kernel has greedy-block's law with other random numbers, so its
 * means are compared with the exact enumeration (sims/exact/greedy_exact.c, what
 * `eval generation` prints) in standard errors: |kernel - exact| < 4 se,
 * which a correct kernel fails with probability ~6e-5 per comparison
 * (fixed seeds: the outcome is deterministic, and a failure is a finding).
 * Where no enumeration is affordable (rows long enough for the binary
 * searches) the generic step is the reference: 4 sqrt(se_k² + se_g²).
 * The joint law itself is checked by `check` (the engine runs the kernel
 * there too), which must pass greedy-block and flag the control
 * broken-greedy-kernel (no eq. 31 modification). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../sims/verifiers/sd_greedy.h"
#include "../sims/engine/sd_check.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_rngbuf.h"
#include "test_exact_util.h"
#include "test_util.h"

extern const sd_verifier_type sd_verifier_greedy_block;
extern const sd_verifier_type sd_verifier_broken_greedy_kernel;

static sd_params S_par(const sd_verifier_type *vt, size_t gamma)
{
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    return par;
}

static void S_near(const sd_welford *w, double exact, const char *what, const char *name, size_t cs)
{
    double se = sd_welford_stderr(w);
    cr_expect(fabs(w->mean - exact) < 4.0 * se + 1e-12, "%s, case %zu: %s %.6f vs exact %.6f (4 se = %.2g)", name,
              cs, what, w->mean, exact, 4.0 * se);
}

/* Rejections and target calls of the kernel against the exact enumeration,
 * on generated chains (V = 4, T = 10, gamma 4 and V = 7, T = 9, gamma 2, as
 * `eval generation` computes them), chains with exact zeros in p and q
 * (the draft never proposes some tokens, the target never wants others:
 * p_i = 0 stops drafting, residual tokens with p = 0) and lookahead to the
 * horizon (gamma 0, modifications nested up to T - 1 deep).  The control's
 * kernel runs Alg. 4 alone: its means are those of that reading's exact
 * values (its exact slot), not greedy-block's. */
Test(kernel_greedy, means_match_the_exact_enumeration)
{
    sd_chain *cs[5] = {tu_chain(4, 10, 3), tu_chain(7, 9, 4), tu_zero_chain(4, 8, 5),
                       tx_random_chain(3, 7, 0, 0.25, 5), tu_chain(3, 6, 6)};
    const size_t gammas[5] = {4, 2, 3, 4, 0};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_not_null(cs[i]);
        for (int broken = 0; broken < 2; broken++) {
            const sd_verifier_type *vt = broken ? &sd_verifier_broken_greedy_kernel : &sd_verifier_greedy_block;
            sd_params par = S_par(vt, gammas[i]);
            sd_model m = sd_model_of_chain(cs[i]);
            sd_exact_values ex;
            sd_error err;
            cr_assert_eq(sd_verifier_exact(vt, &m, &par, &ex, &err), SD_OK, "%s: %s", vt->name, err.msg);
            sd_sim_opts so = {.seed = 60 + i, .trials = 40000};
            sd_sim_result r;
            cr_assert_eq(sd_sim_run(vt, cs[i], &par, &so, &r, &err), SD_OK, "%s", err.msg);
            cr_assert_str_eq(r.kernel, broken ? "greedy-sorted-broken" : "greedy-sorted");
            S_near(&r.rejections, ex.rejections, "rejections", vt->name, i);
            S_near(&r.target_calls, ex.target_calls, "target calls", vt->name, i);
            sd_sim_result_free(&r);
        }
        sd_chain_free(cs[i]);
    }
}

/* The first-iteration stop rule (lp --compare): the kernel stops after one
 * iteration, whose mean accepted length is the enumeration's E[τ]
 * (Lemma 9's full-information optimum for greedy-block). */
Test(kernel_greedy, first_iteration_matches_the_exact_value)
{
    sd_chain *c = tu_chain(5, 6, 10);
    cr_assert_not_null(c);
    sd_params par = S_par(&sd_verifier_greedy_block, 3);
    sd_greedy_exact_result ex;
    sd_error err;
    cr_assert_eq(sd_greedy_exact(c, &par, SD_GREEDY_JOINT, &ex, &err), SD_OK, "%s", err.msg);
    sd_sim_opts so = {.seed = 21, .trials = 60000, .stop = {.first_iteration = 1}};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(&sd_verifier_greedy_block, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
    cr_assert_str_eq(r.kernel, "greedy-sorted");
    cr_expect_eq(r.iterations, (double)so.trials);
    S_near(&r.accepted, ex.first_accepted, "first iteration: accepted", "greedy-block", 0);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

/* Rows longer than the kernel's counting (V = 20: j* by binary search) have
 * no affordable enumeration: the generic step is the reference there. */
Test(kernel_greedy, long_rows_agree_with_the_generic_step)
{
    sd_chain *c = tu_chain(20, 12, 11);
    cr_assert_not_null(c);
    sd_params par = S_par(&sd_verifier_greedy_block, 3);
    sd_sim_opts so = {.seed = 31, .trials = 40000};
    sd_sim_result k, g;
    cr_assert_eq(sd_sim_run(&sd_verifier_greedy_block, c, &par, &so, &k, NULL), SD_OK);
    so.generic = 1;
    so.seed = 32;
    cr_assert_eq(sd_sim_run(&sd_verifier_greedy_block, c, &par, &so, &g, NULL), SD_OK);
    cr_assert_str_eq(k.kernel, "greedy-sorted");
    cr_assert_str_eq(g.kernel, "generic");
    const sd_welford *kw[3] = {&k.rejections, &k.target_calls, &k.accepted};
    const sd_welford *gw[3] = {&g.rejections, &g.target_calls, &g.accepted};
    const char *what[3] = {"rejections", "target calls", "accepted per iteration"};
    for (size_t i = 0; i < 3; i++) {
        double se = sqrt(pow(sd_welford_stderr(kw[i]), 2) + pow(sd_welford_stderr(gw[i]), 2));
        cr_expect(fabs(kw[i]->mean - gw[i]->mean) <= 4.0 * se, "%s: kernel %.6f generic %.6f (4 se = %.2g)",
                  what[i], kw[i]->mean, gw[i]->mean, 4.0 * se);
    }
    sd_sim_result_free(&k);
    sd_sim_result_free(&g);
    sd_chain_free(c);
}

/* check runs the kernel: greedy-block passes on several chains (zeros in p
 * and q included, nested modifications at gamma 3 and at the horizon), the
 * control without the modification is flagged (alpha 1e-3; fixed seeds). */
Test(kernel_greedy, check_passes_greedy_block_and_flags_the_broken_kernel)
{
    sd_chain *cs[3] = {tu_chain(4, 6, 1), tu_zero_chain(4, 6, 3), tx_random_chain(3, 7, 0, 0.25, 5)};
    const size_t gammas[3] = {3, 0, 4};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_not_null(cs[i]);
        for (int broken = 0; broken < 2; broken++) {
            const sd_verifier_type *vt = broken ? &sd_verifier_broken_greedy_kernel : &sd_verifier_greedy_block;
            sd_params par = S_par(vt, gammas[i]);
            sd_check_opts o;
            sd_check_defaults(&o);
            o.seed = 400 + i;
            o.trials = 200000;
            o.L = 3;
            sd_check_result r;
            sd_error err;
            cr_assert_eq(sd_check_run(vt, cs[i], &par, &o, &r, &err), SD_OK, "%s", err.msg);
            cr_expect_str_eq(r.kernel, broken ? "greedy-sorted-broken" : "greedy-sorted");
            cr_expect_eq(r.unbiased, !broken, "chain %zu %s: p-value %.3g", i, vt->name, r.chi.p_value);
            cr_expect_eq(r.chi.zero_hits, 0.0, "chain %zu %s: tokens of target probability 0", i, vt->name);
            sd_check_result_free(&r);
        }
        sd_chain_free(cs[i]);
    }
}

/* The same bits on 1, 2 and 3 threads (more trials than one engine block,
 * a tail not a multiple of the kernel's group). */
Test(kernel_greedy, bit_identical_across_threads)
{
    sd_chain *c = tu_chain(6, 15, 4);
    cr_assert_not_null(c);
    sd_params par = S_par(&sd_verifier_greedy_block, 3);
    sd_sim_opts so = {.seed = 9, .trials = 2 * SD_SIM_BLOCK + 101, .threads = 1, .want_positions = 1};
    sd_sim_result a, b;
    cr_assert_eq(sd_sim_run(&sd_verifier_greedy_block, c, &par, &so, &a, NULL), SD_OK);
    cr_assert_str_eq(a.kernel, "greedy-sorted");
    for (unsigned th = 2; th <= 3; th++) {
        so.threads = th;
        cr_assert_eq(sd_sim_run(&sd_verifier_greedy_block, c, &par, &so, &b, NULL), SD_OK);
        tu_same_sim(&a, &b, th == 2 ? "2 threads" : "3 threads");
        sd_sim_result_free(&b);
    }
    sd_sim_result_free(&a);
    sd_chain_free(c);
}

/* The AVX-512 instances (passes over eight places at a time, counts and the
 * last token's draw among at most 8 tokens as one vector comparison each;
 * one instance for rows of at most 8 tokens, one for the others)
 * and the uniforms across trials do the scalar code's arithmetic: with the
 * vector paths switched off (sd_rngbuf_cap_isa(0): scalar Philox too)
 * every statistic is the same bits.  Rows of 5 and 6 (one vector), 12
 * (counted by the scalar loop either way) and 20 tokens (binary search);
 * gamma 3 and the horizon; a chain with exact zeros; at the horizon of
 * T = 12 and T = 40, up to 10 and 20 frames active at once. */
Test(kernel_greedy, vector_instance_equals_the_scalar_code)
{
    sd_chain *cs[5] = {tu_chain(5, 12, 31), tu_chain(12, 8, 32), tu_chain(20, 6, 33), tu_zero_chain(6, 10, 34),
                       tu_chain(3, 40, 35)};
    const size_t gammas[2] = {3, 0};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_not_null(cs[i]);
        for (size_t g = 0; g < 2; g++) {
            sd_params par = S_par(&sd_verifier_greedy_block, gammas[g]);
            sd_sim_opts so = {.seed = 90 + i, .trials = 3001, .threads = 1, .want_positions = 1};
            char what[64];
            snprintf(what, sizeof what, "scalar against vector: chain %zu gamma %zu", i, gammas[g]);
            tu_same_sim_scalar(&sd_verifier_greedy_block, cs[i], &par, &so, "greedy-sorted", what);
        }
        sd_chain_free(cs[i]);
    }
}

/* The tokens the kernel hands out (run --samples) are the ones it counts:
 * with want_tokens = T, the positions tallied from them are pos_counts. */
Test(kernel_greedy, tokens_are_the_counted_positions)
{
    sd_chain *c = tu_chain(4, 9, 12);
    cr_assert_not_null(c);
    sd_params par = S_par(&sd_verifier_greedy_block, 4);
    sd_sim_opts so = {.seed = 5, .trials = 5000, .want_positions = 1, .want_tokens = 9};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(&sd_verifier_greedy_block, c, &par, &so, &r, NULL), SD_OK);
    cr_assert_str_eq(r.kernel, "greedy-sorted");
    double *pos = calloc(9 * 4, sizeof *pos);
    cr_assert_not_null(pos);
    for (size_t t = 0; t < so.trials; t++)
        for (size_t n = 0; n < 9; n++) {
            uint32_t x = r.tokens[t * 9 + n];
            cr_assert_lt(x, 4u);
            pos[n * 4 + x] += 1.0;
        }
    cr_expect_eq(memcmp(pos, r.pos_counts, 9 * 4 * sizeof *pos), 0);
    free(pos);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}
