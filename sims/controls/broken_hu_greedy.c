/* broken_hu_greedy.c — deliberately broken control of hu-greedy
 * (docs/controls.md): the last draft X is drawn off the k-1 fixed tokens
 * (from p') but verified as if drawn from p (accepted with min(1, q/p),
 * the rejection from [q - p]+): the fixed tokens' share of p is forgotten,
 * so a token off them is accepted with p'(y) min(1, q(y)/p(y)) and the
 * output law is not q (sd_hu_greedy.h gives it; its exact law is wired so
 * that `check --exact` measures the bias).  At k = 1 it is hu-greedy. */
#include "../verifiers/sd_hu_greedy.h"
#include "../exact/sd_iter_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_hu_greedy_step_mode(state, c, par, rng, n, prev, out, it, SD_HU_GREEDY_BUG_P, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_hu_greedy_law_mode(c, par, n, prev, out, SD_HU_GREEDY_BUG_P, err);
}

const sd_verifier_type sd_verifier_broken_hu_greedy = {
    .name = "broken-hu-greedy",
    .summary = "control: hu-greedy verifying the last draft as if drawn from p, not p off the fixed drafts",
    .params = sd_hu_greedy_params,
    .alloc = sd_hu_greedy_alloc,
    .free = sd_hu_greedy_free,
    .step = S_step,
    .iteration_law = S_law,
    .flags = SD_VERIFIER_CONTROL,
};
