/* sd_trace.h — exact expectations of a verifier given logged target
 * sequences (`simdec trace`).
 *
 * A lossless verifier outputs the target chain (Leviathan et al. 2023,
 * Chen et al. 2023), so a sequence x_1..x_T sampled from the target *is*
 * a sample of the verifier's output.  Given x, where the verifier's
 * iterations end is a hidden Markov chain along x whose transitions use
 * only the rows at the contexts on x (sd_verifier_type.trace,
 * sims/engine/sd_verifier.h; sims/exact/sd_trace_laws.h):
 *   an iteration that starts at n drafts G(n) tokens; having accepted its
 *   first i < G(n) drafts in state sigma, it accepts x_t (t = n+i) and goes
 *   on in state sigma' with probability go[sigma'], else x_t came from a
 *   residual (a rejection: the iteration ends at t); after G(n) accepted
 *   drafts x_{n+G} is the bonus token (the iteration ends there without a
 *   rejection); an iteration still open after x_T ends at the horizon.
 *   Each iteration is one target call.
 * Every position is lossless whatever the hidden state (the token at t
 * follows q_t(.|x_{t-1}) given the state), so the state entering t is
 * independent of x_t..x_T given x_1..x_{t-1}: one forward pass gives
 *     E[N_rej | x] and E[target calls | x]
 * exactly, with no Monte-Carlo noise inside a sequence.  Their averages
 * over n independent logged sequences are unbiased estimates of E[N_rej]
 * and E[target calls] over a generation of T tokens, with standard errors
 * over sequences.  Along the way the expected numbers of iterations that
 * try and that accept their j-th draft give the acceptance schedule
 * a_j = P(j-th draft accepted | the first j-1 were), pooled over sequences
 * (the ratio of the two sums).
 *
 * Inputs (numpy .npy, src/sd_npy.h): tokens [n][T] (x_1..x_T of each
 * sequence), and either draft and target rows [n][T][V] (p_t(.|x_{t-1})
 * and q_t(.|x_{t-1}) of sequence i at position t) or ratios [n][T]
 * (p_t(x_t|x_{t-1}) / q_t(x_t|x_{t-1})), which suffice for the verifiers
 * whose law needs only r (token, block).  Rows are read one sequence at a
 * time (memory O(T·V) beyond the mapped files), checked (finite, >= 0,
 * summing to 1 within tol, renormalised) and the largest |Σ row - 1|
 * reported; a logged token >= V or of target probability 0 is refused.
 *
 * Where a verifier's law given the output is too costly to compute exactly
 * it may give an unbiased estimate instead (sd_trace_pos.rng): the
 * expectation given a sequence is then an unbiased estimate, and the
 * standard error over sequences includes its noise (sd_trace_result counts
 * the estimated laws). */
#ifndef SD_TRACE_H
#define SD_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/sd_npy.h"
#include "../engine/sd_verifier.h"

typedef struct sd_trace_input {
    const sd_npy *tokens;        /* [n][T] integers */
    const sd_npy *draft, *target; /* [n][T][V] floats, or both NULL */
    const sd_npy *ratios;        /* [n][T] floats, or NULL */
    const char *tokens_name, *draft_name, *target_name, *ratios_name; /* for messages */
    double tol;                  /* row tolerance; <= 0: by dtype (sd_trace_default_tol) */
} sd_trace_input;

/* Default row tolerance for a float dtype of `size` bytes: 1e-9 (float64),
 * 1e-3 (float32), 1e-2 (float16). */
double sd_trace_default_tol(size_t size);

typedef struct sd_trace_shape {
    size_t n, T, V; /* V = 0 with ratios only */
} sd_trace_shape;

/* Checks the inputs' dtypes and shapes (SD_EDATA naming the file, its
 * shape and what was expected; SD_EUSAGE for neither or both forms). */
int sd_trace_check(const sd_trace_input *in, sd_trace_shape *sh, sd_error *err);

/* One point: a verifier at parameters.  seed: the streams of the laws a
 * verifier estimates (sd_trace_pos.rng; sequence i of sd_trace_eval draws
 * from trial i, sd_trace_sequence from trial 0); estimate: 1 asks for the
 * estimate wherever one exists (tests; the default estimates only where
 * the exact law is refused). */
typedef struct sd_trace_point {
    const sd_verifier_type *vt;
    sd_params par;
    uint64_t seed;
    int estimate;
} sd_trace_point;

typedef struct sd_trace_result {
    sd_welford rej, calls; /* over sequences: E[N_rej | x], E[target calls | x] */
    size_t G;              /* draft length at position 1 (schedule entries) */
    double *tried, *accepted; /* [G]: Σ over sequences of E[iterations trying / accepting
                                 their j-th draft | x], j = 1..G */
    size_t laws, estimated;   /* position laws used, and how many of them were estimates */
} sd_trace_result;

/* SD_EUSAGE with the reason when vt has no law given the output at par
 * (no trace slot, a lossy verifier at par, rows needed but only ratios
 * given). */
int sd_trace_supported(const sd_verifier_type *vt, const sd_params *par, int have_rows, sd_error *err);

/* Bytes sd_trace_eval allocates for these points. */
double sd_trace_bytes(const sd_trace_shape *sh, const sd_trace_point *pts, size_t npts);

/* Evaluates every point on every sequence (res[j] for pts[j], the
 * caller's; free with sd_trace_result_free).  *max_dev gets the largest
 * |Σ row - 1| seen before renormalising (0 with ratios).  SD_ETOOBIG
 * before allocating when sd_trace_bytes exceeds max_bytes; SD_EDATA naming
 * the file, sequence, position (1-based) and value for bad data. */
int sd_trace_eval(const sd_trace_input *in, const sd_trace_point *pts, size_t npts, size_t max_bytes,
                  sd_trace_result *res, double *max_dev, sd_error *err);

void sd_trace_result_free(sd_trace_result *r);

/* The same for one sequence given as doubles (tests, the enumeration
 * check): x[0..T-1], rows p[t·V..], q[t·V..] (renormalised already) or
 * ratios r[t] (p, q NULL); *rej, *calls its exact expectations; tried,
 * accepted (G doubles or NULL) added to. */
int sd_trace_sequence(const sd_trace_point *pt, size_t T, size_t V, const size_t *x, const double *p,
                      const double *q, const double *r, double *rej, double *calls, double *tried,
                      double *accepted, sd_error *err);
/* The same, with *estimated set to the number of position laws estimated. */
int sd_trace_sequence_est(const sd_trace_point *pt, size_t T, size_t V, const size_t *x, const double *p,
                          const double *q, const double *r, double *rej, double *calls, size_t *estimated,
                          sd_error *err);

#endif
