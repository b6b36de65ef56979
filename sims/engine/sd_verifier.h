/* sd_verifier.h — the one interface every verifier implements.
 *
 * A verifier is one file that ends in one
 *     const sd_verifier_type sd_verifier_NAME = { ... };
 * compiled into simdec (one line in the table of sims/engine/sd_registry.c) or
 * into a plugin (include/simdec.h, loaded with --plugin FILE.so).  The
 * type is the only place that knows the verifier: its parameters (declared
 * below, from which every command's options, help, range errors and output
 * echo are generated), whether it claims losslessness at given parameters,
 * its exact values and its fast kernels.  The trial engine (sims/engine/sd_sim.h)
 * then gives it `simdec run`, `simdec check`, `lp --compare` and the
 * figures without naming it.  See docs/adding-a-verifier.md.
 *
 * Conventions (docs/notation.md): one call of step() is one iteration = one
 * call of the target model (unless the verifier says otherwise in
 * it->target_calls, as SPRINTER does).  Positions are 1-based: tokens
 * x_1..x_T are generated, x_0 ~ init is the prompt. */
#ifndef SD_VERIFIER_H
#define SD_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/sd_chain.h"
#include "../../src/sd_draft.h"
#include "../../src/sd_error.h"
#include "../../src/sd_model.h"
#include "../../src/sd_rng.h"
#include "../../src/sd_stats.h"

/* --- parameters ------------------------------------------------------------
 *
 * A verifier declares the parameters it reads as an array of sd_param_decl
 * ended by SD_PARAM_END (name NULL), each entry with designated initializers
 * naming every field once:
 *     enum { P_EPS = 0 };
 *     static const sd_param_decl S_params[] = {
 *         {.name = "eps", .kind = SD_PARAM_REAL, .slot = P_EPS, .def = 0.0, .min = 0.0,
 *          .max = 1.0, .help = "acceptance slack (default 0)"},
 *         SD_PARAM_GAMMA,
 *         SD_PARAM_END,
 *     };
 * Each becomes the option --NAME of every command that takes the verifier.
 * Values live in sd_params, found through the declaration's slot:
 *   - the shared slots (the negative SD_SLOT_* below) have one field and one
 *     meaning for every verifier: par->gamma (SD_PARAM_GAMMA, src/sd_draft.h),
 *     par->k, the number of drafts (SD_PARAM_DRAFTS, named k or, after Yin
 *     et al., M), and par->tree (SD_PARAM_TREE);
 *   - a verifier's own parameters live in par->v[slot], the slot 0..15 it
 *     declares (an enum in its file, e.g. enum { P_EPS, P_DELTA }), read
 *     back with sd_param_real, sd_param_count and sd_param_choice (below).
 * Every own value is held as a double: counts up to 2^53 are exact, a choice
 * is the index of the chosen word. */

#define SD_PARAMS_MAX 16

typedef enum {
    SD_PARAM_COUNT = 0,  /* a whole number in [min, max] */
    SD_PARAM_REAL = 1,   /* a finite decimal number in [min, max] */
    SD_PARAM_CHOICE = 2, /* one word of `choices` ("opt|uno"); the value is its index */
    SD_PARAM_SHAPE = 3,  /* a tree shape "b1,b2,...,bd" (slot SD_SLOT_TREE, stored in
                            par->tree, par->tree_depth); `choices` holds the default
                            shape's text, [min, max] bounds each b_i, and the node
                            count b1 + b1 b2 + ... is at most SD_TREE_MAX_NODES.
                            As a number (sd_params_set) x means the shape "x" */
    SD_PARAM_POLICY = 4  /* a draft-length policy "fixed", "specdecpp:H", "entropy:H"
                            (src/sd_draft.h), held in an own slot as its one-double
                            code, [min, max] the codes' range; the default is
                            fixed (def 0) */
} sd_param_kind;

/* The shared slots: negative, so that they can never be one of a
 * verifier's own slots 0..SD_PARAMS_MAX-1.  sd_params_store and
 * sd_params_value (sims/engine/sd_params.c) are where a slot is mapped to
 * its field. */
enum {
    SD_SLOT_GAMMA = -1, /* par->gamma, the draft length (SD_PARAM_GAMMA) */
    SD_SLOT_K = -2,     /* par->k, the number of drafts (SD_PARAM_DRAFTS) */
    SD_SLOT_TREE = -3   /* par->tree, par->tree_depth, a draft tree (SD_PARAM_TREE) */
};

typedef struct sd_param_decl {
    const char *name;    /* option --NAME and key in output; NULL ends a list */
    sd_param_kind kind;
    int slot;            /* SD_SLOT_GAMMA, SD_SLOT_K, or 0..SD_PARAMS_MAX-1 */
    double def;          /* default (a choice: the index of the default word) */
    double min, max;     /* the range a given value must lie in (COUNT, REAL) */
    const char *choices; /* CHOICE: the words, separated by '|' */
    const char *unset;   /* what the default means when it is not a value a
                            user could give (gamma's 0: "rest of horizon");
                            shown in tables, null in JSON.  NULL otherwise */
    const char *help;    /* one line */
} sd_param_decl;

/* The shared parameters, declared once for every verifier that reads them. */
#define SD_GAMMA_MAX ((size_t)1 << 24)
#define SD_DRAFTS_MAX ((size_t)1 << 20)
#define SD_PARAM_GAMMA                                                                             \
    {.name = "gamma", .kind = SD_PARAM_COUNT, .slot = SD_SLOT_GAMMA, .def = 0, .min = 1,             \
     .max = (double)SD_GAMMA_MAX, .unset = "rest of horizon",                                      \
     .help = "draft tokens per iteration (default: the rest of the horizon)"}
#define SD_PARAM_DRAFTS(NAME)                                                                      \
    {.name = NAME, .kind = SD_PARAM_COUNT, .slot = SD_SLOT_K, .def = 2, .min = 1,                  \
     .max = (double)SD_DRAFTS_MAX, .help = "number of drafts (default 2)"}
/* A draft tree (token trees): b1 children of the root, b2 of each
 * depth-1 node, ...; "1,1,1" is a chain of 3 draft tokens, "4" four
 * single-token drafts. */
#define SD_TREE_MAX_DEPTH 16
#define SD_TREE_MAX_NODES 4096
#define SD_PARAM_TREE(DEF)                                                                         \
    {.name = "tree", .kind = SD_PARAM_SHAPE, .slot = SD_SLOT_TREE, .min = 1,                       \
     .max = (double)SD_TREE_MAX_NODES, .choices = DEF,                                             \
     .help = "draft tree shape b1,b2,...,bd: b1 children of the root, b2 of each depth-1 node, ..."}
/* The drafting rule of a tree's children (--draw): i.i.d. from the draft
 * row, without replacement, or the top-b tokens of the row.  Every tree
 * verifier declares it as its own slot 0 (SD_TREE_SLOT_DRAW), with the
 * rules it supports named in HELP; the tree commands (lp tree-valid|tree-ot
 * --compare, the tree evaluators) read and set it there. */
typedef enum { SD_DRAW_IID = 0, SD_DRAW_WOR = 1, SD_DRAW_TOPK = 2 } sd_tree_draw;
#define SD_TREE_DRAWS "iid|wor|topk"
#define SD_TREE_SLOT_DRAW 0
#define SD_PARAM_DRAW(DEF, HELP)                                                                   \
    {.name = "draw", .kind = SD_PARAM_CHOICE, .slot = SD_TREE_SLOT_DRAW, .def = DEF,               \
     .choices = SD_TREE_DRAWS, .help = HELP}
/* The draft-length policy (src/sd_draft.h) of token-by-token drafting, in
 * the verifier's own slot SLOT; gamma is its cap. */
#define SD_PARAM_DRAFT_POLICY(SLOT)                                                                \
    {.name = "draft-policy", .kind = SD_PARAM_POLICY, .slot = (SLOT), .def = 0, .min = 0, .max = 1e300, \
     .help = "fixed | specdecpp:H (stop once P(some draft rejected) > H) | entropy:H (stop before "  \
             "a draft row of entropy > H nats); gamma caps it (default fixed)"}
#define SD_PARAM_END {.name = NULL}

typedef struct sd_params {
    size_t gamma;            /* draft tokens per iteration; 0 = rest of horizon */
    size_t k;                /* number of drafts (multi-draft verifiers) */
    double v[SD_PARAMS_MAX]; /* the verifier's own parameters, by slot */
    uint32_t given;          /* bit i: parameter i of the declaration was given */
    size_t tree[SD_TREE_MAX_DEPTH]; /* draft tree shape b_1..b_d (SD_PARAM_TREE) */
    size_t tree_depth;              /* d; 0 when the verifier reads no tree */
} sd_params;

/* A verifier's own parameter in slot `slot` (0..SD_PARAMS_MAX-1, the slot
 * its declaration names), read as its kind: a REAL's number, a COUNT's
 * whole number, a CHOICE's index into its words (the order of `choices`,
 * so an enum listing the words in that order reads it). */
static inline double sd_param_real(const sd_params *par, int slot)
{
    return par->v[slot];
}

static inline size_t sd_param_count(const sd_params *par, int slot)
{
    return (size_t)par->v[slot];
}

static inline int sd_param_choice(const sd_params *par, int slot)
{
    return (int)par->v[slot];
}

/* --- what one iteration did ----------------------------------------------- */

typedef struct sd_iter {
    size_t emitted;        /* tokens written to out[], 1 <= emitted <= T-n+1 */
    size_t accepted;       /* draft tokens accepted in this iteration */
    int rejected;          /* 1 if it ended with a token from a residual
                              (a rejection, Yin et al. 2024, Theorem 1), else 0 */
    unsigned target_calls; /* target-model calls it made (usually 1) */
    /* Rao-Blackwellised stand-in for `rejected` (run --estimator rb): a
     * quantity whose conditional expectation, given everything drawn
     * before this iteration, equals P(rejected = 1 | the same).  Token-wise
     * verifiers give Σ over the positions they tested of that position's
     * rejection probability given what came before it (TV(p_n, q_n) for
     * the standard rule, Yin et al. 2024, Theorem 1); block verification
     * gives 1 - p_G given its drafts (Sun et al. 2025, eq. 5: τ = G with
     * probability h_G = p_G).  Summed over the iterations of a trial it is
     * an unbiased estimate of E[N_rej]: each term minus `rejected` is a
     * martingale difference and a trial has at most T iterations.  The
     * engine sets it to NaN before step(); left NaN, the run reports no
     * Rao-Blackwellised estimate. */
    double rb_rejected;
} sd_iter;

/* --- what a run observes (the trial engine's observers) -------------------
 *
 * The engine and every kernel feed the same record; every pointer may be
 * NULL.  Statistics are Welford accumulators over trials in trial order;
 * counts are sums of integers (exact in any order below 2^53). */
typedef struct sd_trial {
    size_t rejections;    /* N_rej: iterations that ended in a residual */
    size_t target_calls;  /* target-model calls */
    size_t iterations;
    size_t accepted;      /* draft tokens accepted, over the iterations run */
    size_t emitted;       /* tokens emitted (x_1.. up to where the trial stopped) */
    double rb_rejections; /* Σ of the iterations' rb_rejected (NaN: none given) */
    double rb_target_calls; /* E[target calls | the trial's output] on the output-first
                               path (sims/engine/sd_paired.h); NaN elsewhere */
} sd_trial;

typedef struct sd_observe {
    /* The stop rule of a trial: after the iteration that emits x_L
     * (L = 0: the horizon), or after its first iteration. */
    size_t L;
    int first_iteration;
    /* Observers. */
    sd_welford *rej;     /* += each trial's rejections */
    sd_welford *calls;   /* += each trial's target calls */
    sd_welford *acc;     /* += each iteration's accepted draft tokens */
    double *hist;        /* [T+1]: += 1 per iteration at its accepted count */
    double *pos;         /* [T][V]: += 1 at (n-1)·V + x_n for every trial (L = 0) */
    double *cells;       /* [V^L]: += 1 at x_1·V^{L-1} + ... + x_L (L > 0) */
    sd_trial *per_trial; /* [hi-lo]: each trial's record, by trial - lo */
    size_t *tokens;      /* [hi-lo][T+1]: x_0..x_T of each trial (sd_sim_opts.want_tokens) */
    sd_welford *rb;      /* += each trial's Rao-Blackwellised rejections
                            (sd_iter.rb_rejected); fed by kernels with SD_OBS_RB */
} sd_observe;

/* SD_OBS_* bits: what a kernel can feed (sd_kernel_type.supports). */
enum {
    SD_OBS_STATS = 1u << 0,  /* rej, calls, acc, hist */
    SD_OBS_POS = 1u << 1,
    SD_OBS_CELLS = 1u << 2,  /* L > 0 with cells */
    SD_OBS_PER_TRIAL = 1u << 3,
    SD_OBS_TOKENS = 1u << 4,
    SD_OBS_FIRST = 1u << 5,  /* the first-iteration stop rule */
    SD_OBS_RB = 1u << 6      /* rb: a kernel without it leaves the estimate out (NaN) */
};

/* --- fast kernels ------------------------------------------------------------
 *
 * A kernel runs whole trials of its verifier faster than the generic loop
 * over step(), with the same law (not the same random numbers).  The engine
 * tries a verifier's kernels in order; plan_new answers SD_EUSAGE without
 * a message when the kernel does not apply to the model or parameters (the
 * next one is tried, then the generic step) and SD_ETOOBIG when its tables
 * would exceed max_bytes (the run falls back and says so). */
struct sd_sim_opts;
struct sd_sim_block;

typedef struct sd_kernel_type {
    const char *name; /* reported by run and check, e.g. "token-alias" */
    unsigned supports; /* SD_OBS_* it can feed; others make the engine use step() */
    int (*plan_new)(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                    unsigned threads, sd_error *err);
    void (*plan_free)(void *plan);
    int (*work_new)(const void *plan, void **work, sd_error *err);
    void (*work_free)(void *work);
    /* Trials lo..hi-1 of run `seed`, in trial order, into *obs. */
    void (*run)(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                const sd_observe *obs);
} sd_kernel_type;

/* A kernel for a model whose rows exist one step at a time (a streamed
 * chain, src/sd_model.h) cannot run trials lo..hi-1 on their own: it runs
 * ALL trials of the run at once, position by position.  Its supports has
 * SD_KERNEL_ALL and its sd_kernel_type is the first member of an
 * sd_kernel_all_type (work_new, work_free and run are NULL). */
enum { SD_KERNEL_ALL = 1u << 30 };

/* In supports: the plan holds copies of everything its runs read, so the
 * model's stored rows may be freed once it is built (sd_sim_opts.kernel_ready). */
enum { SD_KERNEL_COPIES = 1u << 29 };

typedef struct sd_kernel_all_type {
    sd_kernel_type kernel;
    /* Runs trials 0..opts->trials-1 of run opts->seed (early stopping is
     * not offered).  Writes blocks[b] for every block b (the statistics of
     * its trials in trial order: the bits run would give), adds to hist
     * [T+1] and pos [T·V] (if not NULL), writes tokens ([trials]
     * [opts->want_tokens], if not NULL).  SD_ETOOBIG, before allocating,
     * when the trials' state exceeds the plan's memory bound. */
    int (*run_all)(const void *plan, const struct sd_sim_opts *opts, struct sd_sim_block *blocks,
                   double *hist, double *pos, uint32_t *tokens, sd_error *err);
} sd_kernel_all_type;

/* --- exact values --------------------------------------------------------- */

typedef struct sd_exact_values {
    double rejections;   /* E[N_rej] over a whole generation, or NaN */
    double target_calls; /* E[target calls], or NaN */
    const char *method;  /* one line: which theorem or algorithm, citing it */
} sd_exact_values;

struct sd_iter_law;

/* The law of an iteration given the tokens it outputs (sims/engine/sd_paired.h):
 * having accepted its first l-1 drafts with state *s (1 at the start of
 * the iteration), it accepts the l-th with the returned probability, where
 * r = p(x)/q(x) at the token x it outputs there (q(x) > 0; r may be 0);
 * *s is updated for the branch that accepts. */
typedef double (*sd_given_output_fn)(double *s, double r);

/* --- a tree rule (sims/verifiers/sd_tree.h) -----------------------------------
 *
 * A token-tree verifier may be written as a rule on one drafted tree
 * instead of a step: given the tree, where the iteration ends and what it
 * emits after.  simdec drafts the tree (par->tree, the drafting rule in own
 * slot SD_TREE_SLOT_DRAW), calls the rule, and samples the outcome in
 * `run`; its exact enumerator (sims/exact/sd_exact_tree.h) sums the same
 * outcome over every drafted tree for `check --exact`, `eval accept-length`
 * and run's exact values.
 *
 * The tree: nodes numbered breadth first, the root 0 (the context, token
 * tok[0] = x_{t-1}); depth l occupies nodes off[l] .. off[l+1]-1; child j
 * of node v at depth l is node off[l+1] + (v - off[l]) b[l] + j (j < b[l]);
 * a node at depth l >= 1 holds the draft token tok[v] for position
 * t + l - 1, drafted from p_{t+l-1}(.|tok[parent[v]]); tok[v] =
 * SD_TREE_ABSENT when the node was not drafted (drafting without
 * replacement exhausted its parent's row, or its parent is absent).  The
 * rows of node v are p_{t+l}(.|tok[v]) and q_{t+l}(.|tok[v]) (sd_chain_p,
 * sd_chain_q), defined when t + l <= T.  D = min(depth of the shape,
 * T - t + 1): the tree is cut at the horizon.
 *
 * The rule fills, for the drafted tree:
 *   pi[v]        P(the iteration ends at v: v's root path x_1..x_l is
 *                accepted and nothing below it), >= 0, 0 at absent nodes,
 *                Σ_v pi[v] = 1 (within 1e-9);
 *   law[v*V + y] the law of the token emitted after ending at v (a leaf:
 *                the bonus token, q; an inner node: its residual), >= 0 and
 *                summing to 1 (within 1e-9) wherever pi[v] > 0 and
 *                t + l <= T; ignored where pi[v] = 0 or past the horizon
 *                (t + l > T: nothing follows).
 * simdec owns both arrays (nodes and nodes·V doubles, zeroed before the
 * call) and checks them after it: a rule that breaks the contract fails the
 * command (SD_EINTERNAL naming the node).  The rule returns SD_OK, or a
 * status with err set.  It must not keep pointers into the tree.  It is
 * deterministic: all randomness is in the drafting, which simdec does. */
#define SD_TREE_ABSENT ((size_t)-1)
typedef struct sd_tree_view {
    size_t V;             /* vocabulary */
    size_t D;             /* depth in use */
    size_t nodes;         /* off[D+1] */
    size_t t;             /* position of the root's children */
    sd_tree_draw draw;    /* how the children were drafted */
    const size_t *b;      /* b[0..D-1]: children of each node of depth l */
    const size_t *off;    /* off[0..D+1] */
    const size_t *tok;    /* [nodes] */
    const size_t *parent; /* [nodes]; parent[0] = SD_TREE_ABSENT */
    const size_t *depth;  /* [nodes] */
} sd_tree_view;
typedef int (*sd_tree_rule_fn)(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi,
                               double *law, sd_error *err);

/* --- a tree rule node by node (plugin interface 7) -------------------------
 *
 * The top-down convenience form of a tree rule: the rule says only what
 * happens at one node of a drafted tree, and simdec composes it from the
 * root down (sims/verifiers/sd_node_rule.h).  At an inner node v of depth l
 * whose children were drafted, given the target row q = q_{t+l}(.|tok[v]),
 * the draft row p = p_{t+l}(.|tok[v]) and the children's tokens c_1..c_m in
 * drafting order (with multiplicity; absent children left out), the rule
 * fills
 *   go[j]        P(descend into child j | the iteration reached v), >= 0,
 *                Σ_j go[j] <= 1 (within 1e-9);
 *   residual[y]  the law of the token emitted when it stops at v (with
 *                probability 1 - Σ_j go[j]), >= 0 summing to 1 (within
 *                1e-9) wherever that probability exceeds 1e-12.
 * Both arrays are simdec's (m and V doubles, zeroed before the call).  What
 * happens below child j is decided at child j alone: the composition is
 *   reach(root) = 1,  reach(c_j) = reach(v) go[j],
 *   pi[v] = reach(v) (1 - Σ_j go[j]),  law[v] = residual,
 * and at a leaf (depth D, or no child drafted) pi[v] = reach(v) with the
 * bonus token from q.  Such a rule is lossless when, at every node, the
 * token it emits (the chosen child's or the residual's) follows q once the
 * children's drafting is averaged out (Miao et al. 2024, SpecInfer's
 * multi-step speculative sampling): then the path below the chosen child starts afresh
 * from that token.  Deterministic, as the tree rule. */
typedef struct sd_node_view {
    size_t V;             /* vocabulary */
    size_t t;             /* position of the children's tokens */
    size_t depth;         /* l: the node's depth (0: the root) */
    sd_tree_draw draw;    /* how the children were drafted */
    const size_t *path;   /* [depth + 1]: the root's context token x_{t-l-1}, then the node's path */
    const double *q, *p;  /* the node's target and draft rows (V doubles) */
    size_t m;             /* children drafted (>= 1) */
    const size_t *kids;   /* [m]: their tokens, in drafting order */
} sd_node_view;
typedef int (*sd_node_rule_fn)(const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                               double *residual, sd_error *err);

/* --- the law given a logged output (sims/exact/sd_trace.h) -----------------
 *
 * A lossless verifier outputs the target chain, so a sequence sampled from
 * the target is a sample of its output.  Given that output, the iteration
 * structure is a hidden Markov chain along the path: an iteration that has
 * accepted its first i drafts, in internal state (sigma, real), meets the
 * output token y at position t (context x_{t-1} on the path) and accepts
 * it as its (i+1)-th draft, going on in state sigma', with probability
 * go[sigma'] (the rest: y came from a residual, a rejection).  The slot
 * holds that law where it uses only the rows at the output's context (or
 * only r = p(y)/q(y)); it must hold for every hidden state (the token at t
 * follows q_t(.|x_{t-1}) whatever the state), which sd_trace checks.
 * The bonus token after G accepted drafts and the end at the horizon are
 * generic. */
typedef struct sd_trace_pos {
    const double *p, *q; /* the rows at the output's context (V doubles), or NULL (ratios only) */
    size_t V;            /* 0 with ratios only */
    size_t y;            /* the output token (meaningful with rows) */
    double r;            /* p(y)/q(y), q(y) > 0 */
    /* Interface 8 (appended; a law that is estimated rather than exact).  A
     * go may return, instead of the exact law given the output, an unbiased
     * estimate of it in [0, 1] drawn from rng only: the forward pass uses one
     * go per (position, depth, state) and each path of the hidden chain
     * meets a position once, so with estimates independent across positions
     * the expectations given the sequence stay unbiased (the product of
     * independent unbiased factors), their spread adding to the standard
     * error over sequences. */
    sd_stream *rng;      /* this sequence's stream (seed sd_trace_point.seed, trial = the sequence) */
    int estimate;        /* 1: estimate wherever the verifier can, even where the exact law fits */
    size_t *estimated;   /* go adds 1 for each law it estimated */
} sd_trace_pos;

struct sd_verifier_type;
struct sd_pos_law;

typedef struct sd_trace_type {
    int needs_rows; /* 1: the full rows at the context; 0: r suffices */
    int real_state; /* 1: go reads and updates *real (per open iteration) */
    int by_depth;   /* 1: go depends on the depth i (else only on sigma and the position) */
    /* A plan for vt at par over vocabulary V (0 with ratios only): *S
     * internal states, *s0 the state at depth 0.  SD_EUSAGE with the reason
     * where the law given the output needs rows off the path. */
    int (*plan_new)(void **plan, const struct sd_verifier_type *vt, const sd_params *par, size_t V,
                    size_t *S, size_t *s0, sd_error *err);
    void (*plan_free)(void *plan);
    /* Drafts of an iteration starting at position n of a generation of T. */
    size_t (*draft_len)(const void *plan, const sd_params *par, size_t T, size_t n);
    /* go[0..S-1] as above at depth i < draft_len, state sigma, *real
     * (1 at depth 0) updated for the branch that goes on. */
    int (*go)(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
              sd_error *err);
} sd_trace_type;

/* --- the type --------------------------------------------------------------- */

/* Controls.  A deliberately broken control is one file
 * sims/controls/broken_NAME.c defining one sd_verifier_type
 * sd_verifier_broken_NAME, --algo name "broken-NAME", with flags
 * SD_VERIFIER_CONTROL.  It is the verifier it breaks with the bug switched
 * on through a hook that verifier exports (a mode, a rule or a flag of its
 * step, kernel or law, declared in the verifier's header): it takes the
 * verifier's other slots as they are and defines only the slot the bug
 * lives in and, where `run` executes something else than the step (a
 * broken kernel), the exact law of what runs.  It claims to be lossless,
 * and `check` must flag it (docs/controls.md lists them). */
enum {
    SD_VERIFIER_CONTROL = 1u << 0, /* a deliberately broken control that check must flag */
    /* its k drafts are not k i.i.d. draws from p (e.g. greedy draft
     * sampling): the optimum over verifiers of i.i.d. drafts does not bound
     * it, and the referee reports no fraction of that optimum */
    SD_VERIFIER_OWN_DRAFTS = 1u << 1
};

typedef struct sd_verifier_type {
    const char *name;    /* the --algo name, e.g. "block" */
    const char *summary; /* one line for --help and run --list, citing the source */
    const sd_param_decl *params; /* the parameters it reads (ended by SD_PARAM_END),
                                    or NULL for none */
    /* 1 if, at these parameters, it claims to preserve the target law
     * (biased is lossless only at eps = 0, sprinter only at fp = 0).  NULL
     * means "always".  The controls claim it and must be caught. */
    int (*claims_lossless)(const sd_params *par);

    /* Allocates per-run scratch state for chain c (its V and T) and checks
     * the parameters (SD_EUSAGE naming the bad one).  *state may be left
     * NULL by verifiers that need none.  One state serves one thread. */
    int (*alloc)(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
    /* Frees what alloc made; accepts NULL. May be NULL itself. */
    void (*free)(void *state);
    /* Called at the start of every trial (for verifiers that carry state
     * between iterations, e.g. greedy-block's modified target).  May be
     * NULL. */
    void (*begin)(void *state);
    /* One iteration at position n (1 <= n <= T) after token prev = x_{n-1}:
     * drafts, verifies, writes x_n..x_{n+emitted-1} to out[] (capacity
     * T-n+1) and fills *it.  Returns SD_OK or a status with err set. */
    int (*step)(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                size_t prev, size_t *out, sd_iter *it, sd_error *err);

    /* Optional: exact expected rejections and target calls over a whole
     * generation on model m.  SD_EUSAGE (any message) where it has none at
     * these parameters, SD_ETOOBIG where the computation is refused. */
    int (*exact)(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err);
    /* Optional: its fast kernels, tried in order; NULL-terminated. */
    const sd_kernel_type *const *kernels;
    unsigned flags; /* SD_VERIFIER_* */
    /* Optional: the exact law of what ONE iteration at position n after
     * x_{n-1} = prev emits (sims/exact/sd_exact_gen.h: its outcomes, each with
     * its tokens, rejected flag and target calls), appended to *out whose
     * `keep` the caller set.  From it the DP of sd_exact_gen gives the
     * whole-generation expectations and the law of the first L tokens.
     * SD_EUSAGE with the reason where the iteration does not depend on
     * (n, prev) alone; SD_ETOOBIG where the law is too large. */
    int (*iteration_law)(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                         struct sd_iter_law *out, sd_error *err);
    /* Optional, for a verifier whose iterations carry state (so that the
     * DP over iteration_law does not apply; greedy-block): the exact law
     * of its first L output tokens, out[x_1·V^{L-1}+...+x_L] for x_0 ~
     * init, all V^L doubles written (the caller's array, V^L already
     * checked against the caller's limit).  SD_ETOOBIG where the
     * computation is refused (naming the size and the limit). */
    int (*prefix_law)(const sd_chain *c, const sd_params *par, size_t L, double *out,
                      sd_error *err);
    /* Optional, lossless verifiers whose iteration, given its output, has
     * the sequential law above (token-level SD and block verification; the
     * output-first path of `run --paired`, sims/engine/sd_paired.h).  NULL: none. */
    sd_given_output_fn given_output;
    /* Optional, token-tree verifiers (sims/verifiers/sd_tree.h): the tree's kind,
     * through which the tree evaluators find the verifier by its name
     * (sd_tree_kind_find: `eval accept-length --algo tree-*`, the tree
     * figure).  NULL: not a tree verifier. */
    const struct sd_tree_kind *tree;
    /* Optional: its law given a logged output (above; `simdec trace`).
     * NULL: traces are refused (the law needs rows off the logged path). */
    const sd_trace_type *trace;
    /* Optional (plugin interface 6): the verifier as a tree rule (above).
     * With it, simdec supplies alloc, free, step, exact, iteration_law and
     * tree (leave them, kernels, prefix_law, given_output and trace NULL);
     * the verifier declares SD_PARAM_TREE and SD_PARAM_DRAW.  tree_draws:
     * the drafting rules it supports (bits 1u << SD_DRAW_*; 0: all). */
    sd_tree_rule_fn tree_rule;
    unsigned tree_draws;
    /* Optional (plugin interface 7): the verifier as a rule at one node
     * (sd_node_view above), composed from the root down into a tree rule;
     * the same slots as tree_rule's are simdec's, tree_draws applies, and
     * tree_rule stays NULL. */
    sd_node_rule_fn node_rule;
    /* Optional, built-in verifiers only (after the plugin interface's last
     * field: sims/engine/sd_plugin.c copies a plugin's type up to it, so a
     * plugin's value is never read and plugins of interface 7 keep their
     * layout): the verifier's law at one position of an iteration, Markov
     * inside the iteration (struct sd_pos_law, sims/exact/sd_exact_gen.h:
     * the weights of the next token and of the next internal state given
     * the state), at par for chain c (only c->V is read), with
     * out->G = par's draft length (SIZE_MAX for the horizon); allocated
     * into *out (sd_pos_law_free).  SD_EUSAGE (a message optional) where it
     * has none at par.  On i.i.d. rows the forward pass over the internal
     * state alone (sims/exact/sd_iid_pos.h) then gives the exact law of an
     * iteration's accepted length in O(S·V) memory, where iteration_law
     * needs a stored V x V chain.  NULL: none. */
    int (*iid_pos_law)(const sd_chain *c, const sd_params *par, struct sd_pos_law *out, sd_error *err);
} sd_verifier_type;

/* Draft length of an iteration at position n: the rest of the horizon
 * T-n+1, or par->gamma when it is set and smaller (src/sd_draft.h). */
static inline size_t sd_draft_len(const sd_chain *c, const sd_params *par, size_t n)
{
    return sd_draft_len_at(par->gamma, c->T, n);
}

/* The draft-length policy par holds in the parameter named "draft-policy"
 * of vt (fixed when vt declares none). */
sd_draft_policy sd_params_draft_policy(const sd_params *par, const struct sd_verifier_type *vt);

/* 1 if vt claims to preserve the target law at par. */
static inline int sd_verifier_claims_lossless(const sd_verifier_type *vt, const sd_params *par)
{
    return !vt->claims_lossless || vt->claims_lossless(par);
}

/* --- the registry (sims/engine/sd_registry.c) -------------------------------------- */

/* The verifiers built into simdec, NULL-terminated: lossless verifiers
 * first, then the controls. */
extern const sd_verifier_type *const sd_verifiers[];

/* The n-th known verifier, built-in first, then those added by
 * sd_verifier_add (plugins), in order; NULL past the end. */
const sd_verifier_type *sd_verifier_at(size_t n);

/* Looks a verifier up by name among all known ones; NULL if unknown. */
const sd_verifier_type *sd_verifier_find(const char *name);

/* Adds a verifier (from a plugin) after checking its declaration
 * (sd_params_check_decls) and that its name is new.  SD_EDATA naming the
 * problem; SD_ETOOBIG past 256 added verifiers. */
int sd_verifier_add(const sd_verifier_type *vt, const char *source, sd_error *err);

/* The reference against which run reports the saving of any verifier:
 * token-level speculative decoding (Leviathan et al. 2023). */
const sd_verifier_type *sd_verifier_baseline(void);

#endif
