/* test_draft_policy.c — the draft-length policies (src/sd_draft.h) of
 * token-level SD: their text form, losslessness (the exact law of the
 * first tokens equals the target's), the exact DP's agreement with the
 * fixed-gamma evaluator where the policy never stops early, and Monte-Carlo
 * against the exact target calls on chains with zeros.  Monte-Carlo
 * tolerance: 4 standard errors (S_TOL), fixed seeds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/verifiers/sd_block.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_draft.h"
#include "../src/sd_exact.h"
#include "../src/sd_model.h"
#include "test_exact_util.h"
#include "test_util.h"

#define S_TOL 4.0 /* standard errors: a correct implementation fails with probability 6e-5 */

extern const sd_verifier_type sd_verifier_block;

/* The verifiers that take --draft-policy. */
static const sd_verifier_type *const S_vts[] = {&sd_verifier_token, &sd_verifier_block};

static void S_par_of(const sd_verifier_type *vt, sd_params *par, size_t gamma, const char *policy)
{
    sd_error err;
    sd_params_defaults(par, vt);
    par->gamma = gamma;
    cr_assert_eq(sd_params_parse(par, vt, "draft-policy", policy, &err), SD_OK, "%s", err.msg);
}

static void S_par(sd_params *par, size_t gamma, const char *policy)
{
    S_par_of(&sd_verifier_token, par, gamma, policy);
}

Test(draft_policy, text_form_round_trips)
{
    const char *ok[] = {"fixed", "specdecpp:0.3", "specdecpp:0", "specdecpp:1", "entropy:1.5", "entropy:0",
                        "entropy:0.1"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        double code;
        char msg[200], back[64];
        cr_assert_eq(sd_draft_policy_parse(ok[i], &code, msg, sizeof msg), 0, "%s: %s", ok[i], msg);
        sd_draft_policy_format(code, back, sizeof back);
        cr_expect_str_eq(back, ok[i]);
    }
    const char *bad[] = {"", "fixed:1", "specdecpp", "specdecpp:", "specdecpp:1.5", "specdecpp:-0.1",
                         "entropy:-1", "entropy:nan", "entropy:inf", "entropy:1x", "greedy:0.5", NULL};
    for (size_t i = 0; bad[i]; i++) {
        double code;
        char msg[200];
        cr_expect_eq(sd_draft_policy_parse(bad[i], &code, msg, sizeof msg), -1, "%s accepted", bad[i]);
        cr_expect(strstr(msg, "expected") != NULL, "%s", msg);
    }
    sd_params par;
    sd_error err;
    sd_params_defaults(&par, &sd_verifier_token);
    cr_expect_eq(sd_params_parse(&par, &sd_verifier_token, "draft-policy", "specdecpp:2", &err), SD_EUSAGE);
    cr_expect(strstr(err.msg, "--draft-policy") != NULL, "%s", err.msg);
    cr_expect_eq(sd_params_draft_policy(&par, &sd_verifier_token).rule, SD_DRAFT_FIXED, "the default");
}

/* Lossless: the exact law of x_1..x_L under every policy is the target's,
 * on chains with zeros and tied ratios (whole-number weights 1..3), with
 * thresholds that tie with products of acceptance probabilities (1/2, 2/3). */
Test(draft_policy, exact_law_is_the_target_law)
{
    const char *pols[] = {"specdecpp:0", "specdecpp:0.5", "specdecpp:0.3333333333333333", "specdecpp:0.75",
                          "entropy:0", "entropy:0.6931471805599453", "entropy:1", "entropy:0.9"};
    for (unsigned long seed = 1; seed <= 4; seed++) {
        sd_chain *c = tx_random_chain(3, 5, (int)(seed % 2), 0.3, seed);
        cr_assert_not_null(c);
        for (size_t v = 0; v < 2; v++)
            for (size_t i = 0; i < sizeof pols / sizeof *pols; i++)
                for (size_t gamma = 1; gamma <= 4; gamma++) {
                    sd_params par;
                    S_par_of(S_vts[v], &par, gamma, pols[i]);
                    double tv = 1.0;
                    sd_error err;
                    cr_assert_eq(sd_exact_gen_prefix_tv(S_vts[v], c, &par, 5, 1u << 20, &tv, &err), SD_OK,
                                 "%s", err.msg);
                    cr_expect(tv <= 1e-12, "%s seed %lu %s gamma %zu: TV %.3g", S_vts[v]->name, seed, pols[i],
                              gamma, tv);
                }
        sd_chain_free(c);
    }
}

static double S_exact_calls_of(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par)
{
    sd_model m = sd_model_of_chain(c);
    sd_exact_values ev;
    sd_error err;
    cr_assert_eq(sd_verifier_exact(vt, &m, par, &ev, &err), SD_OK, "%s", err.msg);
    return ev.target_calls;
}

static double S_exact_calls(const sd_chain *c, const sd_params *par, const char **method)
{
    sd_model m = sd_model_of_chain(c);
    sd_exact_values ev;
    sd_error err;
    cr_assert_eq(sd_verifier_exact(&sd_verifier_token, &m, par, &ev, &err), SD_OK, "%s", err.msg);
    if (method)
        *method = ev.method;
    return ev.target_calls;
}

/* A policy that never stops early (specdecpp:1: P(some rejection) never
 * exceeds 1; entropy above log V) is fixed gamma: the DP over the iteration
 * law reproduces the fixed-gamma DP (src/sd_exact.h). */
Test(draft_policy, never_stopping_is_fixed_gamma)
{
    sd_chain *c = tx_random_chain(3, 9, 0, 0.25, 7);
    for (size_t gamma = 1; gamma <= 4; gamma++) {
        double rej, calls;
        sd_error err;
        cr_assert_eq(sd_exact_token(c, gamma, &rej, &calls, &err), SD_OK, "%s", err.msg);
        const char *pols[] = {"specdecpp:1", "entropy:1.1"}; /* log 3 = 1.0986 */
        for (int i = 0; i < 2; i++) {
            sd_params par;
            S_par(&par, gamma, pols[i]);
            const char *method = NULL;
            double x = S_exact_calls(c, &par, &method);
            cr_expect(fabs(x - calls) < 1e-12, "%s gamma %zu: %.15g vs %.15g", pols[i], gamma, x, calls);
            cr_expect(strstr(method, "law of one iteration") != NULL, "%s", method);
        }
    }
    sd_chain_free(c);
}

/* specdecpp:0 stops after the first token that may be rejected; entropy:0
 * after the first token unless the next row is a point mass; both between
 * gamma 1 and the cap in target calls. */
Test(draft_policy, thresholds_zero_and_order)
{
    sd_chain *c = tx_random_chain(4, 10, 0, 0.3, 3);
    double g1, g4;
    sd_error err;
    cr_assert_eq(sd_exact_token(c, 1, NULL, &g1, &err), SD_OK);
    cr_assert_eq(sd_exact_token(c, 4, NULL, &g4, &err), SD_OK);
    const char *pols[] = {"specdecpp:0", "specdecpp:0.4", "entropy:0", "entropy:0.8"};
    for (int i = 0; i < 4; i++) {
        sd_params par;
        S_par(&par, 4, pols[i]);
        double x = S_exact_calls(c, &par, NULL);
        cr_expect(isfinite(x) && x > 0.0 && x <= (double)c->T, "%s: %g", pols[i], x);
    }
    (void)g1, (void)g4;
    sd_chain_free(c);
}

/* Monte-Carlo (the generic step: the kernels decline a policy) against the
 * exact target calls and rejections, within S_TOL standard errors, on
 * chains with zeros. */
Test(draft_policy, monte_carlo_agrees_with_the_exact_dp)
{
    const char *pols[] = {"specdecpp:0.5", "specdecpp:0.2", "entropy:0.9", "entropy:0.5", "fixed"};
    for (unsigned long seed = 11; seed <= 12; seed++) {
        sd_chain *c = tx_random_chain(4, 12, 0, 0.3, seed);
        for (size_t i = 0; i < 2 * sizeof pols / sizeof *pols; i++) {
            const sd_verifier_type *vt = S_vts[i % 2];
            const char *pol = pols[i / 2];
            sd_params par;
            S_par_of(vt, &par, 4, pol);
            sd_model m = sd_model_of_chain(c);
            sd_exact_values ev;
            sd_error err;
            cr_assert_eq(sd_verifier_exact(vt, &m, &par, &ev, &err), SD_OK, "%s", err.msg);
            sd_sim_opts so = {.seed = 1000 + seed, .trials = 20000, .threads = 1};
            sd_sim_result r;
            cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
            if (strcmp(pol, "fixed") != 0)
                cr_expect_str_eq(r.kernel, "generic", "%s %s ran %s", vt->name, pol, r.kernel);
            double se = sd_welford_stderr(&r.target_calls), ser = sd_welford_stderr(&r.rejections);
            cr_expect(fabs(r.target_calls.mean - ev.target_calls) <= S_TOL * se,
                      "%s seed %lu %s: calls %.5f vs exact %.5f (se %.5f)", vt->name, seed, pol,
                      r.target_calls.mean, ev.target_calls, se);
            cr_expect(fabs(r.rejections.mean - ev.rejections) <= S_TOL * ser,
                      "%s seed %lu %s: rejections %.5f vs exact %.5f (se %.5f)", vt->name, seed, pol,
                      r.rejections.mean, ev.rejections, ser);
            sd_sim_result_free(&r);
        }
        sd_chain_free(c);
    }
}

/* Token verification under a policy also reports the Rao-Blackwellised
 * rejections (the sum over tested positions of TV(p, q)): an unbiased
 * estimate of the same mean, so within S_TOL of its standard errors of
 * the exact rejections. */
Test(draft_policy, token_rb_rejections_agree_with_the_exact_dp)
{
    const char *pols[] = {"specdecpp:0.5", "entropy:0.9"};
    sd_chain *c = tx_random_chain(4, 12, 0, 0.3, 11);
    for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
        sd_params par;
        S_par_of(&sd_verifier_token, &par, 4, pols[i]);
        sd_model m = sd_model_of_chain(c);
        sd_exact_values ev;
        sd_error err;
        cr_assert_eq(sd_verifier_exact(&sd_verifier_token, &m, &par, &ev, &err), SD_OK, "%s", err.msg);
        sd_sim_opts so = {.seed = 1011, .trials = 20000, .threads = 1, .want_rb = 1};
        sd_sim_result r;
        cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
        cr_assert(sd_sim_has_rb(&r), "%s: no rb estimate", pols[i]);
        double se = sd_welford_stderr(&r.rejections_rb);
        cr_expect(fabs(r.rejections_rb.mean - ev.rejections) <= S_TOL * se,
                  "%s: rb rejections %.5f vs exact %.5f (se %.5f)", pols[i], r.rejections_rb.mean, ev.rejections, se);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

/* Sun et al. 2025, Theorem 2 (block never needs more target calls than
 * token-level SD on the same drafts) under the same stopping rule: the
 * stopping rule reads the drafts only, so the coupling of the theorem
 * holds on each drafted prefix.  Exact values. */
Test(draft_policy, block_at_most_token_under_the_same_policy)
{
    const char *pols[] = {"specdecpp:0.5", "specdecpp:0.1", "entropy:0.9", "entropy:0.4"};
    for (unsigned long seed = 21; seed <= 23; seed++) {
        sd_chain *c = tx_random_chain(3, 8, 0, 0.3, seed);
        for (size_t i = 0; i < sizeof pols / sizeof *pols; i++) {
            double calls[2];
            for (int v = 0; v < 2; v++) {
                sd_params par;
                S_par_of(S_vts[v], &par, 4, pols[i]);
                calls[v] = S_exact_calls_of(S_vts[v], c, &par);
            }
            cr_expect(calls[1] <= calls[0] + 1e-12, "seed %lu %s: block %.12f > token %.12f", seed, pols[i],
                      calls[1], calls[0]);
        }
        sd_chain_free(c);
    }
}

/* --- the DP over what the drafter sees (src/sd_exact_policy.h) ------------ */

#include "../src/sd_exact_policy.h"

/* Its calls under a policy are the iteration-law DP's exact target calls;
 * under fixed, the fixed-gamma DP's. */
Test(draft_policy, drafter_dp_calls_match_the_iteration_law)
{
    const char *pols[] = {"fixed", "specdecpp:0.5", "specdecpp:0.2", "entropy:0.9", "entropy:0.5"};
    for (unsigned long seed = 31; seed <= 33; seed++) {
        sd_chain *c = tx_random_chain(3, 9, (int)(seed % 2), 0.3, seed);
        for (size_t i = 0; i < sizeof pols / sizeof *pols; i++)
            for (size_t gamma = 1; gamma <= 4; gamma++) {
                sd_params par;
                S_par(&par, gamma, pols[i]);
                double law = i == 0 ? NAN : S_exact_calls(c, &par, NULL), calls, drafted;
                if (i == 0)
                    cr_assert_eq(sd_exact_token(c, gamma, NULL, &law, NULL), SD_OK);
                sd_draft_policy pol = sd_draft_policy_decode(par.v[SD_TOKEN_SLOT_POLICY]);
                sd_error err;
                cr_assert_eq(sd_exact_policy(c, gamma, &pol, &calls, &drafted, &err), SD_OK, "%s", err.msg);
                cr_expect(fabs(calls - law) < 1e-12, "seed %lu %s gamma %zu: %.15g vs %.15g", seed, pols[i],
                          gamma, calls, law);
                cr_expect(drafted >= calls - 1e-12 && drafted <= (double)gamma * calls + 1e-12,
                          "1 to gamma draft tokens per call: %g, %g", drafted, calls);
            }
        sd_chain_free(c);
    }
}

/* p = q: every draft is accepted; gamma 2 over T = 7 drafts 2, 2, 1 in
 * iterations at 1, 4, 7 (the last without a bonus). */
Test(draft_policy, drafter_dp_counts_draft_tokens)
{
    const double p[] = {0.25, 0.75};
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, p, 2, 7, &err);
    cr_assert_not_null(c, "%s", err.msg);
    sd_draft_policy fixed = {SD_DRAFT_FIXED, 0.0};
    double calls, drafted;
    cr_assert_eq(sd_exact_policy(c, 2, &fixed, &calls, &drafted, &err), SD_OK);
    cr_expect(fabs(calls - 3.0) < 1e-12 && fabs(drafted - 5.0) < 1e-12, "%g %g", calls, drafted);
    sd_chain_free(c);
}

/* The best stopping rule costs no more than any policy or any fixed
 * gamma' <= gamma (both are stopping rules it ranges over). */
Test(draft_policy, best_rule_is_at_most_every_heuristic)
{
    const double costs[] = {0.0, 0.05, 0.3};
    for (unsigned long seed = 41; seed <= 42; seed++) {
        sd_chain *c = tx_random_chain(3, 10, 0, 0.3, seed);
        for (size_t k = 0; k < 3; k++) {
            double bc, bd;
            sd_error err;
            cr_assert_eq(sd_exact_policy_best(c, 4, costs[k], &bc, &bd, &err), SD_OK, "%s", err.msg);
            double best = bc + costs[k] * bd;
            for (int r = 0; r < 3; r++)
                for (double h = 0.0; h <= 1.2; h += 0.1) {
                    sd_draft_policy pol = {(sd_draft_rule)r, r == 2 ? h : fmin(h, 1.0)};
                    for (size_t g = 1; g <= 4; g++) {
                        double pc, pd;
                        cr_assert_eq(sd_exact_policy(c, g, &pol, &pc, &pd, &err), SD_OK);
                        cr_expect(best <= pc + costs[k] * pd + 1e-12, "seed %lu c %g rule %d h %g gamma %zu: best "
                                  "%.12f > %.12f", seed, costs[k], r, h, g, best, pc + costs[k] * pd);
                    }
                }
        }
        sd_chain_free(c);
    }
}

/* --- the command line ------------------------------------------------------ */

/* run prints the exact target calls of a policy (JSON exact_target_calls),
 * the library's value. */
Test(draft_policy, run_prints_the_exact_value)
{
    double x = tx_cli_number("run --algo token --gamma 3 --draft-policy specdecpp:0.4 --V 3 --T 8 --trials 2000",
                             "exact_target_calls");
    cr_assert(isfinite(x), "no exact_target_calls");
    double y = tx_cli_number("run --algo block --gamma 3 --draft-policy entropy:0.8 --V 3 --T 8 --trials 2000",
                             "exact_target_calls");
    cr_assert(isfinite(y), "no exact_target_calls for block");
    double bad = tx_cli_number("run --algo token --draft-policy specdecpp:1.5 --V 3 --T 8", "exact_target_calls");
    cr_expect(isnan(bad), "specdecpp:1.5 accepted");
}

/* eval speedup --draft-policy RULE:best: the best threshold's speed-up is
 * the largest of its grid, and the optimal stopping rule's is at least it
 * and at least the best fixed gamma's. */
Test(draft_policy, eval_speedup_best_threshold)
{
    const char *rules[] = {"specdecpp:best", "entropy:best"};
    for (int i = 0; i < 2; i++) {
        char args[256];
        snprintf(args, sizeof args, "eval speedup --draft-policy %s --gamma 4 --V 3 --T 10 --steps 8 --c 0.1",
                 rules[i]);
        double best = tx_cli_number(args, "best_speedup"), fixed = tx_cli_number(args, "best_fixed_speedup"),
               gap = tx_cli_number(args, "gap_to_optimal");
        cr_assert(isfinite(best) && isfinite(fixed) && isfinite(gap), "%s", args);
        cr_expect(gap >= -1e-12, "%s: the optimum below a heuristic by %g", args, -gap);
        cr_expect(best + gap >= fixed - 1e-12, "%s: the optimum below the best fixed gamma", args);
    }
}

/* The control broken-draft-peek (a rule that reads the verification coin)
 * is flagged by the exact law, and its Monte-Carlo matches its own exact
 * calls (what runs is what the law describes). */
extern const sd_verifier_type sd_verifier_broken_draft_peek;

Test(draft_policy, the_peeking_control_is_flagged)
{
    const char *pols[] = {"fixed", "specdecpp:0.6", "entropy:1"};
    sd_chain *c = tx_random_chain(3, 6, 0, 0.3, 5);
    for (size_t i = 0; i < 3; i++) {
        sd_params par;
        S_par_of(&sd_verifier_broken_draft_peek, &par, 3, pols[i]);
        double tv = 0.0;
        sd_error err;
        cr_assert_eq(sd_exact_gen_prefix_tv(&sd_verifier_broken_draft_peek, c, &par, 4, 1u << 20, &tv, &err), SD_OK,
                     "%s", err.msg);
        cr_expect(tv > 1e-3, "%s: the peeking control not flagged (TV %.3g)", pols[i], tv);
        sd_model m = sd_model_of_chain(c);
        sd_exact_values ev;
        cr_assert_eq(sd_verifier_exact(&sd_verifier_broken_draft_peek, &m, &par, &ev, &err), SD_OK, "%s", err.msg);
        sd_sim_opts so = {.seed = 77, .trials = 20000, .threads = 1};
        sd_sim_result r;
        cr_assert_eq(sd_sim_run(&sd_verifier_broken_draft_peek, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
        double se = sd_welford_stderr(&r.target_calls);
        cr_expect(fabs(r.target_calls.mean - ev.target_calls) <= S_TOL * se, "%s: %.5f vs %.5f (se %.5f)", pols[i],
                  r.target_calls.mean, ev.target_calls, se);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

/* entropy:best is exact: the best over every draft-row entropy (where the
 * rule changes) and the grid, as the library computes it. */
Test(draft_policy, entropy_best_is_the_best_row_entropy)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = 3;
    gp.T = 10;
    sd_error err;
    sd_chain *c = sd_chain_generate(&gp, &err);
    cr_assert_not_null(c, "%s", err.msg);
    double ents[64], best = 0.0;
    size_t n = 0;
    cr_assert_eq(sd_exact_policy_entropies(c, ents, 64, &n, &err), SD_OK, "%s", err.msg);
    cr_expect(n >= 1 && n <= 30, "%zu row entropies", n);
    for (size_t i = 0; i + 1 < n; i++)
        cr_expect(ents[i] < ents[i + 1], "sorted and distinct");
    for (size_t i = 0; i < n; i++) {
        sd_draft_policy pol = {SD_DRAFT_ENTROPY, ents[i]};
        double calls, drafted;
        cr_assert_eq(sd_exact_policy(c, 4, &pol, &calls, &drafted, &err), SD_OK);
        best = fmax(best, sd_exact_policy_speedup((double)c->T, calls, drafted, 0.1));
    }
    double cli = tx_cli_number("eval speedup --draft-policy entropy:best --gamma 4 --V 3 --T 10 --steps 4 --c 0.1",
                               "best_speedup");
    cr_expect(cli >= best - 1e-12, "the command's best %.12f below the best row entropy's %.12f", cli, best);
    sd_chain_free(c);
}

/* A sweep over policies: one point per policy, in order. */
Test(draft_policy, sweep_over_policies)
{
    char *out = NULL;
    cr_assert_eq(tu_run("run --algo token --gamma 3 --draft-policy fixed,specdecpp:0.3,entropy:1 --V 3 --T 8 "
                        "--trials 500 --csv",
                        &out, NULL),
                 0);
    cr_expect(strstr(out, "\ntoken,3,fixed,") && strstr(out, "\ntoken,3,specdecpp:0.3,") &&
                  strstr(out, "\ntoken,3,entropy:1,"),
              "%s", out);
    free(out);
}

/* --- the forward DP over iteration starts (sims/exact/sd_policy_cost.h) --- */

#include "../sims/exact/sd_policy_cost.h"

/* For token it gives the drafter DP's calls and draft tokens; for block its
 * calls are the exact target calls of the iteration-law DP. */
Test(draft_policy, policy_cost_matches_both_dps)
{
    const char *pols[] = {"fixed", "specdecpp:0.5", "entropy:0.9"};
    sd_chain *c = tx_random_chain(3, 9, 0, 0.3, 51);
    for (size_t i = 0; i < 3; i++)
        for (size_t gamma = 1; gamma <= 4; gamma++) {
            sd_params par;
            sd_error err;
            double calls, drafted, c2, d2;
            S_par_of(&sd_verifier_token, &par, gamma, pols[i]);
            cr_assert_eq(sd_policy_cost(&sd_verifier_token, c, &par, &calls, &drafted, &err), SD_OK, "%s", err.msg);
            sd_draft_policy pol = sd_draft_policy_decode(par.v[SD_TOKEN_SLOT_POLICY]);
            cr_assert_eq(sd_exact_policy(c, gamma, &pol, &c2, &d2, &err), SD_OK);
            cr_expect(fabs(calls - c2) < 1e-12 && fabs(drafted - d2) < 1e-12, "token %s gamma %zu: %.15g %.15g vs "
                      "%.15g %.15g", pols[i], gamma, calls, drafted, c2, d2);
            S_par_of(&sd_verifier_block, &par, gamma, pols[i]);
            cr_assert_eq(sd_policy_cost(&sd_verifier_block, c, &par, &calls, &drafted, &err), SD_OK, "%s", err.msg);
            double ex = S_exact_calls_of(&sd_verifier_block, c, &par);
            cr_expect(fabs(calls - ex) < 1e-12, "block %s gamma %zu: %.15g vs %.15g", pols[i], gamma, calls, ex);
            cr_expect(drafted >= calls - 1e-12 && drafted <= (double)gamma * calls + 1e-12,
                      "block: 1 to gamma draft tokens per call: %g, %g", drafted, calls);
        }
    sd_chain_free(c);
}

/* eval speedup --algo block --draft-policy specdecpp:best runs, and says the
 * optimum is token-level SD's only (JSON null). */
Test(draft_policy, eval_speedup_block)
{
    char *out = NULL;
    cr_assert_eq(tu_run("eval speedup --algo block --draft-policy specdecpp:best --gamma 3 --V 3 --T 8 --steps 4 --json",
                        &out, NULL),
                 0);
    cr_expect(strstr(out, "\"optimal_stopping\": null") != NULL, "%s", out);
    cr_expect(strstr(out, "\"best_speedup\"") != NULL, "%s", out);
    free(out);
    cr_expect_neq(tu_run("eval speedup --algo rrs --draft-policy specdecpp:0.5 --gamma 3 --V 3 --T 8", &out, NULL), 0);
    free(out);
}
