/* sd_lp_flow.h — maximum flow with real capacities on GLPK's graph API
 * (glp_maxflow_ffalg), for the LPs that are flow problems (lp/otm.c).
 *
 * GLPK's Ford–Fulkerson routine takes integer capacities only (it returns
 * GLP_EDATA otherwise).  sd_lp_flow_max therefore solves a sequence of
 * integer problems on the residual network of the real one: each round
 * scales the residual capacities, capped at the current duality gap G,
 * by 2^30 / G and floors them (so the integer flow, scaled back, is
 * feasible), augments, and takes GLPK's minimal cut as an upper bound.
 * The gap G = U - F between the best cut capacity U (real arithmetic on
 * the original capacities) and the real flow value F certifies the
 * result: F <= max flow <= U.  A round loses at most one unit of 2^-30 G
 * per arc of the cut, so G shrinks by a factor of about (arcs)/2^30 per
 * round; rounds stop when G <= SD_LP_FLOW_GAP (or after
 * SD_LP_FLOW_ROUNDS). */
#ifndef SD_LP_FLOW_H
#define SD_LP_FLOW_H

#include <stddef.h>

#include "../src/sd_error.h"

#define SD_LP_FLOW_GAP 1e-13
#define SD_LP_FLOW_ROUNDS 12

/* The network: nv vertices 0..nv-1, na arcs tail[a] -> head[a] with
 * capacity cap[a] >= 0 (finite); source s, sink t.  On entry x[a] (na
 * entries) is a feasible flow to start from (0 <= x <= cap, conserved at
 * every vertex but s, t; zeros will do, a greedy flow saves rounds of
 * augmenting paths); on return it is the final flow,
 * *value = F and *gap = U - F (certified: F <= max flow <= F + gap).
 * SD_ETOOBIG when nv or 2 na exceed what GLPK indexes (int), SD_EDATA on
 * a negative, infinite or NaN capacity, SD_ENOMEM, SD_ESOLVER when GLPK
 * refuses a round. */
int sd_lp_flow_max(size_t nv, size_t na, const size_t *tail, const size_t *head,
                   const double *cap, size_t s, size_t t, double *x, double *value,
                   double *gap, sd_error *err);

#endif
