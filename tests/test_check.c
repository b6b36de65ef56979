/* test_check.c — `simdec check` (sims/engine/sd_check.h, cli/cmd_check.c): every
 * lossless verifier passes at several seeds and chains, every negative
 * control is flagged.
 *
 * Chains: generated V = 3, T = 4 (model seeds 1, 2) tested on the whole
 * output x_1..x_4 (81 cells), so that every iteration of a trial — and
 * greedy-block's nested modifications — is in the table; and a chain with
 * exact zeros (S_zero_chain) on which a token of target probability 0 is a
 * certain disagreement.  The seeds are fixed: a lossless verifier fails a
 * check with probability alpha = 1e-3 per seed, so the few below either
 * pass for good or reveal a bug; never change a seed to make one pass. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/verifiers/sd_block.h"
#include "../sims/verifiers/sd_greedy.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_check.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_dist.h"
#include "test_util.h"

extern const sd_verifier_type sd_verifier_token;
extern const sd_verifier_type sd_verifier_block;
extern const sd_verifier_type sd_verifier_greedy_block;
extern const sd_verifier_type sd_verifier_broken_block_residual;
extern const sd_verifier_type sd_verifier_broken_coin;
extern const sd_verifier_type sd_verifier_batch;
extern const sd_verifier_type sd_verifier_rrs;
extern const sd_verifier_type sd_verifier_spectr;
extern const sd_verifier_type sd_verifier_biased;
extern const sd_verifier_type sd_verifier_sprinter;
extern const sd_verifier_type sd_verifier_broken_token_kernel;
extern const sd_verifier_type sd_verifier_broken_batch;

static sd_chain *S_generated(size_t V, size_t T, unsigned long seed)
{
    sd_chain *c = tu_chain(V, T, seed);
    cr_assert_not_null(c);
    return c;
}

/* A chain with exact zeros (tu_zero_chain). */
static sd_chain *S_zero_chain(size_t V, size_t T, unsigned long seed)
{
    sd_chain *c = tu_zero_chain(V, T, seed);
    cr_assert_not_null(c);
    return c;
}

static sd_check_result S_check(const sd_verifier_type *vt, const sd_chain *c, size_t gamma,
                               uint64_t seed, uint64_t trials, size_t L)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    return tu_check_run(vt, c, &par, seed, trials, L);
}

static void S_expect_par(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                         uint64_t seed, uint64_t trials, size_t L, int unbiased)
{
    sd_check_result r = tu_check_run(vt, c, par, seed, trials, L);
    cr_expect_eq(r.unbiased, unbiased,
                 "%s gamma=%zu M=%zu k=%zu eps=%g fp=%g seed=%llu: p-value %.3g (chi2 %.1f, dof %.0f, "
                 "zero hits %.0f), expected %s",
                 vt->name, par->gamma, par->k, par->k, tu_par_get(par, "eps"), tu_par_get(par, "fp"), (unsigned long long)seed,
                 r.chi.p_value, r.chi.chi2, r.chi.dof, r.chi.zero_hits,
                 unbiased ? "unbiased" : "biased");
    sd_check_result_free(&r);
}

static void S_expect_verdict(const sd_verifier_type *vt, const sd_chain *c, size_t gamma,
                             uint64_t seed, uint64_t trials, size_t L, int unbiased)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    S_expect_par(vt, c, &par, seed, trials, L, unbiased);
}

/* token, block and greedy-block: unbiased at two seeds on each of two
 * generated chains (lookahead to the horizon and γ = 2) and on the chain
 * with zeros. */
Test(check, lossless_verifiers_pass)
{
    const sd_verifier_type *vts[] = {&sd_verifier_token, &sd_verifier_block, &sd_verifier_greedy_block};
    sd_chain *c1 = S_generated(3, 4, 1), *c2 = S_generated(3, 4, 2), *cz = S_zero_chain(3, 4, 3);
    for (size_t v = 0; v < 3; v++) {
        S_expect_verdict(vts[v], c1, 0, 101, 40000, 4, 1);
        S_expect_verdict(vts[v], c1, 2, 102, 40000, 4, 1);
        S_expect_verdict(vts[v], c2, 0, 103, 40000, 4, 1);
        S_expect_verdict(vts[v], c2, 2, 104, 40000, 4, 1);
        S_expect_verdict(vts[v], cz, 0, 105, 40000, 4, 1);
        S_expect_verdict(vts[v], cz, 2, 106, 40000, 4, 1);
    }
    sd_chain_free(c1);
    sd_chain_free(c2);
    sd_chain_free(cz);
}

/* The other helper's verifiers (sims/verifiers/batch.c, rrs.c, spectr.c, biased.c,
 * sprinter.c, broken_batch.c): the lossless ones pass, the lossy ones
 * (biased ε > 0, sprinter η_FP > 0) and the literal Alg. 4 line 28 of
 * Yin et al. 2024 (broken-batch) are flagged.  broken-batch differs from batch only
 * after all M first drafts fail and only where q^{M+2} ≠ q^{M+1}, which
 * needs a vocabulary larger than 3: it is tested at V = 5. */
Test(check, multidraft_and_lossy_verifiers)
{
    sd_chain *c1 = S_generated(3, 4, 1), *c2 = S_generated(3, 4, 2), *c5 = S_generated(5, 2, 10);
    const sd_verifier_type *lossless[] = {&sd_verifier_batch, &sd_verifier_rrs, &sd_verifier_spectr};
    sd_params par;
    for (size_t v = 0; v < 3; v++) {
        sd_params_defaults(&par, NULL);
        S_expect_par(lossless[v], c1, &par, 201, 40000, 4, 1);
        par.k = 3;
        S_expect_par(lossless[v], c2, &par, 202, 40000, 4, 1);
    }
    sd_params_defaults(&par, NULL);
    tu_par(&par, "eps", 0.1);
    S_expect_par(&sd_verifier_biased, c1, &par, 203, 40000, 4, 0);
    tu_par(&par, "residual", 1);
    S_expect_par(&sd_verifier_biased, c1, &par, 204, 40000, 4, 0);
    sd_params_defaults(&par, NULL);
    tu_par(&par, "fp", 0.3);
    S_expect_par(&sd_verifier_sprinter, c1, &par, 205, 40000, 4, 0);
    sd_params_defaults(&par, NULL);
    S_expect_par(&sd_verifier_biased, c1, &par, 206, 40000, 4, 1);   /* ε = 0 */
    S_expect_par(&sd_verifier_sprinter, c1, &par, 207, 40000, 4, 1); /* η_FP = 0 */
    par.k = 2;
    S_expect_par(&sd_verifier_broken_batch, c5, &par, 208, 200000, 2, 0);
    S_expect_par(&sd_verifier_batch, c5, &par, 208, 200000, 2, 1);
    sd_chain_free(c1);
    sd_chain_free(c2);
    sd_chain_free(c5);
}

/* vllm-ascend 7807: the token-wise residual in block verification. */
Test(check, flags_broken_block_residual)
{
    sd_chain *c1 = S_generated(3, 4, 1), *c2 = S_generated(3, 4, 2);
    S_expect_verdict(&sd_verifier_broken_block_residual, c1, 0, 101, 40000, 4, 0);
    S_expect_verdict(&sd_verifier_broken_block_residual, c2, 0, 103, 40000, 4, 0);
    sd_chain_free(c1);
    sd_chain_free(c2);
}

/* sglang 35771: `coin <= q/p` with a 10-bit coin accepts tokens of target
 * probability 0 (P = 2^-10 per proposal): zero-cell hits, p-value 0. */
Test(check, flags_broken_coin)
{
    sd_chain *cz = S_zero_chain(3, 4, 3);
    sd_check_result r = S_check(&sd_verifier_broken_coin, cz, 0, 105, 40000, 4);
    cr_expect(r.chi.zero_hits > 0.0, "no output in a probability-0 cell");
    cr_expect_eq(r.chi.p_value, 0.0);
    cr_expect(!r.unbiased);
    sd_check_result_free(&r);
    sd_chain_free(cz);
}

/* Readings of Sun et al. 2025, Alg. 5 / eq. 31 other than the joint law from the
 * iteration's start (the one Lemma 8's proof needs), and Alg. 4 with no
 * modification at all, are all biased. */
Test(check, greedy_block_other_readings_are_biased)
{
    const sd_verifier_type *vts[] = {&sd_verifier_broken_greedy_after_y,
                                     &sd_verifier_broken_greedy_tokenwise,
                                     &sd_verifier_broken_greedy_unmodified};
    sd_chain *c1 = S_generated(3, 4, 1);
    for (size_t v = 0; v < 3; v++)
        S_expect_verdict(vts[v], c1, 0, 101, 40000, 4, 0);
    sd_chain_free(c1);
}

/* Sun et al. 2025, App. C: without the modification, P(x_1 x_2 = BA) = 1/3 instead of
 * 2/9 on the toy model (A = token 0). */
Test(check, greedy_unmodified_toy_ba_one_third)
{
    const double p[2] = {2.0 / 3.0, 1.0 / 3.0}, q[2] = {1.0 / 3.0, 2.0 / 3.0};
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, 2, 2, &err);
    sd_check_result r = S_check(&sd_verifier_broken_greedy_unmodified, c, 2, 7, 40000, 2);
    double ba = r.observed[1 * 2 + 0] / (double)r.trials;
    double se = sqrt(ba * (1.0 - ba) / (double)r.trials);
    cr_expect(fabs(ba - 1.0 / 3.0) < 4.0 * se, "P(BA) %.4f, paper 1/3 (se %.4f)", ba, se);
    cr_expect(!r.unbiased);
    sd_check_result_free(&r);
    sd_check_result r2 = S_check(&sd_verifier_greedy_block, c, 2, 7, 40000, 2);
    cr_expect(r2.unbiased, "greedy-block on the toy model: p-value %.3g", r2.chi.p_value);
    sd_check_result_free(&r2);
    sd_chain_free(c);
}

/* The table of the first L tokens is the one full sd_sim_trial() runs
 * give (the check stops each trial early), and does not depend on the
 * thread count.  For token the tokens come from the kernel `run` uses:
 * its full-horizon scalar reference sd_token_plan_trial. */
Test(check, table_matches_sim_trial_and_threads)
{
    sd_chain *c = S_generated(3, 6, 2);
    const sd_verifier_type *vts[] = {&sd_verifier_token, &sd_verifier_block, &sd_verifier_greedy_block};
    for (size_t v = 0; v < 3; v++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        sd_check_opts o;
        sd_check_defaults(&o);
        o.seed = 9;
        o.trials = 3000;
        o.L = 2;
        o.threads = 1;
        o.generic = v == 2; /* greedy-block's step (its kernel: tests/test_kernel_greedy.c) */
        sd_check_result r1, r2;
        sd_error err;
        cr_assert_eq(sd_check_run(vts[v], c, &par, &o, &r1, &err), SD_OK, "%s", err.msg);
        o.threads = 2;
        cr_assert_eq(sd_check_run(vts[v], c, &par, &o, &r2, &err), SD_OK, "%s", err.msg);
        cr_expect(memcmp(r1.observed, r2.observed, r1.cells * sizeof *r1.observed) == 0);
        cr_expect_eq(r1.chi.chi2, r2.chi.chi2);
        cr_expect_str_eq(r1.kernel, v == 0 ? SD_SIM_KERNEL_TOKEN : v == 1 ? "block-sorted" : "generic");
        if (v == 1) { /* block's kernel: other random numbers, its law in tests/test_kernel_block.c */
            sd_check_result_free(&r1);
            sd_check_result_free(&r2);
            continue;
        }

        double table[9] = {0};
        size_t tokens[7];
        if (v == 0) {
            sd_token_plan *plan = NULL;
            cr_assert_eq(sd_token_plan_new(c, &par, SD_TOKEN_EXACT, 0, 1, &plan, &err), SD_OK, "%s", err.msg);
            for (uint64_t t = 0; t < o.trials; t++) {
                size_t rej, its;
                sd_token_plan_trial(plan, o.seed, t, tokens, &rej, &its, NULL);
                table[tokens[1] * 3 + tokens[2]] += 1.0;
            }
            sd_token_plan_free(plan);
        } else {
            void *state = NULL;
            cr_assert_eq(vts[v]->alloc(&state, c, &par, &err), SD_OK, "%s", err.msg);
            for (uint64_t t = 0; t < o.trials; t++) {
                sd_trial tr;
                cr_assert_eq(sd_sim_trial(vts[v], state, c, &par, o.seed, t, tokens, &tr, NULL, NULL, &err),
                             SD_OK, "%s", err.msg);
                table[tokens[1] * 3 + tokens[2]] += 1.0;
            }
            if (vts[v]->free)
                vts[v]->free(state);
        }
        cr_expect(memcmp(table, r1.observed, sizeof table) == 0, "%s: tables differ", vts[v]->name);
        sd_check_result_free(&r1);
        sd_check_result_free(&r2);
    }
    sd_chain_free(c);
}

/* --- `check` covers the token kernel ---------------------------------- */

/* The mechanistic token step (the generic option) still passes, and the
 * kernel (the default for token) passes on the chains of
 * lossless_verifiers_pass and at a longer prefix of a V = 4 chain. */
Test(kernel_check, token_kernel_and_generic_step_pass)
{
    sd_chain *c1 = S_generated(3, 4, 1), *cz = S_zero_chain(3, 4, 3), *c4 = S_generated(4, 6, 7);
    const struct {
        const sd_chain *c;
        size_t gamma, L;
        uint64_t seed;
    } cases[] = {{c1, 0, 4, 301}, {c1, 2, 4, 302}, {cz, 0, 4, 303}, {cz, 1, 4, 304}, {c4, 0, 5, 305},
                 {c4, 3, 5, 306}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int generic = 0; generic <= 1; generic++) {
            sd_params par;
            sd_params_defaults(&par, NULL);
            par.gamma = cases[i].gamma;
            sd_check_opts o;
            sd_check_defaults(&o);
            o.seed = cases[i].seed;
            o.trials = 40000;
            o.L = cases[i].L;
            o.generic = generic;
            sd_check_result r;
            sd_error err;
            cr_assert_eq(sd_check_run(&sd_verifier_token, cases[i].c, &par, &o, &r, &err), SD_OK, "%s", err.msg);
            cr_expect_str_eq(r.kernel, generic ? "generic" : SD_SIM_KERNEL_TOKEN);
            cr_expect(r.unbiased, "case %zu (%s): p-value %.3g (chi2 %.1f, dof %.0f, zero hits %.0f)", i,
                      r.kernel, r.chi.p_value, r.chi.chi2, r.chi.dof, r.chi.zero_hits);
            sd_check_result_free(&r);
        }
    sd_chain_free(c1);
    sd_chain_free(cz);
    sd_chain_free(c4);
}

/* A kernel whose tables take the rejected outcomes' mass from q instead of
 * [q - p]+ (SD_TOKEN_BROKEN_RESIDUAL: x_n ~ min(p,q) + TV·q) is flagged. */
Test(kernel_check, flags_broken_token_kernel)
{
    sd_chain *c1 = S_generated(3, 4, 1), *c2 = S_generated(3, 4, 2);
    const sd_chain *cs[] = {c1, c2};
    for (size_t i = 0; i < 2; i++)
        for (size_t gamma = 0; gamma <= 2; gamma += 2) {
            sd_params par;
            sd_params_defaults(&par, NULL);
            par.gamma = gamma;
            sd_error err;
            sd_check_opts o;
            sd_check_defaults(&o);
            o.seed = 311 + i;
            o.trials = 40000;
            o.L = 4;
            sd_check_result r;
            /* check runs what run runs: the control's broken kernel */
            cr_assert_eq(sd_check_run(&sd_verifier_broken_token_kernel, cs[i], &par, &o, &r, &err), SD_OK,
                         "%s", err.msg);
            cr_expect_str_eq(r.kernel, "token-alias-broken");
            cr_expect(!r.unbiased, "chain %zu gamma %zu: broken kernel passed, p-value %.3g", i, gamma,
                      r.chi.p_value);
            sd_check_result_free(&r);
        }
    sd_chain_free(c1);
    sd_chain_free(c2);
}

Test(check, refuses_bad_options)
{
    sd_chain *c = S_generated(7, 10, 1);
    sd_params par;
    sd_params_defaults(&par, NULL);
    sd_check_opts o;
    sd_check_defaults(&o);
    sd_check_result r;
    sd_error err;
    o.L = 8; /* 7^8 = 5.8e6 cells > 2^20 */
    cr_expect_eq(sd_check_run(&sd_verifier_token, c, &par, &o, &r, &err), SD_ETOOBIG);
    cr_expect(r.observed == NULL);
    o.L = 11;
    cr_expect_eq(sd_check_run(&sd_verifier_token, c, &par, &o, &r, &err), SD_EUSAGE);
    o.L = 2;
    o.alpha = 1.0;
    cr_expect_eq(sd_check_run(&sd_verifier_token, c, &par, &o, &r, &err), SD_EUSAGE);
    o.alpha = 1e-3;
    o.trials = 0;
    cr_expect_eq(sd_check_run(&sd_verifier_token, c, &par, &o, &r, &err), SD_EUSAGE);
    cr_expect_eq(sd_check_default_L(c, SD_CHECK_MAX_CELLS), 2);
    cr_expect_eq(sd_check_default_L(c, 48), 1);
    cr_expect_eq(sd_check_default_L(c, 6), 0);
    sd_chain_free(c);
}

Test(check, cli_json_keys)
{
    char *out = NULL, *errs = NULL;
    int rc = tu_run("check --algo block --V 3 --T 3 --L 3 --trials 20000 --seed 5 --json", &out, &errs);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, errs);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "not JSON: %s", je.text);
    const char *keys[] = {"unbiased", "p_value", "chi2", "dof", "algo", "seed", "trials", "L",
                          "max_abs_dev", "cells_tested", "zero_hits", "table"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_expect_not_null(json_object_get(o, keys[i]), "missing key %s", keys[i]);
    cr_expect(json_is_true(json_object_get(o, "unbiased")));
    cr_expect_str_eq(json_string_value(json_object_get(o, "algo")), "block");
    cr_expect_eq(json_integer_value(json_object_get(o, "L")), 3);
    cr_expect_eq(json_integer_value(json_object_get(o, "trials")), 20000);
    cr_expect_eq(json_integer_value(json_object_get(o, "seed")), 5);
    json_decref(o);
    free(out);
    free(errs);
    /* --alpha is the significance level here; --model-alpha the generator's. */
    rc = tu_run("check --V 3 --T 2 --trials 2000 --alpha 0.05 --model-alpha 0.5 --json", &out, &errs);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, errs);
    o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "not JSON: %s", je.text);
    cr_expect_float_eq(json_real_value(json_object_get(o, "alpha")), 0.05, 1e-15);
    cr_expect(tu_contains(out, "0.5"), "%s", out);
    json_decref(o);
    free(out);
    free(errs);
}

/* The verdict is data: exit 0 either way, 1 with --fail-biased. */
Test(check, cli_biased_verdict_and_exit_status)
{
    const char *args = "check --algo broken-coin --p 0.5,0.3,0.2 --q 0.6,0.4,0 --T 3 --L 3 "
                       "--trials 20000";
    char cmd[256], *out = NULL;
    int rc = tu_run(args, &out, NULL);
    cr_expect_eq(rc, 0);
    cr_expect(tu_contains(out, "BIASED"), "%s", out);
    cr_expect(tu_contains(out, "probability-0 cells"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s --fail-biased", args);
    cr_expect_eq(tu_run(cmd, NULL, NULL), 1);
    rc = tu_run("check --algo token --p 0.5,0.3,0.2 --q 0.6,0.4,0 --T 3 --L 3 --trials 20000 "
                "--fail-biased",
                &out, NULL);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(tu_contains(out, "unbiased"), "%s", out);
    free(out);
}

Test(check, cli_errors)
{
    char *errs = NULL;
    cr_expect_eq(tu_run("check --help", NULL, NULL), 0);
    cr_expect_eq(tu_run("check --L 0", NULL, NULL), 64);
    cr_expect_eq(tu_run("check --alpha 1", NULL, NULL), 64);
    cr_expect_eq(tu_run("check --trials 0", NULL, NULL), 64);
    cr_expect_eq(tu_run("check --algo nope", NULL, NULL), 64);
    cr_expect_eq(tu_run("check --algo block --eps 0.1", NULL, NULL), 64);
    cr_expect_eq(tu_run("check --T 5 --L 6", NULL, NULL), 64);
    int rc = tu_run("check --V 7 --L 9", NULL, &errs);
    cr_expect_eq(rc, 65, "exit %d", rc);
    cr_expect(tu_contains(errs, "limit"), "%s", errs);
    free(errs);
}
