/* token.c — token-level speculative decoding.
 *
 * 004_2700e131d6873633.txt Alg. 1; 001_b9258a43e636c550.txt Alg. 1; SPEC §2.
 * Draft x̃_n, x̃_{n+1}, ... from p; accept x̃_t with probability
 * min(1, q_t(x̃_t)/p_t(x̃_t)); at the first failure sample [q_t - p_t]+ and
 * stop (a rejection).  If all G draft tokens pass and the horizon is not
 * reached, one bonus token comes from q.  Drafting and verifying are
 * interleaved: tokens after the first failure would be discarded, so not
 * drawing them changes no law. */
#include "../src/sd_dist.h"
#include "sd_verifier.h"

/* The accept test, shared by every verifier that uses the standard
 * token-level rule: with u uniform in [0,1), P(accept) = min(1, q/p)
 * exactly (u < q/p written without the division; p > 0 because x was drawn
 * from p).  `<`, not `<=`: see sd_rng.h. */
static int S_accept(double u, double p, double q)
{
    return u * p < q;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    size_t V = c->V, G = sd_draft_len(c, par, n);
    for (size_t i = 0; i < G; i++) {
        size_t t = n + i;
        const double *p = sd_chain_p(c, t, prev), *q = sd_chain_q(c, t, prev);
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        if (!S_accept(sd_stream_uniform(rng), p[x], q[x])) {
            double mass = sd_dist_tv(p, q, V);
            out[i] = sd_dist_sample_residual(p, q, V, mass, sd_stream_uniform(rng));
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
    if (n + G <= c->T) { /* bonus token from q */
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

const sd_verifier_type sd_verifier_token = {
    .name = "token",
    .summary = "token-level speculative decoding (004_ Alg. 1, 001_ Alg. 1)",
    .params = "gamma",
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
};
