/* gumbel.c — drafter-invariant speculative decoding by Gumbel sampling
 * (Daliri, Musco and Suresh 2024, "Coupling without communication and
 * drafter-invariant speculative decoding", arXiv:2408.07978).
 *
 * At each drafted position drafter and target share exponentials E_i ~
 * Exp(1), one per token (equivalently Gumbel noise -log E_i): the draft is
 * X = argmin_i E_i/p(i), the target's token Y = argmin_i E_i/q(i); X is
 * accepted when X = Y and the position emits Y in every case (sd_gumbel.h).
 * Y ~ q whatever the drafter, so it is lossless and its output is a
 * function of the seed alone.  The paper's guarantee:
 *     P(X = Y) = sum_y 1 / sum_i max(q(i)/q(y), p(i)/p(y)) >= (1 - TV)/(1 + TV),
 * TV = TV(p, q), below sum_y min(p, q) = 1 - TV of speculative sampling.
 * One draft sequence of gamma tokens (the tree decoder with k = 1); one
 * target call per iteration.  Exact iteration law: sd_gumbel_law. */
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
    return sd_multidraft_tree_step(c, par, rng, n, prev, 1, S_select, s, s->drafts, out, it, err);
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)par;
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, 1, "k", err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_pos_law pl = {0};
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), 1, sd_gumbel_law, NULL,
                               sd_gumbel_law_work(c->V, 1), &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_gumbel = {
    .name = "gumbel",
    .summary = "drafter-invariant SD: draft and target share an exponential race, accept if equal "
               "(Daliri et al. 2024)",
    .params = S_params,
    .alloc = S_alloc,
    .free = sd_multidraft_scratch_free,
    .step = S_step,
    .iteration_law = S_law,
};
