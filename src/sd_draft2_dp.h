/* sd_draft2_dp.h — exact values of token-level speculative decoding
 * (Leviathan et al. 2023; Yin et al. 2024) with a bigram drafter beside a
 * bigram target, both backoff models (src/sd_arpa_draft2.h attaches the
 * drafter to an sd_backoff), at any draft length γ, from sparse sums.
 *
 * The DP.  Within an iteration both rows depend only on the previous output
 * token a, so the state at position n is (a = x_{n-1}, j = drafts accepted
 * so far in the iteration), j = 0..γ, with mass M_j(a).  From j < γ the
 * token x is accepted with mass min(p_a(x), q_a(x)) (to (x, j+1)) or comes
 * from the residual with (q_a(x) - p_a(x))+ (to (x, 0)); from j = γ the
 * bonus token ~ q_a (to (x, 0)).  A target call is counted at every
 * position with j = 0 and a rejection with mass Σ_{j<γ} Σ_a M_j(a) TV(p_a,
 * q_a).  So the next vectors are
 *     M'_{j+1}(x) = Σ_a M_j(a) min(p_a, q_a)(x),
 *     M'_0(x) = Σ_a (Σ_j M_j(a)) q_a(x) - Σ_{j<γ} M'_{j+1}(x).
 * At γ >= T (or 0) no iteration is cut: Theorem 1, E[N_rej] = Σ_n Σ_a
 * Q_{n-1}(a) TV(p_a, q_a).
 *
 * The push of min(p_a, q_a) for all x at once.  The target row is
 * q_a(x) = e_a(x) on its seen bigrams S_a, else c_a u(x) (Katz 1987); the
 * draft row over the target's words is p_a(x) = d_a(x) on its seen bigrams
 * D_a, else K_a w(x) (w the draft's unigram over the target's words, K_a
 * its backoff weight times UT / mass_a, src/sd_arpa_draft2.h).  Off
 * S_a ∪ D_a, with ρ(x) = w(x)/u(x) and t_a = c_a / K_a,
 *     min(K_a w(x), c_a u(x)) = K_a w(x) if t_a > ρ(x), else c_a u(x),
 * so Σ_a M(a) min(K_a w(x), c_a u(x)) = w(x) Σ_{t_a > ρ(x)} M(a) K_a +
 * u(x) Σ_{t_a <= ρ(x)} M(a) c_a: one merge of the tokens by ρ (sorted once
 * by the model) with the contexts by t (sorted once here), O(V); then each
 * x in S_a ∪ D_a is corrected by M(a)(min(p_a, q_a)(x) - min(K_a w(x),
 * c_a u(x))).  Per push O(V + |S| + |D|), S and D all seen bigrams of the
 * two models; the rest terms of TV(p_a, q_a) are c_a A_k - K_a B_k, k =
 * #{ρ < t_a} (A, B the prefix sums of u and w in ρ order), found by the
 * same merge.  Each context's union and its corrections min(p_a, q_a) -
 * min(K_a w, c_a u) are listed once, so a push reads them without lookups.
 * Memory: 2(γ+1) + 1 vectors of V doubles, 6 more of V and 12 bytes per
 * bigram of the two models (checked against the model's budget before
 * allocating). */
#ifndef SD_DRAFT2_DP_H
#define SD_DRAFT2_DP_H

#include <stddef.h>

#include "sd_backoff.h"
#include "sd_error.h"

/* Bytes the DP allocates on m at draft length gamma (0: horizon), at most. */
size_t sd_draft2dp_bytes(const sd_backoff *m, size_t gamma);

/* E[N_rej] and E[target calls] (either may be NULL) of token-level SD with
 * draft length gamma (0 or >= m->T: the horizon) on m with a bigram draft
 * attached.  SD_EUSAGE without one; SD_EDATA when the target reaches a
 * context whose draft row has no mass; SD_ETOOBIG over m->max_bytes;
 * SD_ENOMEM. */
int sd_draft2dp_token(const sd_backoff *m, size_t gamma, double *rejections, double *target_calls, sd_error *err);

/* tv[a] = TV(p_a, q_a) for every context a (V entries), by the sparse sums
 * above (the merge instead of one search per context). */
int sd_draft2dp_tv(const sd_backoff *m, double *tv, sd_error *err);

#endif
