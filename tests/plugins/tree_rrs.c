/* tree_rrs.c — a token-tree verifier written as a plugin: recursive
 * rejection sampling on a tree of i.i.d. drafts (SpecInfer, Miao et al.
 * 2024), children drafted lazily along the accepted path (the others are
 * never looked at, so the law is the same).  It declares tree and draw as
 * the built-in tree verifiers do, so `lp tree-valid --compare` hands it the
 * LP's shape and `eval accept-length` measures it (tests/test_plugin_tree.c). */
#include <stdlib.h>
#include <string.h>

#include "../../include/simdec.h"

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid only"),
    SD_PARAM_TREE("2,1"),
    SD_PARAM_END,
};

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    if (sd_param_choice(par, SD_TREE_SLOT_DRAW) != SD_DRAW_IID)
        return sd_error_set(err, SD_EUSAGE, "--draw: test-tree-rrs drafts i.i.d. only");
    *state = malloc(c->V * sizeof(double));
    return *state ? SD_OK : sd_error_set(err, SD_ENOMEM, "out of memory");
}

static void S_free(void *state)
{
    free(state);
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n, size_t prev,
                  size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    double *r = state;
    size_t V = c->V, rest = c->T - n + 1, d = par->tree_depth < rest ? par->tree_depth : rest, e = 0;
    for (size_t l = 0; l < d; l++) {
        const double *p = sd_chain_p(c, n + l, prev);
        memcpy(r, sd_chain_q(c, n + l, prev), V * sizeof *r);
        double rs = 1.0; /* r sums to rs */
        size_t child = V;
        for (size_t i = 0; i < par->tree[l] && child == V; i++) {
            size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
            if (sd_stream_uniform(rng) * p[x] * rs < r[x]) /* accept with min(1, (r/rs)(x)/p(x)) */
                child = x;
            else { /* the residual [r/rs - p]+ */
                double sum = 0.0;
                for (size_t y = 0; y < V; y++) {
                    double v = r[y] / rs - p[y];
                    r[y] = v > 0 ? v : 0.0;
                    sum += r[y];
                }
                rs = sum;
            }
        }
        if (child == V) {
            out[e++] = sd_dist_sample(r, V, rs, sd_stream_uniform(rng));
            it->emitted = e;
            it->accepted = l;
            it->rejected = 1;
            it->target_calls = 1;
            return SD_OK;
        }
        out[e++] = prev = child;
    }
    if (n + d <= c->T)
        out[e++] = sd_dist_sample(sd_chain_q(c, n + d, prev), V, 1.0, sd_stream_uniform(rng));
    it->emitted = e;
    it->accepted = d;
    it->rejected = 0;
    it->target_calls = 1;
    return SD_OK;
}

const sd_verifier_type sd_verifier_test_tree_rrs = {
    .name = "test-tree-rrs",
    .summary = "a plugin tree verifier: recursive rejection sampling on i.i.d. drafts (Miao et al. 2024)",
    .params = S_params,
    .alloc = S_alloc,
    .free = S_free,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_test_tree_rrs);
