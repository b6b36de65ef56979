/* sd_run.c — one point: the engine's estimates beside the exact values,
 * the token baseline, the bias and paired differences (sd_run.h). */
#include "sd_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../exact/sd_exact_gen.h"
#include "sd_paired.h"
#include "sd_params.h"

void sd_run_exact(const sd_verifier_type *vt, const sd_model *m, const sd_params *par, sd_exact_values *ex,
                  char *refused)
{
    sd_error err = {0};
    if (sd_verifier_exact(vt, m, par, ex, &err)) {
        ex->rejections = ex->target_calls = NAN;
        ex->method = NULL;
        if (refused && err.code == SD_ETOOBIG)
            snprintf(refused, SD_ERROR_MSG_MAX, "%s", err.msg);
    }
}

/* The exact values of the point and of token-level SD at its draft length
 * (the question a user asks first: how many target calls does this
 * verifier save over token-level SD on the same model?). */
static void S_exact_point(const sd_model *m, const sd_verifier_type *vt, const sd_params *par, sd_run_result *r)
{
    sd_run_exact(vt, m, par, &r->exact, r->exact_refused);
    r->baseline = sd_verifier_baseline();
    if (m->chain && vt != r->baseline) {
        sd_params bp;
        sd_params_defaults(&bp, r->baseline);
        bp.gamma = sd_params_decl(vt, "gamma", NULL) ? par->gamma : 0;
        sd_exact_values bx;
        sd_run_exact(r->baseline, m, &bp, &bx, NULL);
        r->baseline_calls = bx.target_calls;
    }
}

int sd_run_streams(const sd_verifier_type *vt)
{
    for (size_t k = 0; vt && vt->kernels && vt->kernels[k]; k++)
        if (vt->kernels[k]->supports & SD_KERNEL_ALL)
            return 1;
    return 0;
}

size_t sd_run_kernel_budget(const sd_chain *c, size_t budget)
{
    size_t chain = c ? (c->V + (c->draft_steps + c->target_steps) * c->V * c->V) * sizeof(double) : 0;
    return chain < budget ? budget - chain : 1;
}

int sd_run_point(const sd_model *m, const sd_verifier_type *vt, const sd_params *par, const sd_run_opts *opts,
                 sd_run_result *out, sd_error *err)
{
    memset(out, 0, sizeof *out);
    out->bias_exact = out->bias_est.value = out->baseline_calls = NAN;
    out->exact.rejections = out->exact.target_calls = NAN;
    out->baseline = sd_verifier_baseline();
    int claims = sd_verifier_claims_lossless(vt, par);
    sd_sim_opts so = {.seed = opts->seed,
                      .trials = opts->trials,
                      .threads = opts->threads,
                      /* the counts of x_n = b that estimate a lossy verifier's bias */
                      .want_positions = !claims && m->chain && m->T <= ((size_t)1 << 24) / m->V,
                      .want_per_trial = opts->paired,
                      .coupled = opts->paired,
                      .progress = opts->progress,
                      .progress_ctx = opts->progress_ctx,
                      .time_limit = opts->time_limit,
                      .target_stderr = opts->target_stderr,
                      .want_rb = opts->estimator != SD_RUN_PLAIN,
                      .kernel_max_bytes = opts->kernel_max_bytes,
                      .want_tokens = opts->want_tokens};
    /* On stored rows the exact values come first: then, if the kernel
     * holds copies of what it reads and nothing after the run reads the
     * rows (no per-position counts), the caller may free them once the
     * kernel's tables are built. */
    int exact_done = m->chain != NULL;
    if (exact_done)
        S_exact_point(m, vt, par, out);
    if (m->chain && !so.want_positions && opts->release_rows) {
        so.kernel_ready = opts->release_rows;
        so.kernel_ready_ctx = opts->release_ctx;
    }
    sd_sim_job job = {vt, m, par};
    int rc = opts->sim ? opts->sim(opts->sim_ctx, &job, &so, &out->sim, err) : sd_sim_run_job(&job, &so, &out->sim, err);
    if (rc)
        return rc;
    /* (rejections.n = 0: an MPI rank other than 0, which holds no merged result) */
    if (opts->estimator == SD_RUN_RB && out->sim.rejections.n > 0 && !sd_sim_has_rb(&out->sim)) {
        out->no_rb = 1;
        rc = sd_error_set(err, SD_EUSAGE, "--estimator rb: --algo %s (kernel %s) gives no Rao-Blackwellised "
                          "estimate of its rejections; use --estimator plain", vt->name, out->sim.kernel);
        sd_sim_result_free(&out->sim);
        return rc;
    }
    out->rb = sd_sim_has_rb(&out->sim);
#ifdef _OPENMP
    out->threads = opts->threads ? opts->threads : (unsigned)omp_get_num_procs();
#else
    out->threads = 1;
#endif
    if (!exact_done) /* a streamed chain: from the run's pass (its memo) */
        S_exact_point(m, vt, par, out);
    /* A lossy verifier's per-token bias: exact where the laws of its
     * tokens are computable, else estimated from the run's counts. */
    if (so.want_positions && sd_bias_exact(vt, m->chain, par, NULL, &out->bias_exact, &out->bias_n, NULL)) {
        out->bias_exact = NAN;
        if (out->sim.pos_counts &&
            sd_bias_estimate_counts(out->sim.pos_counts, out->sim.trials, m->chain, &out->bias_est, NULL))
            out->bias_est.value = NAN;
    }
    return SD_OK;
}

void sd_run_result_free(sd_run_result *r)
{
    sd_sim_result_free(&r->sim);
}

void sd_run_tokens_per_call(const sd_sim_result *r, double *tpc, double *se, double *lo, double *hi)
{
    double m = r->target_calls.mean, s = sd_welford_stderr(&r->target_calls), clo, chi;
    sd_welford_ci95(&r->target_calls, &clo, &chi);
    *tpc = (double)r->T / m;
    *se = (double)r->T * s / (m * m);
    *lo = (double)r->T / chi;
    *hi = clo > 0.0 ? (double)r->T / clo : INFINITY;
}

/* The per-trial value of quantity q. */
static double S_trial_value(const sd_trial *t, int q)
{
    switch (q) {
    case SD_RUN_PAIRED_REJ: return (double)t->rejections;
    case SD_RUN_PAIRED_CALLS: return (double)t->target_calls;
    case SD_RUN_PAIRED_REJ_RB: return t->rb_rejections;
    default: return t->rb_target_calls;
    }
}

int sd_run_paired(const sd_run_result *a, const sd_run_result *b, sd_run_paired_stat out[SD_RUN_PAIRED_N])
{
    if (!a->sim.per_trial || !b->sim.per_trial || a->sim.trials != b->sim.trials)
        return SD_EUSAGE;
    for (int q = 0; q < SD_RUN_PAIRED_N; q++) {
        if (q >= SD_RUN_PAIRED_REJ_RB && !(a->rb && b->rb)) { /* --estimator plain, or none given */
            out[q] = (sd_run_paired_stat){NAN, NAN, NAN, NAN, NAN};
            continue;
        }
        sd_welford d, wa, wb;
        sd_welford_init(&d);
        sd_welford_init(&wa);
        sd_welford_init(&wb);
        for (uint64_t i = 0; i < a->sim.trials; i++) {
            double x = S_trial_value(&a->sim.per_trial[i], q), y = S_trial_value(&b->sim.per_trial[i], q);
            sd_welford_add(&d, y - x);
            sd_welford_add(&wa, x);
            sd_welford_add(&wb, y);
        }
        sd_run_paired_stat *o = &out[q];
        o->diff = d.mean;
        o->se = sd_welford_stderr(&d);
        sd_welford_ci95(&d, &o->lo, &o->hi);
        double sa = sd_welford_stderr(&wa), sb = sd_welford_stderr(&wb);
        o->se_unpaired = sqrt(sa * sa + sb * sb);
    }
    return SD_OK;
}

const char *sd_run_coupling(const sd_run_result *a, const sd_run_result *b)
{
    return strcmp(a->sim.kernel, SD_PAIRED_KERNEL_NAME) == 0 && strcmp(b->sim.kernel, SD_PAIRED_KERNEL_NAME) == 0
               ? "output-first"
               : "common-seed";
}
