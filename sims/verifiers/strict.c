/* strict.c — the strict mode of engines (vLLM's speculative decoding with
 * strict verification): a token Y is sampled from the target q and a draft
 * token is accepted only if it equals Y.  The output is Y ~ q whatever the
 * drafts are, so it is lossless; at one draft the first-position
 * acceptance is sum_x p(x) q(x) <= sum_x min(p, q), and with k i.i.d.
 * drafts sum_x q(x) (1 - (1 - p(x))^k).  The rule runs inside the k-draft
 * tree decoder of sd_multidraft_tree_step (drafts continue by value, so the
 * drafts equal to Y survive); parameters k, gamma.  One target call per
 * iteration.
 *
 * Exact iteration law (sims/exact/sd_iter_laws.h): Y ~ q is independent of
 * the drafts, so with a surviving drafts the number equal to Y is
 * Bin(a, p(Y)): P(Y = y, j drafts equal y) = q(y) C(a,j) p(y)^j
 * (1-p(y))^(a-j), j = 0 ending the iteration rejected. */
#include "../../src/sd_dist.h"
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"

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

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_pos_law pl = {0};
    double a = (double)par->k;
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), par->k, sd_select_law_independent,
                               NULL, (a + 1.0) * SD_WORK_PDF + a + 1.0, &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

const sd_verifier_type sd_verifier_strict = {
    .name = "strict",
    .summary = "engines' strict mode: accept a draft only if it equals Y ~ q (vLLM)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = sd_multidraft_scratch_free,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
};
