/* broken_greedy_kernel.c — a deliberately broken control: greedy block
 * verification (sims/verifiers/greedy_block.c) whose fast kernel (sims/kernels/kernel_greedy.c,
 * the one `run` and `check` use on a stored chain) never records an
 * iteration's distribution modification (Sun et al. 2025, Alg. 5, eq. 31):
 * it runs Alg. 4 alone, which Sun et al. 2025, App. C show to be biased.
 * Its mechanistic step is greedy-block's, and correct: only a check of the
 * kernel itself catches it.  Its exact values and prefix law are those of
 * Alg. 4 alone (the enumeration of sims/exact/greedy_exact.c in that reading):
 * the law of what `run` executes. */
#include "../verifiers/sd_greedy.h"

static const sd_kernel_type *const S_kernels[] = {&sd_greedy_kernel_broken, NULL};

static int S_exact(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err)
{
    return sd_greedy_exact_values(m, par, SD_GREEDY_UNMODIFIED, out, err);
}

static int S_prefix(const sd_chain *c, const sd_params *par, size_t L, double *out, sd_error *err)
{
    return sd_greedy_exact_prefix(c, par, SD_GREEDY_UNMODIFIED, L, out, err);
}

const sd_verifier_type sd_verifier_broken_greedy_kernel = {
    .name = "broken-greedy-kernel",
    .summary = "greedy-block whose sorted-table kernel never applies the eq. 31 modification",
    .params = sd_greedy_block_params,
    .alloc = sd_greedy_block_alloc,
    .free = sd_greedy_block_free,
    .begin = sd_greedy_block_begin,
    .step = sd_greedy_block_step,
    .exact = S_exact,
    .prefix_law = S_prefix,
    .kernels = S_kernels,
    .flags = SD_VERIFIER_CONTROL,
};
