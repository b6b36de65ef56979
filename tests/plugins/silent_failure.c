/* silent_failure.c — verifiers whose step or alloc fail without
 * sd_error_set, returning a number that is no sd_status or a bare status
 * (tests/test_plugin.c expects exit 70 naming the verifier; the commands
 * said "simdec: success" and exited 0). */
#include "common.h"

/* gamma: so that `lp --compare` (which refuses a verifier that does not read
 * the draft length) reaches the step. */
static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

static int S_step_42(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                     size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)c, (void)par, (void)rng, (void)n, (void)prev, (void)out, (void)it, (void)err;
    return 42;
}

static int S_alloc_usage(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL;
    return SD_EUSAGE;
}

const sd_verifier_type sd_verifier_test_silent_step = {
    .name = "test-silent-step",
    .summary = "test plugin: step fails without a message",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step_42,
};

const sd_verifier_type sd_verifier_test_silent_alloc = {
    .name = "test-silent-alloc",
    .summary = "test plugin: alloc fails without a message",
    .params = S_params,
    .alloc = S_alloc_usage,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_test_silent_step, &sd_verifier_test_silent_alloc);
