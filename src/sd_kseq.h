/* sd_kseq.h — SpecTr's k-sequential selection (k-Seq) for one token.
 *
 * Sun et al. 2023, §6, Algorithm 2 and Theorem 1.
 * Letters as in docs/notation.md: p is the draft, q the target.
 *
 * Drafts X_1..X_k ~ p i.i.d. are tried in turn; X_i is accepted with
 * probability min(1, q(X_i) / (ρ p(X_i))).  With
 *     β(ρ) = Σ_x min(p(x), q(x)/ρ),     p_acc(ρ) = 1 - (1 - β(ρ))^k,
 * the probability that some draft is accepted is p_acc, and the output is x
 * with probability min(p(x), q(x)/ρ) p_acc/β through an acceptance.  For
 * the output to be q the residual (Sun et al. 2023, eq. 5)
 *     p_res(x) = [q(x) - min(p(x), q(x)/ρ) p_acc/β] / (1 - p_acc)
 * must be non-negative, which holds iff p_acc(ρ) <= ρ β(ρ).  The function
 *     f(ρ) = 1 - (1 - β(ρ))^k - ρ β(ρ)
 * is non-increasing in ρ (β falls, ρβ = Σ min(ρp, q) rises), f(1) >= 0 and
 * f(k) <= 0 (Bernoulli's inequality), so the smallest valid ρ is the root
 * ρ* of f in [1, k] (eq. 6), and the k-Seq acceptance is
 *     α_kSeq = 1 - (1 - β(ρ*))^k.
 *
 * All functions take valid probability vectors of V entries (not checked
 * except where a status is returned) and never print. */
#ifndef SD_KSEQ_H
#define SD_KSEQ_H

#include <stddef.h>

#include "sd_error.h"

/* β(ρ) = Σ_x min(p(x), q(x)/ρ) for ρ > 0, summed in index order. */
double sd_kseq_beta(const double *p, const double *q, size_t V, double rho);

/* Solves eq. 6 for ρ* ∈ [1, k] with GSL's Brent solver (relative
 * tolerance 1e-13) and returns in *rho the upper end of the final bracket,
 * so that f(*rho) <= 0: the residual of eq. 5 is non-negative at *rho and
 * the acceptance exceeds the exact one by less than 1e-12.  *beta gets
 * β(*rho).  Special cases: k = 1, f(1) <= 0 (p = q, or k = 1) give ρ = 1;
 * disjoint supports (β ≡ 0) give ρ = 1, β = 0 (acceptance 0, residual q).
 * Either output pointer may be NULL.  Returns SD_OK; SD_EUSAGE when V = 0
 * or k = 0; SD_ESOLVER when Brent fails to converge (naming GSL's
 * message). */
int sd_kseq_solve(const double *p, const double *q, size_t V, size_t k,
                  double *rho, double *beta, sd_error *err);

/* 1 - (1 - beta)^k, accurate for small beta (log1p/expm1). */
double sd_kseq_pacc(double beta, size_t k);

/* The k-Seq acceptance 1 - (1 - β(ρ*))^k in *out.  Same status
 * codes as sd_kseq_solve. */
int sd_kseq_acceptance(const double *p, const double *q, size_t V, size_t k,
                       double *out, sd_error *err);

/* The residual of eq. 5 at (rho, beta) as returned by sd_kseq_solve:
 * writes the unnormalised weights
 *     w(x) = max(0, q(x) - min(p(x), q(x)/rho) p_acc/beta)
 * (p_acc/beta read as its limit k when beta = 0) to out (V doubles, the
 * caller's) and returns their sum, which is 1 - p_acc up to rounding.
 * Normalise by that sum to get p_res; a sum of 0 means the residual is
 * never needed (all drafts fail with probability 0) and must not be
 * sampled. */
double sd_kseq_residual(const double *p, const double *q, size_t V, size_t k,
                        double rho, double beta, double *out);

#endif
