/* sd_chain.h — the model: a draft chain p and a target chain q.
 *
 * A model is a pair of nonstationary Markov chains on tokens 0..V-1 over a
 * horizon T (Yin et al. 2024, Appendix F):
 *   x_0 ~ init,   x_t ~ p_t(.|x_{t-1}) (draft)   or   q_t(.|x_{t-1}) (target),
 * for t = 1..T.  Rows are stored as [steps][V][V] doubles with
 * steps = T (nonstationary) or 1 (the same matrix at every step).
 *
 * Invariant after sd_chain_validate(): every row of init, draft and target
 * is finite, non-negative and sums to 1 within 1e-12.  Every function that
 * takes a const sd_chain * may rely on this. */
#ifndef SD_CHAIN_H
#define SD_CHAIN_H

#include <stdio.h>
#include <stddef.h>

#include "sd_error.h"

typedef struct sd_chain {
    size_t V;             /* vocabulary size, >= 1 */
    size_t T;             /* horizon, >= 1 */
    size_t draft_steps;   /* 1 (time-homogeneous) or T */
    size_t target_steps;  /* 1 (time-homogeneous) or T */
    double *init;         /* [V]: distribution of x_0 */
    double *draft;        /* [draft_steps][V][V]: draft[(t-1)*V*V + a*V + b] = p_t(b|a) */
    double *target;       /* [target_steps][V][V]: likewise q_t(b|a) */
} sd_chain;

/* Largest model the library will allocate, in stored probabilities
 * (init + draft + target).  2^31 doubles = 16 GiB; larger is SD_ETOOBIG. */
#define SD_CHAIN_MAX_ENTRIES ((size_t)1 << 31)

/* Longest horizon the library accepts (a trial keeps O(T) state):
 * 2^24 = 16 777 216 tokens.  A longer one is SD_ETOOBIG. */
#define SD_CHAIN_MAX_HORIZON ((size_t)1 << 24)

/* Allocates a chain with all probabilities zero.  draft_steps and
 * target_steps must each be 1 or T.  Refuses (SD_ETOOBIG) before allocating
 * when the entries would exceed SD_CHAIN_MAX_ENTRIES or overflow size_t.
 * The caller frees with sd_chain_free().  Returns NULL on failure. */
sd_chain *sd_chain_alloc(size_t V, size_t T, size_t draft_steps,
                         size_t target_steps, sd_error *err);

void sd_chain_free(sd_chain *c);

/* p_t(.|a) and q_t(.|a) for t in 1..T, a in 0..V-1: pointers to V doubles
 * owned by the chain. */
static inline const double *sd_chain_p(const sd_chain *c, size_t t, size_t a)
{
    size_t s = c->draft_steps == 1 ? 0 : t - 1;
    return c->draft + (s * c->V + a) * c->V;
}
static inline const double *sd_chain_q(const sd_chain *c, size_t t, size_t a)
{
    size_t s = c->target_steps == 1 ? 0 : t - 1;
    return c->target + (s * c->V + a) * c->V;
}

/* Checks every row (finite, >= 0, sum within 1e-9 of 1) and renormalises
 * rows within that tolerance.  On failure names the source (a file name or
 * "model"), field, step (1-based), row and the offending value or sum;
 * returns SD_EDATA. */
int sd_chain_validate(sd_chain *c, const char *source, sd_error *err);

/* The same with row tolerance tol (values below 1e-9 mean 1e-9): rows whose
 * sum is within tol of 1 are renormalised, e.g. a model exported in single
 * precision (float32 sums are off by ~1e-7).  *max_dev (if not NULL) gets
 * the largest |Σ row - 1| seen before renormalising. */
int sd_chain_validate_tol(sd_chain *c, const char *source, double tol, double *max_dev,
                          sd_error *err);

/* Validates and renormalises the V rows of step t (1-based, named in
 * messages) of one matrix, as sd_chain_validate does for the same rows of
 * a stored chain; what is "draft" or "target".  SD_EDATA. */
int sd_chain_validate_step(double *rows, size_t V, size_t t, const char *source, const char *what,
                           sd_error *err);

/* Keeps the first T steps (1 <= T <= c->T), in place.  A larger T is
 * SD_EUSAGE ("--T 60 exceeds the model's horizon 50"). */
int sd_chain_truncate(sd_chain *c, size_t T, sd_error *err);

/* Reads a simdec-chain-1 JSON file.  Syntax errors name
 * path:line:column; content errors name the field, step, row and value.
 * SD_EIO when the file cannot be opened, SD_EDATA when it is malformed,
 * SD_ETOOBIG when its declared size is refused.  On success *out owns a
 * validated chain. */
int sd_chain_load(const char *path, sd_chain **out, sd_error *err);
/* sd_chain_load with row tolerance tol and the largest deviation
 * (sd_chain_validate_tol). */
int sd_chain_load_tol(const char *path, double tol, sd_chain **out, double *max_dev,
                      sd_error *err);
/* sd_chain_load_tol that also writes the SHA-256 of the bytes it parsed to
 * sha256 (64 hex digits and a NUL; NULL: none) — one read, so the hash is
 * that of the model loaded even from a pipe (/dev/stdin, <(...)). */
int sd_chain_load_sha(const char *path, double tol, sd_chain **out, double *max_dev, char sha256[65],
                      sd_error *err);

/* The same from a NUL-terminated string; `source` names it in messages. */
int sd_chain_load_string(const char *json, const char *source, sd_chain **out,
                         sd_error *err);

/* Writes c as simdec-chain-1 JSON (17 significant digits, so a reload is
 * exact).  Time-homogeneous parts are written as [V][V].  SD_EOUTPUT on a
 * write error. */
int sd_chain_write(const sd_chain *c, FILE *f, sd_error *err);

/* Generator parameters of `simdec gen`:
 *   draft row  ~ Dirichlet(alpha, ..., alpha),
 *   target row = (1-mix) draft row + mix fresh Dirichlet(alpha) row,
 *   init uniform; rows drawn step by step, state by state, from GSL's
 *   mt19937 seeded with `seed`. */
typedef struct sd_gen_params {
    size_t V, T;
    unsigned long seed;
    double alpha;  /* > 0 */
    double mix;    /* in [0,1] */
    int rng;       /* SD_GEN_DIRICHLET (the above) or SD_GEN_NUMPY_MT19937 */
} sd_gen_params;

/* The generators of `simdec gen --rng NAME` (sd_gen_rng_parse). */
enum { SD_GEN_DIRICHLET = 0, SD_GEN_NUMPY_MT19937 = 1 };

#define SD_GEN_DEFAULT_V 7
#define SD_GEN_DEFAULT_T 50
#define SD_GEN_DEFAULT_SEED 10UL
#define SD_GEN_DEFAULT_ALPHA 1.0
#define SD_GEN_DEFAULT_MIX 0.5

/* Fills *gp with the defaults above. */
void sd_gen_defaults(sd_gen_params *gp);

/* Generates a validated random chain; NULL on failure (bad parameter:
 * SD_EUSAGE naming it; too large: SD_ETOOBIG). */
sd_chain *sd_chain_generate(const sd_gen_params *gp, sd_error *err);

/* --- generated chains step by step ------------------------------------------
 *
 * The generators draw their rows in step order from one MT19937 stream
 * (Dirichlet: for t = 1..T, for a = 0..V-1, p_t(.|a) then the fresh row of
 * q_t(.|a); numpy-mt19937: all draft steps, then all target steps, read by
 * a second copy of the stream advanced by 2·T·V² outputs).  A stream
 * produces step t's 2·V² probabilities after step t-1's, bit for bit those
 * of sd_chain_generate (validated and renormalised row by row as
 * sd_chain_validate does), so a model of any size can be used one step at a
 * time in O(V²) memory. */
typedef struct sd_gen_stream sd_gen_stream;

/* SD_OK if gp's generator parameters are valid (as sd_chain_generate
 * checks them), else SD_EUSAGE naming the bad one. */
int sd_gen_check(const sd_gen_params *gp, sd_error *err);

/* Starts the generator of gp at step 1 (parameters checked as by
 * sd_chain_generate: SD_EUSAGE naming the bad one; SD_ENOMEM).  Memory
 * O(V).  Free with sd_gen_stream_free. */
int sd_gen_stream_new(const sd_gen_params *gp, sd_gen_stream **out, sd_error *err);
void sd_gen_stream_free(sd_gen_stream *g);

/* x_0's law (uniform): V doubles into init. */
void sd_gen_stream_init(const sd_gen_stream *g, double *init);

/* The next step t (1..T, in order): p[a·V + b] = p_t(b|a) and
 * q[a·V + b] = q_t(b|a), V² doubles each (caller's).  *t (if not NULL)
 * receives t.  SD_EDATA when a row is not a distribution (tiny --alpha),
 * naming the step and row; SD_EUSAGE after step T. */
int sd_gen_stream_next(sd_gen_stream *g, double *p, double *q, size_t *t, sd_error *err);

/* Bytes of the stored chain sd_chain_generate would allocate (init, draft
 * and target: (V + 2·T·V²)·8), SIZE_MAX on overflow. */
size_t sd_gen_chain_bytes(size_t V, size_t T);

/* --rng numpy-mt19937 (sd_gen_numpy.c): the chain of Yin, Chen, Huang &
 * Wang 2024, App. F, as numpy's legacy generator draws it:
 *   np.random.seed(seed); draft = np.random.rand(T, V, V);
 *   target = np.random.rand(T, V, V); each row divided by its sum;
 *   init uniform.
 * np.random.seed(s) is MT19937 seeded by the reference init_genrand(s)
 * (GSL's gsl_rng_mt19937 seeding and stream, except that GSL replaces
 * s = 0 by 4357: seed 0 is refused, SD_EUSAGE); np.random.rand builds each
 * double from two 32-bit outputs a, b as ((a >> 5) 2^26 + (b >> 6)) / 2^53.
 * alpha and mix do not apply (SD_EUSAGE unless at their defaults). */
sd_chain *sd_chain_generate_numpy(const sd_gen_params *gp, sd_error *err);
/* "dirichlet" -> SD_GEN_DIRICHLET, "numpy-mt19937" -> SD_GEN_NUMPY_MT19937,
 * else -1; sd_gen_rng_name is the inverse. */
int sd_gen_rng_parse(const char *name);
const char *sd_gen_rng_name(int rng);

/* A single-token problem as a chain: every draft row is p, every target
 * row q, init uniform, horizon T (tokens are then i.i.d. under each model,
 * as in the toy model of Sun et al. 2025, §2).  p and q must be
 * valid distributions (checked: SD_EDATA). */
sd_chain *sd_chain_from_pq(const double *p, const double *q, size_t V,
                           size_t T, sd_error *err);

/* The exact target joint law of (x_1..x_L): out[x_1*V^{L-1}+...+x_L],
 * V^L doubles, marginalising x_0 ~ init.  SD_ETOOBIG when V^L > max_cells. */
int sd_chain_target_joint(const sd_chain *c, size_t L, size_t max_cells,
                          double *out, sd_error *err);

#endif
