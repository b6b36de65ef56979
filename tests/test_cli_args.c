/* test_cli_args.c — the one pass over a command line before getopt
 * (cli_args_scan, cli/cli_opts.h) that finds the plugins, the verifier,
 * a sweep's lists, --paired and --samples for every command that takes a
 * verifier: values joined or separate, getopt's rule for the verifier's
 * name, options after "--" left alone. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The number of points in a run's JSON output (one "algo" key each). */
static int S_points(const char *args)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(tu_run(args, &out, &err), 0, "%s: %s", args, err);
    int n = 0;
    for (const char *p = out; (p = strstr(p, "\"algo\"")) != NULL; p++)
        n++;
    free(out);
    free(err);
    return n;
}

Test(cli_args, joined_and_separate_values_sweep_alike)
{
    cr_expect_eq(S_points("run --algo=token,block --gamma=2,3 --trials 100 --T 5 --json"), 4);
    cr_expect_eq(S_points("run --algo token,block --gamma 2,3 --trials 100 --T 5 --json"), 4);
    /* --json takes no value: --algo after it is an option */
    cr_expect_eq(S_points("run --json --algo block,token --trials 100 --T 5"), 2);
}

/* getopt's rule for the verifier: `--algo --json` names the verifier
 * "--json", and the last --algo wins. */
Test(cli_args, algo_takes_the_next_argument)
{
    tu_expect("run --algo --json", 64, "unknown verifier '--json'");
    tu_expect("check --algo=nosuch --algo=blok", 64, "unknown verifier 'blok'");
    tu_expect("run --algo=nosuch --algo=blok", 64, "unknown verifier 'blok'");
}

Test(cli_args, paired_and_samples_found_once)
{
    tu_expect("run --paired --trials 100 --T 5", 64, "--paired compares points of a sweep");
    tu_expect("run --algo token,block --samples=/tmp/x --trials 100 --T 5", 64, "not with a sweep");
}
