/* test_rb.c — the Rao-Blackwellised estimate of rejections (sd_iter.rb_rejected,
 * run --estimator rb): unbiased against Theorem 1 of Yin et al. 2024 (token,
 * kernel and generic step), against the same trials' plain counts (paired,
 * block and biased, where no exact value exists), a deliberately wrong
 * conditional expectation that the paired test must catch, bit-identical
 * results across thread counts, and the CLI.  Never timing.
 *
 * Tolerances are 4 standard errors: with a fixed seed a correct estimator
 * fails with probability ~6e-5 per comparison. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_tokenwise.h"
#include "../src/sd_exact.h"
#include "test_util.h"

static sd_sim_result S_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           uint64_t trials, unsigned threads, int generic, int per_trial)
{
    sd_sim_opts o = {.seed = 7, .trials = trials, .threads = threads, .generic = generic,
                     .want_per_trial = per_trial, .want_rb = 1};
    sd_sim_result r;
    sd_error err;
    cr_assert_eq(sd_sim_run(vt, c, par, &o, &r, &err), SD_OK, "%s", err.msg);
    return r;
}

/* |mean - exact| < 4 se for both estimates, and the rb variance below the plain one. */
static void S_against_exact(const sd_sim_result *r, double exact, const char *what)
{
    cr_assert(sd_sim_has_rb(r), "%s: no rb estimate", what);
    double se = sd_welford_stderr(&r->rejections_rb), sp = sd_welford_stderr(&r->rejections);
    cr_expect(fabs(r->rejections_rb.mean - exact) < 4.0 * se, "%s: rb %.6f exact %.6f se %.2e", what,
              r->rejections_rb.mean, exact, se);
    cr_expect(fabs(r->rejections.mean - exact) < 4.0 * sp, "%s: plain %.6f exact %.6f se %.2e", what,
              r->rejections.mean, exact, sp);
}

Test(rb_token, kernel_and_step_agree_with_theorem1_and_the_dp)
{
    sd_chain *c = tu_chain(7, 50, 10);
    cr_assert_not_null(c);
    const sd_verifier_type *vt = sd_verifier_find("token");
    const size_t gammas[] = {0, 1, 3};
    for (size_t g = 0; g < 3; g++) {
        sd_params par;
        sd_params_defaults(&par, vt);
        par.gamma = gammas[g];
        double rej, calls;
        cr_assert_eq(sd_exact_token(c, par.gamma, &rej, &calls, NULL), SD_OK);
        for (int generic = 0; generic <= 1; generic++) {
            sd_sim_result r = S_run(vt, c, &par, generic ? 20000 : 200000, 2, generic, 0);
            cr_assert_str_eq(r.kernel, generic ? "generic" : "token-alias");
            char what[64];
            snprintf(what, sizeof what, "token gamma %zu %s", par.gamma, r.kernel);
            S_against_exact(&r, rej, what);
            sd_sim_result_free(&r);
        }
    }
    sd_chain_free(c);
}

Test(rb_token, variance_at_least_30x_smaller_on_the_default_chain)
{
    /* The target on `simdec run`'s default chain (V = 7, T = 50,
     * model-seed 10): measured 43x (docs/performance.md).  The ratio of two
     * sample variances of 10^5 trials has a relative error of ~1%, far from
     * the 30x line. */
    sd_chain *c = tu_chain(7, 50, 10);
    const sd_verifier_type *vt = sd_verifier_find("token");
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_result r = S_run(vt, c, &par, 100000, 2, 0, 0);
    double ratio = sd_welford_var(&r.rejections) / sd_welford_var(&r.rejections_rb);
    cr_expect(ratio >= 30.0, "variance ratio %.2f", ratio);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

/* Paired: the per-trial difference plain - rb has mean 0 exactly when rb is
 * unbiased; returns its z-score. */
static double S_paired_z(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                         uint64_t trials)
{
    sd_sim_result r = S_run(vt, c, par, trials, 2, 1, 1);
    sd_welford d;
    sd_welford_init(&d);
    for (uint64_t t = 0; t < r.trials; t++)
        sd_welford_add(&d, (double)r.per_trial[t].rejections - r.per_trial[t].rb_rejections);
    double z = d.mean / sd_welford_stderr(&d);
    sd_sim_result_free(&r);
    return z;
}

Test(rb_paired, block_and_biased_are_unbiased)
{
    sd_chain *c = tu_chain(6, 20, 3);
    sd_chain *z = tu_zero_chain(5, 12, 4);
    struct {
        const char *algo;
        double eps, residual;
        size_t gamma;
    } cases[] = {{"block", 0, 0, 0}, {"block", 0, 0, 3}, {"broken-block-residual", 0, 0, 4},
                 {"biased", 0.05, 0, 0}, {"biased", 0.1, 1, 3}, {"token", 0, 0, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int zc = 0; zc <= 1; zc++) {
            const sd_verifier_type *vt = sd_verifier_find(cases[i].algo);
            cr_assert_not_null(vt);
            sd_params par;
            sd_params_defaults(&par, vt);
            par.gamma = cases[i].gamma;
            tu_vpar(&par, vt, "eps", cases[i].eps);
            tu_vpar(&par, vt, "residual", cases[i].residual);
            double zs = S_paired_z(vt, zc ? z : c, &par, 20000);
            cr_expect(fabs(zs) < 4.0, "%s gamma %zu eps %g on %s chain: plain - rb z = %.2f", cases[i].algo,
                      cases[i].gamma, cases[i].eps, zc ? "zero" : "generated", zs);
        }
    sd_chain_free(c);
    sd_chain_free(z);
}

/* The control: biased acceptance min(1, (q+eps)/p) whose conditional
 * expectation forgets eps (TV(p,q), the standard rule's) — a plausible slip
 * the paired test must flag. */
static int S_ctl_accept(const sd_token_rule *rule, double u, double px, double qx)
{
    return u * px < qx + rule->eps;
}

static int S_ctl_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                      size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)err;
    sd_token_rule rule = sd_token_rule_standard;
    rule.accept = S_ctl_accept;
    rule.eps = 0.1;
    it->rb_rejected = 0.0;
    sd_tokenwise_verify(&rule, c, rng, n, 0, sd_draft_len(c, par, n), prev, out, it);
    return SD_OK;
}

static int S_ctl_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL;
    return SD_OK;
}

Test(rb_paired, flags_a_wrong_conditional_expectation)
{
    static const sd_param_decl decls[] = {SD_PARAM_GAMMA, SD_PARAM_END};
    const sd_verifier_type ctl = {.name = "rb-control", .summary = "control", .params = decls,
                                  .alloc = S_ctl_alloc, .step = S_ctl_step};
    sd_chain *c = tu_chain(6, 20, 3);
    sd_params par;
    sd_params_defaults(&par, &ctl);
    double zs = S_paired_z(&ctl, c, &par, 20000);
    cr_expect(fabs(zs) > 4.0, "the wrong rb went unnoticed: z = %.2f", zs);
    sd_chain_free(c);
}

Test(rb_engine, bit_identical_across_threads_and_absent_where_not_given)
{
    sd_chain *c = tu_chain(5, 12, 10);
    const char *algos[] = {"token", "block", "biased"};
    for (size_t i = 0; i < 3; i++) {
        const sd_verifier_type *vt = sd_verifier_find(algos[i]);
        sd_params par;
        sd_params_defaults(&par, vt);
        sd_sim_result a = S_run(vt, c, &par, 3 * SD_SIM_BLOCK + 17, 1, 0, 0);
        sd_sim_result b = S_run(vt, c, &par, 3 * SD_SIM_BLOCK + 17, 3, 0, 0);
        cr_expect_eq(memcmp(&a.rejections_rb, &b.rejections_rb, sizeof a.rejections_rb), 0, "%s", algos[i]);
        sd_sim_result_free(&a);
        sd_sim_result_free(&b);
    }
    const sd_verifier_type *batch = sd_verifier_find("batch");
    sd_params par;
    sd_params_defaults(&par, batch);
    sd_sim_result r = S_run(batch, c, &par, 100, 1, 0, 0);
    cr_expect(!sd_sim_has_rb(&r), "batch gives no conditional expectation yet");
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

Test(rb_cli, estimator_option)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(tu_run("run --trials 5000 --json", &out, NULL), 0);
    cr_expect(tu_contains(out, "\"estimator\": \"rb\""), "%s", out);
    cr_expect(tu_contains(out, "\"rejections_rb\": {"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --trials 5000 --estimator plain --json", &out, NULL), 0);
    cr_expect(tu_contains(out, "\"rejections_rb\": null"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --trials 5000", &out, NULL), 0);
    cr_expect(tu_contains(out, "rejections (RB)"), "%s", out);
    cr_expect(tu_contains(out, "setup "), "%s", out);
    free(out);
    cr_expect_eq(tu_run("run --trials 100 --algo batch --estimator rb", NULL, &err), 64);
    cr_expect(tu_contains(err, "--estimator rb: --algo batch"), "%s", err);
    free(err);
    cr_expect_eq(tu_run("run --estimator median", NULL, &err), 64);
    cr_expect(tu_contains(err, "--estimator: expected rb or plain, got 'median'"), "%s", err);
    free(err);
}
