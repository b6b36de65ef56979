/* sd_exact_otm.h — acceptance probabilities of k-draft verification at one
 * position (Sun et al. 2023, §5, App. B).
 *
 * k drafts X_1..X_k ~ p i.i.d., target q (p draft, q target throughout).
 *
 * Optimal transport with membership cost (OTM-k, Sun et al. 2023, §5): the largest
 * probability that the output Y ~ q is one of the drafts,
 *   α_k(p,q) = 1 - max_{B ⊆ Ω} [p(B)^k - q(B)]
 * (max-flow/min-cut on the transport graph; the LP of lp/ is the referee).
 * The maximising B can always be taken to be a prefix of the tokens sorted
 * by q(x)/p(x) ascending (proof in docs/otm-prefix.md and in
 * sd_exact_otm.c), which gives an O(V log V) evaluation for any k. */
#ifndef SD_EXACT_OTM_H
#define SD_EXACT_OTM_H

#include <stddef.h>

#include "sd_error.h"

/* Largest vocabulary the sorted-prefix evaluation accepts. */
#define SD_EXACT_OTM_MAX_V ((size_t)1 << 28)

/* α_k by the sorted prefix.  k >= 1, 1 <= V <= SD_EXACT_OTM_MAX_V
 * (SD_EUSAGE / SD_ETOOBIG before allocating); SD_ENOMEM.  When best_len is
 * not NULL it receives the length j of the maximising prefix (the first j
 * tokens in q/p order; 0 = the empty set). */
int sd_exact_otm_acceptance(const double *p, const double *q, size_t V, size_t k,
                            double *out, size_t *best_len, sd_error *err);

/* Largest V of the brute-force checker (2^V subsets). */
#define SD_EXACT_OTM_BRUTE_MAX_V 24

/* The same α_k by brute force over all 2^V subsets B (the referee of the
 * prefix property in the tests).  SD_EUSAGE when k = 0, SD_ETOOBIG when
 * V > SD_EXACT_OTM_BRUTE_MAX_V. */
int sd_exact_otm_acceptance_brute(const double *p, const double *q, size_t V, size_t k,
                                  double *out, sd_error *err);

/* Recursive rejection sampling (SpecInfer; Sun et al. 2023, App. B.3):
 * drafts tried in turn against q^1 = q, q^{m+1} = [q^m - p]+; accepted with
 * probability 1 - Π_{m=1..k} TV(q^m, p).  SD_EUSAGE when k = 0;
 * SD_ETOOBIG when V·k > SD_EXACT_MAX_WORK; SD_ENOMEM. */
int sd_exact_rrs_acceptance(const double *p, const double *q, size_t V, size_t k,
                            double *out, sd_error *err);

/* Closed forms (Sun et al. 2023, App. B), used as tests:
 *   α_k(Ber(a), Ber(b)) = min(b, 1-(1-a)^k) + min(1-b, 1-a^k)
 *     (draft Ber(a), target Ber(b); Ber(x) puts x on token 1),
 *   α_k(U(d), U(d/r)) = 1 - (1-1/r)^k
 *     (draft uniform on d tokens, target uniform on d/r of them). */
double sd_exact_otm_bernoulli(double a, double b, size_t k);
double sd_exact_otm_uniform(double r, size_t k);

#endif
