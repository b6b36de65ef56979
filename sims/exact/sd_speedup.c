/* sd_speedup.c — the speed-up model (sd_speedup.h). */
#include "sd_speedup.h"
#include "sd_exact_gen.h"

#include <math.h>

#include "../engine/sd_params.h"
#include "../engine/sd_sim.h"

size_t sd_speedup_draft_length(const sd_verifier_type *vt, const sd_params *par)
{
    if (sd_params_decl(vt, "gamma", NULL))
        return par->gamma;
    return sd_params_decl(vt, "tree", NULL) ? par->tree_depth : 0;
}

double sd_speedup_draft_tokens(const sd_verifier_type *vt, const sd_params *par)
{
    if (!sd_params_decl(vt, "gamma", NULL) && sd_params_decl(vt, "tree", NULL))
        return (double)sd_params_tree_nodes(par); /* every node of the tree is drafted */
    double d = 1.0;
    for (size_t i = 0; vt->params && vt->params[i].name; i++)
        if (vt->params[i].slot == SD_SLOT_K)
            d = (double)par->k;
    return d * (double)par->gamma;
}

double sd_speedup(double T, double calls, double c, double draft_tokens)
{
    return T / (calls * (1.0 + c * draft_tokens));
}

double sd_speedup_iid_rate_token(double alpha, size_t gamma)
{
    double g = (double)gamma;
    if (alpha >= 1.0)
        return 1.0 / (g + 1.0);
    return (1.0 - alpha) / (1.0 - pow(alpha, g + 1.0));
}

double sd_speedup_leviathan(double alpha, size_t gamma, double c)
{
    double g = (double)gamma;
    if (alpha >= 1.0)
        return (g + 1.0) / (g * c + 1.0);
    return (1.0 - pow(alpha, g + 1.0)) / ((1.0 - alpha) * (g * c + 1.0));
}

int sd_speedup_iid_rate(const sd_verifier_type *vt, const sd_params *par, const double *p,
                        const double *q, size_t V, double *rate, sd_error *err)
{
    size_t G = sd_speedup_draft_length(vt, par);
    if (!vt->iteration_law || G < 1)
        return sd_error_set(err, SD_EUSAGE, "--algo %s: the i.i.d. limit needs the exact law of an iteration "
                            "of a given draft length", vt->name);
    /* One iteration with its full draft and the bonus token: T = G + 1. */
    sd_chain *c = sd_chain_from_pq(p, q, V, G + 1, err);
    if (!c)
        return err ? (int)err->code : SD_ENOMEM;
    sd_iter_law law = {0};
    int rc = vt->iteration_law(c, par, 1, 0, &law, err);
    double tokens = 0.0, calls = 0.0;
    for (size_t i = 0; !rc && i < law.n; i++) {
        tokens += law.o[i].prob * (double)law.o[i].emitted;
        calls += law.o[i].prob * (double)law.o[i].target_calls;
    }
    if (!rc)
        *rate = calls / tokens;
    sd_iter_law_free(&law);
    sd_chain_free(c);
    return rc;
}

int sd_speedup_calls(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                     uint64_t trials, uint64_t seed, double *calls, double *lo, double *hi, int *exact,
                     sd_error *err)
{
    sd_exact_values ex = {NAN, NAN, NULL};
    if (sd_verifier_exact(vt, m, par, &ex, NULL) == SD_OK && isfinite(ex.target_calls)) {
        *calls = *lo = *hi = ex.target_calls;
        *exact = 1;
        return SD_OK;
    }
    sd_sim_opts so = {.seed = seed, .trials = trials};
    sd_sim_job job = {vt, m, par};
    sd_sim_result res;
    int rc = sd_sim_run_job(&job, &so, &res, err);
    if (!rc) {
        *calls = res.target_calls.mean;
        sd_welford_ci95(&res.target_calls, lo, hi);
        *exact = 0;
    }
    sd_sim_result_free(&res);
    return rc;
}
