/* sd_check.c — the unbiasedness check (sd_check.h). */
#include "sd_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sd_sim.h"
#include "sd_token.h"
#include "../src/sd_dist.h"

void sd_check_defaults(sd_check_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = SD_CHECK_DEFAULT_SEED;
    o->trials = SD_CHECK_DEFAULT_TRIALS;
    o->L = 0;
    o->alpha = SD_CHECK_DEFAULT_ALPHA;
    o->min_expected = SD_CHECK_MIN_EXPECTED;
    o->threads = 0;
    o->max_cells = SD_CHECK_MAX_CELLS;
}

/* V^L, or 0 when it exceeds max_cells. */
static size_t S_cells(size_t V, size_t L, size_t max_cells)
{
    size_t cells = 1;
    for (size_t i = 0; i < L; i++) {
        if (cells > max_cells / V)
            return 0;
        cells *= V;
    }
    return cells;
}

size_t sd_check_default_L(const sd_chain *c, size_t max_cells)
{
    size_t L = c->T < 2 ? c->T : 2;
    while (L > 0 && S_cells(c->V, L, max_cells) == 0)
        L--;
    return L;
}

/* Trial `trial`, stopped once x_1..x_L are out (sd_sim_trial_until);
 * returns the cell of x_1..x_L.  tokens has capacity T+1. */
static int S_trial_cell(const sd_verifier_type *vt, void *state, const sd_chain *c,
                        const sd_params *par, uint64_t seed, uint64_t trial, size_t L,
                        size_t *tokens, size_t *cell, sd_error *err)
{
    sd_trial tr;
    int rc = sd_sim_trial_until(vt, state, c, par, seed, trial, L, tokens, &tr, NULL, NULL, err);
    if (rc)
        return rc;
    size_t k = 0;
    for (size_t i = 1; i <= L; i++)
        k = k * c->V + tokens[i];
    *cell = k;
    return SD_OK;
}

/* Validates the options, allocates *res and fills res->expected. */
static int S_prepare(const sd_chain *c, const sd_check_opts *opts, sd_check_result *res, size_t *Lp,
                     size_t *cellsp, sd_error *err)
{
    memset(res, 0, sizeof *res);
    size_t max_cells = opts->max_cells ? opts->max_cells : SD_CHECK_MAX_CELLS;
    size_t L = opts->L ? opts->L : sd_check_default_L(c, max_cells);
    if (opts->trials == 0)
        return sd_error_set(err, SD_EUSAGE, "--trials must be >= 1");
    if (!(opts->alpha > 0.0 && opts->alpha < 1.0))
        return sd_error_set(err, SD_EUSAGE, "--alpha %g: expected a number in (0, 1)", opts->alpha);
    if (!(opts->min_expected > 0.0 && isfinite(opts->min_expected)))
        return sd_error_set(err, SD_EUSAGE, "--min-expected %g: expected a number > 0",
                            opts->min_expected);
    if (L == 0)
        return sd_error_set(err, SD_ETOOBIG, "V = %zu cells for one token exceeds the limit %zu",
                            c->V, max_cells);
    if (L > c->T)
        return sd_error_set(err, SD_EUSAGE, "--L %zu: expected 1..%zu (the horizon)", L, c->T);
    size_t cells = S_cells(c->V, L, max_cells);
    if (cells == 0)
        return sd_error_set(err, SD_ETOOBIG,
                            "--L %zu: the joint law of %zu tokens has V^L = %zu^%zu cells; limit %zu",
                            L, L, c->V, L, max_cells);
    res->observed = calloc(cells, sizeof *res->observed);
    res->expected = malloc(cells * sizeof *res->expected);
    if (!res->observed || !res->expected) {
        sd_check_result_free(res);
        return sd_error_set(err, SD_ENOMEM, "out of memory for %zu cells", cells);
    }
    int rc = sd_chain_target_joint(c, L, max_cells, res->expected, err);
    if (rc) {
        sd_check_result_free(res);
        return rc;
    }
    *Lp = L;
    *cellsp = cells;
    return SD_OK;
}


/* Counts a finished block and, from thread 0, reports the trials done. */
static void S_block_done(const sd_check_opts *opts, uint64_t *done_blocks)
{
    uint64_t d;
#pragma omp atomic capture
    d = ++*done_blocks;
    if (!opts->progress)
        return;
#ifdef _OPENMP
    if (omp_get_thread_num() != 0)
        return;
#endif
    uint64_t t = d * SD_SIM_BLOCK;
    opts->progress(opts->progress_ctx, t < opts->trials ? t : opts->trials, opts->trials);
}

/* The table from vt->step (S_trial_cell), into res->observed. */
static int S_tabulate_generic(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                              const sd_check_opts *opts, size_t L, size_t cells, sd_check_result *res,
                              sd_error *err)
{
    uint64_t nblocks = (opts->trials + SD_SIM_BLOCK - 1) / SD_SIM_BLOCK;
    int threads = sd_sim_threads(opts->threads, nblocks);
    volatile int failed = 0;
    uint64_t done_blocks = 0;
    sd_error first_err;
    sd_error_clear(&first_err);
#pragma omp parallel num_threads(threads)
    {
        void *state = NULL;
        sd_error lerr;
        sd_error_clear(&lerr);
        size_t *tokens = malloc((c->T + 1) * sizeof *tokens);
        double *counts = calloc(cells, sizeof *counts);
        int lrc = (!tokens || !counts) ? sd_error_set(&lerr, SD_ENOMEM, "out of memory for %zu cells", cells)
                                       : vt->alloc(&state, c, par, &lerr);
        if (lrc) {
#pragma omp critical(sd_check_err)
            if (!failed) {
                failed = 1;
                first_err = lerr;
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nblocks; b++) {
            uint64_t lo = b * SD_SIM_BLOCK, hi = lo + SD_SIM_BLOCK;
            if (hi > opts->trials)
                hi = opts->trials;
            for (uint64_t t = lo; t < hi && !failed; t++) {
                size_t cell = 0;
                lrc = S_trial_cell(vt, state, c, par, opts->seed, t, L, tokens, &cell, &lerr);
                if (lrc) {
#pragma omp critical(sd_check_err)
                    if (!failed) {
                        failed = 1;
                        first_err = lerr;
                    }
                    break;
                }
                counts[cell] += 1.0;
            }
            S_block_done(opts, &done_blocks);
        }
        /* Integer-valued counts: their sums are exact in any order. */
        if (counts && !failed) {
#pragma omp critical(sd_check_merge)
            for (size_t i = 0; i < cells; i++)
                res->observed[i] += counts[i];
        }
        if (state && vt->free)
            vt->free(state);
        free(tokens);
        free(counts);
    }
    if (failed) {
        if (err)
            *err = first_err;
        return first_err.code ? (int)first_err.code : SD_EINTERNAL;
    }
    return SD_OK;
}

/* The table from the token kernel `plan` (positions 1..L of each trial),
 * into res->observed. */
static int S_tabulate_kernel(const sd_token_plan *plan, const sd_check_opts *opts, size_t L,
                             size_t cells, sd_check_result *res, sd_error *err)
{
    uint64_t nblocks = (opts->trials + SD_SIM_BLOCK - 1) / SD_SIM_BLOCK;
    int threads = sd_sim_threads(opts->threads, nblocks);
    volatile int failed = 0;
    uint64_t done_blocks = 0;
    sd_error first_err;
    sd_error_clear(&first_err);
#pragma omp parallel num_threads(threads)
    {
        sd_error lerr;
        sd_error_clear(&lerr);
        sd_token_work *work = NULL;
        double *counts = calloc(cells, sizeof *counts);
        int lrc = !counts ? sd_error_set(&lerr, SD_ENOMEM, "out of memory for %zu cells", cells)
                          : sd_token_work_new(plan, &work, &lerr);
        if (lrc) {
#pragma omp critical(sd_check_err)
            if (!failed) {
                failed = 1;
                first_err = lerr;
            }
        }
        sd_token_out out = {.L = L, .cells = counts};
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nblocks; b++) {
            uint64_t lo = b * SD_SIM_BLOCK, hi = lo + SD_SIM_BLOCK;
            if (hi > opts->trials)
                hi = opts->trials;
            if (!lrc)
                sd_token_plan_run(plan, work, opts->seed, lo, hi, &out);
            S_block_done(opts, &done_blocks);
        }
        if (counts && !failed) {
#pragma omp critical(sd_check_merge)
            for (size_t i = 0; i < cells; i++)
                res->observed[i] += counts[i];
        }
        sd_token_work_free(work);
        free(counts);
    }
    if (failed) {
        if (err)
            *err = first_err;
        return first_err.code ? (int)first_err.code : SD_EINTERNAL;
    }
    return SD_OK;
}

/* The verdict, once res->observed is filled. */
static void S_finish(const sd_chain *c, const sd_check_opts *opts, size_t L, size_t cells,
                     sd_check_result *res)
{
    res->trials = opts->trials;
    res->seed = opts->seed;
    res->V = c->V;
    res->L = L;
    res->cells = cells;
    res->alpha = opts->alpha;
    res->min_expected = opts->min_expected;
    sd_chisq_test(res->observed, res->expected, cells, opts->min_expected, &res->chi);
    res->unbiased = res->chi.p_value >= opts->alpha;
}

int sd_check_run_kernel(const sd_token_plan *plan, const sd_chain *c, const sd_check_opts *opts,
                        sd_check_result *res, sd_error *err)
{
    size_t L, cells;
    int rc = S_prepare(c, opts, res, &L, &cells, err);
    if (!rc)
        rc = S_tabulate_kernel(plan, opts, L, cells, res, err);
    if (rc) {
        sd_check_result_free(res);
        return rc;
    }
    res->kernel = SD_SIM_KERNEL_TOKEN;
    S_finish(c, opts, L, cells, res);
    return SD_OK;
}

int sd_check_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 const sd_check_opts *opts, sd_check_result *res, sd_error *err)
{
    size_t L, cells;
    int rc = S_prepare(c, opts, res, &L, &cells, err);
    if (rc)
        return rc;
    sd_token_plan *plan = NULL;
    /* As `run` does: the kernel for token-level SD on a stored chain, the
     * generic step when its tables do not fit. */
    if (vt == &sd_verifier_token && !opts->generic &&
        sd_token_plan_new(c, par, SD_TOKEN_EXACT, 0, opts->threads, &plan, NULL) == SD_OK) {
        rc = S_tabulate_kernel(plan, opts, L, cells, res, err);
        res->kernel = SD_SIM_KERNEL_TOKEN;
        sd_token_plan_free(plan);
    } else {
        rc = S_tabulate_generic(vt, c, par, opts, L, cells, res, err);
        res->kernel = "generic";
    }
    if (rc) {
        sd_check_result_free(res);
        return rc;
    }
    S_finish(c, opts, L, cells, res);
    return SD_OK;
}

void sd_check_result_free(sd_check_result *res)
{
    free(res->observed);
    free(res->expected);
    res->observed = NULL;
    res->expected = NULL;
}
