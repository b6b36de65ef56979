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


/* --- the k-draft optimum two more ways ---------------------------------------
 *
 * Drafts drawn WITHOUT replacement (Hu et al. 2025, "Towards optimal
 * multi-draft speculative decoding", ICLR 2025: the optimum by the dual of
 * the transport problem, a subset selection).  The k drafts are drawn one
 * after another from p restricted to the tokens not drawn yet (renormalised),
 * k' = min(k, |supp p|) of them; the draft set S then has
 *   P(S ⊆ B) = Σ over ordered distinct (x_1..x_k') in B of
 *              Π_i p(x_i) / (1 - p(x_1) - ... - p(x_{i-1})),
 * and by max-flow/min-cut on the transport graph (draft sets -> tokens in
 * them -> q) the optimum is
 *   α_k^wor = 1 - max_B [P(S ⊆ B) - q(B)].
 * method 0 (prefix) maximises over the q/p-sorted prefixes only (as for
 * i.i.d. drafts; that this restriction loses nothing is checked against
 * method 1 and the LP in tests/test_kdraft_opt.c, not proved here), method 1
 * (brute) over all 2^V subsets.  Work: V^(k'+1) (prefix) or 2^V V^k'
 * (brute) ordered tuples, refused (SD_ETOOBIG) beyond
 * SD_EXACT_OTM_WOR_MAX_WORK before any work.  best_len as above (prefix). */
#define SD_EXACT_OTM_WOR_MAX_WORK 1e9
int sd_exact_otm_wor_acceptance(const double *p, const double *q, size_t V, size_t k, int brute,
                                double *out, size_t *best_len, sd_error *err);

/* P(S ⊆ B) for k drafts drawn without replacement, B given by in[x] != 0. */
double sd_exact_otm_wor_contained(const double *p, const unsigned char *in, size_t V, size_t k);

/* The i.i.d. optimum as a convex problem in at most V variables (the
 * polymatroid reduction of Thomas & Pal 2025, "Global Resolution: optimal
 * multi-draft speculative sampling via convex minimization").  The set
 * function h(B) = q(B) - p(B)^k is submodular (p(B)^k is a convex function
 * of a modular one, hence supermodular), h(∅) = 0, and α_k = 1 + min_B h(B).
 * By Fujishige's theorem min_B h(B) = Σ_y min(0, x*_y) for x* the
 * minimum-norm point of the base polytope B(h) = {x : x(B) <= h(B) ∀B,
 * x(Ω) = h(Ω)}, for any weighted norm Σ x_y²/w_y.  With w = p and
 * x_y = p_y u_y the quadratic problem in u (V variables; tokens with p = 0
 * carry x_y = q_y) is solved exactly by the greatest convex minorant of the
 * points (P_j, Q_j - P_j^k) along the q/p order: u is its slope on each
 * piece.  *out = 1 + Σ min(0, x*_y); *neg (may be NULL) = the number of
 * tokens with x*_y < 0, the smallest minimiser of h.  O(V log V);
 * V <= SD_EXACT_OTM_MAX_V. */
int sd_exact_otm_convex(const double *p, const double *q, size_t V, size_t k, double *out,
                        size_t *neg, sd_error *err);

/* The same minimum of h(B) = q(B) - p(B)^k by a GENERIC convex solver that
 * assumes no order of the tokens: Wolfe's minimum-norm-point algorithm on
 * the base polytope B(h), whose linear minimisation is Edmonds' greedy
 * vertex (sort the direction, take marginal values of h), then the best
 * level set {y : x_y <= θ} of the point found (Fujishige: the minimisers
 * of h are level sets of the minimum-norm point).  *out = 1 + min(0, h of
 * the best level set), the value of an actual set.  wor = 1: drafts
 * without replacement, h(B) = q(B) - P(S ⊆ B), still submodular (B ↦
 * P(S ⊆ B) is supermodular for any random set S: 1{S ⊆ B ∪ C} +
 * 1{S ⊆ B ∩ C} >= 1{S ⊆ B} + 1{S ⊆ C}), each value by
 * sd_exact_otm_wor_contained.  A cross-check of the q/p-prefix restriction
 * beyond brute force (tests/test_kdraft_opt.c); V <= SD_EXACT_OTM_MNP_MAX_V
 * (SD_ETOOBIG), O(V^3) per iteration (wor: V^(k+1) per greedy vertex). */
#define SD_EXACT_OTM_MNP_MAX_V 256
int sd_exact_otm_convex_mnp(const double *p, const double *q, size_t V, size_t k, int wor, double *out,
                            size_t *iterations, sd_error *err);

#endif
