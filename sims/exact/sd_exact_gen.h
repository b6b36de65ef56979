/* sd_exact_gen.h — exact values of any verifier from its per-iteration law.
 *
 * A verifier whose iteration at position n depends only on (n, x_{n-1})
 * (every built-in one except greedy-block, whose modified target carries
 * state from one iteration to the next: it has its own exact and
 * prefix_law slots, sims/exact/greedy_exact.c) describes what ONE iteration emits
 * from that context by the law of its outcomes
 *     (x_n..x_{n+e-1}, rejected?, target calls)
 * (sd_verifier_type.iteration_law).  The generation is then a Markov chain
 * on the contexts where iterations start: with D_1 = init and
 *     D_{n+e}(y) += D_n(a) P_{n,a}(e tokens, the last one y),
 *     E[N_rej]        = Σ_n Σ_a D_n(a) P_{n,a}(rejected),
 *     E[target calls] = Σ_n Σ_a D_n(a) E_{n,a}[calls],
 * and the law of the first L tokens is the sum over the paths of
 * iterations that reach x_L (sd_exact_gen_prefix_law).  Cost: building
 * the law at each of the T·V contexts, which may far exceed the law's
 * size (rrs: about G·S·V² operations for a handful of outcomes).  Before
 * the DP starts, each law answers a work query (sd_iter_law.work_query)
 * with a bound on its cost, derived from its loops; the DP is refused
 * (SD_ETOOBIG, naming the projected work and the limit) when the sum over
 * the T·V contexts exceeds SD_EXACT_GEN_MAX_OPS.  A law is refused beyond
 * SD_ITER_LAW_MAX outcomes.
 *
 * An outcome keeps its first `keep` tokens (the caller's choice: 0 for the
 * expectations, L for the law of the first L tokens) and its last token;
 * outcomes that agree on those may be listed separately or merged. */
#ifndef SD_EXACT_GEN_H
#define SD_EXACT_GEN_H

#include <stddef.h>

#include "../engine/sd_verifier.h"

/* Outcomes one law may hold: 2^22 (about 200 MB with their tokens). */
#define SD_ITER_LAW_MAX ((size_t)1 << 22)
/* Outcomes the whole-generation DP may visit over all contexts, for a law
 * that does not answer the work query (a plugin's): 2^30. */
#define SD_EXACT_GEN_MAX_WORK ((double)((size_t)1 << 30))

/* Elementary operations (one pass of an inner loop's body over a token),
 * the unit of the work bounds, of two costlier steps:
 *   a binomial pdf (gsl_ran_binomial_pdf: lnchoose, log1p, log and exp;
 *   they are 60% of rrs's law under perf) counts as SD_WORK_PDF;
 *   an outcome (sd_iter_law_add, its growth, and the DP's use of it) as
 *   SD_WORK_OUTCOME. */
#define SD_WORK_PDF 32.0
#define SD_WORK_OUTCOME 12.0

/* Limit of the DP's projected work (sd_exact_gen_work): 2^33 of those
 * operations, an eighth of the exact evaluators' SD_EXACT_MAX_WORK
 * (src/sd_exact.h), because a counted operation is not one nanosecond:
 * measured on one core (load 2), 1.1-1.65 ns for the token-level laws
 * (token, biased, broken-coin, sprinter: at most 15 s at the limit), 1.0-
 * 1.3 ns for block, 0.6 ns for batch, and 0.1-0.2 ns for rrs and SpecTr,
 * whose bounds count every branch (zero masses, fewer surviving drafts). */
#define SD_EXACT_GEN_MAX_OPS 8589934592.0

typedef struct sd_iter_outcome {
    double prob;
    size_t emitted;        /* e >= 1 tokens x_n..x_{n+e-1} (0 only with prob 0) */
    size_t last;           /* x_{n+e-1} */
    size_t tok;            /* offset in law->tokens of its first min(e, keep) tokens */
    int rejected;          /* 1: the iteration ended with a residual draw */
    unsigned target_calls; /* target calls of the iteration */
} sd_iter_outcome;

typedef struct sd_iter_law {
    size_t keep;           /* tokens to keep per outcome (set by the caller) */
    sd_iter_outcome *o;
    size_t n, cap;
    size_t *tokens;
    size_t ntok, captok;
    /* Optional (the caller's, zeroed, (T-n+1)·V doubles): a law able to
     * adds there the law of each token it emits, without listing tokens,
     *     emit[j·V + y] += P(the iteration emits x_{n+j} = y),
     * and sets emit_filled (it then keeps no token, whatever keep says).
     * sd_iter_law_markov does; other laws leave both alone. */
    double *emit;
    int emit_filled;
    /* Optional (the caller's): a work query.  When work_query is 1 (with
     * keep = 0), a law able to bound its cost sets work to an upper bound
     * on the elementary operations (the unit of SD_WORK_PDF) of building
     * it at this context with keep = 0, lists no outcome and returns
     * SD_OK (or its own refusal of the size).  Other laws leave work at 0
     * and build the law.  sd_iter_law_markov, sd_law_block and the tree
     * verifiers' laws answer. */
    int work_query;
    double work;
} sd_iter_law;

/* Empties the law (keeps its memory and keep). */
void sd_iter_law_clear(sd_iter_law *law);
void sd_iter_law_free(sd_iter_law *law);

/* Appends an outcome of probability prob > 0 (prob <= 0 is ignored):
 * tokens[0..min(e, keep)-1] are its first tokens.  SD_ETOOBIG past
 * SD_ITER_LAW_MAX outcomes, SD_ENOMEM. */
int sd_iter_law_add(sd_iter_law *law, double prob, const size_t *tokens, size_t emitted,
                    size_t last, int rejected, unsigned target_calls, sd_error *err);

/* --- laws of verifiers that verify token by token -------------------------
 *
 * Most verifiers are Markov inside an iteration: at depth i (the i-th
 * position of the iteration, t = n+i) the next token and whether the
 * iteration goes on depend only on (t, x_{t-1}, i) and a small internal
 * state s < S (the number of surviving drafts of a draft tree).  Such a
 * verifier gives, for each (t, a = x_{t-1}, i, s), the weights
 *   cont[s'·V + y]: x_t = y and the iteration goes on in state s',
 *   end_ok[y]:      x_t = y and the iteration ends without a rejection,
 *   end_rej[y]:     x_t = y from a residual: the iteration ends, rejected,
 * all zeroed by the caller, summing to 1.  After G positions that went on
 * a bonus token follows when n+G <= T: the weights at depth i = G, all
 * read as an ending without a rejection (q_{n+G}(.|a) for a correct
 * verifier); at the horizon the iteration ends there with `horizon_calls`
 * target calls (SPRINTER makes none when its cheap verifier said yes to
 * the end).
 * Every ending makes one target call otherwise. */
typedef int (*sd_pos_law_fn)(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t s,
                             double *cont, double *end_ok, double *end_rej, sd_error *err);

typedef struct sd_pos_law {
    sd_pos_law_fn fn;
    void *ctx;
    size_t S;              /* internal states (1 for token-level rules) */
    size_t s0;             /* the state at depth 0 */
    size_t G;              /* positions drafted */
    unsigned horizon_calls;
    /* A bound on the elementary operations of one call of fn, per token
     * of the vocabulary (the call costs at most call_work·V); for the work
     * query of sd_iter_law_markov.  0 reads as 4. */
    double call_work;
    /* How sd_pos_law_free releases ctx (NULL: free(ctx)); for a law whose
     * context owns further allocations (optimal-md's cached plans). */
    void (*free_ctx)(void *ctx);
} sd_pos_law;

/* The iteration law at (n, prev) of a Markov-inside-the-iteration rule:
 * explicit token prefixes up to depth law->keep, then a forward pass over
 * (token, state) per depth: at most 1 + G·S·V calls of the position
 * weights per kept prefix, each followed by S·V accumulations.  Its work
 * query is answered with (1 + G·S·V)·V·(call_work + 2S + 4) + (G+1)·V·
 * (2·SD_WORK_OUTCOME + S + 1) (keep = 0: one forward pass). */
int sd_iter_law_markov(const sd_pos_law *pl, const sd_chain *c, size_t n, size_t prev,
                       sd_iter_law *law, sd_error *err);

/* --- whole-generation values ----------------------------------------------- */

/* E[N_rej] and E[target calls] of vt at par on chain c by the DP above.
 * SD_EUSAGE (with the reason) when vt has no iteration law at par;
 * SD_ETOOBIG, before the DP starts, when its projected work
 * (sd_exact_gen_work) exceeds SD_EXACT_GEN_MAX_OPS, or when a law is too
 * large. */
int sd_exact_gen(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 double *rejections, double *target_calls, sd_error *err);

/* The projected work of the DP above (with the per-token law when
 * marginals is 1): the sum over the T·V contexts of each law's answer to
 * the work query (twice with marginals: a law without the per-token law
 * is built again keeping its tokens), plus the DP's own use of it, in
 * elementary operations;
 * *answered = 0 (and *work = 0) when vt's law does not answer the query
 * (the DP then keeps the outcome guard SD_EXACT_GEN_MAX_WORK).  T work
 * queries, no law built.  SD_EUSAGE without an iteration law; the law's
 * own refusals. */
int sd_exact_gen_work(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                      int marginals, double *work, int *answered, sd_error *err);

/* The same as an sd_verifier_type.exact answer on a model (a stored chain;
 * the Zipf model is SD_EUSAGE), with its method line. */
int sd_exact_gen_values(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                        sd_exact_values *out, sd_error *err);

/* The exact whole-generation values of vt at par on model m: its `exact`
 * slot (a closed form, or its own enumeration) where it has one and that
 * answers, else (when the slot says SD_EUSAGE: none at these parameters)
 * the DP above over its iteration law.  SD_EUSAGE (with the reason) when
 * it has neither, SD_ETOOBIG when the computation is refused.
 * Every consumer (run's exact column, eval generation, eval speedup) asks
 * this, so a verifier with an iteration law needs no `exact` of its own. */
int sd_verifier_exact(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                      sd_exact_values *out, sd_error *err);

/* The exact law of (x_1..x_L) under vt at par: out[x_1·V^{L-1}+...+x_L],
 * V^L doubles (the caller's), x_0 ~ init: the verifier's prefix_law slot
 * where it has one, else the paths of iterations above.  SD_ETOOBIG when
 * V^L exceeds max_cells or a law (or the verifier's enumeration) is too
 * large. */
int sd_exact_gen_prefix_law(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                            size_t L, size_t max_cells, double *out, sd_error *err);

/* The same law's total-variation distance to the target's law of
 * (x_1..x_L): ½ Σ |law - target|. */
int sd_exact_gen_prefix_tv(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           size_t L, size_t max_cells, double *tv, sd_error *err);

/* The law of each output token: marg[(n-1)·V + x] = P(x_n = x) for
 * n = 1..T (T·V doubles, the caller's), by the DP above with
 *     P(x_t = y) = Σ_{n <= t} Σ_a D_n(a) P_{n,a}(the iteration emits x_t = y).
 * Laws that give their per-depth token law (sd_iter_law.emit; every
 * Markov-inside-the-iteration rule) cost O(T·V) contexts times one forward
 * pass; the others keep every token of an outcome, refused (SD_ETOOBIG)
 * when an iteration may emit more than SD_ITER_LAW_MAX token sequences. */
int sd_exact_gen_marginals(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           double *marg, sd_error *err);

#endif
