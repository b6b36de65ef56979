/* test_exact_greedy.c — greedy block verification computed exactly
 * (sims/exact/greedy_exact.c): the enumeration over (n, x_{n-1}, active eq. 31
 * modifications of Sun et al. 2025) agrees with Monte-Carlo on rejections and
 * target calls, its law of the first L tokens is the target's for
 * greedy-block and shows the true bias of the other readings of eq. 31,
 * its first iteration is Lemma 9's full-information optimum, and it refuses
 * what it cannot enumerate with the size and the limit.
 *
 * Monte-Carlo tolerances are 4 standard errors: a correct pair fails a
 * given comparison with probability ~6e-5 and the seeds are fixed, so a
 * failure is a finding.  Exact-against-exact comparisons are to 1e-12
 * (sums of at most a few thousand terms of size <= 1). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "../sims/verifiers/sd_greedy.h"
#include "../sims/engine/sd_check.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_exact.h"
#include "../src/sd_exact_accept.h"
#include "test_exact_util.h"
#include "test_util.h"

extern const sd_verifier_type sd_verifier_greedy_block;

#define S_NREAD 4
static const sd_verifier_type *const S_read[S_NREAD] = {
    &sd_verifier_greedy_block, &sd_verifier_broken_greedy_after_y,
    &sd_verifier_broken_greedy_tokenwise, &sd_verifier_broken_greedy_unmodified};
static const sd_greedy_mode S_mode[S_NREAD] = {SD_GREEDY_JOINT, SD_GREEDY_AFTER_Y,
                                               SD_GREEDY_TOKENWISE, SD_GREEDY_UNMODIFIED};

/* Small chains: generated, with exact zeros in p and q (tu_zero_chain: the
 * draft never proposes token 0, the target never wants token V-1; and a
 * random nonstationary chain with zeros in both), the toy model of Sun et
 * al. 2025 §2; gamma 0 is the horizon. */
typedef struct {
    const char *what;
    size_t gamma;
} S_case;

enum { S_NCASE = 8 };
static const S_case S_cases[S_NCASE] = {
    {"generated V=3 T=6", 2},  {"generated V=3 T=6", 3},     {"generated V=4 T=5", 0},
    {"zeros V=3 T=6", 3},      {"zeros V=3 T=6", 0},         {"random zeros V=3 T=7", 4},
    {"toy T=6", 2},            {"generated V=2 T=9", 5},
};

static sd_chain *S_chain(size_t k)
{
    static const int which[S_NCASE] = {0, 0, 1, 2, 2, 3, 4, 5};
    sd_chain *c = NULL;
    switch (which[k]) {
    case 0: c = tu_chain(3, 6, 10); break;
    case 1: c = tu_chain(4, 5, 2); break;
    case 2: c = tu_zero_chain(3, 6, 3); break;
    case 3: c = tx_random_chain(3, 7, 0, 0.25, 5); break;
    case 4: c = tx_toy_chain(6); break;
    default: c = tu_chain(2, 9, 4); break;
    }
    cr_assert_not_null(c);
    return c;
}

static sd_params S_par(size_t gamma)
{
    sd_params par;
    sd_params_defaults(&par, &sd_verifier_greedy_block);
    par.gamma = gamma;
    return par;
}

/* The verifier's exact slot (what run and eval generation print) against
 * 40000 Monte-Carlo trials, for every reading: the enumeration runs the
 * biased readings' arithmetic as well, and must predict their counts too. */
Test(exact_greedy, monte_carlo_agrees_on_rejections_and_calls)
{
    for (size_t k = 0; k < S_NCASE; k++) {
        sd_chain *c = S_chain(k);
        sd_params par = S_par(S_cases[k].gamma);
        sd_model m = sd_model_of_chain(c);
        for (size_t v = 0; v < S_NREAD; v++) {
            sd_exact_values ex;
            sd_error err;
            cr_assert_eq(sd_verifier_exact(S_read[v], &m, &par, &ex, &err), SD_OK, "%s on %s: %s",
                         S_read[v]->name, S_cases[k].what, err.msg);
            sd_sim_opts o = {0};
            o.seed = 40 + k;
            o.trials = 40000;
            sd_sim_result res = {0};
            cr_assert_eq(sd_sim_run(S_read[v], c, &par, &o, &res, &err), SD_OK, "%s", err.msg);
            double se_r = sd_welford_stderr(&res.rejections), se_c = sd_welford_stderr(&res.target_calls);
            cr_expect(fabs(res.rejections.mean - ex.rejections) < 4 * se_r + 1e-12,
                      "%s on %s, gamma %zu: rejections %.6f vs exact %.6f (se %.2g)", S_read[v]->name,
                      S_cases[k].what, par.gamma, res.rejections.mean, ex.rejections, se_r);
            cr_expect(fabs(res.target_calls.mean - ex.target_calls) < 4 * se_c + 1e-12,
                      "%s on %s, gamma %zu: target calls %.6f vs exact %.6f (se %.2g)",
                      S_read[v]->name, S_cases[k].what, par.gamma, res.target_calls.mean,
                      ex.target_calls, se_c);
            sd_sim_result_free(&res);
        }
        sd_chain_free(c);
    }
}

/* The exact law of the first L tokens, by the path `check --exact` takes:
 * greedy-block's is the target's to 1e-12 (Sun et al. 2025, Lemma 8), on
 * chains where modifications nest (gamma >= 3: two or more zones cover a
 * position). */
Test(exact_greedy, prefix_law_is_the_target_law)
{
    for (size_t k = 0; k < S_NCASE; k++) {
        sd_chain *c = S_chain(k);
        sd_params par = S_par(S_cases[k].gamma);
        size_t L = c->T < 5 ? c->T : 5;
        double tv;
        sd_error err;
        cr_assert_eq(sd_exact_gen_prefix_tv(&sd_verifier_greedy_block, c, &par, L, 1u << 20, &tv, &err),
                     SD_OK, "%s: %s", S_cases[k].what, err.msg);
        cr_expect(tv <= 1e-12, "greedy-block on %s, gamma %zu, L %zu: exact TV %.3g", S_cases[k].what,
                  par.gamma, L, tv);
        sd_chain_free(c);
    }
}

/* The toy model of Sun et al. 2025 §2 (A = 0, B = 1; p(A) = 2/3, q(A) =
 * 1/3): Alg. 4 without the modification gives P(x_1 x_2 = BA) = 1/3
 * instead of the target's 2/9 (their App. C); greedy-block gives 2/9.  The
 * two other readings of eq. 31 agree with the target on x_1 x_2 and are
 * biased from x_3 on: exact TV > 1e-3 on x_1 x_2 x_3. */
Test(exact_greedy, other_readings_show_their_bias_on_the_toy_model)
{
    sd_chain *c = tx_toy_chain(3);
    sd_params par = S_par(2);
    double law[8];
    sd_error err;
    cr_assert_eq(sd_exact_gen_prefix_law(&sd_verifier_broken_greedy_unmodified, c, &par, 2, 1u << 20,
                                         law, &err), SD_OK, "%s", err.msg);
    cr_expect(fabs(law[1 * 2 + 0] - 1.0 / 3.0) < 1e-12, "unmodified: P(BA) = %.17g, paper 1/3",
              law[2]);
    cr_assert_eq(sd_exact_gen_prefix_law(&sd_verifier_greedy_block, c, &par, 2, 1u << 20, law, &err),
                 SD_OK, "%s", err.msg);
    cr_expect(fabs(law[1 * 2 + 0] - 2.0 / 9.0) < 1e-12, "greedy-block: P(BA) = %.17g, target 2/9",
              law[2]);
    for (size_t v = 1; v < S_NREAD; v++) {
        double tv;
        cr_assert_eq(sd_exact_gen_prefix_tv(S_read[v], c, &par, 3, 1u << 20, &tv, &err), SD_OK, "%s",
                     err.msg);
        cr_expect(tv > 1e-3, "%s on the toy model: exact TV %.3g of x_1..x_3", S_read[v]->name, tv);
    }
    sd_chain_free(c);
}

/* The biased readings' exact laws are what their simulators produce: every
 * cell of the table `check` draws (x_1..x_3, 200000 trials) within 4
 * binomial standard errors of the exact probability.  This ties the bias
 * `check --exact` reports to the Monte-Carlo's. */
Test(exact_greedy, biased_laws_match_the_simulators)
{
    sd_chain *c = tu_chain(2, 4, 1);
    sd_params par = S_par(3);
    for (size_t v = 0; v < S_NREAD; v++) {
        double law[8];
        sd_error err;
        cr_assert_eq(sd_exact_gen_prefix_law(S_read[v], c, &par, 3, 1u << 20, law, &err), SD_OK, "%s",
                     err.msg);
        sd_check_opts o;
        sd_check_defaults(&o);
        o.seed = 60 + v;
        o.trials = 200000;
        o.L = 3;
        o.threads = 1;
        sd_check_result r;
        cr_assert_eq(sd_check_run(S_read[v], c, &par, &o, &r, &err), SD_OK, "%s", err.msg);
        for (size_t k = 0; k < 8; k++) {
            double f = r.observed[k] / (double)r.trials;
            double se = sqrt(law[k] * (1.0 - law[k]) / (double)r.trials) + 1e-12;
            cr_expect(fabs(f - law[k]) < 4 * se, "%s: cell %zu observed %.5f, exact %.5f (se %.2g)",
                      S_read[v]->name, k, f, law[k], se);
        }
        sd_check_result_free(&r);
    }
    sd_chain_free(c);
}

/* The first iteration accepts Σ_l Σ_{x^l} min(p(x^l), q(x^l)) tokens on
 * average (Sun et al. 2025, Lemma 9; the enumeration of src/sd_exact_accept.h),
 * whatever the reading (they differ from the second iteration on).  Where
 * Lemma 9 applies: the block fits before the horizon (gamma <= T). */
Test(exact_greedy, first_iteration_is_lemma_9)
{
    struct {
        sd_chain *c;
        size_t gamma;
        double want; /* NaN: from sd_exact_accept_length */
    } cs[] = {
        {tx_toy_chain(3), 2, 12.0 / 9.0},
        {tx_random_chain(3, 4, 0, 0.25, 5), 4, NAN},
        {tu_zero_chain(3, 6, 3), 3, NAN},
        {tu_chain(4, 5, 2), 5, NAN},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        sd_chain *c = cs[k].c;
        double want = cs[k].want;
        if (isnan(want)) {
            want = 0.0;
            for (size_t x0 = 0; x0 < c->V; x0++) {
                double e[SD_ACCEPT_NALGO];
                sd_error err;
                cr_assert_eq(sd_exact_accept_length(c, 1, x0, cs[k].gamma, e, NULL, &err), SD_OK,
                             "%s", err.msg);
                want += c->init[x0] * e[SD_ACCEPT_FULL];
            }
        }
        sd_params par = S_par(cs[k].gamma);
        for (size_t v = 0; v < S_NREAD; v++) {
            sd_greedy_exact_result r;
            sd_error err;
            cr_assert_eq(sd_greedy_exact(c, &par, S_mode[v], &r, &err), SD_OK, "%s", err.msg);
            cr_expect(fabs(r.first_accepted - want) < 1e-12,
                      "%s, case %zu: E[tau] of the first iteration %.17g, Lemma 9 %.17g",
                      S_read[v]->name, k, r.first_accepted, want);
        }
        sd_chain_free(c);
    }
}

/* At gamma = 1 nothing is modified (the zone n+τ+1..n is empty) and greedy
 * block is token verification: the token DP's values to 1e-12. */
Test(exact_greedy, gamma_one_is_token_verification)
{
    sd_chain *c = tu_zero_chain(4, 12, 7);
    sd_params par = S_par(1);
    sd_greedy_exact_result r;
    sd_error err;
    double rej, calls;
    cr_assert_eq(sd_greedy_exact(c, &par, SD_GREEDY_JOINT, &r, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_exact_token(c, 1, &rej, &calls, &err), SD_OK, "%s", err.msg);
    cr_expect(fabs(r.rejections - rej) < 1e-12 && fabs(r.target_calls - calls) < 1e-12,
              "greedy-block gamma 1: %.17g %.17g, token %.17g %.17g", r.rejections, r.target_calls,
              rej, calls);
    sd_chain_free(c);
}

/* The default chain (V = 7, T = 50) with the lookahead to the horizon: one
 * iteration alone would enumerate 7^50 draft blocks.  Refused at once,
 * naming the size and the limit, by every door (run's exact column and
 * eval generation ask sd_verifier_exact, check --exact the prefix law). */
Test(exact_greedy, refusals_name_the_size_and_the_limit)
{
    sd_chain *c = tu_chain(7, 50, 10);
    sd_model m = sd_model_of_chain(c);
    sd_params par = S_par(0);
    sd_exact_values ex;
    sd_error err;
    cr_expect_eq(sd_verifier_exact(&sd_verifier_greedy_block, &m, &par, &ex, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "7^50") && tu_contains(err.msg, "limit 2^24"), "%s", err.msg);
    double tv;
    cr_expect_eq(sd_exact_gen_prefix_tv(&sd_verifier_greedy_block, c, &par, 2, 1u << 20, &tv, &err),
                 SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "7^50") && tu_contains(err.msg, "--gamma"), "%s", err.msg);
    sd_chain_free(c);
    char *out = NULL, *er = NULL;
    cr_expect_eq(tu_run("eval generation --algo greedy-block", &out, &er), 65, "%s", er);
    cr_expect(tu_contains(er, "7^50") && tu_contains(er, "limit"), "%s", er);
    free(out);
    free(er);
}

/* The commands: eval generation prints the enumeration's values, check
 * --exact its TV (~1e-16), run the exact columns, on a small chain. */
Test(exact_greedy, commands_print_the_exact_values)
{
    sd_chain *c = tu_chain(3, 6, 10);
    sd_params par = S_par(3);
    sd_greedy_exact_result r;
    sd_error err;
    cr_assert_eq(sd_greedy_exact(c, &par, SD_GREEDY_JOINT, &r, &err), SD_OK, "%s", err.msg);
    sd_chain_free(c);
    const char *model = "--algo greedy-block --gamma 3 --V 3 --T 6 --model-seed 10";
    char args[256];
    snprintf(args, sizeof args, "eval generation %s", model);
    cr_expect(fabs(tx_cli_number(args, "rejections") - r.rejections) < 1e-12);
    cr_expect(fabs(tx_cli_number(args, "target_calls") - r.target_calls) < 1e-12);
    snprintf(args, sizeof args, "run %s --trials 2000", model);
    cr_expect(fabs(tx_cli_number(args, "exact_rejections") - r.rejections) < 1e-12);
    cr_expect(fabs(tx_cli_number(args, "exact_target_calls") - r.target_calls) < 1e-12);
    snprintf(args, sizeof args, "check %s --L 5 --trials 2000 --exact", model);
    double tv = tx_cli_number(args, "exact_tv");
    cr_expect(tv <= 1e-12, "check --exact: exact_tv %.3g", tv);
}
