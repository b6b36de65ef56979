/* sd_exact_single.h — single-token closed forms:
 * batch improvement (Yin et al. 2024, §3.2), the rejection–bias
 * Pareto front (Yin et al. 2024, Theorems 4 and 5) and SPRINTER's counts
 * (Zhong et al. 2025, Theorems 3.1, 3.3, 3.4; letters reversed there:
 * here p is the draft, q the target).
 *
 * Vectors p (draft) and q (target) have V entries and must be valid
 * probability vectors (the callers validate them; nothing here prints). */
#ifndef SD_EXACT_SINGLE_H
#define SD_EXACT_SINGLE_H

#include <stddef.h>

#include "sd_error.h"

/* Single-token batch improvement of Yin et al. 2024, §3.2,
 *   BI(q,p) = TV(q,p) - Π_{m=1..M} TV(q^m, p),   q^1 = q, q^{m+1} = [q^m - p]+,
 * the drop in the probability that a fresh position is rejected when M
 * first tokens are tried instead of one.  M = 0 means the limit M -> ∞
 * (BI -> TV - q({p = 0}); see sd_exact_batch.h).  Closed forms (tests):
 * BI(Unif(V'), Unif(V)) = (1-1/r) - (1-1/r)^M with r = V/V', and
 * BI(Ber(v), Ber(u)) = |u-v| (1 - u^{M-1}) for draft Ber(u), target Ber(v),
 * u >= v.  Returns SD_OK, SD_ETOOBIG (V·M > SD_EXACT_MAX_WORK) or
 * SD_ENOMEM. */
int sd_exact_batch_improvement(const double *p, const double *q, size_t V, size_t M,
                               double *out, sd_error *err);

/* The Pareto quantities of one acceptance rule b (Yin et al. 2024, Theorems 4, 5). */
typedef struct sd_pareto {
    double reject_prob; /* P(reject) = Σ (1 - b) p */
    double loss_tv;     /* Loss*_TV(b) = ½ Σ |q - b p| - ½ Σ (1 - b) p */
    double tv;          /* TV(p, q) */
} sd_pareto;

/* For an arbitrary acceptance vector b ∈ [0,1]^V: fills *out and, when
 * pstar is not NULL, writes the optimal residual of Theorem 4,
 *   P* = [A]+ / Σ [A]+,   A = (q - b p) / Σ (1 - b) p,
 * (V doubles; all zero when P(reject) = 0, where no residual is drawn).
 * P* lies in the paper's optimal set {P = 0 on A < 0, 0 <= P <= A on
 * A >= 0}: Σ[A]+ >= ΣA = 1.  Theorem 5 (reject_prob + loss_tv = tv) holds
 * when min(1, q/p) <= b <= 1.  SD_EUSAGE when some b(x) is not in [0,1]. */
int sd_exact_pareto_b(const double *p, const double *q, const double *b, size_t V,
                      sd_pareto *out, double *pstar, sd_error *err);

/* The same for b(x) = min(1, (q(x) + ε)/p(x)) (1 where p(x) = 0), the rule
 * of Yin et al. 2024, Fig. 4 and of the biased verifier.  Then
 * q - b p = max(q - p, -ε), so P* = [q - p]+ normalised: the SD residual.
 * SD_EUSAGE unless ε >= 0 is finite; SD_ENOMEM. */
int sd_exact_pareto(const double *p, const double *q, size_t V, double eps,
                    sd_pareto *out, double *pstar, sd_error *err);

/* TV between the law of one token emitted by rule b with residual P and
 * the target:  ½ Σ |b p + (Σ (1-b) p) P - q|.  (Theorem 4: minimised over
 * P by P*, with value Loss*_TV.) */
double sd_exact_output_tv(const double *p, const double *q, const double *b,
                          const double *P, size_t V);

/* SPRINTER (Zhong et al. 2025, Theorems 3.3, 3.4): with r acceptable draft tokens in a
 * row and a cheap verifier that says yes with probability tp on them and fp
 * on the others (i.i.d. decisions), N = number of consecutive yeses has
 *   P(N = i) = tp^i (1-tp) (i < r),  tp^r fp^{i-r} (1-fp) (i >= r),
 *   E[N] = (tp - tp^r)/(1-tp) + tp^r/(1-fp) = Σ_{i=1..r} tp^i + tp^r fp/(1-fp),
 * (the second form, used here, has no 0/0 at tp = 1), and the stopping
 * time with t_d per drafted token (the one the verifier refuses included)
 *   E[T_stop] = (1-tp^r) t_d/(1-tp) + tp^r t_d/(1-fp) = t_d (E[N] + 1).
 * fp = 1 gives +∞ (HUGE_VAL) for both when tp^r > 0; with tp = 0 and
 * r >= 1 they stay finite (E[N] = 0, E[T_stop] = t_d).  SD_EUSAGE unless tp, fp ∈ [0,1]
 * and t_d >= 0 finite. */
int sd_exact_sprinter(double tp, double fp, size_t r, double td, double *expected_tokens,
                      double *expected_stop_time, sd_error *err);

/* Theorem 3.1 of Zhong et al. 2025: the output law (1-fp) q + fp p is at TV distance
 * fp · TV(p,q) from the target. */
double sd_exact_sprinter_bias(const double *p, const double *q, size_t V, double fp);

#endif
