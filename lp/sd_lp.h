/* sd_lp.h — exact optima with GLPK: shared plumbing and the
 * four linear programs of `simdec lp`.
 *
 *   otm           Sun et al. 2023, eq. 4: couplings of p^{⊗k} and q
 *                 with membership cost; optimum = max P(Y ∈ drafts) (α_k).
 *   block-ot      Sun et al. 2024, Def. 1 (Sun et al. 2025, eqs. 40–42):
 *                 couplings of the draft and target γ-block laws maximising
 *                 the expected common-prefix length.
 *   valid-verify  Sun et al. 2025, Def. 1 / Lemma 2: the best valid
 *                 verifier; optimum = max E[τ].
 *   pareto        Yin et al. 2024, §4, Thm 4–5: least TV bias of a
 *                 single-token verifier with rejection probability ρ.
 *
 * Every problem estimates its size from its parameters alone (checked
 * arithmetic, saturating at SIZE_MAX) and refuses, with SD_ETOOBIG naming
 * the size and the limit, one over opts->max_vars before allocating
 * anything.  GLPK runs with its terminal output off and its error hook
 * installed: GLPK's own log and error text never reach stdout, and a GLPK
 * internal error returns to the caller (status "glpk error") instead of
 * aborting the process.  Solver outcomes are statuses (res->status), not
 * error codes: a problem function returns SD_OK whenever the solver ran,
 * whatever it concluded, and an error code only for bad input, refusal,
 * memory, or a GLPK internal error (SD_ESOLVER, res->status set too). */
#ifndef SD_LP_H
#define SD_LP_H

#include <stdio.h>
#include <stddef.h>

#include <glpk.h>

#include "../src/sd_chain.h"
#include "../src/sd_error.h"

/* ---- sizes -------------------------------------------------------------- */

/* Saturating arithmetic: SIZE_MAX stands for "overflowed". */
size_t sd_lp_mul(size_t a, size_t b);
size_t sd_lp_add(size_t a, size_t b);
size_t sd_lp_pow(size_t base, size_t e);
/* Offsets and column/row slots of the output variables r_l(u) of the
 * valid-verifier LPs (valid-verify, tree-valid): l = 0..D, u one of the
 * V^{l+1} prefixes of length l+1, slot (*off)[l] + u, (*off)[D+1] slots in
 * all (columns and rows zeroed).  What cannot be allocated is left NULL;
 * the caller frees all three. */
void sd_lp_out_slots(size_t V, size_t D, size_t **off, int **col, int **row);
/* C(n, r), saturating. */
size_t sd_lp_binom(size_t n, size_t r);

/* An upper bound of an LP's size (the actual LP may be smaller when zero
 * probabilities remove variables). */
typedef struct sd_lp_size {
    size_t vars, rows, nnz;
    char what[96]; /* the problem, for messages: "otm --k 3 at V = 7" */
    int flow;      /* 1: a flow network (vars = arcs, rows = vertices) */
} sd_lp_size;

#define SD_LP_DEFAULT_MAX_VARS ((size_t)200000)
/* The default limit on a flow network's arcs (about 0.2 KB each in GLPK's
 * graph with its residual copy): 5·10^6 arcs, ~1 GB.  otm --k 3 at V = 30
 * has 18940 arcs against 148800 LP variables. */
#define SD_LP_DEFAULT_MAX_ARCS ((size_t)5000000)
/* GLPK indexes with int; and the constraint matrix (≈ 40 bytes per nonzero
 * in GLPK) is capped at 2^26 nonzeros ≈ 2.7 GB. */
#define SD_LP_MAX_NNZ ((size_t)1 << 26)

/* SD_ETOOBIG when sz->vars > max_vars (0 = the default: SD_LP_DEFAULT_MAX_ARCS
 * for a flow network, else SD_LP_DEFAULT_MAX_VARS; message: "<what> needs
 * N LP variables (or flow arcs); the limit (--max-vars) is M") or the rows/nonzeros
 * exceed what GLPK can index or SD_LP_MAX_NNZ.  Pure arithmetic; allocates
 * nothing, so a front end can refuse before building a model. */
int sd_lp_check_size(const sd_lp_size *sz, size_t max_vars, sd_error *err);

/* ---- options and results ------------------------------------------------ */

typedef struct sd_lp_opts {
    size_t max_vars;    /* refusal limit on variables (flow arcs); 0 = the
                           default of the method (sd_lp_check_size) */
    int exact;          /* 1: certify the simplex optimum with glp_exact */
    double time_limit;  /* seconds for the solver; 0 = none */
    int method;         /* SD_LP_METHOD_*: how problems with a network form
                           (otm, block-ot, tree-ot) are solved */
    int per_draft;      /* valid-verify: 1 solves the form with one block of
                           variables per draft block instead of the form
                           aggregated over draft prefixes (lp/valid_verify.c;
                           same optimum, for tests and measurements) */
    /* Progress of GLPK's simplex (NULL: none): called about every
     * progress_ms milliseconds (0: 2000) from the first progress_ms on
     * (a shorter solve: not at all) and once at its end, with its iteration
     * count and the seconds since the solve began, read from GLPK's log
     * (which is swallowed either way; the pivots are the same). */
    void (*progress)(void *ctx, long iteration, double seconds);
    void *progress_ctx;
    int progress_ms;
} sd_lp_opts;

/* sd_lp_opts.method.  AUTO: the network method where the problem has one
 * (otm: a maximum flow; block-ot, tree-ot: a minimum-cost flow;
 * lp/sd_lp_flow.h) unless opts->exact asks for the certified simplex;
 * SIMPLEX: always the LP on GLPK's primal simplex; DUAL: on GLPK's dual
 * simplex (GLP_DUALP); FLOW: the network method (problems without one use
 * their default simplex).  AUTO for the LPs without a network form
 * (valid-verify, tree-valid, pareto): the simplex each problem measured
 * fastest (docs/lp.md). */
enum { SD_LP_METHOD_AUTO = 0, SD_LP_METHOD_SIMPLEX = 1, SD_LP_METHOD_FLOW = 2, SD_LP_METHOD_DUAL = 3 };
/* CLP: the LP on COIN-OR CLP's dual simplex (lp/sd_lp_clp.h), optimal only
 * when its dual bound and primal value agree within 1e-9. */
enum { SD_LP_METHOD_CLP = 4 };

void sd_lp_opts_default(sd_lp_opts *o);
/* 1 if opts (NULL: defaults) solve a problem that has a network form as a
 * flow. */
int sd_lp_uses_flow(const sd_lp_opts *opts);

#define SD_LP_STATUS_MAX 48

typedef struct sd_lp_result {
    double optimum;     /* objective at the solver's final point (NaN unless
                           status is "optimal") */
    char status[SD_LP_STATUS_MAX]; /* GLPK's word: "optimal", "feasible",
                           "infeasible", "no feasible solution", "unbounded",
                           "undefined", or a glp_simplex/glp_exact failure
                           ("time limit exceeded", "solver failed", ...), or
                           "glpk error" (GLPK internal error intercepted) */
    int optimal;        /* 1 iff status is "optimal" */
    size_t variables, constraints, nonzeros; /* of the LP actually solved */
    double seconds;     /* wall time to build and solve */
    char method[16];    /* how it was solved: "flow", "simplex" (primal),
                           "dual" (dual simplex) or "clp" (COIN-OR CLP) */
    double dual_bound;      /* --method clp: the weak-duality bound from CLP's
                               duals (lp/sd_lp_clp.h); NaN otherwise */
    double primal_residual; /* --method clp: largest bound violation of x */
} sd_lp_result;

/* ---- a generic plan (the optimal coupling or verifier) ------------------ */

/* Rows of keys (token groups) and values, written as CSV:
 *   header line, then one line per row: the key groups separated by commas
 *   (tokens inside a group separated by spaces), then the values (%.17g).
 * E.g. otm: "drafts,y,mass" with a row "0 2,2,0.125". */
typedef struct sd_lp_plan {
    char header[128];
    size_t ngroups;      /* key groups per row (<= 4) */
    size_t group[4];     /* tokens per group */
    size_t nkeys;        /* Σ group[] */
    size_t nvals;        /* values per row */
    size_t rows, cap;
    size_t *keys;        /* [rows][nkeys] */
    double *vals;        /* [rows][nvals] */
} sd_lp_plan;

/* Resets *res to "not solved" (optimum NaN) and, when plan is not NULL,
 * *plan to NULL: what every problem's entry point does first, so that a
 * refusal leaves well-defined outputs. */
void sd_lp_result_reset(sd_lp_result *res, sd_lp_plan **plan);

void sd_lp_plan_free(sd_lp_plan *plan);
/* Writes the plan as described above; SD_EOUTPUT on a write error. */
int sd_lp_plan_write(const sd_lp_plan *plan, FILE *f, sd_error *err);

/* ---- the solver wrapper (for the problem files) ------------------------- */

/* What a build callback fills: columns and rows are added through these
 * helpers (1-based indices as GLPK's), the matrix through sd_lp_entry into
 * a triplet buffer sized by the caller's size estimate. */
typedef struct sd_lp_builder {
    glp_prob *lp;
    int *ia, *ja;
    double *ar;
    size_t nnz, cap;
} sd_lp_builder;

/* A column with bounds lo <= x <= hi (hi = HUGE_VAL: no upper bound) and
 * objective coefficient obj; returns its index. */
int sd_lp_col(sd_lp_builder *b, double lo, double hi, double obj);
/* A row Σ a_j x_j = rhs (or >= rhs with sd_lp_row_lower); returns its index. */
int sd_lp_row_fixed(sd_lp_builder *b, double rhs);
int sd_lp_row_lower(sd_lp_builder *b, double lo);
/* Adds a_{row,col} = v (assert: within the estimated capacity). */
void sd_lp_entry(sd_lp_builder *b, int row, int col, double v);

typedef int (*sd_lp_build_fn)(sd_lp_builder *b, void *ctx, sd_error *err);
/* Called only when the status is optimal, to read the plan from the
 * columns (glp_get_col_prim(lp, j)). */
typedef int (*sd_lp_read_fn)(glp_prob *lp, void *ctx, sd_error *err);

/* Flags of sd_lp_solve. */
enum {
    SD_LP_MAXIMISE = 1,  /* maximise (default: minimise) */
    SD_LP_ADV_BASIS = 2, /* start from glp_adv_basis (triangular crash) */
    SD_LP_CPX_BASIS = 4, /* start from glp_cpx_basis (Bixby's crash) */
    SD_LP_AUTO_DUAL = 8  /* SD_LP_METHOD_AUTO means the dual simplex */
};

/* Checks sz against opts, allocates the triplet buffer, runs build, loads
 * the matrix, solves (primal simplex, or the dual simplex when
 * opts->method is SD_LP_METHOD_DUAL or AUTO with SD_LP_AUTO_DUAL; presolve
 * off, GLPK output off; then glp_exact when opts->exact), fills *res and, if optimal and read is not
 * NULL, calls read.  flags: SD_LP_* above.  Returns
 * SD_OK when the solver ran (whatever the status), SD_ETOOBIG/SD_ENOMEM, a
 * build/read error, or SD_ESOLVER with res->status "glpk error" and GLPK's
 * message when GLPK hit an internal error (the GLPK environment of the
 * calling thread is then freed; nothing leaks). */
int sd_lp_solve(const sd_lp_size *sz, unsigned flags,
                const sd_lp_opts *opts, sd_lp_build_fn build, sd_lp_read_fn read,
                void *ctx, sd_lp_result *res, sd_error *err);

/* ---- block laws ---------------------------------------------------------- */

/* Prefix laws of the chain from position t (1-based) after state x_{t-1}=a:
 * laws[l][u] for l = 0..L is P(x_t..x_{t+l-1} = u) under the draft
 * (target = 0) or the target (target = 1), u = u_1 V^{l-1} + ... + u_l.
 * laws[0][0] = 1.  Requires t + L - 1 <= c->T.  *out is one malloc'd
 * block (free *out only; (*out)[l] point inside it) of (L+1) pointers and
 * Σ V^l doubles; SD_ETOOBIG if V^L overflows, SD_ENOMEM. */
int sd_lp_prefix_laws(const sd_chain *c, size_t t, size_t a, size_t L,
                      int target, double ***out, sd_error *err);

/* ---- the problems --------------------------------------------------------- */

/* Sizes (upper bounds) of each problem, with its description in .what,
 * from the parameters alone (pass them to sd_lp_check_size to refuse
 * early). */
sd_lp_size sd_lp_otm_size(size_t V, size_t k, int ordered);
/* otm's flow network: vars = arcs (source -> draft rows, row -> each
 * distinct token it contains, token -> sink), rows = vertices. */
sd_lp_size sd_lp_otm_flow_size(size_t V, size_t k, int ordered);
/* 1 if opts (NULL: defaults) solve otm as a flow (sd_lp_uses_flow). */
int sd_lp_otm_uses_flow(const sd_lp_opts *opts);
sd_lp_size sd_lp_block_ot_size(size_t V, size_t gamma);
/* block-ot's network (lp/block_ot.c): vars = arcs (up, across, down the
 * two prefix tries), rows = vertices. */
sd_lp_size sd_lp_block_ot_flow_size(size_t V, size_t gamma);
sd_lp_size sd_lp_valid_verify_size(size_t V, size_t gamma);
/* valid-verify aggregated over draft prefixes (the default form). */
sd_lp_size sd_lp_valid_verify_trie_size(size_t V, size_t gamma);
/* The size of the form sd_lp_valid_verify solves with opts (NULL: the
 * defaults): per draft when opts->per_draft, else aggregated. */
sd_lp_size sd_lp_valid_verify_form_size(size_t V, size_t gamma, const sd_lp_opts *opts);
sd_lp_size sd_lp_pareto_size(size_t V);

/* OTM-k on single-token p, q (V entries).  ordered = 0: the LP on
 * multisets of drafts (C(V+k-1,k) rows); 1: on ordered k-tuples (V^k rows,
 * Sun et al. 2023, eq. 4 literally).  Optimum: α_k = max P(Y ∈ drafts).  With plan
 * not NULL, *plan receives "drafts,y,mass" rows (drafts as a sorted
 * multiset or a tuple; mass = π(drafts, y) jointly; entries > 1e-12). */
int sd_lp_otm(const double *p, const double *q, size_t V, size_t k, int ordered,
              const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
              sd_error *err);

/* OTM-k with the k drafts drawn WITHOUT replacement (Hu et al. 2025): the
 * rows are the sets of k' = min(k, |supp p|) distinct tokens, P(set) the
 * sum over its k'! orders of Π p(x_i)/(1 - mass drawn before x_i); the
 * same transport LP (simplex; no plan).  Optimum α_k^wor
 * (src/sd_exact_otm.h, sd_exact_otm_wor_acceptance). */
int sd_lp_otm_wor(const double *p, const double *q, size_t V, size_t k, const sd_lp_opts *opts,
                  sd_lp_result *res, sd_error *err);

/* Block-level OT on the γ-blocks of chain c from position t after state a
 * (needs t+γ-1 <= T).  Optimum: max E[common-prefix length].  Plan rows
 * "draft,target,mass". */
int sd_lp_block_ot(const sd_chain *c, size_t t, size_t a, size_t gamma,
                   const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
                   sd_error *err);

/* The best valid verifier at draft length γ from position t after state a
 * (needs t+γ <= T: the bonus token's position).  Optimum: max E[τ].  Plan
 * rows "draft,tau,y,prob": the verifier's law of (τ, y) given the draft
 * block (entries > 1e-12). */
int sd_lp_valid_verify(const sd_chain *c, size_t t, size_t a, size_t gamma,
                       const sd_lp_opts *opts, sd_lp_result *res,
                       sd_lp_plan **plan, sd_error *err);

/* The Pareto LP at rejection probability rho in [0,1].  Optimum: the least
 * TV(output law, q).  Plan rows "x,p,q,accept_mass,b,residual_mass"
 * (a(x), b(x) = a/p, m(x)). */
int sd_lp_pareto(const double *p, const double *q, size_t V, double rho,
                 const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
                 sd_error *err);

/* ---- internal helpers shared by the problem files ------------------------ */

/* A plan with the given header and key groups, room for cap rows. */
sd_lp_plan *sd_lp_plan_new(const char *header, size_t ngroups, const size_t *group,
                           size_t nvals, size_t cap);
/* Appends a row (keys: nkeys tokens; vals: nvals values); SD_ENOMEM. */
int sd_lp_plan_add(sd_lp_plan *plan, const size_t *keys, const double *vals);
/* Builds a transport LP (in a build callback): one row Σ_j π(i,j) = a[i]
 * per i with a[i] > 0, one row Σ_i π(i,j) = bm[j] per j with bm[j] > 0 but
 * the last (the rows are dependent), a column π(i,j) >= 0 with
 * objective coefficient gain(i, j, ctx) for each such pair; col[i*n + j]
 * receives its index (left 0 for pairs without a column; col is the
 * caller's, zeroed, m*n ints).  SD_ENOMEM. */
typedef double (*sd_lp_gain_fn)(size_t i, size_t j, const void *ctx);
int sd_lp_transport_build(sd_lp_builder *b, const double *a, size_t m, const double *bm,
                          size_t n, sd_lp_gain_fn gain, const void *ctx, int *col,
                          sd_error *err);
/* out[i] = max(0, primal value of column col[i]), or 0 where col[i] = 0. */
void sd_lp_read_cols(glp_prob *lp, const int *col, size_t count, double *out);
/* Monotonic wall-clock seconds (for sd_lp_result.seconds). */
double sd_lp_now(void);
/* Digits of index u (base V, L digits, most significant first) into out. */
void sd_lp_digits(size_t u, size_t V, size_t L, size_t *out);

#endif
