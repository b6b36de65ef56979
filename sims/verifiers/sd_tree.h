/* sd_tree.h — draft token trees and their verification: the
 * pieces shared by the tree verifiers (tree-rrs, tree-rrs-wor, tree-topk,
 * traversal, the broken-tree-* controls), the exact enumerator
 * (sims/exact/sd_exact_tree.h) and the LPs over trees (treelp/tree_valid.c,
 * treelp/tree_ot.c).
 *
 * Shape.  par->tree = (b_1, ..., b_d): b_1 children of the root, b_{l+1}
 * of each node at depth l.  The root is the context (x_{t-1} = a); a node
 * at depth l >= 1 holds a draft token for position t+l-1, and its children
 * are drafted from p_{t+l}(.|its token).  Near the horizon the tree is cut
 * at depth D = min(d, T-t+1).  Nodes are numbered breadth first, the root
 * 0; child j of the i-th node of depth l is node off[l+1] + i b_{l+1} + j.
 *
 * Drafting rules (--draw), the children of one node, in order:
 *   iid   i.i.d. from p(.|parent), with replacement (SpecInfer, Miao et
 *         al. 2024);
 *   wor   without replacement: child j from p with children 1..j-1 removed
 *         and renormalised (Jeon et al. 2024, "Recursive speculative
 *         decoding"); a node has fewer children when p's support is
 *         exhausted (the missing ones are absent, SD_TREE_NONE);
 *   topk  the b most probable tokens of p, ties to the smaller index, with
 *         the one-hot draft law δ_x (EAGLE, Medusa; Li et al. 2024, Cai et
 *         al. 2024).
 *
 * Verification given a drafted tree is a law over where the iteration ends
 * (a node v: its root-to-v path is accepted) and over the token emitted
 * after it: sd_tree_outcome computes both exactly (pi[v], law[v]).  The
 * simulator drafts a tree, computes the outcome and samples from it, which
 * has the law of the sequential algorithm (whose decisions, given the tree,
 * are coins with these probabilities); the exact enumerator sums the same
 * outcome over every drafted tree.
 *
 * Rules (their statements and citations in sd_tree.c):
 *   SD_TREE_TOPDOWN    recursive rejection sampling at every node, from
 *                      the root down (SpecInfer's multi-step speculative
 *                      sampling; with wor, Jeon et al. 2024);
 *   SD_TREE_TRAVERSAL  Traversal Verification (Weng et al. 2025): leaves
 *                      first, sequence-level acceptance, residual updates
 *                      at the parent of every rejected node;
 *   SD_TREE_SCALED     prefix-scaled k-Seq among i.i.d. siblings, top-down
 *                      allocation then post-order decisions (our reading of
 *                      UniVer, Weng et al. 2026, and of SpecTr-GBV, Lin et
 *                      al. 2026); with wor siblings it is SD_TREE_TRAVERSAL;
 *   SD_TREE_PLAN       the optimal plan of the tree-valid LP (below);
 *   SD_TREE_CALLBACK   a rule given at run time, by a plugin
 *                      (sd_verifier_type.tree_rule) or a Python verifier
 *                      (sims/engine/sd_callback.h): its contract, the
 *                      outcome's, is sd_tree_view's in sd_verifier.h;
 *                      sd_tree_rule_attach makes such a verifier. */
#ifndef SD_TREE_H
#define SD_TREE_H

#include <stddef.h>

#include "../engine/sd_verifier.h"
#include "../exact/sd_trace_laws.h"

/* sd_tree_draw, SD_TREE_DRAWS, SD_TREE_SLOT_DRAW and SD_PARAM_DRAW: in
 * sd_verifier.h, beside SD_PARAM_TREE (plugins and Python verifiers declare
 * them too). */

/* The shape and drafting rule of the tree LPs (`lp tree-valid`,
 * `lp tree-ot`), declared as the tree verifiers declare theirs:
 * [SD_TREE_DECL_SHAPE] --tree, [SD_TREE_DECL_DRAW] --draw (any rule). */
enum { SD_TREE_DECL_SHAPE = 0, SD_TREE_DECL_DRAW = 1 };
extern const sd_param_decl sd_tree_decls[];

typedef enum {
    SD_TREE_TOPDOWN = 0,
    SD_TREE_TRAVERSAL = 1,
    SD_TREE_SCALED = 2,
    SD_TREE_PLAN = 3,
    SD_TREE_CALLBACK = 4
} sd_tree_rule;

/* SD_TREE_CALLBACK's function: the rule of sd_verifier.h (sd_tree_rule_fn)
 * with the pointer the kind carries (the plugin's type, Python's slot). */
typedef int (*sd_tree_rule_call)(void *user, const sd_chain *c, const sd_params *par, const sd_tree_view *tree,
                                 double *pi, double *law, sd_error *err);

/* SD_TREE_PLAN: the verifier plays a plan, the optimal verifier of the
 * tree-valid LP (treelp/tree_valid.c), which lives above this floor: it
 * reaches the verifier through a provider installed by the program
 * (sd_tree_plan_provider; treelp's sd_treelp_install).  A plan for one
 * context (t, a), shape and drafting rule: for each of its n path sets
 * (width sorted trie ids each, the root left out, padded with SIZE_MAX, as
 * treelp's sd_lp_pathsets), stop[s][k] = P(stop at the k-th path of set s
 * | the drafted tree has set s) (k = 0: the root), and emit[id][y] = the
 * law of the token emitted after stopping at the path with trie id id
 * (Σ_{j<l} V^j + u for u ∈ V^l). */
typedef struct sd_tree_plan {
    size_t V, D, n, width;
    size_t *ids;   /* [n][width] */
    double *stop;  /* [n][width + 1] */
    double *emit;  /* [Σ_{l<=D} V^l][V] */
} sd_tree_plan;
void sd_tree_plan_free(sd_tree_plan *plan);
typedef int (*sd_tree_plan_fn)(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                               sd_tree_plan **out, sd_error *err);
/* Installs the plan provider (NULL: none); plans are cached per thread by
 * chain, context, shape and rule. */
void sd_tree_plan_provider(sd_tree_plan_fn fn);
/* 1 if a provider is installed. */
int sd_tree_plan_available(void);

/* Deliberate bugs, for the controls check must flag. */
enum {
    SD_TREE_BUG_UNNORMALISED = 1u << 0, /* the residual after a rejected sibling is not
                                           renormalised before the next test */
    SD_TREE_BUG_STALE_DRAFT = 1u << 1,  /* after drafting without replacement, children
                                           are tested against the unchanged p */
    /* Two readings of traversal's update that look alike and are biased
     * (docs/findings.md; tests/test_trees.c): */
    SD_TREE_BUG_REMOVE_FIRST = 1u << 2, /* the rejected token leaves p_v before the residual */
    SD_TREE_BUG_UNSCALED = 1u << 3,     /* the residual [q_v - p_v]+ instead of [α q_v - p_v]+ */
    SD_TREE_BUG_NO_RHO = 1u << 4,       /* SD_TREE_SCALED with ρ_v = 1: each i.i.d. sibling accepted with
                                           min(1, α q_v/p_v), the negative residual clipped */
    SD_TREE_BUG_PLAN_Q = 1u << 5        /* a plan's stop is played, but the token after it is drawn
                                           from q(.|path) instead of the plan's law */
};

/* What a tree verifier is: its rule, the drafting rules it supports (bit
 * 1 << SD_DRAW_*), and its bugs (0 for a real verifier). */
typedef struct sd_tree_kind {
    const char *name; /* the verifier's --algo name */
    sd_tree_rule rule;
    unsigned draws;
    unsigned bugs;
    const char *why_not; /* the reason given when a rule it does not support is asked for */
    sd_tree_rule_call call; /* SD_TREE_CALLBACK: the rule, called with user */
    void *user;
    /* SD_TREE_CALLBACK: what one call of the rule costs, in drafted trees of
     * a built-in rule (0: as one; a Python function's is far more), and
     * whether it is called at every inner node of a tree (a node rule,
     * sd_node_rule.h) or once per tree; the exact enumerator's limits count
     * drafted trees times this cost (sims/exact/sd_exact_tree.h). */
    double call_cost;
    int per_node;
} sd_tree_kind;

#define SD_TREE_NONE SD_TREE_ABSENT

/* A tree of the shape of some par, with room for its outcome. */
typedef struct sd_tree {
    size_t V, d;                          /* vocabulary, full depth of the shape */
    size_t b[SD_TREE_MAX_DEPTH];          /* b_1..b_d */
    size_t D;                             /* depth in use (sd_tree_cut) */
    size_t off[SD_TREE_MAX_DEPTH + 2];    /* depth l occupies [off[l], off[l+1]) */
    size_t nodes;                         /* off[D+1] */
    size_t t;                             /* position of the root's children */
    size_t *tok;                          /* [nodes]; tok[0] = the context token */
    double *pi;                           /* [nodes]: P(the iteration ends at v) */
    double *law;                          /* [nodes][V]: law of the token emitted after v
                                             (normalised; all 0 past the horizon) */
    double *Q, *P, *alpha, *reach;        /* work of sd_tree_outcome */
    size_t *next;
    unsigned char *mod;
    size_t *up, *lev;                     /* [nodes]: parent, depth (sd_tree_cut) */
    sd_params par;                        /* the parameters it was made for (a rule reads them) */
} sd_tree;

/* A tree for vocabulary V and par's shape (par->tree_depth >= 1).
 * SD_EUSAGE without a shape, SD_ETOOBIG when nodes·V doubles exceed 2^27,
 * SD_ENOMEM. */
int sd_tree_new(sd_tree **tr, size_t V, const sd_params *par, sd_error *err);
void sd_tree_free(sd_tree *tr);

/* Uses the first D levels of the shape (1 <= D <= d) from position t after
 * token a: sets D, off[], nodes, t and tok[0]. */
void sd_tree_cut(sd_tree *tr, size_t D, size_t t, size_t a);

/* Depth of node v. */
size_t sd_tree_depth_of(const sd_tree *tr, size_t v);
/* Parent of node v >= 1. */
size_t sd_tree_parent(const sd_tree *tr, size_t v);

/* The law of node u's token (u >= 1) under rule `draw`, given its parent's
 * token and its earlier siblings' tokens (tok[] of those set), into w (V
 * doubles, normalised).  Returns its mass before normalising: 0 when the
 * node is absent (its parent is absent, or wor exhausted p's support). */
double sd_tree_draft_law(const sd_tree *tr, const sd_chain *c, size_t u, sd_tree_draw draw,
                         double *w);

/* Drafts every node of the cut tree (breadth first) with rule draw; w is
 * scratch of V doubles. */
void sd_tree_draft(sd_tree *tr, const sd_chain *c, sd_tree_draw draw, sd_stream *rng, double *w);

/* The outcome of verifying the drafted tree by kind k: pi[v] and law[v]
 * for every node.  Σ_v pi[v] = 1 up to rounding.  A rule given at run time
 * (SD_TREE_CALLBACK) that fails or breaks the contract of sd_tree_view
 * (sd_verifier.h) gives SD_EINTERNAL (or its own status) naming the
 * verifier and the node; the outcome is then "end at the root with q". */
int sd_tree_outcome_checked(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw,
                            sd_error *err);
/* The same without the status (the built-in rules cannot fail). */
void sd_tree_outcome(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw);

/* A verifier written as a tree rule (sd_tree_rule.c): fills vt's alloc, free, step, exact,
 * iteration_law and tree (a kind with rule SD_TREE_CALLBACK calling call
 * with user; call NULL: vt->tree_rule, a plugin's), draws the drafting
 * rules it supports (0: all).  vt must declare tree and draw and leave the
 * slots simdec fills NULL (SD_EDATA naming the slot otherwise).  vt keeps
 * its address for the process's life (the kind points back by name); the
 * same vt attached again reuses its kind.  SD_ETOOBIG past
 * SD_TREE_RULE_MAX such verifiers.  Not thread-safe (as loading plugins). */
#define SD_TREE_RULE_MAX 64
int sd_tree_rule_attach(sd_verifier_type *vt, sd_tree_rule_call call, void *user, unsigned draws, sd_error *err);

/* The verifier pieces: alloc checks the shape and the drafting rule
 * (SD_EUSAGE "--draw topk: <why_not>"), step is one iteration (draft the
 * tree at n after prev, verify, emit the accepted path and one token). */
int sd_tree_verifier_alloc(void **state, const sd_chain *c, const sd_params *par,
                           const sd_tree_kind *k, sd_error *err);
void sd_tree_verifier_free(void *state);
int sd_tree_verifier_step(void *state, const sd_chain *c, const sd_params *par,
                          const sd_tree_kind *k, sd_stream *rng, size_t n, size_t prev,
                          size_t *out, sd_iter *it);
/* The same with the kind alloc was given, as an sd_verifier_type.step: the
 * step of a tree rule, whose failure it reports in err. */
int sd_tree_verifier_step_own(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                              size_t prev, size_t *out, sd_iter *it, sd_error *err);

/* The slots of a verifier file whose sd_tree_kind is KIND: S_alloc,
 * S_step, S_exact and S_law (its iteration_law); SD_TREE_VERIFIER_SLOTS
 * puts them, and KIND as the `tree` slot, in its sd_verifier_type. */
#define SD_TREE_VERIFIER_FUNCTIONS(KIND)                                                     \
    static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)       \
    {                                                                                              \
        return sd_tree_verifier_alloc(state, c, par, &(KIND), err);                          \
    }                                                                                              \
    static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,        \
                      size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)              \
    {                                                                                              \
        (void)err;                                                                                 \
        return sd_tree_verifier_step(state, c, par, &(KIND), rng, n, prev, out, it);               \
    }                                                                                              \
    static int S_exact(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err) \
    {                                                                                              \
        return sd_tree_verifier_exact(m, par, &(KIND), out, err);                                  \
    }                                                                                              \
    static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,              \
                     struct sd_iter_law *out, sd_error *err)                                       \
    {                                                                                              \
        return sd_tree_verifier_law(c, par, &(KIND), n, prev, out, err);                           \
    }

/* The initialisers of a tree verifier's sd_verifier_type slots, after
 * SD_TREE_VERIFIER_FUNCTIONS(KIND) in the same file. */
#define SD_TREE_VERIFIER_SLOTS(KIND)                                                               \
    .alloc = S_alloc, .free = sd_tree_verifier_free, .step = S_step, .exact = S_exact,             \
    .iteration_law = S_law, .tree = &(KIND), .trace = &sd_trace_tree

/* tree-rrs-backoff: tree-rrs on sparse-row models (src/sd_backoff.h;
 * sims/kernels/kernel_backoff.c), whose one draft row makes the children
 * off the path irrelevant. */
extern const sd_kernel_type sd_tree_rrs_kernel_backoff;

/* The kind of the tree verifier named `algo` (its sd_verifier_type's
 * `tree` slot, registered or a plugin's), or NULL: unknown, or not a
 * tree verifier. */
const sd_tree_kind *sd_tree_kind_find(const char *algo);

/* The exact slot: sims/exact/sd_exact_tree.h, sd_exact_tree_values. */
int sd_tree_verifier_exact(const sd_model *m, const sd_params *par, const sd_tree_kind *k,
                           sd_exact_values *out, sd_error *err);

/* The iteration_law slot (sims/exact/sd_exact_gen.h) of a tree verifier, by the
 * enumeration of sims/exact/sd_exact_tree.h: from context (n, prev) the tree is
 * drafted in every way, and each drafted tree ends at node v with
 * probability pi[v] (sd_tree_outcome), emitting v's path x_1..x_l and then
 * y ~ law[v] (none at the horizon, n + l > T); so
 *     P(path x_1..x_l, then y) = Σ_trees P(tree) Σ_{v: path(v) = x_1..x_l} pi[v] law[v](y),
 * a rejection when l < D (an inner node: y is a residual token), one
 * target call.  Outcomes are merged over the tokens the caller does not
 * keep (law->keep); with law->emit it fills the per-depth token law and
 * keeps no token.  SD_ETOOBIG (naming the limit) past
 * SD_EXACT_TREE_MAX_TREES drafted trees or SD_ITER_LAW_MAX outcomes. */
int sd_tree_verifier_law(const sd_chain *c, const sd_params *par, const sd_tree_kind *k, size_t n,
                         size_t prev, struct sd_iter_law *law, sd_error *err);

/* par, or, when it sets no tree (sd_params_defaults(par, NULL), as the
 * generic tests pass to every verifier), k's verifier's declared defaults
 * (shape and drafting rule both) in *buf. */
const sd_params *sd_tree_params(const sd_tree_kind *k, const sd_params *par, sd_params *buf);

/* The drafting rule par asks for. */
static inline sd_tree_draw sd_tree_draw_of(const sd_params *par)
{
    return (sd_tree_draw)sd_param_choice(par, SD_TREE_SLOT_DRAW);
}

/* SD_EUSAGE naming --draw and the reason when k does not support draw. */
int sd_tree_check_draw(const sd_tree_kind *k, sd_tree_draw draw, const char *name, sd_error *err);

/* "iid", "wor", "topk". */
const char *sd_tree_draw_name(sd_tree_draw draw);

#endif
