/* test_cli_scale.c — the command line at scale: the Zipf model and its
 * thread-independent JSON, the early-stopping options; suite cli_scale. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_zipf.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

/* --- the command line ------------------------------------------------------ */

Test(cli_scale, zipf_runs_and_json_is_thread_independent)
{
    char *o1 = NULL, *o2 = NULL, *err = NULL;
    cr_assert_eq(tu_run("run --zipf --V 50257 --T 128 --trials 600 --json --threads 1", &o1, &err), 0, "%s", err);
    free(err);
    cr_assert_eq(tu_run("run --zipf --V 50257 --T 128 --trials 600 --json --threads 2", &o2, NULL), 0);
    cr_assert(tu_same_results(o1, o2), "%s\n%s", o1, o2); /* threads and seconds aside */
    cr_assert(tu_contains(o1, "\"source\": \"zipf\""), "%s", o1);
    cr_assert(tu_contains(o1, "\"exact_rejections\": 33.95"), "%s", o1);
    free(o1);
    free(o2);
    cr_assert_eq(tu_run("run --zipf --algo block --V 1000", NULL, &err), 64);
    cr_assert(tu_contains(err, "verifiers with one: token)"), "%s", err);
    free(err);
    cr_assert_eq(tu_run("run --zipf-draft 2", NULL, &err), 64);
    free(err);
}

Test(cli_scale, early_stop_options)
{
    char *o1 = NULL, *o2 = NULL, *err = NULL;
    cr_assert_eq(tu_run("run --trials 10000000 --target-stderr 0.02 --json --threads 1", &o1, &err), 0, "%s", err);
    free(err);
    cr_assert_eq(tu_run("run --trials 10000000 --target-stderr 0.02 --json --threads 2", &o2, NULL), 0);
    cr_assert(tu_same_results(o1, o2), "%s\n%s", o1, o2); /* threads and seconds aside */
    cr_assert(tu_contains(o1, "\"stopped\": \"target-stderr\""), "%s", o1);
    free(o1);
    free(o2);
    cr_assert_eq(tu_run("run --time-limit 0.2 --trials 100000000 --T 5", &o1, NULL), 0);
    cr_assert(tu_contains(o1, "stopped   time-limit"), "%s", o1);
    free(o1);
    cr_assert_eq(tu_run("run --time-limit -1", NULL, &err), 64);
    cr_assert(tu_contains(err, "--time-limit"), "%s", err);
    free(err);
    cr_assert_eq(tu_run("run --algo batch --M 4 --trials 2000 --json", &o1, NULL), 0);
    cr_assert(!tu_contains(o1, "\"exact_rejections\": null"), "batch has Theorem 3: %s", o1);
    free(o1);
}
