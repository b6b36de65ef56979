/* test_hostile.c — reliability: hostile inputs and numerical edge cases.
 *
 *   hostile_table     every row of docs/errors.md: the invocation's exit status
 *                  and first line of stderr are exactly as documented
 *   hostile_output    a failing command leaves no output file (nor temporary)
 *   hostile_findings  regressions for bugs found by the audit that the table
 *                  cannot express
 *   hostile_edge      numerical edge cases of every verifier: zero cells on
 *                  either side, p = q, denormals, V = 1, T = 1, parameters
 *                  larger than needed, ε accepting everything, SPRINTER's
 *                  rates at 0 and 1, 17-digit rows summing to 1 by rounding
 *
 * The CLI tests run from the repository root (make check does): the hostile
 * files are in tests/hostile/, named relatively so messages are reproducible.
 * Every invocation runs under `timeout -s KILL`, so a hang fails the test
 * instead of stalling the suite. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_check.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../sims/verifiers/sd_tree.h"
#include "test_util.h"

#define S_TABLE "docs/errors.md"

/* --- running the CLI -------------------------------------------------------- */

/* Makes tu_run() run the binary under `timeout -s KILL secs` (exit 137 when
 * it fires).  Each Criterion test is its own process: the setting is local. */
static void S_timeout(int secs)
{
    static char wrapped[4096];
    static const char *bin;
    if (!bin) {
        bin = getenv("SIMDEC_BIN");
        if (!bin || !*bin)
            bin = "./simdec";
        bin = strdup(bin);
    }
    snprintf(wrapped, sizeof wrapped, "timeout -s KILL %d %s", secs, bin);
    setenv("SIMDEC_BIN", wrapped, 1);
}

/* The first line of s, with control bytes and invalid UTF-8 written \xHH,
 * U+FEFF written \ufeff and '|' written \| — the convention of the table's
 * message column.  Returns a malloc'd string. */
static char *S_escape_line(const char *s)
{
    size_t n = strcspn(s, "\n");
    char *o = malloc(4 * n + 1), *w = o;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                                                            : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        for (size_t k = 1; k < len; k++)
            if (i + k >= n || (u[i + k] & 0xc0) != 0x80)
                len = 0;
        if (c < 0x20 || c == 0x7f || len == 0) {
            w += sprintf(w, "\\x%02x", c);
            i++;
        } else if (len == 3 && c == 0xef && u[i + 1] == 0xbb && u[i + 2] == 0xbf) {
            w += sprintf(w, "\\ufeff");
            i += 3;
        } else if (c == '|') {
            w += sprintf(w, "\\|");
            i++;
        } else {
            memcpy(w, u + i, len);
            w += len;
            i += len;
        }
    }
    *w = '\0';
    return o;
}

/* Splits a Markdown table row into at most `max` trimmed cells on the '|'
 * that are not escaped; modifies line.  Returns the number of cells. */
static size_t S_cells(char *line, char **cell, size_t max)
{
    size_t n = 0;
    char *start = NULL;
    for (char *c = line; *c && *c != '\n'; c++) {
        if (*c == '\\' && c[1] == '|') {
            c++;
            continue;
        }
        if (*c != '|')
            continue;
        *c = '\0';
        if (start && n < max)
            cell[n++] = start;
        start = c + 1;
    }
    for (size_t i = 0; i < n; i++) {
        while (*cell[i] == ' ')
            cell[i]++;
        size_t len = strlen(cell[i]);
        while (len > 0 && cell[i][len - 1] == ' ')
            cell[i][--len] = '\0';
    }
    return n;
}

/* Strips one pair of backticks; NULL if the cell is not `...`. */
static char *S_code(char *cell)
{
    size_t len = strlen(cell);
    if (len < 2 || cell[0] != '`' || cell[len - 1] != '`')
        return NULL;
    cell[len - 1] = '\0';
    return cell + 1;
}

/* "\|" -> "|" in place. */
static void S_unescape_pipes(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] == '|')
            r++;
        *w++ = *r;
    }
    *w = '\0';
}

/* Runs one documented case; returns 1 if it behaved exactly as documented. */
static int S_check_row(const char *kind, const char *inv, int want_exit, const char *want_msg)
{
    char *out, *err;
    int st = tu_run(inv, &out, &err);
    char *got = S_escape_line(err);
    int ok = st == want_exit && strcmp(got, want_msg) == 0 && (st == 0 || out[0] == '\0') &&
             st < 128 && !tu_contains(err, "Sanitizer") && !tu_contains(err, "runtime error:");
    cr_expect(ok,
              "%s: `simdec %s` does not match its documented row%s%s%s\n"
              "  documented: exit %d, `%s`\n  actual:     exit %d, `%s`%s%s\n"
              "  row to paste if the new behaviour is right:\n| %s | `simdec %s` | %d | `%s` |",
              S_TABLE, inv, st == 137 ? " (killed by the timeout)" : "",
              st != 0 && out[0] ? " (printed on stdout)" : "",
              tu_contains(err, "Sanitizer") || tu_contains(err, "runtime error:") ? " (SANITIZER REPORT)" : "",
              want_exit, want_msg, st, got, err[0] && strchr(err, '\n') ? "\n  stderr: " : "",
              err[0] && strchr(err, '\n') ? err : "", kind, inv, st, got);
    free(got);
    free(out);
    free(err);
    return ok;
}

/* Runs every row | kind | `simdec ...` | exit | `message` | of a Markdown
 * file and returns how many it checked. */
static size_t S_check_table(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s: run the tests from the repository root", path);
    char line[4096];
    size_t rows = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *cell[8];
        if (line[0] != '|' || S_cells(line, cell, 8) != 4)
            continue;
        char *inv = S_code(cell[1]), *msg = S_code(cell[3]), *end;
        if (!inv || strncmp(inv, "simdec", 6) != 0)
            continue; /* the header row */
        long want = strtol(cell[2], &end, 10);
        cr_assert(msg && *end == '\0' && end != cell[2],
                  "%s:%zu: expected | kind | `simdec ...` | exit | `message` |", path, lineno);
        S_unescape_pipes(inv);
        inv += 6;
        while (*inv == ' ')
            inv++;
        S_check_row(cell[0], inv, (int)want, msg);
        rows++;
    }
    fclose(f);
    return rows;
}

Test(hostile_table, every_documented_bad_input, .timeout = 600)
{
    S_timeout(60);
    /* The table is the list of cases: a parse that finds few rows is a bug. */
    size_t rows = S_check_table(S_TABLE);
    cr_expect_geq(rows, 100u, "%s: only %zu rows parsed", S_TABLE, rows);
    /* The short table of the same form in docs/commands.md is checked the same way. */
    rows = S_check_table("docs/commands.md");
    cr_expect_geq(rows, 5u, "docs/commands.md: only %zu rows of the bad-input table parsed", rows);
}

/* --- output files -------------------------------------------------------------- */

static size_t S_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

Test(hostile_output, failing_commands_leave_no_file)
{
    S_timeout(60);
    char dir[] = "/tmp/simdec-rel8-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *fail[] = {"gen --alpha nan", "gen --V 100000", "gen --T 0", "gen --bogus",
                          "gen --model-seed 99999999999"};
    char args[512], path[300];
    snprintf(path, sizeof path, "%s/m.json", dir);
    for (size_t i = 0; i < sizeof fail / sizeof *fail; i++) {
        snprintf(args, sizeof args, "%s -o %s", fail[i], path);
        int st = tu_run(args, NULL, NULL);
        cr_expect(st != 0 && st < 128, "'%s': exit %d", args, st);
        /* neither the output nor the temporary beside it */
        cr_expect_eq(S_dir_entries(dir), 0u, "'%s' left a file in %s", args, dir);
    }
    snprintf(args, sizeof args, "gen --V 2 --T 2 -o %s", path);
    cr_expect_eq(tu_run(args, NULL, NULL), 0);
    cr_expect_eq(S_dir_entries(dir), 1u, "a successful gen -o should leave exactly m.json");
    /* A failure does not clobber an existing output either. */
    FILE *f = fopen(path, "r");
    char before[64] = "", after[64] = "";
    cr_assert_not_null(f);
    cr_expect_neq(fgets(before, sizeof before, f), NULL);
    fclose(f);
    snprintf(args, sizeof args, "gen --V 100000 -o %s", path);
    cr_expect_eq(tu_run(args, NULL, NULL), 65);
    f = fopen(path, "r");
    cr_assert_not_null(f, "a failing gen removed the existing %s", path);
    cr_expect_neq(fgets(after, sizeof after, f), NULL);
    fclose(f);
    cr_expect_str_eq(before, after);
    cr_expect_eq(S_dir_entries(dir), 1u);
    unlink(path);
    rmdir(dir);
}

/* --- findings: regressions for bugs found by the audit --------------------------- */

/* F1 (horizon 10^12 in a [V][V] model), F2 (vocab checked after
 * allocating), F3 (--trials 1e15 allocated before refusing) and F5 (gen
 * naming the value, not the option) were fixed; their cases are rows of
 * docs/errors.md now. */

/* F4: `run` (token, default --gamma) computed the exact value with the
 * finite-γ DP in O(T² V²) even when γ covers the horizon (Theorem 1 is
 * O(T V²)): --V 2 --T 200000 --trials 1 took minutes; --T may be 2^24.
 * Expected: done in seconds, or a refusal before the work. */
Test(hostile_findings, run_exact_value_time_bounded)
{
    S_timeout(20);
    const char *args = "run --V 2 --T 200000 --trials 1 --threads 1";
    char *err;
    int st = tu_run(args, NULL, &err);
    cr_expect(st == 0 || st == 65, "'%s': exit %d%s: %s", args, st,
              st == 137 ? " (killed after 20 s)" : "", err);
    free(err);
}

/* Expects `args` to be refused with exit 65 and `fragment` in its message
 * while the CLI's address space is limited to 1 GiB (the limit is set in
 * this test process and inherited), so that a command that allocates
 * before refusing fails visibly (exit 71) instead of taking the machine's
 * memory.  Skipped under ASan, whose shadow memory needs far more address
 * space. */
static void S_refused_in_1gib(const char *args, const char *fragment)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)args;
    (void)fragment;
    cr_skip_test("an address-space limit and AddressSanitizer do not mix");
#else
    struct rlimit rl = {(rlim_t)1 << 30, (rlim_t)1 << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    S_timeout(20);
    char *err;
    int st = tu_run(args, NULL, &err);
    cr_expect(st == 65 && tu_contains(err, fragment), "'%s': exit %d%s: %s", args, st,
              st == 71 ? " (out of memory under a 1 GiB limit)" : "", err);
    free(err);
#endif
}

/* F6: an @FILE list is read whole, up to 4 GiB, before the NUL-byte
 * check: `run --p @/dev/zero --q 0.5,0.5` holds 4 GiB in memory for 5 s
 * before "larger than 4294967296 bytes".  A list longer than the largest
 * vocabulary is useless anyway.  Expected: refused (65) early, in little
 * memory. */
Test(hostile_findings, list_file_of_zeros_refused_in_little_memory)
{
    S_refused_in_1gib("run --p @/dev/zero --q 0.5,0.5", "/dev/zero");
}

/* F7: `check` builds (generates) the whole model before refusing V^L:
 * `check --V 3000 --L 2` generates a 7 GB chain for 51 s, then says V^L is
 * over the limit.  The generated model's V is known from --V.  Expected:
 * refused (65) before the model is built. */
Test(hostile_findings, check_refuses_cells_before_building_the_model)
{
    S_refused_in_1gib("check --V 2000 --L 2", "--L");
}

/* --- numerical edge cases ---------------------------------------------------------- */

/* Monte-Carlo tolerances: chi-square verdicts at alpha = 1e-4 (about 60
 * verdicts at fixed seeds: a false alarm somewhere has probability ~0.6%);
 * means within 4 standard errors (false alarm 6e-5 each). */
#define S_ALPHA 1e-4
#define S_TRIALS 20000u

static sd_chain *S_pq(const double *p, const double *q, size_t V, size_t T)
{
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, V, T, &err);
    cr_assert_not_null(c, "sd_chain_from_pq: %s", err.msg);
    return c;
}

static int S_is_stub(const sd_error *err)
{
    return strstr(err->msg, "not implemented yet") != NULL;
}

static int S_broken(const sd_verifier_type *vt)
{
    return strncmp(vt->name, "broken-", 7) == 0;
}

/* Runs vt on c; returns 0 and fills *res, or 1 (stub: skipped, *res
 * untouched).  Any other failure fails the test. */
static int S_sim(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 uint64_t trials, int positions, sd_sim_result *res)
{
    sd_error err;
    sd_sim_opts o = {.seed = 12345, .trials = trials, .threads = 1, .want_positions = positions};
    int rc = sd_sim_run(vt, c, par, &o, res, &err);
    if (rc && S_is_stub(&err)) {
        cr_log_warn("%s: %s (skipped)", vt->name, err.msg);
        return 1;
    }
    cr_assert_eq(rc, SD_OK, "%s: sd_sim_run failed: %s", vt->name, err.msg);
    return 0;
}

/* Every lossless verifier (at par) must reproduce the target joint law of
 * x_1..x_L on c, and must never emit a token of target probability 0. */
static void S_lossless_all(const char *label, const sd_chain *c, const sd_params *par)
{
    size_t checked = 0;
    for (size_t i = 0; sd_verifiers[i]; i++) {
        const sd_verifier_type *vt = sd_verifiers[i];
        if (S_broken(vt) || (vt->claims_lossless && !vt->claims_lossless(par)))
            continue;
        sd_check_opts o;
        sd_check_defaults(&o);
        o.seed = 777;
        o.trials = S_TRIALS;
        o.alpha = S_ALPHA;
        o.threads = 1;
        sd_check_result r;
        sd_error err;
        int rc = sd_check_run(vt, c, par, &o, &r, &err);
        if (rc && S_is_stub(&err)) {
            cr_log_warn("%s: %s (skipped)", vt->name, err.msg);
            continue;
        }
        cr_expect_eq(rc, SD_OK, "%s, %s: %s", label, vt->name, err.msg);
        checked++;
        if (rc == SD_OK) {
            cr_expect_eq(r.chi.zero_hits, 0.0, "%s, %s: emitted %g tokens of target probability 0",
                         label, vt->name, r.chi.zero_hits);
            cr_expect(r.unbiased, "%s, %s: chi2 %g, dof %g, p-value %g < %g", label, vt->name,
                      r.chi.chi2, r.chi.dof, r.chi.p_value, S_ALPHA);
        }
        sd_check_result_free(&r);
    }
    cr_expect_geq(checked, 1u, "%s: no lossless verifier was checked", label);
}

/* p(x) = 0 where q(x) > 0: token 2 is never drafted and can only come
 * from the residual [q-p]+. */
Test(hostile_edge, draft_zero_where_target_positive)
{
    const double p[] = {0.5, 0.5, 0.0}, q[] = {0.2, 0.3, 0.5};
    sd_chain *c = S_pq(p, q, 3, 3);
    sd_params par;
    sd_params_defaults(&par, NULL);
    S_lossless_all("p(2)=0<q(2)", c, &par);
    double rej;
    cr_assert_eq(sd_exact_rejections(c, &rej, NULL), SD_OK);
    cr_expect(fabs(rej - 3 * 0.5) < 1e-12, "Theorem 1: %.17g, expected 3 TV = 1.5", rej);
    sd_chain_free(c);
}

/* q(x) = 0 where p(x) > 0: token 2 is drafted and must always be rejected
 * (u p < 0 never holds); no lossless verifier may emit it. */
Test(hostile_edge, target_zero_where_draft_positive)
{
    const double p[] = {0.2, 0.3, 0.5}, q[] = {0.5, 0.5, 0.0};
    sd_chain *c = S_pq(p, q, 3, 3);
    sd_params par;
    sd_params_defaults(&par, NULL);
    S_lossless_all("q(2)=0<p(2)", c, &par);
    /* The check has the power to see it: broken-coin accepts when a 10-bit
     * coin is <= q/p, so it keeps a q = 0 token with probability 2^-10
     * (about 29 of the 60000 tokens here). */
    const sd_verifier_type *coin = sd_verifier_find("broken-coin");
    if (coin) {
        sd_check_opts o;
        sd_check_defaults(&o);
        o.seed = 777;
        o.trials = S_TRIALS;
        o.L = 3;
        o.threads = 1;
        sd_check_result r;
        sd_error err;
        cr_assert_eq(sd_check_run(coin, c, &par, &o, &r, &err), SD_OK, "%s", err.msg);
        cr_expect_gt(r.chi.zero_hits, 0.0, "broken-coin never emitted a q = 0 token");
        sd_check_result_free(&r);
    }
    sd_chain_free(c);
}

/* The verifiers that take the draft law as one-hot at the draft token
 * (vLLM's modes, sims/verifiers/onehot.c, strict.c). */
static int S_one_hot_draft(const char *name)
{
    return !strcmp(name, "onehot") || !strcmp(name, "strict") || !strcmp(name, "broken-onehot");
}

/* p = q exactly: the residual has mass 0; nothing may be sampled from it.
 * Every verifier (the broken controls included) accepts everything:
 * zero rejections, exactly, except those with a one-hot draft law. */
Test(hostile_edge, p_equals_q_zero_residual_mass)
{
    const double p[] = {0.2, 0.3, 0.5};
    sd_chain *c = S_pq(p, p, 3, 4);
    sd_params par;
    sd_params_defaults(&par, NULL);
    for (size_t i = 0; sd_verifiers[i]; i++) {
        sd_sim_result r;
        if (S_sim(sd_verifiers[i], c, &par, 4000, 0, &r))
            continue;
        const sd_tree_kind *tk = sd_tree_kind_find(sd_verifiers[i]->name);
        if (tk && tk->draws == (1u << SD_DRAW_TOPK)) {
            /* tree-topk drafts the top-b tokens of p (a one-hot draft law,
             * not p): at p = q it still rejects, and must do so as often as
             * its exact value says (4 se) */
            sd_model m = sd_model_of_chain(c);
            sd_exact_values ev;
            sd_error err;
            cr_assert_eq(sd_verifiers[i]->exact(&m, &par, &ev, &err), SD_OK, "%s", err.msg);
            cr_expect(fabs(r.rejections.mean - ev.rejections) < 4 * sd_welford_stderr(&r.rejections),
                      "%s: %g rejections per trial at p = q, exact %g", sd_verifiers[i]->name, r.rejections.mean,
                      ev.rejections);
        } else if (S_one_hot_draft(sd_verifiers[i]->name)) {
            /* onehot and strict (and the control) accept x with probability
             * q(x), not min(1, q/p): at p = q a token is accepted with
             * probability sum p^2 = 0.38 here, so they must reject */
            cr_expect_gt(r.rejections.mean, 0.5, "%s: %g rejections per trial at p = q; a one-hot draft law "
                         "accepts with probability sum p^2 = 0.38", sd_verifiers[i]->name, r.rejections.mean);
        } else {
            cr_expect_eq(r.rejections.mean, 0.0, "%s: %g rejections per trial at p = q",
                         sd_verifiers[i]->name, r.rejections.mean);
        }
        sd_sim_result_free(&r);
    }
    S_lossless_all("p=q", c, &par);
    double rej;
    cr_assert_eq(sd_exact_rejections(c, &rej, NULL), SD_OK);
    cr_expect_eq(rej, 0.0);
    sd_chain_free(c);
}

/* Rows with a denormal (5e-324) and a 1e-300 entry: ratios q/p reach 1e23
 * and 1e-300/0.5; nothing may overflow, divide by zero or lose the law. */
Test(hostile_edge, denormal_and_tiny_entries)
{
    const double p[] = {4.9406564584124654e-324, 1e-300, 0.5, 0.5},
                 q[] = {1e-300, 4.9406564584124654e-324, 0.25, 0.75};
    sd_chain *c = S_pq(p, q, 4, 2);
    sd_params par;
    sd_params_defaults(&par, NULL);
    S_lossless_all("denormal", c, &par);
    sd_chain_free(c);
}

/* V = 1: one token, p = q = (1); nothing to reject, any parameter. */
Test(hostile_edge, vocabulary_of_one)
{
    const double one[] = {1.0};
    sd_chain *c = S_pq(one, one, 1, 5);
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = 3;
    for (size_t i = 0; sd_verifiers[i]; i++) {
        sd_sim_result r;
        if (S_sim(sd_verifiers[i], c, &par, 500, 0, &r))
            continue;
        cr_expect_eq(r.rejections.mean, 0.0, "%s at V = 1", sd_verifiers[i]->name);
        sd_sim_result_free(&r);
    }
    S_lossless_all("V=1", c, &par);
    sd_chain_free(c);
}

/* T = 1: a single position; the draft is one token and there is no room
 * for a bonus token. */
Test(hostile_edge, horizon_of_one)
{
    const double p[] = {0.6, 0.3, 0.1}, q[] = {0.1, 0.3, 0.6};
    sd_chain *c = S_pq(p, q, 3, 1);
    sd_params par;
    sd_params_defaults(&par, NULL);
    S_lossless_all("T=1", c, &par);
    /* token: one iteration, rejected with probability TV(p,q) = 0.5 */
    sd_sim_result r;
    if (!S_sim(sd_verifier_find("token"), c, &par, S_TRIALS, 0, &r)) {
        double se = sd_welford_stderr(&r.rejections);
        cr_expect(fabs(r.rejections.mean - 0.5) < 4 * se, "%g vs 0.5 (se %g)", r.rejections.mean, se);
        cr_expect_eq(r.target_calls.mean, 1.0);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

/* γ, M and k far beyond what the horizon and vocabulary need. */
Test(hostile_edge, parameters_larger_than_needed)
{
    const double p[] = {0.7, 0.3}, q[] = {0.4, 0.6};
    sd_chain *c = S_pq(p, q, 2, 3);
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = 1000;
    par.k = 64;
    par.k = 64;
    S_lossless_all("gamma=1000, M=k=64", c, &par);
    sd_chain_free(c);
}

/* ε so large that b = min(1, (q+ε)/p) = 1: every draft is accepted
 * (zero rejections, one target call per trial with γ = the horizon) and the
 * output follows the draft: per-position TV to the target = TV(p,q). */
Test(hostile_edge, eps_accepts_everything)
{
    const double p[] = {0.7, 0.2, 0.1}, q[] = {0.2, 0.3, 0.5};
    sd_chain *c = S_pq(p, q, 3, 3);
    sd_params par;
    sd_params_defaults(&par, NULL);
    tu_par(&par, "eps", 1e300);
    sd_sim_result r;
    if (!S_sim(sd_verifier_find("biased"), c, &par, S_TRIALS, 1, &r)) {
        cr_expect_eq(r.rejections.mean, 0.0);
        cr_expect_eq(r.target_calls.mean, 1.0);
        /* sampling noise of an empirical law over 3 cells at 20000 trials
         * is ~0.005 per cell; 0.03 is > 4 se for the max over 3 positions */
        double tv = sd_sim_position_tv(&r, c);
        cr_expect(fabs(tv - sd_dist_tv(p, q, 3)) < 0.03, "position TV %g, expected TV(p,q) = %g", tv,
                  sd_dist_tv(p, q, 3));
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

/* SPRINTER at η_TP, η_FP in {0, 1}:
 *   fp = 0: lossless (any tp);
 *   tp = 0, fp = 0: every token goes to the target, which rejects with
 *     probability TV(p,q): E[rejections] = T TV(p,q), target calls = T;
 *   tp = 1, fp = 1: the cheap verifier keeps everything: no target call,
 *     output law = draft. */
Test(hostile_edge, sprinter_rates_at_0_and_1)
{
    const double p[] = {0.5, 0.3, 0.2}, q[] = {0.2, 0.3, 0.5};
    sd_chain *c = S_pq(p, q, 3, 3);
    const sd_verifier_type *vt = sd_verifier_find("sprinter");
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, NULL);
    for (int tp = 0; tp <= 1; tp++) {
        tu_par(&par, "tp", tp);
        tu_par(&par, "fp", 0.0);
        S_lossless_all(tp ? "sprinter tp=1 fp=0" : "sprinter tp=0 fp=0", c, &par);
    }
    sd_sim_result r;
    tu_par(&par, "tp", 0.0);
    tu_par(&par, "fp", 0.0);
    if (!S_sim(vt, c, &par, S_TRIALS, 0, &r)) {
        double se = sd_welford_stderr(&r.rejections), want = 3 * sd_dist_tv(p, q, 3);
        cr_expect(fabs(r.rejections.mean - want) < 4 * se, "%g vs %g (se %g)", r.rejections.mean, want, se);
        cr_expect_eq(r.target_calls.mean, 3.0);
        sd_sim_result_free(&r);
    }
    tu_par(&par, "tp", 1.0);
    tu_par(&par, "fp", 1.0);
    if (!S_sim(vt, c, &par, S_TRIALS, 1, &r)) {
        cr_expect_eq(r.rejections.mean, 0.0);
        cr_expect_eq(r.target_calls.mean, 0.0);
        double tv = sd_sim_position_tv(&r, c);
        cr_expect(fabs(tv - sd_dist_tv(p, q, 3)) < 0.03, "position TV %g, expected %g", tv,
                  sd_dist_tv(p, q, 3));
        sd_sim_result_free(&r);
    }
    tu_par(&par, "tp", 0.0);
    tu_par(&par, "fp", 1.0); /* unacceptable tokens kept, acceptable ones sent to the target */
    if (!S_sim(vt, c, &par, 2000, 0, &r))
        sd_sim_result_free(&r);
    sd_chain_free(c);
}

/* Probabilities written with 17 significant digits sum to 1 only within
 * rounding (1/3 three times is 0.99999999999999989): accepted by the list
 * parser and the model loader, and exact values come out right. */
Test(hostile_edge, seventeen_digit_rows)
{
    S_timeout(60);
    char *out, *err;
    int st = tu_run("eval rejections --json --p 0.33333333333333331,0.33333333333333331,"
                    "0.33333333333333331 --q 0.10000000000000001,0.20000000000000001,0.69999999999999996",
                    &out, &err);
    cr_assert_eq(st, 0, "exit %d: %s", st, err);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s", out);
    double rej = json_number_value(json_object_get(j, "rejections"));
    cr_expect(fabs(rej - (0.7 - 1.0 / 3.0)) < 1e-15, "TV = %.17g, expected 0.36666...", rej);
    json_decref(j);
    free(out);
    free(err);
    char *path = tu_tempfile(
        "{\"format\": \"simdec-chain-1\", \"vocab\": 3, \"horizon\": 2,\n"
        " \"init\": [0.33333333333333331, 0.33333333333333331, 0.33333333333333331],\n"
        " \"draft\": [[0.10000000000000001, 0.20000000000000001, 0.69999999999999996],\n"
        "           [0.33333333333333331, 0.33333333333333331, 0.33333333333333331],\n"
        "           [0.69999999999999996, 0.20000000000000001, 0.10000000000000001]],\n"
        " \"target\": [[0.33333333333333331, 0.33333333333333331, 0.33333333333333331],\n"
        "            [0.33333333333333331, 0.33333333333333331, 0.33333333333333331],\n"
        "            [0.33333333333333331, 0.33333333333333331, 0.33333333333333331]]}\n");
    cr_assert_not_null(path);
    char args[512];
    snprintf(args, sizeof args, "run --trials 2000 --json --model %s", path);
    st = tu_run(args, NULL, &err);
    cr_expect_eq(st, 0, "%s: exit %d: %s", args, st, err);
    free(err);
    sd_chain *c = NULL;
    FILE *f = fopen(path, "r");
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    sd_error e;
    cr_assert_eq(sd_chain_load_string(text, "17 digits", &c, &e), SD_OK, "%s", e.msg);
    for (size_t a = 0; a < 3; a++) {
        double s = 0.0;
        for (size_t b = 0; b < 3; b++)
            s += sd_chain_p(c, 1, a)[b];
        cr_expect(fabs(s - 1.0) < 4e-16, "row %zu sums to %.17g", a, s);
    }
    sd_params par;
    sd_params_defaults(&par, NULL);
    S_lossless_all("17 digits", c, &par);
    sd_chain_free(c);
    unlink(path);
    free(path);
}

/* The exact commands on degenerate problems: zero cells on either side,
 * p = q, V = 1, disjoint supports, ρ at 0 and 1.  Each value is known in
 * closed form; the LPs must also agree with their own reference. */
Test(hostile_edge, commands_on_degenerate_problems)
{
    S_timeout(60);
    const struct {
        const char *args;
        const char *key;
        double want;
    } cases[] = {
        {"eval rejections --json --p 0.2,0.3,0.5 --q 0.2,0.3,0.5", "rejections", 0.0},
        {"eval rejections --json --p 1 --q 1 --T 5", "rejections", 0.0},
        {"eval rejections --json --p 0.5,0.5,0 --q 0.2,0.3,0.5", "rejections", 0.5},
        {"eval rejections --json --p 1,0 --q 0,1 --T 3", "rejections", 3.0},
        /* token 2 is never drafted: acceptance at most 1 - q(2) */
        {"lp otm --json --k 2 --p 0.5,0.5,0 --q 0.2,0.3,0.5", "optimum", 0.5},
        {"lp otm --json --k 3 --p 1,0 --q 0,1", "optimum", 0.0},
        {"lp block-ot --json --gamma 3 --p 1 --q 1 --T 3", "optimum", 3.0},
        {"lp block-ot --json --gamma 2 --p 0.2,0.8 --q 0.2,0.8", "optimum", 2.0},
        {"lp valid-verify --json --gamma 2 --p 1 --q 1", "optimum", 2.0},
        /* E[tau] of block verification: 0.5 + 0.5 * 0.5 */
        {"lp valid-verify --json --gamma 2 --p 0.5,0.5,0 --q 0.2,0.3,0.5", "optimum", 0.75},
        {"lp pareto --json --reject 0 --p 0.5,0.5 --q 0.5,0.5", "optimum", 0.0},
        {"lp pareto --json --reject 1 --p 0.6,0.4 --q 0.4,0.6", "optimum", 0.0},
        {"lp pareto --json --reject 0 --p 0.6,0.4 --q 0.4,0.6", "optimum", 0.2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int st = tu_run(cases[i].args, &out, &err);
        cr_expect_eq(st, 0, "'%s': exit %d: %s", cases[i].args, st, err);
        json_t *j = st == 0 ? json_loads(out, 0, NULL) : NULL;
        if (st == 0)
            cr_expect_not_null(j, "'%s': not JSON: %s", cases[i].args, out);
        if (j) {
            json_t *v = json_object_get(j, cases[i].key);
            cr_expect(json_is_number(v) && fabs(json_number_value(v) - cases[i].want) < 1e-9,
                      "'%s': %s = %.17g, expected %g", cases[i].args, cases[i].key,
                      json_number_value(v), cases[i].want);
            json_t *ref = json_object_get(json_object_get(j, "reference"), "value");
            if (ref)
                cr_expect(fabs(json_number_value(ref) - cases[i].want) < 1e-9,
                          "'%s': reference %.17g, expected %g", cases[i].args, json_number_value(ref),
                          cases[i].want);
            json_decref(j);
        }
        free(out);
        free(err);
    }
    /* check: a lossless verifier passes on a chain with q = 0 cells and
     * never emits one. */
    char *out, *err;
    int st = tu_run("check --json --algo block --p 0.2,0.3,0.5 --q 0.5,0.5,0 --T 2 --trials 20000 --threads 1",
                    &out, &err);
    cr_expect_eq(st, 0, "check: exit %d: %s", st, err);
    json_t *j = json_loads(out, 0, NULL);
    cr_expect_not_null(j, "check: not JSON: %s", out);
    if (j) {
        cr_expect(json_is_true(json_object_get(j, "unbiased")), "check: %s", out);
        cr_expect_eq(json_number_value(json_object_get(j, "zero_hits")), 0.0);
        json_decref(j);
    }
    free(out);
    free(err);
}
