/* gumbel_list.c — multi-draft speculative decoding by Gumbel-max list
 * sampling (Rowan, Phan and Khisti 2025, "List-level distribution coupling
 * with applications to speculative decoding and lossy compression",
 * NeurIPS 2025, arXiv:2506.05632), with k i.i.d. drafts.
 *
 * Each draft l has its own shared exponentials E^l_i; draft l is X^l =
 * argmin_i E^l_i/p(i) and the target's token Y = argmin_i min_l E^l_i/q(i)
 * (sd_gumbel.h): Y ~ q, a function of the seed alone, and the drafts equal
 * to Y are accepted.  k = 1 is gumbel.  In the k-draft tree
 * (sd_multidraft_tree_step) the drafts equal to Y continue and race again
 * at the next position with fresh exponentials.  Reading chosen where the
 * paper allows different draft models: here every list uses the same draft
 * p (i.i.d. drafts, the setting of `eval acceptance --algo otm`).
 * Parameters k (at most 6 for the exact law) and gamma; one target call
 * per iteration.  Exact iteration law: sd_gumbel_law. */
#include "sd_gumbel.h"
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"

static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x,
                    size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    (void)err;
    sd_multidraft_scratch *s = ctx;
    *y = sd_gumbel_select(sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), c->V, x, k, 0, rng, s->w);
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    sd_multidraft_scratch *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k, S_select, s, s->drafts, out, it,
                                   err);
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, par->k, "k", err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    if (par->k > SD_GUMBEL_LAW_MAX_A)
        return sd_error_set(err, SD_EUSAGE, "gumbel-list --k %zu: no exact law beyond %d drafts",
                            par->k, SD_GUMBEL_LAW_MAX_A);
    sd_pos_law pl = {0};
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), par->k, sd_gumbel_law, NULL,
                               sd_gumbel_law_work(c->V, par->k), &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

static const sd_param_decl S_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_gumbel_list = {
    .name = "gumbel-list",
    .summary = "k drafts from Gumbel-max list sampling, the target's race over all lists (Rowan et al. 2025)",
    .params = S_params,
    .alloc = S_alloc,
    .free = sd_multidraft_scratch_free,
    .step = S_step,
    .iteration_law = S_law,
};
