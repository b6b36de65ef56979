/* sd_node_rule.h — tree verifiers written as a rule at one node (the
 * top-down convenience form of a tree rule; its contract, sd_node_view, is
 * in sims/engine/sd_verifier.h).
 *
 * sd_node_rule_attach composes the node rule from the root down into a
 * tree rule (sd_tree_rule_attach, sd_tree.h): for a drafted tree it calls
 * the node rule at every inner node reached with positive probability,
 * checks what it returns, and fills pi and law as
 *   reach(0) = 1,  reach(c_j) = reach(v) go_v[j],
 *   pi[v] = reach(v) (1 - Σ_j go_v[j]),  law[v] = residual_v,
 * a leaf (depth D, or no child drafted) ending with reach(v) and the bonus
 * token from q.  The verifier is then a tree verifier of rule
 * SD_TREE_CALLBACK like any other: run samples the composed outcome, and
 * the exact enumerator (sims/exact/sd_exact_tree.h) sums it over every
 * drafted tree (`eval accept-length`, `check --exact`, run's exact
 * values, `lp tree-valid --compare`). */
#ifndef SD_NODE_RULE_H
#define SD_NODE_RULE_H

#include "sd_tree.h"

/* The node rule with a pointer (a plugin's type, Python's slot). */
typedef int (*sd_node_rule_call)(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node,
                                 double *go, double *residual, sd_error *err);

/* Makes vt a tree verifier whose tree rule is the composition above of
 * call (with user); call NULL: vt->node_rule, a plugin's, whose type must
 * then leave tree_rule and the slots simdec fills NULL (SD_EDATA naming
 * the slot).  draws: the drafting rules it supports (0: all).  vt declares
 * tree and draw (SD_EDATA otherwise) and keeps its address for the
 * process's life; attaching the same vt again reuses its place.
 * SD_ETOOBIG past SD_TREE_RULE_MAX such verifiers.  Not thread-safe (as
 * loading plugins). */
int sd_node_rule_attach(sd_verifier_type *vt, sd_node_rule_call call, void *user, unsigned draws, sd_error *err);

/* Sets the cost of one call of the rule of vt, a verifier attached by
 * sd_tree_rule_attach or sd_node_rule_attach, in drafted trees of a
 * built-in rule (sd_tree_kind.call_cost), and whether it is called per
 * inner node; SD_EUSAGE when vt is not such a verifier. */
int sd_node_rule_cost(const sd_verifier_type *vt, double call_cost, int per_node, sd_error *err);

#endif
