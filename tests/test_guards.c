/* test_guards.c — size guards that refuse a problem before allocating
 * (suite guards): the limits themselves, and arithmetic that would wrap
 * around size_t. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "../sims/sd_params.h"
#include "../sims/sd_sim.h"
#include "../sims/sd_verifier.h"
#include "../src/sd_chain.h"
#include "test_util.h"

/* The engine refuses per-trial records beyond 2^26 trials (about 2.7 GB)
 * before allocating anything (sd_sim.h); one trial more is refused. */
Test(guards, per_trial_records_are_bounded)
{
    sd_chain *c = tu_chain(2, 2, 3);
    cr_assert_not_null(c);
    const sd_verifier_type *vt = sd_verifier_find("token");
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {.seed = 1, .trials = ((uint64_t)1 << 26) + 1, .want_per_trial = 1};
    sd_sim_result res = {0};
    sd_error err;
    cr_expect_eq(sd_sim_run_job(&job, &o, &res, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "limit 2^26"), "%s", err.msg);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}

/* V = 2^20 and 2^24 stored steps: V² · steps = 2^64 wraps to 0 in size_t;
 * the guard must see the overflow, not the wrapped product. */
Test(guards, chain_entries_overflow_is_refused)
{
    sd_error err;
    size_t V = (size_t)1 << 20, T = (size_t)1 << 23;
    cr_expect_null(sd_chain_alloc(V, T, T, T, &err));
    cr_expect_eq(err.code, SD_ETOOBIG, "%d %s", err.code, err.msg);
    /* and one step type below: 2^63 entries, no wrap, still refused */
    cr_expect_null(sd_chain_alloc(V, T, 1, T, &err));
    cr_expect_eq(err.code, SD_ETOOBIG, "%d %s", err.code, err.msg);
}
