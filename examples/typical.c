/* typical.c — Medusa's typical acceptance, as a simdec plugin.
 *
 * T. Cai, Y. Li, Z. Geng, H. Peng, J. D. Lee, D. Chen, T. Dao, "Medusa:
 * Simple LLM Inference Acceleration Framework with Multiple Decoding
 * Heads", ICML 2024 (arXiv:2401.10774), "Typical Acceptance".  Instead of
 * the rejection sampling of speculative decoding, a drafted token is kept
 * when the target finds it plausible enough, with a threshold that falls as
 * the target's row grows uncertain:
 *
 *   draft tokens x̃_n, x̃_{n+1}, ... one at a time, x̃_t ~ p_t(.|x_{t-1});
 *   keep x̃_t (x_t = x̃_t) iff   q(x̃_t) > τ(q) = min(ε, δ·exp(-H(q))),
 *   where q = q_t(.|x_{t-1}) and H(q) = -Σ_b q(b) ln q(b) (nats; 0 ln 0 = 0);
 *   at the first x̃_t not kept, x_t ~ q (the target row itself, not a
 *   residual) and the iteration ends (reported as `rejected`: it ended with
 *   a token that is not the draft's);
 *   if all G = sd_draft_len drafts are kept and n + G <= T, a bonus token
 *   x_{n+G} ~ q_{n+G}(.|x_{n+G-1}).
 *
 * Parameters: --eps ε in [0, 1] (the hard threshold, default 0.09), --delta
 * δ >= 0 (the entropy-dependent one, default 0.3 = √0.09), --gamma G.
 * Every uniform comes from the trial's stream, in the order draft, [target
 * sample] (no coin: the test is deterministic given the draft).
 *
 * It is lossy, by design.  Given x_{t-1} at a drafting position, with
 * A = {b : q(b) > τ(q)} and r = Σ_{b∉A} p(b), the token's law is
 *     P(x_t = b) = p(b)·1[b ∈ A] + r·q(b),
 * which in general is not q: when every q(b) > τ(q) (A is everything,
 * r = 0), the draft's law p is emitted unchanged.  So claims_lossless is always 0, and `simdec
 * check` should flag it whenever p ≠ q.  (ε = 0 keeps every draft token
 * the target allows.)
 *
 * Build (docs/adding-a-verifier.md; `make examples` does it):
 *     cc -std=c11 -O2 -fPIC -shared -I include examples/typical.c -o typical.so -lm
 *     ./simdec run --plugin ./typical.so --algo typical --eps 0.05 --delta 0.3 */
#include <math.h>

#include "../include/simdec.h"

enum { P_EPS, P_DELTA }; /* slots of its own parameters */

static const sd_param_decl S_params[] = {
    {.name = "eps", .kind = SD_PARAM_REAL, .slot = P_EPS, .def = 0.09, .min = 0.0, .max = 1.0,
     .help = "typical acceptance: keep draft x iff q(x) > min(eps, delta*exp(-H(q))) (default 0.09)"},
    {.name = "delta", .kind = SD_PARAM_REAL, .slot = P_DELTA, .def = 0.3, .min = 0.0, .max = 1e300,
     .help = "entropy-dependent threshold delta*exp(-H(q)) of typical acceptance (default 0.3)"},
    SD_PARAM_GAMMA,
    SD_PARAM_END,
};

/* H(q) in nats. */
static double S_entropy(const double *q, size_t V)
{
    double h = 0.0;
    for (size_t b = 0; b < V; b++)
        if (q[b] > 0.0)
            h -= q[b] * log(q[b]);
    return h;
}

/* 1 iff q(x) > min(eps, delta*exp(-H(q))).  q(x) > eps already decides it
 * (the minimum is at most eps), so the entropy is only computed when the
 * entropy-dependent threshold matters. */
static int S_typical(const double *q, size_t V, size_t x, double eps, double delta)
{
    if (q[x] > eps)
        return 1;
    return q[x] > delta * exp(-S_entropy(q, V));
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)err;
    const double eps = sd_param_real(par, P_EPS), delta = sd_param_real(par, P_DELTA);
    const size_t G = sd_draft_len(c, par, n);
    size_t a = prev;
    it->target_calls = 1;
    it->rejected = 0;
    for (size_t j = 0; j < G; j++) {
        const double *p = sd_chain_p(c, n + j, a), *q = sd_chain_q(c, n + j, a);
        size_t x = sd_dist_sample(p, c->V, 1.0, sd_stream_uniform(rng)); /* draft */
        if (!S_typical(q, c->V, x, eps, delta)) {
            out[j] = sd_dist_sample(q, c->V, 1.0, sd_stream_uniform(rng)); /* from the target */
            it->accepted = j;
            it->emitted = j + 1;
            it->rejected = 1;
            return SD_OK;
        }
        out[j] = a = x;
    }
    it->accepted = it->emitted = G;
    if (n + G <= c->T) { /* every draft kept: a bonus token from the target */
        out[G] = sd_dist_sample(sd_chain_q(c, n + G, a), c->V, 1.0, sd_stream_uniform(rng));
        it->emitted = G + 1;
    }
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c;
    *state = NULL;
    if (!(sd_param_real(par, P_EPS) >= 0.0 && sd_param_real(par, P_EPS) <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "--eps %g: expected a number in [0, 1]", sd_param_real(par, P_EPS));
    if (!(isfinite(sd_param_real(par, P_DELTA)) && sd_param_real(par, P_DELTA) >= 0.0))
        return sd_error_set(err, SD_EUSAGE, "--delta %g: expected a finite number >= 0", sd_param_real(par, P_DELTA));
    return SD_OK;
}

/* Lossy at every parameter (see the opening comment). */
static int S_lossless(const sd_params *par)
{
    (void)par;
    return 0;
}

const sd_verifier_type sd_verifier_typical = {
    .name = "typical",
    .summary = "typical acceptance: keep draft x iff q(x) > min(eps, delta*exp(-H(q))), else sample q "
               "(Cai et al. 2024, Medusa)",
    .params = S_params,
    .claims_lossless = S_lossless,
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_typical);
