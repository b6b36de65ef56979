/* broken_batch.c — a deliberately broken control: batch speculative decoding with the
 * residual step of Yin et al. 2024, Alg. 4 line 28 taken
 * literally.
 *
 * After all M first tokens fail, Alg. 4 has already replaced q_n by
 * q^{M+1} (line 19, once per failed draft) and line 28 then samples
 * [q_n - p_n]+, i.e. q^{M+2}: one residual step more than the unbiased
 * version, whose proof (Yin et al. 2024, Theorem 9) needs q^{M+1}.
 * Everything else is batch: its parameters and alloc are batch's, its step
 * and law batch's with the hook extra_step = 1 (sd_multidraft.h).  It
 * claims to be lossless, and `simdec check`
 * must catch it: its first-token law is
 *     Σ_m (Π_{j<m} r_j) min(p, q^m) + R q^{M+2}  ≠  q
 * whenever q^{M+2} ≠ q^{M+1}, R = Π_m r_m > 0. */
#include "../verifiers/sd_multidraft.h"
#include "../exact/sd_iter_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    (void)err;
    sd_multidraft_scratch *s = state;
    return sd_multidraft_batch_step(c, par, rng, n, prev, 1, s->drafts, s->w, out, it);
}

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_batch(c, sd_draft_len(c, par, n), par->k, 1, n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_batch = {
    .name = "broken-batch",
    .flags = SD_VERIFIER_CONTROL,
    .summary = "batch SD with the literal extra residual step of Yin et al. 2024, Alg. 4 line 28 (samples q^{M+2})",
    .params = sd_multidraft_batch_params,
    .claims_lossless = NULL,
    .alloc = sd_multidraft_batch_alloc,
    .free = sd_multidraft_scratch_free,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
};
