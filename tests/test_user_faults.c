/* test_user_faults.c — defects a user of the command line, the Python
 * package or a plugin ran into, each pinned by the test that failed before
 * its fix.
 *
 * Suite user_engine: the trial engine refuses a verifier (a plugin's step)
 * that emits a token outside the vocabulary, naming it, instead of reading
 * rows and tables out of bounds (check crashed, run printed garbage). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/sd_check.h"
#include "../sims/sd_params.h"
#include "../sims/sd_sim.h"
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

Test(user_engine, a_token_outside_the_vocabulary_is_refused)
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
