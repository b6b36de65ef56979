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
/* sd_lp_flow_max, and cut (nv entries; NULL: not wanted) receives the
 * source side (1) of the s-t cut of least real capacity among GLPK's (the
 * bound U: its capacity is *value + *gap; {s} when no round ran). */
int sd_lp_flow_max_cut(size_t nv, size_t na, const size_t *tail, const size_t *head,
                       const double *cap, size_t s, size_t t, double *x, double *value,
                       double *gap, char *cut, sd_error *err);

/* ---- minimum-cost transshipment by successive maximum flows -------------- */

/* An uncapacitated network with small integer arc costs and real
 * supplies: vertices 0..nv-1 with b[v] > 0 (supply), < 0 (demand) or 0,
 * Σ b = 0 up to rounding; arcs tail[a] -> head[a] with cost[a].  The
 * network must be acyclic.  Minimise Σ cost[a] x[a] subject to
 * out(v) - in(v) = b[v], x >= 0.
 *
 * The contract that makes the reported cost a feasible one: the flow
 * returned may leave a mass of at most about SD_LP_FLOW_GAP unrouted, and
 * every supply vertex must reach every demand vertex by a path of cost 0
 * (block-ot and tree-ot: through the target trie's root), along which the
 * caller completes it without changing the cost.
 *
 * Method (Ford and Fulkerson's primal-dual algorithm): potentials π with
 * reduced costs r_a = cost_a + π(tail) - π(head) >= 0 start as shortest
 * distances (the network is a DAG); each phase routes a maximum flow on
 * the admissible arcs (r_a = 0; an arc still carrying flow with r_a > 0
 * may only lose it) with sd_lp_flow_max_cut after a greedy start, and, if supply is left over, raises π by
 * θ = min{r_a : a leaves the cut's source side} on the sink side, which
 * raises the dual objective D = -Σ_v π(v) b(v) by θ (Σb - cut) > 0.
 * Weak duality: cost(x) = Σ r_a x_a - Σ π(v) b_x(v) >= D for every
 * feasible x, so *cost_x (the flow's cost) and *gap = cost_x - D certify
 * D <= optimum <= cost_x.
 *
 * x (na entries) receives the flow, *phases the number of maximum flows.
 * When a phase cannot raise the dual (no usable cut: the leftover is
 * within the rounds' tolerance), the phases stop and *gap tells how far
 * from optimal the flow is.  SD_EDATA on a cycle, a non-finite supply or
 * |cost| > 2^20; SD_ENOMEM; SD_ESOLVER when GLPK refuses a round or after
 * SD_LP_MCF_PHASES phases. */
#define SD_LP_MCF_PHASES 10000
/* The certified gap under which a flow is reported optimal. */
#define SD_LP_MCF_GAP 1e-11
int sd_lp_flow_mincost(size_t nv, size_t na, const size_t *tail, const size_t *head,
                       const int *cost, const double *b, double *x, double *cost_x,
                       double *gap, size_t *phases, sd_error *err);

/* ---- networks of the transport LPs (block-ot, tree-ot) -------------------- */

/* A network under construction: nv vertices with balances b (zeroed by
 * init), arcs appended up to the capacity given to init. */
typedef struct sd_lp_net {
    size_t nv, na, cap;
    size_t *tail, *head;
    int *cost;
    double *b;
    double *x; /* the flow, after sd_lp_net_solve_max */
} sd_lp_net;

/* SD_ENOMEM (message naming what) or SD_OK; free with sd_lp_net_free. */
int sd_lp_net_init(sd_lp_net *n, size_t nv, size_t max_arcs, const char *what, sd_error *err);
void sd_lp_net_free(sd_lp_net *n);
/* Appends the arc tail -> head with cost (asserts the capacity); returns
 * its index. */
size_t sd_lp_net_arc(sd_lp_net *n, size_t tail, size_t head, int cost);
/* The target prefix trie of depth L from vertex base: T(u) = base +
 * sd_lp_trie_id(V, l, u) for u ∈ V^l; arcs T(u) -> T(u y) (cost 0) where
 * Q[l+1][u y] > 0, and demand Q[L][y] at the leaves (b = -Q).  Q: prefix
 * laws as sd_lp_prefix_laws gives them. */
void sd_lp_net_target_trie(sd_lp_net *n, size_t base, size_t V, size_t L, double *const *Q);
/* Σ_{j<l} V^j + u: the index of u ∈ V^l among all prefixes (the root: 0). */
size_t sd_lp_trie_id(size_t V, size_t l, size_t u);
/* Solves the network as a maximum-reward flow (reward = -cost) with
 * sd_lp_flow_mincost and fills *res the way the LPs do: optimum = the
 * flow's reward when the certified gap is <= SD_LP_MCF_GAP (status
 * "optimal"), else NaN and status "flow gap too large"; variables = arcs,
 * constraints = vertices, nonzeros = 2 arcs (res->seconds is the
 * caller's).  n->x receives the flow. */
struct sd_lp_result;
int sd_lp_net_solve_max(sd_lp_net *n, struct sd_lp_result *res, sd_error *err);

/* A growing list of (key, mass) chunks: the path decompositions that read
 * plans off flows (lp/block_ot.c, lp/valid_verify.c). */
typedef struct sd_lp_chunk {
    size_t x;
    double m;
} sd_lp_chunk;
typedef struct sd_lp_chunks {
    sd_lp_chunk *c;
    size_t n, cap;
} sd_lp_chunks;
/* Appends (x, m) when m > 0 (nothing otherwise); SD_ENOMEM.  Free c. */
int sd_lp_chunks_put(sd_lp_chunks *l, size_t x, double m);

/* block-ot's network (lp/block_ot.c) on the prefix laws P[l], Q[l] (l <=
 * G, as sd_lp_prefix_laws gives them), solved, with the reward |u| + extra
 * across u.  extra = 0 is block-ot (sd_lp_block_ot calls it so); the tests
 * set 1, a deliberately wrong network, to check that they catch it.
 * *plan (plan not NULL, status optimal): the coupling, "draft,target,mass"
 * rows above 1e-12.  The size is not checked here (sd_lp_block_ot does). */
struct sd_lp_plan;
int sd_lp_block_ot_net(size_t V, size_t G, double *const *P, double *const *Q, int extra,
                       struct sd_lp_result *res, struct sd_lp_plan **plan, sd_error *err);

#endif
