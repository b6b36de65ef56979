/* sd_bias.h — the per-token bias of a verifier that is not lossless: how
 * far the law P_n of each output token x_n is from the target's law Q_n of
 * x_n (n = 1..T).  Exact where the verifier has an iteration law
 * (sims/exact/sd_exact_gen.h), else estimated from a Monte-Carlo run's counts
 * with a standard error and the estimator's noise floor. */
#ifndef SD_BIAS_H
#define SD_BIAS_H

#include <stddef.h>
#include <stdint.h>

#include "sd_verifier.h"

/* The exact bias: tv[n-1] = TV(P_n, Q_n) = ½ Σ_b |P_n(b) - Q_n(b)| for
 * n = 1..T (T doubles, the caller's, or NULL), *max = max_n TV(P_n, Q_n)
 * and *argmax the first n attaining it.  P_n from sd_exact_gen_marginals,
 * Q_n from sd_exact_target_marginals.  Errors are theirs: SD_EUSAGE (no
 * iteration law), SD_ETOOBIG (a law or the work over the limits),
 * SD_ENOMEM.  ~1e-16 for a lossless verifier. */
int sd_bias_exact(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, double *tv,
                  double *max, size_t *argmax, sd_error *err);

/* An estimate of the mean squared L2 distance over positions,
 *     B = (1/T) Σ_n Σ_b (P_n(b) - Q_n(b))²,
 * from counts[(n-1)·V + b] = trials with x_n = b out of N >= 2 independent
 * trials.  Per position the unbiased U-statistic (Hoeffding 1948) of the
 * kernel h(x, y) = Σ_b (1[x=b] - Q_n(b))(1[y=b] - Q_n(b)), E h = Σ_b d_b²
 * with d = P_n - Q_n:
 *     U_n = Σ_b [c_b(c_b-1)/(N(N-1)) - 2 Q_n(b) c_b/N + Q_n(b)²],
 *     Var U_n = (4(N-2) ζ1 + 2 ζ2) / (N(N-1)),
 *     ζ1 = Σ_b P_b d_b² - (Σ_b P_b d_b)²,  ζ2 = Var h(X, Y),
 * ζ1, ζ2 estimated by plugging in P = c/N.  value = (1/T) Σ_n U_n is
 * unbiased (it may be negative).  The positions of one trial are
 * dependent and the counts do not say how, so stderr is the upper bound
 * (1/T) Σ_n se(U_n) (the standard deviation of a sum is at most the sum of
 * the standard deviations).  noise_floor is the same bound when P_n = Q_n
 * for every n (ζ1 = 0, ζ2 = s - 2 Σ_b Q_b³ + s², s = Σ_b Q_b²): the stderr
 * an unbiased verifier's estimate has.  Relation to the bias in TV: per
 * position TV(P_n, Q_n) >= ½ ||d||_2, so max_n TV(P_n, Q_n) >= ½ √B. */
typedef struct sd_bias_estimate {
    double value;       /* the estimate of B */
    double stderr;      /* its standard error (an upper bound) */
    double noise_floor; /* the stderr when unbiased (an upper bound) */
} sd_bias_estimate;

/* counts: T·V doubles for the chain c (Q_n its target marginals).
 * SD_EUSAGE when N < 2, SD_ENOMEM. */
int sd_bias_estimate_counts(const double *counts, uint64_t N, const sd_chain *c, sd_bias_estimate *out,
                            sd_error *err);

#endif
