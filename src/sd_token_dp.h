/* sd_token_dp.h — the token-level DP of speculative decoding (Leviathan et
 * al. 2023; Yin et al. 2024) on a first-order chain whose rows are sparse
 * backoff rows (src/sd_backoff.h), written once for every draft that makes
 * the pushes: the unigram draft (src/sd_backoff.c) and a bigram draft
 * (src/sd_draft2_dp.c).
 *
 * Within an iteration both rows depend only on the previous output token
 * a, so the state at position n is (a = x_{n-1}, j = drafts accepted so
 * far in the iteration), j = 0..γ, with mass M_j(a).  A target call is
 * counted at every position with j = 0 and a rejection with mass
 * Σ_{j<γ} Σ_a M_j(a) TV(p_a, q_a); the next vectors are
 *     M'_{j+1}(x) = Σ_a M_j(a) min(p_a, q_a)(x)             (the min push),
 *     M'_0(x) = Σ_a (Σ_j M_j(a)) q_a(x) - Σ_{j<γ} M'_{j+1}(x) (the q push).
 * At γ = 0 or γ >= T no iteration is cut: Theorem 1 of Yin et al. 2024,
 * E[N_rej] = Σ_{n=1..T} Σ_a Q_{n-1}(a) TV(p_a, q_a), with the target's
 * marginals Q_n, and E[calls] = 1 + E[N_rej] - (the n = T term). */
#ifndef SD_TOKEN_DP_H
#define SD_TOKEN_DP_H

#include <stddef.h>

#include "sd_backoff.h"

/* out[x] = Σ_a M(a) min(p_a(x), q_a(x)) for every x (overwriting out). */
typedef void (*sd_token_dp_min_fn)(const void *ctx, const double *M, double *out);

/* out[x] = Σ_a M(a) q_a(x): one pass over the seen bigrams of m. */
void sd_token_dp_push_q(const sd_backoff *m, const double *M, double *out);

/* The vectors of V doubles the DP needs at draft length gamma: 2 at the
 * horizon (gamma 0 or >= m->T), else 2(gamma + 1) + 1. */
size_t sd_token_dp_vectors(const sd_backoff *m, size_t gamma);

/* E[N_rej] and E[target calls] of token-level SD on m from position 1
 * (x_0 = m->start) at draft length gamma, with tv[a] = TV(p_a, q_a) and the
 * min push push_min(ctx, ·, ·) (unused at the horizon).  buf holds
 * sd_token_dp_vectors(m, gamma) · V doubles, all zero.  Returns -1, or the
 * first context a the chain reaches with a non-finite tv[a] (a context
 * without a draft row), then *bad_n is the position and the sums are
 * partial. */
long sd_token_dp_run(const sd_backoff *m, size_t gamma, const double *tv, sd_token_dp_min_fn push_min, const void *ctx,
                     double *buf, size_t *bad_n, double *rejections, double *target_calls);

#endif
