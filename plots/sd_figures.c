/* sd_figures.c — data of the figures of `simdec plot` (sd_figures.h).
 *
 * The figure library sits above the rest: it calls the exact evaluators
 * (src/sd_exact*.h, src/sd_kseq.h), the linear programs (lp/sd_lp.h) and
 * the Monte-Carlo verifiers (sims/) directly, never the CLI. */
#include "sd_figures.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../sims/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_exact_batch.h"
#include "../src/sd_exact_otm.h"
#include "../src/sd_exact_single.h"
#include "../src/sd_kseq.h"
#include "../src/sd_rng.h"
#include "../src/sd_stats.h"

/* z_{0.975}: the bands are mean ± 1.96 se (normal approximation). */
#define S_Z95 1.959963984540054

void sd_figure_opts_default(sd_figure_opts *o)
{
    o->quick = 0;
    o->seed = SD_FIGURE_DEFAULT_SEED;
}

/* ---- output helpers ------------------------------------------------------ */

/* A Monte-Carlo estimate with its 95% interval. */
typedef struct {
    double mean, lo, hi;
} S_est;

static S_est S_est_welford(const sd_welford *w)
{
    double h = S_Z95 * sd_welford_stderr(w);
    S_est e = {w->mean, w->mean - h, w->mean + h};
    return e;
}

/* The estimate of a - X from one of X. */
static S_est S_est_flip(double a, S_est e)
{
    S_est r = {a - e.mean, a - e.hi, a - e.lo};
    return r;
}

/* A proportion k/n with its binomial normal-approximation interval. */
static S_est S_est_prop(double k, double n)
{
    double m = k / n, h = S_Z95 * sqrt(m * (1.0 - m) / n);
    S_est e = {m, m - h, m + h};
    return e;
}

static void S_put_est(FILE *f, S_est e)
{
    fprintf(f, " %.10g %.10g %.10g", e.mean, e.lo, e.hi);
}

static void S_head(FILE *f, const char *name, const char *what)
{
    fprintf(f, "# simdec plot %s\n# %s\n", name, what);
}

/* Starts data block `name` (selected by gnuplot's index '[name]'). */
static void S_block(FILE *f, const char *name, const char *columns)
{
    fprintf(f, "\n\n# [%s]\n# columns: %s\n", name, columns);
}

static void S_vec(FILE *f, const char *label, const double *x, size_t V)
{
    fprintf(f, "# %s =", label);
    for (size_t i = 0; i < V; i++)
        fprintf(f, " %.10g", x[i]);
    fputc('\n', f);
}

/* Final status of a figure writer: the first error, else a write error. */
static int S_done(FILE *f, int rc, sd_error *err)
{
    if (rc)
        return rc;
    if (fflush(f) != 0 || ferror(f))
        return sd_error_set(err, SD_EOUTPUT, "cannot write the figure data: %s", strerror(errno));
    return SD_OK;
}

static uint64_t S_trials(const sd_figure_opts *o, uint64_t n)
{
    if (!o->quick)
        return n;
    n /= 10;
    return n < 100 ? 100 : n;
}

static const sd_verifier_type *S_verifier(const char *name, sd_error *err)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    if (!vt)
        sd_error_set(err, SD_EINTERNAL, "figure needs verifier %s, which is not registered", name);
    return vt;
}

/* ---- models -------------------------------------------------------------- */

/* The numeric instance of 004_… App. F: two nonstationary Markov chains on
 * 7 tokens, seed 10, uniform prompt (`simdec gen` defaults), horizon T. */
static sd_chain *S_paper_chain(size_t T, sd_error *err)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.T = T;
    return sd_chain_generate(&gp, err);
}

static void S_paper_desc(FILE *f, size_t T)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    fprintf(f,
            "# model: simdec gen --V %zu --T %zu --model-seed %lu --alpha %g --mix %g"
            " (004_ App. F: 7 tokens, seed 10, uniform prompt)\n",
            gp.V, T, gp.seed, gp.alpha, gp.mix);
}

/* Ber(x) puts mass x on token 1 (as sd_exact_otm.h). */
static void S_ber(double x, double *out)
{
    out[0] = 1.0 - x;
    out[1] = x;
}

/* ---- Monte-Carlo helpers ------------------------------------------------- */

static int S_sim(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 uint64_t seed, uint64_t trials, int want_positions, sd_sim_result *res,
                 sd_error *err)
{
    sd_sim_opts so;
    memset(&so, 0, sizeof so);
    so.seed = seed;
    so.trials = trials;
    so.threads = 0;
    so.want_positions = want_positions;
    return sd_sim_run(vt, c, par, &so, res, err);
}

/* E[N_rej] per trial of verifier `algo` on chain c. */
static int S_rej_mc(const char *algo, const sd_chain *c, const sd_params *par, uint64_t seed,
                    uint64_t trials, S_est *out, sd_error *err)
{
    const sd_verifier_type *vt = S_verifier(algo, err);
    if (!vt)
        return SD_EINTERNAL;
    sd_sim_result res;
    int rc = S_sim(vt, c, par, seed, trials, 0, &res, err);
    if (rc)
        return rc;
    *out = S_est_welford(&res.rejections);
    sd_sim_result_free(&res);
    return SD_OK;
}

/* The same on the single-token problem (p, q): one position (T = 1), so a
 * trial is one iteration and N_rej is the indicator "no draft accepted". */
static int S_rej_single(const char *algo, const double *p, const double *q, size_t V,
                        const sd_params *par, uint64_t seed, uint64_t trials, S_est *out,
                        sd_error *err)
{
    sd_chain *c = sd_chain_from_pq(p, q, V, 1, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    int rc = S_rej_mc(algo, c, par, seed, trials, out, err);
    sd_chain_free(c);
    return rc;
}

/* Running mean of N_rej over trials 1..n (004_… Fig. 2): trial i uses the
 * stream (seed, i), as `simdec run --seed`.  Rows from n = 10 on, spaced
 * geometrically (about 500 for 20000 trials). */
static int S_running(FILE *f, const char *block, const char *algo, const sd_chain *c,
                     const sd_params *par, uint64_t seed, uint64_t trials, sd_error *err)
{
    const sd_verifier_type *vt = S_verifier(algo, err);
    if (!vt)
        return SD_EINTERNAL;
    void *state = NULL;
    int rc = vt->alloc(&state, c, par, err);
    if (rc)
        return rc;
    size_t *tok = malloc((c->T + 1) * sizeof *tok);
    if (!tok) {
        if (vt->free)
            vt->free(state);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    fprintf(f, "\n\n# [%s]\n# %s, seed %llu, %llu trials\n"
               "# columns: trials running_mean_N_rej ci95_lo ci95_hi\n",
            block, algo, (unsigned long long)seed, (unsigned long long)trials);
    /* rows at n = 10 and then every ~1.5% further: even on a log axis */
    uint64_t next = trials < 10 ? trials : 10;
    sd_welford w;
    sd_welford_init(&w);
    for (uint64_t i = 0; i < trials && !rc; i++) {
        sd_trial tr;
        rc = sd_sim_trial(vt, state, c, par, seed, i, tok, &tr, NULL, NULL, err);
        if (rc)
            break;
        sd_welford_add(&w, (double)tr.rejections);
        uint64_t n = i + 1;
        if (n == next || n == trials) {
            next = n + 1 + n / 64;
            fprintf(f, "%llu", (unsigned long long)n);
            S_put_est(f, S_est_welford(&w));
            fputc('\n', f);
        }
    }
    free(tok);
    if (vt->free)
        vt->free(state);
    return rc;
}

/* One iteration at position 1 after x_0 = prev, `trials` times, with the
 * streams (seed, i); fn sees each iteration's record. */
typedef void (*S_iter_fn)(void *ctx, const sd_iter *it);

static int S_once(const char *algo, const sd_chain *c, const sd_params *par, size_t prev,
                  uint64_t seed, uint64_t trials, S_iter_fn fn, void *ctx, sd_error *err)
{
    const sd_verifier_type *vt = S_verifier(algo, err);
    if (!vt)
        return SD_EINTERNAL;
    void *state = NULL;
    int rc = vt->alloc(&state, c, par, err);
    if (rc)
        return rc;
    size_t *out = malloc(c->T * sizeof *out);
    if (!out)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < trials && !rc; i++) {
        sd_stream rng;
        sd_stream_init(&rng, seed, i);
        if (vt->begin)
            vt->begin(state);
        sd_iter it = {0, 0, 0, 1};
        rc = vt->step(state, c, par, &rng, 1, prev, out, &it, err);
        if (!rc)
            fn(ctx, &it);
    }
    free(out);
    if (vt->free)
        vt->free(state);
    return rc;
}

/* Accepted draft tokens: their mean and histogram (capacity T+1). */
typedef struct {
    sd_welford w;
    double *hist;
} S_acc_ctx;

static void S_acc_fn(void *ctx, const sd_iter *it)
{
    S_acc_ctx *a = ctx;
    sd_welford_add(&a->w, (double)it->accepted);
    if (a->hist)
        a->hist[it->accepted] += 1.0;
}

/* ---- 004_ Fig. 2 and 5: rejections of SD and batch SD -------------------- */

/* Exact E[N_rej] of batch SD with M drafts (M = 1: Theorem 1). */
static int S_batch_exact(const sd_chain *c, size_t M, double *out, sd_error *err)
{
    return M == 1 ? sd_exact_rejections(c, out, err)
                  : sd_exact_batch_rejections(c, M, out, err);
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
    S_block(f, name, "trials E[N_rej]");
    if (M == 1)
        fprintf(f, "# Theorem 1 of 004_: %.10g\n", ex);
    else
        fprintf(f, "# Theorem 3 of 004_: %.10g (independent DP: %.10g)\n", ex, dp);
    fprintf(f, "1 %.10g\n%llu %.10g\n", ex, (unsigned long long)trials, ex);
    snprintf(name, sizeof name, "mc-M%zu", M);
    sd_params par;
    sd_params_defaults(&par);
    par.M = M;
    return S_running(f, name, M == 1 ? "token" : "batch", c, &par, seed, trials, err);
}

/* Blocks "[vsM-exact]" (M = 1..Mmax), "[vsM-limit]", "[vsM-mc]". */
static int S_rej_vs_M(FILE *f, const sd_chain *c, size_t Mmax, const size_t *Ms, size_t nM,
                      uint64_t seed, uint64_t trials, sd_error *err)
{
    int rc = SD_OK;
    S_block(f, "vsM-exact", "M E[N_rej] (M = 1: Theorem 1; M > 1: Theorem 3)");
    for (size_t M = 1; M <= Mmax && !rc; M++) {
        double ex;
        rc = S_batch_exact(c, M, &ex, err);
        if (!rc)
            fprintf(f, "%zu %.10g\n", M, ex);
    }
    double lim;
    if (rc || (rc = sd_exact_batch_rejections_inf(c, &lim, err)))
        return rc;
    S_block(f, "vsM-limit", "M E[N_rej] at M -> infinity (Proposition 1)");
    fprintf(f, "1 %.10g\n%zu %.10g\n", lim, Mmax, lim);
    S_block(f, "vsM-mc", "M mean_N_rej ci95_lo ci95_hi (batch verifier)");
    fprintf(f, "# seed %llu + M, %llu trials per point\n", (unsigned long long)seed,
            (unsigned long long)trials);
    for (size_t i = 0; i < nM && !rc; i++) {
        sd_params par;
        sd_params_defaults(&par);
        par.M = Ms[i];
        S_est e;
        rc = S_rej_mc(Ms[i] == 1 ? "token" : "batch", c, &par, seed + Ms[i], trials, &e, err);
        if (!rc) {
            fprintf(f, "%zu", Ms[i]);
            S_put_est(f, e);
            fputc('\n', f);
        }
    }
    return rc;
}

static int S_fig2a(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    sd_chain *c = S_paper_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    S_head(f, "yin-fig2a-sd", "004_ Fig. 2(a): running mean of SD rejections over trials vs Theorem 1");
    S_paper_desc(f, 50);
    int rc = S_running_vs_exact(f, c, 1, o->seed + 1, S_trials(o, 20000), err);
    sd_chain_free(c);
    return S_done(f, rc, err);
}

static int S_fig2b(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    sd_chain *c = S_paper_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    S_head(f, "yin-fig2b-batch", "004_ Fig. 2(b): running mean of batch-SD rejections, M = 4, 5, vs Theorem 3");
    S_paper_desc(f, 50);
    int rc = S_running_vs_exact(f, c, 4, o->seed + 4, S_trials(o, 20000), err);
    if (!rc)
        rc = S_running_vs_exact(f, c, 5, o->seed + 5, S_trials(o, 20000), err);
    sd_chain_free(c);
    return S_done(f, rc, err);
}

static int S_fig2c(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t Ms[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 30};
    sd_chain *c = S_paper_chain(50, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    S_head(f, "yin-fig2c-batch-vs-M", "004_ Fig. 2(c): batch-SD rejections vs batch size M, Theorem 3 and its M -> infinity limit");
    S_paper_desc(f, 50);
    int rc = S_rej_vs_M(f, c, 30, Ms, sizeof Ms / sizeof *Ms, o->seed + 100, S_trials(o, 5000), err);
    sd_chain_free(c);
    return S_done(f, rc, err);
}

static int S_fig5(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t Ms[] = {1, 2, 3, 4, 6, 8, 12, 16, 20, 30};
    sd_chain *c = S_paper_chain(100, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    S_head(f, "yin-fig5-T100", "004_ Fig. 5: SD and batch SD (M = 2) at horizon T = 100, and rejections vs M");
    S_paper_desc(f, 100);
    int rc = S_running_vs_exact(f, c, 1, o->seed + 1, S_trials(o, 20000), err);
    if (!rc)
        rc = S_running_vs_exact(f, c, 2, o->seed + 2, S_trials(o, 20000), err);
    if (!rc)
        rc = S_rej_vs_M(f, c, 30, Ms, sizeof Ms / sizeof *Ms, o->seed + 100, S_trials(o, 5000), err);
    sd_chain_free(c);
    return S_done(f, rc, err);
}

/* ---- 004_ Fig. 3 right: batch improvement vs M --------------------------- */

/* Blocks "[NAME-exact]" (M, BI from sd_exact_batch_improvement, closed
 * form) and "[NAME-mc]" (M, TV - estimated P(all M first tokens fail)). */
static int S_bi_pair(FILE *f, const char *name, const double *p, const double *q, size_t V,
                     double closed_r, double closed_u, double closed_v, uint64_t seed,
                     uint64_t trials, sd_error *err)
{
    static const size_t Ms[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20};
    char blk[48];
    snprintf(blk, sizeof blk, "%s-exact", name);
    S_block(f, blk, "M BI_exact BI_closed_form");
    int rc = SD_OK;
    for (size_t M = 1; M <= 20 && !rc; M++) {
        double bi;
        rc = sd_exact_batch_improvement(p, q, V, M, &bi, err);
        /* 004_ §3.2: uniform (1-1/r) - (1-1/r)^M; Bernoulli |u-v|(1-u^{M-1}) */
        double cf = closed_r > 0 ? (1.0 - 1.0 / closed_r) - pow(1.0 - 1.0 / closed_r, (double)M)
                                 : fabs(closed_u - closed_v) * (1.0 - pow(closed_u, (double)M - 1.0));
        if (!rc)
            fprintf(f, "%zu %.10g %.10g\n", M, bi, cf);
    }
    double tv = sd_dist_tv(p, q, V);
    snprintf(blk, sizeof blk, "%s-mc", name);
    S_block(f, blk, "M BI_mc ci95_lo ci95_hi (TV - fraction of single-token batch iterations rejected)");
    fprintf(f, "# seed %llu + M, %llu trials per point\n", (unsigned long long)seed,
            (unsigned long long)trials);
    for (size_t i = 0; i < sizeof Ms / sizeof *Ms && !rc; i++) {
        sd_params par;
        sd_params_defaults(&par);
        par.M = Ms[i];
        S_est e;
        rc = S_rej_single("batch", p, q, V, &par, seed + Ms[i], trials, &e, err);
        if (!rc) {
            fprintf(f, "%zu", Ms[i]);
            S_put_est(f, S_est_flip(tv, e));
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
    S_head(f, "yin-fig3-batch-improvement", "004_ Fig. 3 right: single-token batch improvement BI = TV(q,p) - prod_m TV(q^m,p) vs M");
    fprintf(f, "# Bernoulli: target q = Ber(0.5), draft p = Ber(u), u = 0.6 0.75 0.9 (blocks ber1..3)\n"
               "# uniform: draft p = Unif(%zu), target q = Unif(V') on its first V' tokens,"
               " V' = 30 15 6, r = V/V' = 2 4 10 (blocks uni1..3)\n", V);
    uint64_t trials = S_trials(o, 40000);
    int rc = SD_OK;
    for (size_t i = 0; i < 3 && !rc; i++) {
        double p[2], q[2];
        S_ber(us[i], p);
        S_ber(0.5, q);
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
    return S_done(f, rc, err);
}

/* ---- 004_ Fig. 4: the Pareto front; the biased verifier ------------------ */

/* The single-token pair of the Pareto figures: step 1 after token 0 of the
 * paper's chain. */
static int S_pareto_pair(double **p, double **q, size_t *V, sd_error *err)
{
    sd_chain *c = S_paper_chain(50, err);
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

static double S_eps_max(const double *p, const double *q, size_t V)
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
static S_est S_tv_est(const double *counts, const double *q, size_t V, double n)
{
    double tv = 0.0, m1 = 0.0, m2 = 0.0;
    for (size_t x = 0; x < V; x++) {
        double fx = counts[x] / n, d = fx - q[x];
        tv += 0.5 * fabs(d);
        double s = d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0;
        m1 += s * fx;
        m2 += s * s * fx;
    }
    double var = 0.25 * (m2 - m1 * m1) / n, h = S_Z95 * sqrt(var > 0 ? var : 0);
    S_est e = {tv, tv - h, tv + h};
    return e;
}

/* Monte-Carlo of the biased verifier on (p, q) at one position: rejection
 * rate and output bias TV(law of x_1, q). */
static int S_biased_mc(const double *p, const double *q, size_t V, double eps,
                       sd_residual_kind kind, uint64_t seed, uint64_t trials, S_est *rej,
                       S_est *tv, sd_error *err)
{
    const sd_verifier_type *vt = S_verifier("biased", err);
    if (!vt)
        return SD_EINTERNAL;
    sd_chain *c = sd_chain_from_pq(p, q, V, 1, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_params par;
    sd_params_defaults(&par);
    par.eps = eps;
    par.residual = kind;
    sd_sim_result res;
    int rc = S_sim(vt, c, &par, seed, trials, 1, &res, err);
    if (!rc) {
        *rej = S_est_welford(&res.rejections);
        *tv = S_tv_est(res.pos_counts, q, V, (double)trials);
        sd_sim_result_free(&res);
    }
    sd_chain_free(c);
    return rc;
}

/* Output bias of the biased rule b = min(1,(q+ε)/p) with residual q (uno). */
static double S_uno_tv(const double *p, const double *q, size_t V, double eps, double *b)
{
    for (size_t x = 0; x < V; x++)
        b[x] = p[x] > 0 ? fmin(1.0, (q[x] + eps) / p[x]) : 1.0;
    return sd_exact_output_tv(p, q, b, q, V);
}

/* The header of the two figures on the single-token pair of S_pareto_pair. */
static void S_pareto_head(FILE *f, const char *name, const char *title, const double *p, const double *q,
                          size_t V, double tv)
{
    S_head(f, name, title);
    fprintf(f, "# pair: p = p_1(.|0), q = q_1(.|0) of the chain below; TV(p,q) = %.10g\n", tv);
    S_paper_desc(f, 50);
    S_vec(f, "p", p, V);
    S_vec(f, "q", q, V);
}

static int S_fig4(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    double *p, *q;
    size_t V;
    int rc = S_pareto_pair(&p, &q, &V, err);
    if (rc)
        return rc;
    double tv = sd_dist_tv(p, q, V), emax = S_eps_max(p, q, V);
    S_pareto_head(f, "yin-fig4-pareto",
                  "004_ Fig. 4: Pareto front of rejection probability vs output bias TV (Theorems 4, 5)", p, q, V, tv);
    S_block(f, "front", "P_reject least_TV_bias (Theorem 5: TV - P_reject, then 0)");
    fprintf(f, "0 %.10g\n%.10g 0\n1 0\n", tv, tv);
    /* The LP referee of the whole lower boundary: least bias at each ρ. */
    S_block(f, "lp", "P_reject least_TV_bias (Pareto LP, GLPK)");
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
    S_block(f, "eps", "eps P_reject Loss*_TV P_reject+Loss*_TV (Theorem 4 at b = min(1,(q+eps)/p))");
    for (int i = 0; i <= 40 && !rc; i++) {
        double eps = emax * 1.05 * i / 40.0;
        sd_pareto pa;
        rc = sd_exact_pareto(p, q, V, eps, &pa, NULL, err);
        if (!rc)
            fprintf(f, "%.10g %.10g %.10g %.10g\n", eps, pa.reject_prob, pa.loss_tv,
                    pa.reject_prob + pa.loss_tv);
    }
    uint64_t trials = S_trials(o, 200000);
    S_block(f, "mc", "eps P_reject ci95_lo ci95_hi TV_bias ci95_lo ci95_hi (biased verifier, residual opt)");
    fprintf(f, "# seed %llu + i, %llu trials per point; TV_bias is the plug-in TV of the"
               " empirical law (delta-method interval)\n",
            (unsigned long long)(o->seed + 1000), (unsigned long long)trials);
    for (int i = 0; i <= 10 && !rc; i++) {
        double eps = emax * i / 10.0;
        S_est rj, bt;
        rc = S_biased_mc(p, q, V, eps, SD_RESIDUAL_OPT, o->seed + 1000 + (uint64_t)i, trials,
                         &rj, &bt, err);
        if (!rc) {
            fprintf(f, "%.10g", eps);
            S_put_est(f, rj);
            S_put_est(f, bt);
            fputc('\n', f);
        }
    }
    free(p);
    free(q);
    return S_done(f, rc, err);
}

static int S_extra_biased(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    double *p, *q;
    size_t V;
    int rc = S_pareto_pair(&p, &q, &V, err);
    if (rc)
        return rc;
    double *b = malloc(V * sizeof *b);
    if (!b) {
        free(p);
        free(q);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    double tv = sd_dist_tv(p, q, V), emax = S_eps_max(p, q, V);
    S_pareto_head(f, "simdec-biased-pareto",
                  "output bias of the biased verifier (opt vs uno residual) against its rejection rate", p, q, V, tv);
    S_block(f, "front", "P_reject least_TV_bias (Theorem 5)");
    fprintf(f, "0 %.10g\n%.10g 0\n", tv, tv);
    S_block(f, "exact", "eps P_reject TV_bias_opt TV_bias_uno");
    for (int i = 0; i <= 60 && !rc; i++) {
        double eps = emax * i / 60.0;
        sd_pareto pa;
        rc = sd_exact_pareto(p, q, V, eps, &pa, NULL, err);
        if (!rc)
            fprintf(f, "%.10g %.10g %.10g %.10g\n", eps, pa.reject_prob, pa.loss_tv,
                    S_uno_tv(p, q, V, eps, b));
    }
    uint64_t trials = S_trials(o, 200000);
    for (int kind = 0; kind < 2 && !rc; kind++) {
        S_block(f, kind ? "mc-uno" : "mc-opt",
                "eps P_reject ci95_lo ci95_hi TV_bias ci95_lo ci95_hi (biased verifier)");
        uint64_t seed = o->seed + 2000 + 100 * (uint64_t)kind;
        fprintf(f, "# residual %s, seed %llu + i, %llu trials per point; plug-in TV,"
                   " delta-method interval\n",
                kind ? "uno" : "opt", (unsigned long long)seed, (unsigned long long)trials);
        for (int i = 0; i <= 10 && !rc; i++) {
            double eps = emax * i / 10.0;
            S_est rj, bt;
            rc = S_biased_mc(p, q, V, eps, kind ? SD_RESIDUAL_UNO : SD_RESIDUAL_OPT,
                             seed + (uint64_t)i, trials, &rj, &bt, err);
            if (!rc) {
                fprintf(f, "%.10g", eps);
                S_put_est(f, rj);
                S_put_est(f, bt);
                fputc('\n', f);
            }
        }
    }
    free(b);
    free(p);
    free(q);
    return S_done(f, rc, err);
}

/* ---- 001_ Fig. 3: CCDF of the accepted length ----------------------------- */

static int S_block_ccdf(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { G = 10 };
    /* 001_ eq. 2: Mb(A) = 1/3, Ms(A) = 2/3 (token 0 = A). */
    const double p[2] = {2.0 / 3.0, 1.0 / 3.0}, q[2] = {1.0 / 3.0, 2.0 / 3.0};
    sd_chain *c = sd_chain_from_pq(p, q, 2, G, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    S_head(f, "block-fig3-ccdf", "001_ Fig. 3: P(tau >= l), accepted draft tokens in one iteration, token vs block verification");
    fprintf(f, "# toy model of 001_ eq. 2: draft p(A) = 2/3, target q(A) = 1/3, context-free; gamma = %d\n", G);
    double ex[SD_ACCEPT_NALGO], ccdf[SD_ACCEPT_NALGO * G];
    int rc = sd_exact_accept_length(c, 1, 0, G, ex, ccdf, err);
    if (!rc) {
        fprintf(f, "# E[tau]: token %.10g, block %.10g, full information %.10g\n", ex[0], ex[1], ex[2]);
        S_block(f, "exact", "l P_token(tau>=l) P_block(tau>=l) P_full(tau>=l)");
        fprintf(f, "0 1 1 1\n");
        for (size_t l = 1; l <= G; l++)
            fprintf(f, "%zu %.10g %.10g %.10g\n", l, ccdf[l - 1], ccdf[G + l - 1],
                    ccdf[2 * G + l - 1]);
    }
    uint64_t trials = S_trials(o, 200000);
    static const char *const algos[2] = {"token", "block"};
    double hist[2][G + 1];
    memset(hist, 0, sizeof hist);
    for (int a = 0; a < 2 && !rc; a++) {
        S_acc_ctx ctx;
        sd_welford_init(&ctx.w);
        ctx.hist = hist[a];
        sd_params par;
        sd_params_defaults(&par);
        par.gamma = G;
        rc = S_once(algos[a], c, &par, 0, o->seed + 3000 + (uint64_t)a, trials, S_acc_fn, &ctx, err);
    }
    if (!rc) {
        S_block(f, "mc", "l token_mean ci95_lo ci95_hi block_mean ci95_lo ci95_hi");
        fprintf(f, "# seeds %llu (token), %llu (block); %llu iterations each\n",
                (unsigned long long)(o->seed + 3000), (unsigned long long)(o->seed + 3001),
                (unsigned long long)trials);
        for (size_t l = 0; l <= G; l++) {
            fprintf(f, "%zu", l);
            for (int a = 0; a < 2; a++) {
                double k = 0;
                for (size_t j = l; j <= G; j++)
                    k += hist[a][j];
                S_put_est(f, S_est_prop(k, (double)trials));
            }
            fputc('\n', f);
        }
    }
    sd_chain_free(c);
    return S_done(f, rc, err);
}

/* ---- 002_ Figs. 4–6: multi-draft acceptance ------------------------------ */

/* One-position acceptance of a multi-draft verifier by Monte-Carlo:
 * 1 - P(no draft accepted). */
static int S_accept_mc(const char *algo, const double *p, const double *q, size_t V, size_t k,
                       uint64_t seed, uint64_t trials, S_est *out, sd_error *err)
{
    sd_params par;
    sd_params_defaults(&par);
    par.k = k;
    par.M = k;
    S_est e;
    int rc = S_rej_single(algo, p, q, V, &par, seed, trials, &e, err);
    if (!rc)
        *out = S_est_flip(1.0, e);
    return rc;
}

/* Blocks "[exact]" and "[mc]" for p = Ber(0.25), q = Ber(b) over b. */
static int S_spectr_bernoulli(FILE *f, const sd_figure_opts *o, const size_t *ks, size_t nk,
                              int with_rrs, uint64_t seed, sd_error *err)
{
    double p[2], q[2];
    S_ber(0.25, p);
    int rc = SD_OK;
    double worst = 0.0;
    S_block(f, "exact", with_rrs ? "b then for each k: OTM k-Seq multi-round(RRS)"
                                 : "b then for each k: OTM k-Seq");
    for (int i = 0; i <= 100 && !rc; i++) {
        double b = i / 100.0;
        S_ber(b, q);
        fprintf(f, "%.10g", b);
        for (size_t j = 0; j < nk && !rc; j++) {
            double otm, kseq, rrs;
            rc = sd_exact_otm_acceptance(p, q, 2, ks[j], &otm, NULL, err);
            if (!rc)
                rc = sd_kseq_acceptance(p, q, 2, ks[j], &kseq, err);
            if (!rc && with_rrs)
                rc = sd_exact_rrs_acceptance(p, q, 2, ks[j], &rrs, err);
            if (rc)
                break;
            double cf = sd_exact_otm_bernoulli(0.25, b, ks[j]);
            if (fabs(cf - otm) > worst)
                worst = fabs(cf - otm);
            fprintf(f, " %.10g %.10g", otm, kseq);
            if (with_rrs)
                fprintf(f, " %.10g", rrs);
        }
        fputc('\n', f);
    }
    if (rc)
        return rc;
    fprintf(f, "# largest |OTM sorted-prefix - closed form of 002_ App. B| = %.3g\n", worst);
    uint64_t trials = S_trials(o, 20000);
    S_block(f, "mc", with_rrs ? "b then for each k: kseq_mean lo hi rrs_mean lo hi"
                              : "b then for each k: kseq_mean lo hi");
    fprintf(f, "# spectr (k-Seq) and rrs verifiers at one position; seed %llu + 100 i + 10 j (+1 rrs),"
               " %llu trials per point\n",
            (unsigned long long)seed, (unsigned long long)trials);
    for (int i = 1; i <= 19 && !rc; i++) {
        double b = i / 20.0;
        S_ber(b, q);
        fprintf(f, "%.10g", b);
        for (size_t j = 0; j < nk && !rc; j++) {
            uint64_t s = seed + 100 * (uint64_t)i + 10 * j;
            S_est e;
            rc = S_accept_mc("spectr", p, q, 2, ks[j], s, trials, &e, err);
            if (!rc)
                S_put_est(f, e);
            if (!rc && with_rrs) {
                rc = S_accept_mc("rrs", p, q, 2, ks[j], s + 1, trials, &e, err);
                if (!rc)
                    S_put_est(f, e);
            }
        }
        fputc('\n', f);
    }
    return rc;
}

static int S_spectr4(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t ks[] = {2, 4, 8};
    S_head(f, "spectr-fig4-bernoulli", "002_ Fig. 4: acceptance of OTM-k (optimal) vs k-Seq, p = Ber(0.25), q = Ber(b), k = 2 4 8");
    return S_done(f, S_spectr_bernoulli(f, o, ks, 3, 0, o->seed + 4000, err), err);
}

static int S_spectr6(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t ks[] = {2, 4};
    S_head(f, "spectr-fig6-multiround", "002_ Fig. 6: OTM-k vs k-Seq vs multi-round (recursive rejection sampling), p = Ber(0.25), q = Ber(b), k = 2 4");
    return S_done(f, S_spectr_bernoulli(f, o, ks, 2, 1, o->seed + 6000, err), err);
}

static int S_spectr5(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { D = 120, KMAX = 30, ND = 4 };
    static const size_t dqs[ND] = {60, 30, 12, 6};
    static const size_t kmc[] = {1, 2, 4, 8, 16, 30};
    double p[D], q[ND][D];
    for (size_t x = 0; x < D; x++) {
        p[x] = 1.0 / D;
        for (size_t j = 0; j < ND; j++)
            q[j][x] = x < dqs[j] ? 1.0 / (double)dqs[j] : 0.0;
    }
    S_head(f, "spectr-fig5-uniform", "002_ Fig. 5: optimal acceptance alpha_k vs k, p = U(120), q = U(d_q), d_q = 60 30 12 6");
    S_block(f, "exact", "k then for each d_q: alpha_k(sorted prefix) closed_form 1-(1-1/r)^k");
    int rc = SD_OK;
    for (size_t k = 1; k <= KMAX && !rc; k++) {
        fprintf(f, "%zu", k);
        for (size_t j = 0; j < ND && !rc; j++) {
            double a;
            rc = sd_exact_otm_acceptance(p, q[j], D, k, &a, NULL, err);
            if (!rc)
                fprintf(f, " %.10g %.10g", a, sd_exact_otm_uniform((double)D / (double)dqs[j], k));
        }
        fputc('\n', f);
    }
    uint64_t trials = S_trials(o, 20000);
    S_block(f, "mc", "k then for each d_q: kseq_mean ci95_lo ci95_hi (k-Seq attains alpha_k here, 002_ B.2)");
    fprintf(f, "# spectr verifier at one position; seed %llu + 100 k + j, %llu trials per point\n",
            (unsigned long long)(o->seed + 5000), (unsigned long long)trials);
    for (size_t i = 0; i < sizeof kmc / sizeof *kmc && !rc; i++) {
        fprintf(f, "%zu", kmc[i]);
        for (size_t j = 0; j < ND && !rc; j++) {
            S_est e;
            rc = S_accept_mc("spectr", p, q[j], D, kmc[i], o->seed + 5000 + 100 * kmc[i] + j,
                             trials, &e, err);
            if (!rc)
                S_put_est(f, e);
        }
        fputc('\n', f);
    }
    return S_done(f, rc, err);
}

/* Random pairs for the multi-draft comparison: Dirichlet(1,...,1) rows as
 * normalised Exp(1) variables from the stream (seed, j). */
static void S_dirichlet(sd_stream *s, double *x, size_t V)
{
    double sum = 0.0;
    for (size_t i = 0; i < V; i++)
        sum += x[i] = -log1p(-sd_stream_uniform(s));
    for (size_t i = 0; i < V; i++)
        x[i] /= sum;
}

static int S_extra_multidraft(FILE *f, const sd_figure_opts *o, sd_error *err)
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
    S_head(f, "simdec-multidraft-vs-k", "acceptance at one position with k drafts: optimal (OTM-k) vs k-Seq vs recursive rejection sampling, mean over random pairs");
    fprintf(f, "# %d pairs (p, q) of independent Dirichlet(1) rows on V = %d tokens, streams (seed %llu, pair)\n",
            J, V, (unsigned long long)pseed);
    int rc = SD_OK;
    S_block(f, "exact", "k mean_OTM mean_kSeq mean_RRS min_kSeq/OTM mean_LP(k<=4, GLPK; else NaN)");
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
    uint64_t trials = S_trials(o, 4000);
    S_block(f, "mc", "k kseq_mean ci95_lo ci95_hi rrs_mean ci95_lo ci95_hi (mean over the pairs)");
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
                S_est e;
                rc = S_accept_mc(a ? "rrs" : "spectr", P[j], Q[j], V, k,
                                 o->seed + 8000 + 1000 * k + 2 * j + (uint64_t)a, trials, &e, err);
                if (rc)
                    break;
                double se = (e.hi - e.lo) / (2 * S_Z95);
                m += e.mean / J;
                v += se * se / ((double)J * J);
            }
            S_est t = {m, m - S_Z95 * sqrt(v), m + S_Z95 * sqrt(v)};
            if (!rc)
                S_put_est(f, t);
        }
        fputc('\n', f);
    }
    return S_done(f, rc, err);
}

/* ---- token vs block vs the best valid verifier, against γ ----------------- */

static int S_extra_verify(FILE *f, const sd_figure_opts *o, sd_error *err)
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
    S_head(f, "simdec-verify-vs-gamma", "expected accepted draft tokens in one iteration vs draft length gamma: token, block, best valid verifier (LP), full information");
    fprintf(f, "# model: simdec gen --V %zu --T %zu --model-seed %lu --alpha %g --mix %g; iteration at position 1 after x_0 = 0\n",
            gp.V, gp.T, gp.seed, gp.alpha, gp.mix);
    S_block(f, "exact", "gamma E_tau_token E_tau_block E_tau_full E_tau_LP_valid_verify(NaN: not solved)");
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
    uint64_t trials = S_trials(o, 100000);
    S_block(f, "mc", "gamma token_mean ci95_lo ci95_hi block_mean ci95_lo ci95_hi");
    fprintf(f, "# token and block verifiers, one iteration; seed %llu + 10 gamma (+1 block), %llu iterations per point\n",
            (unsigned long long)(o->seed + 9000), (unsigned long long)trials);
    for (size_t g = 1; g <= GMAX && !rc; g++) {
        fprintf(f, "%zu", g);
        for (int a = 0; a < 2 && !rc; a++) {
            S_acc_ctx ctx;
            sd_welford_init(&ctx.w);
            ctx.hist = NULL;
            sd_params par;
            sd_params_defaults(&par);
            par.gamma = g;
            rc = S_once(a ? "block" : "token", c, &par, 0, o->seed + 9000 + 10 * g + (uint64_t)a,
                        trials, S_acc_fn, &ctx, err);
            if (!rc)
                S_put_est(f, S_est_welford(&ctx.w));
        }
        fputc('\n', f);
    }
    sd_chain_free(c);
    return S_done(f, rc, err);
}

/* ---- 003_ Figs. 5, 6: SPRINTER -------------------------------------------- */

/* N = the cheap verifier's consecutive yeses in one iteration. */
static void S_sprinter_fn(void *ctx, const sd_iter *it)
{
    sd_welford_add(ctx, (double)(it->target_calls ? it->emitted - 1 : it->emitted));
}

/* The setting of 003_ Thm 3.3: r acceptable draft tokens, then only
 * unacceptable ones.  Steps 1..r: p = q (every token acceptable,
 * p(x) <= q(x)); later steps: p = δ_0, q = δ_1 (token 0 unacceptable).
 * The horizon r + 200 truncates N with probability η_FP^200. */
static sd_chain *S_sprinter_chain(size_t r, sd_error *err)
{
    size_t T = r + 200;
    sd_chain *c = sd_chain_alloc(2, T, T, T, err);
    if (!c)
        return NULL;
    c->init[0] = c->init[1] = 0.5;
    for (size_t t = 1; t <= T; t++)
        for (size_t a = 0; a < 2; a++) {
            double *p = c->draft + ((t - 1) * 2 + a) * 2, *q = c->target + ((t - 1) * 2 + a) * 2;
            if (t <= r) {
                p[0] = p[1] = q[0] = q[1] = 0.5;
            } else {
                p[0] = 1.0;
                p[1] = 0.0;
                q[0] = 0.0;
                q[1] = 1.0;
            }
        }
    if (sd_chain_validate(c, "sprinter model", err)) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}

static int S_sprinter(FILE *f, const sd_figure_opts *o, int stop, sd_error *err)
{
    enum { R = 5, NFP = 2 };
    static const double fps[NFP] = {0.0, 0.5};
    const double td = 0.1;
    double scale = stop ? td : 1.0, shift = stop ? td : 0.0; /* T_stop = t_d (N + 1) */
    if (stop)
        S_head(f, "sprinter-fig6-stoptime", "003_ Fig. 6: expected stopping time E[T_stop] of SPRINTER vs eta_TP, r = 5, t_d = 0.1, eta_FP = 0 and 0.5");
    else
        S_head(f, "sprinter-fig5-tokens", "003_ Fig. 5: expected tokens E[N] generated by SPRINTER before its verifier stops vs eta_TP, r = 5, eta_FP = 0 and 0.5");
    fprintf(f, "# Theorems 3.3, 3.4 of 003_: r = %d consecutive acceptable draft tokens, then unacceptable ones%s\n",
            R, stop ? "; T_stop = t_d (N + 1)" : "");
    S_block(f, "exact", stop ? "eta_TP E_T_stop(eta_FP=0) E_T_stop(eta_FP=0.5)"
                             : "eta_TP E_N(eta_FP=0) E_N(eta_FP=0.5)");
    int rc = SD_OK;
    for (int i = 0; i <= 100 && !rc; i++) {
        double tp = i / 100.0;
        fprintf(f, "%.10g", tp);
        for (int j = 0; j < NFP && !rc; j++) {
            double en, et;
            rc = sd_exact_sprinter(tp, fps[j], R, td, &en, &et, err);
            if (!rc)
                fprintf(f, " %.10g", stop ? et : en);
        }
        fputc('\n', f);
    }
    sd_chain *c = rc ? NULL : S_sprinter_chain(R, err);
    if (!rc && !c)
        rc = err ? (int)err->code : SD_EINTERNAL;
    uint64_t trials = S_trials(o, 20000);
    if (!rc) {
        S_block(f, "mc", "eta_TP then for each eta_FP: mean ci95_lo ci95_hi (sprinter verifier, one iteration)");
        fprintf(f, "# model: steps 1..%d p = q = (1/2,1/2), later p = (1,0), q = (0,1); seed %llu + 100 i + j, %llu iterations per point\n",
                R, (unsigned long long)(o->seed + 10000), (unsigned long long)trials);
    }
    for (int i = 0; i <= 20 && !rc; i++) {
        double tp = i / 20.0;
        fprintf(f, "%.10g", tp);
        for (int j = 0; j < NFP && !rc; j++) {
            sd_params par;
            sd_params_defaults(&par);
            par.tp = tp;
            par.fp = fps[j];
            sd_welford w;
            sd_welford_init(&w);
            rc = S_once("sprinter", c, &par, 0, o->seed + 10000 + 100 * (uint64_t)i + (uint64_t)j,
                        trials, S_sprinter_fn, &w, err);
            S_est e = S_est_welford(&w);
            S_est s = {scale * e.mean + shift, scale * e.lo + shift, scale * e.hi + shift};
            if (!rc)
                S_put_est(f, s);
        }
        fputc('\n', f);
    }
    sd_chain_free(c);
    return S_done(f, rc, err);
}

static int S_sprinter5(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    return S_sprinter(f, o, 0, err);
}

static int S_sprinter6(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    return S_sprinter(f, o, 1, err);
}

/* ---- the table ------------------------------------------------------------ */

static const sd_figure S_f2a = {
    "yin-fig2a-sd", "004_ Fig. 2(a)",
    "The running mean of speculative decoding's rejections over trials settles on Theorem 1's exact E[N_rej] for the paper's 7-token chain (T = 50).",
    S_fig2a};
static const sd_figure S_f2b = {
    "yin-fig2b-batch", "004_ Fig. 2(b)",
    "Batch speculative decoding with M = 4 and 5 drafts: running means of rejections converge to Theorem 3's exact values, below plain SD's.",
    S_fig2b};
static const sd_figure S_f2c = {
    "yin-fig2c-batch-vs-M", "004_ Fig. 2(c)",
    "Rejections fall with the batch size M (Theorem 3, with Monte-Carlo points) but level off at the M -> infinity limit, far above zero.",
    S_fig2c};
static const sd_figure S_f3 = {
    "yin-fig3-batch-improvement", "004_ Fig. 3 right",
    "Single-token batch improvement TV - prod TV(q^m,p) grows with M towards TV(p,q) for Bernoulli and uniform pairs; Monte-Carlo of the batch verifier matches.",
    S_fig3};
static const sd_figure S_f4 = {
    "yin-fig4-pareto", "004_ Fig. 4",
    "The least output bias at a given rejection probability is the straight line from (0, TV) to (TV, 0) (Theorem 5, confirmed by the Pareto LP), and the biased rule min(1,(q+eps)/p) with the optimal residual moves along it as eps grows.",
    S_fig4};
static const sd_figure S_f5 = {
    "yin-fig5-T100", "004_ Fig. 5",
    "At horizon T = 100: SD and batch SD (M = 2) running means converge to Theorems 1 and 3, and rejections vs M level off at the limit.",
    S_fig5};
static const sd_figure S_bccdf = {
    "block-fig3-ccdf", "001_ Fig. 3",
    "On the two-token toy model with gamma = 10, block verification accepts longer prefixes than token verification (its CCDF lies above), below the full-information optimum.",
    S_block_ccdf};
static const sd_figure S_s4 = {
    "spectr-fig4-bernoulli", "002_ Fig. 4",
    "For p = Ber(0.25), q = Ber(b), the optimal k-draft acceptance OTM-k is at or above k-Seq's for k = 2, 4, 8 (strictly above for most b), and both grow with k.",
    S_spectr4};
static const sd_figure S_s5 = {
    "spectr-fig5-uniform", "002_ Fig. 5",
    "For p = U(120) and q = U(d_q), the optimal acceptance alpha_k = 1 - (1 - d_q/120)^k grows with k, and k-Seq attains it.",
    S_spectr5};
static const sd_figure S_s6 = {
    "spectr-fig6-multiround", "002_ Fig. 6",
    "OTM-k >= k-Seq >= multi-round (recursive rejection sampling) acceptance for p = Ber(0.25), q = Ber(b), k = 2 and 4.",
    S_spectr6};
static const sd_figure S_sp5 = {
    "sprinter-fig5-tokens", "003_ Fig. 5",
    "SPRINTER's expected run of drafted tokens grows with the verifier's true-positive rate; a false-positive rate of 0.5 adds eta_TP^r <= 1 token to it (r = 5).",
    S_sprinter5};
static const sd_figure S_sp6 = {
    "sprinter-fig6-stoptime", "003_ Fig. 6",
    "SPRINTER's expected stopping time t_d (E[N] + 1) vs true-positive rate; eta_FP = 0.5 costs at most t_d = 0.1 more.",
    S_sprinter6};
static const sd_figure S_xmd = {
    "simdec-multidraft-vs-k", "simdec",
    "On random pairs, the optimal k-draft acceptance (sorted-prefix formula, checked by the LP) beats k-Seq, which beats recursive rejection sampling, at every k >= 2 (at k = 1 all three are 1 - TV).",
    S_extra_multidraft};
static const sd_figure S_xvv = {
    "simdec-verify-vs-gamma", "simdec",
    "Block verification attains the best valid verifier (LP optimum) at every draft length, above token verification and below the full-information bound.",
    S_extra_verify};
static const sd_figure S_xbp = {
    "simdec-biased-pareto", "simdec",
    "The biased verifier with the optimal residual stays on the Pareto line; with the target as residual (uno) it pays more bias for the same rejection rate.",
    S_extra_biased};

const sd_figure *const sd_figures[] = {
    &S_f2a, &S_f2b, &S_f2c, &S_f3, &S_f4, &S_f5, &S_bccdf, &S_s4, &S_s5, &S_s6,
    &S_sp5, &S_sp6, &S_xmd, &S_xvv, &S_xbp, NULL,
};

const sd_figure *sd_figure_find(const char *name)
{
    for (size_t i = 0; sd_figures[i]; i++)
        if (strcmp(sd_figures[i]->name, name) == 0)
            return sd_figures[i];
    return NULL;
}
