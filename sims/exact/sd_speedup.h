/* sd_speedup.h — expected wall-clock speed-up of speculative decoding over
 * target-only decoding.
 *
 * Cost model (Leviathan et al. 2023, §3.4, generalised): one target call
 * costs 1, one draft token costs c (the draft/target cost ratio); target-
 * only decoding of T tokens costs T.  An iteration makes one target call
 * and drafts d·γ tokens, where d is the number of drafts (k or M of the
 * multi-draft verifiers, which draft every one; 1 otherwise)
 * and γ the draft length (every iteration drafts γ tokens, as a deployed
 * system does, even where fewer are left before the horizon); a tree
 * verifier (--tree b1,...,bD, no γ) drafts the tree's b1 + b1 b2 + ... +
 * b1...bD nodes in D drafting steps.  Over a
 * generation of T tokens with E[target calls] = E[C]:
 *     S = T / (E[C] · (1 + c·d·γ)).
 * For i.i.d. tokens with acceptance α = Σ min(p, q), token-level SD has
 * E[C]/T -> (1 - α)/(1 - α^{γ+1}) as T -> ∞, and S reduces to Leviathan
 * et al.'s (1 - α^{γ+1}) / ((1 - α)(γc + 1)). */
#ifndef SD_SPEEDUP_H
#define SD_SPEEDUP_H

#include "../engine/sd_verifier.h"

/* The draft length: γ, or the depth D of a tree verifier's tree; 0 for a
 * verifier with neither. */
size_t sd_speedup_draft_length(const sd_verifier_type *vt, const sd_params *par);

/* Draft tokens computed per iteration: d·γ (γ must be set), or the nodes of
 * a tree verifier's tree. */
double sd_speedup_draft_tokens(const sd_verifier_type *vt, const sd_params *par);

/* E[target calls] of vt at par on m: exact (*exact = 1, lo = hi = the
 * value) where vt has an exact evaluator with a value there, else the mean
 * of `trials` trials of the engine (seed) with its 95% CI. */
int sd_speedup_calls(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                     uint64_t trials, uint64_t seed, double *calls, double *lo, double *hi, int *exact,
                     sd_error *err);

/* T / (calls · (1 + c · draft_tokens)). */
double sd_speedup(double T, double calls, double c, double draft_tokens);

/* Leviathan et al. 2023, eq. of §3.4: (1 - α^{γ+1}) / ((1 - α)(γc + 1)),
 * with its limit (γ + 1)/(γc + 1) at α = 1. */
double sd_speedup_leviathan(double alpha, size_t gamma, double c);

/* The i.i.d. limit of E[C]/T for a verifier with an exact iteration law
 * (sd_verifier_type.iteration_law) on the single-token problem (p, q)
 * repeated: away from the horizon every iteration has the same law,
 * whatever x_{n-1}, so by the renewal-reward theorem
 *     E[C](T)/T -> E[calls of one iteration] / E[tokens it emits],
 * for an iteration with its full draft of gamma >= 1 tokens and the bonus
 * token.  (The increment E[C](T+1) - E[C](T) tends to the same value only
 * slowly as alpha -> 1, where an iteration emits gamma + 1 tokens almost
 * surely and the increments cycle with that period: at alpha = 1 they are
 * 0, 0, 1, ... for gamma = 2.)  SD_EUSAGE without an iteration law or with
 * gamma = 0; the law's own refusals (SD_ETOOBIG). */
/* Token-level SD's limit E[C]/T on i.i.d. tokens with acceptance α:
 * (1 - α)/(1 - α^{γ+1}) (an iteration makes one call and emits
 * (1 - α^{γ+1})/(1 - α) tokens in expectation); 1/(γ+1) at α = 1.  O(1),
 * without the rows. */
double sd_speedup_iid_rate_token(double alpha, size_t gamma);

int sd_speedup_iid_rate(const sd_verifier_type *vt, const sd_params *par, const double *p,
                        const double *q, size_t V, double *rate, sd_error *err);

#endif
