/* test_run_api.c — the run API (sims/engine/sd_run.h) called directly, as
 * simdec-mpi and the Python package do: a point's estimates beside its exact
 * values and the token baseline, the bias of a lossy verifier, paired
 * differences, and the refusal of an rb estimate a kernel cannot give. */
#include <criterion/criterion.h>
#include <math.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_run.h"
#include "../src/sd_chain.h"

/* Tolerance in standard errors: 5 se fails a correct estimate with
 * probability ~6e-7 per comparison (fixed seeds: a failure is a finding). */
#define S_TOL 5.0

static sd_chain *S_chain(void)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp); /* V = 7, T = 50 */
    gp.T = 12;
    sd_error err;
    sd_chain *c = sd_chain_generate(&gp, &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static void S_run(const sd_model *m, const char *name, const char *pname, const char *pval, int paired, int estimator,
                  sd_run_result *r)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s", name);
    sd_params par;
    sd_error err;
    sd_params_defaults(&par, vt);
    if (pname)
        cr_assert_eq(sd_params_parse(&par, vt, pname, pval, &err), 0, "%s", err.msg);
    sd_run_opts o = {.trials = 4000, .seed = 7, .threads = 1, .estimator = estimator, .paired = paired};
    cr_assert_eq(sd_run_point(m, vt, &par, &o, r, &err), 0, "%s", err.msg);
}

Test(run_api, block_agrees_with_exact_and_baseline)
{
    sd_chain *c = S_chain();
    sd_model m = sd_model_of_chain(c);
    sd_run_result r;
    S_run(&m, "block", "gamma", "3", 0, SD_RUN_RB_AUTO, &r);
    cr_assert(isfinite(r.exact.target_calls), "block at gamma 3 on V = 7 has exact values");
    double se = sd_welford_stderr(&r.sim.target_calls);
    cr_expect(fabs(r.sim.target_calls.mean - r.exact.target_calls) <= S_TOL * se, "%.6f vs exact %.6f (se %.6f)",
              r.sim.target_calls.mean, r.exact.target_calls, se);
    cr_expect_str_eq(r.baseline->name, sd_verifier_baseline()->name);
    /* block verification never needs more target calls than token-level SD (Sun et al. 2025) */
    cr_expect(r.exact.target_calls <= r.baseline_calls + 1e-12, "%.6f vs token %.6f", r.exact.target_calls,
              r.baseline_calls);
    cr_expect(isnan(r.bias_exact), "lossless: no bias computed");
    sd_run_result_free(&r);
    sd_chain_free(c);
}

Test(run_api, lossy_verifier_has_a_bias)
{
    sd_chain *c = S_chain();
    sd_model m = sd_model_of_chain(c);
    sd_run_result r;
    S_run(&m, "biased", "eps", "0.3", 0, SD_RUN_RB_AUTO, &r);
    cr_expect(isfinite(r.bias_exact) && r.bias_exact > 0.01 && r.bias_n >= 1, "exact bias %g at n = %zu",
              r.bias_exact, r.bias_n);
    sd_run_result_free(&r);
    sd_chain_free(c);
}

/* The same verifier twice on the same seed: every per-trial difference is
 * 0, so the paired difference and its stderr are exactly 0. */
Test(run_api, paired_same_point_is_zero)
{
    sd_chain *c = S_chain();
    sd_model m = sd_model_of_chain(c);
    sd_run_result a, b;
    S_run(&m, "token", NULL, NULL, 1, SD_RUN_RB_AUTO, &a);
    S_run(&m, "token", NULL, NULL, 1, SD_RUN_RB_AUTO, &b);
    sd_run_paired_stat d[SD_RUN_PAIRED_N];
    cr_assert_eq(sd_run_paired(&a, &b, d), 0);
    for (int q = 0; q < SD_RUN_PAIRED_N; q++)
        if (!isnan(d[q].diff))
            cr_expect(d[q].diff == 0.0 && d[q].se == 0.0, "quantity %d: %g (se %g)", q, d[q].diff, d[q].se);
    cr_expect(d[SD_RUN_PAIRED_CALLS].se_unpaired > 0.0);
    sd_run_result_free(&a);
    sd_run_result_free(&b);
    S_run(&m, "token", NULL, NULL, 0, SD_RUN_RB_AUTO, &a);
    S_run(&m, "token", NULL, NULL, 0, SD_RUN_RB_AUTO, &b);
    cr_expect_eq(sd_run_paired(&a, &b, d), SD_EUSAGE, "no per-trial records: cannot pair");
    sd_run_result_free(&a);
    sd_run_result_free(&b);
    sd_chain_free(c);
}

Test(run_api, rb_refused_is_a_status)
{
    sd_chain *c = S_chain();
    sd_model m = sd_model_of_chain(c);
    const sd_verifier_type *vt = sd_verifier_find("batch");
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_run_opts o = {.trials = 100, .seed = 1, .threads = 1, .estimator = SD_RUN_RB};
    sd_run_result r;
    sd_error err;
    cr_expect_eq(sd_run_point(&m, vt, &par, &o, &r, &err), SD_EUSAGE);
    cr_expect_eq(r.no_rb, 1);
    sd_run_result_free(&r);
    sd_chain_free(c);
}
