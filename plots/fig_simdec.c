/* fig_simdec.c — simdec's own three figures, beyond the papers':
 *   simdec-multidraft-vs-k  acceptance with k drafts at one position on
 *                           random pairs: OTM-k vs k-Seq vs recursive
 *                           rejection sampling (after Sun et al. 2023,
 *                           "SpecTr"), with the OTM LP as referee;
 *   simdec-verify-vs-gamma  accepted draft tokens in one iteration vs the
 *                           draft length: token and block verification
 *                           (Sun et al. 2025, "Block Verification
 *                           Accelerates Speculative Decoding") against the
 *                           best valid verifier (LP) and full information;
 *   simdec-biased-pareto    the biased verifier with the optimal and the
 *                           "uno" residual against the Pareto front of Yin
 *                           et al. 2024, "A Theoretical Perspective for
 *                           Speculative Decoding Algorithm", Theorem 5.
 * Exact values come from src/sd_exact*.h, src/sd_kseq.h and lp/sd_lp.h;
 * Monte-Carlo values from the verifiers through the trial engine.  The file
 * ends in its table of figures. */
#include <math.h>
#include <stdlib.h>

#include "../lp/sd_lp.h"
#include "../sims/verifiers/sd_biased.h"
#include "../sims/engine/sd_params.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_exact_otm.h"
#include "../src/sd_exact_single.h"
#include "../src/sd_kseq.h"
#include "../src/sd_rng.h"
#include "sd_fig_util.h"

/* ---- acceptance with k drafts on random pairs ----------------------------- */

/* Random pairs for the multi-draft comparison: Dirichlet(1,...,1) rows as
 * normalised Exp(1) variables from the stream (seed, j).  (The generator's
 * Dirichlet rows, sd_chain_generate, come from GSL's mt19937 instead.) */
static void S_dirichlet(sd_stream *s, double *x, size_t V)
{
    double sum = 0.0;
    for (size_t i = 0; i < V; i++)
        sum += x[i] = -log1p(-sd_stream_uniform(s));
    for (size_t i = 0; i < V; i++)
        x[i] /= sum;
}

static int S_multidraft(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { V = 8, J = 40, KMAX = 10, KLP = 4 };
    double P[J][V], Q[J][V];
    uint64_t pseed = o->seed + 7000;
    for (size_t j = 0; j < J; j++) {
        sd_stream s;
        sd_stream_init(&s, pseed, j);
        S_dirichlet(&s, P[j], V);
        S_dirichlet(&s, Q[j], V);
    }
    sd_fig_head(f, "simdec-multidraft-vs-k", "acceptance at one position with k drafts: optimal (OTM-k) vs k-Seq vs recursive rejection sampling, mean over random pairs");
    fprintf(f, "# %d pairs (p, q) of independent Dirichlet(1) rows on V = %d tokens, streams (seed %llu, pair)\n",
            J, V, (unsigned long long)pseed);
    int rc = SD_OK;
    sd_fig_block(f, "exact", "k mean_OTM mean_kSeq mean_RRS min_kSeq/OTM mean_LP(k<=4, GLPK; else NaN)");
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    for (size_t k = 1; k <= KMAX && !rc; k++) {
        double so = 0, sk = 0, sr = 0, sl = 0, worst = 1.0;
        for (size_t j = 0; j < J && !rc; j++) {
            double a, b, r;
            if ((rc = sd_exact_otm_acceptance(P[j], Q[j], V, k, &a, NULL, err)) ||
                (rc = sd_kseq_acceptance(P[j], Q[j], V, k, &b, err)) ||
                (rc = sd_exact_rrs_acceptance(P[j], Q[j], V, k, &r, err)))
                break;
            so += a;
            sk += b;
            sr += r;
            if (b / a < worst)
                worst = b / a;
            if (k <= KLP) {
                sd_lp_result res;
                rc = sd_lp_otm(P[j], Q[j], V, k, 0, &lo, &res, NULL, err);
                if (!rc && !res.optimal)
                    rc = sd_error_set(err, SD_ESOLVER, "OTM LP, pair %zu, k = %zu: %s", j, k, res.status);
                sl += res.optimum;
            }
        }
        if (!rc)
            fprintf(f, "%zu %.10g %.10g %.10g %.10g %.10g\n", k, so / J, sk / J, sr / J, worst,
                    k <= KLP ? sl / J : NAN);
    }
    uint64_t trials = sd_fig_trials(o, 4000);
    sd_fig_block(f, "mc", "k kseq_mean ci95_lo ci95_hi rrs_mean ci95_lo ci95_hi (mean over the pairs)");
    fprintf(f, "# spectr and rrs verifiers at one position, %llu trials per pair and k;"
               " seed %llu + 1000 k + 2 j (+1 rrs); se = sqrt(sum se_j^2)/J\n",
            (unsigned long long)trials, (unsigned long long)(o->seed + 8000));
    static const size_t kmc[] = {1, 2, 3, 4, 6, 8, 10};
    for (size_t i = 0; i < sizeof kmc / sizeof *kmc && !rc; i++) {
        size_t k = kmc[i];
        fprintf(f, "%zu", k);
        for (int a = 0; a < 2 && !rc; a++) {
            double m = 0, v = 0;
            for (size_t j = 0; j < J && !rc; j++) {
                sd_fig_est e;
                rc = sd_fig_accept_mc(a ? "rrs" : "spectr", P[j], Q[j], V, k,
                                      o->seed + 8000 + 1000 * k + 2 * j + (uint64_t)a, trials, &e, err);
                if (rc)
                    break;
                m += e.mean / J;
                v += e.se * e.se / ((double)J * J);
            }
            if (!rc)
                sd_fig_put_est(f, sd_fig_est_normal(m, sqrt(v)));
        }
        fputc('\n', f);
    }
    return sd_fig_done(f, rc, err);
}

/* ---- token vs block vs the best valid verifier, against gamma ------------- */

static int S_verify(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { GMAX = 7 };
    const size_t GLP = o->quick ? 3 : 5;
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = 3;
    gp.T = GMAX + 1;
    sd_chain *c = sd_chain_generate(&gp, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "simdec-verify-vs-gamma", "expected accepted draft tokens in one iteration vs draft length gamma: token, block, best valid verifier (LP), full information");
    fprintf(f, "# model: simdec gen --V %zu --T %zu --model-seed %lu --alpha %g --mix %g; iteration at position 1 after x_0 = 0\n",
            gp.V, gp.T, gp.seed, gp.alpha, gp.mix);
    sd_fig_block(f, "exact", "gamma E_tau_token E_tau_block E_tau_full E_tau_LP_valid_verify(NaN: not solved)");
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    int rc = SD_OK;
    for (size_t g = 1; g <= GMAX && !rc; g++) {
        double ex[SD_ACCEPT_NALGO], lp = NAN;
        rc = sd_exact_accept_length(c, 1, 0, g, ex, NULL, err);
        if (!rc && g <= GLP) {
            sd_lp_result res;
            rc = sd_lp_valid_verify(c, 1, 0, g, &lo, &res, NULL, err);
            if (!rc && !res.optimal)
                rc = sd_error_set(err, SD_ESOLVER, "valid-verify LP at gamma = %zu: %s", g, res.status);
            lp = res.optimum;
        }
        if (!rc)
            fprintf(f, "%zu %.10g %.10g %.10g %.10g\n", g, ex[0], ex[1], ex[2], lp);
    }
    uint64_t trials = sd_fig_trials(o, 100000);
    sd_fig_block(f, "mc", "gamma token_mean ci95_lo ci95_hi block_mean ci95_lo ci95_hi");
    fprintf(f, "# token and block verifiers, one iteration; seed %llu + 10 gamma (+1 block), %llu iterations per point\n",
            (unsigned long long)(o->seed + 9000), (unsigned long long)trials);
    for (size_t g = 1; g <= GMAX && !rc; g++) {
        fprintf(f, "%zu", g);
        for (int a = 0; a < 2 && !rc; a++) {
            const sd_verifier_type *vt = sd_fig_verifier(a ? "block" : "token", err);
            if (!vt) {
                rc = SD_EINTERNAL;
                break;
            }
            sd_params par;
            sd_params_defaults(&par, NULL);
            par.gamma = g;
            /* one iteration at position 1 after x_0 = 0 */
            sd_sim_result res;
            rc = sd_fig_first_iteration(vt, c, &par, 0, o->seed + 9000 + 10 * g + (uint64_t)a, trials,
                                        0, &res, err);
            if (!rc) {
                sd_fig_put_est(f, sd_fig_est_welford(&res.accepted));
                sd_sim_result_free(&res);
            }
        }
        fputc('\n', f);
    }
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

/* ---- the biased verifier: opt vs uno residual ----------------------------- */

/* Output bias TV(law of the emitted token, q) of the biased verifier with
 * the target q as its residual (uno), from its exact law (sd_biased.h);
 * law is scratch. */
static double S_uno_tv(const double *p, const double *q, size_t V, double eps, double *law)
{
    sd_biased_token_law(p, q, V, eps, SD_RESIDUAL_UNO, law);
    return sd_dist_tv(law, q, V);
}

static int S_biased(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    double *p, *q;
    size_t V;
    int rc = sd_fig_yin_pair(&p, &q, &V, err);
    if (rc)
        return rc;
    double *b = malloc(V * sizeof *b);
    if (!b) {
        free(p);
        free(q);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    double tv = sd_dist_tv(p, q, V), emax = sd_fig_eps_max(p, q, V);
    sd_fig_yin_pair_head(f, "simdec-biased-pareto",
                         "output bias of the biased verifier (opt vs uno residual) against its rejection rate", p, q, V, tv);
    sd_fig_block(f, "front", "P_reject least_TV_bias (Theorem 5)");
    fprintf(f, "0 %.10g\n%.10g 0\n", tv, tv);
    sd_fig_block(f, "exact", "eps P_reject TV_bias_opt TV_bias_uno");
    for (int i = 0; i <= 60 && !rc; i++) {
        double eps = emax * i / 60.0;
        sd_pareto pa;
        rc = sd_exact_pareto(p, q, V, eps, &pa, NULL, err);
        if (!rc)
            fprintf(f, "%.10g %.10g %.10g %.10g\n", eps, pa.reject_prob, pa.loss_tv,
                    S_uno_tv(p, q, V, eps, b));
    }
    uint64_t trials = sd_fig_trials(o, 200000);
    for (int kind = 0; kind < 2 && !rc; kind++) {
        sd_fig_block(f, kind ? "mc-uno" : "mc-opt",
                     "eps P_reject ci95_lo ci95_hi TV_bias ci95_lo ci95_hi (biased verifier)");
        uint64_t seed = o->seed + 2000 + 100 * (uint64_t)kind;
        fprintf(f, "# residual %s, seed %llu + i, %llu trials per point; plug-in TV,"
                   " delta-method interval\n",
                kind ? "uno" : "opt", (unsigned long long)seed, (unsigned long long)trials);
        for (int i = 0; i <= 10 && !rc; i++) {
            double eps = emax * i / 10.0;
            sd_fig_est rj, bt;
            rc = sd_fig_biased_mc(p, q, V, eps, kind, seed + (uint64_t)i, trials, &rj, &bt, err);
            if (!rc) {
                fprintf(f, "%.10g", eps);
                sd_fig_put_est(f, rj);
                sd_fig_put_est(f, bt);
                fputc('\n', f);
            }
        }
    }
    free(b);
    free(p);
    free(q);
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_simdec_multidraft = {
    "simdec-multidraft-vs-k", "simdec",
    "On random pairs, the optimal k-draft acceptance (sorted-prefix formula, checked by the LP) beats k-Seq, which beats recursive rejection sampling, at every k >= 2 (at k = 1 all three are 1 - TV).",
    S_multidraft};
const sd_figure sd_fig_simdec_verify = {
    "simdec-verify-vs-gamma", "simdec",
    "Block verification attains the best valid verifier (LP optimum) at every draft length, above token verification and below the full-information bound.",
    S_verify};
const sd_figure sd_fig_simdec_biased = {
    "simdec-biased-pareto", "simdec",
    "The biased verifier with the optimal residual stays on the Pareto line; with the target as residual (uno) it pays more bias for the same rejection rate.",
    S_biased};
