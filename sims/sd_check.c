/* sd_check.c — the unbiasedness check (sd_check.h). */
#include "sd_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sd_sim.h"
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

/* Trial `trial` of sd_sim_trial(), stopped once x_1..x_L are out; returns
 * the cell of x_1..x_L.  tokens has capacity T+1. */
static int S_trial_cell(const sd_verifier_type *vt, void *state, const sd_chain *c,
                        const sd_params *par, uint64_t seed, uint64_t trial, size_t L,
                        size_t *tokens, size_t *cell, sd_error *err)
{
    sd_stream rng;
    sd_stream_init(&rng, seed, trial);
    tokens[0] = sd_dist_sample(c->init, c->V, 1.0, sd_stream_uniform(&rng));
    if (vt->begin)
        vt->begin(state);
    for (size_t n = 1; n <= L;) {
        sd_iter it = {0, 0, 0, 1};
        int rc = vt->step(state, c, par, &rng, n, tokens[n - 1], tokens + n, &it, err);
        if (rc)
            return rc;
        if (it.emitted < 1 || it.emitted > c->T - n + 1 || it.accepted > it.emitted)
            return sd_error_set(err, SD_EINTERNAL,
                                "verifier %s emitted %zu tokens (accepted %zu) at position %zu of %zu",
                                vt->name, it.emitted, it.accepted, n, c->T);
        n += it.emitted;
    }
    size_t k = 0;
    for (size_t i = 1; i <= L; i++)
        k = k * c->V + tokens[i];
    *cell = k;
    return SD_OK;
}

int sd_check_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 const sd_check_opts *opts, sd_check_result *res, sd_error *err)
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
    uint64_t nblocks = (opts->trials + SD_SIM_BLOCK - 1) / SD_SIM_BLOCK;
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

    int threads = 1;
#ifdef _OPENMP
    threads = opts->threads ? (int)opts->threads : omp_get_num_procs();
    if ((uint64_t)threads > nblocks)
        threads = (int)nblocks;
#endif
    volatile int failed = 0;
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
        sd_check_result_free(res);
        if (err)
            *err = first_err;
        return first_err.code ? (int)first_err.code : SD_EINTERNAL;
    }
    res->trials = opts->trials;
    res->seed = opts->seed;
    res->V = c->V;
    res->L = L;
    res->cells = cells;
    res->alpha = opts->alpha;
    res->min_expected = opts->min_expected;
    sd_chisq_test(res->observed, res->expected, cells, opts->min_expected, &res->chi);
    res->unbiased = res->chi.p_value >= opts->alpha;
    return SD_OK;
}

void sd_check_result_free(sd_check_result *res)
{
    free(res->observed);
    free(res->expected);
    res->observed = NULL;
    res->expected = NULL;
}
