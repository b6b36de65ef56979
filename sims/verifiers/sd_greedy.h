/* sd_greedy.h — greedy block verification with the distribution
 * modification (Sun et al. 2025, Appendix C, Alg. 4–6 and eq. 31) in
 * pieces: the building blocks of one iteration (sims/verifiers/sd_greedy.c),
 * the verifier types that run them (sims/verifiers/greedy_block.c), and the
 * exact enumeration (sims/exact/greedy_exact.c). */
#ifndef SD_GREEDY_H
#define SD_GREEDY_H

#include <stddef.h>

#include "../engine/sd_verifier.h"

/* Greedy block verification with other readings of Sun et al. 2025, Alg. 5:
 * controls (sims/controls/broken_greedy_*.c) that `check` must flag, which
 * the tests run with `check` and the exact law.  They are registered
 * nowhere (so `run --list` is unchanged):
 *   broken-greedy-after-y:    the joint law in eq. 31 is taken from the
 *                             context after Y (Alg. 6 line 5 updates c
 *                             before line 6 modifies Mb);
 *   broken-greedy-tokenwise:  eq. 31 read per token, [Mb(x|.) - Ms(x|.)]+;
 *   broken-greedy-unmodified: Alg. 4 alone, no modification at all. */
extern const sd_verifier_type sd_verifier_broken_greedy_after_y;
extern const sd_verifier_type sd_verifier_broken_greedy_tokenwise;
extern const sd_verifier_type sd_verifier_broken_greedy_unmodified;

/* --- greedy block verification in pieces ------------------------------------
 *
 * One iteration of greedy-block (sims/verifiers/greedy_block.c, where the
 * mathematics is written out) cut into the pieces that both its
 * Monte-Carlo step and its exact enumeration (sims/exact/greedy_exact.c) run, so
 * that the two share every line of the modification arithmetic. */

typedef enum {
    SD_GREEDY_JOINT = 0,     /* eq. 31 with the joint law from the iteration's start */
    SD_GREEDY_AFTER_Y = 1,   /* the joint law from after Y (biased) */
    SD_GREEDY_TOKENWISE = 2, /* [Mb - Ms]+ per token (biased) */
    SD_GREEDY_UNMODIFIED = 3 /* Alg. 4 alone (biased) */
} sd_greedy_mode;

/* r = a/b: a, b = the target and the draft joints of the path since a
 * frame's start, both divided by the larger, so max(a, b) = 1 (a = 0: target
 * joint 0, r = 0; b = 0: draft joint 0, r = ∞), or a = b = 0 when both
 * joints are 0 (an unreachable prefix). */
typedef struct sd_greedy_ratio {
    double a, b;
} sd_greedy_ratio;

/* r extended by a token of target probability mb and draft probability
 * ms: (a mb, b ms) divided by the larger, so that neither overflows nor
 * underflows along long blocks; (0, 0) once both joints are 0. */
static inline sd_greedy_ratio sd_greedy_ratio_extend(sd_greedy_ratio r, double mb, double ms)
{
    double a = r.a * mb, b = r.b * ms, m = a > b ? a : b;
    if (!(m > 0.0))
        return (sd_greedy_ratio){0.0, 0.0};
    return (sd_greedy_ratio){a / m, b / m};
}

/* One earlier iteration whose modification (eq. 31) is still active. */
typedef struct sd_greedy_frame {
    size_t e;          /* last position of its zone */
    sd_greedy_ratio r; /* along the emitted path up to the current n-1 */
} sd_greedy_frame;

/* Drops from fr[0..nf) (oldest first, zone ends non-decreasing) the frames
 * whose zones ended before position n; returns how many remain, moved to
 * the front. */
size_t sd_greedy_frames_drop(sd_greedy_frame *fr, size_t nf, size_t n);

/* The state of a greedy-block run.  Between iterations it is fr[0..nf)
 * (with n and x_{n-1}); the rest is the scratch of one iteration, filled
 * by the functions below at draft depth i = 0..G (X^i the first i draft
 * tokens, X^0 = x_{n-1}). */
typedef struct sd_greedy {
    sd_greedy_mode mode;
    size_t V, cap;       /* cap: the largest draft length = the most active frames */
    size_t nf;           /* active frames, oldest first */
    sd_greedy_frame *fr; /* [cap] */
    double *D;           /* [(cap+1) V]: the levels at one position (sd_greedy_levels) */
    sd_greedy_ratio *R;  /* [(cap+1) cap]: R[i cap + a] = frame a's ratio after X^i */
    sd_greedy_ratio *K;  /* [cap+1]: the iteration's own ratio p_i after X^i */
    double *w;           /* [V] */
} sd_greedy;

/* Allocates the state for chain c and draft length par->gamma (the
 * horizon when 0): SD_ETOOBIG (naming G, V and the limit) when its
 * (G+1)·G ratio pairs would exceed 2^24 doubles, before allocating.
 * Released by sd_greedy_free (accepts NULL). */
int sd_greedy_alloc(sd_greedy **st, const sd_chain *c, const sd_params *par, sd_greedy_mode mode,
                    sd_error *err);
/* 1 if sd_greedy_alloc accepts draft length cap at vocabulary V (the
 * kernel applies exactly where the step runs). */
int sd_greedy_fits(size_t cap, size_t V);
void sd_greedy_free(sd_greedy *st);

/* Starts the iteration at position n: drops the frames whose zones ended
 * before n, R row 0 = the frames' ratios, K[0] = 1. */
void sd_greedy_enter(sd_greedy *st, size_t n);

/* The targets at position j after token y with the frames' ratios of
 * draft depth i (R row i) into D[(L+1) V]: level 0 is q_j(.|y), level l+1
 * is level l modified by frame a0+l (eq. 31) for the frames a0..nf-1 whose
 * zones cover j.  Returns L; the iteration's target Mb is the top level
 * D + L V. */
size_t sd_greedy_levels(const sd_greedy *st, const sd_chain *c, size_t i, size_t j, size_t y,
                        double *D, size_t *a0);

/* Draft token x (draft probability px > 0) at depth i, whose position's
 * levels are D (a0, L from sd_greedy_levels): R row i+1 and K[i+1]. */
void sd_greedy_extend(sd_greedy *st, const double *D, size_t a0, size_t L, size_t i, size_t x,
                      double px);

/* The acceptance of sub-block i, 1 <= i < G (Alg. 4): h_i = num/den with
 * num = Σ max(p_i Mb - Ms, 0), den = Σ max(Ms - p_i Mb, 0) at X^i (top,
 * p: the rows at depth i), both scaled alike.  Accepted when η den < num. */
void sd_greedy_h(const sd_greedy *st, size_t i, const double *top, const double *p, double *num,
                 double *den);

/* p_G = Mb(X^G)/Ms(X^G): sub-block G is accepted when η_G < p_G. */
double sd_greedy_pG(const sd_greedy *st, size_t G);

/* The law of the token Y after X^tau: weights w[V] (the caller's) and
 * their total (the bonus Mb(.|X^G) when bonus, else eq. 30's residual
 * max(p_tau Mb - Ms, 0); a row of zero mass falls back to Mb, then to q,
 * see sims/verifiers/greedy_block.c).  top, p, q: the rows at depth tau. */
double sd_greedy_next_row(const sd_greedy *st, size_t tau, int bonus, const double *top,
                          const double *p, const double *q, double *w);

/* The frames after an iteration at n with draft length G that emitted
 * X^tau, y (py = its draft probability, D, a0 and top = D + L V the levels
 * at depth tau): every frame's ratio extended by y, then this iteration's
 * frame when its zone n+tau+1..n+G-1 is not empty.  Written to out[cap]
 * (which may be st->fr); returns their number. */
size_t sd_greedy_frames_after(const sd_greedy *st, size_t n, size_t G, size_t tau, size_t y,
                              double py, const double *D, size_t a0, const double *top,
                              sd_greedy_frame *out);

/* The hook of the readings: a verifier's alloc, exact and prefix_law slots
 * for reading MODE (an sd_greedy_mode), as static S_alloc, S_exact and
 * S_prefix; with greedy-block's free, begin and step below they make the
 * verifier of that reading (greedy-block itself is SD_GREEDY_JOINT). */
#define SD_GREEDY_READING(MODE)                                                                    \
    static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)       \
    {                                                                                              \
        return sd_greedy_alloc((sd_greedy **)state, c, par, MODE, err);                            \
    }                                                                                              \
    static int S_exact(const sd_model *m, const sd_params *par, sd_exact_values *out,              \
                       sd_error *err)                                                              \
    {                                                                                              \
        return sd_greedy_exact_values(m, par, MODE, out, err);                                     \
    }                                                                                              \
    static int S_prefix(const sd_chain *c, const sd_params *par, size_t L, double *out,            \
                        sd_error *err)                                                             \
    {                                                                                              \
        return sd_greedy_exact_prefix(c, par, MODE, L, out, err);                                  \
    }

/* The slots of a reading's sd_verifier_type after SD_GREEDY_READING:
 * greedy-block's parameters, free, begin and step, the reading's alloc,
 * exact and prefix_law. */
#define SD_GREEDY_READING_SLOTS                                                                    \
    .params = sd_greedy_block_params, .alloc = S_alloc, .free = sd_greedy_block_free,              \
    .begin = sd_greedy_block_begin, .step = sd_greedy_block_step, .exact = S_exact,                \
    .prefix_law = S_prefix

/* greedy-block's slots (sims/verifiers/greedy_block.c) for the control
 * broken-greedy-kernel, which has its step and a broken kernel: alloc (the
 * state of sd_greedy_alloc, eq. 31 read with the joint law), free, begin
 * (no active modification) and step (one iteration, Alg. 4–5). */
int sd_greedy_block_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
extern const sd_param_decl sd_greedy_block_params[]; /* gamma */
void sd_greedy_block_free(void *state);
void sd_greedy_block_begin(void *state);
int sd_greedy_block_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                         size_t prev, size_t *out, sd_iter *it, sd_error *err);

/* The fast kernel of greedy-block (sims/kernels/kernel_greedy.c): the modified
 * targets in closed form on per-row tables sorted by q/p with prefix sums;
 * and its broken variant, which never records an iteration's modification
 * (Alg. 4 alone), the control broken-greedy-kernel. */
extern const sd_kernel_type sd_greedy_kernel;
extern const sd_kernel_type sd_greedy_kernel_broken;

/* --- greedy block verification exactly (sims/exact/greedy_exact.c) ------------- */

typedef struct sd_greedy_exact_result {
    double rejections;     /* E[N_rej] over the generation */
    double target_calls;   /* E[target calls] */
    double first_accepted; /* E[τ] of the first iteration (n = 1, x_0 ~ init) */
    size_t states;         /* distinct states (n, x_{n-1}, frames) visited */
    size_t prefixes;       /* draft prefixes enumerated */
} sd_greedy_exact_result;

/* Whole-generation values of greedy-block in `mode`, and the law of its
 * first L output tokens into out[x_1·V^{L-1}+...+x_L] (V^L <=
 * SD_SIM_MAX_CELLS doubles, the caller's, all written): see
 * sims/exact/greedy_exact.c.  SD_ETOOBIG (naming the count and the limit) when
 * the enumeration would be too large; SD_EUSAGE for L outside 1..T. */
int sd_greedy_exact(const sd_chain *c, const sd_params *par, sd_greedy_mode mode,
                    sd_greedy_exact_result *out, sd_error *err);
int sd_greedy_exact_prefix(const sd_chain *c, const sd_params *par, sd_greedy_mode mode, size_t L,
                           double *out, sd_error *err);

/* sd_greedy_exact's rejections and target calls as a verifier's exact slot
 * (sd_verifier_type.exact) on a stored chain (SD_EUSAGE without one). */
int sd_greedy_exact_values(const sd_model *m, const sd_params *par, sd_greedy_mode mode, sd_exact_values *out,
                           sd_error *err);

#endif
