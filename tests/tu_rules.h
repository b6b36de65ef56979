/* tu_rules.h — the fixture of the suites tree_rules and node_rules: a
 * verifier written as a rule (a tree rule or a node rule composed into
 * one) checked against the built-in top-down tree verifiers; its
 * parameters and lookup serve every tree verifier's suite. */
#ifndef TU_RULES_H
#define TU_RULES_H

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"

/* vt's defaults with --tree tree --draw draw (draw NULL: vt's default
 * draw; the test fails on a refusal). */
sd_params tu_rule_par(const sd_verifier_type *vt, const char *tree, const char *draw);
/* The same for tree-rrs (a tree verifier's parameters, for the tree LPs). */
sd_params tu_tree_par(const char *tree, const char *draw);

/* The registered verifier name (the test fails without it). */
const sd_verifier_type *tu_rule_vt(const char *name);

/* rule (a callback tree rule implementing recursive rejection sampling)
 * enumerates exactly as the built-in tree-rrs, tree-rrs-wor and tree-topk
 * (1e-12: the same arithmetic in another order): E[accepted] and the joint
 * law of (accepted length, emitted token) at every context of the first
 * two positions, and the whole generation's target calls and rejections;
 * shapes from one node to three levels, drafts i.i.d., without replacement
 * (b >= V exhausts the row: absent nodes) and top-b (b > V: absent nodes),
 * on a chain without zeros and two with exact zeros; at least 60 cases. */
void tu_rule_equals_the_builtins(const sd_verifier_type *rule);

/* rule's exact slot is the enumeration's: Monte-Carlo of it (simdec's step:
 * draft, call the rule, sample its outcome) meets its exact target calls
 * and rejections within 4 se (a false alarm about 6e-5 per comparison);
 * 20000 trials, seed 11, on a chain of V = 4, T = 8 with zeros; iid 2,1,
 * wor 2,2 and topk 3. */
void tu_rule_monte_carlo_meets_exact(const sd_verifier_type *rule);

/* `check --exact --plugin so --algo algo ARGS --V 4 --T 6`: lossless, the
 * exact TV of the law of x_1..x_6 to the target's is rounding (<= 1e-12)
 * and the check says unbiased; a control, that TV is above 0.01 and the
 * check says biased. */
void tu_rule_check_exact(const char *so, const char *algo, const char *args, int lossless);

#endif
