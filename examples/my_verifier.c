/* my_verifier.c — a worked example of a new verifier, built as a plugin
 * (docs/adding-a-verifier.md): one draft token per iteration, accepted
 * with probability min(1, q/p); on rejection a token from the residual
 * [q-p]+.  It is token-level speculative decoding with gamma = 1, written
 * from scratch.  Build and run:
 *     cc -std=c11 -O2 -fPIC -shared -I include examples/my_verifier.c -o my_verifier.so -lm
 *     ./simdec check --plugin ./my_verifier.so --algo my-verifier */
#include "../include/simdec.h"

static const sd_param_decl S_params[] = {SD_PARAM_END}; /* it reads none */

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL; /* no scratch memory needed */
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)par, (void)err;
    const double *p = sd_chain_p(c, n, prev), *q = sd_chain_q(c, n, prev);
    size_t x = sd_dist_sample(p, c->V, 1.0, sd_stream_uniform(rng)); /* draft */
    if (sd_stream_uniform(rng) * p[x] < q[x]) {                      /* accept */
        out[0] = x;
        it->accepted = it->emitted = 1;
        if (n < c->T) { /* bonus token from the target, as in token.c */
            out[1] = sd_dist_sample(sd_chain_q(c, n + 1, x), c->V, 1.0, sd_stream_uniform(rng));
            it->emitted = 2;
        }
        return SD_OK;
    }
    double mass = sd_dist_tv(p, q, c->V); /* > 0 whenever a rejection can happen */
    out[0] = sd_dist_sample_residual(p, q, c->V, mass, sd_stream_uniform(rng));
    it->accepted = 0;
    it->emitted = 1;
    it->rejected = 1;
    return SD_OK;
}

const sd_verifier_type sd_verifier_my_verifier = {
    .name = "my-verifier",
    .summary = "example: one draft token per iteration, standard acceptance",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_my_verifier);
