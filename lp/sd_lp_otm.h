/* sd_lp_otm.h — the optimal transport plan of OTM-k (Sun et al. 2023
 * §4–5, eq. 4) for simulators.
 *
 * Problem.  k drafts X_1..X_k are drawn i.i.d. from the draft p; the
 * verifier outputs one token Y whose law must be the target q, and wants
 * P(Y ∈ {X_1..X_k}) as large as possible.  The optimal transport plan
 * couples p^{⊗k} and q with cost 1{y ∉ S(x)}.  Drafts are exchangeable, so
 * the plan is solved on multisets of drafts: C(V+k-1, k) rows instead of
 * V^k (a symmetrised optimal ordered plan is an optimal multiset plan and
 * vice versa, so nothing is lost).
 *
 * What a simulator does with a plan (Sun et al. 2023, Alg. 3 with the OTM selection in
 * place of k-Seq):
 *     draw X_1..X_k ~ p i.i.d.;
 *     y = sd_lp_otm_plan_sample(plan, X, u)       (u uniform in [0,1));
 *     if y equals some X_i the drafts equal to y continue (an acceptance),
 *     else y is a correction (a rejection).
 * Then P(Y = y) = q(y) exactly for every y (the plan's column sums), up to
 * the LP's 1e-9 feasibility tolerance, and P(Y ∈ X) = plan->alpha.
 *
 * Threads: GLPK 5 keeps its environment in thread-local storage, so
 * sd_lp_otm_plan_solve() may run concurrently in several threads (e.g. in a
 * verifier's alloc() inside the driver's OpenMP region).  A solved plan is
 * read-only and may be shared by threads. */
#ifndef SD_LP_OTM_H
#define SD_LP_OTM_H

#include <stddef.h>

#include "../src/sd_error.h"

typedef struct sd_lp_otm_plan {
    size_t V;        /* vocabulary size */
    size_t k;        /* number of drafts, >= 1 */
    size_t nsets;    /* C(V+k-1, k): multisets of k tokens */
    double alpha;    /* the LP optimum: max P(Y ∈ drafts) */
    /* cond[m*V + y] = P(Y = y | the drafts form multiset m), a probability
     * vector (>= 0, sums to 1 within 1e-12) for every m, m the rank given
     * by sd_lp_otm_multiset_rank().  Multisets of p-probability 0 get the
     * row q (they are never drawn; any row would be valid). */
    double *cond;
} sd_lp_otm_plan;

/* Default limit on LP variables (nsets * V) for sd_lp_otm_plan_solve. */
#define SD_LP_OTM_PLAN_MAX_VARS 200000

/* Solves the OTM-k LP for single-token draft p and target q (V entries
 * each, valid probability vectors) and returns the optimal plan in *out
 * (caller frees with sd_lp_otm_plan_free).  max_vars (0 = the default
 * above) bounds nsets*V; a larger problem is refused with SD_ETOOBIG before
 * anything is allocated, naming the size and the limit.  A solver failure
 * (status other than optimal) is SD_ESOLVER naming GLPK's status.  Bad
 * input (V = 0, k = 0, p or q not a distribution) is SD_EUSAGE/SD_EDATA. */
int sd_lp_otm_plan_solve(const double *p, const double *q, size_t V, size_t k,
                         size_t max_vars, sd_lp_otm_plan **out, sd_error *err);

void sd_lp_otm_plan_free(sd_lp_otm_plan *plan);

/* The rank in [0, nsets) of the multiset of tokens drafts[0..k-1] (any
 * order, each < V; the array is not modified).  Colexicographic rank of
 * the sorted tuple x_(1) <= ... <= x_(k) through c_i = x_(i) + i - 1:
 * rank = Σ_i C(c_i, i).  O(k²) with k small. */
size_t sd_lp_otm_multiset_rank(const sd_lp_otm_plan *plan, const size_t *drafts);

/* The conditional law of Y given the drafts: V doubles owned by plan. */
const double *sd_lp_otm_plan_row(const sd_lp_otm_plan *plan, const size_t *drafts);

/* Draws Y given the drafts with u uniform in [0,1) (sd_dist_sample on the
 * row). */
size_t sd_lp_otm_plan_sample(const sd_lp_otm_plan *plan, const size_t *drafts, double u);

#endif
