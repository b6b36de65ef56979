/* sd_exact_policy.h — token-level speculative decoding under a draft-length
 * policy (src/sd_draft.h): its exact expected target calls and draft tokens,
 * and the best stopping rule of all under a cost model.
 *
 * Cost model (that of sims/exact/sd_speedup.h with the draft length a random
 * variable): a target call costs 1, a draft token c, so a generation costs
 * E[calls] + c E[drafted] and its speed-up over target-only decoding is
 * S = T / (E[calls] + c E[drafted]).  Every iteration drafts 1..cap tokens,
 * cap = sd_draft_len_at(gamma, T, n).
 *
 * Dynamic program.  What the drafter can see when it decides whether to
 * draft another token is the position n where the iteration started, the
 * token before it x_{n-1} = a, and the tokens x_1..x_i it has drafted (the
 * earlier history adds nothing: the chain is Markov and an iteration starts
 * afresh).  The state space is therefore
 *     { (n, a, x_1..x_i) : 1 <= n <= T, a < V, 0 <= i <= cap(n) },
 * finite, of size Σ_n V (1 + V + ... + V^cap(n)).  Backward over n, with
 * C(n, a), D(n, a) the expected calls and draft tokens from an iteration
 * starting at (n, a) to the end (C = D = 0 past T), a drafted prefix that
 * stops has calls-to-go
 *     1 + Σ_{j<=i} A_{j-1} (1 - a_j) Σ_y r_j(y) C(n+j, y)
 *       + A_i Σ_z q_{n+i}(z|x_i) C(n+i+1, z)   (the bonus, n+i <= T),
 * where a_j = min(1, q/p) at x_j, A_j = a_1...a_j, r_j the residual
 * [q-p]+/TV at the j-th drafted position; the same with D and i for the
 * draft tokens.  A prefix that goes on averages its children x_{i+1} ~ p.
 * A policy takes its own decisions; the best rule takes, at every prefix
 * with 1 <= i < cap, the cheaper of stopping and going on in the cost
 * C + c D (a tie stops): by backward induction it minimises the expected
 * cost over every stopping rule that reads what the drafter sees and
 * drafts at least one token.  Work: Σ_n V Σ_i V^i · 3V operations, refused
 * beyond SD_EXACT_MAX_WORK (src/sd_exact.h). */
#ifndef SD_EXACT_POLICY_H
#define SD_EXACT_POLICY_H

#include <stddef.h>

#include "sd_chain.h"
#include "sd_draft.h"
#include "sd_error.h"

/* E[target calls] and E[draft tokens] of token-level SD with cap gamma
 * (0: the rest of the horizon) under pol. */
int sd_exact_policy(const sd_chain *c, size_t gamma, const sd_draft_policy *pol, double *calls,
                    double *drafted, sd_error *err);

/* The same under the best stopping rule for draft cost ratio cost >= 0
 * (the rule depends on it). */
int sd_exact_policy_best(const sd_chain *c, size_t gamma, double cost, double *calls, double *drafted,
                         sd_error *err);

/* The entropy rule's decisions change only where H crosses the entropy of
 * a draft row: the distinct entropies of the rows p_t(.|a), t = 1..T, in
 * increasing order, into out[0..max) (*n receives their number, at most
 * max; SD_ETOOBIG when there are more).  With 0 they are every threshold
 * entropy:H can behave as, so the best of them is the best threshold. */
int sd_exact_policy_entropies(const sd_chain *c, double *out, size_t max, size_t *n, sd_error *err);

/* T / (calls + cost · drafted). */
double sd_exact_policy_speedup(double T, double calls, double drafted, double cost);

#endif
