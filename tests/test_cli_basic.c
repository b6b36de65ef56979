/* test_cli_basic.c — the command-line front end: help, options, exit codes,
 * model-file errors as the user sees them, reproducibility. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

Test(cli_basic, help_and_version)
{
    const char *cmds[] = {"--help", "--version", "run --help", "gen --help", "eval --help",
                          "eval rejections --help", "check --help", "lp --help"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *out;
        int st = tu_run(cmds[i], &out, NULL);
        cr_expect_eq(st, 0, "%s: exit %d", cmds[i], st);
        cr_expect(strlen(out) > 10, "%s: no help text", cmds[i]);
        free(out);
    }
}

Test(cli_basic, option_errors)
{
    tu_expect("", 64, "Usage");
    tu_expect("frobnicate", 64, "unknown command 'frobnicate'");
    tu_expect("run --trials -1", 64, "--trials");
    tu_expect("run --trials 12x", 64, "'12x'");
    tu_expect("run --trials 1.5", 64, "--trials");
    tu_expect("run --trials nan", 64, "--trials");
    tu_expect("run --trials 0", 64, "--trials");
    tu_expect("run --seed abc", 64, "--seed");
    tu_expect("run --seed -5", 64, "--seed");
    tu_expect("run --gamma 0", 64, "--gamma");
    tu_expect("run --V 0", 64, "--V");
    tu_expect("run --T 2.5", 64, "--T");
    tu_expect("run --alpha -1", 64, "--alpha");
    tu_expect("run --mix 1.5", 64, "--mix");
    tu_expect("run --mix inf", 64, "--mix");
    tu_expect("run --algo nope", 64, "unknown verifier 'nope'");
    tu_expect("run --algo token --M 3", 64, "--M does not apply to --algo token");
    tu_expect("run --bogus", 64, "unknown option '--bogus'");
    tu_expect("run --trials", 64, "needs a value");
    tu_expect("run extra", 64, "unexpected argument 'extra'");
    tu_expect("eval nothing", 64, "unknown evaluator");
    tu_expect("run --p 0.5,0.5", 64, "both --p and --q");
    tu_expect("run --p 0.5,0.5 --q 0.2,0.3,0.5", 64, "same vocabulary");
    tu_expect("run --p 0.5,0.6 --q 0.5,0.5", 64, "sum to 1.1");
    tu_expect("run --p 0.5,,0.5 --q 0.5,0.5", 64, "empty entry");
    tu_expect("run --p 0.5,x --q 0.5,0.5", 64, "'x' is not a number");
    tu_expect("run --p 1e400,0 --q 0.5,0.5", 64, "overflows");
    tu_expect("run --p @/nonexistent/file --q 0.5,0.5", 66, "cannot open");
    tu_expect("run --model /nonexistent/model.json", 66, "cannot open");
    tu_expect("gen --model x.json", 64, "does not apply");
}

Test(cli_basic, model_file_errors)
{
    struct {
        const char *json;
        const char *fragment;
    } cases[] = {
        {"{\"format\": \"simdec-chain-1\",\n \"vocab\": 2,\n \"horizon\": }", ":3:"},
        {"not json at all", ":1:"},
        {"{\"format\":\"simdec-chain-1\",\"vocab\":2,\"horizon\":1,\"init\":[1,0],"
         "\"draft\":[[1,0],[0,1]],\"target\":[[0.2,0.2],[0,1]]}",
         "target row 0 sums to 0.4"},
        {"{\"format\":\"simdec-chain-1\",\"vocab\":2,\"horizon\":1,\"init\":[1,0],"
         "\"draft\":[[1,0],[0,1]]}",
         "missing field \"target\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *path = tu_tempfile(cases[i].json);
        char args[512];
        snprintf(args, sizeof args, "run --model %s", path);
        tu_expect(args, 65, cases[i].fragment);
        snprintf(args, sizeof args, "eval rejections --model %s", path);
        tu_expect(args, 65, path); /* the message names the file */
        unlink(path);
        free(path);
    }
    /* A model file's horizon bounds --T. */
    char *out;
    cr_assert_eq(tu_run("gen --V 3 --T 5", &out, NULL), 0);
    char *path = tu_tempfile(out);
    free(out);
    char args[512];
    snprintf(args, sizeof args, "eval rejections --model %s --T 6", path);
    tu_expect(args, 64, "horizon is 5");
    snprintf(args, sizeof args, "eval rejections --model %s --T 3", path);
    tu_expect(args, 0, NULL);
    unlink(path);
    free(path);
}

static json_t *S_json(const char *args)
{
    char *out, *err;
    int st = tu_run(args, &out, &err);
    cr_assert_eq(st, 0, "'%s' failed: %s", args, err);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    cr_assert_not_null(j, "'%s' printed invalid JSON (%s): %s", args, je.text, out);
    free(out);
    free(err);
    return j;
}

Test(cli_run, json_keys_and_reproducible)
{
    json_t *a = S_json("run --algo token --trials 2000 --seed 42 --json");
    const char *keys[] = {"algo", "vocab", "horizon", "trials", "seed", "rejections", "target_calls",
                          "tokens_per_call", "exact_rejections", "accepted_hist"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_expect_not_null(json_object_get(a, keys[i]), "missing key %s", keys[i]);
    json_t *rej = json_object_get(a, "rejections");
    cr_expect(json_is_number(json_object_get(rej, "mean")));
    cr_expect(json_is_number(json_object_get(rej, "stderr")));
    cr_expect_eq(json_array_size(json_object_get(rej, "ci95")), 2u);
    cr_expect(json_is_number(json_object_get(json_object_get(a, "target_calls"), "stderr")));
    cr_expect_eq(json_integer_value(json_object_get(a, "seed")), 42);
    /* Same seed, any thread count: the same bytes. */
    char *o1, *o2, *o3;
    tu_run("run --algo token --trials 9000 --seed 42 --json --threads 1", &o1, NULL);
    tu_run("run --algo token --trials 9000 --seed 42 --json --threads 2", &o2, NULL);
    tu_run("run --algo token --trials 9000 --seed 43 --json --threads 2", &o3, NULL);
    cr_assert(tu_same_results(o1, o2), "%s\n%s", o1, o2); /* threads and seconds aside */
    cr_expect_str_neq(o1, o3);
    free(o1);
    free(o2);
    free(o3);
    json_decref(a);
}

Test(cli_run, token_within_4_se_of_theorem1)
{
    /* The acceptance test: run --algo token lands within 4 standard
     * errors of the exact value (false-alarm rate ~6e-5 at a fixed seed). */
    json_t *a = S_json("run --algo token --T 50 --trials 20000 --seed 7 --json");
    json_t *rej = json_object_get(a, "rejections");
    double mean = json_real_value(json_object_get(rej, "mean"));
    double se = json_real_value(json_object_get(rej, "stderr"));
    double exact = json_real_value(json_object_get(a, "exact_rejections"));
    cr_expect(fabs(mean - exact) < 4 * se, "%.6f vs %.6f (se %.6f)", mean, exact, se);
    json_decref(a);
    json_t *e = S_json("eval rejections --json");
    cr_expect(fabs(json_real_value(json_object_get(e, "rejections")) - exact) < 1e-12);
    json_decref(e);
}

Test(cli_run, block_reports_its_saving_over_token)
{
    /* The token baseline printed beside another verifier is token's exact
     * expected target calls at the same draft length; block verification
     * needs fewer (Sun et al. 2025, Thm 2 implies it never needs more; here by many
     * standard errors). */
    json_t *b = S_json("run --algo block --gamma 6 --trials 4000 --json");
    json_t *t = S_json("run --algo token --gamma 6 --trials 10 --json");
    double base = json_real_value(json_object_get(b, "token_exact_target_calls"));
    cr_expect_eq(base, json_real_value(json_object_get(t, "exact_target_calls")));
    cr_expect(json_is_null(json_object_get(t, "token_exact_target_calls")));
    json_t *calls = json_object_get(b, "target_calls");
    double m = json_real_value(json_object_get(calls, "mean")), se = json_real_value(json_object_get(calls, "stderr"));
    cr_expect(m + 4 * se < base, "block %.4f (se %.4f) vs token %.4f", m, se, base);
    char *out;
    cr_assert_eq(tu_run("run --algo block --gamma 6 --trials 4000", &out, NULL), 0);
    cr_expect(tu_contains(out, "token-level SD on the same model and draft length (gamma 6) needs"), "%s", out);
    free(out);
    json_decref(b);
    json_decref(t);
}

Test(cli_run, csv_and_table)
{
    char *out;
    cr_assert_eq(tu_run("run --trials 500 --csv", &out, NULL), 0);
    /* One column per parameter (token reads gamma and draft-policy; unset: empty). */
    cr_expect(strncmp(out, "algo,gamma,draft-policy,vocab,horizon,trials,seed,", 50) == 0, "%s", out);
    cr_expect(tu_contains(out, "\ntoken,,fixed,7,50,500,1,"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --trials 500", &out, NULL), 0);
    cr_expect(tu_contains(out, "rejections"));
    cr_expect(tu_contains(out, "seed 1"));
    free(out);
}

Test(cli_gen, output_file_only_on_success)
{
    char dir[] = "/tmp/simdec-gen-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char args[512], path[300];
    snprintf(path, sizeof path, "%s/m.json", dir);
    snprintf(args, sizeof args, "gen --V 4 --T 3 --model-seed 5 -o %s", path);
    tu_expect(args, 0, NULL);
    cr_expect_eq(access(path, F_OK), 0);
    unlink(path);
    snprintf(args, sizeof args, "gen --V 4 --T 3 --alpha 0 -o %s", path);
    tu_expect(args, 64, "--alpha");
    cr_expect_neq(access(path, F_OK), 0, "a failing gen left %s behind", path);
    snprintf(args, sizeof args, "gen --V 100000 -o %s", path);
    tu_expect(args, 65, "refusing");
    cr_expect_neq(access(path, F_OK), 0);
    rmdir(dir);
}

/* run --list --json (either order) is a JSON array of every verifier, its
 * parameters and whether it is a deliberately broken control. */
Test(cli_basic, list_as_json)
{
    const char *args[] = {"run --list --json", "run --json --list"};
    for (size_t i = 0; i < 2; i++) {
        char *out;
        cr_assert_eq(tu_run(args[i], &out, NULL), 0, "%s", args[i]);
        json_t *j = json_loads(out, 0, NULL);
        cr_assert(json_is_array(j), "%s: %s", args[i], out);
        int token = 0, control = 0;
        size_t k;
        json_t *v;
        json_array_foreach(j, k, v) {
            const char *name = json_string_value(json_object_get(v, "name"));
            cr_assert_not_null(name);
            if (strcmp(name, "token") == 0)
                token = json_array_size(json_object_get(v, "params")) >= 1 &&
                        strcmp(json_string_value(json_array_get(json_object_get(v, "params"), 0)), "gamma") == 0 &&
                        json_is_false(json_object_get(v, "control"));
            if (strcmp(name, "broken-coin") == 0)
                control = json_is_true(json_object_get(v, "control"));
        }
        cr_expect(token, "%s: token with its parameter gamma first, not a control", args[i]);
        cr_expect(control, "%s: broken-coin marked a control", args[i]);
        json_decref(j);
        free(out);
    }
}

/* 1 if the table row of `run ARGS` that starts with `label` ends with
 * `tail` (its z column). */
static int S_row_ends(const char *args, const char *label, const char *tail)
{
    char *out, head[64];
    cr_assert_eq(tu_run(args, &out, NULL), 0, "%s", args);
    snprintf(head, sizeof head, "\n  %s", label);
    const char *row = strstr(out, head), *end = row ? strchr(row + 1, '\n') : NULL;
    size_t n = strlen(tail);
    int ok = end && (size_t)(end - row) > n && strncmp(end - n, tail, n) == 0;
    if (!ok)
        cr_log_error("%s: row '%s' of:\n%s", args, label, out);
    free(out);
    return ok;
}

/* One trial has no spread (stderr 0): the z column says "-" where the mean
 * is not the exact value, never +0.00, which would read as agreement. */
Test(cli_basic, z_without_spread_is_not_zero)
{
    cr_expect(S_row_ends("run --trials 1", "rejections  ", " -"));
}

/* check's verdict with 0 degrees of freedom after pooling (one trial) is
 * "unbiased" only in that no output fell in a probability-0 cell: the
 * table and the JSON say it is inconclusive; with enough trials it is not. */
Test(cli_basic, check_without_degrees_of_freedom_is_inconclusive)
{
    char *out;
    cr_assert_eq(tu_run("check --trials 1", &out, NULL), 0);
    cr_expect(tu_contains(out, "inconclusive: no degrees of freedom"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("check --trials 1 --json", &out, NULL), 0);
    cr_expect(tu_contains(out, "\"inconclusive\": true"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("check --trials 5000 --json", &out, NULL), 0);
    cr_expect(tu_contains(out, "\"inconclusive\": false") && tu_contains(out, "\"dof\": "), "%s", out);
    free(out);
}

/* A single-token problem is identified in the output: the SHA-256 of each
 * list as given, one "%.17g" value a line (the table and the JSON), and the
 * lists themselves in the JSON when V <= 16.  sha256 of "0.5\n0.5\n" and
 * of "0.29999999999999999\n0.69999999999999996\n" (printf %.17g of 0.3, 0.7). */
Test(cli_basic, pq_problem_is_identified)
{
    const char *hp = "1145e448ac954f4073d290b5b3295b06f447fe04ec959c4f2724683a6cf14cde";
    const char *hq = "15ce3c1dba5c7cde8a11cf65c811db34035550ea010bed653e975110b3bc7e8e";
    char *out;
    cr_assert_eq(tu_run("run --p 0.5,0.5 --q 0.3,0.7 --T 5 --trials 100", &out, NULL), 0);
    cr_expect(tu_contains(out, hp) && tu_contains(out, hq), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --p 0.5,0.5 --q 0.3,0.7 --T 5 --trials 100 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL), *m = json_object_get(j, "model");
    cr_assert_not_null(m, "%s", out);
    cr_expect_str_eq(json_string_value(json_object_get(m, "p_sha256")), hp);
    cr_expect_str_eq(json_string_value(json_object_get(m, "q_sha256")), hq);
    cr_expect_eq(json_real_value(json_array_get(json_object_get(m, "q"), 1)), 0.7);
    json_decref(j);
    free(out);
}

/* A constant estimate (the Rao-Blackwellised rejections of i.i.d. tokens
 * are T·TV in every trial) has a standard error of rounding size: its z
 * is +0.00, not a z of the last bits (it printed -31.61). */
Test(cli_basic, z_of_a_constant_estimate_is_zero)
{
    cr_expect(S_row_ends("run --p 0.5,0.5 --q 0.3,0.7 --T 3 --trials 1000", "rejections (RB)", "+0.00"));
}

/* A verifier without a draft length (sprinter) is compared with token-level
 * SD at the rest of the horizon, and the line says so (it claimed "the same
 * draft length"). */
Test(cli_basic, baseline_of_a_verifier_without_gamma_says_its_draft_length)
{
    char *out;
    cr_assert_eq(tu_run("run --algo sprinter --trials 500", &out, NULL), 0);
    cr_expect(tu_contains(out, "token-level SD on the same model, gamma = rest of horizon (sprinter has no draft "
                               "length), needs 11.961159"), "%s", out);
    free(out);
}

/* run --json says why the exact values are null when they were refused as
 * too large (block at the horizon: 7^50 draft blocks), and null otherwise. */
Test(cli_basic, json_says_why_exact_is_null)
{
    char *out;
    cr_assert_eq(tu_run("run --algo block --trials 100 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s", out);
    cr_expect(json_is_null(json_object_get(j, "exact_rejections")));
    const char *why = json_string_value(json_object_get(j, "exact_not_computed"));
    cr_expect(why && strstr(why, "7^50"), "%s", out);
    json_decref(j);
    free(out);
    cr_assert_eq(tu_run("run --trials 100 --json", &out, NULL), 0);
    j = json_loads(out, 0, NULL);
    cr_expect(json_is_null(json_object_get(j, "exact_not_computed")), "%s", out);
    json_decref(j);
    free(out);
}

/* run --list --csv: a header and one row per verifier, the summary quoted
 * (it holds commas). */
Test(cli_basic, list_as_csv)
{
    char *out;
    cr_assert_eq(tu_run("run --list --csv", &out, NULL), 0);
    cr_expect(strncmp(out, "name,params,control,summary\n", 28) == 0, "%s", out);
    cr_expect(tu_contains(out, "\ntoken,gamma draft-policy,0,\"token-level speculative decoding (Yin et al. 2024, Alg. 1, "),
              "%s", out);
    cr_expect(tu_contains(out, "\nbroken-coin,"), "%s", out);
    free(out);
}
