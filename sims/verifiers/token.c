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
 * --draft-policy (src/sd_draft.h) makes the draft length a stopping time of
 * the draft tokens, gamma its cap: SpecDec++'s rule (Huang et al. 2025)
 * with its head replaced by the exact acceptance probabilities of the
 * chain, or the entropy rule of SVIP / AdaEDL.  The kernels and the
 * output-first path need a fixed length and decline; the step and the
 * iteration law below follow the policy, so `run`, `check --exact` and the
 * exact values (the DP over (position, x_{n-1}) of the iteration law, whose
 * inner state is the drafted prefix: at most V^cap paths) cover it.
 *
 * The verifier below is the mechanistic reference.  The kernel
 * (sims/kernels/kernel_token.c, sd_token.h) samples the same law from
 * alias tables, with other random numbers; the driver and `check` use it
 * on stored chains. */
#include <stdlib.h>

#include "../../src/sd_exact.h"
#include "../../src/sd_zipf.h"
#include "../../src/sd_backoff.h"
#include "../engine/sd_paired.h"
#include "../engine/sd_verifier.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"
#include "sd_token.h"
#include "sd_tokenwise.h"

#include "../../src/sd_dist.h"

/* The iteration under a draft policy other than fixed: sd_tokenwise_verify
 * with the standard rule, stopping the draft where the policy says (the
 * decision after an accepted x_i reads x_1..x_i only). */
static void S_step_policy(const sd_draft_policy *pol, int peek, const sd_chain *c, sd_stream *rng, size_t n,
                          size_t G, size_t prev, size_t *out, sd_iter *it)
{
    size_t V = c->V;
    double accept = 1.0;
    for (size_t i = 0; i < G; i++) {
        const double *p = sd_chain_p(c, n + i, prev), *q = sd_chain_q(c, n + i, prev);
        it->rb_rejected += sd_dist_tv(p, q, V);
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        if (!(sd_stream_uniform(rng) * p[x] < q[x])) {
            double mass = sd_dist_tv(p, q, V);
            if (peek && i > 0 && mass > 0.0) { /* the control: "x is not drafted" */
                G = i;
                break;
            }
            if (mass > 0.0) {
                out[i] = sd_token_rule_standard.sample(&sd_token_rule_standard, p, q, V, mass,
                                                       sd_stream_uniform(rng));
                it->accepted = i;
                it->emitted = i + 1;
                it->rejected = 1;
                return;
            }
        }
        out[i] = x;
        prev = x;
        accept *= sd_draft_accept_prob(p[x], q[x]);
        if (i + 1 < G && !sd_draft_policy_continue(pol, accept, sd_chain_p(c, n + i + 1, x), V))
            G = i + 1;
    }
    it->accepted = G;
    it->emitted = G;
    if (n + G <= c->T) { /* bonus token from q */
        out[G] = sd_dist_sample(sd_chain_q(c, n + G, prev), V, 1.0, sd_stream_uniform(rng));
        it->emitted = G + 1;
    }
}

enum { P_POLICY = SD_TOKEN_SLOT_POLICY };

/* The mechanistic reference: sd_tokenwise_verify with the standard rule
 * (accept with u·p < q, i.e. probability min(1, q/p); residual [q-p]+). */
static int S_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    it->rb_rejected = 0.0; /* + TV(p_n, q_n) per tested position (sd_tokenwise.h) */
    sd_draft_policy pol = sd_draft_policy_decode(sd_param_real(par, P_POLICY));
    if (pol.rule != SD_DRAFT_FIXED) {
        S_step_policy(&pol, 0, c, rng, n, sd_draft_len(c, par, n), prev, out, it);
        return SD_OK;
    }
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

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_DRAFT_POLICY(P_POLICY), SD_PARAM_END};

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
    if (sd_draft_policy_decode(sd_param_real(par, P_POLICY)).rule != SD_DRAFT_FIXED)
        return sd_error_set(err, SD_EUSAGE, "token: a draft policy: the DP over the iteration law");
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
/* Under a draft policy: every drafted prefix x_1..x_i that went on, by
 * depth-first search.  At depth i (position t = n+i, x_{t-1} = a, the
 * prefix's probability P and acceptance product A): y accepted with weight
 * min(p,q)(y), then the policy (or the cap, or the horizon) ends the draft
 * with a bonus from q_{t+1}(.|y) where it fits; y from the residual
 * [q-p]+(y) ends it rejected. */
typedef struct {
    const sd_draft_policy *pol;
    int peek; /* the control broken-draft-peek */
    const sd_chain *c;
    size_t n, G;
    size_t *buf;
    struct sd_iter_law *law;
} S_dfs;

/* The control's peek (sd_token.h): at depth i >= 1 the rejected mass TV
 * ends the draft before x_{i+1}, with the bonus from q_t(.|a). */
static int S_law_peek(S_dfs *d, size_t i, size_t a, double P, sd_error *err)
{
    const sd_chain *c = d->c;
    size_t V = c->V, t = d->n + i;
    double tv = sd_dist_tv(sd_chain_p(c, t, a), sd_chain_q(c, t, a), V);
    const double *q = sd_chain_q(c, t, a);
    int rc = SD_OK;
    for (size_t z = 0; z < V && !rc && tv > 0.0; z++) {
        d->buf[i] = z;
        rc = sd_iter_law_add(d->law, P * tv * q[z], d->buf, i + 1, z, 0, 1, err);
    }
    return rc;
}

static int S_law_dfs(S_dfs *d, size_t i, size_t a, double P, double A, sd_error *err)
{
    const sd_chain *c = d->c;
    size_t V = c->V, t = d->n + i;
    const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
    int rc;
    if (d->peek && i > 0 && (rc = S_law_peek(d, i, a, P, err)))
        return rc;
    for (size_t y = 0; y < V; y++) {
        d->buf[i] = y;
        double res = q[y] > p[y] ? q[y] - p[y] : 0.0;
        if (!(d->peek && i > 0) && res > 0.0 && (rc = sd_iter_law_add(d->law, P * res, d->buf, i + 1, y, 1, 1, err)))
            return rc;
        double acc = p[y] < q[y] ? p[y] : q[y];
        if (!(acc > 0.0))
            continue;
        double A2 = A * sd_draft_accept_prob(p[y], q[y]);
        if (i + 1 < d->G && sd_draft_policy_continue(d->pol, A2, sd_chain_p(c, t + 1, y), V)) {
            if ((rc = S_law_dfs(d, i + 1, y, P * acc, A2, err)))
                return rc;
        } else if (t + 1 <= c->T) { /* the bonus */
            const double *qb = sd_chain_q(c, t + 1, y);
            for (size_t z = 0; z < V; z++) {
                d->buf[i + 1] = z;
                if ((rc = sd_iter_law_add(d->law, P * acc * qb[z], d->buf, i + 2, z, 0, 1, err)))
                    return rc;
            }
        } else if ((rc = sd_iter_law_add(d->law, P * acc, d->buf, i + 1, y, 0, 1, err))) {
            return rc;
        }
    }
    return SD_OK;
}

int sd_token_policy_law(const sd_chain *c, const sd_params *par, int peek, size_t n, size_t prev,
                        struct sd_iter_law *out, sd_error *err)
{
    sd_draft_policy pol = sd_draft_policy_decode(sd_param_real(par, P_POLICY));
    size_t G = sd_draft_len(c, par, n);
    size_t *buf = malloc((G + 1) * sizeof *buf);
    if (!buf)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    S_dfs d = {&pol, peek, c, n, G, buf, out};
    int rc = S_law_dfs(&d, 0, prev, 1.0, 1.0, err);
    free(buf);
    return rc;
}

int sd_token_policy_step(const sd_chain *c, const sd_params *par, int peek, sd_stream *rng, size_t n,
                         size_t prev, size_t *out, sd_iter *it)
{
    it->rb_rejected = 0.0;
    sd_draft_policy pol = sd_draft_policy_decode(sd_param_real(par, P_POLICY));
    S_step_policy(&pol, peek, c, rng, n, sd_draft_len(c, par, n), prev, out, it);
    return SD_OK;
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    if (!sd_token_policy_fixed(par))
        return sd_token_policy_law(c, par, 0, n, prev, out, err);
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
