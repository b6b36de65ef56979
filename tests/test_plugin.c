/* test_plugin.c — verifiers loaded from shared objects (sims/engine/sd_plugin.h,
 * include/simdec.h).
 *
 * Suite plugin: in process, sd_plugin_load on the example plugins
 * (examples/NAME.c) and on the test suite's own (tests/plugins/NAME.c),
 * all built into SD_EXAMPLES_DIR by mk/examples.mk before the test
 * binary: what loads
 * is registered and found by name (twice is harmless), and every file that
 * is not a usable plugin is refused with the right status and a one-line
 * message that starts with its path, registering nothing.  Then the
 * example typical acceptance verifier (examples/typical.c) against its
 * mathematics: the law of x_1, the two extreme thresholds, and `check`
 * flagging it as lossy.
 *
 * Suite plugin_cli: the same through `simdec run/check --plugin FILE`. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_sim.h"
#include "test_util.h"

#ifndef SD_EXAMPLES_DIR
#define SD_EXAMPLES_DIR "build/examples"
#endif

#define S_SO(name) SD_EXAMPLES_DIR "/" name ".so"

static size_t S_count(void)
{
    size_t n = 0;
    while (sd_verifier_at(n))
        n++;
    return n;
}

/* Loads path, expects status code and a one-line message that starts with
 * "path: " and contains fragment (and fragment2 when not NULL), and that
 * nothing was registered. */
static void S_refused(const char *path, int code, const char *fragment, const char *fragment2)
{
    size_t before = S_count();
    sd_error e;
    sd_error_clear(&e);
    int rc = sd_plugin_load(path, &e);
    cr_expect_eq(rc, code, "%s: status %d, expected %d (%s)", path, rc, code, e.msg);
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s: ", path);
    cr_expect_eq(strncmp(e.msg, prefix, strlen(prefix)), 0, "%s: message not prefixed by the path: %s", path,
                 e.msg);
    cr_expect(strstr(e.msg, fragment) != NULL, "%s: message '%s' lacks '%s'", path, e.msg, fragment);
    if (fragment2)
        cr_expect(strstr(e.msg, fragment2) != NULL, "%s: message '%s' lacks '%s'", path, e.msg, fragment2);
    cr_expect(strchr(e.msg, '\n') == NULL, "%s: message has several lines: %s", path, e.msg);
    cr_expect_eq(S_count(), before, "%s: a refused plugin registered verifiers", path);
}

static const sd_verifier_type *S_load(const char *path, const char *name)
{
    sd_error e;
    cr_assert_eq(sd_plugin_load(path, &e), SD_OK, "%s: %s (run `make examples`)", path, e.msg);
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s loaded but '%s' is not found", path, name);
    return vt;
}

Test(plugin, example_loads_and_is_found)
{
    size_t before = S_count();
    cr_expect_null(sd_verifier_find("my-verifier"));
    const sd_verifier_type *vt = S_load(S_SO("my_verifier"), "my-verifier");
    cr_expect_eq(S_count(), before + 1);
    cr_expect_eq(sd_verifier_at(before), vt, "plugin verifiers come after the built-in ones");
    cr_expect_eq(sd_params_count(vt), 0);
    cr_expect(sd_verifier_claims_lossless(vt, NULL));
    sd_error e;
    cr_expect_eq(sd_params_check_decls(vt, &e), SD_OK, "%s", e.msg);

    /* Twice is harmless: the same object, the same verifier, no new entry. */
    cr_expect_eq(S_load(S_SO("my_verifier"), "my-verifier"), vt);
    cr_expect_eq(S_count(), before + 1);

    const sd_verifier_type *ty = S_load(S_SO("typical"), "typical");
    cr_expect_eq(S_count(), before + 2);
    cr_expect_eq(sd_params_count(ty), 3);
    sd_params par;
    sd_params_defaults(&par, ty);
    cr_expect(!sd_verifier_claims_lossless(ty, &par), "typical acceptance is lossy");
}

/* A name without '/' is the file in the working directory, never a library
 * from the system's search path. */
Test(plugin, bare_file_name_is_the_file_here)
{
    cr_assert_eq(chdir(SD_EXAMPLES_DIR), 0, "cannot enter %s", SD_EXAMPLES_DIR);
    S_load("my_verifier.so", "my-verifier");
    S_refused("libm.so.6", SD_EIO, "cannot open", NULL);
}

Test(plugin, files_that_are_not_plugins)
{
    S_refused("/nonexistent/plugin.so", SD_EIO, "cannot open: No such file or directory", NULL);
    S_refused("", SD_EIO, "cannot open", NULL);
    S_refused("tests", SD_EIO, "cannot open: Is a directory", NULL);
    S_refused("README.md", SD_EDATA, "not a shared object simdec can load", NULL);
    S_refused("/dev/null", SD_EDATA, "not a shared object simdec can load", NULL);
    S_refused(S_SO("not_a_plugin"), SD_EDATA, "not a simdec plugin (no symbol simdec_plugin)", NULL);
    S_refused(S_SO("symbol_is_function"), SD_EDATA, "simdec_plugin is a function", NULL);

    /* A file that cannot be read. */
    char *tmp = tu_tempfile("not a plugin");
    cr_assert_not_null(tmp);
    if (geteuid() != 0) { /* root reads anything */
        cr_assert_eq(chmod(tmp, 0), 0);
        S_refused(tmp, SD_EIO, "cannot open: Permission denied", NULL);
    }
    unlink(tmp);
    free(tmp);
}

Test(plugin, plugins_that_are_refused)
{
    char want[64], have[64];
    snprintf(want, sizeof want, "built for plugin interface version %u;", SD_PLUGIN_ABI + 1);
    snprintf(have, sizeof have, "this simdec has version %u", SD_PLUGIN_ABI);
    S_refused(S_SO("wrong_abi"), SD_EDATA, want, have);
    S_refused(S_SO("no_verifiers"), SD_EDATA, "lists no verifiers", NULL);
    S_refused(S_SO("bad_param"), SD_EDATA, "verifier 'test-bad-slot'", "slot 99; expected 0..15 or a shared slot");
    _Static_assert(SD_PARAMS_MAX == 16, "the message above names the own slots 0..SD_PARAMS_MAX-1");
    cr_expect_null(sd_verifier_find("test-good"), "the valid verifier of a refused plugin was registered");
    S_refused(S_SO("dup_param"), SD_EDATA, "parameter 'eps' declared twice", NULL);
    S_refused(S_SO("name_taken"), SD_EDATA, "verifier 'block' is already defined", NULL);
    S_refused(S_SO("shadowed"), SD_EDATA, "sd_verifier_token", "rename it");
    cr_expect_null(sd_verifier_find("token2"));
    /* The refusals left simdec as it was: the examples still load. */
    S_load(S_SO("typical"), "typical");
}

/* --- typical acceptance (examples/typical.c) ------------------------------ */

static double S_entropy(const double *q, size_t V)
{
    double h = 0.0;
    for (size_t b = 0; b < V; b++)
        if (q[b] > 0.0)
            h -= q[b] * log(q[b]);
    return h;
}

static sd_chain *S_model(size_t V, size_t T, unsigned long seed, double mix)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.mix = mix;
    gp.V = V;
    gp.T = T;
    gp.seed = seed;
    sd_error e;
    sd_chain *c = sd_chain_generate(&gp, &e);
    cr_assert_not_null(c, "%s", e.msg);
    return c;
}

static void S_set(sd_params *par, const sd_verifier_type *vt, const char *name, const char *text)
{
    sd_error e;
    cr_assert_eq(sd_params_parse(par, vt, name, text, &e), SD_OK, "--%s %s: %s", name, text, e.msg);
}

/* The law of x_1: Σ_a init(a) [p(b|a)·1[q(b|a) > τ] + r_a·q(b|a)] with
 * τ = min(ε, δ e^{-H(q(.|a))}) and r_a the draft mass that fails (the
 * formula of the file's opening comment), against 200 000 trials, each
 * cell within 5 standard deviations.  Independent draft and target rows
 * and a high threshold make the failing mass r large, so sampling the
 * wrong row after a failure (p, or the residual) is far outside that. */
Test(plugin, typical_first_token_law)
{
    const sd_verifier_type *vt = S_load(S_SO("typical"), "typical");
    sd_chain *c = S_model(5, 4, 3, 1.0); /* p and q independent rows */
    const double eps = 0.3, delta = 1.0;
    sd_params par;
    sd_params_defaults(&par, vt);
    S_set(&par, vt, "eps", "0.3");
    S_set(&par, vt, "delta", "1");
    S_set(&par, vt, "gamma", "2");

    double law[5] = {0}, total = 0.0;
    int some_fail = 0, some_pass = 0;
    for (size_t a = 0; a < c->V; a++) {
        const double *p = sd_chain_p(c, 1, a), *q = sd_chain_q(c, 1, a);
        double tau = fmin(eps, delta * exp(-S_entropy(q, c->V))), r = 0.0;
        for (size_t b = 0; b < c->V; b++)
            if (!(q[b] > tau))
                r += p[b];
        for (size_t b = 0; b < c->V; b++)
            law[b] += c->init[a] * ((q[b] > tau ? p[b] : 0.0) + r * q[b]);
        some_fail |= r > 0.0;
        some_pass |= r < 1.0;
    }
    for (size_t b = 0; b < c->V; b++)
        total += law[b];
    cr_assert(fabs(total - 1.0) < 1e-12);
    cr_assert(some_fail && some_pass, "the model does not exercise both branches");

    const uint64_t N = 200000;
    sd_sim_opts so = {.seed = 11, .trials = N, .want_cells = 1};
    so.stop.L = 1;
    sd_sim_result r;
    sd_error e;
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &e), SD_OK, "%s", e.msg);
    cr_assert_not_null(r.cells);
    cr_assert_eq(r.ncells, c->V);
    for (size_t b = 0; b < c->V; b++) {
        double sd = sqrt((double)N * law[b] * (1.0 - law[b]));
        cr_expect(fabs(r.cells[b] - (double)N * law[b]) <= 5.0 * sd + 1.0,
                  "x_1 = %zu: %g trials, expected %g (sd %g)", b, r.cells[b], (double)N * law[b], sd);
    }
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

/* The two extreme thresholds.  ε = 0: τ = 0 and every draft the target
 * allows (here: all, Dirichlet rows are positive) is kept, so no iteration
 * ends early.  ε = 1, δ huge: τ = 1 and no draft is ever kept, so every
 * iteration emits one token sampled from q: T rejections and T target calls
 * per trial, no accepted draft. */
Test(plugin, typical_extreme_thresholds)
{
    const sd_verifier_type *vt = S_load(S_SO("typical"), "typical");
    sd_chain *c = S_model(6, 12, 4, 0.5);
    sd_params par;
    sd_sim_opts so = {.seed = 2, .trials = 3000};
    sd_sim_result r;
    sd_error e;

    sd_params_defaults(&par, vt);
    S_set(&par, vt, "eps", "0");
    S_set(&par, vt, "gamma", "3");
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &e), SD_OK, "%s", e.msg);
    cr_expect_eq(r.rejections.mean, 0.0);
    cr_expect_eq(r.target_calls.mean, 3.0, "12 tokens in iterations of 3 drafts + 1 bonus: %g",
                 r.target_calls.mean);
    sd_sim_result_free(&r);

    sd_params_defaults(&par, vt);
    S_set(&par, vt, "eps", "1");
    S_set(&par, vt, "delta", "1e300");
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &e), SD_OK, "%s", e.msg);
    cr_expect_eq(r.rejections.mean, 12.0);
    cr_expect_eq(r.target_calls.mean, 12.0);
    cr_expect_eq(r.accepted.mean, 0.0);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

Test(plugin, typical_is_flagged_lossy_and_checks_its_range)
{
    const sd_verifier_type *vt = S_load(S_SO("typical"), "typical");
    sd_chain *c = S_model(7, 20, 10, 0.5);
    sd_params par;
    sd_params_defaults(&par, vt);
    S_set(&par, vt, "eps", "0.05");
    S_set(&par, vt, "delta", "0.3");
    sd_check_opts co;
    sd_check_defaults(&co);
    sd_check_result cr;
    sd_error e;
    cr_assert_eq(sd_check_run(vt, c, &par, &co, &cr, &e), SD_OK, "%s", e.msg);
    cr_expect(!cr.unbiased, "typical acceptance passed check: p-value %g", cr.chi.p_value);
    sd_check_result_free(&cr);
    sd_chain_free(c);

    cr_expect_eq(sd_params_parse(&par, vt, "delta", "-1", &e), SD_EUSAGE);
    cr_expect(strstr(e.msg, "--delta") && strstr(e.msg, "expected 0 to"), "%s", e.msg);
    cr_expect_eq(sd_params_parse(&par, vt, "eps", "1.5", &e), SD_EUSAGE);
    cr_expect(strstr(e.msg, "--eps") && strstr(e.msg, "expected 0 to 1"), "%s", e.msg);
}

/* --- the command line (simdec --plugin FILE) ------------------------------ */

static void S_cli(const char *args, int code, const char *fragment, const char *fragment2, char **out)
{
    char *o, *err;
    int st = tu_run(args, &o, &err);
    cr_expect_eq(st, code, "'%s': exit %d, expected %d; stderr: %s", args, st, code, err);
    if (fragment)
        cr_expect(tu_contains(err, fragment), "'%s': stderr '%s' lacks '%s'", args, err, fragment);
    if (fragment2)
        cr_expect(tu_contains(err, fragment2), "'%s': stderr '%s' lacks '%s'", args, err, fragment2);
    if (code != 0)
        cr_expect_eq(o[0], '\0', "'%s': printed on stdout despite failing: %s", args, o);
    free(err);
    if (out)
        *out = o;
    else
        free(o);
}

#define S_TYPICAL "--plugin " S_SO("typical") " --algo typical"

Test(plugin_cli, run_and_check_a_plugin)
{
    S_cli("run " S_TYPICAL " --eps 0.05 --delta 0.3", 0, NULL, NULL, NULL);
    S_cli("run --plugin " S_SO("my_verifier") " --algo my-verifier --T 20", 0, NULL, NULL, NULL);

    char *out = NULL;
    S_cli("check " S_TYPICAL " --eps 0.05 --delta 0.3 --json", 0, NULL, NULL, &out);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    cr_assert_not_null(j, "check --json: not JSON (%s): %s", je.text, out);
    json_t *u = json_object_get(j, "unbiased");
    cr_expect(json_is_false(u), "check of typical acceptance: unbiased is not false: %s", out);
    json_decref(j);
    free(out);
}

Test(plugin_cli, plugin_errors)
{
    S_cli("run " S_TYPICAL " --delta -1", 64, "--delta", "expected 0 to", NULL);
    S_cli("run --plugin nonexistent.so", 66, "nonexistent.so: cannot open", NULL, NULL);
    S_cli("run --plugin README.md", 65, "README.md: not a shared object", NULL, NULL);
    S_cli("run --plugin " S_SO("wrong_abi") " --algo token", 65, "plugin interface version", NULL, NULL);
    /* A parameter named like an option was silently never set (the
     * command's --seed took the value). */
    S_cli("run --plugin " S_SO("option_param") " --algo test-option-param --seed 5", 65,
          "verifier test-option-param: its parameter 'seed' has the name of an option of run (--seed)", NULL, NULL);
    S_cli("check --plugin " S_SO("option_param") " --algo test-option-param", 65, "option of check (--seed)", NULL,
          NULL);
    S_cli("lp valid-verify --gamma 1 --plugin " S_SO("option_param") " --compare test-option-param", 65,
          "option of lp (--seed)", NULL, NULL);
    /* A step or alloc that fails without sd_error_set: the commands said
     * "simdec: success" and exited 0. */
    S_cli("run --plugin " S_SO("silent_failure") " --algo test-silent-step --trials 10", 70,
          "verifier test-silent-step: its step returned 42 without an error", NULL, NULL);
    S_cli("check --plugin " S_SO("silent_failure") " --algo test-silent-alloc --trials 10", 70,
          "verifier test-silent-alloc: its alloc returned 1 without an error", NULL, NULL);
    S_cli("lp valid-verify --gamma 1 --plugin " S_SO("silent_failure") " --compare test-silent-step --trials 10",
          70, "its step returned 42", NULL, NULL);
}
