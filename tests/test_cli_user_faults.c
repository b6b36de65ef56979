/* test_cli_user_faults.c — defects a user of the command line, the Python
 * package or a plugin ran into, each pinned by the test that failed before
 * its fix.
 *
 * Suite cli_user_engine: the trial engine refuses a verifier (a plugin's step)
 * that emits a token outside the vocabulary, naming it, instead of reading
 * rows and tables out of bounds (check crashed, run printed garbage).
 *
 * Suite cli_user_speedup: `eval speedup --p/--q`'s limit T -> infinity is the
 * renewal-reward rate of one iteration; it printed inf at p = q and 6656
 * instead of 2.7273 at alpha = 1 - 1e-7 (an increment of E[C](T) that had
 * not converged), and nothing for verifiers without a closed form.  Its
 * table did not echo the seed of Monte-Carlo points, and `--gamma best
 * --gamma 3` swept every G (the last of a repeated option wins).
 *
 * Suite cli_user_plot: `plot --list --json` printed the text table, and the
 * table of `plot` did not echo the seed.
 *
 * Suite cli_user_help: the help without --algo listed each parameter with the
 * help of its first verifier ("--draw ...: iid only" for traversal, which
 * drafts without replacement by default); each verifier's own help for a
 * parameter is now in that list, under the parameter's one entry.
 *
 * Suite cli_user_lp: the table of lp named a generated model by its seed only,
 * so chains of other --alpha, --mix or --rng printed the same line.
 *
 * Suite cli_user_files: files simdec writes (gen -o, lp --plan, plot's data)
 * have the mode any program's files have, 0666 less the umask; they were
 * 0600 (mkstemp's), unreadable to the rest of a research group. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plots/sd_figures.h"
#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "test_util.h"

/* A buggy verifier, as a plugin's author might write it: its one token is
 * V, one past the last token id. */
static int S_alloc_none(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL;
    return SD_OK;
}

static int S_step_token_V(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                          size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)par, (void)rng, (void)n, (void)prev, (void)err;
    out[0] = c->V;
    it->emitted = 1;
    return SD_OK;
}

static const sd_param_decl S_no_params[] = {SD_PARAM_END};
static const sd_verifier_type S_token_V = {
    .name = "token-out-of-range",
    .summary = "emits token V",
    .params = S_no_params,
    .alloc = S_alloc_none,
    .step = S_step_token_V,
};

Test(cli_user_engine, a_token_outside_the_vocabulary_is_refused)
{
    sd_chain *c = tu_chain(3, 4, 10);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, &S_token_V);
    sd_error err;

    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {&S_token_V, &m, &par};
    sd_sim_opts o = {.seed = 1, .trials = 10, .threads = 1};
    sd_sim_result res = {0};
    cr_expect_eq(sd_sim_run_job(&job, &o, &res, &err), SD_EINTERNAL);
    cr_expect(tu_contains(err.msg, "token-out-of-range emitted token 3 at position 1; expected 0..2"), "%s",
              err.msg);
    sd_sim_result_free(&res);

    /* check tabulates the tokens: it died of SIGSEGV before. */
    sd_check_opts co;
    sd_check_defaults(&co);
    co.trials = 100;
    co.threads = 1;
    sd_check_result cr = {0};
    cr_expect_eq(sd_check_run(&S_token_V, c, &par, &co, &cr, &err), SD_EINTERNAL);
    cr_expect(tu_contains(err.msg, "expected 0..2"), "%s", err.msg);
    sd_check_result_free(&cr);
    sd_chain_free(c);
}

/* The first point of `eval speedup ... --json`: its T -> infinity limit and
 * Leviathan et al.'s value (NAN when absent). */
static void S_speedup_limit(const char *args, double *limit, double *leviathan)
{
    char cmd[400], *out = NULL;
    snprintf(cmd, sizeof cmd, "eval speedup %s --json", args);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0, "%s", cmd);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s: not JSON", cmd);
    json_t *pt = json_array_get(json_object_get(j, "points"), 0), *l = json_object_get(pt, "speedup_iid_limit"),
           *v = json_object_get(pt, "leviathan");
    *limit = json_is_real(l) ? json_real_value(l) : NAN;
    *leviathan = json_is_real(v) ? json_real_value(v) : NAN;
    json_decref(j);
    free(out);
}

/* Token-level SD: Leviathan et al. 2023's (1 - a^{G+1}) / ((1 - a)(G c + 1))
 * also where a = sum min(p, q) is 1 or within 1e-7 of it (there the
 * closed form itself loses about 1e-16 / 1e-7 to cancellation: 1e-8). */
Test(cli_user_speedup, token_limit_is_leviathan_near_and_at_alpha_one)
{
    const char *cases[] = {"--p 0.5,0.5 --q 0.5,0.5 --gamma 2", "--p 0.5,0.5 --q 0.5000001,0.4999999 --gamma 2",
                           "--p 0.2,0.3,0.5 --q 0.2,0.3,0.5 --gamma 5 --c 0.3",
                           "--p 0.5,0.5 --q 0.501,0.499 --gamma 4"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[300];
        snprintf(args, sizeof args, "--algo token %s", cases[i]);
        double lim, lev;
        S_speedup_limit(args, &lim, &lev);
        cr_expect(fabs(lim - lev) < 1e-8, "%s: limit %.15g, Leviathan et al. %.15g", args, lim, lev);
    }
}

/* Block verification has no closed form of its own: its limit must be
 * E[emitted] / (1 + c G) with E[emitted] = E[tau] + 1 from `eval
 * accept-length --algo block` on the same i.i.d. pair (a block iteration
 * with all G drafts emits the bonus token too). */
Test(cli_user_speedup, block_limit_is_its_accepted_length_plus_one)
{
    double lim, lev;
    S_speedup_limit("--algo block --gamma 3 --c 0.2 --p 0.6,0.4 --q 0.2,0.8", &lim, &lev);
    char *out = NULL;
    cr_assert_eq(tu_run("eval accept-length --algo block --gamma 3 --p 0.6,0.4 --q 0.2,0.8 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    double tau = json_real_value(json_object_get(j, "expected_accepted"));
    cr_expect(fabs(lim - (tau + 1.0) / (1.0 + 0.2 * 3)) < 1e-12, "limit %.15g, E[tau] %.15g", lim, tau);
    json_decref(j);
    free(out);
}

Test(cli_user_plot, list_json_is_json)
{
    const char *forms[] = {"plot --list --json", "plot --json --list"};
    size_t nfig = 0;
    while (sd_figures[nfig])
        nfig++;
    for (size_t f = 0; f < 2; f++) {
        char *out = NULL;
        cr_assert_eq(tu_run(forms[f], &out, NULL), 0, "%s", forms[f]);
        json_t *j = json_loads(out, 0, NULL);
        cr_assert(json_is_array(j), "%s: stdout is not a JSON array: %.80s", forms[f], out);
        cr_expect_eq(json_array_size(j), nfig);
        for (size_t i = 0; i < json_array_size(j) && i < nfig; i++)
            cr_expect_str_eq(json_string_value(json_object_get(json_array_get(j, i), "name")), sd_figures[i]->name);
        json_decref(j);
        free(out);
    }
}

Test(cli_user_speedup, table_echoes_the_seed_of_monte_carlo_points)
{
    /* block at G = 8 on the default chain: V^G = 5.8e6 blocks, past the
     * exact law's limit, so the point is Monte-Carlo. */
    const char *args = "eval speedup --algo block --gamma 8 --trials 500 --seed 5";
    char cmd[200], *tab = NULL, *js = NULL;
    cr_assert_eq(tu_run(args, &tab, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s --json", args);
    cr_assert_eq(tu_run(cmd, &js, NULL), 0);
    cr_expect(tu_contains(tab, "trials    500   seed 5   (the points marked MC)"), "%s", tab);
    json_t *j = json_loads(js, 0, NULL), *pt = json_array_get(json_object_get(j, "points"), 0);
    cr_expect(json_is_false(json_object_get(pt, "exact")));
    char row[200]; /* the table's row carries the JSON's numbers */
    snprintf(row, sizeof row, "%5d %14.6f %6s %10.6f", 8, json_real_value(json_object_get(pt, "target_calls")), "MC",
             json_real_value(json_object_get(pt, "speedup")));
    cr_expect(tu_contains(tab, row), "'%s' not in\n%s", row, tab);
    json_decref(j);
    free(tab);
    free(js);
}

Test(cli_user_speedup, the_last_gamma_wins)
{
    const char *cases[] = {"--gamma best --gamma 3", "--gamma 3 --gamma best --gamma-max 2"};
    const size_t points[] = {1, 2};
    for (size_t i = 0; i < 2; i++) {
        char cmd[200], *js = NULL;
        snprintf(cmd, sizeof cmd, "eval speedup %s --V 3 --T 6 --json", cases[i]);
        cr_assert_eq(tu_run(cmd, &js, NULL), 0, "%s", cmd);
        json_t *j = json_loads(js, 0, NULL);
        cr_expect_eq(json_array_size(json_object_get(j, "points")), points[i], "%s", cmd);
        json_decref(j);
        free(js);
    }
}

Test(cli_user_plot, table_echoes_the_seed)
{
    char dir[] = "/tmp/simdec-plot-XXXXXX", args[200], *out = NULL;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "plot yin-fig2a-sd --quick --data-only --seed 7 --out %s", dir);
    cr_assert_eq(tu_run(args, &out, NULL), 0);
    cr_expect(tu_contains(out, "seed 7 (--quick: a tenth of the trials)\n"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "%s/yin-fig2a-sd.dat", dir);
    remove(args);
    rmdir(dir);
}

/* The block of `help` about option --name (from "\n  --name " to the next
 * option or blank line), its words separated by single spaces and
 * stripped of ( ) [ ] : ; and commas at their ends, in out; 0 when --name
 * is not there. */
static int S_option_words(const char *help, const char *name, char *out, size_t len)
{
    char key[80];
    snprintf(key, sizeof key, "\n  --%s ", name);
    const char *at = strstr(help, key);
    if (!at)
        return 0;
    at++;
    const char *end = at + 1;
    while (*end && !(end[0] == '\n' && (end[1] == '\n' || strncmp(end + 1, "  --", 4) == 0)))
        end++;
    size_t u = 0;
    out[0] = '\0';
    for (const char *w = at; w < end;) {
        w += strspn(w, " \n");
        size_t k = strcspn(w, " \n");
        if (w + k > end)
            k = (size_t)(end - w);
        const char *s = w, *e = w + k;
        while (s < e && strchr("()[]:;,", *s))
            s++;
        while (e > s && strchr("()[]:;,", e[-1]))
            e--;
        if (e > s && u + (size_t)(e - s) + 2 < len) {
            u += (size_t)snprintf(out + u, len - u, " %.*s", (int)(e - s), s);
        }
        w += k;
    }
    if (u + 2 < len)
        snprintf(out + u, len - u, " ");
    return 1;
}

/* Every parameter of `run --algo NAME --help` is in `run --help` once, and
 * its block there holds each word of NAME's own help for it (its default
 * among them) and names NAME among the verifiers that read it.  Controls
 * are left out of the generic list (`run --list` names them, and
 * `run --algo CONTROL --help` shows their parameters). */
Test(cli_user_help, generic_parameter_lines_are_each_verifiers_own)
{
    char *all = NULL;
    cr_assert_eq(tu_run("run --help", &all, NULL), 0);
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++) {
        char cmd[128], *own = NULL;
        if (vt->flags & SD_VERIFIER_CONTROL)
            continue;
        snprintf(cmd, sizeof cmd, "run --algo %s --help", vt->name);
        cr_assert_eq(tu_run(cmd, &own, NULL), 0, "%s", cmd);
        for (size_t j = 0; j < sd_params_count(vt); j++) {
            const char *name = vt->params[j].name;
            static char mine[2048], general[8192];
            char key[80], word[80];
            snprintf(key, sizeof key, "\n  --%s ", name);
            const char *first = strstr(all, key);
            cr_expect(first && !strstr(first + 1, key), "run --help: --%s %s", name,
                      first ? "more than once" : "missing");
            cr_assert(S_option_words(own, name, mine, sizeof mine), "%s: no --%s", cmd, name);
            cr_assert(S_option_words(all, name, general, sizeof general), "run --help: no --%s", name);
            for (const char *w = mine + 1; *w;) {
                size_t k = strcspn(w, " ");
                snprintf(word, sizeof word, " %.*s ", (int)k, w);
                cr_expect(strstr(general, word), "run --help's --%s lacks '%.*s' of %s's help", name, (int)k, w,
                          vt->name);
                w += k + 1;
            }
            snprintf(word, sizeof word, " %s ", vt->name);
            cr_expect(strstr(general, word), "run --help's --%s does not name %s", name, vt->name);
        }
        free(own);
    }
    free(all);
}

Test(cli_user_files, written_files_follow_the_umask)
{
    char dir[] = "/tmp/simdec-umask-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const mode_t masks[] = {022, 077};
    for (size_t m = 0; m < 2; m++) {
        mode_t old = umask(masks[m]);
        char args[3][300], paths[3][200];
        snprintf(paths[0], sizeof paths[0], "%s/model%zu.json", dir, m);
        snprintf(paths[1], sizeof paths[1], "%s/plan%zu.csv", dir, m);
        snprintf(paths[2], sizeof paths[2], "%s/out%zu/yin-fig2a-sd.dat", dir, m);
        snprintf(args[0], sizeof args[0], "gen --V 2 --T 1 -o %s", paths[0]);
        snprintf(args[1], sizeof args[1], "lp otm --k 2 --V 3 --plan %s", paths[1]);
        snprintf(args[2], sizeof args[2], "plot yin-fig2a-sd --quick --data-only --out %s/out%zu", dir, m);
        for (size_t i = 0; i < 3; i++) {
            cr_expect_eq(tu_run(args[i], NULL, NULL), 0, "%s", args[i]);
            struct stat st;
            cr_expect_eq(stat(paths[i], &st), 0, "%s: not written", paths[i]);
            cr_expect_eq(st.st_mode & 0777, 0666 & ~masks[m], "%s: mode %o under umask %03o", paths[i],
                         (unsigned)(st.st_mode & 0777), (unsigned)masks[m]);
            remove(paths[i]);
        }
        umask(old);
        snprintf(args[0], sizeof args[0], "%s/out%zu", dir, m);
        rmdir(args[0]);
    }
    rmdir(dir);
}

Test(cli_user_lp, table_names_the_generators_options)
{
    const char *args[] = {"lp otm --k 2 --alpha 0.3 --mix 0.9", "lp otm --k 2 --rng numpy-mt19937"};
    const char *want[] = {"generated (model-seed 10, alpha 0.3, mix 0.9), V=7, T=50",
                          "generated (model-seed 10, rng numpy-mt19937), V=7, T=50"};
    for (size_t i = 0; i < 2; i++) {
        char *out = NULL;
        cr_assert_eq(tu_run(args[i], &out, NULL), 0, "%s", args[i]);
        cr_expect(tu_contains(out, want[i]), "%s:\n%s", args[i], out);
        free(out);
    }
}
