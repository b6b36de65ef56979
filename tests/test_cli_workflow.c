/* test_cli_workflow.c — sweeps, paired comparisons, self-describing
 * output, input messages, the speed-up model, the SHA-256 of model files:
 * suite cli_workflow. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/exact/sd_speedup.h"
#include "../src/sd_sha256.h"
#include "../src/sd_version.h"
#include "test_util.h"

static size_t S_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli_workflow, sweep_csv_has_one_header_and_a_row_per_point)
{
    char *out;
    cr_assert_eq(tu_run("run --algo token,block --gamma 2,4 --trials 300 --csv", &out, NULL), 0);
    cr_expect_eq(S_lines(out), 5, "%s", out);
    cr_expect(strncmp(out, "algo,gamma,", 11) == 0, "%s", out);
    cr_expect(tu_contains(out, "\ntoken,2,") && tu_contains(out, "\ntoken,4,") &&
              tu_contains(out, "\nblock,2,") && tu_contains(out, "\nblock,4,"), "%s", out);
    cr_expect(tu_contains(out, "," SD_VERSION ","), "%s", out);
    free(out);
    /* a range of a count */
    cr_assert_eq(tu_run("run --algo block --gamma 1..3 --trials 300 --csv", &out, NULL), 0);
    cr_expect_eq(S_lines(out), 4, "%s", out);
    free(out);
}

Test(cli_workflow, sweep_points_share_common_random_numbers)
{
    /* Each point of a sweep is the run of that point alone: same seed,
     * same streams, same bytes of the statistics. */
    char *a, *b;
    cr_assert_eq(tu_run("run --algo token,block --gamma 3 --trials 500 --json --threads 1", &a, NULL), 0);
    cr_assert_eq(tu_run("run --algo block --gamma 3 --trials 500 --json --threads 2", &b, NULL), 0);
    json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
    cr_assert(json_is_array(ja) && json_array_size(ja) == 2);
    json_t *p = json_array_get(ja, 1);
    cr_expect(json_equal(json_object_get(p, "rejections"), json_object_get(jb, "rejections")));
    cr_expect(json_equal(json_object_get(p, "params"), json_object_get(jb, "params")));
    json_decref(ja);
    json_decref(jb);
    free(a);
    free(b);
}

Test(cli_workflow, paired_difference_is_the_difference_of_means)
{
    char *out;
    cr_assert_eq(tu_run("run --algo token,block --gamma 4 --paired --trials 2000 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(json_is_array(j));
    json_t *a = json_array_get(j, 0), *b = json_array_get(j, 1), *pd = json_object_get(b, "paired");
    cr_assert(json_is_object(pd), "%s", out);
    double ma = json_real_value(json_object_get(json_object_get(a, "target_calls"), "mean"));
    double mb = json_real_value(json_object_get(json_object_get(b, "target_calls"), "mean"));
    json_t *d = json_object_get(pd, "target_calls");
    /* the mean of differences is the difference of means (up to rounding) */
    cr_expect(fabs(json_real_value(json_object_get(d, "difference")) - (mb - ma)) < 1e-9);
    cr_expect(json_real_value(json_object_get(d, "stderr")) > 0.0);
    cr_expect(json_real_value(json_object_get(d, "unpaired_stderr")) > 0.0);
    json_decref(j);
    free(out);
}

Test(cli_workflow, json_is_self_describing)
{
    char *out;
    cr_assert_eq(tu_run("run --algo block --gamma 3 --trials 500 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(j);
    const char *keys[] = {"version", "threads", "ranks", "seconds", "seed", "trials", "params", "model",
                          "tokens_per_call_stderr", "tokens_per_call_ci95", "baseline_exact_target_calls",
                          "token_exact_target_calls", "stopped"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect(json_object_get(j, keys[i]) != NULL, "%s missing", keys[i]);
    /* the alias equals the new key */
    cr_expect(json_equal(json_object_get(j, "baseline_exact_target_calls"),
                         json_object_get(j, "token_exact_target_calls")));
    /* tokens per call's CI is the calls' CI mapped through T/x */
    json_t *ci = json_object_get(json_object_get(j, "target_calls"), "ci95");
    json_t *tci = json_object_get(j, "tokens_per_call_ci95");
    cr_expect(fabs(json_real_value(json_array_get(tci, 0)) - 50.0 / json_real_value(json_array_get(ci, 1))) < 1e-12);
    json_decref(j);
    free(out);
}

Test(cli_workflow, model_file_identity_is_its_sha256)
{
    char *out;
    char *path = tu_tempfile("");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "gen --V 3 --T 4 -o %s", path);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    free(out);
    char hex[65];
    cr_assert_eq(sd_sha256_file(path, hex, NULL), SD_OK);
    snprintf(cmd, sizeof cmd, "run --model %s --trials 100 --json", path);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_expect(tu_contains(out, hex), "%s", out);
    free(out);
    remove(path);
    free(path);
}

Test(cli_workflow, sha256_known_answers)
{
    /* FIPS 180-2 examples: "abc" and the two-block message. */
    sd_sha256 s;
    char hex[65];
    sd_sha256_init(&s);
    sd_sha256_update(&s, "abc", 3);
    sd_sha256_hex(&s, hex);
    cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sd_sha256_init(&s);
    sd_sha256_update(&s, m, strlen(m));
    sd_sha256_hex(&s, hex);
    cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(cli_workflow, refusals_and_suggestions)
{
    char *out, *err;
    cr_expect_eq(tu_run("run --json --csv", &out, &err), 64);
    cr_expect(tu_contains(err, "--json and --csv"), "%s", err);
    free(out);
    free(err);
    struct {
        const char *cmd, *want;
    } cases[] = {
        {"run --gama 3", "did you mean '--gamma'?"},
        {"run --algo blok", "did you mean 'block'?"},
        {"eval rejection", "did you mean 'rejections'?"},
        {"rn", "did you mean 'run'?"},
        {"check --algo tokne", "did you mean 'token'?"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(tu_run(cases[i].cmd, &out, &err), 64, "%s", cases[i].cmd);
        cr_expect(tu_contains(err, cases[i].want), "%s: %s", cases[i].cmd, err);
        free(out);
        free(err);
    }
}

Test(cli_workflow, target_stderr_says_when_not_reached)
{
    char *out;
    cr_assert_eq(tu_run("run --target-stderr 1e-6 --trials 4096 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(j, "stopped")), "trials-cap");
    cr_expect(json_is_false(json_object_get(j, "target_reached")));
    json_decref(j);
    free(out);
    /* without --trials the cap is raised: a reachable target stops the run */
    cr_assert_eq(tu_run("run --target-stderr 0.05 --json", &out, NULL), 0);
    j = json_loads(out, 0, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(j, "stopped")), "target-stderr");
    cr_expect(json_is_true(json_object_get(j, "target_reached")));
    json_decref(j);
    free(out);
}

Test(cli_workflow, tol_accepts_single_precision_rows)
{
    const char *text = "{\"format\": \"simdec-chain-1\", \"vocab\": 2, \"horizon\": 1,"
                       " \"init\": [0.5, 0.5],"
                       " \"draft\": [[0.6, 0.40000001], [0.5, 0.5]],"
                       " \"target\": [[0.3, 0.7], [0.5, 0.5]]}";
    char *path = tu_tempfile(text), cmd[600], *out, *err;
    snprintf(cmd, sizeof cmd, "run --model %s --trials 100", path);
    cr_expect_eq(tu_run(cmd, &out, &err), 65, "%s", err);
    cr_expect(tu_contains(err, "--tol"), "%s", err);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "run --model %s --trials 100 --tol 1e-6 --json", path);
    cr_expect_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    json_t *j = json_loads(out, 0, NULL);
    double dev = json_real_value(json_object_get(json_object_get(j, "model"), "row_max_deviation"));
    cr_expect(fabs(dev - 1e-8) < 1e-12, "%g", dev);
    json_decref(j);
    free(out);
    free(err);
    remove(path);
    free(path);
}

Test(cli_workflow, speedup_reduces_to_leviathan_in_the_iid_limit)
{
    /* Leviathan et al. 2023, §3.4: (1 - α^{γ+1}) / ((1 - α)(γc + 1)) for
     * i.i.d. tokens; the limit is the renewal-reward rate of one iteration's
     * exact law (sims/exact/sd_speedup.h), so the two agree to rounding. */
    const char *cases[] = {"--p 0.6,0.4 --q 0.2,0.8 --gamma 3 --c 0.2",
                           "--p 0.5,0.3,0.2 --q 0.3,0.4,0.3 --gamma 6 --c 0.05",
                           "--p 0.9,0.1 --q 0.85,0.15 --gamma 8 --c 0.5"};
    for (size_t i = 0; i < 3; i++) {
        char cmd[300], *out;
        snprintf(cmd, sizeof cmd, "eval speedup --algo token %s --json", cases[i]);
        cr_assert_eq(tu_run(cmd, &out, NULL), 0, "%s", cmd);
        json_t *j = json_loads(out, 0, NULL);
        json_t *p = json_array_get(json_object_get(j, "points"), 0);
        double lim = json_real_value(json_object_get(p, "speedup_iid_limit"));
        double lev = json_real_value(json_object_get(p, "leviathan"));
        cr_expect(fabs(lim - lev) < 1e-9, "%s: %.15g vs %.15g", cases[i], lim, lev);
        json_decref(j);
        free(out);
    }
    cr_expect(fabs(sd_speedup_leviathan(1.0, 4, 0.25) - 2.5) < 1e-15);
}

Test(cli_workflow, speedup_best_gamma_is_the_maximum)
{
    char *out;
    cr_assert_eq(tu_run("eval speedup --algo token --gamma best --gamma-max 10 --c 0.1 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    json_t *pts = json_object_get(j, "points");
    cr_assert_eq(json_array_size(pts), 10);
    double best = json_real_value(json_object_get(j, "best_speedup"));
    for (size_t i = 0; i < 10; i++)
        cr_expect(json_real_value(json_object_get(json_array_get(pts, i), "speedup")) <= best);
    json_decref(j);
    free(out);
}
