/* test_draft_len.c — the draft length (src/sd_draft.h): gamma 0 means the
 * rest of the horizon, a gamma >= T never binds, and the places that decode
 * it agree; and the typed accessors of a verifier's own parameters
 * (sims/engine/sd_verifier.h).  Exact comparisons only: no Monte-Carlo. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/verifiers/sd_token.h"
#include "../sims/verifiers/sd_tokenwise.h"
#include "../src/sd_chain.h"
#include "../src/sd_draft.h"
#include "../src/sd_exact.h"
#include "test_util.h"

Test(draft_len, rest_of_the_horizon_and_a_bound)
{
    const size_t T = 9;
    for (size_t n = 1; n <= T; n++) {
        size_t rest = T - n + 1;
        cr_assert_eq(sd_draft_len_at(0, T, n), rest, "gamma 0 at n = %zu", n);
        cr_assert_eq(sd_draft_len_at(T, T, n), rest, "gamma T at n = %zu", n);
        cr_assert_eq(sd_draft_len_at(T + 7, T, n), rest, "gamma T+7 at n = %zu", n);
        for (size_t g = 1; g <= T; g++)
            cr_assert_eq(sd_draft_len_at(g, T, n), g < rest ? g : rest, "gamma %zu at n = %zu", g, n);
    }
}

Test(draft_len, its_readings)
{
    const size_t T = 9;
    cr_assert_eq(sd_draft_len_max(0, T), T);
    cr_assert_eq(sd_draft_len_max(4, T), 4);
    cr_assert_eq(sd_draft_len_max(T + 1, T), T);
    cr_assert_eq(sd_draft_binding(0, T), 0);
    cr_assert_eq(sd_draft_binding(T, T), 0, "a gamma of T never binds");
    cr_assert_eq(sd_draft_binding(T + 3, T), 0);
    for (size_t g = 1; g < T; g++)
        cr_assert_eq(sd_draft_binding(g, T), g);
    cr_assert_eq(sd_draft_len_unbounded(0), SIZE_MAX);
    cr_assert_eq(sd_draft_len_unbounded(3), 3);
}

Test(draft_len, verifiers_read_the_same_function)
{
    sd_chain *c = tu_chain(4, 7, 11);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, &sd_verifier_token);
    const size_t gammas[] = {0, 2, 7, 30};
    for (size_t i = 0; i < sizeof gammas / sizeof *gammas; i++) {
        par.gamma = gammas[i];
        for (size_t n = 1; n <= c->T; n++)
            cr_assert_eq(sd_draft_len(c, &par, n), sd_draft_len_at(gammas[i], c->T, n));
    }
    sd_chain_free(c);
}

/* gamma = T and gamma > T mean gamma 0: the exact evaluator returns the
 * same bits, and the token kernel draws the same tokens. */
Test(draft_len, a_gamma_past_the_horizon_is_the_horizon)
{
    sd_chain *c = tu_chain(5, 8, 3);
    cr_assert_not_null(c);
    double r0, t0, r, t;
    cr_assert_eq(sd_exact_token(c, 0, &r0, &t0, NULL), SD_OK);
    const size_t same[] = {8, 9, 100};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(sd_exact_token(c, same[i], &r, &t, NULL), SD_OK);
        cr_assert(r == r0 && t == t0, "gamma %zu: %.17g %.17g, gamma 0: %.17g %.17g", same[i], r, t, r0, t0);
    }
    sd_params par;
    sd_params_defaults(&par, &sd_verifier_token);
    sd_token_plan *p0 = NULL, *p1 = NULL;
    cr_assert_eq(sd_token_plan_new(c, &par, SD_TOKEN_EXACT, 0, 1, &p0, NULL), SD_OK);
    par.gamma = 100;
    cr_assert_eq(sd_token_plan_new(c, &par, SD_TOKEN_EXACT, 0, 1, &p1, NULL), SD_OK);
    for (uint64_t trial = 0; trial < 50; trial++) {
        size_t a[9], b[9], ra, rb, ia, ib;
        sd_token_plan_trial(p0, 5, trial, a, &ra, &ia, NULL);
        sd_token_plan_trial(p1, 5, trial, b, &rb, &ib, NULL);
        cr_assert(ra == rb && ia == ib, "trial %llu", (unsigned long long)trial);
        for (size_t n = 0; n <= 8; n++)
            cr_assert_eq(a[n], b[n], "trial %llu, x_%zu", (unsigned long long)trial, n);
    }
    sd_token_plan_free(p0);
    sd_token_plan_free(p1);
    sd_chain_free(c);
}

/* The exact method `run` reports names the evaluator that ran: Theorem 1
 * (not the DP) for a gamma at or past the horizon. */
Test(draft_len, token_exact_method_names_theorem1_past_the_horizon)
{
    char *out = NULL;
    cr_assert_eq(tu_run("run --algo token --T 12 --gamma 12 --trials 200 --json", &out, NULL), 0);
    cr_assert(tu_contains(out, "\"exact_method\": \"Theorem 1 of Yin et al. 2024"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --algo token --T 12 --gamma 3 --trials 200 --json", &out, NULL), 0);
    cr_assert(tu_contains(out, "\"exact_method\": \"exact DP over"), "%s", out);
    free(out);
}

/* The typed accessors read what the option set. */
Test(draft_len, typed_accessors_of_own_parameters)
{
    const sd_verifier_type *vt = sd_verifier_find("biased");
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    const sd_param_decl *eps = sd_params_decl(vt, "eps", NULL), *res = sd_params_decl(vt, "residual", NULL);
    cr_assert(eps && res);
    cr_assert_eq(sd_param_choice(&par, res->slot), SD_RESIDUAL_OPT);
    cr_assert_eq(sd_params_parse(&par, vt, "residual", "uno", NULL), SD_OK);
    cr_assert_eq(sd_params_parse(&par, vt, "eps", "0.25", NULL), SD_OK);
    cr_assert_eq(sd_param_choice(&par, res->slot), SD_RESIDUAL_UNO);
    cr_assert_eq(sd_param_real(&par, eps->slot), 0.25);
    vt = sd_verifier_find("spectr");
    cr_assert_not_null(vt);
    sd_params_defaults(&par, vt);
    const sd_param_decl *plan = sd_params_decl(vt, "plan", NULL);
    cr_assert_not_null(plan);
    cr_assert_eq(sd_params_parse(&par, vt, "plan", "otm", NULL), SD_OK);
    cr_assert_eq(sd_param_choice(&par, plan->slot), 1, "otm is the second word of kseq|otm");
    cr_assert_eq(sd_param_count(&par, plan->slot), 1);
}
