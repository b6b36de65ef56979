/* test_bias.c — the per-token bias of `run` (sims/engine/sd_bias.h): the exact
 * laws of the output tokens against the law of the first n tokens, the
 * target and Monte-Carlo; the estimate against the exact value; the CLI's
 * keys and lines. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_bias.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_exact.h"
#include "test_util.h"

/* Laws with the per-depth token law (Markov inside the iteration: token,
 * biased, sprinter, batch, rrs, coin; to the horizon and with a bonus) and
 * laws listing their tokens (block, broken-block-residual). */
static const tu_conf S_confs[] = {
    {"token", {NULL, NULL}, {0, 0}, NULL},
    {"token", {"gamma", NULL}, {2, 0}, NULL},
    {"block", {"gamma", NULL}, {2, 0}, NULL},
    {"broken-block-residual", {"gamma", NULL}, {2, 0}, NULL},
    {"batch", {"M", "gamma"}, {2, 3}, NULL},
    {"broken-batch", {"M", NULL}, {1, 0}, NULL},
    {"rrs", {"k", "gamma"}, {2, 2}, NULL},
    {"spectr", {"k", "gamma"}, {2, 2}, NULL},
    {"biased", {"eps", NULL}, {0.1, 0}, NULL},
    {"biased", {"eps", "gamma"}, {0.1, 2}, NULL},
    {"sprinter", {"tp", "fp"}, {0.6, 0.3}, NULL},
    {"sprinter", {"tp", "fp"}, {0.6, 0.0}, NULL},
    {"broken-coin", {NULL, NULL}, {0, 0}, NULL},
    {"broken-token-kernel", {"gamma", NULL}, {3, 0}, NULL},
};
#define S_NCONF (sizeof S_confs / sizeof *S_confs)

/* The law of x_n is the marginal of the law of (x_1..x_n), which
 * sd_exact_gen_prefix_law enumerates path by path (what `check --exact`
 * compares): the same sums grouped otherwise, so equal to 1e-12 per token
 * and in TV per position. */
Test(bias, token_laws_are_the_marginals_of_the_prefix_laws)
{
    sd_chain *c = tu_chain(3, 5, 4);
    size_t V = c->V, T = c->T;
    double marg[5 * 3], tv[5], *joint = malloc(243 * sizeof *joint);
    cr_assert_not_null(joint);
    for (size_t i = 0; i < S_NCONF; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &S_confs[i]);
        sd_error err;
        double max;
        size_t at = 0;
        cr_assert_eq(sd_exact_gen_marginals(vt, c, &par, marg, &err), SD_OK, "%s: %s", vt->name, err.msg);
        cr_assert_eq(sd_bias_exact(vt, c, &par, tv, &max, &at, &err), SD_OK, "%s: %s", vt->name, err.msg);
        cr_expect(at >= 1 && at <= T && tv[at - 1] == max, "%s: max %g at n = %zu", vt->name, max, at);
        for (size_t n = 1; n <= T; n++) {
            size_t cells = 1;
            for (size_t j = 0; j < n; j++)
                cells *= V;
            cr_assert_eq(sd_exact_gen_prefix_law(vt, c, &par, n, cells, joint, &err), SD_OK, "%s", err.msg);
            double m[3] = {0, 0, 0};
            for (size_t k = 0; k < cells; k++)
                m[k % V] += joint[k];
            for (size_t b = 0; b < V; b++)
                cr_expect(fabs(m[b] - marg[(n - 1) * V + b]) < 1e-12, "%s (conf %zu) n = %zu, x = %zu: %.17g vs %.17g",
                          vt->name, i, n, b, marg[(n - 1) * V + b], m[b]);
            if (n == 1) { /* check --exact --L 1 */
                double tv1;
                cr_assert_eq(sd_exact_gen_prefix_tv(vt, c, &par, 1, 3, &tv1, &err), SD_OK, "%s", err.msg);
                cr_expect(fabs(tv1 - tv[0]) < 1e-12, "%s: TV at n = 1 %.17g vs %.17g", vt->name, tv[0], tv1);
            }
        }
    }
    free(joint);
    sd_chain_free(c);
}

/* Zero for what claims to be lossless (and is: not a control), positive
 * for the lossy settings and the controls, on the default chain with the
 * laws to the horizon (V^T token sequences no enumeration could list). */
Test(bias, exact_bias_is_zero_exactly_when_lossless)
{
    sd_chain *c = tu_chain(7, 50, 10);
    for (size_t i = 0; i < S_NCONF; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &S_confs[i]);
        sd_error err;
        double max;
        size_t at;
        int rc = sd_bias_exact(vt, c, &par, NULL, &max, &at, &err);
        if (rc == SD_ETOOBIG) /* block: V^gamma blocks per iteration, listed */
            continue;
        cr_assert_eq(rc, SD_OK, "%s: %s", vt->name, err.msg);
        if (sd_verifier_claims_lossless(vt, &par) && !(vt->flags & SD_VERIFIER_CONTROL))
            cr_expect(max <= 1e-12, "%s (conf %zu): exact bias %.3g", vt->name, i, max);
        else
            cr_expect(max > 1e-6, "%s (conf %zu): exact bias %.3g, expected a bias", vt->name, i, max);
    }
    sd_chain_free(c);
}

/* One run with the positions counted. */
static void S_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, uint64_t trials,
                  sd_sim_result *res)
{
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, par};
    sd_sim_opts o = {0};
    o.seed = 11;
    o.trials = trials;
    o.want_positions = 1;
    sd_error err;
    cr_assert_eq(sd_sim_run_job(&job, &o, res, &err), SD_OK, "%s", err.msg);
}

/* Monte-Carlo frequencies of every (n, x_n = b) within 4 binomial
 * standard errors of the exact law: 4 se misses a correct cell with
 * probability 6e-5, so about 2e-3 over the 32 cells of a configuration. */
Test(bias, monte_carlo_frequencies_agree_with_the_token_laws)
{
    sd_chain *c = tu_chain(4, 8, 6);
    size_t V = c->V, T = c->T;
    double marg[8 * 4];
    const tu_conf confs[] = {S_confs[8], S_confs[10], S_confs[12]};
    for (size_t i = 0; i < 3; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &confs[i]);
        cr_assert_eq(sd_exact_gen_marginals(vt, c, &par, marg, NULL), SD_OK);
        sd_sim_result res = {0};
        S_run(vt, c, &par, 100000, &res);
        double N = (double)res.trials;
        for (size_t k = 0; k < T * V; k++) {
            double f = res.pos_counts[k] / N, se = sqrt(marg[k] * (1.0 - marg[k]) / N);
            cr_expect(fabs(f - marg[k]) < 4 * se + 1e-12, "%s: n = %zu, x = %zu: %.5f vs exact %.5f (se %.2g)",
                      vt->name, k / V + 1, k % V, f, marg[k], se);
        }
        sd_sim_result_free(&res);
    }
    sd_chain_free(c);
}

/* B = (1/T) Σ_n Σ_b (P_n(b) - Q_n(b))² from the exact laws. */
static double S_exact_l2(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par)
{
    size_t V = c->V, T = c->T;
    double *P = malloc(T * V * sizeof *P), *Q = malloc((T + 1) * V * sizeof *Q), B = 0.0;
    cr_assert(P && Q);
    cr_assert_eq(sd_exact_gen_marginals(vt, c, par, P, NULL), SD_OK);
    sd_exact_target_marginals(c, Q);
    for (size_t n = 1; n <= T; n++)
        for (size_t b = 0; b < V; b++)
            B += (P[(n - 1) * V + b] - Q[n * V + b]) * (P[(n - 1) * V + b] - Q[n * V + b]);
    free(P);
    free(Q);
    return B / (double)T;
}

/* The estimate is unbiased: within 4 of its standard errors of the exact
 * B (the stderr is an upper bound, so the test is at least that strict in
 * probability: a miss has probability below 6e-5).  Lossless: B = 0 and
 * the stderr is near the noise floor. */
Test(bias, estimate_is_within_4_se_of_the_exact_value)
{
    sd_chain *c = tu_chain(5, 12, 8);
    const tu_conf confs[] = {S_confs[8], S_confs[9], S_confs[10], S_confs[12], S_confs[0]};
    for (size_t i = 0; i < 5; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &confs[i]);
        double B = S_exact_l2(vt, c, &par);
        sd_sim_result res = {0};
        S_run(vt, c, &par, 20000, &res);
        sd_bias_estimate est;
        sd_error err;
        cr_assert_eq(sd_bias_estimate_counts(res.pos_counts, res.trials, c, &est, &err), SD_OK, "%s", err.msg);
        cr_expect(fabs(est.value - B) < 4 * est.stderr, "%s (conf %zu): estimate %.3g +- %.2g, exact %.3g",
                  vt->name, i, est.value, est.stderr, B);
        cr_log_info("%s: B %.3g, estimate %.3g +- %.2g, floor %.2g", vt->name, B, est.value, est.stderr,
                    est.noise_floor);
        cr_expect(est.noise_floor > 0 && est.stderr > 0);
        if (B < 1e-20) /* lossless */
            /* the plug-in ζ1 is noise of order 1/N that 4(N-2) turns into a term like
             * ζ2: the bound is then about twice the floor, not more */
            cr_expect(est.stderr < 3 * est.noise_floor, "%s: stderr %.3g, floor %.3g", vt->name, est.stderr,
                      est.noise_floor);
        else if (B > 1e-3) /* biased and sprinter: seen well above the floor */
            cr_expect(est.value > 4 * est.noise_floor, "%s: %.3g vs floor %.3g", vt->name, est.value,
                      est.noise_floor);
        sd_sim_result_free(&res);
    }
    cr_expect_eq(sd_bias_estimate_counts(NULL, 1, c, &(sd_bias_estimate){0}, NULL), SD_EUSAGE);
    sd_chain_free(c);
}

/* Exact counts on a two-token position: the U-statistic by hand. */
Test(bias, estimate_by_hand)
{
    static const double one[2] = {0.5, 0.5};
    sd_chain *c = sd_chain_from_pq(one, one, 2, 1, NULL);
    cr_assert_not_null(c);
    /* N = 4 with counts (3, 1), Q = (1/2, 1/2): U = Σ c(c-1)/12 - Σ c/4 + 1/2
     * = (6 + 0)/12 - 1 + 1/2 = 0; floor: ζ2 = 1/4, sqrt(2 · 1/4 / 12).
     * stderr: P = (3/4, 1/4), d = (1/4, -1/4), ζ1 = Σ P d² - (Σ P d)² =
     * 1/16 - 1/64 = 3/64; h(x, y) = ±1/2 (x = y: +), P(X = Y) = 5/8, so
     * ζ2 = 1/4 - (1/8)² = 15/64; sqrt((4 · 2 · 3/64 + 2 · 15/64) / 12). */
    const double counts[2] = {3, 1};
    sd_bias_estimate est;
    cr_assert_eq(sd_bias_estimate_counts(counts, 4, c, &est, NULL), SD_OK);
    cr_expect(fabs(est.value) < 1e-15, "%.17g", est.value);
    cr_expect(fabs(est.noise_floor - sqrt(0.5 / 12.0)) < 1e-15, "%.17g", est.noise_floor);
    cr_expect(fabs(est.stderr - sqrt((24.0 / 64.0 + 30.0 / 64.0) / 12.0)) < 1e-15, "%.17g", est.stderr);
    /* N = 2, the fewest the estimate takes, counts (1, 1): U = 0 - 1 + 1/2. */
    const double two[2] = {1, 1};
    cr_assert_eq(sd_bias_estimate_counts(two, 2, c, &est, NULL), SD_OK);
    cr_expect(fabs(est.value + 0.5) < 1e-15, "%.17g", est.value);
    sd_chain_free(c);
}

static json_t *S_json(const char *args)
{
    char *out = NULL;
    cr_assert_eq(tu_run(args, &out, NULL), 0, "simdec %s", args);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s", out);
    free(out);
    return j;
}

/* run: the exact bias where the laws exist (SPRINTER with fp ~ 0 is
 * lossless: the Monte-Carlo maximum of noisy cells used to read 0.035),
 * the estimate with its stderr and floor for a plugin, and nothing for a
 * lossless verifier; the same in the table and the CSV. */
Test(bias, run_reports_the_exact_bias_or_an_estimate)
{
    json_t *j = S_json("run --algo sprinter --fp 1e-300 --trials 2000 --json");
    cr_expect(json_real_value(json_object_get(j, "exact_bias")) < 1e-12);
    cr_expect(json_is_integer(json_object_get(j, "exact_bias_position")));
    cr_expect(json_is_null(json_object_get(j, "bias_estimate")));
    json_decref(j);

    sd_chain *c = tu_chain(7, 50, 10);
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, &S_confs[9]);
    double max;
    size_t at;
    cr_assert_eq(sd_bias_exact(vt, c, &par, NULL, &max, &at, NULL), SD_OK);
    sd_chain_free(c);
    j = S_json("run --algo biased --eps 0.1 --gamma 2 --trials 1000 --json");
    cr_expect_eq(json_real_value(json_object_get(j, "exact_bias")), max);
    cr_expect_eq(json_integer_value(json_object_get(j, "exact_bias_position")), (json_int_t)at);
    json_decref(j);

    j = S_json("run --plugin build/examples/typical.so --algo typical --trials 3000 --json");
    cr_expect(json_is_null(json_object_get(j, "exact_bias")));
    json_t *e = json_object_get(j, "bias_estimate");
    cr_assert(json_is_object(e));
    double v = json_real_value(json_object_get(e, "value")), se = json_real_value(json_object_get(e, "stderr"));
    double fl = json_real_value(json_object_get(e, "noise_floor"));
    cr_expect(se > 0 && fl > 0 && v > 4 * se, "typical: %g +- %g (floor %g)", v, se, fl);
    cr_expect(tu_contains(json_string_value(json_object_get(e, "estimates")), "sum_b (P_n(b) - Q_n(b))^2"));
    json_decref(j);

    j = S_json("run --algo token --trials 500 --json");
    cr_expect(json_is_null(json_object_get(j, "exact_bias")) && json_is_null(json_object_get(j, "bias_estimate")));
    json_decref(j);

    char *out = NULL;
    cr_assert_eq(tu_run("run --algo biased --eps 0.1 --gamma 2 --trials 1000", &out, NULL), 0);
    cr_expect(tu_contains(out, "per-token bias") && tu_contains(out, "exact: max over n of TV"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --plugin build/examples/typical.so --algo typical --trials 1000", &out, NULL), 0);
    cr_expect(tu_contains(out, "per-token bias (L2^2)") && tu_contains(out, "noise floor"), "%s", out);
    cr_expect(!tu_contains(out, "Monte-Carlo max"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --algo biased --eps 0.1 --gamma 2 --trials 1000 --csv", &out, NULL), 0);
    cr_expect(tu_contains(out, ",exact_bias,exact_bias_position,bias_estimate,bias_estimate_stderr,"
                               "bias_estimate_noise_floor"), "%s", out);
    free(out);
}
