/* batch.c — batch speculative decoding.
 *
 * Yin et al. 2024, §3.2 and Alg. 4, in its unbiased reading:
 * M drafts of length G (default: the rest of the horizon, Yin et al. 2024, Remark 1)
 * from the same prefix.  Their first tokens are tried in turn against
 * q^1 = q, q^{m+1} = [q^m - p]+ (recursive rejection sampling); once one is
 * accepted only that draft continues, verified token by token with the
 * original q.  A rejection: all M first tokens fail (the token is drawn from
 * q^{M+1}) or a later token of the chosen draft fails ([q-p]+).  Lossless
 * by Yin et al. 2024, Theorem 3 / Theorem 9; expected rejections in
 * src/sd_exact_batch.h.  One iteration = one target call.  The step itself
 * is sd_multidraft_batch_step (shared with broken-batch). */
#include <math.h>

#include "../../src/sd_exact_batch.h"
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"
#include "../kernels/sd_kernel_law.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    (void)err;
    sd_multidraft_scratch *s = state;
    return sd_multidraft_batch_step(c, par, rng, n, prev, 0, s->drafts, s->w, out, it);
}

int sd_multidraft_batch_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, par->k, "M", err);
}

/* M drafts, after Yin et al.; the shared number-of-drafts slot (par->k). */
const sd_param_decl sd_multidraft_batch_params[] = {SD_PARAM_DRAFTS("M"), SD_PARAM_GAMMA, SD_PARAM_END};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_batch(c, sd_draft_len(c, par, n), par->k, 0, n, prev, out, err);
}

/* The kernel (sims/kernels/sd_kernel_law.h): one alias draw per position — the
 * first over (x, some first token accepted or all M rejected) with the
 * weights q - u, u = R·q^{M+1} of the law above, the later ones over
 * (x, accepted or rejected) as token-level SD — and the bonus from q. */
static int S_pos(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err)
{
    if (par->k < 1 || par->k > SD_DRAFTS_MAX)
        return SD_EUSAGE; /* the step reports the bad count */
    return sd_pos_law_batch(c->V, sd_draft_len_unbounded(par->gamma), par->k, 0, out, err);
}

SD_KERNEL_LAW_DEFINE(S_kernel, "batch-alias", S_pos, SD_KERNEL_LAW_SUPPORTS);
static const sd_kernel_type *const S_kernels[] = {&S_kernel, NULL};

/* Its law given a logged output (sims/exact/sd_trace_laws.h): the same position law
 * at the output's context, read at the output token. */
SD_TRACE_POS_DEFINE(S_trace, S_pos, 1);

extern const sd_verifier_type sd_verifier_batch;

/* Exact values: the DP of sims/exact/sd_exact_gen.h over the law above (target
 * calls, and rejections at finite gamma); at lookahead to the horizon the
 * rejections come from Theorem 3 of Yin et al. 2024 (src/sd_exact_batch.h),
 * which the tests compare with the DP. */
static int S_exact(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err)
{
    int rc = sd_exact_gen_values(&sd_verifier_batch, m, par, out, err);
    /* Theorem 3 when no --gamma was given.  A given gamma >= T means the
     * same draft length (src/sd_draft.h) but keeps the DP's value, which
     * agrees with Theorem 3 to rounding (about 1e-15 relative): the value
     * printed for a given gamma stays the one it has always been. */
    if (rc || par->gamma != 0)
        return rc;
    out->method = "Theorem 3 of Yin et al. 2024 (rejections), exact DP over (position, x_{n-1}) "
                  "(target calls)";
    return sd_exact_batch_rejections(m->chain, par->k, &out->rejections, err);
}

const sd_verifier_type sd_verifier_batch = {
    .name = "batch",
    .summary = "batch speculative decoding, M drafts, first tokens by recursive rejection (Yin et al. 2024, Alg. 4)",
    .params = sd_multidraft_batch_params,
    .claims_lossless = NULL,
    .alloc = sd_multidraft_batch_alloc,
    .free = sd_multidraft_scratch_free,
    .begin = NULL,
    .step = S_step,
    .exact = S_exact,
    .kernels = S_kernels,
    .iteration_law = S_law,
    .trace = &S_trace,
};
