/* sd_fig_util.c — the helpers the figure files share (sd_fig_util.h): the
 * layout of a data file and its estimates, and the Monte-Carlo runs, every
 * one of which is one sd_sim_run of the trial engine (sims/engine/sd_sim.h). */
#include "sd_fig_util.h"

#include <errno.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"

/* ---- estimates and the layout of a data file ----------------------------- */

sd_fig_est sd_fig_est_normal(double mean, double se)
{
    double z = gsl_cdf_ugaussian_Pinv(0.975); /* as sd_welford_ci95 */
    sd_fig_est e = {mean, se, mean - z * se, mean + z * se};
    return e;
}

sd_fig_est sd_fig_est_welford(const sd_welford *w)
{
    sd_fig_est e = {w->mean, sd_welford_stderr(w), 0, 0};
    sd_welford_ci95(w, &e.lo, &e.hi);
    return e;
}

sd_fig_est sd_fig_est_flip(double a, sd_fig_est e)
{
    sd_fig_est r = {a - e.mean, e.se, a - e.hi, a - e.lo};
    return r;
}

void sd_fig_put_est(FILE *f, sd_fig_est e)
{
    fprintf(f, " %.10g %.10g %.10g", e.mean, e.lo, e.hi);
}

void sd_fig_head(FILE *f, const char *name, const char *what)
{
    fprintf(f, "# simdec plot %s\n# %s\n", name, what);
}

void sd_fig_block(FILE *f, const char *name, const char *columns)
{
    fprintf(f, "\n\n# [%s]\n# columns: %s\n", name, columns);
}

void sd_fig_vec(FILE *f, const char *label, const double *x, size_t V)
{
    fprintf(f, "# %s =", label);
    for (size_t i = 0; i < V; i++)
        fprintf(f, " %.10g", x[i]);
    fputc('\n', f);
}

int sd_fig_done(FILE *f, int rc, sd_error *err)
{
    if (rc)
        return rc;
    if (fflush(f) != 0 || ferror(f))
        return sd_error_set(err, SD_EOUTPUT, "cannot write the figure data: %s", strerror(errno));
    return SD_OK;
}

uint64_t sd_fig_trials(const sd_figure_opts *o, uint64_t n)
{
    if (!o->quick)
        return n;
    n /= 10;
    return n < 100 ? 100 : n;
}

const sd_verifier_type *sd_fig_verifier(const char *name, sd_error *err)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    if (!vt)
        sd_error_set(err, SD_EINTERNAL, "figure needs verifier %s, which is not registered", name);
    return vt;
}

void sd_fig_ber(double x, double *out)
{
    out[0] = 1.0 - x;
    out[1] = x;
}

/* ---- Monte-Carlo, through the trial engine -------------------------------- */

int sd_fig_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
               uint64_t seed, uint64_t trials, const sd_sim_stop *stop, unsigned want,
               sd_sim_result *res, sd_error *err)
{
    sd_sim_opts so;
    memset(&so, 0, sizeof so);
    so.seed = seed;
    so.trials = trials;
    so.threads = 0;
    if (stop)
        so.stop = *stop;
    so.want_positions = (want & SD_FIG_WANT_POSITIONS) != 0;
    so.want_per_trial = (want & SD_FIG_WANT_PER_TRIAL) != 0;
    return sd_sim_run(vt, c, par, &so, res, err);
}

int sd_fig_first_iteration(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           size_t prev, uint64_t seed, uint64_t trials, int per_trial,
                           sd_sim_result *res, sd_error *err)
{
    sd_sim_stop stop = {.first_iteration = 1, .fixed_prev = 1, .prev = prev};
    return sd_fig_run(vt, c, par, seed, trials, &stop, per_trial ? SD_FIG_WANT_PER_TRIAL : 0, res,
                      err);
}

int sd_fig_rej_mc(const char *algo, const sd_chain *c, const sd_params *par, uint64_t seed,
                  uint64_t trials, sd_fig_est *out, sd_error *err)
{
    const sd_verifier_type *vt = sd_fig_verifier(algo, err);
    if (!vt)
        return SD_EINTERNAL;
    sd_sim_result res;
    int rc = sd_fig_run(vt, c, par, seed, trials, NULL, 0, &res, err);
    if (rc)
        return rc;
    *out = sd_fig_est_welford(&res.rejections);
    sd_sim_result_free(&res);
    return SD_OK;
}

int sd_fig_rej_single(const char *algo, const double *p, const double *q, size_t V,
                      const sd_params *par, uint64_t seed, uint64_t trials, sd_fig_est *out,
                      sd_error *err)
{
    sd_chain *c = sd_chain_from_pq(p, q, V, 1, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    int rc = sd_fig_rej_mc(algo, c, par, seed, trials, out, err);
    sd_chain_free(c);
    return rc;
}

int sd_fig_accept_mc(const char *algo, const double *p, const double *q, size_t V, size_t k,
                     uint64_t seed, uint64_t trials, sd_fig_est *out, sd_error *err)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = k;
    sd_fig_est e;
    int rc = sd_fig_rej_single(algo, p, q, V, &par, seed, trials, &e, err);
    if (!rc)
        *out = sd_fig_est_flip(1.0, e);
    return rc;
}
