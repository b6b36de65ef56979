/* onehot.c — the one-hot draft mode of engines (vLLM's speculative decoding
 * when the drafter's probabilities are not kept): the draft law p is taken
 * as one-hot at the draft token x, so standard speculative sampling
 * (Leviathan et al. 2023, Chen et al. 2023) with p = delta_x accepts x with
 * probability min(1, q(x)/1) = q(x) and on a rejection samples the residual
 * [q - delta_x]+ normalised, i.e. q with x removed.
 *
 * Lossless for every x, whatever law produced it: the output law is
 *   q(x) delta_x + (1 - q(x)) q(.)1{. != x}/(1 - q(x)) = q.
 * So k drafts can be tried in turn against the running residual w
 * (w = q, then w with each rejected draft token removed, unnormalised with
 * mass m): draft x_i is accepted with probability w(x_i)/m, otherwise
 * w(x_i) <- 0; if every draft fails the token is drawn from w.  At one
 * draft the first-position acceptance is sum_x p(x) q(x) <= sum_x min(p, q).
 * The token-level rule runs inside the k-draft tree decoder of
 * sd_multidraft_tree_step (drafts continue by value); parameters k, gamma.
 * One target call per iteration.
 *
 * The same law as strict: given the distinct draft tokens z_1, z_2, ...
 * in the order tried, z_r is returned with probability
 *   prod_{i<r} (1 - q(z_i)/(1 - Q_{i-1})) q(z_r)/(1 - Q_{r-1}) = q(z_r)
 * (Q_i = q(z_1) + ... + q(z_i); the product telescopes to 1 - Q_{r-1}),
 * and a token outside the drafts with probability (1 - Q) q(y)/(1 - Q) =
 * q(y): Y ~ q independently of the drafts.  So the exact iteration law
 * (sims/exact/sd_iter_laws.h) is strict's: P(Y = y, j of a surviving
 * drafts equal y) = q(y) P(Bin(a, p(y)) = j). */
#include "../../src/sd_dist.h"
#include "sd_multidraft.h"
#include "sd_onehot.h"
#include "../exact/sd_iter_laws.h"
#include <string.h>

static int S_select_mode(void *ctx, const sd_chain *c, size_t t, size_t prev,
                         const size_t *x, size_t k, sd_stream *rng, size_t *y, int bug)
{
    sd_multidraft_scratch *s = ctx;
    const double *q = sd_chain_q(c, t, prev);
    memcpy(s->w, q, c->V * sizeof *s->w);
    double m = 1.0;
    for (size_t i = 0; i < k; i++) {
        double wx = s->w[x[i]];
        if (!(wx > 0.0))
            continue; /* removed already or forbidden: acceptance 0, nothing changes */
        if (sd_stream_uniform(rng) * m < wx) {
            *y = x[i];
            return SD_OK;
        }
        if (bug == SD_ONEHOT_BUG_KEEP_X)
            continue; /* the bug: the rejected token stays in the residual */
        s->w[x[i]] = 0.0;
        m = 0.0;
        for (size_t v = 0; v < c->V; v++)
            m += s->w[v]; /* summed afresh: no drift from repeated subtraction */
    }
    *y = sd_dist_sample(s->w, c->V, m, sd_stream_uniform(rng));
    return SD_OK;
}

static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev,
                    const size_t *x, size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    (void)err;
    return S_select_mode(ctx, c, t, prev, x, k, rng, y, SD_ONEHOT_CORRECT);
}

static int S_select_bug(void *ctx, const sd_chain *c, size_t t, size_t prev,
                        const size_t *x, size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    (void)err;
    return S_select_mode(ctx, c, t, prev, x, k, rng, y, SD_ONEHOT_BUG_KEEP_X);
}

int sd_onehot_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                        size_t n, size_t prev, size_t *out, sd_iter *it, int bug,
                        sd_error *err)
{
    sd_multidraft_scratch *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k,
                                   bug == SD_ONEHOT_BUG_KEEP_X ? S_select_bug : S_select, s,
                                   s->drafts, out, it, err);
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_onehot_step_mode(state, c, par, rng, n, prev, out, it, SD_ONEHOT_CORRECT, err);
}

int sd_onehot_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, par->k, "k", err);
}

/* The exact law of one iteration: Y independent of the drafts (above). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_pos_law pl = {0};
    double a = (double)par->k;
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), par->k, sd_select_law_independent,
                               NULL, (a + 1.0) * SD_WORK_PDF + a + 1.0, &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

const sd_param_decl sd_onehot_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_onehot = {
    .name = "onehot",
    .summary = "engines' one-hot draft mode: accept x w.p. q(x), else q without x (vLLM)",
    .params = sd_onehot_params,
    .claims_lossless = NULL,
    .alloc = sd_onehot_alloc,
    .free = sd_multidraft_scratch_free,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
};
