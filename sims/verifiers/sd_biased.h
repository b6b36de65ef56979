/* sd_biased.h — exact per-token law of the biased verifier (sims/verifiers/biased.c).
 *
 * Yin et al. 2024, §4 and App. G: a draft token
 * x ~ p is accepted with b(x) = min(1, (q(x)+ε)/p(x)); on rejection (total
 * probability R = Σ_x [p(x) - q(x) - ε]+) the token is drawn from P, so the
 * emitted token has law
 *     P_A(x) = min(p(x), q(x)+ε) + R P(x).
 * P = q ("uno", Decoding-UNO) or P* = [A]+ ("opt", Decoding-OPT, Theorem 4)
 * with A(x) ∝ max(q(x)-p(x), -ε).  The positive part of A is [q-p]+ for
 * every ε, so P* is the usual residual [q-p]+ normalised; it lies in the
 * optimal set of Theorem 4 (0 <= P* <= A on A+, since R <= TV(p,q)), and
 * TV(P_A, q) = ½Σ|q - min(p, q+ε)| - ½R = Loss*_TV(b).  At ε = 0 opt is
 * the target q (speculative decoding), but uno is not: it emits
 * min(p,q) + TV(p,q) q, which differs from q unless TV(p,q) q = [q-p]+
 * (p = q, or disjoint supports): the baseline of App. G is lossy even
 * without over-acceptance. */
#ifndef SD_BIASED_H
#define SD_BIASED_H

#include <stddef.h>

#include "sd_tokenwise.h"

/* Writes P_A above to out (V doubles, the caller's) for draft p and target
 * q (valid distributions), eps >= 0 and the residual kind. */
void sd_biased_token_law(const double *p, const double *q, size_t V, double eps,
                         sd_residual_kind residual, double *out);

#endif
