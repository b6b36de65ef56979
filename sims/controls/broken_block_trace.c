/* broken_block_trace.c — a deliberately broken control: block verification
 * whose law given a logged output (`simdec trace`) forgets the running
 * state.
 *
 * Given the output, block verification (Sun et al. 2025, Alg. 2) accepts
 * its l-th draft, having accepted l-1, with probability min(1, s r_l),
 * s <- max(1, s r_l), s = 1 at the start of the iteration
 * (sims/engine/sd_paired.h).  This control reads s but never carries it
 * (the hook sd_trace_block_broken_s of sims/exact/sd_trace_laws.h): s
 * stays 1, which is token verification's law min(1, r), while its step
 * and iteration law are block's (sd_block_step, sd_law_block).  Its trace
 * estimates therefore miss block's exact values, and the trace checks
 * (tests/test_trace.c) must catch it.  Not registered (run, check and
 * trace do not list it): only the trace path differs from block. */
#include "../verifiers/sd_block.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    return sd_block_step(state, c, par, rng, n, prev, out, it, SD_BLOCK_RESIDUAL_EQ4);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_block(c, sd_draft_len(c, par, n), SD_BLOCK_RESIDUAL_EQ4, n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_block_trace = {
    .name = "broken-block-trace",
    .flags = SD_VERIFIER_CONTROL,
    .summary = "block verification whose law given the output does not carry the running s",
    .params = S_params,
    .alloc = sd_block_alloc,
    .free = sd_block_free,
    .step = S_step,
    .iteration_law = S_law,
    .trace = &sd_trace_block_broken_s,
};
