/* test_reductions.c — verifiers that reduce to token verification, against
 * its exact dynamic program (suite reductions).
 *
 * With one draft, or one draft token per iteration, several verifiers are
 * token verification in law, iteration by iteration (same acceptance
 * min(1, q/p), same residual [q-p]+, same bonus token from q):
 *   block and greedy block at gamma = 1   (Sun et al. 2025, Alg. 2 and 4:
 *                                          h_1 = p_1 = min(1, q/p), residual
 *                                          eq. 4 with p_0 = 1),
 *   rrs and spectr with k = 1             (one draft: recursive rejection
 *                                          sampling and OTM-1 / 1-Seq are the
 *                                          standard test, Sun et al. 2023),
 *   batch with M = 1                      (Yin et al. 2024, Alg. 4),
 *   biased at eps = 0, residual opt       (Yin et al. 2024, Thm. 4),
 * so their expected rejections and target calls over a generation are
 * those of sd_exact_token_dp at the same gamma.  SPRINTER with tp = fp = 0
 * sends every token to the target (Zhong et al. 2025, Alg. 1-2): one
 * target call per token (exactly T per generation) and a rejection at
 * position n with probability TV_n(x_{n-1}), x_{n-1} ~ q: in expectation
 * Theorem 1 of Yin et al. 2024.
 *
 * Each Monte-Carlo mean is compared with the exact value to 4 standard
 * errors (fixed seeds; a false alarm has probability 6e-5 per comparison),
 * on a chain without zeros and on one with zeros in p and q. */
#include <criterion/criterion.h>
#include <math.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include "../src/sd_exact.h"
#include "test_util.h"

enum { S_TRIALS = 40000 };

static void S_expect_near(const char *what, const char *algo, const sd_welford *w, double exact)
{
    double se = sd_welford_stderr(w);
    cr_expect(fabs(w->mean - exact) < 4.0 * se, "%s %s: %.6f +- %.6f, exact %.6f (%.1f se)", algo, what,
              w->mean, se, exact, (w->mean - exact) / se);
}

static void S_run(const char *algo, const sd_chain *c, size_t gamma, size_t k, const char *pname,
                  double pval, uint64_t seed, sd_sim_result *res)
{
    const sd_verifier_type *vt = sd_verifier_find(algo);
    cr_assert_not_null(vt, "%s", algo);
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    if (k)
        par.k = k;
    if (pname)
        tu_vpar(&par, vt, pname, pval);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {.seed = seed, .trials = S_TRIALS, .threads = 0};
    sd_error err;
    cr_assert_eq(sd_sim_run_job(&job, &o, res, &err), SD_OK, "%s: %s", algo, err.msg);
}

/* algo (gamma, k, parameter) against token verification at gamma. */
static void S_against_token(const sd_chain *c, const char *algo, size_t gamma, size_t k, const char *pname,
                            double pval, uint64_t seed)
{
    double rej, calls;
    sd_error err;
    cr_assert_eq(sd_exact_token_dp(c, gamma, &rej, &calls, &err), SD_OK, "%s", err.msg);
    sd_sim_result res;
    S_run(algo, c, gamma, k, pname, pval, seed, &res);
    char label[64];
    snprintf(label, sizeof label, "%s gamma %zu k %zu", algo, gamma, k);
    S_expect_near("rejections", label, &res.rejections, rej);
    S_expect_near("target calls", label, &res.target_calls, calls);
    sd_sim_result_free(&res);
}

static void S_all(const sd_chain *c, uint64_t seed)
{
    S_against_token(c, "token", 1, 0, NULL, 0, seed + 1); /* the reference itself */
    S_against_token(c, "block", 1, 0, NULL, 0, seed + 2);
    S_against_token(c, "greedy-block", 1, 0, NULL, 0, seed + 3);
    S_against_token(c, "rrs", 1, 1, NULL, 0, seed + 4);
    S_against_token(c, "rrs", 3, 1, NULL, 0, seed + 5);
    S_against_token(c, "spectr", 3, 1, NULL, 0, seed + 6);
    S_against_token(c, "batch", 0, 1, NULL, 0, seed + 7);
    S_against_token(c, "batch", 2, 1, NULL, 0, seed + 8);
    S_against_token(c, "biased", 2, 0, "eps", 0.0, seed + 9);
}

Test(reductions, one_draft_verifiers_are_token_verification)
{
    sd_chain *c = tu_chain(4, 8, 3);
    cr_assert_not_null(c);
    S_all(c, 100);
    sd_chain_free(c);
}

Test(reductions, one_draft_verifiers_are_token_verification_with_zeros)
{
    sd_chain *c = tu_zero_chain(4, 8, 5);
    cr_assert_not_null(c);
    S_all(c, 200);
    sd_chain_free(c);
}

static void S_sprinter_all_to_target(const sd_chain *c, uint64_t seed)
{
    double rej;
    sd_error err;
    cr_assert_eq(sd_exact_rejections(c, &rej, &err), SD_OK, "%s", err.msg);
    sd_sim_result res;
    const sd_verifier_type *vt = sd_verifier_find("sprinter");
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    tu_vpar(&par, vt, "tp", 0.0);
    tu_vpar(&par, vt, "fp", 0.0);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {.seed = seed, .trials = S_TRIALS, .threads = 0};
    cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    S_expect_near("rejections", "sprinter tp 0 fp 0", &res.rejections, rej);
    /* exactly one call per token: no sampling error */
    cr_expect_eq(res.target_calls.mean, (double)c->T, "%.17g", res.target_calls.mean);
    cr_expect_eq(res.target_calls.m2, 0.0);
    sd_sim_result_free(&res);

    /* tp = fp = 1: the cheap verifier keeps every token; no call, no rejection */
    tu_vpar(&par, vt, "tp", 1.0);
    tu_vpar(&par, vt, "fp", 1.0);
    cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(res.target_calls.mean, 0.0);
    cr_expect_eq(res.rejections.mean, 0.0);
    sd_sim_result_free(&res);
}

Test(reductions, sprinter_without_a_cheap_yes_calls_the_target_per_token)
{
    sd_chain *c = tu_chain(4, 8, 3);
    cr_assert_not_null(c);
    S_sprinter_all_to_target(c, 300);
    sd_chain_free(c);
    c = tu_zero_chain(4, 8, 5);
    cr_assert_not_null(c);
    S_sprinter_all_to_target(c, 400);
    sd_chain_free(c);
}
