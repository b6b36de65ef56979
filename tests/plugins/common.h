/* common.h — a minimal valid verifier for the test plugins of
 * tests/test_plugin.c (each plugin varies one thing about it): one token
 * from the target per iteration. */
#ifndef TEST_PLUGIN_COMMON_H
#define TEST_PLUGIN_COMMON_H

#include "../../include/simdec.h"

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL;
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)par, (void)err;
    out[0] = sd_dist_sample(sd_chain_q(c, n, prev), c->V, 1.0, sd_stream_uniform(rng));
    it->emitted = 1;
    return SD_OK;
}

#endif
