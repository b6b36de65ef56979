/* sd_callback.h — verifiers whose iteration is a function given at run time
 * (the Python interface, python/simdec: a step function written in Python,
 * called through a ctypes callback).
 *
 * sd_callback_add builds an sd_verifier_type from a name, a summary, the
 * parameters the verifier reads and a step function, and registers it with
 * sd_verifier_add, so that every command that takes a verifier (run, check,
 * lp --compare) runs it through the one trial engine (sims/engine/sd_sim.h).  The
 * step function follows the contract of sd_verifier_type.step; what it
 * returns is checked before the engine sees it (token count within the
 * horizon, tokens in 0..V-1, rejected 0 or 1), so a faulty function is
 * refused with a message, not followed into memory it does not own.
 *
 * The engine calls step from its worker threads; a function that is not
 * thread-safe (Python's, under the GIL) is run with --threads 1, which gives
 * the same bytes as any thread count (the streams depend on (seed, trial)
 * only).  Up to SD_CALLBACK_MAX verifiers per process; adding one under a
 * name already added by sd_callback_add replaces it (a notebook cell run
 * twice). */
#ifndef SD_CALLBACK_H
#define SD_CALLBACK_H

#include <stddef.h>

#include "sd_verifier.h"

#define SD_CALLBACK_MAX 32

/* One iteration at position n after prev (sd_verifier_type.step): writes at
 * most cap tokens x_n.. to out, sets *accepted (draft tokens kept),
 * *rejected (1 if the iteration ended with a residual sample) and
 * *target_calls (preset to 1).  Returns the number of tokens written
 * (>= 1), or a value < 1 on failure (the caller of the command keeps the
 * reason; the command fails with exit status 70). */
typedef long (*sd_callback_step_fn)(void *user, const sd_chain *c, const sd_params *par,
                                    sd_stream *rng, size_t n, size_t prev, size_t *out,
                                    size_t cap, size_t *accepted, int *rejected,
                                    unsigned *target_calls);

/* A declared parameter, as the fields of sd_param_decl (sd_verifier.h).
 * The names "gamma" and "k" or "M" are the shared parameters
 * (SD_PARAM_GAMMA, SD_PARAM_DRAFTS): their kind, default and range are the
 * shared ones and the other fields are ignored.  So are the token-tree
 * ones, declared as the built-in tree verifiers declare theirs: "tree"
 * (SD_PARAM_TREE: par->tree, par->tree_depth; `choices` the default
 * shape's text, "2,2" when NULL) and "draw" (SD_PARAM_DRAW: the drafting
 * rule, a choice of SD_TREE_DRAWS in own slot SD_TREE_SLOT_DRAW, `def` the
 * index of the default rule; the verifier's other own parameters then
 * start at slot 1).  `lp tree-valid|tree-ot --compare` hands a verifier
 * declaring them the LP's shape and rule. */
typedef struct sd_callback_param {
    const char *name;
    int kind;            /* sd_param_kind */
    double def, min, max;
    const char *choices; /* SD_PARAM_CHOICE: "a|b|c"; else NULL */
    const char *help;
} sd_callback_param;

/* Registers the verifier `name` (claims_lossless: whether it claims to
 * preserve the target law; control: a deliberately broken control).  The
 * strings are copied.  SD_EUSAGE/SD_EDATA naming the problem (a bad
 * declaration, a name taken by a verifier not added here), SD_ETOOBIG past
 * SD_CALLBACK_MAX, SD_ENOMEM. */
int sd_callback_add(const char *name, const char *summary, const sd_callback_param *params,
                    size_t nparams, int claims_lossless, int control, sd_callback_step_fn fn,
                    void *user, sd_error *err);

/* A tree rule (sd_tree_view, sd_verifier.h): fills pi[nodes] and
 * law[nodes][V] (zeroed before the call) for the drafted tree; returns 0,
 * or a value < 0 on failure (the caller keeps the reason; the command
 * fails with exit status 70).  What it fills is checked against the
 * contract before it is used. */
typedef long (*sd_callback_tree_fn)(void *user, const sd_chain *c, const sd_params *par,
                                    const sd_tree_view *tree, double *pi, double *law);

/* Makes the verifier `name`, added by sd_callback_add and declaring "tree"
 * and "draw", a tree rule (sims/verifiers/sd_tree.h, sd_tree_rule_attach):
 * run drafts the tree and samples fn's outcome (its step function is no
 * longer called), and the exact enumerator sums fn's outcome over every
 * drafted tree (`check --exact`, `eval accept-length`, run's exact
 * values).  draws: the drafting rules fn supports (bits 1u << SD_DRAW_*;
 * 0: all).  Adding the verifier again (sd_callback_add) removes the rule.
 * SD_EUSAGE for an unknown name, SD_EDATA without tree and draw. */
int sd_callback_tree_rule(const char *name, unsigned draws, sd_callback_tree_fn fn, void *user, sd_error *err);

/* A node rule (sd_node_view, sd_verifier.h): fills go[node->m] and
 * residual[V] (zeroed before the call) at one inner node; returns 0, or a
 * value < 0 on failure (as sd_callback_tree_fn).  Checked against the
 * contract before it is used. */
typedef long (*sd_callback_node_fn)(void *user, const sd_chain *c, const sd_params *par,
                                    const sd_node_view *node, double *go, double *residual);

/* Makes the verifier `name`, added by sd_callback_add and declaring "tree"
 * and "draw", a node rule composed from the root down into a tree rule
 * (sims/verifiers/sd_node_rule.h): otherwise as sd_callback_tree_rule. */
int sd_callback_node_rule(const char *name, unsigned draws, sd_callback_node_fn fn, void *user, sd_error *err);

/* What one call of a rule given here costs the exact enumerator, in
 * drafted trees of a built-in rule (sd_tree_kind.call_cost): a call into
 * Python (a ctypes callback building numpy arrays) took 17 µs (a node
 * rule) to 52 µs (a tree rule of 6 nodes) at V = 4 on an idle machine,
 * where tree-rrs's outcome took 0.29 µs per drafted tree at V = 12.  The
 * enumerator's limits (4e6 drafted trees per context, 1.6e7 over a
 * generation) so become 2e4 and 8e4 calls, a few seconds of Python;
 * beyond them the exact value is refused, pointing to Monte-Carlo. */
#define SD_CALLBACK_CALL_COST 200.0

/* Accessors for callers that do not compile against the C headers
 * (ctypes): the model's V and T, its draft or target rows, the next
 * uniform of the trial's stream, and the value of a parameter by slot
 * (SD_SLOT_GAMMA, SD_SLOT_K, or 0..). */
size_t sd_callback_vocab(const sd_chain *c);
size_t sd_callback_horizon(const sd_chain *c);
/* The whole draft (target = 0) or target array, [*steps][V][V] (steps 1:
 * the same matrix at every step), owned by the chain. */
const double *sd_callback_rows(const sd_chain *c, int target, size_t *steps);
double sd_callback_uniform(sd_stream *rng);
double sd_callback_param_value(const sd_params *par, int slot);
/* The tree shape b_1..b_d (at most cap written to shape); returns d (0: no tree). */
size_t sd_callback_tree(const sd_params *par, size_t *shape, size_t cap);

#endif
