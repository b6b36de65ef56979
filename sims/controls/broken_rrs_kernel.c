/* broken_rrs_kernel.c — a deliberately broken control: the k-draft tree
 * with recursive rejection sampling (sims/verifiers/rrs.c) whose fast kernel (the one
 * `run` and `check` use on a stored chain) has broken tables: when every
 * surviving draft fails, the token is drawn from the target q instead of
 * the residual q^{k'+1} (sd_pos_law_broken_q), so a position's token has
 * law Σ_m P(accepted at m, y) + R·q ≠ q.  Its mechanistic step is rrs's,
 * and correct: only a check of the kernel itself catches it. */
#include <stdint.h>

#include "../exact/sd_iter_laws.h"
#include "../kernels/sd_kernel_law.h"
#include "../verifiers/sd_multidraft.h"

static const sd_param_decl S_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

/* The broken position law with draft length G. */
static int S_pos_G(const sd_chain *c, const sd_params *par, size_t G, sd_pos_law *out, sd_error *err)
{
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    int rc = sd_pos_law_tree(c->V, G, par->k, 0, out, err);
    return rc ? rc : sd_pos_law_broken_q(out, err);
}

static int S_pos(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err)
{
    return S_pos_G(c, par, sd_draft_len_unbounded(par->gamma), out, err);
}

SD_KERNEL_LAW_DEFINE(S_kernel, "rrs-alias-broken", S_pos, SD_KERNEL_LAW_SUPPORTS);
static const sd_kernel_type *const S_kernels[] = {&S_kernel, NULL};

/* The law of what run executes: the broken kernel. */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_pos_law pl = {0};
    int rc = S_pos_G(c, par, sd_draft_len(c, par, n), &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_rrs_kernel = {
    .name = "broken-rrs-kernel",
    .summary = "rrs whose alias-table kernel samples q, not the residual, when every draft fails",
    .params = S_params,
    .alloc = sd_multidraft_rrs_alloc,
    .free = sd_multidraft_scratch_free,
    .step = sd_multidraft_rrs_step,
    .kernels = S_kernels,
    .flags = SD_VERIFIER_CONTROL,
    .iteration_law = S_law,
};
