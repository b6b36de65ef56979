/* broken_optimal_md.c — deliberately broken control of optimal-md
 * (docs/controls.md): when the plan's Y is none of the drafts, a fresh
 * draw from q is emitted instead of Y (SD_OPTIMAL_MD_BUG_FRESH_Q of
 * sd_optimal_md.h), so the output law is the plan's accepted part plus
 * (1 - α) q: biased towards the drafts' tokens. */
#include "../verifiers/sd_optimal_md.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_optimal_md_step_mode(state, c, par, rng, n, prev, out, it, SD_OPTIMAL_MD_BUG_FRESH_Q, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev, struct sd_iter_law *out,
                 sd_error *err)
{
    return sd_optimal_md_law_mode(c, par, n, prev, out, SD_OPTIMAL_MD_BUG_FRESH_Q, err);
}

const sd_verifier_type sd_verifier_broken_optimal_md = {
    .name = "broken-optimal-md",
    .summary = "control: optimal-md emitting a fresh draw from q on a rejection instead of the plan's Y",
    .params = sd_optimal_md_params,
    .alloc = sd_optimal_md_alloc,
    .free = sd_optimal_md_free,
    .step = S_step,
    .iteration_law = S_law,
    .flags = SD_VERIFIER_CONTROL,
};
