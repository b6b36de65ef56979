/* sd_sim.c — the Monte-Carlo driver (sd_sim.h). */
#include "sd_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../src/sd_dist.h"
#include "../src/sd_exact.h"

void sd_params_defaults(sd_params *par)
{
    memset(par, 0, sizeof *par);
    par->gamma = 0;
    par->M = 2;
    par->k = 2;
    par->eps = 0.0;
    par->residual = SD_RESIDUAL_OPT;
    par->tp = 0.5;
    par->fp = 0.0;
    par->plan = SD_PLAN_KSEQ;
}

int sd_sim_trial(const sd_verifier_type *vt, void *state, const sd_chain *c,
                 const sd_params *par, uint64_t seed, uint64_t trial,
                 size_t *tokens, sd_trial *out, double *hist,
                 sd_welford *acc, sd_error *err)
{
    sd_stream rng;
    sd_stream_init(&rng, seed, trial);
    sd_trial tr = {0, 0, 0};
    /* The prompt token x_0 ~ init is the stream's first uniform. */
    tokens[0] = sd_dist_sample(c->init, c->V, 1.0, sd_stream_uniform(&rng));
    if (vt->begin)
        vt->begin(state);
    for (size_t n = 1; n <= c->T;) {
        sd_iter it = {0, 0, 0, 1};
        int rc = vt->step(state, c, par, &rng, n, tokens[n - 1], tokens + n, &it, err);
        if (rc)
            return rc;
        if (it.emitted < 1 || it.emitted > c->T - n + 1 || it.accepted > it.emitted)
            return sd_error_set(err, SD_EINTERNAL,
                                "verifier %s emitted %zu tokens (accepted %zu) at position %zu of %zu",
                                vt->name, it.emitted, it.accepted, n, c->T);
        tr.rejections += it.rejected ? 1u : 0u;
        tr.target_calls += it.target_calls;
        tr.iterations++;
        if (hist)
            hist[it.accepted] += 1.0;
        if (acc)
            sd_welford_add(acc, (double)it.accepted);
        n += it.emitted;
    }
    *out = tr;
    return SD_OK;
}

/* One block's statistics; merged in block order. */
typedef struct {
    sd_welford rej, calls, acc;
} S_block;

int sd_sim_run(const sd_verifier_type *vt, const sd_chain *c,
               const sd_params *par, const sd_sim_opts *opts,
               sd_sim_result *res, sd_error *err)
{
    size_t V = c->V, T = c->T;
    memset(res, 0, sizeof *res);
    if (opts->trials == 0)
        return sd_error_set(err, SD_EUSAGE, "--trials must be >= 1");
    if (opts->want_positions && (T > ((size_t)1 << 24) / V))
        return sd_error_set(err, SD_ETOOBIG, "per-position counts need T*V = %zu*%zu cells; limit 2^24", T, V);
    uint64_t nblocks = (opts->trials + SD_SIM_BLOCK - 1) / SD_SIM_BLOCK;
    if (nblocks > SIZE_MAX / sizeof(S_block))
        return sd_error_set(err, SD_ETOOBIG, "--trials %llu is too many", (unsigned long long)opts->trials);
    S_block *blocks = calloc((size_t)nblocks, sizeof *blocks);
    res->accept_hist = calloc(T + 1, sizeof *res->accept_hist);
    if (opts->want_positions)
        res->pos_counts = calloc(T * V, sizeof *res->pos_counts);
    if (!blocks || !res->accept_hist || (opts->want_positions && !res->pos_counts)) {
        free(blocks);
        sd_sim_result_free(res);
        return sd_error_set(err, SD_ENOMEM, "out of memory for %llu trials", (unsigned long long)opts->trials);
    }
    res->trials = opts->trials;
    res->seed = opts->seed;
    res->V = V;
    res->T = T;

    int threads = 1;
#ifdef _OPENMP
    threads = opts->threads ? (int)opts->threads : omp_get_num_procs();
    if ((uint64_t)threads > nblocks)
        threads = (int)nblocks;
#endif
    volatile int failed = 0;
    sd_error first_err;
    sd_error_clear(&first_err);
    uint64_t done_blocks = 0;

#pragma omp parallel num_threads(threads)
    {
        void *state = NULL;
        sd_error lerr;
        sd_error_clear(&lerr);
        size_t *tokens = malloc((T + 1) * sizeof *tokens);
        double *hist = calloc(T + 1, sizeof *hist);
        double *pos = opts->want_positions ? calloc(T * V, sizeof *pos) : NULL;
        int rc = (!tokens || !hist || (opts->want_positions && !pos))
                     ? sd_error_set(&lerr, SD_ENOMEM, "out of memory")
                     : vt->alloc(&state, c, par, &lerr);
        if (rc) {
#pragma omp critical(sd_sim_err)
            if (!failed) {
                failed = 1;
                first_err = lerr;
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nblocks; b++) {
            if (failed)
                continue;
            S_block *blk = &blocks[b];
            sd_welford_init(&blk->rej);
            sd_welford_init(&blk->calls);
            sd_welford_init(&blk->acc);
            uint64_t lo = b * SD_SIM_BLOCK, hi = lo + SD_SIM_BLOCK;
            if (hi > opts->trials)
                hi = opts->trials;
            for (uint64_t t = lo; t < hi && !failed; t++) {
                sd_trial tr;
                rc = sd_sim_trial(vt, state, c, par, opts->seed, t, tokens, &tr, hist,
                                  &blk->acc, &lerr);
                if (rc) {
#pragma omp critical(sd_sim_err)
                    if (!failed) {
                        failed = 1;
                        first_err = lerr;
                    }
                    break;
                }
                sd_welford_add(&blk->rej, (double)tr.rejections);
                sd_welford_add(&blk->calls, (double)tr.target_calls);
                if (pos)
                    for (size_t n = 1; n <= T; n++)
                        pos[(n - 1) * V + tokens[n]] += 1.0;
            }
#pragma omp atomic
            done_blocks++;
#ifdef _OPENMP
            if (opts->progress && omp_get_thread_num() == 0)
#else
            if (opts->progress)
#endif
            {
                uint64_t d;
#pragma omp atomic read
                d = done_blocks;
                uint64_t trials_done = d * SD_SIM_BLOCK;
                opts->progress(opts->progress_ctx,
                               trials_done < opts->trials ? trials_done : opts->trials,
                               opts->trials);
            }
        }
        /* Integer-valued counts: their sums are exact in any order. */
#pragma omp critical(sd_sim_merge)
        {
            for (size_t j = 0; j <= T; j++)
                res->accept_hist[j] += hist[j];
            if (pos)
                for (size_t i = 0; i < T * V; i++)
                    res->pos_counts[i] += pos[i];
        }
        if (state && vt->free)
            vt->free(state);
        free(tokens);
        free(hist);
        free(pos);
    }
    if (failed) {
        free(blocks);
        sd_sim_result_free(res);
        if (err)
            *err = first_err;
        return first_err.code ? (int)first_err.code : SD_EINTERNAL;
    }
    sd_welford_init(&res->rejections);
    sd_welford_init(&res->target_calls);
    sd_welford_init(&res->accepted);
    for (uint64_t b = 0; b < nblocks; b++) {
        sd_welford_merge(&res->rejections, &blocks[b].rej);
        sd_welford_merge(&res->target_calls, &blocks[b].calls);
        sd_welford_merge(&res->accepted, &blocks[b].acc);
    }
    res->iterations = res->accepted.n;
    free(blocks);
    return SD_OK;
}

void sd_sim_result_free(sd_sim_result *res)
{
    free(res->accept_hist);
    free(res->pos_counts);
    res->accept_hist = NULL;
    res->pos_counts = NULL;
}

double sd_sim_position_tv(const sd_sim_result *res, const sd_chain *c)
{
    if (!res->pos_counts)
        return NAN;
    size_t V = c->V, T = c->T;
    double *Q = malloc((T + 1) * V * sizeof *Q);
    if (!Q)
        return NAN;
    sd_exact_target_marginals(c, Q);
    double worst = 0.0, n = (double)res->trials;
    for (size_t t = 1; t <= T; t++) {
        double tv = 0.0;
        for (size_t b = 0; b < V; b++)
            tv += fabs(res->pos_counts[(t - 1) * V + b] / n - Q[t * V + b]);
        tv *= 0.5;
        if (tv > worst)
            worst = tv;
    }
    free(Q);
    return worst;
}
