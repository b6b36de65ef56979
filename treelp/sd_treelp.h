/* sd_treelp.h — the token-tree linear programs, tree-valid and tree-ot
 * (treelp/tree_valid.c, treelp/tree_ot.c; treelp/tree_route.c routes
 * tree-valid).
 *
 * A floor above sims/: the problems read the tree shape and the drafting
 * rule from a verifier's parameters (sd_params, sims/engine/sd_params.h) and
 * enumerate drafted trees with sims/exact/sd_exact_tree.h; they solve their
 * LPs with the LP core (lp/sd_lp.h). */
#ifndef SD_TREELP_H
#define SD_TREELP_H

#include <stdint.h>

#include "../lp/sd_lp.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/verifiers/sd_tree.h"

/* The tree shape is par->tree (par->tree_depth >= 1), the drafting rule
 * draw an sd_tree_draw (sims/verifiers/sd_tree.h).  The context needs positions
 * t..t+D (the tree and the token after it).  Both problems first enumerate
 * the drafted trees (refused by sd_lp_tree_enum_check, before allocating,
 * past SD_EXACT_TREE_MAX_TREES of them, sims/exact/sd_exact_tree.h) and group
 * them by their set of root paths; the LP has one block per set, and its
 * size (from the number of sets, nsets) is checked against --max-vars
 * before it is built. */
int sd_lp_tree_enum_check(const char *problem, size_t V, const sd_params *par, int draw, sd_error *err);
/* tree-valid's LP in its aggregated form (treelp/tree_valid.c), or with
 * per_output = 1 the per-output form (opts->per_draft). */
sd_lp_size sd_lp_tree_valid_size(size_t V, const sd_params *par, int draw, size_t nsets, int per_output);
sd_lp_size sd_lp_tree_ot_size(size_t V, const sd_params *par, int draw, size_t nsets);
/* The memory tree-valid's LP takes, estimated from its size (GLPK's
 * model, CLP's copy and its barrier factors; measured 267 MB at
 * --tree 3,1, V = 8: 288 840 variables, estimated 390 MB).  Without
 * --max-vars the LP is refused past SD_LP_TREE_MAX_BYTES of it. */
double sd_lp_tree_valid_bytes(const sd_lp_size *sz);
#define SD_LP_TREE_MAX_BYTES 4e9
/* tree-ot's network (treelp/tree_ot.c): vars = arcs, rows = vertices. */
sd_lp_size sd_lp_tree_ot_flow_size(size_t V, const sd_params *par, int draw, size_t nsets);
/* "tree-valid --tree 2,2 --draw iid at V = 4" into buf. */
void sd_lp_tree_what(const char *problem, size_t V, const sd_params *par, int draw, char *buf, size_t len);

/* tree-valid: the best valid (lossless) verifier for the drafted tree;
 * optimum = max E[accepted path length].  Routed by treelp/tree_route.c:
 * tree-ot's flow where sd_lp_tree_valid_is_ot; else the LP on CLP
 * (method "clp", GLPK's simplex when CLP's answer is uncertified) unless
 * opts ask for a GLPK simplex or --exact. */
int sd_lp_tree_valid(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                     const sd_lp_opts *opts, sd_lp_result *res, sd_error *err);
/* 1 iff tree-valid = tree-ot by the theorem of docs/findings.md, item 19:
 * all levels of par->tree but at most one are complete (drawn without
 * replacement or top-k with b_j >= V); depth 1 always.  There
 * sd_lp_tree_valid solves tree-ot's minimum-cost flow (method "flow")
 * unless opts ask for the simplex (SIMPLEX, DUAL, exact). */
int sd_lp_tree_valid_is_ot(size_t V, const sd_params *par, int draw);
/* tree-valid's LP itself (treelp/tree_valid.c), whatever the shape: the
 * aggregated form (one variable per path set and stop node), or the
 * per-output form (one per path set, stop node and emitted token) when
 * opts->per_draft is set (same optimum; the cross-check). */
int sd_lp_tree_valid_lp(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                        const sd_lp_opts *opts, sd_lp_result *res, sd_error *err);
/* tree-ot: the full-information bound, max over couplings of the drafted
 * tree and the target sequence of E[depth of the target path inside the
 * tree]. */
int sd_lp_tree_ot(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                  const sd_lp_opts *opts, sd_lp_result *res, sd_error *err);

/* The drafted trees from a context grouped by their set of root paths:
 * n sets, each `width` path ids sorted and padded with SIZE_MAX (the id of
 * u ∈ V^l is Σ_{j<l} V^j + u; the root, id 0, is left out), and P(S). */
typedef struct sd_lp_pathsets {
    size_t V, D, n, width;
    size_t *ids;  /* [n][width] */
    double *prob; /* [n] */
} sd_lp_pathsets;
int sd_lp_tree_pathsets(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                        sd_lp_pathsets **out, sd_error *err);
void sd_lp_pathsets_free(sd_lp_pathsets *ps);
/* The length l and index u of path id. */
int sd_lp_path_of(size_t V, size_t id, size_t *l, size_t *u);
/* Walks the root and then the paths of set s: from *k = 0, each call
 * gives the next one's id, length l and index u and returns 1; 0 when
 * the set is exhausted. */
int sd_lp_pathset_next(const sd_lp_pathsets *ps, size_t s, size_t *k, size_t *id, size_t *l, size_t *u);
/* The start of both problems: SD_EUSAGE unless the context (t, a) has
 * room for par's tree and one token, SD_ETOOBIG past the enumeration
 * limit (sd_lp_tree_enum_check), then sd_lp_tree_pathsets into *ps. */
/* SD_EUSAGE unless the context (t, a) has room for par's tree and one
 * token (or --tree is missing). */
int sd_lp_tree_context(const char *problem, const sd_chain *c, size_t t, size_t a, const sd_params *par,
                       sd_error *err);
int sd_lp_tree_begin(const char *problem, const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                     sd_lp_pathsets **ps, sd_error *err);

/* The optimal verifier of tree-valid's LP (aggregated form, GLPK's primal
 * simplex) as the plan the tree-lp verifier plays (sims/verifiers/sd_tree.h,
 * SD_TREE_PLAN): stop at the k-th path of the drafted tree's path set s
 * with probability stop[s][k], then emit from emit[path].  SD_ESOLVER
 * when the LP ends without an optimum. */
int sd_lp_tree_valid_plan(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                          sd_tree_plan **plan, sd_error *err);
/* Installs sd_lp_tree_valid_plan as sd_tree.h's plan provider (the
 * programs and tests that run tree-lp call it once at start-up). */
void sd_treelp_install(void);

/* The Lagrangian dual of tree-valid's aggregated LP (treelp/tree_lagrange.c):
 * the node balance rows dualised with multipliers λ (one per target prefix
 * of length <= D, index noff[l] + u as in the LP, λ_root = 0), L(λ) =
 * E_T[max_{u ∈ T ∪ root} (|u| - λ_u)] + max over cuts of the prefix tree of
 * Σ λ_{parent(z)} q(z); L(λ) >= tree-valid for every λ, with equality at the
 * LP's node duals.  Drafting rules iid, wor, topk; SD_ETOOBIG past 2.5e7
 * table entries (internal prefixes x prefixes) or, for wor/topk, 2e6
 * children sequences. */
typedef struct sd_lp_tree_lagrange sd_lp_tree_lagrange;
typedef struct sd_lp_tree_lagrange_info {
    double value;      /* the best L(λ) evaluated: the certified bound */
    double center;     /* L at the final trust-region center */
    double last;       /* the last L(λ) evaluated */
    double model_gap;  /* L(center) - the cutting-plane model's minimum in the trust region */
    double seconds, delta;
    size_t iters, serious, sub_iters;
    int converged;     /* the model predicts no decrease above 1e-9 (relative) */
    int master_failed; /* GLPK ended the master without an optimum (the bound stands) */
    double primal, primal_residual; /* the master's mixture (column generation: repaired into a point of
                                       the LP after every master solve): its value and node-row residual */
    int flat;          /* stopped: no decrease predicted within the widest trust region, 4(D+1), and
                          its minimum on the region's boundary (L may be flat along a ray); column
                          generation: no column with a positive reduced cost, gap above 1e-9 */
    const char *method; /* "column generation (CLP)" or "cutting planes (GLPK)" (CLP failed) */
} sd_lp_tree_lagrange_info;
int sd_lp_tree_lagrange_new(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                            sd_lp_tree_lagrange **g, sd_error *err);
void sd_lp_tree_lagrange_free(sd_lp_tree_lagrange *g);
/* The number of multipliers (prefixes of length 0..D). */
size_t sd_lp_tree_lagrange_dim(const sd_lp_tree_lagrange *g);
/* L(λ), and a subgradient into grad (dim doubles) unless NULL. */
double sd_lp_tree_lagrange_eval(sd_lp_tree_lagrange *g, const double *lam, double *grad);
/* The pricing of a column generation over stop rules: A(λ) =
 * E_T[max_{u ∈ T ∪ root, q(u) > 0} (|u| - λ_u)] (ties by node index), and
 * into m (dim doubles) the stop marginals m(u) = P(the maximiser is u) of
 * the rule "stop at the node of largest |u| - λ_u" (m[0] the root's). */
double sd_lp_tree_lagrange_price(sd_lp_tree_lagrange *g, const double *lam, double *m);
/* X(z) = Σ_{v ⪰ z} P(v), the mass of P (dim doubles, the node order of
 * the pricing's marginals) in the subtree of every prefix z of levels
 * 1..D (X[0] is left as it is). */
void sd_lp_tree_lagrange_subtree(const sd_lp_tree_lagrange *g, const double *P, double *X);
/* Minimises L from lam (updated to the best point) for at most `seconds`
 * and max_iter evaluations: subgradient steps (256 or more multipliers),
 * then column generation over stop rules with the restricted master on
 * CLP (GLPK's trust-region cutting planes if CLP fails).  info->value is
 * the certified upper bound, info->primal (when primal_residual <= 1e-9)
 * the value of a point of the LP; converged: within 1e-9 of each other.
 * For column generation `serious` counts master solves and model_gap is
 * the last best reduced cost. */
int sd_lp_tree_lagrange_min(sd_lp_tree_lagrange *g, double *lam, double seconds, size_t max_iter, double lower,
                            sd_lp_tree_lagrange_info *info, sd_error *err);
/* The two above from λ = 0. */
int sd_lp_tree_lagrange_bound(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                              double seconds, double lower, sd_lp_tree_lagrange_info *info, sd_error *err);

/* tree-ot without enumerating the drafted trees (treelp/tree_ot_cg.c):
 * its aggregated form, max Σ_u |u| m(u) over the stop marginals m of the
 * drafted tree with X(z) = Σ_{v ⪰ z} m(v) <= q(z) for every target prefix
 * z, by column generation over stop rules (pricing by
 * sd_lp_tree_lagrange_price, master on CLP) for at most `seconds`.
 * lower <= tree-ot <= upper, both certified (lower: a feasible stop
 * marginal's value; upper: a Lagrangian dual bound); optimal when they
 * agree within 1e-9.  rows: SD_LP_TREE_OT_ROWS_OT (tree-ot), or, for the
 * tests' cross-check, tree-valid's rows X(z)/q(z) <= X(parent)/q(parent)
 * (upper then bounds tree-valid; lower stays a point of tree-ot's rows) or
 * tree-ot's rows without the deepest level (upper bounds tree-ot from
 * above, loosely).  Drafting rules and limits: sd_lp_tree_lagrange_new's,
 * and SD_ETOOBIG, before allocating, past 1e9 bytes of columns (about
 * 20·N·(2N + 100) for N prefixes: V = 8, depth 3, 18 MB). */
#define SD_LP_TREE_OT_ROWS_OT 0
#define SD_LP_TREE_OT_ROWS_VALID 1
#define SD_LP_TREE_OT_ROWS_NO_LEAVES 2
typedef struct sd_lp_tree_ot_cg_info {
    double lower, upper, seconds;
    int optimal;
    int master_failed; /* CLP ended a master without an optimum (the bounds stand) */
    size_t masters, pricings, columns;
    const char *method; /* "column generation (CLP)" */
} sd_lp_tree_ot_cg_info;
int sd_lp_tree_ot_cg(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw, double seconds,
                     int rows, sd_lp_tree_ot_cg_info *info, sd_error *err);

/* Certified bounds on tree-valid where its LP is out of reach
 * (treelp/tree_bounds.c): lower = the largest exact value of a valid
 * verifier: a built-in tree verifier (not a control, not tree-lp) that
 * supports the drafting rule, exact by enumeration where the trees can be
 * enumerated, else by the top-down recursion, or the recursive transport
 * verifier, or the Lagrangian's primal mixture when its node-row residual
 * is at most 1e-9 (0, rejecting at the root, when none is within reach); upper =
 * the least of tree-ot (where enumerable), the path-marginal relaxation
 * of tree-ot, the upper end of tree-ot's column generation where tree-ot
 * cannot be enumerated (sd_lp_tree_ot_cg), the path-marginal relaxation
 * of tree-ot and the Lagrangian bound (sd_lp_tree_lagrange_*).  lower <=
 * tree-valid <= upper.  Every built-in tree verifier gets a value in
 * verifiers[]: exact where it can be, else Monte-Carlo (opts->trials > 0;
 * stderr > 0) on the trial engine, else NaN (not measured). */
#define SD_LP_TREE_BOUNDS_MAX_VERIFIERS 16
typedef struct sd_lp_tree_bound_verifier {
    char name[32];
    char method[24];  /* "enumerated", "recursion", "restricted LP", "monte-carlo", "not measured" */
    double value;     /* NaN when not measured */
    double stderr_;   /* NaN for an exact value */
    uint64_t trials;  /* Monte-Carlo trials (0 when exact) */
    int above_lower;  /* Monte-Carlo: value + 4 stderr > lower (the claim lower >= it is not shown) */
} sd_lp_tree_bound_verifier;
typedef struct sd_lp_tree_bounds_opts {
    double lagrange_seconds; /* time for the Lagrangian bound; 0: not computed */
    double ot_seconds;       /* time for tree-ot's column generation where its trees cannot be
                                enumerated; 0: not computed */
    uint64_t trials, seed;   /* Monte-Carlo of the verifiers without an exact value; 0 trials: none */
} sd_lp_tree_bounds_opts;
typedef struct sd_lp_tree_bounds {
    double lower, upper, gap, seconds;
    char lower_by[64]; /* "tree-rrs (recursion)", "traversal (enumerated)", ... */
    char upper_by[32]; /* "tree-ot", "path marginals" or "lagrangian" */
    int lower_primal;  /* lower is the Lagrangian's primal point (lower_by says so in words) */
    double marginals;  /* the path-marginal bound (NaN when out of reach) */
    double tree_ot;    /* tree-ot: by its network where enumerable, else by column generation
                          when certified within 1e-9; NaN otherwise */
    double tree_ot_lower, tree_ot_upper; /* certified bounds on tree-ot (both tree_ot when known;
                                            NaN when not computed) */
    char tree_ot_method[32];             /* "network flow", "column generation", "" */
    sd_lp_tree_ot_cg_info ot_cg;         /* the column generation's run (zero when not run) */
    int upper_below_tree_ot;             /* upper <= tree_ot_lower + 1e-9: the upper bound is shown to be
                                            at most tree-ot */
    double lagrangian; /* the Lagrangian bound (NaN when not computed) */
    sd_lp_tree_lagrange_info lagrange;
    size_t nverifiers;
    sd_lp_tree_bound_verifier verifiers[SD_LP_TREE_BOUNDS_MAX_VERIFIERS];
    int mc_above_lower; /* some Monte-Carlo value is not 4 stderr below lower */
    int exact;          /* the optimum: the Lagrangian's column generation converged, lower its
                           primal point (residual <= 1e-9), gap <= 1e-9 (upper: its dual bound, or
                           tree-ot where that is smaller) */
    uint64_t seed;
} sd_lp_tree_bounds;
/* Options: Lagrangian 20 s, tree-ot's column generation 20 s, no Monte-Carlo. */
void sd_lp_tree_bounds_opts_default(sd_lp_tree_bounds_opts *o);
int sd_lp_tree_valid_bounds(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                            sd_lp_tree_bounds *b, sd_error *err);
int sd_lp_tree_valid_bounds_opts(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                                 const sd_lp_tree_bounds_opts *o, sd_lp_tree_bounds *b, sd_error *err);
/* The expected accepted length of top-down tree verifier k by the
 * recursion over target prefixes (no enumeration of whole trees);
 * SD_ETOOBIG past 5e7 children sequences, SD_EUSAGE for another rule. */
int sd_lp_tree_topdown_value(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                             const struct sd_tree_kind *k, double *value, sd_error *err);
/* The value of the recursive transport verifier (treelp/tree_bounds.c): at
 * each node the best coupling of the target token with the children,
 * weighted by 1 + the value below; lossless, at least every top-down
 * tree verifier.  V <= 64; SD_ETOOBIG past 5e6 children sequences. */
int sd_lp_tree_transport_value(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                               double *value, sd_error *err);
/* Σ_l Σ_{x ∈ V^l} min(q(x), P(x is a root path of the drafted tree)) >= tree-ot. */
int sd_lp_tree_marginal_bound(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                              double *value, sd_error *err);

#endif
