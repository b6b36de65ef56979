/* broken_onehot.c — deliberately broken control of onehot (docs/controls.md):
 * after a rejection the residual keeps the rejected draft token (samples q,
 * not q without x), so a draft token is emitted with probability
 * q(x) + (1 - q(x)) q(x) at one draft: biased towards the drafts. */
#include "../verifiers/sd_multidraft.h"
#include "../verifiers/sd_onehot.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_onehot_step_mode(state, c, par, rng, n, prev, out, it, SD_ONEHOT_BUG_KEEP_X, err);
}

const sd_verifier_type sd_verifier_broken_onehot = {
    .name = "broken-onehot",
    .summary = "control: onehot whose residual keeps the rejected draft token",
    .params = sd_onehot_params,
    .alloc = sd_onehot_alloc,
    .free = sd_multidraft_scratch_free,
    .step = S_step,
    .flags = SD_VERIFIER_CONTROL,
};
