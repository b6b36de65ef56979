/* test_cli_exact.c — `simdec eval ...` as the user sees it: JSON keys,
 * values equal to the library's, help, errors and exit codes: suite
 * cli_exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/sd_exact.h"
#include "../src/sd_exact_batch.h"
#include "../src/sd_exact_single.h"
#include "test_exact_util.h"
#include "test_util.h"

/* The toy model of Sun et al. 2025, §2 on the command line. */
#define TOY "--p 0.66666666666666667,0.33333333333333333 --q 0.33333333333333333,0.66666666666666667"

static void S_expect_fail(const char *args, int code, const char *fragment)
{
    char *out, *err;
    int st = tu_run(args, &out, &err);
    cr_expect_eq(st, code, "'%s': exit %d, expected %d; stderr: %s", args, st, code, err);
    cr_expect(tu_contains(err, fragment), "'%s': stderr '%s' lacks '%s'", args, err, fragment);
    cr_expect_eq(out[0], '\0', "'%s' printed on stdout: %s", args, out);
    free(out);
    free(err);
}

Test(cli_exact, rejections_theorem1_theorem3_and_limit)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    sd_chain *c = sd_chain_generate(&gp, NULL);
    double t1, t3, inf;
    cr_assert_eq(sd_exact_rejections(c, &t1, NULL), SD_OK);
    cr_assert_eq(sd_exact_batch_rejections(c, 4, &t3, NULL), SD_OK);
    cr_assert_eq(sd_exact_batch_rejections_inf(c, &inf, NULL), SD_OK);
    cr_expect(fabs(tx_cli_number("eval rejections", "rejections") - t1) < 1e-13);
    cr_expect(fabs(tx_cli_number("eval rejections --M 4", "rejections") - t3) < 1e-13);
    cr_expect(fabs(tx_cli_number("eval rejections --M 4", "rejections_dp") - t3) < 1e-12);
    cr_expect(fabs(tx_cli_number("eval rejections --M inf", "rejections") - inf) < 1e-13);
    cr_expect(fabs(tx_cli_number("eval batch-improvement --M 4", "batch_improvement") - (t1 - t3)) < 1e-12);
    sd_chain_free(c);
    /* one token: the rejection probability Π TV(q^m, p); Ber example
     * draft Ber(0.5), target Ber(0.2): (u-v) u^{M-1} = 0.3 * 0.25 */
    cr_expect(fabs(tx_cli_number("eval rejections --M 3 --p 0.5,0.5 --q 0.8,0.2", "rejections") - 0.075) < 1e-15);
    cr_expect(fabs(tx_cli_number("eval rejections --M inf --p 1,0 --q 0.5,0.5", "rejections") - 0.5) < 1e-15);
    /* with --T the single-token problem is a chain: T tokens, fresh each time
     * only after a rejection */
    double v = tx_cli_number("eval rejections --M 2 --T 3 --p 0.5,0.5 --q 0.8,0.2", "rejections");
    cr_expect(isfinite(v) && v > 0.075);
}

Test(cli_exact, batch_improvement_single_token)
{
    /* BI(Ber(v), Ber(u)) = |u-v| (1 - u^{M-1}): u = 0.5, v = 0.2, M = 3 */
    double bi = tx_cli_number("eval batch-improvement --M 3 --p 0.5,0.5 --q 0.8,0.2", "batch_improvement");
    cr_expect(fabs(bi - 0.3 * 0.75) < 1e-15, "%.17g", bi);
    /* uniform: V = 4, V' = 1, r = 4: (3/4) - (3/4)^2 */
    bi = tx_cli_number("eval batch-improvement --M 2 --p 0.25,0.25,0.25,0.25 --q 1,0,0,0", "batch_improvement");
    cr_expect(fabs(bi - (0.75 - 0.5625)) < 1e-15, "%.17g", bi);
    S_expect_fail("eval batch-improvement --p 0.5,0.5 --q 0.8,0.2", 64, "--M is required");
}

Test(cli_exact, pareto_keys_and_sum)
{
    const char *a = "eval pareto --eps 0.1 --p 0.6,0.3,0.1 --q 0.2,0.3,0.5";
    double rej = tx_cli_number(a, "reject_prob"), loss = tx_cli_number(a, "loss_tv"),
           tv = tx_cli_number(a, "tv");
    cr_expect(fabs(rej - 0.3) < 1e-15 && fabs(tv - 0.4) < 1e-15, "%g %g", rej, tv);
    cr_expect(fabs(rej + loss - tv) < 1e-15);
    /* a model row */
    rej = tx_cli_number("eval pareto --eps 0.02 --step 3 --state 4", "reject_prob");
    loss = tx_cli_number("eval pareto --eps 0.02 --step 3 --state 4", "loss_tv");
    tv = tx_cli_number("eval pareto --eps 0.02 --step 3 --state 4", "tv");
    cr_expect(isfinite(rej) && fabs(rej + loss - tv) < 1e-14);
    S_expect_fail("eval pareto --p 0.5,0.5 --q 0.8,0.2", 64, "--eps is required");
    S_expect_fail("eval pareto --eps 0.1 --gamma 2", 64, "does not apply");
    S_expect_fail("eval pareto --eps 0.1 --step 60", 64, "--step 60");
}

Test(cli_exact, accept_length_toy_and_limits)
{
    static const char *algos[] = {"token", "block", "full"};
    static const double g2[] = {10.0 / 9, 11.0 / 9, 12.0 / 9}, g3[] = {38.0 / 27, 5.0 / 3, 50.0 / 27};
    char a[512];
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "eval accept-length --gamma 2 --algo %s " TOY, algos[i]);
        double v = tx_cli_number(a, "expected_accepted");
        cr_expect(fabs(v - g2[i]) < 1e-12, "%s γ=2: %.17g", algos[i], v);
        snprintf(a, sizeof a, "eval accept-length --gamma 3 --algo %s " TOY, algos[i]);
        v = tx_cli_number(a, "expected_accepted");
        cr_expect(fabs(v - g3[i]) < 1e-12, "%s γ=3: %.17g", algos[i], v);
    }
    cr_expect(isfinite(tx_cli_number("eval accept-length --gamma 3 --step 48 --state 2", "expected_accepted")));
    S_expect_fail("eval accept-length --gamma 4 --step 48 --state 2", 64, "horizon");
    S_expect_fail("eval accept-length --gamma 8 --V 10", 65, "limit");
    /* i.i.d. rows beyond the enumeration: the O(V) evaluator (src/sd_accept_iid.h); p = q accepts
     * every draft, so even its Monte-Carlo terms are exactly 1 */
    cr_expect_float_eq(tx_cli_number("eval accept-length --gamma 9 --p 0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1 "
                                     "--q 0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1 --trials 100", "expected_accepted"),
                       9.0, 1e-12);
    S_expect_fail("eval accept-length --gamma 2 --algo best " TOY, 64, "--algo");
    S_expect_fail("eval accept-length " TOY, 64, "--gamma is required");
}

Test(cli_exact, acceptance_and_sprinter)
{
    /* draft Ber(0.75), target Ber(0.4), k = 3: 0.4 + min(0.6, 1 - 0.75^3) */
    const char *pq = "--p 0.25,0.75 --q 0.6,0.4 --k 3";
    char a[256];
    snprintf(a, sizeof a, "eval acceptance %s", pq);
    cr_expect(fabs(tx_cli_number(a, "acceptance") - 0.978125) < 1e-15);
    snprintf(a, sizeof a, "eval acceptance --algo rrs %s", pq);
    cr_expect(fabs(tx_cli_number(a, "acceptance") - (1 - 0.35 * 0.75 * 0.75)) < 1e-15);
    snprintf(a, sizeof a, "eval acceptance --algo kseq %s", pq);
    double ks = tx_cli_number(a, "acceptance");
    cr_expect(ks > 0.5 && ks <= 0.978125, "%g", ks);
    S_expect_fail("eval acceptance --algo lp --p 0.5,0.5 --q 0.5,0.5", 64, "--algo");
    S_expect_fail("eval acceptance --p 0.5,0.5 --q 0.5,0.4,0.1", 64, "same vocabulary");

    const char *s = "eval sprinter --tp 0.9 --fp 0.5 --r 5 --td 0.1";
    double en = tx_cli_number(s, "expected_tokens"), et = tx_cli_number(s, "expected_stop_time");
    double pw = pow(0.9, 5);
    cr_expect(fabs(en - ((0.9 - pw) / 0.1 + pw / 0.5)) < 1e-12, "%.17g", en);
    cr_expect(fabs(et - ((1 - pw) * 0.1 / 0.1 + pw * 0.1 / 0.5)) < 1e-12, "%.17g", et);
    cr_expect(fabs(tx_cli_number("eval sprinter --tp 0.5 --fp 0.2 --r 2 --p 0.5,0.5 --q 0.9,0.1",
                                 "bias_tv") - 0.08) < 1e-15);
    S_expect_fail("eval sprinter --tp 0.5 --r 3", 64, "required");
    S_expect_fail("eval sprinter --tp 1.5 --fp 0 --r 3", 64, "--tp");
    char *out, *err;
    cr_expect_eq(tu_run("eval sprinter --tp 0.5 --fp 1 --r 3 --json", &out, &err), 0);
    cr_expect(tu_contains(out, "\"expected_tokens\": null"), "%s", out);
    free(out);
    free(err);
}

Test(cli_exact, help_and_table)
{
    static const char *subs[] = {"rejections", "batch-improvement", "pareto", "accept-length",
                                 "acceptance", "sprinter"};
    char a[128];
    for (int i = 0; i < 6; i++) {
        char *out, *err;
        snprintf(a, sizeof a, "eval %s --help", subs[i]);
        cr_expect_eq(tu_run(a, &out, &err), 0, "%s", a);
        cr_expect(tu_contains(out, "Usage: simdec eval"), "%s: %s", a, out);
        free(out);
        free(err);
    }
    char *out, *err;
    cr_expect_eq(tu_run("eval --help", &out, &err), 0);
    cr_expect(tu_contains(out, "accept-length") && tu_contains(out, "sprinter"));
    free(out);
    free(err);
    cr_expect_eq(tu_run("eval accept-length --gamma 2 " TOY, &out, &err), 0);
    cr_expect(tu_contains(out, "1.222222222222"), "%s", out);
    free(out);
    free(err);
    cr_expect_eq(tu_run("eval accept-length --help", &out, &err), 0);
    cr_expect(tu_contains(out, "10^7"), "the limit is stated: %s", out);
    free(out);
    free(err);
    S_expect_fail("eval nonsense", 64, "unknown evaluator");
    S_expect_fail("eval rejections --M 0", 64, "--M");
    S_expect_fail("eval rejections --bogus", 64, "unknown option");
}
