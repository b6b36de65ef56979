/* strict.c — the strict mode of engines (vLLM's speculative decoding with
 * strict verification): a token Y is sampled from the target q and a draft
 * token is accepted only if it equals Y.  The output is Y ~ q whatever the
 * drafts are, so it is lossless; at one draft the first-position
 * acceptance is sum_x p(x) q(x) <= sum_x min(p, q), and with k i.i.d.
 * drafts sum_x q(x) (1 - (1 - p(x))^k).  The rule runs inside the k-draft
 * tree decoder of sd_multidraft_tree_step (drafts continue by value, so the
 * drafts equal to Y survive); parameters k, gamma.  One target call per
 * iteration. */
#include "../../src/sd_dist.h"
#include "sd_multidraft.h"

static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev,
                    const size_t *x, size_t k, sd_stream *rng, size_t *y,
                    sd_error *err)
{
    (void)ctx, (void)x, (void)k, (void)err;
    *y = sd_dist_sample(sd_chain_q(c, t, prev), c->V, 1.0, sd_stream_uniform(rng));
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    sd_multidraft_scratch *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k, S_select, s, s->drafts,
                                   out, it, err);
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, par->k, "k", err);
}

static const sd_param_decl S_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_strict = {
    .name = "strict",
    .summary = "engines' strict mode: accept a draft only if it equals Y ~ q (vLLM)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = sd_multidraft_scratch_free,
    .begin = NULL,
    .step = S_step,
};
