/* broken_block_kernel.c — a deliberately broken control: block
 * verification whose fast kernel (sims/kernels/kernel_block.c, the one `run` and
 * `check` use on a stored chain) samples a rejection's token from the
 * residual with π = 1, [q - p]+, instead of max(p_τ q - p, 0) (Sun et al.
 * 2024, eq. 4).  Its mechanistic step is block's, and correct: only a
 * check of the kernel itself catches it.
 *
 * Its iteration law is the law of what `run` executes, the kernel: the
 * acceptance rule (η_i < h_i, τ = max{i : η_i < h_i}) is block's and only
 * the rejected token's law changes, to [q - p]+ / TV at (n + τ, X_τ) (q
 * where TV = 0, as the kernel falls back on q for a residual of zero
 * mass).  That is sd_law_block with the token-wise residual, the law of
 * broken-block-residual's step: the kernel repeats the vllm-ascend 7807
 * bug in its tables.  tests/test_tree_laws.c holds the kernel's
 * Monte-Carlo law of the first tokens to this law cell by cell. */
#include "../verifiers/sd_block.h"
#include "../exact/sd_iter_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    return sd_block_step(state, c, par, rng, n, prev, out, it, SD_BLOCK_RESIDUAL_EQ4);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

static const sd_kernel_type *const S_kernels[] = {&sd_block_kernel_broken, NULL};

/* The law of what run executes: the broken kernel (above). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_block(c, sd_draft_len(c, par, n), SD_BLOCK_RESIDUAL_TOKENWISE, n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_block_kernel = {
    .name = "broken-block-kernel",
    .summary = "block verification whose sorted-table kernel samples the residual with pi = 1",
    .params = S_params,
    .alloc = sd_block_alloc,
    .free = sd_block_free,
    .step = S_step,
    .kernels = S_kernels,
    .flags = SD_VERIFIER_CONTROL,
    .iteration_law = S_law,
};
