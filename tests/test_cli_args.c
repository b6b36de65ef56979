/* test_cli_args.c — the one pass over a command line before getopt
 * (cli_args_scan, cli/cli_opts.h) that finds the plugins, the verifier,
 * a sweep's lists, --paired and --samples for every command that takes a
 * verifier: values joined or separate, getopt's rule for the verifier's
 * name, options after "--" left alone; eval speedup's --gamma best and
 * --draft-policy read as options. */
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

/* The number of times `key` appears in what `args` prints (status 0). */
static int S_count(const char *args, const char *key)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(tu_run(args, &out, &err), 0, "%s: %s", args, err);
    int n = 0;
    for (const char *p = out; (p = strstr(p, key)) != NULL; p++)
        n++;
    free(out);
    free(err);
    return n;
}

/* eval speedup reads --gamma (G, a list, a range or best) and
 * --draft-policy in its option table, joined or separate, the last one
 * winning: nothing is taken out of argv before getopt. */
Test(cli_args, speedup_gamma_and_draft_policy_are_options)
{
    cr_expect_eq(S_count("eval speedup --gamma=best --gamma-max 3 --V 3 --T 5 --json", "\"speedup_ci95\""), 3);
    cr_expect_eq(S_count("eval speedup --gamma best --gamma-max 3 --V 3 --T 5 --json", "\"speedup_ci95\""), 3);
    cr_expect_eq(S_count("eval speedup --gamma best --gamma 2..3 --V 3 --T 5 --json", "\"speedup_ci95\""), 2);
    cr_expect_eq(S_count("eval speedup --gamma 1,2 --gamma=4 --V 3 --T 5 --json", "\"speedup_ci95\""), 1);
    cr_expect_eq(S_count("eval speedup --draft-policy=specdecpp:best --gamma 3 --steps 2 --V 3 --T 6 --json",
                         "\"threshold\""), 3);
    tu_expect("eval speedup --algo tree-rrs --gamma 3", 64, "--gamma does not apply to --algo tree-rrs (it reads: ");
    tu_expect("eval speedup --gamma 1,x", 64, "--gamma 'x': expected counts N or LO..HI or best");
    tu_expect("eval speedup --draft-policy", 64, "--draft-policy needs a value");
}
