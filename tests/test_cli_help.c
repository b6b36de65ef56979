/* test_cli_help.c — the command line's help and "did you mean": every
 * `eval` evaluator is known to the suggestion, and its exit status. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* `eval generaton` is a usage error (64) that suggests `generation`, an
 * evaluator with a command of its own. */
Test(cli_help_reads, eval_typo_suggests_every_evaluator)
{
    char *out = NULL, *err = NULL;
    int st = tu_run("eval generaton", &out, &err);
    cr_expect_eq(st, 64, "exit status %d", st);
    cr_expect(err && strstr(err, "did you mean 'generation'"), "stderr: %s", err ? err : "");
    free(out);
    free(err);
    st = tu_run("eval speedpu", &out, &err);
    cr_expect_eq(st, 64);
    cr_expect(err && strstr(err, "'speedup'"), "stderr: %s", err ? err : "");
    free(out);
    free(err);
}

/* The number of lines of s (its '\n's). */
static size_t S_lines(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* `run --help` names each verifier parameter once (the option at the start
 * of a line), --tree and --draw among them with every tree verifier's
 * default or rule under the one entry; the model options are a paragraph
 * that points to `simdec help models`; the whole help stays under 100
 * lines (121 when each declaration and every model option had lines of
 * its own). */
Test(cli_help_reads, run_help_names_each_parameter_once)
{
    char *out = NULL;
    cr_assert_eq(tu_run("run --help", &out, NULL), 0);
    static const char *const once[] = {"\n  --gamma ", "\n  --k ", "\n  --M ", "\n  --tree ", "\n  --draw ",
                                       "\n  --draft-policy ", "\n  --eps ", "\n  --tp "};
    for (size_t i = 0; i < sizeof once / sizeof *once; i++) {
        const char *a = strstr(out, once[i]);
        cr_expect(a && !strstr(a + 1, once[i]), "'%s' %s", once[i] + 1, a ? "more than once" : "missing");
    }
    cr_expect(strstr(out, "\n                       default 2,2: tree-rrs tree-rrs-wor tree-topk traversal\n"),
              "%s", out);
    cr_expect(strstr(out, "\n                       default 2,1: tree-lp\n"), "%s", out);
    cr_expect(!strstr(out, "broken-tree-residual"), "controls are named by run --list, not by run --help");
    cr_expect(strstr(out, "\n                       wor (default, the paper's) or iid: traversal\n"));
    cr_expect(strstr(out, "'simdec help models'"));
    cr_expect(!strstr(out, "Dirichlet concentration"), "run --help still holds the model reference");
    cr_expect_lt(S_lines(out), 100, "run --help has %zu lines", S_lines(out));
    /* No line of it is wider than 80 columns but the usage and sweep text
     * of the command itself: every parameter line is wrapped. */
    const char *sec = strstr(out, "Verifier parameters");
    for (const char *l = sec; l && *l;) {
        size_t w = strcspn(l, "\n");
        cr_expect_leq(w, 80, "a line of %zu columns: %.*s", w, (int)w, l);
        l += w + (l[w] == '\n');
    }
    free(out);
}

/* `simdec help models` prints the reference of every model option, which
 * the commands' --help no longer repeat; `help COMMAND` is COMMAND --help;
 * an unknown topic is a usage error with a suggestion. */
Test(cli_help_reads, help_models_is_the_model_reference)
{
    char *out = NULL, *err = NULL, *run = NULL;
    cr_assert_eq(tu_run("help models", &out, NULL), 0);
    static const char *const opts[] = {"\n  --model FILE ", "\n  --V N ", "\n  --T N ", "\n  --model-seed S ",
                                       "\n  --alpha A ", "\n  --mix M ", "\n  --rng NAME ",
                                       "\n  --p LIST --q LIST ", "\n  --zipf ", "\n  --zipf-draft S ",
                                       "\n  --zipf-target S ", "\n  --tol X ", "\n  --max-memory BYTES ",
                                       "\n  --stream ", "\n  --arpa FILE ", "--draft-arpa FILE", "--draft-order",
                                       "--order"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        cr_expect(strstr(out, opts[i]), "help models lacks '%s'", opts[i]);
    free(out);
    cr_assert_eq(tu_run("help run", &out, NULL), 0);
    cr_assert_eq(tu_run("run --help", &run, NULL), 0);
    cr_expect_str_eq(out, run);
    free(out);
    free(run);
    cr_assert_eq(tu_run("help eval speedup", &out, NULL), 0);
    cr_expect(strncmp(out, "Usage: simdec eval speedup", 26) == 0, "%s", out);
    free(out);
    cr_expect_eq(tu_run("help modles", &out, &err), 64);
    cr_expect(err && strstr(err, "did you mean 'models'"), "%s", err ? err : "");
    free(out);
    free(err);
    cr_assert_eq(tu_run("--help", &out, NULL), 0);
    cr_expect(strstr(out, "simdec help models"), "%s", out);
    free(out);
}

/* Each command's --help lists its own options and ends with the same model
 * paragraph, once; none repeats the model reference. */
Test(cli_help_reads, commands_show_their_own_options_and_the_model_paragraph)
{
    static const struct {
        const char *args, *own;
    } cases[] = {
        {"run --help", "\n  --trials N "},
        {"check --help", "\n  --min-expected e "},
        {"eval rejections --help", "\n  --M m|inf "},
        {"eval generation --help", "Usage: simdec eval generation"},
        {"eval speedup --help", "\n  --c RATIO"},
        {"eval accept-length --help", "Usage: simdec eval accept-length"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL;
        cr_assert_eq(tu_run(cases[i].args, &out, NULL), 0, "%s", cases[i].args);
        cr_expect(strstr(out, cases[i].own), "%s lacks '%s'", cases[i].args, cases[i].own);
        const char *m = strstr(out, "'simdec help models'");
        cr_expect(m && !strstr(m + 1, "'simdec help models'"), "%s: the model paragraph %s",
                  cases[i].args, m ? "twice" : "missing");
        cr_expect(!strstr(out, "Dirichlet concentration of generated rows"), "%s", cases[i].args);
        free(out);
    }
}
