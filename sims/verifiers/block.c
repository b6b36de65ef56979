/* block.c — block verification (Sun et al. 2025, Alg. 2, eqs. 3–5;
 * the Python sketch of its Appendix A is the reference).
 *
 * With the Markov chain, the draft block X_1..X_G starts at position n after
 * x_{n-1} = prev, and q(.|X^i), p(.|X^i) mean q_{n+i}(.|X_i), p_{n+i}(.|X_i)
 * (X_0 = prev).  With p_0 = 1,
 *     p_i = min(1, p_{i-1} q(X_i|X^{i-1}) / p(X_i|X^{i-1})),
 *     m_i = Σ_x max(p_i q(x|X^i) - p(x|X^i), 0),
 *     h_i = m_i / (m_i + 1 - p_i)   (i < G),     h_G = p_G       (eq. 5),
 *     τ   = max{i : η_i < h_i}  (0 if none; the loop does not stop at the
 *           first failure),
 * and the iteration outputs X^τ followed by one token Y:
 *     τ = G:  Y ~ q(.|X^G), the bonus token, when position n+G <= T;
 *     τ < G:  Y ~ max(p_τ q(.|X^τ) - p(.|X^τ), 0) normalised   (eq. 4),
 *             a rejection.
 * At the horizon end (n+G-1 = T) there is no bonus position; h_G = p_G is
 * still right: append a dummy position T+1 with p = q, where m_G = 0 and
 * p_{G+1} = p_G, and drop its token.
 *
 * Numerics: p_i <= 1 is computed without the division overflowing; it may
 * underflow to 0, after which nothing later can be accepted (m_j = 0), so
 * the loop stops drafting.  A residual of zero mass is never sampled: τ < G
 * with m_τ > 0 is guaranteed for τ >= 1 by the test η (m + 1 - p) < m, and
 * τ = 0 with m_0 = 0 has probability 0 in exact arithmetic (q_n = p_n makes
 * p_1 = 1 and forces a later acceptance); should rounding produce it, Y is
 * drawn from q(.|X^τ) instead.
 *
 * --draft-policy (src/sd_draft.h): the block ends at the first i < gamma
 * where the policy stops (read with the token-level acceptance product
 * Π min(1, q/p) of X^i, or the entropy of the next draft row); the block of
 * that length is verified as above (h_i = p_i there).  The kernel and the
 * output-first path decline a policy; check --exact on the iteration law
 * decides whether this is lossless (tests/test_draft_policy.c). */
#include <stdlib.h>

#include "../../src/sd_dist.h"
#include "sd_block.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"
#include "../engine/sd_paired.h"

typedef struct {
    size_t V;
    double *w; /* [V]: residual weights */
} S_state;

int sd_block_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)par;
    S_state *st = malloc(sizeof *st);
    double *w = malloc(c->V * sizeof *w);
    if (!st || !w) {
        free(st);
        free(w);
        return sd_error_set(err, SD_ENOMEM, "block verification: out of memory for V = %zu", c->V);
    }
    st->V = c->V;
    st->w = w;
    *state = st;
    return SD_OK;
}

void sd_block_free(void *state)
{
    S_state *st = state;
    if (st)
        free(st->w);
    free(st);
}

/* m = Σ_x max(pi q(x) - p(x), 0), and w(x) the terms when w != NULL. */
static double S_mass(double pi, const double *q, const double *p, size_t V, double *w)
{
    double m = 0.0;
    for (size_t x = 0; x < V; x++) {
        double d = pi * q[x] - p[x];
        d = d > 0.0 ? d : 0.0;
        if (w)
            w[x] = d;
        m += d;
    }
    return m;
}

int sd_block_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_block_residual kind)
{
    S_state *st = state;
    size_t V = c->V, G = sd_draft_len(c, par, n);
    size_t tau = 0, tau_prev = prev, y = prev;
    double pi = 1.0, tau_p = 1.0, A = 1.0;
    sd_draft_policy pol = sd_draft_policy_decode(par->v[SD_BLOCK_SLOT_POLICY]);
    for (size_t i = 1; i <= G; i++) {
        size_t t = n + i - 1;
        const double *p = sd_chain_p(c, t, y), *q = sd_chain_q(c, t, y);
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        out[i - 1] = x;
        /* p_i = min(1, p_{i-1} q/p); p[x] > 0 because x was drawn from p. */
        double num = pi * q[x];
        pi = num >= p[x] ? 1.0 : num / p[x];
        y = x;
        /* the draft-length policy ends the block here (gamma its cap) */
        A *= sd_draft_accept_prob(p[x], q[x]);
        if (i < G && !sd_draft_policy_continue(&pol, A, sd_chain_p(c, t + 1, x), V))
            G = i;
        if (pi == 0.0)
            break; /* m_j = 0 and p_j = 0 for every j >= i: no later acceptance */
        double eta = sd_stream_uniform(rng);
        int accept;
        if (i < G) {
            double m = S_mass(pi, sd_chain_q(c, t + 1, x), sd_chain_p(c, t + 1, x), V, NULL);
            accept = eta * (m + (1.0 - pi)) < m; /* η < h_i, eq. 5; m = 0 never accepts */
        } else {
            accept = eta < pi; /* h_G = p_G */
        }
        if (accept) {
            tau = i;
            tau_p = pi;
            tau_prev = x;
        }
    }
    it->accepted = tau;
    it->emitted = tau;
    /* Rao-Blackwell (sd_verifier.h): given the drafts, τ = G iff η_G < h_G =
     * p_G, independently of η_1..η_{G-1}; so P(rejected | drafts) = 1 - p_G
     * (pi = 0 after an early stop: a rejection for sure). */
    it->rb_rejected = 1.0 - pi;
    if (tau == G) {
        if (n + G <= c->T) { /* bonus token from q */
            out[G] = sd_dist_sample(sd_chain_q(c, n + G, tau_prev), V, 1.0, sd_stream_uniform(rng));
            it->emitted = G + 1;
        }
        return SD_OK;
    }
    const double *p = sd_chain_p(c, n + tau, tau_prev), *q = sd_chain_q(c, n + tau, tau_prev);
    double u = sd_stream_uniform(rng), m;
    size_t yv;
    if (kind == SD_BLOCK_RESIDUAL_TOKENWISE) {
        m = sd_dist_tv(p, q, V);
        yv = m > 0.0 ? sd_dist_sample_residual(p, q, V, m, u) : sd_dist_sample(q, V, 1.0, u);
    } else {
        m = S_mass(tau_p, q, p, V, st->w);
        yv = m > 0.0 ? sd_dist_sample(st->w, V, m, u) : sd_dist_sample(q, V, 1.0, u);
    }
    out[tau] = yv;
    it->emitted = tau + 1;
    it->rejected = 1;
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    return sd_block_step(state, c, par, rng, n, prev, out, it, SD_BLOCK_RESIDUAL_EQ4);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_DRAFT_POLICY(SD_BLOCK_SLOT_POLICY),
                                         SD_PARAM_END};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_draft_policy pol = sd_draft_policy_decode(par->v[SD_BLOCK_SLOT_POLICY]);
    return sd_law_block_policy(c, sd_draft_len(c, par, n), &pol, SD_BLOCK_RESIDUAL_EQ4, n, prev, out, err);
}
static const sd_kernel_type *const S_kernels[] = {&sd_block_kernel, &sd_block_kernel_backoff, NULL};

const sd_verifier_type sd_verifier_block = {
    .name = "block",
    .summary = "block verification (Sun et al. 2025, Alg. 2, eqs. 3-5)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = sd_block_alloc,
    .free = sd_block_free,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
    .kernels = S_kernels,
    .given_output = sd_paired_block_rule,
    .trace = &sd_trace_block,
};
