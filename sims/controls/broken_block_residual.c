/* broken_block_residual.c — a deliberately broken control: block
 * verification with the residual of a real bug in a production verifier.
 *
 * Identical to sims/verifiers/block.c (Sun et al. 2025, Alg. 2; the same
 * alloc, free and step, sd_block_step with the residual hook
 * SD_BLOCK_RESIDUAL_TOKENWISE of sd_block.h) except that on rejection it
 * samples the token-wise residual [q(.|X^τ) - p(.|X^τ)]+ of eq. 3 instead of
 * eq. 4's max(p_τ q(.|X^τ) - p(.|X^τ), 0): the bug reported against
 * vllm-ascend (issue 7807).  Since p_τ < 1 after a draft token with q < p,
 * eq. 4 puts less weight on tokens where q barely exceeds p; the token-wise
 * residual over-produces them, so the output law is not q. */
#include "../verifiers/sd_block.h"
#include "../exact/sd_iter_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    return sd_block_step(state, c, par, rng, n, prev, out, it, SD_BLOCK_RESIDUAL_TOKENWISE);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_block(c, sd_draft_len(c, par, n), SD_BLOCK_RESIDUAL_TOKENWISE, n, prev, out, err);
}

/* On sparse-row models (--arpa, --p/--q at large V) the same bug in
 * block's kernel for them (sims/kernels/kernel_backoff.c). */
static const sd_kernel_type *const S_kernels[] = {&sd_block_kernel_backoff_tokenwise, NULL};

const sd_verifier_type sd_verifier_broken_block_residual = {
    .name = "broken-block-residual",
    .flags = SD_VERIFIER_CONTROL,
    .summary = "block verification with the token-wise residual (vllm-ascend 7807)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = sd_block_alloc,
    .free = sd_block_free,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
    .kernels = S_kernels,
};
