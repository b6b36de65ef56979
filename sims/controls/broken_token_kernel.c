/* broken_token_kernel.c — a deliberately broken control: token-level
 * speculative decoding whose fast kernel (the one `run` and `check` use on
 * a stored chain) draws a rejected position's token from the target q
 * instead of the residual [q-p]+ (SD_TOKEN_BROKEN_RESIDUAL, sims/verifiers/sd_token.h):
 * the law of x_n becomes min(p,q) + TV(p,q)·q ≠ q.  Its mechanistic step is
 * token's, and correct: only a check of the kernel itself catches it, which
 * is why `check` must test what `run` executes. */
#include "../verifiers/sd_token.h"
#include "../exact/sd_iter_laws.h"

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL;
    return SD_OK;
}

static const sd_kernel_type *const S_kernels[] = {&sd_token_kernel_broken, &sd_token_kernel_stream_broken.kernel,
                                                  NULL};

/* The law of what run executes: the broken kernel (sd_token.h). */
/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_tokenwise(SD_LAW_KERNEL_Q, 0.0, c, sd_draft_len(c, par, n), n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_token_kernel = {
    .name = "broken-token-kernel",
    .summary = "token-level SD whose alias-table kernel samples q, not [q-p]+, after a rejection",
    .params = S_params,
    .alloc = S_alloc,
    .step = sd_token_step,
    .kernels = S_kernels,
    .flags = SD_VERIFIER_CONTROL,
    .iteration_law = S_law,
};
