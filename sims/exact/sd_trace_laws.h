/* sd_trace_laws.h — the laws given a logged output (sd_verifier_type.trace,
 * sims/engine/sd_verifier.h) of the built-in verifiers.  Internal to sims/.
 *
 * Ratio rules (sims/engine/sd_paired.h; Leviathan et al. 2023, Sun et al.
 * 2025): token accepts the output token y as its next draft with
 * probability min(1, r), r = p(y)/q(y); block with min(1, s r), s <- max(1,
 * s r), s = 1 at the start of the iteration.  One state, r suffices.
 *
 * Position laws (sims/exact/sd_iter_laws.h): a verifier that is Markov
 * inside the iteration gives, at a position with rows p, q and internal
 * state sigma, the weights cont[sigma'·V + y] (y is accepted, the
 * iteration goes on in sigma'), end_rej[y] (y is a residual draw) summing
 * over sigma' and the ending to q(y) (each position is lossless whatever
 * the state).  Given y, go[sigma'] = cont[sigma'·V + y] / q(y).  The rows
 * are those at the output's context: the surviving drafts of rrs and
 * SpecTr share the output's prefix (Sun et al. 2023, Alg. 3), batch's
 * chosen draft is the output (Yin et al. 2024, Alg. 4).
 *
 * Top-down trees (sims/verifiers/sd_tree.h; Miao et al. 2024, Jeon et al.
 * 2024): the node on the output path at depth i has b_{i+1} children
 * drafted afresh from p at the output's context, verified by recursive
 * rejection sampling; given y the iteration goes on iff a child with token
 * y was accepted, with probability
 *     Σ_{children c} P(c) Σ_{j: c_j = y} pi_c(j) / q(y)
 * over the drafted children (sd_tree_outcome on a one-level tree): i.i.d.
 * children by the closed form of recursive rejection sampling (the
 * position law with b drafts, summed over the survivors), without
 * replacement by sd_trace_wor_accept (by sd_trace_wor_estimate where that
 * is refused, or with sd_trace_pos.estimate), top-k and the broken controls by
 * enumerating the children (refused beyond SD_EXACT_TREE_MAX_TREES).
 * Traversal verification accepts by the leaves (rows off the path):
 * refused. */
#ifndef SD_TRACE_LAWS_H
#define SD_TRACE_LAWS_H

#include "../engine/sd_verifier.h"
#include "sd_exact_gen.h"

extern const sd_trace_type sd_trace_token;
extern const sd_trace_type sd_trace_block;
/* Block verification with the running s not carried (s stays 1: the
 * token rule): the law of broken-block-trace (sims/controls), which the
 * trace checks must catch. */
extern const sd_trace_type sd_trace_block_broken_s;
extern const sd_trace_type sd_trace_tree;

/* The k-draft tree of rrs (kseq = 0) and SpecTr's k-Seq (kseq = 1), by
 * the column of the logged token only (the law of sd_law_tree,
 * sims/exact/sd_iter_laws.h, at y): with a surviving drafts tried in turn,
 *   RRS:   y accepted at round m with s_m min(p(y), q^m(y)), s_m = Π_{j<m}
 *          (mass of the residual after round j), then 1 + Bin(a-m, p(y))
 *          drafts agree with y and survive;
 *   k-Seq: y accepted at round m with (1-β)^{m-1} min(p(y), q(y)/ρ*(a)),
 *          the drafts equal to y surviving: the accepted one, Bin(a-m,
 *          p(y)) untried, Bin(m-1, π_y) rejected; or y from the residual
 *          of eq. 5 (a rejection unless rejected drafts equal y survive).
 * O(a·V) per state and position (the residuals, ρ* by Brent's method),
 * where the position law costs O(a·V) binomial spreads more.  State
 * sigma = a - 1; *S = k.  SD_EUSAGE for k outside 1..4096. */
int sd_trace_sel_plan_new(void **plan, size_t k, int kseq, size_t V, size_t *S, size_t *s0, sd_error *err);
void sd_trace_sel_plan_free(void *plan);
int sd_trace_sel_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                    sd_error *err);

/* Recursive rejection sampling without replacement (Jeon et al. 2024)
 * at one node with rows p, q and b children: into *acc, Σ_children
 * P(children) P(y accepted as a child).  The children are drafted in
 * order, c_j from D_j = p without c_1..c_{j-1}, renormalised (D_j = p /
 * s_{j-1} off them, s_{j-1} = Σp - Σ_{i<j} p(c_i)), and tested against R_j
 * (R_1 = q): accepted with probability min(1, R_j(c_j)/D_j(c_j)), else
 * R_{j+1} = [R_j - D_j]+ renormalised (sims/verifiers/sd_tree.c).
 *
 * A rejected c_j has R_{j+1}(c_j) = 0, and residuals only shrink, so
 * removing the drafted tokens from D never changes R: by induction R_j =
 * [q - λ_j p]+ / Σ[q - λ_j p]+, one water level, λ_1 = 0, λ_{j+1} = λ_j +
 * Σ[q - λ_j p]+ / s_{j-1}.  R_{j+1} depends on s_0..s_{j-1}, not on the
 * rejected c_j; so, with W the probability of drafting and rejecting
 * c_1..c_m (a product of [D_i(c_i) - R_i(c_i)]+),
 *   P(y accepted at child m+1 | c_1..c_m) = min(D_{m+1}(y), R_{m+1}(y)),
 *   P(y accepted at child m+2 | c_1..c_m)
 *       = Σ_{c ≠ y} [D_{m+1}(c) - R_{m+1}(c)]+ min(p(y)/(s_m - p(c)), R_{m+2}(y)),
 * the second one O(V) since R_{m+2} is shared by every c.  b ≤ 2: O(V).
 * b = 3: the first child enters only through p(c1) (and the term c2 = c1,
 * subtracted), so O(d·V) with d the number of distinct values of p on
 * the tokens p over-weights (p > q): an n-gram model's rows have a few
 * hundred (375 on the fortunes bigram, V = 32 151), logged float rows
 * about V; refused (SD_ETOOBIG) past SD_TRACE_WOR_MAX_TERMS.  b ≥ 4: the
 * sum over the ordered prefixes c_1..c_{b-2}, V^(b-1) terms
 * (sd_trace_wor_terms; past SD_TRACE_WOR_MAX_TERMS the trace estimates
 * instead, sd_trace_wor_estimate).  No closed form removes a
 * level: the b-th child's factor p(y)/(s_{b-2} - p(c_{b-1})) sums
 * Cauchy-like terms 1/(s - p(c)) whose pole s moves with the earlier
 * children.  scratch holds sd_trace_wor_scratch(V, b) bytes. */
#define SD_TRACE_WOR_MAX_TERMS 4e7 /* beyond it the top-down tree law estimates (sd_trace_wor_estimate) */
int sd_trace_wor_accept(const double *p, const double *q, size_t V, size_t b, size_t y, void *scratch,
                        double *acc, sd_error *err);
size_t sd_trace_wor_scratch(size_t V, size_t b);

/* The same quantity, estimated without bias in O(b·V) for any b, from
 * one history drawn from rng (Rao-Blackwellised over the accepting
 * child).  With h = c_1..c_{j-1} the children drafted and rejected before
 * child j, and ρ_i = Σ_x [D_i(x) - R_i(x)]+ the probability that child i is
 * rejected given h,
 *   Σ_children P(children) P(y accepted as a child)
 *       = Σ_j E_h[ Π_{i<j} ρ_i · min(D_j(y), R_j(y)) ]
 * when h is drawn with each c_i from the law of a rejected draw,
 * [D_i - R_i]+ / ρ_i (the importance weight of the forced rejections is
 * Π ρ_i).  So one forced history gives
 *     Â = Σ_j w_j min(D_j(y), R_j(y)),   w_j = Π_{i<j} ρ_i,
 * unbiased, and in [0, q(y)]: for every history the output identity
 * min(D_j, R_j) + ρ_j R_{j+1} = R_j telescopes to Σ_j w_j min(D_j(y),
 * R_j(y)) + w_{b+1} R_{b+1}(y) = q(y).  No rare event is involved: the
 * weight carries the probability of the rejections.  The stream draws one
 * uniform per rejected child.  scratch holds sd_trace_wor_scratch(V, 2)
 * bytes or more. */
void sd_trace_wor_estimate(const double *p, const double *q, size_t V, size_t b, size_t y, sd_stream *rng,
                           void *scratch, unsigned bugs, double *acc);
/* bugs (0 in use; the tests switch one on and must catch it): the weight
 * w_j not carried (each term counted as if the rejections before it were
 * certain). */
#define SD_TRACE_WOR_BUG_NO_WEIGHT 1u
/* V (V-1) ... (V-b+2): the terms of the sum over ordered prefixes. */
double sd_trace_wor_terms(size_t V, size_t b);

/* A verifier's position-law constructor (as its table-driven kernel takes
 * it, sims/kernels/sd_kernel_law.h): fills *out for chain c's V at par. */
typedef int (*sd_trace_pos_ctor)(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err);

/* The pieces of a trace type over a position law (SD_TRACE_POS_DEFINE). */
int sd_trace_pos_plan_new(void **plan, sd_trace_pos_ctor ctor, const sd_params *par, size_t V, size_t *S,
                          size_t *s0, sd_error *err);
void sd_trace_pos_plan_free(void *plan);
size_t sd_trace_gamma_len(const void *plan, const sd_params *par, size_t T, size_t n);
int sd_trace_pos_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                    sd_error *err);

/* Defines `static const sd_trace_type ID` from the position-law
 * constructor CTOR (BY_DEPTH: 1 when the law depends on the depth). */
#define SD_TRACE_POS_DEFINE(ID, CTOR, BY_DEPTH)                                                    \
    static int ID##_plan_new(void **plan, const struct sd_verifier_type *vt, const sd_params *par, \
                             size_t V, size_t *S, size_t *s0, sd_error *err)                       \
    {                                                                                              \
        (void)vt;                                                                                  \
        return sd_trace_pos_plan_new(plan, CTOR, par, V, S, s0, err);                              \
    }                                                                                              \
    static const sd_trace_type ID = {.needs_rows = 1,                                              \
                                     .real_state = 0,                                              \
                                     .by_depth = BY_DEPTH,                                         \
                                     .plan_new = ID##_plan_new,                                    \
                                     .plan_free = sd_trace_pos_plan_free,                          \
                                     .draft_len = sd_trace_gamma_len,                              \
                                     .go = sd_trace_pos_go}

#endif
