/* sd_policy_cost.h — E[target calls] and E[draft tokens] of a verifier that
 * reads --draft-policy (src/sd_draft.h; token and block), for the cost model
 * S = T / (E[calls] + c E[draft tokens]) of src/sd_exact_policy.h.
 *
 * Forward over the iteration starts: S(1, a) = init(a), and an iteration
 * starting at (n, a) with probability S(n, a) adds S(n, a) P(o) to
 * S(n + e_o, last_o) for each outcome o of its law
 * (sd_verifier_type.iteration_law), S(n, a) E[calls of o] to the calls and
 * S(n, a) L(n, a) to the draft tokens, where L(n, a), the expected draft
 * length of an iteration starting at (n, a), depends on the draft process
 * and the policy only (the policy reads the drafts, never a coin):
 *     L = Σ over drafted prefixes x_1..x_i where the policy (or the cap)
 *         stops, of p(x_1..x_i) · i.
 * State space: (n, x_{n-1}), with the drafted prefixes inside each
 * iteration (at most V^cap); refused with the iteration law's own limits. */
#ifndef SD_POLICY_COST_H
#define SD_POLICY_COST_H

#include "../engine/sd_verifier.h"

int sd_policy_cost(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, double *calls,
                   double *drafted, sd_error *err);

#endif
