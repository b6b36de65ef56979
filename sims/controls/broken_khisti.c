/* broken_khisti.c — deliberately broken control of khisti
 * (docs/controls.md): the token the importance-sampling step selects is
 * emitted without the second step (single-draft speculative sampling
 * against p_I), so a position's law is p_I, the selection's law, not q
 * (their gap is what the second step corrects).  At one draft p_I = p. */
#include "../verifiers/sd_khisti.h"
#include "../exact/sd_iter_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_khisti_step_mode(state, c, par, rng, n, prev, out, it, SD_KHISTI_BUG_NO_SD, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_khisti_law_mode(c, par, n, prev, out, SD_KHISTI_BUG_NO_SD, err);
}

const sd_verifier_type sd_verifier_broken_khisti = {
    .name = "broken-khisti",
    .summary = "control: khisti emitting the importance-sampling selection without the SD step",
    .params = sd_khisti_params,
    .alloc = sd_khisti_alloc,
    .free = sd_khisti_free,
    .step = S_step,
    .iteration_law = S_law,
    .flags = SD_VERIFIER_CONTROL,
};
