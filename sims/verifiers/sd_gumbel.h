/* sd_gumbel.h — the exponential race shared by gumbel and gumbel-list
 * (and the control broken-gumbel): its selection for the k-draft tree and
 * its joint law.
 *
 * Public randomness: for each list l = 1..a an exponential E^l_i ~ Exp(1)
 * per token i.  The drafter's l-th token is X^l = argmin_i E^l_i / p(i)
 * (law p, lists independent: the drafts are i.i.d.), and the target's
 * token is
 *     Y = argmin_i min_l E^l_i / q(i),
 * of law q whatever p is (min_l E^l_i ~ Exp(a) for every i; scaling all
 * rates by a leaves the argmin's law alone).  a = 1 is Daliri, Musco and
 * Suresh's Gumbel sampling for drafter-invariant speculative decoding; a >=
 * 1 is Rowan, Phan and Khisti's Gumbel-max list sampling with i.i.d.
 * drafts.  A draft is accepted when it equals Y.  Y never depends on the
 * drafter: the output is fixed given the seed (drafter invariance). */
#ifndef SD_GUMBEL_H
#define SD_GUMBEL_H

#include "../engine/sd_verifier.h"

/* The simulator draws the drafts first (sd_multidraft_tree_step); given
 * X^l = x_l the race of list l is, by memorylessness, T_l ~ Exp(1),
 * E^l_{x_l} = p(x_l) T_l and E^l_i = p(i) T_l + Exp(1) for i != x_l (the
 * conditional law of the race given its winner).  bug = 1 (broken-gumbel):
 * when no draft equals Y the emitted token is drawn from [q - p]+
 * normalised (standard speculative sampling's correction) instead of Y.
 * w is the caller's scratch of V doubles. */
size_t sd_gumbel_select(const double *p, const double *q, size_t V, const size_t *x, size_t a,
                        int bug, sd_stream *rng, double *w);

/* Its joint law (sd_select_law_fn of sims/exact/sd_iter_laws.h):
 * J[j·V + y] = P(Y = y, #{l : X^l = y} = j).  With m_y = sum_i max(q(i),
 * p(i) q(y)/p(y)), g(tau) = P(list l has E^l_i > q(i) tau for all i and
 * X^l = y) = sum_m c_m exp(-tau r_m) (r_m = h(u_m) at the breakpoints
 * u_0 = q(y)/p(y) <= u_1 < ... of h(u) = sum_i max(q(i), p(i) u), c_0 =
 * p(y)/B_0, c_m = p(y)/B_m - p(y)/B_{m-1}, B_m the slope of h after u_m),
 *   J(y, j) = a q(y) int_0^inf [ C(a-1, j-1) e^{-tau m_y} g^{j-1} G^{a-j}
 *                   + C(a-1, j) (e^{-tau} - e^{-tau m_y}) g^j G^{a-1-j} ] dtau,
 * G = e^{-tau} - g: the winning list matches or not, each other list
 * matches with g.  At a = 1, J(y, 1) = q(y)/m_y = 1 / sum_i max(q(i)/q(y),
 * p(i)/p(y)).  Integrated exactly over the exponential sums (binomial
 * expansion of G; (V+1)^(a-1) terms per power), so a <= 6.  ctx: the
 * int flag bug (NULL = 0); with bug = 1 (a = 1 only) the rejected mass
 * 1 - sum_y J(y, 1) is spread over [q - p]+ and goes on where the
 * correction equals the draft. */
int sd_gumbel_law(void *ctx, const double *p, const double *q, size_t V, size_t a, double *J,
                  sd_error *err);

/* The work of one sd_gumbel_law call per token at a lists. */
double sd_gumbel_law_work(size_t V, size_t a);

/* Largest list count of the exact law. */
#define SD_GUMBEL_LAW_MAX_A 6

#endif
