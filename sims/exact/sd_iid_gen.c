/* sd_iid_gen.c — generation values on i.i.d. rows from the law of τ
 * (sd_iid_gen.h). */
#include "sd_iid_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_accept_iid.h"
#include "../../src/sd_backoff.h"
#include "../engine/sd_params.h"
#include "../engine/sd_sim.h"
#include "sd_iid_pos.h"

/* The accepted-length table's entry for vt, or -1. */
static int S_rows_alg(const sd_verifier_type *vt)
{
    for (int a = 0; a < SD_ACCEPT_NALGO; a++)
        if (strcmp(vt->name, sd_accept_algo_name((sd_accept_algo)a)) == 0)
            return a;
    return -1;
}

int sd_iid_law_eval(const sd_verifier_type *vt, const sd_params *par, const double *p, const double *q, size_t V,
                    uint64_t trials, uint64_t seed, size_t max_bytes, sd_iid_law *out, sd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t G = sd_params_decl(vt, "tree", NULL) ? par->tree_depth : par->gamma;
    if (!sd_params_decl(vt, "tree", NULL) && !sd_params_decl(vt, "gamma", NULL))
        return sd_error_set(err, SD_EUSAGE, "--algo %s reads neither gamma nor tree: no draft length", vt->name);
    if (G < 1)
        return sd_error_set(err, SD_EUSAGE, "--algo %s: give --gamma G >= 1 (its draft length)", vt->name);
    out->G = G;
    out->seed = seed;
    out->p_ = p, out->q_ = q, out->V_ = V, out->max_bytes_ = max_bytes;
    out->ccdf = malloc(G * sizeof *out->ccdf);
    if (!out->ccdf)
        return sd_error_set(err, SD_ENOMEM, "out of memory (draft length %zu)", G);
    int alg = S_rows_alg(vt), rc;
    if (alg >= 0) {
        sd_accept_iid r;
        double *cc = malloc(SD_ACCEPT_NALGO * G * sizeof *cc);
        rc = cc ? sd_accept_iid_eval(p, q, V, G, trials, seed, max_bytes, &r, cc, err)
                : sd_error_set(err, SD_ENOMEM, "out of memory (draft length %zu)", G);
        if (!rc) {
            memcpy(out->ccdf, cc + (size_t)alg * G, G * sizeof *cc);
            out->exact = r.exact[alg];
            out->trials = r.exact[alg] ? 0 : trials;
            out->how = r.exact[alg] ? "the law of tau from the sorted ratios q/p (exact)"
                                    : "P(tau >= l) exact for l <= 2, Rao-Blackwellised Monte-Carlo beyond";
        }
        free(cc);
        out->src_ = 0;
        out->alg_ = alg;
    } else if ((rc = sd_iid_pos_verifier(vt, par, p, q, V, G, max_bytes, out->ccdf, err)) == SD_OK) {
        out->exact = 1;
        out->src_ = 2;
        out->how = "the law of tau from the verifier's per-position law, a forward pass over its internal state "
                   "(exact)";
    } else if (rc != SD_EUSAGE && rc != SD_ETOOBIG) {
        ;
    } else {
        if (rc == SD_ETOOBIG || vt->iid_pos_law) { /* say why the exact law was not used */
            snprintf(out->how_, sizeof out->how_, "Monte-Carlo of the first iteration by the verifier's kernel for "
                     "sparse rows (not exact: %.300s)", err->msg);
            out->how = out->how_;
        } else {
            out->how = "Monte-Carlo of the first iteration by the verifier's kernel for sparse rows";
        }
        sd_backoff *bm = NULL;
        rc = sd_backoff_iid(p, q, V, G + 1, max_bytes, &bm, err);
        sd_sim_result res;
        if (!rc) {
            sd_model m = sd_model_of_backoff(bm, bm->V, bm->T);
            sd_sim_job job = {vt, &m, par};
            sd_sim_opts so = {.seed = seed, .trials = trials, .stop = {.first_iteration = 1}};
            rc = sd_sim_run_job(&job, &so, &res, err);
        }
        if (!rc) {
            out->pmf_ = calloc(G + 1, sizeof *out->pmf_);
            if (!out->pmf_) {
                rc = sd_error_set(err, SD_ENOMEM, "out of memory (draft length %zu)", G);
            } else {
                double n = 0.0;
                for (size_t j = 0; j <= G; j++)
                    n += res.accept_hist[j];
                for (size_t j = 0; j <= G; j++)
                    out->pmf_[j] = res.accept_hist[j] / n;
                double s = 0.0;
                for (size_t l = G; l >= 1; l--) {
                    s += out->pmf_[l];
                    out->ccdf[l - 1] = s;
                }
                out->trials = res.trials;
            }
            sd_sim_result_free(&res);
        }
        sd_backoff_free(bm);
        out->src_ = 1;
        out->exact = 0;
    }
    out->method = out->exact ? "exact" : "monte-carlo";
    if (rc)
        sd_iid_law_free(out);
    return rc;
}

void sd_iid_law_free(sd_iid_law *law)
{
    free(law->ccdf);
    free(law->pmf_);
    law->ccdf = law->pmf_ = NULL;
}

int sd_iid_law_stderr(const sd_iid_law *law, const double *grad, double *se, sd_error *err)
{
    *se = 0.0;
    if (law->exact)
        return SD_OK;
    size_t G = law->G;
    if (law->src_ == 1) {
        /* τ multinomial over 0..G: f's derivative in P(τ = j) is d_j = Σ_{l<=j} grad[l-1]
         * (P(τ >= l) = Σ_{j>=l} P(τ = j)); var = (Σ P_j d_j² - (Σ P_j d_j)²)/n */
        double d = 0.0, m1 = 0.0, m2 = 0.0;
        for (size_t j = 0; j <= G; j++) {
            if (j >= 1)
                d += grad[j - 1];
            m1 += law->pmf_[j] * d;
            m2 += law->pmf_[j] * d * d;
        }
        double v = m2 - m1 * m1;
        *se = v > 0.0 && law->trials > 1 ? sqrt(v / (double)(law->trials - 1)) : 0.0;
        return SD_OK;
    }
    /* the Rao-Blackwellised terms again, on the same trials, weighted */
    sd_accept_iid r;
    int rc = sd_accept_iid_eval_weighted(law->p_, law->q_, law->V_, G, law->trials, law->seed, law->max_bytes_, grad,
                                         &r, NULL, err);
    if (!rc)
        *se = r.stderr_[law->alg_];
    return rc;
}

int sd_iid_gen_values(const sd_iid_law *law, size_t T, size_t max_bytes, double *calls, double *calls_se,
                      double *rej, double *rej_se, sd_error *err)
{
    double *g = malloc(2 * law->G * sizeof *g);
    if (!g)
        return sd_error_set(err, SD_ENOMEM, "out of memory (draft length %zu)", law->G);
    int rc = sd_accept_iid_renewal(law->ccdf, law->G, T, max_bytes, calls, rej, g, g + law->G, err);
    if (!rc)
        rc = sd_iid_law_stderr(law, g, calls_se, err);
    if (!rc)
        rc = sd_iid_law_stderr(law, g + law->G, rej_se, err);
    free(g);
    return rc;
}

int sd_iid_gen_rate(const sd_iid_law *law, double *rate, double *rate_se, sd_error *err)
{
    double m = 0.0;
    for (size_t l = 0; l < law->G; l++)
        m += law->ccdf[l];
    *rate = 1.0 / (m + 1.0);
    double *g = malloc(law->G * sizeof *g);
    if (!g)
        return sd_error_set(err, SD_ENOMEM, "out of memory (draft length %zu)", law->G);
    for (size_t l = 0; l < law->G; l++)
        g[l] = -*rate * *rate; /* ∂/∂c_l of 1/(Σ c + 1) */
    int rc = sd_iid_law_stderr(law, g, rate_se, err);
    free(g);
    return rc;
}
