/* fig_yin2024.c — the figures of Yin, Chen, Huang & Wang 2024, "A
 * Theoretical Perspective for Speculative Decoding Algorithm" (NeurIPS
 * 2024): Figs. 2(a)-(c), 3 (right), 4 and 5, on the numeric instance of its
 * App. F (sd_fig_yin_chain), plus that model's helpers which simdec's own
 * biased-verifier figure shares (sd_fig_util.h).
 *
 * Exact values come from Theorem 1 (sd_exact.h), Theorem 3 and
 * Proposition 1 (sd_exact_batch.h), the single-token closed forms of §3.2
 * and Theorems 4-5 (sd_exact_single.h) and the Pareto LP (lp/sd_lp.h);
 * Monte-Carlo values from the token, batch and biased verifiers through the
 * trial engine.  The file ends in its table of figures.
 *
 * The data files' headers name the paper "Yin et al. 2024".  Where the
 * paper states a number, the data file gives it beside simdec's ("# paper:"
 * lines; Figs. 2(a), 2(c): 16.41 rejections at T = 50, 50/16.41 = 3.05). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../sims/engine/sd_params.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_exact_batch.h"
#include "../src/sd_exact_single.h"
#include "sd_fig_util.h"

/* ---- the model of App. F ------------------------------------------------- */

/* numpy's np.random.seed(10), np.random.rand(T,7,7) for the draft then the
 * target, rows normalised (sd_chain_generate_numpy): the paper's chain
 * (Theorem 1 = 16.405 at T = 50, the paper's 16.41). */
sd_chain *sd_fig_yin_chain(size_t T, sd_error *err)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.T = T;
    gp.rng = SD_GEN_NUMPY_MT19937;
    return sd_chain_generate(&gp, err);
}

void sd_fig_yin_desc(FILE *f, size_t T)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    fprintf(f,
            "# model: simdec gen --V %zu --T %zu --model-seed %lu --rng numpy-mt19937"
            " (Yin et al. 2024, App. F: 7 tokens, seed 10, uniform prompt, drawn as numpy draws it)\n",
            gp.V, T, gp.seed);
}

/* ---- Figs. 2 and 5: rejections of SD and batch SD ------------------------ */

/* Exact E[N_rej] of batch SD with M drafts (M = 1: Theorem 1). */
static int S_batch_exact(const sd_chain *c, size_t M, double *out, sd_error *err)
{
    return M == 1 ? sd_exact_rejections(c, out, err) : sd_exact_batch_rejections(c, M, out, err);
}

/* Block `block`: the running mean of N_rej over trials 1..n, trial i on
 * the stream (seed, i) as `simdec run --seed` (one engine run keeping each
 * trial's record).  Rows from n = 10 on, spaced geometrically (about 500
 * for 20000 trials). */
static int S_running(FILE *f, const char *block, const char *algo, const sd_chain *c,
                     const sd_params *par, uint64_t seed, uint64_t trials, sd_error *err)
{
    const sd_verifier_type *vt = sd_fig_verifier(algo, err);
    if (!vt)
        return SD_EINTERNAL;
    fprintf(f, "\n\n# [%s]\n# %s, seed %llu, %llu trials\n"
               "# columns: trials running_mean_N_rej ci95_lo ci95_hi\n",
            block, algo, (unsigned long long)seed, (unsigned long long)trials);
    sd_sim_result res;
    int rc = sd_fig_run(vt, c, par, seed, trials, NULL, SD_FIG_WANT_PER_TRIAL, &res, err);
    if (rc)
        return rc;
    /* rows at n = 10 and then every ~1.5% further: even on a log axis */
    uint64_t next = trials < 10 ? trials : 10;
    sd_welford w;
    sd_welford_init(&w);
    for (uint64_t i = 0; i < trials; i++) {
        sd_welford_add(&w, (double)res.per_trial[i].rejections);
        uint64_t n = i + 1;
        if (n == next || n == trials) {
            next = n + 1 + n / 64;
            fprintf(f, "%llu", (unsigned long long)n);
            sd_fig_put_est(f, sd_fig_est_welford(&w));
            fputc('\n', f);
        }
    }
    sd_sim_result_free(&res);
    return SD_OK;
}

/* Blocks "[exact-M]" (two rows over the trial range) and "[mc-M]" (running
 * mean) for one batch size. */
static int S_running_vs_exact(FILE *f, const sd_chain *c, size_t M, uint64_t seed,
                              uint64_t trials, sd_error *err)
{
    double ex, dp = NAN;
    int rc = S_batch_exact(c, M, &ex, err);
    if (!rc && M > 1)
        rc = sd_exact_batch_rejections_dp(c, M, &dp, err);
    if (rc)
        return rc;
    char name[32];
    snprintf(name, sizeof name, "exact-M%zu", M);
    sd_fig_block(f, name, "trials E[N_rej]");
    if (M == 1)
        fprintf(f, "# Theorem 1 of Yin et al. 2024: %.10g\n", ex);
    else
        fprintf(f, "# Theorem 3 of Yin et al. 2024: %.10g (independent DP: %.10g)\n", ex, dp);
    fprintf(f, "1 %.10g\n%llu %.10g\n", ex, (unsigned long long)trials, ex);
    snprintf(name, sizeof name, "mc-M%zu", M);
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = M;
    return S_running(f, name, M == 1 ? "token" : "batch", c, &par, seed, trials, err);
}

/* Blocks "[vsM-exact]" (M = 1..Mmax), "[vsM-limit]", "[vsM-mc]". */
static int S_rej_vs_M(FILE *f, const sd_chain *c, size_t Mmax, const size_t *Ms, size_t nM,
                      uint64_t seed, uint64_t trials, sd_error *err)
{
    int rc = SD_OK;
    sd_fig_block(f, "vsM-exact", "M E[N_rej] (M = 1: Theorem 1; M > 1: Theorem 3)");
    for (size_t M = 1; M <= Mmax && !rc; M++) {
        double ex;
        rc = S_batch_exact(c, M, &ex, err);
        if (!rc)
            fprintf(f, "%zu %.10g\n", M, ex);
    }
    double lim;
    if (rc || (rc = sd_exact_batch_rejections_inf(c, &lim, err)))
        return rc;
    sd_fig_block(f, "vsM-limit", "M E[N_rej] at M -> infinity (Proposition 1)");
    fprintf(f, "1 %.10g\n%zu %.10g\n", lim, Mmax, lim);
    sd_fig_block(f, "vsM-mc", "M mean_N_rej ci95_lo ci95_hi (batch verifier)");
    fprintf(f, "# seed %llu + M, %llu trials per point\n", (unsigned long long)seed,
            (unsigned long long)trials);
    for (size_t i = 0; i < nM && !rc; i++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.k = Ms[i];
        sd_fig_est e;
        rc = sd_fig_rej_mc(Ms[i] == 1 ? "token" : "batch", c, &par, seed + Ms[i], trials, &e, err);
        if (!rc) {
            fprintf(f, "%zu", Ms[i]);
            sd_fig_put_est(f, e);
            fputc('\n', f);
        }
    }
    return rc;
}

static int S_fig2a(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    sd_chain *c = sd_fig_yin_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "yin-fig2a-sd", "Yin et al. 2024, Fig. 2(a): running mean of SD rejections over trials vs Theorem 1");
    sd_fig_yin_desc(f, 50);
    fprintf(f, "# paper: E[N_rej] = 16.41 (Theorem 1), acceleration 50/16.41 = 3.05 (Yin et al. 2024, Sec. 3)\n");
    int rc = S_running_vs_exact(f, c, 1, o->seed + 1, sd_fig_trials(o, 20000), err);
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

static int S_fig2b(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    sd_chain *c = sd_fig_yin_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "yin-fig2b-batch", "Yin et al. 2024, Fig. 2(b): running mean of batch-SD rejections, M = 4, 5, vs Theorem 3");
    sd_fig_yin_desc(f, 50);
    fprintf(f, "# paper: Theorem 3's values for M = 4, 5 are drawn, not stated (Yin et al. 2024, Sec. 3.2)\n");
    int rc = S_running_vs_exact(f, c, 4, o->seed + 4, sd_fig_trials(o, 20000), err);
    if (!rc)
        rc = S_running_vs_exact(f, c, 5, o->seed + 5, sd_fig_trials(o, 20000), err);
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

static int S_fig2c(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t Ms[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 30};
    sd_chain *c = sd_fig_yin_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "yin-fig2c-batch-vs-M", "Yin et al. 2024, Fig. 2(c): batch-SD rejections vs batch size M, Theorem 3 and its M -> infinity limit");
    sd_fig_yin_desc(f, 50);
    fprintf(f, "# paper: the point (M, E[N_rej]) = (1, 16.41); other values drawn, not stated (Yin et al. 2024, Sec. 3.2)\n");
    int rc = S_rej_vs_M(f, c, 30, Ms, sizeof Ms / sizeof *Ms, o->seed + 100, sd_fig_trials(o, 5000), err);
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

static int S_fig5(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t Ms[] = {1, 2, 3, 4, 6, 8, 12, 16, 20, 30};
    sd_chain *c = sd_fig_yin_chain(100, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "yin-fig5-T100", "Yin et al. 2024, Fig. 5: SD and batch SD (M = 2) at horizon T = 100, and rejections vs M");
    sd_fig_yin_desc(f, 100);
    fprintf(f, "# paper: values drawn, not stated (Yin et al. 2024, App. F)\n");
    int rc = S_running_vs_exact(f, c, 1, o->seed + 1, sd_fig_trials(o, 20000), err);
    if (!rc)
        rc = S_running_vs_exact(f, c, 2, o->seed + 2, sd_fig_trials(o, 20000), err);
    if (!rc)
        rc = S_rej_vs_M(f, c, 30, Ms, sizeof Ms / sizeof *Ms, o->seed + 100, sd_fig_trials(o, 5000), err);
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

/* ---- Fig. 3 right: batch improvement vs M --------------------------------- */

/* The closed forms of §3.2 (the tests of sd_exact_batch_improvement):
 * BI = (1-1/r) - (1-1/r)^M for p = Unif(V), q = Unif(V/r) (r > 0), else
 * BI = |u-v| (1 - u^{M-1}) for p = Ber(u), q = Ber(v). */
static double S_bi_closed(double r, double u, double v, size_t M)
{
    return r > 0 ? (1.0 - 1.0 / r) - pow(1.0 - 1.0 / r, (double)M)
                 : fabs(u - v) * (1.0 - pow(u, (double)M - 1.0));
}

/* Blocks "[NAME-exact]" (M, BI from sd_exact_batch_improvement, closed
 * form) and "[NAME-mc]" (M, TV - estimated P(all M first tokens fail)). */
static int S_bi_pair(FILE *f, const char *name, const double *p, const double *q, size_t V,
                     double closed_r, double closed_u, double closed_v, uint64_t seed,
                     uint64_t trials, sd_error *err)
{
    static const size_t Ms[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20};
    char blk[48];
    snprintf(blk, sizeof blk, "%s-exact", name);
    sd_fig_block(f, blk, "M BI_exact BI_closed_form");
    int rc = SD_OK;
    for (size_t M = 1; M <= 20 && !rc; M++) {
        double bi;
        rc = sd_exact_batch_improvement(p, q, V, M, &bi, err);
        if (!rc)
            fprintf(f, "%zu %.10g %.10g\n", M, bi, S_bi_closed(closed_r, closed_u, closed_v, M));
    }
    double tv = sd_dist_tv(p, q, V);
    snprintf(blk, sizeof blk, "%s-mc", name);
    sd_fig_block(f, blk, "M BI_mc ci95_lo ci95_hi (TV - fraction of single-token batch iterations rejected)");
    fprintf(f, "# seed %llu + M, %llu trials per point\n", (unsigned long long)seed,
            (unsigned long long)trials);
    for (size_t i = 0; i < sizeof Ms / sizeof *Ms && !rc; i++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.k = Ms[i];
        sd_fig_est e;
        rc = sd_fig_rej_single("batch", p, q, V, &par, seed + Ms[i], trials, &e, err);
        if (!rc) {
            fprintf(f, "%zu", Ms[i]);
            sd_fig_put_est(f, sd_fig_est_flip(tv, e));
            fputc('\n', f);
        }
    }
    return rc;
}

static int S_fig3(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const double us[] = {0.6, 0.75, 0.9};
    static const size_t Vps[] = {30, 15, 6};
    const size_t V = 60;
    sd_fig_head(f, "yin-fig3-batch-improvement", "Yin et al. 2024, Fig. 3 right: single-token batch improvement BI = TV(q,p) - prod_m TV(q^m,p) vs M");
    fprintf(f, "# Bernoulli: target q = Ber(0.5), draft p = Ber(u), u = 0.6 0.75 0.9 (blocks ber1..3)\n"
               "# uniform: draft p = Unif(%zu), target q = Unif(V') on its first V' tokens,"
               " V' = 30 15 6, r = V/V' = 2 4 10 (blocks uni1..3)\n", V);
    uint64_t trials = sd_fig_trials(o, 40000);
    int rc = SD_OK;
    for (size_t i = 0; i < 3 && !rc; i++) {
        double p[2], q[2];
        sd_fig_ber(us[i], p);
        sd_fig_ber(0.5, q);
        char name[8];
        snprintf(name, sizeof name, "ber%zu", i + 1);
        rc = S_bi_pair(f, name, p, q, 2, 0, us[i], 0.5, o->seed + 200 + 100 * i, trials, err);
    }
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    if (!p || !q)
        rc = rc ? rc : sd_error_set(err, SD_ENOMEM, "out of memory");
    for (size_t i = 0; i < 3 && !rc; i++) {
        for (size_t x = 0; x < V; x++) {
            p[x] = 1.0 / (double)V;
            q[x] = x < Vps[i] ? 1.0 / (double)Vps[i] : 0.0;
        }
        char name[8];
        snprintf(name, sizeof name, "uni%zu", i + 1);
        rc = S_bi_pair(f, name, p, q, V, (double)V / (double)Vps[i], 0, 0,
                       o->seed + 600 + 100 * i, trials, err);
    }
    free(p);
    free(q);
    return sd_fig_done(f, rc, err);
}

/* ---- Fig. 4: the Pareto front; the biased verifier ------------------------ */

int sd_fig_yin_pair(double **p, double **q, size_t *V, sd_error *err)
{
    sd_chain *c = sd_fig_yin_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    *V = c->V;
    *p = malloc(c->V * sizeof **p);
    *q = malloc(c->V * sizeof **q);
    if (!*p || !*q) {
        free(*p);
        free(*q);
        sd_chain_free(c);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    memcpy(*p, sd_chain_p(c, 1, 0), c->V * sizeof **p);
    memcpy(*q, sd_chain_q(c, 1, 0), c->V * sizeof **q);
    sd_chain_free(c);
    return SD_OK;
}

void sd_fig_yin_pair_head(FILE *f, const char *name, const char *title, const double *p,
                          const double *q, size_t V, double tv)
{
    sd_fig_head(f, name, title);
    fprintf(f, "# pair: p = p_1(.|0), q = q_1(.|0) of the chain below; TV(p,q) = %.10g\n", tv);
    sd_fig_yin_desc(f, 50);
    sd_fig_vec(f, "p", p, V);
    sd_fig_vec(f, "q", q, V);
}

double sd_fig_eps_max(const double *p, const double *q, size_t V)
{
    double m = 0.0;
    for (size_t x = 0; x < V; x++)
        if (p[x] - q[x] > m)
            m = p[x] - q[x];
    return m;
}

/* TV(empirical law, q) from counts (n observations) with a delta-method
 * interval: with s_x = sign(f_x - q_x), TV ≈ ½ Σ s_x f_x - const, so
 * se² ≈ ¼ (Σ f_x - (Σ s_x f_x)²)/n over the cells with s_x ≠ 0.  The
 * plug-in estimate is biased upward by O(sqrt(V/n)) near TV = 0. */
static sd_fig_est S_tv_est(const double *counts, const double *q, size_t V, double n)
{
    double tv = 0.0, m1 = 0.0, m2 = 0.0;
    for (size_t x = 0; x < V; x++) {
        double fx = counts[x] / n, d = fx - q[x];
        tv += 0.5 * fabs(d);
        double s = d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0;
        m1 += s * fx;
        m2 += s * s * fx;
    }
    double var = 0.25 * (m2 - m1 * m1) / n;
    return sd_fig_est_normal(tv, sqrt(var > 0 ? var : 0));
}

int sd_fig_biased_mc(const double *p, const double *q, size_t V, double eps, int residual,
                     uint64_t seed, uint64_t trials, sd_fig_est *rej, sd_fig_est *tv,
                     sd_error *err)
{
    const sd_verifier_type *vt = sd_fig_verifier("biased", err);
    if (!vt)
        return SD_EINTERNAL;
    sd_chain *c = sd_chain_from_pq(p, q, V, 1, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_params par;
    sd_params_defaults(&par, vt);
    int rc = sd_params_set(&par, vt, "eps", eps, err);
    if (!rc)
        rc = sd_params_set(&par, vt, "residual", residual, err);
    sd_sim_result res;
    if (!rc)
        rc = sd_fig_run(vt, c, &par, seed, trials, NULL, SD_FIG_WANT_POSITIONS, &res, err);
    if (!rc) {
        *rej = sd_fig_est_welford(&res.rejections);
        *tv = S_tv_est(res.pos_counts, q, V, (double)trials);
        sd_sim_result_free(&res);
    }
    sd_chain_free(c);
    return rc;
}

static int S_fig4(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    double *p, *q;
    size_t V;
    int rc = sd_fig_yin_pair(&p, &q, &V, err);
    if (rc)
        return rc;
    double tv = sd_dist_tv(p, q, V), emax = sd_fig_eps_max(p, q, V);
    sd_fig_yin_pair_head(f, "yin-fig4-pareto",
                         "Yin et al. 2024, Fig. 4: Pareto front of rejection probability vs output bias TV (Theorems 4, 5)", p, q, V, tv);
    sd_fig_block(f, "front", "P_reject least_TV_bias (Theorem 5: TV - P_reject, then 0)");
    fprintf(f, "0 %.10g\n%.10g 0\n1 0\n", tv, tv);
    /* The LP referee of the whole lower boundary: least bias at each ρ. */
    sd_fig_block(f, "lp", "P_reject least_TV_bias (Pareto LP, GLPK)");
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    for (int i = 0; i <= 20 && !rc; i++) {
        double rho = i / 20.0;
        sd_lp_result res;
        rc = sd_lp_pareto(p, q, V, rho, &lo, &res, NULL, err);
        if (!rc && !res.optimal)
            rc = sd_error_set(err, SD_ESOLVER, "Pareto LP at rho = %g: %s", rho, res.status);
        if (!rc)
            fprintf(f, "%.10g %.10g\n", rho, res.optimum);
    }
    sd_fig_block(f, "eps", "eps P_reject Loss*_TV P_reject+Loss*_TV (Theorem 4 at b = min(1,(q+eps)/p))");
    for (int i = 0; i <= 40 && !rc; i++) {
        double eps = emax * 1.05 * i / 40.0;
        sd_pareto pa;
        rc = sd_exact_pareto(p, q, V, eps, &pa, NULL, err);
        if (!rc)
            fprintf(f, "%.10g %.10g %.10g %.10g\n", eps, pa.reject_prob, pa.loss_tv,
                    pa.reject_prob + pa.loss_tv);
    }
    uint64_t trials = sd_fig_trials(o, 200000);
    sd_fig_block(f, "mc", "eps P_reject ci95_lo ci95_hi TV_bias ci95_lo ci95_hi (biased verifier, residual opt)");
    fprintf(f, "# seed %llu + i, %llu trials per point; TV_bias is the plug-in TV of the"
               " empirical law (delta-method interval)\n",
            (unsigned long long)(o->seed + 1000), (unsigned long long)trials);
    for (int i = 0; i <= 10 && !rc; i++) {
        double eps = emax * i / 10.0;
        sd_fig_est rj, bt;
        rc = sd_fig_biased_mc(p, q, V, eps, 0, o->seed + 1000 + (uint64_t)i, trials, &rj, &bt, err);
        if (!rc) {
            fprintf(f, "%.10g", eps);
            sd_fig_put_est(f, rj);
            sd_fig_put_est(f, bt);
            fputc('\n', f);
        }
    }
    free(p);
    free(q);
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_yin2024_fig2a = {
    "yin-fig2a-sd", "Yin 2024 Fig. 2(a)",
    "The running mean of speculative decoding's rejections over trials settles on Theorem 1's exact E[N_rej] = 16.405 for the paper's 7-token chain (T = 50); the paper: 16.41, acceleration 50/16.41 = 3.05.",
    S_fig2a};
const sd_figure sd_fig_yin2024_fig2b = {
    "yin-fig2b-batch", "Yin 2024 Fig. 2(b)",
    "Batch speculative decoding with M = 4 and 5 drafts: running means of rejections converge to Theorem 3's exact values (14.090 and 13.868), below plain SD's 16.405; the paper draws these values without stating them.",
    S_fig2b};
const sd_figure sd_fig_yin2024_fig2c = {
    "yin-fig2c-batch-vs-M", "Yin 2024 Fig. 2(c)",
    "Rejections fall with the batch size M (Theorem 3, with Monte-Carlo points: 16.405 at M = 1, the paper's 16.41; 12.723 at M = 30) but level off at the M -> infinity limit 12.099, far above zero.",
    S_fig2c};
const sd_figure sd_fig_yin2024_fig3 = {
    "yin-fig3-batch-improvement", "Yin 2024 Fig. 3 right",
    "Single-token batch improvement TV - prod TV(q^m,p) grows with M towards TV(p,q) for Bernoulli and uniform pairs; simdec's exact values equal the paper's closed forms (Sec. 3.2) and Monte-Carlo of the batch verifier matches.",
    S_fig3};
const sd_figure sd_fig_yin2024_fig4 = {
    "yin-fig4-pareto", "Yin 2024 Fig. 4",
    "The least output bias at a given rejection probability is the straight line from (0, TV) to (TV, 0) (Theorem 5, confirmed by the Pareto LP), and the biased rule min(1,(q+eps)/p) with the optimal residual moves along it as eps grows.",
    S_fig4};
const sd_figure sd_fig_yin2024_fig5 = {
    "yin-fig5-T100", "Yin 2024 Fig. 5",
    "At horizon T = 100 (the paper's chain drawn with T = 100): SD and batch SD (M = 2) running means converge to Theorems 1 and 3 (33.535 and 30.868), and rejections vs M level off at the limit 24.952; the paper states no value.",
    S_fig5};
