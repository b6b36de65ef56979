/* test_samples.c — sampled sequences: the engine's token observer
 * (sd_sim_opts.want_tokens), the samples format (src/sd_samples.h),
 * `run --samples`, `check --samples`, and the numpy example of docs/commands.md with
 * its deliberately buggy variant.
 *
 * The observer is compared with observers already tested: the tokens of
 * trial i are those sd_sim_trial gives (generic step); tabulated, they give
 * exactly the engine's cells and per-position counts (kernel and generic,
 * the kernel over several chunks per block); they do not depend on the
 * thread count.  `check --samples` of a file `run --samples` wrote gives
 * the counts, chi-square and p-value of `check --algo` with the same seed
 * and trials, bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_samples.h"
#include "test_util.h"

static sd_sim_result S_run(const char *algo, const sd_chain *c, uint64_t trials, size_t L, size_t k,
                           int cells, int pos, unsigned threads, int generic)
{
    const sd_verifier_type *vt = sd_verifier_find(algo);
    cr_assert_not_null(vt, "%s", algo);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_opts o = {.seed = 7, .trials = trials, .threads = threads, .stop = {.L = L}, .want_cells = cells,
                     .want_positions = pos, .want_tokens = k, .generic = generic};
    sd_sim_result r;
    sd_error err;
    int rc = sd_sim_run(vt, c, &par, &o, &r, &err);
    cr_assert_eq(rc, SD_OK, "%s: %s", algo, err.msg);
    return r;
}

/* Generic step: row i holds x_1..x_k of sd_sim_trial(seed, i). */
Test(samples_engine, generic_rows_are_the_trials)
{
    sd_chain *c = tu_chain(4, 6, 3);
    const char *algos[] = {"block", "spectr", "rrs", "token"};
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
        sd_sim_result r = S_run(algos[a], c, 300, 0, 5, 0, 0, 1, 1);
        cr_assert_str_eq(r.kernel, "generic");
        const sd_verifier_type *vt = sd_verifier_find(algos[a]);
        sd_params par;
        sd_params_defaults(&par, vt);
        void *state = NULL;
        sd_error err;
        cr_assert_eq(vt->alloc(&state, c, &par, &err), SD_OK);
        size_t tok[7];
        for (uint64_t i = 0; i < r.trials; i++) {
            sd_trial tr;
            cr_assert_eq(sd_sim_trial(vt, state, c, &par, 7, i, tok, &tr, NULL, NULL, &err), SD_OK);
            for (size_t n = 1; n <= 5; n++)
                cr_assert_eq(r.tokens[i * 5 + n - 1], tok[n], "%s trial %llu x_%zu", algos[a],
                             (unsigned long long)i, n);
        }
        if (vt->free)
            vt->free(state);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

/* Tabulated tokens = the engine's cells (stop after x_L) and per-position
 * counts (horizon runs), for the token kernel and the generic step.  T =
 * 300 makes the kernel run each block of 4096 trials in several chunks. */
static void S_tabulate(const char *algo, int generic, size_t T)
{
    sd_chain *c = tu_chain(3, T, 5);
    sd_sim_result r = S_run(algo, c, 5000, 3, 3, 1, 0, 2, generic);
    if (!generic)
        cr_assert_str_neq(r.kernel, "generic", "%s: no kernel took the run", algo);
    double *cells = calloc(r.ncells, sizeof *cells);
    for (uint64_t i = 0; i < r.trials; i++)
        cells[(r.tokens[i * 3] * 3 + r.tokens[i * 3 + 1]) * 3 + r.tokens[i * 3 + 2]] += 1.0;
    for (size_t k = 0; k < r.ncells; k++)
        cr_assert_eq(cells[k], r.cells[k], "%s (%s) cell %zu: %g %g", algo, r.kernel, k, cells[k], r.cells[k]);
    free(cells);
    sd_sim_result_free(&r);

    r = S_run(algo, c, 5000, 0, T, 0, 1, 2, generic);
    double *pos = calloc(T * 3, sizeof *pos);
    for (uint64_t i = 0; i < r.trials; i++)
        for (size_t n = 1; n <= T; n++)
            pos[(n - 1) * 3 + r.tokens[i * T + n - 1]] += 1.0;
    for (size_t k = 0; k < T * 3; k++)
        cr_assert_eq(pos[k], r.pos_counts[k], "%s (%s) position cell %zu", algo, r.kernel, k);
    free(pos);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

Test(samples_engine, tokens_tabulate_to_cells_and_positions)
{
    S_tabulate("token", 0, 8);
    S_tabulate("token", 0, 300);
    S_tabulate("token", 1, 8);
    S_tabulate("block", 0, 8);
    S_tabulate("rrs", 0, 8);      /* the law kernel (sims/kernels/kernel_law.c) */
    S_tabulate("rrs", 0, 300);    /* ... with chunks that fill its token buffer to the end */
    S_tabulate("sprinter", 0, 8); /* the same kernel, one state */
}

Test(samples_engine, kernel_is_used_and_thread_independent)
{
    sd_chain *c = tu_chain(5, 40, 2);
    const char *algos[] = {"token", "block"};
    for (size_t a = 0; a < 2; a++) {
        sd_sim_result r1 = S_run(algos[a], c, 9000, 0, 40, 0, 0, 1, 0);
        sd_sim_result r2 = S_run(algos[a], c, 9000, 0, 40, 0, 0, 2, 0);
        if (a == 0)
            cr_assert_str_eq(r1.kernel, SD_SIM_KERNEL_TOKEN);
        cr_assert_eq(memcmp(r1.tokens, r2.tokens, 9000 * 40 * sizeof *r1.tokens), 0, "%s", algos[a]);
        cr_assert_eq(r1.rejections.mean, r2.rejections.mean);
        sd_sim_result_free(&r1);
        sd_sim_result_free(&r2);
    }
    sd_chain_free(c);
}

Test(samples_engine, refusals_before_allocating)
{
    sd_chain *c = tu_chain(3, 10, 1);
    const sd_verifier_type *vt = sd_verifier_find("token");
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_result r;
    sd_error err;
    sd_sim_opts o = {.seed = 1, .trials = SD_SIM_MAX_TOKENS / 10 + 1, .want_tokens = 10};
    cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, &err), SD_ETOOBIG);
    cr_assert(tu_contains(err.msg, "exceeds the limit"), "%s", err.msg);
    cr_assert_null(r.tokens);
    o.trials = 10;
    o.want_tokens = 11;
    cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, &err), SD_EUSAGE);
    o.want_tokens = 3;
    o.stop.L = 2;
    cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, &err), SD_EUSAGE);
    sd_chain_free(c);
}

/* --- the format ------------------------------------------------------------ */

static int S_count(const char *text, size_t V, size_t L, double *cells, uint64_t *lines, sd_error *err)
{
    FILE *f = fmemopen((char *)(uintptr_t)text, strlen(text), "r");
    cr_assert_not_null(f);
    int rc = sd_samples_count(f, "s.txt", V, L, cells, lines, err);
    fclose(f);
    return rc;
}

Test(samples_format, write_then_read)
{
    const uint32_t tok[] = {0, 1, 2, 2, 2, 0, 10, 0, 1};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sd_error err;
    cr_assert_eq(sd_samples_write(f, tok, 3, 3, &err), SD_OK);
    fclose(f);
    cr_assert_str_eq(buf, "0 1 2\n2 2 0\n10 0 1\n");
    double cells[11 * 11] = {0};
    uint64_t lines;
    cr_assert_eq(S_count(buf, 11, 2, cells, &lines, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(lines, 3);
    cr_assert_eq(cells[0 * 11 + 1], 1.0);
    cr_assert_eq(cells[2 * 11 + 2], 1.0);
    cr_assert_eq(cells[10 * 11 + 0], 1.0);
    free(buf);
    /* CRLF and a last line without '\n' */
    double c2[9] = {0};
    cr_assert_eq(S_count("0 1 2\r\n2 2\r\n1 0", 3, 2, c2, &lines, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(lines, 3);
    cr_assert_eq(c2[1] + c2[8] + c2[3], 3.0);
}

Test(samples_format, malformed_with_line_and_column)
{
    struct {
        const char *text, *msg;
    } bad[] = {
        {"", "s.txt: no samples (the file is empty)"},
        {"0 1\n0 x\n", "s.txt: line 2, column 3: 'x'"},
        {"0 1\n0 -1\n", "s.txt: line 2, column 3: '-'"},
        {"0 1\n0 1.0\n", "s.txt: line 2, column 4: '.'"},
        {"0 1\n2 3\n", "s.txt: line 2, column 3: token 3: expected a token id 0..2"},
        {"0 1\n0 99999999999999999999999999\n", "s.txt: line 2, column 3: token 99999999999999999999999...:"},
        {"0 1\n2\n", "s.txt: line 2, column 2: 1 token; expected at least 2"},
        {"0 1\n2", "s.txt: line 2, column 2: 1 token; expected at least 2"},
        {"0 1\n\n", "s.txt: line 2, column 1: 0 tokens"},
        {"0  1\n", "s.txt: line 1, column 3: two spaces"},
        {" 0 1\n", "s.txt: line 1, column 1: a space before"},
        {"0 1 \n", "s.txt: line 1, column 4: a space at the end"},
        {"0\t1\n", "s.txt: line 1, column 2: byte \\x09"},
        {"0 1\r0 1\n", "s.txt: line 1, column 4: byte \\x0d not followed"},
        {"0 1 7\n", "s.txt: line 1, column 5: token 7"}, /* tokens past L are checked too */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double cells[9] = {0};
        uint64_t lines;
        sd_error err;
        cr_assert_eq(S_count(bad[i].text, 3, 2, cells, &lines, &err), SD_EDATA, "case %zu", i);
        cr_assert(tu_contains(err.msg, bad[i].msg), "case %zu: %s", i, err.msg);
    }
}

/* --- the commands ----------------------------------------------------------- */

/* `check --samples` of what `run --samples` wrote = `check --algo` at the
 * same seed and trials (a trial's x_1..x_L do not depend on where it stops). */
Test(samples_cli, check_samples_equals_check_algo, .timeout = 120)
{
    char *model = tu_tempfile(""), *samples = tu_tempfile(""), cmd[1024], *o1, *o2;
    snprintf(cmd, sizeof cmd, "gen --V 3 --T 5 --model-seed 4 -o %s", model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    const char *algos[] = {"token", "block", "broken-block-residual"};
    for (size_t a = 0; a < 3; a++) {
        snprintf(cmd, sizeof cmd, "run --algo %s --model %s --trials 30000 --seed 5 --samples %s --L 4",
                 algos[a], model, samples);
        cr_assert_eq(tu_run(cmd, NULL, NULL), 0, "%s", cmd);
        snprintf(cmd, sizeof cmd, "check --samples %s --model %s --L 3 --json", samples, model);
        cr_assert_eq(tu_run(cmd, &o1, NULL), 0, "%s", cmd);
        snprintf(cmd, sizeof cmd, "check --algo %s --model %s --L 3 --trials 30000 --seed 5 --json", algos[a],
                 model);
        cr_assert_eq(tu_run(cmd, &o2, NULL), 0, "%s", cmd);
        const char *keys[] = {"\"p_value\"", "\"chi2\"", "\"unbiased\"", "\"dof\"", "\"detectable_tv\"",
                              "\"table\"", "\"worst_cells\""};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            const char *s1 = strstr(o1, keys[k]), *s2 = strstr(o2, keys[k]);
            cr_assert_eq(!s1, !s2, "%s %s", algos[a], keys[k]);
            if (!s1)
                continue;
            /* the value up to the next key (tables: up to "model"/end) */
            size_t n1 = strcspn(s1, "\n"), n2 = strcspn(s2, "\n");
            if (k >= 5) {
                n1 = strlen(s1);
                n2 = strlen(s2);
            }
            cr_assert(n1 == n2 && !memcmp(s1, s2, n1), "%s: %s differs:\n%.*s\n%.*s", algos[a], keys[k],
                      (int)n1, s1, (int)n2, s2);
        }
        free(o1);
        free(o2);
    }
    remove(model);
    remove(samples);
    free(model);
    free(samples);
}

/* An early stop writes the trials run: as many lines as `trials`. */
Test(samples_cli, early_stop_writes_the_trials_run, .timeout = 60)
{
    char *samples = tu_tempfile(""), cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "run --V 3 --T 5 --trials 100000 --target-stderr 0.01 --samples %s --json",
             samples);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    const char *t = strstr(out, "\"trials\": ");
    cr_assert_not_null(t);
    unsigned long long trials = strtoull(t + 10, NULL, 10), lines = 0;
    cr_assert(tu_contains(out, "\"stopped\": \"target-stderr\""), "%s", out);
    cr_assert(tu_contains(out, "\"tokens_per_line\": 5"), "%s", out);
    cr_assert_lt(trials, 100000ull);
    FILE *f = fopen(samples, "r");
    cr_assert_not_null(f);
    for (int c; (c = getc(f)) != EOF;)
        lines += c == '\n';
    fclose(f);
    cr_assert_eq(lines, trials);
    free(out);
    remove(samples);
    free(samples);
}

/* `--samples -` reads standard input, named (stdin) in messages (tu_run
 * gives the command /dev/null as input, so the shell runs it here). */
Test(samples_cli, standard_input)
{
    char *bad = tu_tempfile("0 1\n1 0\n0 3\n"), *errf = tu_tempfile(""), cmd[1024];
    const char *bin = getenv("SIMDEC_BIN");
    snprintf(cmd, sizeof cmd, "%s check --samples - --V 3 --T 2 --L 2 < %s > /dev/null 2> %s",
             bin && *bin ? bin : "./simdec", bad, errf);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 65, "%s: status %d", cmd, st);
    FILE *f = fopen(errf, "r");
    char line[256] = "";
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert(tu_contains(line, "simdec: (stdin): line 3, column 3: token 3"), "%s", line);
    remove(bad);
    remove(errf);
    free(bad);
    free(errf);
}

/* A python3 with numpy: $PYTHON, python3 or /usr/bin/python3 (Debian's,
 * where scripts/install-deps.sh installs python3-numpy). */
static const char *S_python(void)
{
    static const char *cands[] = {NULL, "python3", "/usr/bin/python3"};
    cands[0] = getenv("PYTHON");
    for (size_t i = 0; i < 3; i++) {
        char cmd[512];
        if (!cands[i] || !*cands[i])
            continue;
        snprintf(cmd, sizeof cmd, "%s -c 'import numpy' >/dev/null 2>&1", cands[i]);
        if (system(cmd) == 0)
            return cands[i];
    }
    return NULL;
}

/* The example of docs/commands.md: standard speculative sampling in numpy passes;
 * its --buggy variant (drafts sampled at temperature 0.5, verified with the
 * untempered draft law) is flagged.  Seeds fixed: the correct sampler fails
 * with probability alpha = 1e-3; the buggy one's largest cell deviation is
 * ~0.05, far above the check's detectable TV of ~0.01 at 100000 lines. */
Test(samples_cli, numpy_example_and_its_buggy_variant, .timeout = 300)
{
    const char *py = S_python();
    cr_assert_not_null(py, "no python3 with numpy (scripts/install-deps.sh installs python3-numpy)");
    char *model = tu_tempfile(""), *samples = tu_tempfile(""), cmd[2048], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "gen --V 3 --T 4 --model-seed 10 -o %s", model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    for (int buggy = 0; buggy <= 1; buggy++) {
        snprintf(cmd, sizeof cmd, "%s examples/numpy_sampler.py %s %s --trials 100000 --seed 1%s", py, model,
                 samples, buggy ? " --buggy" : "");
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        snprintf(cmd, sizeof cmd, "check --samples %s --model %s --L 3 --fail-biased", samples, model);
        int rc = tu_run(cmd, &out, &err);
        cr_assert_eq(rc, buggy ? 1 : 0, "%s%s: exit %d\n%s%s", buggy ? "--buggy " : "", cmd, rc, out, err);
        cr_assert(tu_contains(out, buggy ? "verdict    BIASED" : "verdict    unbiased"), "%s", out);
        free(out);
        free(err);
    }
    remove(model);
    remove(samples);
    free(model);
    free(samples);
}
