/* sd_stats.h — running statistics that merge exactly in a fixed order.
 *
 * Welford's recurrence for one stream of observations
 *     n += 1;  d = x - mean;  mean += d/n;  m2 += d (x - mean)
 * and Chan, Golub & LeVeque's pairwise merge (1979)
 *     n = na + nb;  d = mb - ma;  mean = ma + d nb/n;
 *     m2 = m2a + m2b + d² na nb / n,
 * which GSL's gsl_rstat lacks.  Merging per-block accumulators in block
 * order gives the same bits whatever the thread or rank count. */
#ifndef SD_STATS_H
#define SD_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sd_welford {
    double n;    /* observations */
    double mean; /* their mean */
    double m2;   /* Σ (x - mean)² */
} sd_welford;

void sd_welford_init(sd_welford *w);
void sd_welford_add(sd_welford *w, double x);
/* a ← a ∪ b (b unchanged). */
void sd_welford_merge(sd_welford *a, const sd_welford *b);
/* a ← a ∪ {n observations with Σx = s1, Σx² = s2}, integers (exact below
 * 2^53), merged as one summary (n, s1/n, s2 - s1²/n) by Chan's rule: the
 * fast kernels' per-trial summary of its iterations, one division instead
 * of one per observation.  n = 0 leaves a unchanged. */
void sd_welford_merge_sums(sd_welford *a, uint64_t n, uint64_t s1, uint64_t s2);
/* Sample variance with n-1 in the denominator; 0 when n < 2. */
double sd_welford_var(const sd_welford *w);
/* Standard error of the mean sqrt(var/n); 0 when n < 2. */
double sd_welford_stderr(const sd_welford *w);
/* Normal-approximation 95% confidence interval mean ± z_{0.975} se. */
void sd_welford_ci95(const sd_welford *w, double *lo, double *hi);

/* Pearson's chi-square test of observed counts against expected
 * probabilities (`check`).  Cells with expected count below
 * `min_expected` are pooled, in index order, into one cell (and that pool,
 * if still below min_expected, into the last kept cell) so that every
 * tested cell has expected count >= min_expected; the degrees of freedom
 * are (tested cells - 1).  An observation in a cell of probability exactly
 * 0 is a certain disagreement: *zero_hits counts them and the p-value is 0.
 * Outputs may be NULL when not wanted. */
typedef struct sd_chisq {
    double chi2;
    double dof;
    double p_value;
    double max_abs_dev;   /* max over cells |observed/n - expected prob| */
    double zero_hits;     /* observations in probability-0 cells */
    size_t cells_tested;  /* after pooling */
} sd_chisq;

int sd_chisq_test(const double *observed, const double *prob, size_t cells,
                  double min_expected, sd_chisq *res);

#endif
