/* test_guards.c — guards that refuse a problem before using it (suite
 * guards): size limits, arithmetic that would wrap around size_t, a bad
 * first entry, and messages that must stay inside their buffer. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include <string.h>

#include "../lp/sd_lp.h"
#include "../src/sd_chain.h"
#include "../src/sd_exact.h"
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

/* sd_dist_check returns the index of the first bad entry, 0 included. */
Test(guards, pareto_refuses_a_bad_first_entry)
{
    const double bad[2] = {-0.5, 1.5}, good[2] = {0.5, 0.5};
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    sd_lp_result res;
    sd_error err;
    cr_expect_eq(sd_lp_pareto(bad, good, 2, 0.1, &lo, &res, NULL, &err), SD_EDATA);
    cr_expect_eq(sd_lp_pareto(good, bad, 2, 0.1, &lo, &res, NULL, &err), SD_EDATA);
}

/* A prefix and a message that together overflow the buffer are cut to
 * fit, NUL-terminated inside it, and the bytes after it are untouched. */
Test(guards, error_prefix_stays_in_its_buffer)
{
    struct {
        sd_error e;
        char canary[64];
    } s;
    memset(s.canary, 'C', sizeof s.canary);
    char longer[sizeof s.e.msg];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    sd_error_set(&s.e, SD_EDATA, "%s", longer);
    sd_error_prefix(&s.e, "prefix of %d characters", 24);
    cr_expect_lt(strlen(s.e.msg), sizeof s.e.msg);
    cr_expect_eq(strncmp(s.e.msg, "prefix of 24 characters: xx", 27), 0, "%.40s", s.e.msg);
    for (size_t i = 0; i < sizeof s.canary; i++)
        cr_assert_eq(s.canary[i], 'C', "byte %zu after the message was written", i);
}

/* A prefix of 0 or 1 characters still gets ": " and the old message (the
 * room test is used + 2 < size, unsigned: a slip to used - 2 wraps for
 * used < 2 and would drop the message). */
Test(guards, error_prefix_of_zero_or_one_character_keeps_the_message)
{
    sd_error e;
    sd_error_set(&e, SD_EDATA, "bad value");
    sd_error_prefix(&e, "x");
    cr_expect_str_eq(e.msg, "x: bad value");
    sd_error_set(&e, SD_EDATA, "bad value");
    sd_error_prefix(&e, "%s", "");
    cr_expect_str_eq(e.msg, ": bad value");
}

/* Sampled tokens are stored as uint32_t: tokens 0..2^32-1, so V = 2^32 is
 * the largest vocabulary a table of tokens takes and 2^32 + 1 is refused
 * (sd_sim.c, S_check_job).  Only the sizes of the model are read before
 * anything is allocated, so a view with V and T alone (no rows) is enough
 * to reach the guard; the accepted case allocates T+1 counts and 4 tokens. */
Test(guards, token_tables_take_vocabularies_up_to_two_to_the_32)
{
    const sd_verifier_type *vt = sd_verifier_find("token");
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_model m = {.V = (size_t)1 << 32, .T = 4};
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {.seed = 1, .trials = 1, .want_tokens = 4};
    sd_sim_result res = {0};
    sd_error err;
    cr_expect_eq(sd_sim_result_alloc(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    sd_sim_result_free(&res);
    m.V++;
    cr_expect_eq(sd_sim_result_alloc(&job, &o, &res, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "V <= 2^32; V = 4294967297"), "%s", err.msg);
    sd_sim_result_free(&res);
}

/* The token DP refuses T·V²·(γ+1) > 2^36 before allocating, naming the
 * factors: T = 2^20 on a homogeneous V = 1000 chain (16 MB of rows, never
 * read) at γ = 3 needs 2^20 · 10^6 · 4 ≈ 4.2e12 operations. */
Test(guards, token_dp_refusal_names_its_factors)
{
    sd_error err;
    sd_chain *c = sd_chain_alloc(1000, (size_t)1 << 20, 1, 1, &err);
    cr_assert_not_null(c, "%s", err.msg);
    double rej, calls;
    cr_expect_eq(sd_exact_token_dp(c, 3, &rej, &calls, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "T*V^2*(gamma+1) = 1048576*1000^2*4 operations; limit 2^36"), "%s", err.msg);
    sd_chain_free(c);
}
