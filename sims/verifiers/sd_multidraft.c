/* sd_multidraft.c — shared multi-draft steps (sd_multidraft.h). */
#include "sd_multidraft.h"

#include <stdlib.h>
#include <string.h>

#include "../../src/sd_dist.h"
#include "sd_tokenwise.h"


size_t sd_multidraft_rrs(const double *p, const double *q, size_t V,
                         const size_t *x, size_t k, int extra_step,
                         sd_stream *rng, double *w, size_t *accepted)
{
    memcpy(w, q, V * sizeof *w); /* q^1 = q */
    for (size_t m = 0; m < k; m++) {
        size_t xm = x[m];
        /* accept with probability min(1, q^m(x)/p(x)); p(x) > 0 as x ~ p */
        if (sd_stream_uniform(rng) * p[xm] < w[xm]) {
            *accepted = m + 1;
            return xm;
        }
        /* a rejection: q^{m+1} = [q^m - p]+, of mass r_m */
        /* w <- [w - p]+ in place; its mass is r_m = TV(q^m, p) when w = q^m */
        if (sd_dist_residual(p, w, V, w) <= 0.0) {
            /* r_m = 0: q^m = p up to rounding, the rejection had
             * probability 0; keep the draft */
            *accepted = m + 1;
            return xm;
        }
    }
    *accepted = 0;
    if (extra_step) {
        /* broken-batch: one residual step too many, q^{k+2} = [q^{k+1} - p]+ */
        double mass = sd_dist_tv(p, w, V);
        if (mass > 0.0)
            return sd_dist_sample_residual(p, w, V, mass, sd_stream_uniform(rng));
    }
    return sd_dist_sample(w, V, 1.0, sd_stream_uniform(rng)); /* q^{k+1} */
}

int sd_multidraft_tree_step(const sd_chain *c, const sd_params *par,
                            sd_stream *rng, size_t n, size_t prev, size_t k,
                            sd_multidraft_select_fn select, void *ctx,
                            size_t *drafts, size_t *out, sd_iter *it,
                            sd_error *err)
{
    size_t V = c->V, G = sd_draft_len(c, par, n), alive = k;
    it->target_calls = 1;
    for (size_t i = 0; i < G; i++) {
        size_t t = n + i, y;
        const double *p = sd_chain_p(c, t, prev);
        /* the surviving drafts' tokens at this depth: i.i.d. p_t(.|prev) */
        for (size_t j = 0; j < alive; j++)
            drafts[j] = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        int rc = select(ctx, c, t, prev, drafts, alive, rng, &y, err);
        if (rc)
            return rc;
        out[i] = y;
        size_t agree = 0;
        for (size_t j = 0; j < alive; j++)
            agree += drafts[j] == y;
        if (agree == 0) { /* Y came from a residual: the iteration ends */
            it->accepted = i;
            it->emitted = i + 1;
            it->rejected = 1;
            return SD_OK;
        }
        alive = agree;
        prev = y;
    }
    it->accepted = G;
    it->emitted = G;
    it->rejected = 0;
    if (n + G <= c->T) { /* bonus token from q (Sun et al. 2023, Alg. 3 line 5) */
        out[G] = sd_dist_sample(sd_chain_q(c, n + G, prev), V, 1.0, sd_stream_uniform(rng));
        it->emitted = G + 1;
    }
    return SD_OK;
}

int sd_multidraft_batch_step(const sd_chain *c, const sd_params *par,
                             sd_stream *rng, size_t n, size_t prev,
                             int extra_step, size_t *drafts, double *w,
                             size_t *out, sd_iter *it)
{
    size_t V = c->V, G = sd_draft_len(c, par, n), M = par->k, acc;
    it->target_calls = 1;
    it->rejected = 0;
    /* first tokens of the M drafts, all from the same prefix */
    const double *p = sd_chain_p(c, n, prev), *q = sd_chain_q(c, n, prev);
    for (size_t m = 0; m < M; m++)
        drafts[m] = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
    out[0] = sd_multidraft_rrs(p, q, V, drafts, M, extra_step, rng, w, &acc);
    if (acc == 0) { /* all M first tokens failed */
        it->accepted = 0;
        it->emitted = 1;
        it->rejected = 1;
        return SD_OK;
    }
    /* the chosen draft continues alone against the original q (Alg. 4
     * line 3 resets q; lines 13–21).  Its later tokens are drawn here, as
     * they are reached: they are independent of the first-token round. */
    sd_tokenwise_verify(&sd_token_rule_standard, c, rng, n, 1, G, out[0], out, it);
    return SD_OK;
}

int sd_multidraft_scratch_alloc(sd_multidraft_scratch **out, size_t V,
                                size_t count, const char *field, sd_error *err)
{
    *out = NULL;
    if (count < 1)
        return sd_error_set(err, SD_EUSAGE, "--%s %zu: expected at least 1 draft", field, count);
    if (count > ((size_t)1 << 24))
        return sd_error_set(err, SD_ETOOBIG, "--%s %zu drafts exceed the limit 2^24", field, count);
    sd_multidraft_scratch *s = calloc(1, sizeof *s);
    if (s) {
        s->drafts = malloc(count * sizeof *s->drafts);
        s->w = malloc(V * sizeof *s->w);
    }
    if (!s || !s->drafts || !s->w) {
        sd_multidraft_scratch_free(s);
        return sd_error_set(err, SD_ENOMEM, "out of memory for %zu drafts", count);
    }
    *out = s;
    return SD_OK;
}

void sd_multidraft_scratch_free(void *state)
{
    sd_multidraft_scratch *s = state;
    if (!s)
        return;
    free(s->drafts);
    free(s->w);
    free(s);
}
