/* sd_exact_accept.h — expected accepted draft tokens in one iteration
 * (Sun et al. 2025, eq. 9 and Lemma 3;
 * Sun et al. 2024, Theorem 1).
 *
 * Context: step t (1-based) with x_{t-1} = a.  The draft block
 * X^γ = (x_t, ..., x_{t+γ-1}) is drawn from the draft chain's rows
 * p_{t+i}(.|x_{t+i-1}); q(x^l) is the target chain's probability of the
 * same prefix.  τ is the number of draft tokens accepted (the bonus or
 * residual token is not counted), and E[τ] = Σ_{l=1..γ} P(τ >= l) with
 *   token:  P(τ >= l) = Σ_{x^l} p(x^l) Π_{i<=l} min(1, q(x_i|x^{i-1})/p(x_i|x^{i-1}))
 *   block:  P(τ >= l) = Σ_{x^l} p(x^l) p_l(x^l), where (Sun et al. 2025, eq. 9)
 *           p_0 = 1,  p_i(x^i) = min(1, p_{i-1}(x^{i-1}) q(x_i|x^{i-1}) / p(x_i|x^{i-1}))
 *           and Lemma 3 gives P(τ >= i | X^i = x^i) = p_i(x^i);
 *   full:   P(τ >= l) = Σ_{x^l} min(p(x^l), q(x^l)), the full-information
 *           optimum (block-level optimal transport, Sun et al. 2024, Theorem 1, and
 *           greedy-block verification).
 * For the toy model of Sun et al. 2025, §2 (p(A) = 2/3, q(A) = 1/3, i.i.d.) at γ = 2
 * these are 10/9, 11/9, 12/9. */
#ifndef SD_EXACT_ACCEPT_H
#define SD_EXACT_ACCEPT_H

#include <stddef.h>

#include "sd_chain.h"

typedef enum sd_accept_algo {
    SD_ACCEPT_TOKEN = 0,
    SD_ACCEPT_BLOCK = 1,
    SD_ACCEPT_FULL = 2,
    SD_ACCEPT_NALGO = 3
} sd_accept_algo;

/* "token", "block", "full". */
const char *sd_accept_algo_name(sd_accept_algo a);

/* Largest V^γ (number of draft blocks) the enumeration accepts. */
#define SD_EXACT_ACCEPT_MAX_BLOCKS 10000000.0

/* Computes E[τ] for the three rules at once by enumerating the tree of
 * draft prefixes (Σ_{l<=γ} V^l nodes, branches of draft probability 0
 * skipped):  expected[algo] for algo < SD_ACCEPT_NALGO, and, when ccdf is
 * not NULL, ccdf[algo*γ + l-1] = P(τ >= l) for l = 1..γ (3γ doubles, the
 * caller's).  Requires 1 <= t, t+γ-1 <= T (the block may not run past the
 * horizon), a < V, γ >= 1 (SD_EUSAGE naming the option), and
 * V^γ <= SD_EXACT_ACCEPT_MAX_BLOCKS (SD_ETOOBIG, before allocating). */
int sd_exact_accept_length(const sd_chain *c, size_t t, size_t a, size_t gamma,
                           double expected[SD_ACCEPT_NALGO], double *ccdf, sd_error *err);

#endif
