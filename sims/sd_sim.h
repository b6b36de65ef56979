/* sd_sim.h — the Monte-Carlo driver shared by every verifier.
 *
 * A trial generates x_0 ~ init and then x_1..x_T by repeated iterations of
 * one verifier, drawing every random number from the stream of
 * (seed, trial) (src/sd_rng.h).  Trials are grouped in blocks of
 * SD_SIM_BLOCK; each block keeps its own statistics and the blocks are
 * merged in block order, so the result is bit-identical for any number of
 * threads. */
#ifndef SD_SIM_H
#define SD_SIM_H

#include <stdint.h>

#include "../src/sd_stats.h"
#include "sd_verifier.h"

#define SD_SIM_BLOCK 4096
/* Runs keep one record of statistics per block (72 bytes); more blocks
 * than this (2^35 ≈ 3.4e10 trials, 600 MB of records) are refused with
 * SD_ETOOBIG before anything is allocated. */
#define SD_SIM_MAX_BLOCKS ((uint64_t)1 << 23)

/* Per-trial outcome. */
typedef struct sd_trial {
    size_t rejections;    /* N_rej: iterations that ended in a residual */
    size_t target_calls;  /* iterations' target calls */
    size_t iterations;
} sd_trial;

/* Runs one trial.  tokens (capacity T+1) receives x_0..x_T.  When hist is
 * not NULL, hist[j] += 1 for each iteration that accepted j draft tokens
 * (capacity T+1) and *acc (if not NULL) gets every iteration's accepted
 * count.  state must come from vt->alloc for this chain. */
int sd_sim_trial(const sd_verifier_type *vt, void *state, const sd_chain *c,
                 const sd_params *par, uint64_t seed, uint64_t trial,
                 size_t *tokens, sd_trial *out, double *hist,
                 sd_welford *acc, sd_error *err);

/* The same trial, stopped after the iteration that emits x_L (1 <= L <= T):
 * tokens[0..L] are those sd_sim_trial gives (later iterations draw later
 * numbers of the stream), and *out, hist, acc count the iterations run.
 * `check` tabulates x_1..x_L this way. */
int sd_sim_trial_until(const sd_verifier_type *vt, void *state, const sd_chain *c,
                       const sd_params *par, uint64_t seed, uint64_t trial, size_t L,
                       size_t *tokens, sd_trial *out, double *hist,
                       sd_welford *acc, sd_error *err);

/* Called from the driver's master thread now and then; may be NULL. */
typedef void (*sd_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct sd_sim_opts {
    uint64_t seed;
    uint64_t trials;         /* >= 1 */
    unsigned threads;        /* 0: all available cores */
    int want_positions;      /* 1: fill pos_counts (needs T*V small) */
    sd_progress_fn progress;
    void *progress_ctx;
    /* Early stopping (0 = off); the run always stops at whole blocks.
     * time_limit: no block is started after this many seconds of wall time;
     *   the blocks started are finished, so the trials done are always a
     *   prefix 0..k·SD_SIM_BLOCK-1 and the result is bit-identical to a run
     *   with --trials k·SD_SIM_BLOCK (k depends on the machine's speed).
     * target_stderr: stops at the shortest prefix of k whole blocks whose
     *   rejections have stderr <= target_stderr; k depends only on (seed,
     *   trials, the model), never on threads or speed: blocks finished
     *   beyond k are discarded. */
    double time_limit;
    double target_stderr;
    int generic;             /* 1: never use a specialised kernel (tests) */
    size_t kernel_max_bytes; /* memory bound of the token kernel's tables;
                                0: SD_TOKEN_PLAN_MAX_BYTES (sims/sd_token.h) */
} sd_sim_opts;

/* sd_sim_result.kernel: the lockstep alias-table kernel of sims/sd_token.h
 * (token-level SD on a stored chain), or the generic verifier because the
 * kernel's tables would exceed the memory bound. */
#define SD_SIM_KERNEL_TOKEN "token-alias"
#define SD_SIM_KERNEL_TOO_BIG "generic (token kernel tables over the memory limit)"

typedef struct sd_sim_result {
    uint64_t trials, seed;
    size_t V, T;
    sd_welford rejections;   /* over trials */
    sd_welford target_calls; /* over trials */
    sd_welford accepted;     /* over iterations: draft tokens accepted */
    double *accept_hist;     /* [T+1]: iterations accepting exactly j tokens */
    double *pos_counts;      /* [T][V] (or NULL): trials with x_n = b */
    double iterations;       /* total iterations */
    uint64_t trials_requested; /* opts->trials; trials < it after an early stop */
    int stop;                /* why the run ended: sd_sim_stop */
    double seconds;          /* wall time of the simulation */
    const char *kernel;      /* "generic", SD_SIM_KERNEL_TOKEN, SD_SIM_KERNEL_TOO_BIG,
                                "token-lazy" */
} sd_sim_result;

typedef enum {
    SD_SIM_STOP_DONE = 0,    /* every requested trial ran */
    SD_SIM_STOP_TIME = 1,    /* time_limit reached */
    SD_SIM_STOP_STDERR = 2   /* target_stderr reached */
} sd_sim_stop;

/* Runs opts->trials trials.  On success *res owns accept_hist and
 * pos_counts; release with sd_sim_result_free().  Refuses (SD_ETOOBIG)
 * want_positions when T*V > 2^24. */
int sd_sim_run(const sd_verifier_type *vt, const sd_chain *c,
               const sd_params *par, const sd_sim_opts *opts,
               sd_sim_result *res, sd_error *err);

void sd_sim_result_free(sd_sim_result *res);

/* --- runs split over processes (MPI, mpi/simdec_mpi.c) ------------------
 *
 * A run of `trials` trials is the sequence of blocks 0..nblocks-1, block b
 * holding trials b·SD_SIM_BLOCK .. min((b+1)·SD_SIM_BLOCK, trials)-1.  Any
 * set of processes may compute disjoint block ranges; merging the per-block
 * statistics in block order and adding the integer-valued counts (exact in
 * any order below 2^53) gives the bits of sd_sim_run. */
struct sd_lazy;

/* What to simulate: a verifier on a stored chain, or (vt = token) the
 * on-demand model `lazy` (src/sd_lazy.h), when lazy is not NULL. */
typedef struct sd_sim_job {
    const sd_verifier_type *vt;
    const sd_chain *chain;       /* NULL when lazy is set */
    const struct sd_lazy *lazy;  /* NULL for a stored chain */
    const sd_params *par;
} sd_sim_job;

/* One block's statistics. */
typedef struct sd_sim_block {
    sd_welford rej, calls, acc;
} sd_sim_block;
#define SD_SIM_BLOCK_DOUBLES 9   /* sizeof(sd_sim_block) / sizeof(double) */

uint64_t sd_sim_block_count(uint64_t trials);

/* Worker threads for nblocks blocks: `requested` (0: all cores), at most
 * one per block, at least 1 (1 without OpenMP). */
int sd_sim_threads(unsigned requested, uint64_t nblocks);

/* Like sd_sim_run for a job (sd_sim_run is this with a stored chain). */
int sd_sim_run_job(const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                   sd_error *err);

/* Runs blocks [lo, hi) of the run (opts->seed, opts->trials; early
 * stopping ignored) and writes blocks[b - lo].  Adds accepted counts to
 * hist (T+1) and, when opts->want_positions, trials with x_n = b to pos
 * (T·V).  *kernel (when not NULL) names the kernel that ran, as
 * sd_sim_result.kernel.  SD_EUSAGE on a bad range. */
int sd_sim_run_blocks(const sd_sim_job *job, const sd_sim_opts *opts, uint64_t lo, uint64_t hi,
                      sd_sim_block *blocks, double *hist, double *pos, const char **kernel,
                      sd_error *err);

/* Prepares *res for a run of opts (allocates accept_hist, and pos_counts
 * when opts->want_positions, zeroed) — the counts sd_sim_run_blocks adds
 * to — and records trials, seed, V, T. */
int sd_sim_result_alloc(const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                        sd_error *err);

/* Sets res's statistics from blocks[0..nblocks-1], merged in block order
 * (Chan et al.), and res->trials to the trials they hold. */
void sd_sim_result_merge(sd_sim_result *res, const sd_sim_block *blocks, uint64_t nblocks);

/* Per-token bias measured from pos_counts: max over n of
 * TV(empirical law of x_n, exact target marginal Q_n).  Without bias this
 * is sampling noise of order sqrt(V/trials). */
double sd_sim_position_tv(const sd_sim_result *res, const sd_chain *c);

#endif
