/* broken_coin.c — a deliberately broken token verification, the negative
 * control of `simdec check` for sglang issue 35771.
 *
 * Token verification (sims/token.c) whose accept test is `coin <= q/p`
 * instead of `u < q/p`.  With a 53-bit uniform the bug accepts a draft
 * token of target probability 0 with probability 2^-53, invisible to any
 * simulation; production code draws the coin at lower precision.  Here the
 * coin is drawn on a 10-bit grid, as a half-precision uniform in [0,1)
 * would be:
 *     coin = floor(u * 1024) / 1024,
 * so coin = 0 has probability 2^-10 and a draft token with q = 0 is then
 * accepted.  (The coarse grid also rounds every acceptance probability
 * min(1, q/p) up to the next multiple of 2^-10 plus one step, a second,
 * smaller bias.)  On a chain whose target has exact zeros where the draft
 * has mass, the output then contains probability-0 sequences, which
 * sd_chisq_test reports with p-value 0. */
#include <math.h>

#include "../src/sd_dist.h"
#include "sd_verifier.h"

#define S_COIN_GRID 1024.0 /* 2^10 coin values */

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    size_t V = c->V, G = sd_draft_len(c, par, n);
    for (size_t i = 0; i < G; i++) {
        size_t t = n + i;
        const double *p = sd_chain_p(c, t, prev), *q = sd_chain_q(c, t, prev);
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        double coin = floor(sd_stream_uniform(rng) * S_COIN_GRID) / S_COIN_GRID;
        if (!(coin * p[x] <= q[x])) { /* the bug: <=, so coin = 0 accepts q = 0 */
            double mass = sd_dist_tv(p, q, V);
            out[i] = mass > 0.0 ? sd_dist_sample_residual(p, q, V, mass, sd_stream_uniform(rng))
                                : sd_dist_sample(q, V, 1.0, sd_stream_uniform(rng));
            it->accepted = i;
            it->emitted = i + 1;
            it->rejected = 1;
            return SD_OK;
        }
        out[i] = x;
        prev = x;
    }
    it->accepted = G;
    it->emitted = G;
    if (n + G <= c->T) {
        out[G] = sd_dist_sample(sd_chain_q(c, n + G, prev), V, 1.0, sd_stream_uniform(rng));
        it->emitted = G + 1;
    }
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c;
    (void)par;
    (void)err;
    *state = NULL;
    return SD_OK;
}

const sd_verifier_type sd_verifier_broken_coin = {
    .name = "broken-coin",
    .summary = "token verification accepting when coin <= q/p, 10-bit coin (sglang 35771)",
    .params = "gamma",
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
};
