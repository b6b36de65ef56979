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

/* Called from the driver's master thread now and then; may be NULL. */
typedef void (*sd_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct sd_sim_opts {
    uint64_t seed;
    uint64_t trials;         /* >= 1 */
    unsigned threads;        /* 0: all available cores */
    int want_positions;      /* 1: fill pos_counts (needs T*V small) */
    sd_progress_fn progress;
    void *progress_ctx;
} sd_sim_opts;

typedef struct sd_sim_result {
    uint64_t trials, seed;
    size_t V, T;
    sd_welford rejections;   /* over trials */
    sd_welford target_calls; /* over trials */
    sd_welford accepted;     /* over iterations: draft tokens accepted */
    double *accept_hist;     /* [T+1]: iterations accepting exactly j tokens */
    double *pos_counts;      /* [T][V] (or NULL): trials with x_n = b */
    double iterations;       /* total iterations */
} sd_sim_result;

/* Runs opts->trials trials.  On success *res owns accept_hist and
 * pos_counts; release with sd_sim_result_free().  Refuses (SD_ETOOBIG)
 * want_positions when T*V > 2^24. */
int sd_sim_run(const sd_verifier_type *vt, const sd_chain *c,
               const sd_params *par, const sd_sim_opts *opts,
               sd_sim_result *res, sd_error *err);

void sd_sim_result_free(sd_sim_result *res);

/* Per-token bias measured from pos_counts: max over n of
 * TV(empirical law of x_n, exact target marginal Q_n).  Without bias this
 * is sampling noise of order sqrt(V/trials). */
double sd_sim_position_tv(const sd_sim_result *res, const sd_chain *c);

#endif
