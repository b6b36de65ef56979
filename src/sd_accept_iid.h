/* sd_accept_iid.h — expected accepted draft tokens of one iteration when
 * every position has the same draft row p and target row q (the i.i.d.
 * problem, --p/--q), in O(V log V) time and O(V) memory instead of the V^γ
 * enumeration of sd_exact_accept.h.
 *
 * With r = q/p per token (p = 0: r = +inf; q = 0 < p: r = 0) and
 *     G(s) = Σ_y min(p(y), s q(y)) = s Σ_{r_y < 1/s} q(y) + Σ_{r_y >= 1/s} p(y)   (s > 0; G(0) = 0),
 * one binary search over the tokens sorted by r with prefix sums of q and
 * p, the laws of sd_exact_accept.h become, writing α = Σ min(p, q):
 *   token: P(τ >= l) = α^l (each draft token accepted with α independently;
 *          Leviathan et al. 2023), every l;
 *   block: P(τ >= 1) = α,  P(τ >= 2) = Σ_x p(x) G(min(1, r_x))
 *          (Sun et al. 2025, eq. 9 and Lemma 3: p_2 = min(1, p_1 r_y), p_1 = min(1, r_x));
 *   full:  P(τ >= 1) = α,  P(τ >= 2) = Σ_{x,y} min(p(x)p(y), q(x)q(y)) = Σ_x p(x) G(r_x)
 *          (Sun et al. 2024, Theorem 1).
 * Beyond l = 2 the law of p_l(X^l) under p^{⊗l} has up to V^{l-1} atoms, so
 * P(τ >= l), l >= 3, is a Monte-Carlo estimate: X^γ ~ p^{⊗γ} drawn trial by
 * trial (trial i on the Philox stream (seed, i)), and by Lemma 3
 * E[p_l(X^l)] = P(τ >= l) for block, E[min(1, Π_{i<=l} r_{X_i})] = P(τ >= l)
 * for full (the Rao-Blackwellised estimators: no acceptance coin is drawn).
 * The standard error is that of the per-trial sum Σ_{l>=3}, the exact
 * terms adding none.  Memory: 8V doubles at most (SD_ACCEPT_IID_BYTES). */
#ifndef SD_ACCEPT_IID_H
#define SD_ACCEPT_IID_H

#include <stddef.h>
#include <stdint.h>

#include "sd_error.h"
#include "sd_exact_accept.h"

/* The exact terms: P(τ >= l) for l <= SD_ACCEPT_IID_EXACT_L is exact for
 * block and full. */
#define SD_ACCEPT_IID_EXACT_L 2
/* Bytes the evaluator allocates at vocabulary V. */
#define SD_ACCEPT_IID_BYTES(V) ((size_t)(V) * 8 * sizeof(double) + 2 * sizeof(double))

typedef struct sd_accept_iid {
    double expected[SD_ACCEPT_NALGO]; /* E[τ] (exact or estimated) */
    double stderr_[SD_ACCEPT_NALGO];  /* its standard error: 0 where exact */
    int exact[SD_ACCEPT_NALGO];       /* 1: every term exact */
    uint64_t trials, seed;            /* the Monte-Carlo terms' (trials 0: none drawn) */
} sd_accept_iid;

/* E[τ] of token, block and full on the i.i.d. rows p, q (V entries each,
 * validated by the caller), draft length gamma >= 1; ccdf (3γ doubles, or
 * NULL) gets P(τ >= l) as sd_exact_accept_length's.  Monte-Carlo terms use
 * `trials` >= 2 draws (only when gamma > 2).  SD_EUSAGE for gamma 0 or
 * trials < 2 where needed; SD_ETOOBIG when SD_ACCEPT_IID_BYTES(V) exceeds
 * max_bytes (> 0), before allocating; SD_ENOMEM. */
int sd_accept_iid_eval(const double *p, const double *q, size_t V, size_t gamma, uint64_t trials, uint64_t seed,
                       size_t max_bytes, sd_accept_iid *out, double *ccdf, sd_error *err);

/* The same, with out->stderr_ the standard error of the Monte-Carlo part of
 * Σ_l w[l-1] P̂(τ >= l) (w: gamma weights; NULL reads as all 1, E[τ]): the
 * per-trial weighted sum's, so a smooth function of the estimated law gets
 * its delta-method standard error from its gradient w.  The same trials
 * (seed) as without weights: the estimates are identical. */
int sd_accept_iid_eval_weighted(const double *p, const double *q, size_t V, size_t gamma, uint64_t trials,
                                uint64_t seed, size_t max_bytes, const double *w, sd_accept_iid *out, double *ccdf,
                                sd_error *err);

/* A generation of T positions on i.i.d. rows, from the law of one
 * iteration's accepted length τ given by c[l-1] = P(τ >= l), l = 1..G, for
 * a verifier for which P(τ >= l) does not depend on the draft length g >= l
 * (a verifier that decides τ >= l from the first l positions; block
 * verification by Lemma 3 of Sun et al. 2025).  With r positions left an
 * iteration drafts g = min(G, r) tokens and
 *     τ = j < g: j + 1 tokens (the residual draw), one rejection, P = c_j - c_{j+1} (c_0 = 1);
 *     τ = g:     g + 1 tokens (the bonus) when g < r, else the r tokens left; P = c_g;
 * one target call each.  Renewal on r (W[0] = R[0] = 0):
 *     W[r] = 1 + Σ_j P_r(j) W[r - e_r(j)],  R[r] = Σ_{j<g} P_r(j) (1 + R[r - j - 1]) + c_g R[r - e_r(g)],
 * E[target calls] = W[T], E[N_rej] = R[T]: O(T·G) time, 3(T+1) doubles
 * (SD_ETOOBIG over max_bytes > 0, before allocating).  gcalls, grej (G
 * doubles each, or NULL) get the gradients ∂W[T]/∂c_l and ∂R[T]/∂c_l: with
 * D[r] the probability that an iteration starts with r positions left and
 * X_r(j) the value of outcome j after its step, ∂/∂c_l = Σ_{r: g(r) >= l}
 * D[r] (X_r(l) - X_r(l-1)) (c_l enters P_r(l) with +1 and P_r(l-1) with
 * -1).  SD_EUSAGE for G or T of 0. */
int sd_accept_iid_renewal(const double *c, size_t G, size_t T, size_t max_bytes, double *calls, double *rej,
                          double *gcalls, double *grej, sd_error *err);

#endif
