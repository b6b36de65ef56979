/* sd_run.h — one point of `simdec run` as a library call: the trial
 * engine's estimates (sd_sim.h) beside everything a point reports with
 * them.
 *
 * For a verifier on a model, sd_run_point gives
 *   - the Monte-Carlo means with standard errors and 95% confidence
 *     intervals of the rejections, the target calls and the accepted draft
 *     tokens per iteration (sd_welford), and, where the verifier's kernel
 *     gives it, the Rao-Blackwellised estimate of the rejections (the sum
 *     over iterations of the probability of a rejection given what the
 *     iteration drew: same mean, smaller variance);
 *   - the exact values where the verifier has them (sd_verifier_exact:
 *     token-level SD by Theorem 1 of Yin et al. 2024, "A Theoretical
 *     Perspective for Speculative Decoding Algorithm", or the DP over the
 *     verifier's iteration law), or why they were refused (too large);
 *   - the token baseline: the exact target calls of token-level SD on the
 *     same model and draft length (the rest of the horizon for a verifier
 *     without one), the question asked first of any verifier;
 *   - a lossy verifier's per-token bias max_n TV(law of x_n, target's),
 *     exact where the laws of its tokens are computable (sd_bias_exact),
 *     else estimated from the run's per-position counts
 *     (sd_bias_estimate_counts).
 * sd_run_paired compares two points run on the same seed (common random
 * numbers, or the output-first coupling of sd_paired.h): the mean of the
 * per-trial differences d_i = b_i - a_i with its paired standard error
 * sd(d)/sqrt(n), beside sqrt(se_a^2 + se_b^2) that independent runs would
 * give; pairing removes the covariance the runs share,
 *   Var(mean(a - b)) = (Var a + Var b - 2 Cov(a, b)) / n.
 *
 * `simdec run` (every point of a sweep), simdec-mpi (through opts.sim) and
 * the Python package call this; the command line only parses and prints. */
#ifndef SD_RUN_H
#define SD_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/sd_error.h"
#include "sd_bias.h"
#include "sd_sim.h"

/* The simulation step: sd_sim_run_job's contract (simdec-mpi splits the
 * blocks over ranks and gathers them). */
typedef int (*sd_run_sim_fn)(void *ctx, const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                             sd_error *err);

/* estimator: the Rao-Blackwellised estimate of the rejections. */
enum { SD_RUN_RB_AUTO = -1, SD_RUN_PLAIN = 0, SD_RUN_RB = 1 };

typedef struct sd_run_opts {
    uint64_t trials;          /* >= 1 (the cap with target_stderr) */
    uint64_t seed;            /* trial i uses the stream (seed, i) */
    unsigned threads;         /* 0: all cores */
    double time_limit;        /* > 0: start no block after this many seconds (sd_sim_opts) */
    double target_stderr;     /* > 0: stop at the first whole block with stderr <= it */
    int estimator;            /* SD_RUN_RB_AUTO: rb where the kernel gives it; SD_RUN_PLAIN: none;
                                 SD_RUN_RB: rb or fail (SD_EUSAGE, result.no_rb = 1) */
    int paired;               /* 1: keep the per-trial records (sd_run_paired) and run
                                 output-first where the verifier can (sd_sim_opts.coupled) */
    size_t want_tokens;       /* k >= 1: keep x_1..x_k of every trial (sd_sim_opts) */
    size_t kernel_max_bytes;  /* bound of a kernel's tables (sd_run_kernel_budget); 0: its default */
    sd_progress_fn progress;  /* NULL: none */
    void *progress_ctx;
    /* Called when the kernel holds copies of the model's rows and nothing
     * after the run reads them (no bias to compute): the caller may free
     * the stored chain (sd_sim_opts.kernel_ready).  NULL: never. */
    void (*release_rows)(void *ctx);
    void *release_ctx;
    sd_run_sim_fn sim;        /* NULL: sd_sim_run_job */
    void *sim_ctx;
} sd_run_opts;

typedef struct sd_run_result {
    sd_sim_result sim;        /* the engine's estimates (rejections.n = 0 on an MPI rank
                                 that holds no merged result) */
    int rb;                   /* 1: sim.rejections_rb holds the Rao-Blackwellised estimate */
    int no_rb;                /* 1: estimator SD_RUN_RB was refused (the call failed) */
    sd_exact_values exact;    /* NaN where there are none */
    char exact_refused[SD_ERROR_MSG_MAX]; /* why they were refused (too large), or "" */
    const sd_verifier_type *baseline;     /* token-level SD (sd_verifier_baseline) */
    double baseline_calls;    /* its exact target calls (NaN: n/a) */
    double bias_exact;        /* max_n TV(law of x_n, target's) at n = bias_n (NaN: n/a) */
    size_t bias_n;
    sd_bias_estimate bias_est; /* the estimate when there is no exact bias (value NaN: n/a) */
    unsigned threads;         /* threads the engine used (per process) */
} sd_run_result;

/* Runs the point and fills *out (free with sd_run_result_free, also safe
 * after a failure).  The exact values come first on a stored chain (so
 * that release_rows may free it), after the run on a streamed one (from
 * the run's memo).  Errors: sd_sim_run_job's; SD_EUSAGE when
 * estimator is SD_RUN_RB and the kernel gives no Rao-Blackwellised
 * estimate (out->no_rb = 1).  A refused exact value or bias is no error:
 * it is NaN (exact_refused says why). */
int sd_run_point(const sd_model *m, const sd_verifier_type *vt, const sd_params *par, const sd_run_opts *opts,
                 sd_run_result *out, sd_error *err);
void sd_run_result_free(sd_run_result *r);

/* Exact values of vt (sd_verifier_exact); NaN where there are none, and
 * the reason in refused[SD_ERROR_MSG_MAX] (when given) where an evaluator
 * refused the size. */
void sd_run_exact(const sd_verifier_type *vt, const sd_model *m, const sd_params *par, sd_exact_values *ex,
                  char *refused);

/* 1 if a kernel of vt runs on a streamed chain (sd_kernel_all_type), so a
 * model too large to store may be streamed for it. */
int sd_run_streams(const sd_verifier_type *vt);

/* The bound of a kernel's tables: the memory budget less the stored chain
 * c (NULL: none) they are built beside; at least 1. */
size_t sd_run_kernel_budget(const sd_chain *c, size_t budget);

/* Tokens per target call T / mean(target calls), with the 95% CI of the
 * mean target calls mapped through x -> T/x (monotone, so the coverage is
 * that of the mean's CI) and the delta-method standard error T se / mean^2. */
void sd_run_tokens_per_call(const sd_sim_result *r, double *tpc, double *se, double *lo, double *hi);

/* The paired difference of point b minus point a (same trials, both run
 * with opts.paired): mean, paired stderr sd(d_i)/sqrt(n) with its 95% CI,
 * and the stderr sqrt(se_a^2 + se_b^2) two independent runs would give,
 * for the quantities SD_RUN_PAIRED_* — the plain counts and their
 * Rao-Blackwellised estimates (NaN entries when a point has none).
 * Returns SD_EUSAGE when the points cannot be paired (no per-trial
 * records, or different trial counts). */
enum { SD_RUN_PAIRED_REJ, SD_RUN_PAIRED_CALLS, SD_RUN_PAIRED_REJ_RB, SD_RUN_PAIRED_CALLS_RB, SD_RUN_PAIRED_N };
typedef struct sd_run_paired_stat {
    double diff, se, lo, hi, se_unpaired;
} sd_run_paired_stat;
int sd_run_paired(const sd_run_result *a, const sd_run_result *b, sd_run_paired_stat out[SD_RUN_PAIRED_N]);

/* How points a and b share randomness: "output-first" when both ran the
 * output-first path (sd_paired.h: the same output tokens and coins), else
 * "common-seed" (the same stream per trial, consumed differently). */
const char *sd_run_coupling(const sd_run_result *a, const sd_run_result *b);

#endif
