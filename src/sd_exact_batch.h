/* sd_exact_batch.h — exact rejections of batch speculative decoding
 * (Yin et al. 2024, §3.2, Theorem 3 and Proposition 1).
 *
 * Batch SD (Yin et al. 2024, Alg. 4): at the start of an iteration M
 * drafts are drawn from the same prefix; their first tokens are tried in
 * turn against q^1 = q, q^{m+1} = [q^m - p]+; the first accepted one's draft
 * continues alone, verified with the original q.  A rejection is an
 * iteration ending with a residual draw: all M first tokens fail (sample
 * q^{M+1}) or a later token of the chosen draft fails (sample [q-p]+).
 *
 * Lookahead is the rest of the horizon (Yin et al. 2024, Remark 1). */
#ifndef SD_EXACT_BATCH_H
#define SD_EXACT_BATCH_H

#include <stddef.h>

#include "sd_chain.h"
#include "sd_exact.h"

/* Work limit of the chain-level evaluators: T·V²·M row operations, the
 * library's SD_EXACT_MAX_WORK (about a minute at the limit).  Larger
 * problems are refused (SD_ETOOBIG) before anything is allocated; the
 * M -> ∞ limit costs O(T V²) whatever M. */

/* Theorem 3 of Yin et al. 2024 by the recursion below:
 *   F_0 = init,
 *   F_n(b) = Σ_a [h_n(b|a) Q_{n-1}(a) - (h_n(b|a) - R_n(a) q_n^{M+1}(b|a)) F_{n-1}(a)],
 *   E[N_rej] = Σ_n [Σ_a Q_{n-1}(a) TV_n(a) - Σ_a F_{n-1}(a) (TV_n(a) - R_n(a))],
 * with h = max(0, q-p), TV_n(a) = TV(p_n(.|a), q_n(.|a)),
 * R_n(a) = Π_{m=1..M} TV(q^m, p)(a).  M = 1 gives Theorem 1.
 * M >= 1 (else SD_EUSAGE); T·V²·M <= SD_EXACT_MAX_WORK (else
 * SD_ETOOBIG, before allocating).
 * *out receives E[N_rej].  Returns SD_OK, SD_EUSAGE, SD_ETOOBIG, SD_ENOMEM. */
int sd_exact_batch_rejections(const sd_chain *c, size_t M, double *out, sd_error *err);

/* The same number by an independent dynamic program over the state
 * (x_{n-1}, fresh or continuing): "fresh" means position n starts a new
 * iteration (M first tokens), "continuing" that x_{n-1} was an accepted
 * token of the chosen draft, so x_n is that draft's next token.  Cost
 * O(T V² M), memory O(V² + V M). Same contract as above. */
int sd_exact_batch_rejections_dp(const sd_chain *c, size_t M, double *out, sd_error *err);

/* The limit M -> ∞ (Yin et al. 2024, Proposition 1, corrected).  The paper takes
 * R_n(a) = Π_m TV(q^m, p) -> 0, which holds only where supp q_n(.|a) ⊆
 * supp p_n(.|a).  In general, with Z = {b : p_n(b|a) = 0},
 *   R_n(a) q_n^{M+1}(b|a) -> q_n(b|a) 1{b ∈ Z}   and   R_n(a) -> q_n(Z|a),
 * because the accepted first tokens never land in Z while every other
 * residual mass is used up (proof in sd_exact_batch.c).  Then
 *   F_n(b) = Σ_a [h_n(b|a) (Q_{n-1}(a) - F_{n-1}(a)) + F_{n-1}(a) q_n(b|a) 1{p_n(b|a) = 0}],
 *   E[N_rej] = Σ_n Σ_a [(Q_{n-1}(a) - F_{n-1}(a)) TV_n(a) + F_{n-1}(a) q_n(Z|a)],
 * which is the paper's formula when every Z carries no target mass.
 * Returns SD_OK, SD_ETOOBIG beyond T·V² = SD_EXACT_MAX_WORK (before
 * allocating), or SD_ENOMEM. */
int sd_exact_batch_rejections_inf(const sd_chain *c, double *out, sd_error *err);

/* The single-token batch quantities of one row pair (draft p, target q),
 * V entries each:  returns R = Π_{m=1..M} TV(q^m, p), the probability that
 * all M first tokens are rejected, and writes u = R·q^{M+1} (the
 * unnormalised final residual: P(all M rejected, output = b)) to u_out
 * (V doubles, caller's).  Computed without divisions as
 *   u_1 = q,   u_{m+1} = max(0, u_m - (Σ u_m) p),   R = Σ u_{M+1},
 * since Σ u_m = Π_{j<m} r_j.  Stops early once u no longer changes.
 * O(V·M).  M = 1 gives R = TV(p,q) and u = max(0, q-p). */
double sd_exact_batch_row(const double *p, const double *q, size_t V, size_t M,
                          double *u_out);

#endif
