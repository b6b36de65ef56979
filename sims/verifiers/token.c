/* token.c — token-level speculative decoding.
 *
 * Yin et al. 2024, Alg. 1; Sun et al. 2025, Alg. 1.
 * Draft x̃_n, x̃_{n+1}, ... from p; accept x̃_t with probability
 * min(1, q_t(x̃_t)/p_t(x̃_t)); at the first failure sample [q_t - p_t]+ and
 * stop (a rejection).  If all G draft tokens pass and the horizon is not
 * reached, one bonus token comes from q.  Drafting and verifying are
 * interleaved: tokens after the first failure would be discarded, so not
 * drawing them changes no law.
 *
 * The verifier below is the mechanistic reference.  The kernel
 * (sims/kernels/kernel_token.c, sd_token.h) samples the same law from
 * alias tables, with other random numbers; the driver and `check` use it
 * on stored chains. */
#include "../../src/sd_exact.h"
#include "../../src/sd_zipf.h"
#include "../../src/sd_backoff.h"
#include "../engine/sd_paired.h"
#include "../engine/sd_verifier.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"
#include "sd_token.h"
#include "sd_tokenwise.h"

/* The mechanistic reference: sd_tokenwise_verify with the standard rule
 * (accept with u·p < q, i.e. probability min(1, q/p); residual [q-p]+). */
static int S_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    it->rb_rejected = 0.0; /* + TV(p_n, q_n) per tested position (sd_tokenwise.h) */
    sd_tokenwise_verify(&sd_token_rule_standard, c, rng, n, 0, sd_draft_len(c, par, n), prev, out, it);
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

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

/* The mechanistic step, shared with the control broken-token-kernel. */
int sd_token_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return S_step(state, c, par, rng, n, prev, out, it, err);
}

/* Exact values: Theorem 1 of Yin et al. 2024 at lookahead to the horizon,
 * else the DP over (x_{n-1}, tokens accepted in the iteration) (both in
 * src/sd_exact.h); on the Zipf model its closed forms (src/sd_zipf.h); on a
 * streamed chain the same two, forward over its rows (sims/kernels/kernel_token_stream.c). */
static int S_exact(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err)
{
    if (m->backoff) { /* sparse rows: src/sd_backoff.h */
        int st = sd_backoff_exact_token(m->backoff, par->gamma, &out->rejections, &out->target_calls, err);
        int fin = par->gamma && par->gamma < m->T;
        if (!m->backoff->off) { /* i.i.d. rows */
            out->method = fin ? "i.i.d. rows: DP over the accepted-in-iteration count, finite gamma"
                              : "Theorem 1 of Yin et al. 2024 on i.i.d. rows: T * TV(p, q)";
            return st;
        }
        out->method = fin ? "sparse rows: DP over (x_{n-1}, accepted-in-iteration) from seen bigrams plus one "
                            "backed-off term, finite gamma"
                          : "Theorem 1 of Yin et al. 2024 from sparse TV sums (seen bigrams plus one "
                            "backed-off term), lookahead to the horizon";
        return st;
    }
    int rc = m->zipf     ? sd_zipf_exact_token(m->zipf, par->gamma, &out->rejections, &out->target_calls, err)
             : m->stream ? sd_token_stream_exact(m->stream, par->gamma, &out->rejections, &out->target_calls, err)
                         : sd_exact_token(m->chain, par->gamma, &out->rejections, &out->target_calls, err);
    if (rc)
        return rc;
    /* On a chain (stored or streamed) the evaluator takes the DP where the
     * draft length binds (src/sd_draft.h), Theorem 1 elsewhere. */
    size_t finite = m->zipf ? par->gamma : sd_draft_binding(par->gamma, m->stream ? m->stream->gen.T : m->chain->T);
    out->method = m->zipf ? (finite ? "Zipf model: DP over the accepted-in-iteration counter, finite gamma"
                                    : "Zipf model: Theorem 1 of Yin et al. 2024, E[N_rej] = T * TV(z_d, z_q)")
                          : (finite ? "exact DP over (x_{n-1}, accepted-in-iteration), finite gamma"
                                    : "Theorem 1 of Yin et al. 2024, lookahead to the horizon");
    return SD_OK;
}

static const sd_kernel_type *const S_kernels[] = {&sd_token_kernel_zipf, &sd_token_kernel_alias,
                                                  &sd_token_kernel_stream.kernel,
                                                  &sd_token_kernel_backoff, NULL};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_tokenwise(SD_LAW_STANDARD, 0.0, c, sd_draft_len(c, par, n), n, prev, out, err);
}

const sd_verifier_type sd_verifier_token = {
    .name = "token",
    .summary = "token-level speculative decoding (Yin et al. 2024, Alg. 1, Sun et al. 2025, Alg. 1)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
    .exact = S_exact,
    .kernels = S_kernels,
    .iteration_law = S_law,
    .given_output = sd_paired_token_rule,
    .trace = &sd_trace_token,
};
