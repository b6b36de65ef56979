/* sd_check.c — the unbiasedness check (sd_check.h). */
#include "sd_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sd_sim.h"
#include "../../src/sd_dist.h"
#include "../../src/sd_samples.h"

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

size_t sd_check_default_L(const sd_chain *c, size_t max_cells)
{
    size_t L = c->T < 2 ? c->T : 2;
    while (L > 0 && sd_sim_cells(c->V, L, max_cells) == 0)
        L--;
    return L;
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
    size_t cells = sd_sim_cells(c->V, L, max_cells);
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

int sd_check_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 const sd_check_opts *opts, sd_check_result *res, sd_error *err)
{
    size_t L = 0, cells = 0;
    int rc = S_prepare(c, opts, res, &L, &cells, err);
    if (rc)
        return rc;
    /* What `run` executes (its kernel where one applies), stopped after x_L. */
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, par};
    sd_sim_opts so = {.seed = opts->seed,
                      .trials = opts->trials,
                      .threads = opts->threads,
                      .stop = {.L = L},
                      .want_cells = 1,
                      .progress = opts->progress,
                      .progress_ctx = opts->progress_ctx,
                      .generic = opts->generic};
    sd_sim_result sr;
    rc = sd_sim_run_job(&job, &so, &sr, err);
    if (rc) {
        sd_check_result_free(res);
        return rc;
    }
    memcpy(res->observed, sr.cells, cells * sizeof *res->observed);
    res->kernel = sr.kernel;
    sd_sim_result_free(&sr);
    S_finish(c, opts, L, cells, res);
    return SD_OK;
}

int sd_check_samples(const sd_chain *c, FILE *f, const char *name, const sd_check_opts *opts,
                     sd_check_result *res, sd_error *err)
{
    sd_check_opts o = *opts;
    o.trials = 1; /* the lines, once read */
    o.seed = 0;
    size_t L = 0, cells = 0;
    int rc = S_prepare(c, &o, res, &L, &cells, err);
    if (rc)
        return rc;
    rc = sd_samples_count(f, name, c->V, L, res->observed, &o.trials, err);
    if (rc) {
        sd_check_result_free(res);
        return rc;
    }
    res->kernel = "samples";
    S_finish(c, &o, L, cells, res);
    return SD_OK;
}

void sd_check_result_free(sd_check_result *res)
{
    free(res->observed);
    free(res->expected);
    res->observed = NULL;
    res->expected = NULL;
}
