/* sd_sim.h — the trial engine: the one loop over (seed, trial) that every
 * consumer drives (run, check, lp --compare, the figures, simdec-mpi, make
 * bench).
 *
 * A trial generates x_0 ~ init (or starts from a given x_0) and then
 * x_1..x_T by repeated iterations of one verifier, drawing every random
 * number from the stream of (seed, trial) (src/sd_rng.h), until its stop
 * rule (the horizon, token x_L, or the first iteration).  Trials run in
 * blocks of SD_SIM_BLOCK over OpenMP threads and feed observers
 * (sd_observe, sims/engine/sd_verifier.h): Welford statistics per block, merged in
 * block order, and integer-valued counts (histogram, positions, the cells
 * of check's table), so a result is bit-identical for any number of threads.
 *
 * Where the verifier has a fast kernel that applies to the model and can
 * feed the observers asked for, the engine runs the kernel instead of the
 * generic loop over step(); result.kernel names what ran, and `check`
 * therefore tests exactly what `run` executes. */
#ifndef SD_SIM_H
#define SD_SIM_H

#include <stdint.h>

#include "../../src/sd_model.h"
#include "../../src/sd_stats.h"
#include "sd_verifier.h"

#define SD_SIM_BLOCK 4096
/* Runs keep one record of statistics per block (96 bytes); more blocks
 * than this (2^35 ≈ 3.4e10 trials, 800 MB of records) are refused with
 * SD_ETOOBIG before anything is allocated. */
#define SD_SIM_MAX_BLOCKS ((uint64_t)1 << 23)

/* A trial's stop rule and start. */
typedef struct sd_sim_stop {
    size_t L;            /* stop after the iteration that emits x_L; 0: the horizon */
    int first_iteration; /* stop after the first iteration */
    int fixed_prev;      /* 1: x_0 = prev without drawing it (no uniform is used) */
    size_t prev;
} sd_sim_stop;

/* Runs one trial of the generic loop.  tokens (capacity T+1) receives
 * x_0..x_T (as far as the trial ran).  When hist is not NULL, hist[j] += 1
 * for each iteration that accepted j draft tokens (capacity T+1), and *acc
 * (if not NULL) gets every iteration's accepted count.  stop may be NULL
 * (the whole horizon from x_0 ~ init).  state must come from vt->alloc for
 * this chain. */
int sd_sim_trial_stop(const sd_verifier_type *vt, void *state, const sd_chain *c,
                      const sd_params *par, uint64_t seed, uint64_t trial, const sd_sim_stop *stop,
                      size_t *tokens, sd_trial *out, double *hist, sd_welford *acc, sd_error *err);

/* The whole horizon, and the trial stopped after x_L (1 <= L <= T):
 * tokens[0..L] are those the whole trial gives (later iterations draw later
 * numbers of the stream). */
int sd_sim_trial(const sd_verifier_type *vt, void *state, const sd_chain *c,
                 const sd_params *par, uint64_t seed, uint64_t trial,
                 size_t *tokens, sd_trial *out, double *hist,
                 sd_welford *acc, sd_error *err);
int sd_sim_trial_until(const sd_verifier_type *vt, void *state, const sd_chain *c,
                       const sd_params *par, uint64_t seed, uint64_t trial, size_t L,
                       size_t *tokens, sd_trial *out, double *hist,
                       sd_welford *acc, sd_error *err);

/* Called from the engine's master thread now and then; may be NULL. */
typedef void (*sd_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct sd_sim_opts {
    uint64_t seed;
    uint64_t trials;         /* >= 1 */
    unsigned threads;        /* 0: all available cores */
    sd_sim_stop stop;        /* the trials' stop rule and start (zero: the horizon) */
    int want_positions;      /* 1: fill pos_counts (needs T*V <= 2^24; horizon runs) */
    int want_cells;          /* 1: fill cells, the joint law of x_1..x_L (stop.L > 0) */
    int want_per_trial;      /* 1: fill per_trial (one record per trial) */
    size_t want_tokens;      /* k >= 1: fill tokens with x_1..x_k of every trial
                                (k <= stop.L, or <= T for horizon runs; trials·k
                                <= SD_SIM_MAX_TOKENS); 0: off */
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
    int generic;             /* 1: never use a kernel (tests) */
    size_t kernel_max_bytes; /* memory bound of a kernel's tables; 0: its default */
    int want_rb;             /* 1: fill rejections_rb (sd_iter.rb_rejected) */
    /* 1: where the verifier has an output-first law (sims/engine/sd_paired.h), run
     * that path: every such verifier then outputs the same tokens in trial
     * i and draws its rejections from the same uniform given them, so runs
     * of different verifiers pair; their rejections_rb is E[N_rej | output].
     * Others run as usual. */
    int coupled;
    /* Called once by sd_sim_run_job before the first trial when the kernel
     * that runs holds copies of what it reads (SD_KERNEL_COPIES): the run
     * reads the model's stored rows no more, so the caller may free them
     * (and must then not let the job's model view be read again).  NULL:
     * not called. */
    void (*kernel_ready)(void *ctx);
    void *kernel_ready_ctx;
} sd_sim_opts;

/* sd_sim_result.kernel: a kernel's name (sd_kernel_type.name), "generic",
 * or SD_SIM_KERNEL_TOO_BIG when a kernel's tables would exceed the bound. */
#define SD_SIM_KERNEL_TOKEN "token-alias"
#define SD_SIM_KERNEL_TOO_BIG "generic (kernel tables over the memory limit)"

typedef struct sd_sim_result {
    uint64_t trials, seed;
    size_t V, T;
    sd_welford rejections;   /* over trials */
    sd_welford target_calls; /* over trials */
    sd_welford accepted;     /* over iterations: draft tokens accepted */
    double *accept_hist;     /* [T+1]: iterations accepting exactly j tokens */
    double *pos_counts;      /* [T][V] (or NULL): trials with x_n = b */
    double *cells;           /* [V^L] (or NULL): trials with x_1..x_L in the cell */
    size_t ncells;
    sd_trial *per_trial;     /* [trials] (or NULL) */
    uint32_t *tokens;        /* [trials][want_tokens] (or NULL): x_1..x_k of trial i
                                at tokens[i·k .. i·k+k-1] (rows up to .trials count) */
    size_t tokens_per_trial; /* k = opts->want_tokens */
    double iterations;       /* total iterations */
    uint64_t trials_requested; /* opts->trials; trials < it after an early stop */
    int stop;                /* why the run ended: sd_sim_stop_why */
    double seconds;          /* wall time of the simulation */
    const char *kernel;      /* what ran (see above) */
    /* The Rao-Blackwellised estimate of rejections (opts->want_rb): over
     * trials, Σ of the iterations' sd_iter.rb_rejected; same expectation
     * as `rejections`.  n = 0 or a NaN mean: the verifier (or the kernel
     * that ran) gives none (sd_sim_has_rb). */
    sd_welford rejections_rb;
    double setup_seconds;    /* wall time of choosing and building the kernel's tables */
} sd_sim_result;

/* 1 if res holds a Rao-Blackwellised estimate of rejections. */
int sd_sim_has_rb(const sd_sim_result *res);

typedef enum {
    SD_SIM_STOP_DONE = 0,    /* every requested trial ran */
    SD_SIM_STOP_TIME = 1,    /* time_limit reached */
    SD_SIM_STOP_STDERR = 2   /* target_stderr reached */
} sd_sim_stop_why;

/* What to simulate: a verifier with its parameters on a model. */
typedef struct sd_sim_job {
    const sd_verifier_type *vt;
    const sd_model *model;
    const sd_params *par;
} sd_sim_job;

/* Runs opts->trials trials.  On success *res owns its arrays; release with
 * sd_sim_result_free() (also safe after a failure).  Refuses (SD_ETOOBIG)
 * want_positions when T*V > 2^24, want_cells beyond SD_SIM_MAX_CELLS and
 * want_tokens beyond SD_SIM_MAX_TOKENS, before allocating; SD_EUSAGE when the verifier cannot run on the model
 * (a Zipf model and no kernel of the verifier for it). */
int sd_sim_run_job(const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                   sd_error *err);

/* sd_sim_run_job on a stored chain. */
int sd_sim_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
               const sd_sim_opts *opts, sd_sim_result *res, sd_error *err);

void sd_sim_result_free(sd_sim_result *res);

#define SD_SIM_MAX_CELLS ((size_t)1 << 20) /* V^L limit of want_cells: 8 MiB */
/* trials·k limit of want_tokens (4-byte tokens: 256 MiB). */
#define SD_SIM_MAX_TOKENS ((uint64_t)1 << 26)

/* V^L, or 0 when it exceeds max. */
size_t sd_sim_cells(size_t V, size_t L, size_t max);

/* --- runs split over processes (MPI, mpi/simdec_mpi.c) ------------------
 *
 * A run of `trials` trials is the sequence of blocks 0..nblocks-1, block b
 * holding trials b·SD_SIM_BLOCK .. min((b+1)·SD_SIM_BLOCK, trials)-1.  Any
 * set of processes may compute disjoint block ranges; merging the per-block
 * statistics in block order and adding the integer-valued counts (exact in
 * any order below 2^53) gives the bits of sd_sim_run_job. */

/* One block's statistics. */
typedef struct sd_sim_block {
    sd_welford rej, calls, acc, rb;
} sd_sim_block;
#define SD_SIM_BLOCK_DOUBLES 12  /* sizeof(sd_sim_block) / sizeof(double) */

uint64_t sd_sim_block_count(uint64_t trials);

/* Worker threads for nblocks blocks: `requested` (0: all cores), at most
 * one per block, at least 1 (1 without OpenMP). */
int sd_sim_threads(unsigned requested, uint64_t nblocks);

/* Runs blocks [lo, hi) of the run (opts->seed, opts->trials; early
 * stopping ignored) and writes blocks[b - lo].  Adds accepted counts to
 * hist (T+1) and, when opts->want_positions, trials with x_n = b to pos
 * (T·V).  *kernel (when not NULL) names what ran, as sd_sim_result.kernel.
 * SD_EUSAGE on a bad range. */
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
