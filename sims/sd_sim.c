/* sd_sim.c — the Monte-Carlo driver (sd_sim.h). */
#include "sd_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <time.h>

#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_lazy.h"
#include "sd_token.h"

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
    return sd_sim_trial_until(vt, state, c, par, seed, trial, c->T, tokens, out, hist, acc, err);
}

int sd_sim_trial_until(const sd_verifier_type *vt, void *state, const sd_chain *c,
                       const sd_params *par, uint64_t seed, uint64_t trial, size_t L,
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
    for (size_t n = 1; n <= L;) {
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

/* --- the engine --------------------------------------------------------
 *
 * Blocks are claimed in increasing order from a shared counter, so the
 * blocks started always form a prefix; every block started is finished.
 * Each block's statistics are Welford accumulators over its trials in trial
 * order; they are merged in block order at the end (Chan et al.), and the
 * integer-valued counts (histogram, positions) are summed exactly. */

typedef struct {
    const sd_sim_job *job;
    const sd_sim_opts *opts;
    const sd_token_plan *plan; /* token on a stored chain, or NULL */
    size_t V, T;
} S_run;

static int S_trial(const S_run *run, void *state, size_t *tokens, uint64_t trial, sd_trial *tr,
                   double *hist, sd_welford *acc, sd_error *err)
{
    const sd_sim_job *job = run->job;
    if (job->lazy) {
        size_t rej, its;
        sd_token_lazy_trial(job->lazy, job->par->gamma, run->opts->seed, trial, tokens, &rej, &its,
                            hist, acc);
        tr->rejections = rej;
        tr->iterations = its;
        tr->target_calls = its;
        return SD_OK;
    }
    return sd_sim_trial(job->vt, state, job->chain, job->par, run->opts->seed, trial, tokens, tr,
                        hist, acc, err);
}

static double S_now(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

/* Shared state of one parallel pass over blocks [lo, hi). */
typedef struct {
    uint64_t lo, hi;
    uint64_t next;          /* next block to claim */
    uint64_t done;          /* blocks finished */
    int stop;               /* no new block is claimed once set */
    int failed;
    sd_error first_err;
    /* target_stderr: the prefix merged so far and the first prefix (in
     * blocks from lo) that met the target, or UINT64_MAX. */
    unsigned char *finished;
    uint64_t merged;
    sd_welford prefix;
    uint64_t stop_at;
    double t0;
    int time_stop;
} S_pass;

static void S_fail(S_pass *ps, const sd_error *e)
{
#pragma omp critical(sd_sim_err)
    if (!ps->failed) {
        ps->failed = 1;
        ps->first_err = *e;
    }
#pragma omp atomic write
    ps->stop = 1;
}

/* Per-thread scratch: verifier state or kernel work, tokens, histogram,
 * positions. */
typedef struct {
    void *state;
    sd_token_work *work;
    size_t *tokens;
    double *hist, *pos;
} S_scratch;

/* Runs one block b into *blk, adding counts to hist and pos. */
static int S_block_run(const S_run *run, const S_scratch *sc, uint64_t b, sd_sim_block *blk,
                       double *hist, double *pos, sd_error *err)
{
    const size_t V = run->V, T = run->T;
    sd_welford_init(&blk->rej);
    sd_welford_init(&blk->calls);
    sd_welford_init(&blk->acc);
    uint64_t lo = b * SD_SIM_BLOCK, hi = lo + SD_SIM_BLOCK;
    if (hi > run->opts->trials)
        hi = run->opts->trials;
    if (run->plan) { /* the lockstep kernel: same statistics, in trial order */
        sd_token_out o = {.rej = &blk->rej, .calls = &blk->calls, .acc = &blk->acc, .hist = hist,
                          .pos = pos};
        sd_token_plan_run(run->plan, sc->work, run->opts->seed, lo, hi, &o);
        return SD_OK;
    }
    void *state = sc->state;
    size_t *tokens = sc->tokens;
    for (uint64_t t = lo; t < hi; t++) {
        sd_trial tr;
        int rc = S_trial(run, state, tokens, t, &tr, hist, &blk->acc, err);
        if (rc)
            return rc;
        sd_welford_add(&blk->rej, (double)tr.rejections);
        sd_welford_add(&blk->calls, (double)tr.target_calls);
        if (pos)
            for (size_t n = 1; n <= T; n++)
                pos[(n - 1) * V + tokens[n]] += 1.0;
    }
    return SD_OK;
}

static int S_scratch_alloc(const S_run *run, S_scratch *sc, sd_error *err)
{
    const size_t V = run->V, T = run->T;
    memset(sc, 0, sizeof *sc);
    sc->tokens = malloc((T + 1) * sizeof *sc->tokens);
    sc->hist = calloc(T + 1, sizeof *sc->hist);
    if (run->opts->want_positions)
        sc->pos = calloc(T * V, sizeof *sc->pos);
    if (!sc->tokens || !sc->hist || (run->opts->want_positions && !sc->pos))
        return sd_error_set(err, SD_ENOMEM, "out of memory for a worker thread");
    if (run->plan)
        return sd_token_work_new(run->plan, &sc->work, err);
    if (!run->job->lazy)
        return run->job->vt->alloc(&sc->state, run->job->chain, run->job->par, err);
    return SD_OK;
}

static void S_scratch_free(const S_run *run, S_scratch *sc)
{
    if (sc->state && run->job->vt->free)
        run->job->vt->free(sc->state);
    sd_token_work_free(sc->work);
    free(sc->tokens);
    free(sc->hist);
    free(sc->pos);
}

int sd_sim_threads(unsigned requested, uint64_t nblocks)
{
    int threads = 1;
#ifdef _OPENMP
    threads = requested ? (int)requested : omp_get_num_procs();
    if ((uint64_t)threads > nblocks)
        threads = (int)nblocks;
#else
    (void)requested;
    (void)nblocks;
#endif
    return threads < 1 ? 1 : threads;
}

/* After block b (absolute) finished: the stopping rules. */
static void S_after_block(S_pass *ps, const S_run *run, const sd_sim_block *blocks, uint64_t b)
{
    const sd_sim_opts *o = run->opts;
    if (o->time_limit > 0.0 && S_now() - ps->t0 >= o->time_limit) {
#pragma omp atomic write
        ps->time_stop = 1;
#pragma omp atomic write
        ps->stop = 1;
    }
    if (o->target_stderr > 0.0) {
#pragma omp critical(sd_sim_prefix)
        {
            ps->finished[b - ps->lo] = 1;
            while (ps->stop_at == UINT64_MAX && ps->lo + ps->merged < ps->hi &&
                   ps->finished[ps->merged]) {
                sd_welford_merge(&ps->prefix, &blocks[ps->merged].rej);
                ps->merged++;
                /* at least two observations for a standard error */
                if (ps->prefix.n >= 2 && sd_welford_stderr(&ps->prefix) <= o->target_stderr)
                    ps->stop_at = ps->merged;
            }
            if (ps->stop_at != UINT64_MAX) {
#pragma omp atomic write
                ps->stop = 1;
            }
        }
    }
}

/* The parallel pass: blocks [lo, hi) into blocks[b - lo]; counts into
 * hist/pos.  With early stopping (stoppable), *nrun receives the number of
 * blocks (from lo) whose results count. */
static int S_pass_run(const S_run *run, uint64_t lo, uint64_t hi, int stoppable, sd_sim_block *blocks,
                      double *hist, double *pos, uint64_t *nrun, uint64_t *nclaimed, int *why,
                      sd_error *err)
{
    const size_t V = run->V, T = run->T;
    const sd_sim_opts *o = run->opts;
    S_pass ps;
    memset(&ps, 0, sizeof ps);
    ps.lo = lo;
    ps.hi = hi;
    ps.next = lo;
    ps.stop_at = UINT64_MAX;
    sd_welford_init(&ps.prefix);
    ps.t0 = S_now();
    if (stoppable && o->target_stderr > 0.0 && !(ps.finished = calloc(hi - lo, 1)))
        return sd_error_set(err, SD_ENOMEM, "out of memory for %llu blocks", (unsigned long long)(hi - lo));
    S_pass *pp = &ps;
    int threads = sd_sim_threads(o->threads, hi - lo);

#pragma omp parallel num_threads(threads)
    {
        S_scratch sc;
        sd_error lerr;
        sd_error_clear(&lerr);
        if (S_scratch_alloc(run, &sc, &lerr))
            S_fail(pp, &lerr);
        for (;;) {
            int stop;
#pragma omp atomic read
            stop = pp->stop;
            if (stop)
                break;
            uint64_t b;
#pragma omp atomic capture
            b = pp->next++;
            if (b >= hi)
                break;
            if (S_block_run(run, &sc, b, &blocks[b - lo], sc.hist, sc.pos, &lerr)) {
                S_fail(pp, &lerr);
                break;
            }
            uint64_t d;
#pragma omp atomic capture
            d = ++pp->done;
            if (stoppable)
                S_after_block(pp, run, blocks, b);
#ifdef _OPENMP
            if (o->progress && omp_get_thread_num() == 0)
#else
            if (o->progress)
#endif
            {
                uint64_t tr = (lo + d) * SD_SIM_BLOCK;
                o->progress(o->progress_ctx, tr < o->trials ? tr : o->trials, o->trials);
            }
        }
        /* Integer-valued counts: their sums are exact in any order. */
#pragma omp critical(sd_sim_merge)
        {
            for (size_t j = 0; j <= T && sc.hist; j++)
                hist[j] += sc.hist[j];
            if (sc.pos)
                for (size_t i = 0; i < T * V; i++)
                    pos[i] += sc.pos[i];
        }
        S_scratch_free(run, &sc);
    }
    free(ps.finished);
    if (ps.failed) {
        if (err)
            *err = ps.first_err;
        return ps.first_err.code ? (int)ps.first_err.code : SD_EINTERNAL;
    }
    uint64_t claimed = ps.next < hi ? ps.next : hi; /* every claimed block finished */
    *nrun = *nclaimed = claimed - lo;
    *why = SD_SIM_STOP_DONE;
    if (ps.stop_at != UINT64_MAX) {
        *nrun = ps.stop_at;
        *why = SD_SIM_STOP_STDERR;
    } else if (ps.time_stop && claimed < hi) {
        *why = SD_SIM_STOP_TIME;
    }
    return SD_OK;
}

/* The counts of blocks [lo, hi) are taken back out of hist/pos: they were
 * run past the stopping point (integers: exact). */
static int S_discard(const S_run *run, uint64_t lo, uint64_t hi, double *hist, double *pos,
                     sd_error *err)
{
    const size_t V = run->V, T = run->T;
    S_scratch sc;
    int rc = S_scratch_alloc(run, &sc, err);
    sd_sim_block blk;
    for (uint64_t b = lo; b < hi && !rc; b++)
        rc = S_block_run(run, &sc, b, &blk, sc.hist, sc.pos, err);
    if (!rc) {
        for (size_t j = 0; j <= T; j++)
            hist[j] -= sc.hist[j];
        if (pos)
            for (size_t i = 0; i < T * V; i++)
                pos[i] -= sc.pos[i];
    }
    S_scratch_free(run, &sc);
    return rc;
}

uint64_t sd_sim_block_count(uint64_t trials)
{
    return trials / SD_SIM_BLOCK + (trials % SD_SIM_BLOCK != 0);
}

static int S_check_job(const sd_sim_job *job, const sd_sim_opts *opts, size_t *V, size_t *T,
                       sd_error *err)
{
    if (job->lazy) {
        if (job->vt && strcmp(job->vt->name, "token") != 0)
            return sd_error_set(err, SD_EUSAGE,
                                "the on-demand model supports --algo token only, not '%s'", job->vt->name);
        *V = job->lazy->V;
        *T = job->lazy->T;
    } else {
        *V = job->chain->V;
        *T = job->chain->T;
    }
    if (opts->trials == 0)
        return sd_error_set(err, SD_EUSAGE, "--trials must be >= 1");
    if (opts->want_positions && (*T > ((size_t)1 << 24) / *V))
        return sd_error_set(err, SD_ETOOBIG, "per-position counts need T*V = %zu*%zu cells; limit 2^24", *T, *V);
    if (sd_sim_block_count(opts->trials) > SD_SIM_MAX_BLOCKS)
        return sd_error_set(err, SD_ETOOBIG,
                            "--trials %llu needs %llu blocks of statistics (%zu bytes each); limit %llu "
                            "blocks, i.e. --trials <= %llu",
                            (unsigned long long)opts->trials,
                            (unsigned long long)sd_sim_block_count(opts->trials), sizeof(sd_sim_block),
                            (unsigned long long)SD_SIM_MAX_BLOCKS,
                            (unsigned long long)SD_SIM_MAX_BLOCKS * SD_SIM_BLOCK);
    return SD_OK;
}

int sd_sim_result_alloc(const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                        sd_error *err)
{
    size_t V, T;
    memset(res, 0, sizeof *res);
    int rc = S_check_job(job, opts, &V, &T, err);
    if (rc)
        return rc;
    res->accept_hist = calloc(T + 1, sizeof *res->accept_hist);
    if (opts->want_positions)
        res->pos_counts = calloc(T * V, sizeof *res->pos_counts);
    if (!res->accept_hist || (opts->want_positions && !res->pos_counts)) {
        sd_sim_result_free(res);
        return sd_error_set(err, SD_ENOMEM, "out of memory for %llu trials", (unsigned long long)opts->trials);
    }
    res->trials = res->trials_requested = opts->trials;
    res->seed = opts->seed;
    res->V = V;
    res->T = T;
    res->kernel = job->lazy ? "token-lazy" : "generic";
    return SD_OK;
}

void sd_sim_result_merge(sd_sim_result *res, const sd_sim_block *blocks, uint64_t nblocks)
{
    sd_welford_init(&res->rejections);
    sd_welford_init(&res->target_calls);
    sd_welford_init(&res->accepted);
    for (uint64_t b = 0; b < nblocks; b++) {
        sd_welford_merge(&res->rejections, &blocks[b].rej);
        sd_welford_merge(&res->target_calls, &blocks[b].calls);
        sd_welford_merge(&res->accepted, &blocks[b].acc);
    }
    res->iterations = res->accepted.n;
    res->trials = (uint64_t)res->rejections.n;
}

/* The kernel for a job: the lockstep alias-table kernel for token-level SD
 * on a stored chain (when its tables fit), else the generic verifier loop;
 * *kernel names the choice. */
static int S_run_init(S_run *run, const sd_sim_job *job, const sd_sim_opts *opts, sd_token_plan **plan,
                      const char **kernel, sd_error *err)
{
    memset(run, 0, sizeof *run);
    run->job = job;
    run->opts = opts;
    *plan = NULL;
    *kernel = job->lazy ? "token-lazy" : "generic";
    int rc = S_check_job(job, opts, &run->V, &run->T, err);
    if (rc)
        return rc;
    if (!job->lazy && !opts->generic && job->vt == &sd_verifier_token) {
        rc = sd_token_plan_new(job->chain, job->par, SD_TOKEN_EXACT, opts->kernel_max_bytes,
                               opts->threads, plan, NULL);
        run->plan = rc ? NULL : *plan;
        *kernel = rc == SD_ETOOBIG ? SD_SIM_KERNEL_TOO_BIG
                  : rc             ? "generic (no memory for the token kernel)"
                                   : SD_SIM_KERNEL_TOKEN;
    }
    return SD_OK;
}

int sd_sim_run_blocks(const sd_sim_job *job, const sd_sim_opts *opts, uint64_t lo, uint64_t hi,
                      sd_sim_block *blocks, double *hist, double *pos, const char **kernel_out,
                      sd_error *err)
{
    if (lo > hi || hi > sd_sim_block_count(opts->trials))
        return sd_error_set(err, SD_EUSAGE, "block range [%llu, %llu) outside 0..%llu",
                            (unsigned long long)lo, (unsigned long long)hi,
                            (unsigned long long)sd_sim_block_count(opts->trials));
    S_run run;
    sd_token_plan *plan;
    const char *kernel;
    int rc = S_run_init(&run, job, opts, &plan, &kernel, err);
    if (rc)
        return rc;
    if (kernel_out)
        *kernel_out = kernel;
    uint64_t nrun, nclaimed;
    int why;
    if (hi > lo)
        rc = S_pass_run(&run, lo, hi, 0, blocks, hist, opts->want_positions ? pos : NULL, &nrun,
                        &nclaimed, &why, err);
    sd_token_plan_free(plan);
    return rc;
}

int sd_sim_run_job(const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                   sd_error *err)
{
    int rc = sd_sim_result_alloc(job, opts, res, err);
    if (rc)
        return rc;
    uint64_t nblocks = sd_sim_block_count(opts->trials);
    sd_sim_block *blocks = calloc((size_t)nblocks, sizeof *blocks);
    S_run run;
    sd_token_plan *plan = NULL;
    const char *kernel = res->kernel;
    if (!blocks)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for %llu trials", (unsigned long long)opts->trials);
    if (!rc)
        rc = S_run_init(&run, job, opts, &plan, &kernel, err);
    double t0 = S_now();
    uint64_t nrun = 0, nclaimed = 0;
    int why = SD_SIM_STOP_DONE;
    int stoppable = opts->time_limit > 0.0 || opts->target_stderr > 0.0;
    if (!rc)
        rc = S_pass_run(&run, 0, nblocks, stoppable, blocks, res->accept_hist, res->pos_counts,
                        &nrun, &nclaimed, &why, err);
    /* Blocks finished past the stopping prefix: take their counts out. */
    if (!rc && nclaimed > nrun)
        rc = S_discard(&run, nrun, nclaimed, res->accept_hist, res->pos_counts, err);
    if (!rc) {
        res->kernel = kernel;
        sd_sim_result_merge(res, blocks, nrun);
        res->stop = why;
        res->seconds = S_now() - t0;
    }
    sd_token_plan_free(plan);
    free(blocks);
    if (rc)
        sd_sim_result_free(res);
    return rc;
}

int sd_sim_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
               const sd_sim_opts *opts, sd_sim_result *res, sd_error *err)
{
    sd_sim_job job = {vt, c, NULL, par};
    return sd_sim_run_job(&job, opts, res, err);
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
