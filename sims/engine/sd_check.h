/* sd_check.h — is a verifier lossless?  (`simdec check`)
 *
 * Runs a verifier for N trials, tabulates the joint law of its first L
 * output tokens (x_1..x_L, V^L cells, index x_1 V^{L-1} + ... + x_L as in
 * sd_chain_target_joint) and compares it with the exact target joint by
 * Pearson's chi-square test (sd_chisq_test: sparse cells pooled, any
 * observation in a probability-0 cell gives p-value 0).  The verdict is
 * `unbiased` when p-value >= alpha.
 *
 * Trial i uses the stream (seed, i) exactly as `run` does, but stops as
 * soon as x_1..x_L are out: later iterations draw later numbers of the same
 * stream and cannot change x_1..x_L, so the table is the one a whole trial
 * would give, at a fraction of the cost when L << T.  The counts are
 * integers, so the result is bit-identical for any thread count.
 *
 * The table comes from the trial engine (sims/engine/sd_sim.h) with the stop rule
 * "after x_L": it runs what `run` runs, the verifier's kernel included
 * where one applies (res.kernel names it), so a bug in a kernel is caught
 * here (the control broken-token-kernel); opts.generic tabulates the
 * mechanistic step instead. */
#ifndef SD_CHECK_H
#define SD_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "sd_sim.h"
#include "sd_verifier.h"
#include "../../src/sd_stats.h"

#define SD_CHECK_MAX_CELLS SD_SIM_MAX_CELLS /* V^L limit: 8 MiB per table */
#define SD_CHECK_DEFAULT_TRIALS 200000u
#define SD_CHECK_DEFAULT_SEED 1u
#define SD_CHECK_DEFAULT_ALPHA 1e-3
#define SD_CHECK_MIN_EXPECTED 5.0            /* pooling threshold of the test */

typedef struct sd_check_opts {
    uint64_t seed;
    uint64_t trials;      /* >= 1 */
    size_t L;             /* tokens tabulated, 1..T; 0: sd_check_default_L */
    double alpha;         /* in (0,1) */
    double min_expected;  /* > 0: cells with a smaller expected count are pooled */
    unsigned threads;     /* 0: all available cores */
    size_t max_cells;     /* V^L limit; 0: SD_CHECK_MAX_CELLS */
    int generic;          /* 1: tabulate vt->step even where `run` uses a kernel */
    sd_progress_fn progress; /* called now and then from one thread; may be NULL */
    void *progress_ctx;
} sd_check_opts;

/* The defaults above, L = 0 (automatic), threads 0. */
void sd_check_defaults(sd_check_opts *o);

/* min(2, T), lowered while V^L > max_cells; 0 when even V > max_cells. */
size_t sd_check_default_L(const sd_chain *c, size_t max_cells);

typedef struct sd_check_result {
    uint64_t trials, seed;
    size_t V, L, cells;   /* cells = V^L */
    double alpha, min_expected;
    sd_chisq chi;         /* chi2, dof, p_value, max_abs_dev, zero_hits, cells_tested */
    int unbiased;         /* chi.p_value >= alpha */
    double *observed;     /* [cells]: trials whose x_1..x_L fell in the cell */
    double *expected;     /* [cells]: exact target probability of the cell */
    const char *kernel;   /* what produced the tokens: "generic" (vt->step) or
                             a kernel's name (sd_sim_result.kernel) */
} sd_check_result;

/* Runs the check.  SD_EUSAGE for a bad option (naming it), SD_ETOOBIG when
 * V^L exceeds the cell limit (refused before allocating), or the
 * verifier's own error.  On success *res owns observed/expected; release
 * with sd_check_result_free() (also safe after a failure). */
int sd_check_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 const sd_check_opts *opts, sd_check_result *res, sd_error *err);

/* The same test of sequences another program produced: f (named `name`)
 * in the format of src/sd_samples.h, one line per trial, tabulated over
 * its first L tokens (opts->L; 0: the default).  opts->trials and seed
 * are not read: res->trials is the number of lines, res->seed 0 and
 * res->kernel "samples".  SD_EDATA for a malformed file (line and column),
 * SD_EIO when it cannot be read, and the refusals of sd_check_run. */
int sd_check_samples(const sd_chain *c, FILE *f, const char *name, const sd_check_opts *opts,
                     sd_check_result *res, sd_error *err);

void sd_check_result_free(sd_check_result *res);

#endif
