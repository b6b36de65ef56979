/* sd_exact.h — exact chain-level evaluators.
 *
 * Further evaluators (batch Theorem 3, single-token closed forms, optimal
 * multi-draft acceptance, ...) live in their own files sd_exact_*.c with
 * declarations in sd_exact_*.h. */
#ifndef SD_EXACT_H
#define SD_EXACT_H

#include <stdint.h>

#include "sd_chain.h"

/* One step of the target chain: next(b) = Σ_a cur(a) q_n(b|a), V doubles
 * each (cur and next must not overlap). */
void sd_exact_target_step(const sd_chain *c, size_t n, const double *cur, double *next);

/* Target marginals Q_0 = init, Q_n = Q_{n-1} q_n for n = 1..T:
 * out[n*V + b] = P_q(x_n = b), (T+1)*V doubles owned by the caller. */
void sd_exact_target_marginals(const sd_chain *c, double *out);

/* Theorem 1 of Yin et al. 2024: the expected number of
 * rejections of token-level speculative decoding with lookahead to the
 * horizon,
 *     E[N_rej] = Σ_{n=1..T} Σ_a Q_{n-1}(a) TV(p_n(.|a), q_n(.|a)),
 * in O(T V²) time and O(V) memory.  This is the lookahead K = T of
 * Yin et al. 2024, Algorithm 2 / Remark 1: every position is drafted.  Returns SD_OK,
 * SD_ETOOBIG beyond T·V² = SD_EXACT_MAX_WORK (a time-homogeneous chain stores
 * V² numbers whatever T), or SD_ENOMEM. */
int sd_exact_rejections(const sd_chain *c, double *out, sd_error *err);

/* Token-level speculative decoding with a fixed draft length γ (γ = 0: the
 * rest of the horizon) and a bonus token from q after γ acceptances
 * (sims/verifiers/token.c).  Theorem 1 no longer applies when γ < T: a bonus
 * position is never rejected.
 *
 * γ = 0 or γ >= T (every position drafted): E[N_rej] is Theorem 1 and
 *   E[target calls] = E[N_rej] + 1 - P(rejection at T),
 * since the last iteration adds a call without a rejection exactly when x_T
 * is accepted; P(rejection at T) = Σ_a Q_{T-1}(a) TV(p_T,q_T)(a).  O(T V²).
 *
 * 1 <= γ < T: the exact DP of sd_exact_token_dp().
 * Either output may be NULL.  SD_ETOOBIG when the DP would exceed
 * SD_EXACT_MAX_WORK operations. */
int sd_exact_token(const sd_chain *c, size_t gamma, double *rejections,
                   double *target_calls, sd_error *err);

/* The DP behind sd_exact_token, for any γ (γ = 0: γ = T).  The pair
 * (x_{n-1}, j), j = draft tokens of the current iteration already
 * accepted, is a Markov chain:
 *   j < γ: x_n = b with min(p_n,q_n)(b|a), j → j+1 (accept), or with
 *          max(0, q_n - p_n)(b|a), j → 0 (a rejection);
 *   j = γ: x_n = b with q_n(b|a), j → 0 (bonus).
 * With F_n(a,j) its law before position n (F_1 = init × δ_0),
 *   E[N_rej] = Σ_n Σ_a Σ_{j<γ} F_n(a,j) TV(p_n,q_n)(a),
 *   E[target calls] = Σ_n Σ_a F_n(a,0)  (an iteration starts at j = 0).
 * O(T V² min(γ,T)) time; at γ = T an independent evaluation of the closed
 * forms above (the tests compare them). */
int sd_exact_token_dp(const sd_chain *c, size_t gamma, double *rejections,
                      double *target_calls, sd_error *err);

/* One position n of that DP: F (V·(G+1) doubles, F[a·(G+1) + j] = F_n(a,j))
 * to N (F_{n+1}), adding position n's expected rejections to *rej and its
 * iteration starts to *calls; p_rows and q_rows are step n's V×V rows
 * (p_rows[a·V + b] = p_n(b|a)).  A model streamed step by step (sd_gen_stream)
 * runs the DP forward with it. */
void sd_exact_token_dp_step(const double *p_rows, const double *q_rows, size_t V, size_t G,
                            const double *F, double *N, double *rej, double *calls);

/* Work bound of the exact evaluators here: 2^36 elementary operations
 * (about a minute); larger problems are refused, not started. */
#define SD_EXACT_MAX_WORK ((double)((uint64_t)1 << 36))

#endif
