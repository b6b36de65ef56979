/* sd_exact_tree.h — exact values of the tree verifiers (sims/verifiers/sd_tree.h) by
 * enumerating the draft randomness of the tree.
 *
 * From one context (position t after x_{t-1} = a) a tree verifier drafts
 * a tree T of the shape par->tree (cut at depth D = min(d, T-t+1)) and
 * ends at a node v with probability pi_T(v), emitting v's path and one
 * token y ~ law_T(v).  The enumerator sums over every drafted tree T, with
 * its draft probability P(T) (the product of the drafting rule's laws,
 * sims/verifiers/sd_tree.c), the outcome computed by sd_tree_outcome:
 *   E[accepted length] = Σ_T P(T) Σ_v pi_T(v) depth(v),
 *   P(l, y)            = Σ_T P(T) Σ_{v: depth v = l} pi_T(v) law_T(v)(y).
 * Over a whole generation, the iteration from (n, prev) moves to
 * (n + l + 1, y) with probability P(l, y); the expected number of
 * iterations (target calls) is Σ_{n, prev} P(an iteration starts at n
 * after prev), a forward recursion over the positions. */
#ifndef SD_EXACT_TREE_H
#define SD_EXACT_TREE_H

#include <stddef.h>

#include "../verifiers/sd_tree.h"
#include "../../src/sd_chain.h"
#include "../../src/sd_model.h"

/* Largest number of drafted trees (V^nodes for iid, Π over nodes of
 * V (V-1)...(V-b+1) for wor, 1 for topk) one context's enumeration
 * accepts. */
#define SD_EXACT_TREE_MAX_TREES 4000000.0

/* The number of trees one context's enumeration visits at most (a double:
 * it can be huge), for the size guard. */
double sd_exact_tree_count(size_t V, const sd_params *par, sd_tree_draw draw);

/* E[accepted path length] in one iteration of kind k (drafting rule and
 * shape from par) from step t after token a, into *expected; when joint is
 * not NULL, joint[l*V + y] = P(accepted length l, emitted token y) for
 * l = 0..D (the caller's (d+1)·V doubles; rows past D are 0; at the horizon
 * end no token follows and the row l = T-t+1 holds its probability at y =
 * the path's last token).  SD_EUSAGE for a bad context or drafting rule, SD_ETOOBIG (before
 * allocating) past SD_EXACT_TREE_MAX_TREES, SD_ENOMEM. */
int sd_exact_tree_accept(const sd_chain *c, size_t t, size_t a, const sd_params *par,
                         const sd_tree_kind *k, double *expected, double *joint, sd_error *err);

/* Expected target calls (iterations) over the whole generation x_1..x_T,
 * x_0 ~ init, and expected rejections (iterations ending in a residual
 * token), by the forward recursion above: T·V enumerations.  SD_ETOOBIG
 * when T·V·(trees per context) exceeds 4·SD_EXACT_TREE_MAX_TREES. */
int sd_exact_tree_calls(const sd_chain *c, const sd_params *par, const sd_tree_kind *k,
                        double *calls, double *rejections, sd_error *err);

/* The verifiers' exact slot (sd_verifier.h): sd_exact_tree_calls on a
 * stored chain (SD_EUSAGE on the Zipf model). */
int sd_exact_tree_values(const sd_model *m, const sd_params *par, const sd_tree_kind *k,
                         sd_exact_values *out, sd_error *err);

#endif
