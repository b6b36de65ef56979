/* test_md_verifiers.c — the verifiers engines run (onehot, strict):
 * lossless under `check` at several draft counts and lengths, on a chain
 * with zeros.  Chi-square at the check's default level: a rejection is a
 * finding, not a tolerance to widen. */
#include <criterion/criterion.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "test_util.h"
#include <math.h>

static void S_check_verdict(const char *name, double k, double gamma, unsigned long seed,
                            int want)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s is registered", name);
    sd_chain *c = tu_zero_chain(4, 4, 7);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, vt);
    tu_par(&par, "k", k);
    tu_par(&par, "gamma", gamma);
    sd_check_opts o;
    sd_check_defaults(&o);
    o.seed = seed;
    o.trials = 200000;
    o.L = 3;
    sd_check_result r;
    sd_error err;
    cr_assert_eq(sd_check_run(vt, c, &par, &o, &r, &err), SD_OK, "%s: %s", name, err.msg);
    cr_expect_eq(r.unbiased, want, "%s k=%g gamma=%g: p-value %.3g (chi2 %.1f, dof %.0f)", name, k, gamma,
              r.chi.p_value, r.chi.chi2, r.chi.dof);
    sd_check_result_free(&r);
    sd_chain_free(c);
}

static void S_check(const char *name, double k, double gamma, unsigned long seed);

Test(md_verifiers, onehot_is_lossless)
{
    S_check("onehot", 1, 1, 101);
    S_check("onehot", 3, 2, 102);
}

Test(md_verifiers, strict_is_lossless)
{
    S_check("strict", 1, 1, 103);
    S_check("strict", 3, 2, 104);
}

static void S_check(const char *name, double k, double gamma, unsigned long seed)
{
    S_check_verdict(name, k, gamma, seed, 1);
}

Test(md_verifiers, broken_onehot_is_flagged)
{
    S_check_verdict("broken-onehot", 1, 1, 105, 0);
}

/* At one draft (k = 1, gamma = 1) and horizon T = 1 an iteration accepts
 * with probability E_{x0 ~ init} sum_x p_1(x|x0) q_1(x|x0) for both onehot
 * and strict (engines accept less than sum min(p, q)).  Tolerance 4 standard
 * errors of the Monte-Carlo mean (a two-sided 6e-5 false-alarm rate). */
#include "../sims/engine/sd_sim.h"

static void S_accept_pq(const char *name, unsigned long seed)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt);
    sd_chain *c = tu_chain(5, 1, 11);
    cr_assert_not_null(c);
    double want = 0.0;
    for (size_t a = 0; a < c->V; a++) {
        const double *p = sd_chain_p(c, 1, a), *q = sd_chain_q(c, 1, a);
        for (size_t x = 0; x < c->V; x++)
            want += c->init[a] * p[x] * q[x];
    }
    sd_params par;
    sd_params_defaults(&par, vt);
    tu_par(&par, "k", 1);
    tu_par(&par, "gamma", 1);
    sd_sim_opts o = {.seed = seed, .trials = 400000, .threads = 1};
    sd_sim_result r;
    sd_error err;
    cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, &err), SD_OK, "%s", err.msg);
    double se = sqrt(r.accepted.m2 / (r.accepted.n - 1) / r.accepted.n);
    cr_expect(fabs(r.accepted.mean - want) < 4 * se, "%s: accepted %.6f +- %.6f, sum p q %.6f",
              name, r.accepted.mean, se, want);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

Test(md_verifiers, one_draft_accepts_sum_p_q)
{
    S_accept_pq("onehot", 201);
    S_accept_pq("strict", 202);
}
