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
