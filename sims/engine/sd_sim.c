/* sd_sim.c — the Monte-Carlo driver (sd_sim.h). */
#include "sd_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <time.h>

#include "../../src/sd_dist.h"
#include "sd_paired.h"
#include "sd_params.h"
#include "../../src/sd_exact.h"
#include "../../src/sd_mem.h"

/* The status of a verifier's alloc or step (`what`) that returned rc != SD_OK:
 * its own error when it set one, else SD_EINTERNAL saying so (a plugin that
 * returns a failure without sd_error_set, or a number that is no sd_status,
 * made the command print "simdec: success" and exit 0). */
static int S_verifier_failed(const sd_verifier_type *vt, const char *what, int rc, sd_error *err)
{
    if (err && err->code != SD_OK)
        return err->code;
    return sd_error_set(err, SD_EINTERNAL, "verifier %s: its %s returned %d without an error (sd_error_set)",
                        vt->name, what, rc);
}

int sd_sim_trial_stop(const sd_verifier_type *vt, void *state, const sd_chain *c,
                      const sd_params *par, uint64_t seed, uint64_t trial, const sd_sim_stop *stop,
                      size_t *tokens, sd_trial *out, double *hist, sd_welford *acc, sd_error *err)
{
    sd_stream rng;
    sd_stream_init(&rng, seed, trial);
    sd_trial tr = {0, 0, 0, 0, 0, 0.0, NAN};
    size_t L = stop && stop->L ? stop->L : c->T;
    /* The prompt token x_0 ~ init is the stream's first uniform. */
    tokens[0] = stop && stop->fixed_prev ? stop->prev
                                         : sd_dist_sample(c->init, c->V, 1.0, sd_stream_uniform(&rng));
    if (vt->begin)
        vt->begin(state);
    for (size_t n = 1; n <= L;) {
        sd_iter it = {0, 0, 0, 1, NAN};
        int rc = vt->step(state, c, par, &rng, n, tokens[n - 1], tokens + n, &it, err);
        if (rc)
            return S_verifier_failed(vt, "step", rc, err);
        if (it.emitted < 1 || it.emitted > c->T - n + 1 || it.accepted > it.emitted)
            return sd_error_set(err, SD_EINTERNAL,
                                "verifier %s emitted %zu tokens (accepted %zu) at position %zu of %zu",
                                vt->name, it.emitted, it.accepted, n, c->T);
        /* A token outside the vocabulary would index the next row and the
         * caller's tables out of bounds (a plugin's bug must not crash). */
        for (size_t j = 0; j < it.emitted; j++)
            if (tokens[n + j] >= c->V)
                return sd_error_set(err, SD_EINTERNAL,
                                    "verifier %s emitted token %zu at position %zu; expected 0..%zu",
                                    vt->name, tokens[n + j], n + j, c->V - 1);
        tr.rejections += it.rejected ? 1u : 0u;
        tr.target_calls += it.target_calls;
        tr.iterations++;
        tr.accepted += it.accepted;
        tr.emitted += it.emitted;
        tr.rb_rejections += it.rb_rejected; /* NaN stays NaN: no estimate */
        if (hist)
            hist[it.accepted] += 1.0;
        if (acc)
            sd_welford_add(acc, (double)it.accepted);
        n += it.emitted;
        if (stop && stop->first_iteration)
            break;
    }
    *out = tr;
    return SD_OK;
}

int sd_sim_trial(const sd_verifier_type *vt, void *state, const sd_chain *c,
                 const sd_params *par, uint64_t seed, uint64_t trial,
                 size_t *tokens, sd_trial *out, double *hist,
                 sd_welford *acc, sd_error *err)
{
    return sd_sim_trial_stop(vt, state, c, par, seed, trial, NULL, tokens, out, hist, acc, err);
}

int sd_sim_trial_until(const sd_verifier_type *vt, void *state, const sd_chain *c,
                       const sd_params *par, uint64_t seed, uint64_t trial, size_t L,
                       size_t *tokens, sd_trial *out, double *hist,
                       sd_welford *acc, sd_error *err)
{
    sd_sim_stop st = {L, 0, 0, 0};
    return sd_sim_trial_stop(vt, state, c, par, seed, trial, &st, tokens, out, hist, acc, err);
}

/* --- the engine --------------------------------------------------------
 *
 * Blocks are claimed in increasing order from a shared counter, so the
 * blocks started always form a prefix; every block started is finished.
 * Each block's statistics are Welford accumulators over its trials in trial
 * order; they are merged in block order at the end (Chan et al.), and the
 * integer-valued counts (histogram, positions, cells) are summed exactly. */

typedef struct {
    const sd_sim_job *job;
    const sd_sim_opts *opts;
    const sd_kernel_type *kt; /* the kernel that runs, or NULL (generic step) */
    void *plan;
    size_t V, T, ncells;
    sd_trial *per_trial;    /* the result's records, or NULL */
    uint32_t *tokens;       /* the result's [trials][want_tokens], or NULL */
} S_run;

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

/* Per-thread scratch: verifier state or kernel work, tokens, and the
 * thread's integer-valued counts. */
typedef struct {
    void *state, *work;
    size_t *tokens;
    size_t *ktok;           /* a kernel's rows x_0..x_T of ktok_trials trials (want_tokens) */
    size_t ktok_trials;
    double *hist, *pos, *cells;
} S_scratch;

/* A kernel feeding want_tokens writes whole rows x_0..x_T of the trials it
 * runs: it runs in chunks of at most this many tokens' worth of trials. */
#define S_KTOK_MAX ((size_t)1 << 20)

/* x_1..x_k of trial t from a row x_0..x_T into the result. */
static void S_tokens_keep(const S_run *run, uint64_t t, const size_t *row)
{
    size_t k = run->opts->want_tokens;
    uint32_t *dst = run->tokens + (size_t)t * k;
    for (size_t n = 1; n <= k; n++)
        dst[n - 1] = (uint32_t)row[n];
}

/* Runs one block b into *blk, adding counts to the scratch's arrays. */
static int S_block_run(const S_run *run, const S_scratch *sc, uint64_t b, sd_sim_block *blk,
                       sd_error *err)
{
    const sd_sim_opts *o = run->opts;
    const size_t V = run->V, T = run->T, L = o->stop.L;
    sd_welford_init(&blk->rej);
    sd_welford_init(&blk->calls);
    sd_welford_init(&blk->acc);
    sd_welford_init(&blk->rb);
    uint64_t lo = b * SD_SIM_BLOCK, hi = lo + SD_SIM_BLOCK;
    if (hi > o->trials)
        hi = o->trials;
    if (run->kt) { /* a kernel: the same observations, in trial order */
        sd_observe obs = {.L = L, .first_iteration = o->stop.first_iteration, .rej = &blk->rej,
                          .calls = &blk->calls, .acc = &blk->acc, .hist = sc->hist, .pos = sc->pos,
                          .cells = sc->cells, .tokens = sc->ktok,
                          .per_trial = run->per_trial ? run->per_trial + lo : NULL,
                          .rb = o->want_rb && (run->kt->supports & SD_OBS_RB) ? &blk->rb : NULL};
        if (!run->tokens) {
            run->kt->run(run->plan, sc->work, o->seed, lo, hi, &obs);
        } else {
            /* Consecutive chunks: the same observations in the same trial order. */
            for (uint64_t c0 = lo; c0 < hi; c0 += sc->ktok_trials) {
                uint64_t c1 = hi - c0 < sc->ktok_trials ? hi : c0 + sc->ktok_trials;
                obs.per_trial = run->per_trial ? run->per_trial + c0 : NULL;
                run->kt->run(run->plan, sc->work, o->seed, c0, c1, &obs);
                for (uint64_t t = c0; t < c1; t++)
                    S_tokens_keep(run, t, sc->ktok + (size_t)(t - c0) * (T + 1));
            }
        }
        if (o->want_rb && !(run->kt->supports & SD_OBS_RB))
            blk->rb = (sd_welford){(double)(hi - lo), NAN, NAN}; /* no estimate from this kernel */
        return SD_OK;
    }
    const sd_sim_job *job = run->job;
    const sd_chain *c = job->model->chain;
    for (uint64_t t = lo; t < hi; t++) {
        sd_trial tr;
        int rc = sd_sim_trial_stop(job->vt, sc->state, c, job->par, o->seed, t, &o->stop, sc->tokens,
                                   &tr, sc->hist, &blk->acc, err);
        if (rc)
            return rc;
        sd_welford_add(&blk->rej, (double)tr.rejections);
        sd_welford_add(&blk->calls, (double)tr.target_calls);
        if (o->want_rb)
            sd_welford_add(&blk->rb, tr.rb_rejections);
        if (run->per_trial)
            run->per_trial[t] = tr;
        if (run->tokens)
            S_tokens_keep(run, t, sc->tokens);
        if (sc->pos)
            for (size_t n = 1; n <= T; n++)
                sc->pos[(n - 1) * V + sc->tokens[n]] += 1.0;
        if (sc->cells) {
            size_t k = 0;
            for (size_t i = 1; i <= L; i++)
                k = k * V + sc->tokens[i];
            sc->cells[k] += 1.0;
        }
    }
    return SD_OK;
}

static int S_scratch_alloc(const S_run *run, S_scratch *sc, sd_error *err)
{
    const size_t V = run->V, T = run->T;
    const sd_sim_opts *o = run->opts;
    memset(sc, 0, sizeof *sc);
    sc->tokens = malloc((T + 1) * sizeof *sc->tokens);
    sc->hist = calloc(T + 1, sizeof *sc->hist);
    if (o->want_positions)
        sc->pos = calloc(T * V, sizeof *sc->pos);
    if (o->want_cells)
        sc->cells = calloc(run->ncells, sizeof *sc->cells);
    if (!sc->tokens || !sc->hist || (o->want_positions && !sc->pos) || (o->want_cells && !sc->cells))
        return sd_error_set(err, SD_ENOMEM, "out of memory for a worker thread");
    if (run->kt && o->want_tokens) {
        sc->ktok_trials = S_KTOK_MAX / (T + 1) ? S_KTOK_MAX / (T + 1) : 1;
        if (!(sc->ktok = malloc(sc->ktok_trials * (T + 1) * sizeof *sc->ktok)))
            return sd_error_set(err, SD_ENOMEM, "out of memory for a worker thread's tokens");
    }
    if (run->kt)
        return run->kt->work_new(run->plan, &sc->work, err);
    int rc = run->job->vt->alloc(&sc->state, run->job->model->chain, run->job->par, err);
    return rc ? S_verifier_failed(run->job->vt, "alloc", rc, err) : SD_OK;
}

static void S_scratch_free(const S_run *run, S_scratch *sc)
{
    if (sc->state && run->job->vt->free)
        run->job->vt->free(sc->state);
    if (sc->work)
        run->kt->work_free(sc->work);
    free(sc->tokens);
    free(sc->ktok);
    free(sc->hist);
    free(sc->pos);
    free(sc->cells);
}

/* Adds (sign +1) or takes back (-1) a thread's counts. */
static void S_counts_add(const S_run *run, const S_scratch *sc, double sign, double *hist,
                         double *pos, double *cells)
{
    for (size_t j = 0; j <= run->T && hist; j++)
        hist[j] += sign * sc->hist[j];
    if (pos && sc->pos)
        for (size_t i = 0; i < run->T * run->V; i++)
            pos[i] += sign * sc->pos[i];
    if (cells && sc->cells)
        for (size_t i = 0; i < run->ncells; i++)
            cells[i] += sign * sc->cells[i];
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
 * hist/pos/cells.  With early stopping (stoppable), *nrun receives the
 * number of blocks (from lo) whose results count. */
static int S_pass_run(const S_run *run, uint64_t lo, uint64_t hi, int stoppable, sd_sim_block *blocks,
                      double *hist, double *pos, double *cells, uint64_t *nrun, uint64_t *nclaimed,
                      int *why, sd_error *err)
{
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
            if (S_block_run(run, &sc, b, &blocks[b - lo], &lerr)) {
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
        if (sc.hist)
            S_counts_add(run, &sc, 1.0, hist, pos, cells);
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

/* The counts of blocks [lo, hi) are taken back out of hist/pos/cells: they
 * were run past the stopping point (integers: exact). */
static int S_discard(const S_run *run, uint64_t lo, uint64_t hi, double *hist, double *pos,
                     double *cells, sd_error *err)
{
    S_scratch sc;
    int rc = S_scratch_alloc(run, &sc, err);
    sd_sim_block blk;
    for (uint64_t b = lo; b < hi && !rc; b++)
        rc = S_block_run(run, &sc, b, &blk, err);
    if (!rc)
        S_counts_add(run, &sc, -1.0, hist, pos, cells);
    S_scratch_free(run, &sc);
    return rc;
}

uint64_t sd_sim_block_count(uint64_t trials)
{
    return trials / SD_SIM_BLOCK + (trials % SD_SIM_BLOCK != 0);
}

size_t sd_sim_cells(size_t V, size_t L, size_t max)
{
    size_t cells = 1;
    for (size_t i = 0; i < L; i++) {
        if (cells > max / V)
            return 0;
        cells *= V;
    }
    return cells;
}

static int S_check_job(const sd_sim_job *job, const sd_sim_opts *opts, size_t *V, size_t *T,
                       size_t *ncells, sd_error *err)
{
    *V = job->model->V;
    *T = job->model->T;
    *ncells = 0;
    if (opts->trials == 0)
        return sd_error_set(err, SD_EUSAGE, "--trials must be >= 1");
    if (opts->stop.L > *T)
        return sd_error_set(err, SD_EUSAGE, "--L %zu: expected 1..%zu (the horizon)", opts->stop.L, *T);
    if (opts->stop.fixed_prev && opts->stop.prev >= *V)
        return sd_error_set(err, SD_EUSAGE, "start token %zu: expected 0..%zu", opts->stop.prev, *V - 1);
    if (opts->want_positions && (*T > ((size_t)1 << 24) / *V))
        return sd_error_set(err, SD_ETOOBIG, "per-position counts need T*V = %zu*%zu cells; limit 2^24", *T, *V);
    if (opts->want_cells) {
        if (opts->stop.L == 0)
            return sd_error_set(err, SD_EUSAGE, "a table of cells needs a stop after x_L (L >= 1)");
        if (!(*ncells = sd_sim_cells(*V, opts->stop.L, SD_SIM_MAX_CELLS)))
            return sd_error_set(err, SD_ETOOBIG,
                                "--L %zu: the joint law of %zu tokens has V^L = %zu^%zu cells; limit %zu",
                                opts->stop.L, opts->stop.L, *V, opts->stop.L, (size_t)SD_SIM_MAX_CELLS);
    }
    if (sd_sim_block_count(opts->trials) > SD_SIM_MAX_BLOCKS)
        return sd_error_set(err, SD_ETOOBIG,
                            "--trials %llu needs %llu blocks of statistics (%zu bytes each); limit %llu "
                            "blocks, i.e. --trials <= %llu",
                            (unsigned long long)opts->trials,
                            (unsigned long long)sd_sim_block_count(opts->trials), sizeof(sd_sim_block),
                            (unsigned long long)SD_SIM_MAX_BLOCKS,
                            (unsigned long long)SD_SIM_MAX_BLOCKS * SD_SIM_BLOCK);
    if (opts->want_tokens) {
        size_t horizon = opts->stop.L ? opts->stop.L : *T;
        if (opts->want_tokens > horizon || opts->stop.first_iteration)
            return sd_error_set(err, SD_EUSAGE, "--L %zu: expected 1..%zu (the tokens a trial emits)",
                                opts->want_tokens, horizon);
        if (*V > (size_t)UINT32_MAX + 1u)
            return sd_error_set(err, SD_ETOOBIG, "a table of sampled tokens needs V <= 2^32; V = %zu", *V);
        if (opts->trials > SD_SIM_MAX_TOKENS / opts->want_tokens)
            return sd_error_set(err, SD_ETOOBIG,
                                "sampled tokens: --trials %llu times %zu tokens each exceeds the limit "
                                "%llu tokens (%llu MiB); lower --trials or --L",
                                (unsigned long long)opts->trials, opts->want_tokens,
                                (unsigned long long)SD_SIM_MAX_TOKENS,
                                (unsigned long long)(SD_SIM_MAX_TOKENS * sizeof(uint32_t) >> 20));
    }
    if (opts->want_per_trial && opts->trials > ((size_t)1 << 26))
        return sd_error_set(err, SD_ETOOBIG, "per-trial records for %llu trials; limit 2^26",
                            (unsigned long long)opts->trials);
    return SD_OK;
}

int sd_sim_result_alloc(const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                        sd_error *err)
{
    size_t V, T, ncells;
    memset(res, 0, sizeof *res);
    int rc = S_check_job(job, opts, &V, &T, &ncells, err);
    if (rc)
        return rc;
    res->accept_hist = calloc(T + 1, sizeof *res->accept_hist);
    if (opts->want_positions)
        res->pos_counts = calloc(T * V, sizeof *res->pos_counts);
    if (opts->want_cells)
        res->cells = calloc(ncells, sizeof *res->cells);
    if (opts->want_per_trial)
        res->per_trial = calloc((size_t)opts->trials, sizeof *res->per_trial);
    if (opts->want_tokens)
        res->tokens = malloc((size_t)opts->trials * opts->want_tokens * sizeof *res->tokens);
    res->tokens_per_trial = opts->want_tokens;
    if (!res->accept_hist || (opts->want_positions && !res->pos_counts) ||
        (opts->want_cells && !res->cells) || (opts->want_per_trial && !res->per_trial) ||
        (opts->want_tokens && !res->tokens)) {
        sd_sim_result_free(res);
        return sd_error_set(err, SD_ENOMEM, "out of memory for %llu trials", (unsigned long long)opts->trials);
    }
    res->ncells = ncells;
    res->trials = res->trials_requested = opts->trials;
    res->seed = opts->seed;
    res->V = V;
    res->T = T;
    res->kernel = "generic";
    return SD_OK;
}

void sd_sim_result_merge(sd_sim_result *res, const sd_sim_block *blocks, uint64_t nblocks)
{
    sd_welford_init(&res->rejections);
    sd_welford_init(&res->target_calls);
    sd_welford_init(&res->accepted);
    sd_welford_init(&res->rejections_rb);
    for (uint64_t b = 0; b < nblocks; b++) {
        sd_welford_merge(&res->rejections_rb, &blocks[b].rb);
        sd_welford_merge(&res->rejections, &blocks[b].rej);
        sd_welford_merge(&res->target_calls, &blocks[b].calls);
        sd_welford_merge(&res->accepted, &blocks[b].acc);
    }
    res->iterations = res->accepted.n;
    res->trials = (uint64_t)res->rejections.n;
}

/* The observers a run asks for, as SD_OBS_* bits a kernel must support. */
static unsigned S_needs(const sd_sim_opts *o)
{
    unsigned need = o->stop.L ? 0u : SD_OBS_STATS;
    if (o->want_positions)
        need |= SD_OBS_POS;
    if (o->want_cells)
        need |= SD_OBS_CELLS;
    if (o->want_per_trial)
        need |= SD_OBS_PER_TRIAL;
    if (o->want_tokens)
        need |= SD_OBS_TOKENS;
    if (o->stop.first_iteration)
        need |= SD_OBS_FIRST;
    if (o->stop.fixed_prev)
        need |= 1u << 31; /* no kernel starts from a given x_0 */
    return need;
}

/* The names of the verifiers with a kernel that applies to model m at their
 * default parameters, space-separated, into buf. */
static void S_kernel_owners(const sd_model *m, char *buf, size_t len)
{
    const sd_verifier_type *vt;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL && used < len; i++) {
        sd_params par;
        sd_params_defaults(&par, vt);
        int ok = 0;
        for (size_t k = 0; vt->kernels && vt->kernels[k] && !ok; k++) {
            void *plan = NULL;
            if (vt->kernels[k]->plan_new(&plan, m, &par, 0, 1, NULL) == SD_OK) {
                vt->kernels[k]->plan_free(plan);
                ok = 1;
            }
        }
        if (ok && !(vt->flags & SD_VERIFIER_CONTROL)) {
            int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", vt->name);
            used += w > 0 ? (size_t)w : 0;
        }
    }
}

static void S_run_free(S_run *run)
{
    if (run->kt && run->plan)
        run->kt->plan_free(run->plan);
    run->plan = NULL;
}

/* Chooses what runs: the first of the verifier's kernels that applies to
 * the model and feeds what is asked, else the generic step (which needs
 * stored rows).  run->kernel names the choice. */
static int S_run_init(S_run *run, const sd_sim_job *job, const sd_sim_opts *opts, const char **kernel,
                      sd_error *err)
{
    memset(run, 0, sizeof *run);
    run->job = job;
    run->opts = opts;
    *kernel = "generic";
    size_t ncells;
    int rc = S_check_job(job, opts, &run->V, &run->T, &ncells, err);
    if (rc)
        return rc;
    run->ncells = ncells;
    unsigned need = S_needs(opts);
    /* Paired runs: the output-first path where the verifier has one. */
    if (opts->coupled && !opts->generic && (sd_paired_kernel.supports & need) == need &&
        sd_paired_plan_new(&run->plan, job->vt, job->model, job->par, 0, NULL) == SD_OK) {
        run->kt = &sd_paired_kernel;
        *kernel = sd_paired_kernel.name;
    }
    const sd_kernel_type *const *ks = job->vt->kernels;
    sd_error kerr; /* why the last kernel was refused */
    sd_error_clear(&kerr);
    for (size_t i = 0; ks && ks[i] && !opts->generic && !run->kt; i++) {
        if ((ks[i]->supports & need) != need)
            continue;
        void *plan = NULL;
        rc = ks[i]->plan_new(&plan, job->model, job->par, sd_mem_budget(opts->kernel_max_bytes), opts->threads,
                             &kerr);
        if (rc == SD_OK) {
            run->kt = ks[i];
            run->plan = plan;
            *kernel = ks[i]->name;
        } else if (rc == SD_ETOOBIG) {
            *kernel = SD_SIM_KERNEL_TOO_BIG;
        } else if (rc == SD_ENOMEM) {
            *kernel = "generic (no memory for the kernel)";
        }
    }
    if (!run->kt && job->model->stream && kerr.code == SD_ETOOBIG) {
        if (err)
            *err = kerr;
        return SD_ETOOBIG;
    }
    char names[256]; /* the verifiers that run on a model without stored rows */
    if (!run->kt && !job->model->chain)
        S_kernel_owners(job->model, names, sizeof names);
    if (!run->kt && job->model->zipf) {
        return sd_error_set(err, SD_EUSAGE,
                            "--algo %s cannot run on the Zipf model as asked: its step reads stored rows, "
                            "and only a verifier's own kernel runs there, for statistics only (no "
                            "per-trial records: no --paired or --samples; verifiers with one: %s)",
                            job->vt->name, names[0] ? names : "none");
    }
    if (!run->kt && job->model->backoff) {
        return sd_error_set(err, SD_EUSAGE,
                            "--algo %s cannot run on a sparse-row model (--arpa, or --p/--q at large V) as "
                            "asked: its step reads stored rows, and only a verifier's own kernel runs there, "
                            "for statistics only (no per-trial records; verifiers with one: %s)",
                            job->vt->name, names[0] ? names : "none");
    }
    if (!run->kt && job->model->stream) {
        /* The stored chain was not kept because it exceeds the memory budget. */
        return sd_error_set(err, SD_ETOOBIG,
                            "--algo %s needs the stored chain, and this one is streamed step by step (stored "
                            "it would take %zu bytes, V=%zu, T=%zu); on a streamed chain run computes "
                            "statistics only (no per-trial records, "
                            "--time-limit or --target-stderr), with: %s",
                            job->vt->name, sd_gen_chain_bytes(run->V, run->T), run->V, run->T,
                            names[0] ? names : "none");
    }
    if (run->kt && (run->kt->supports & SD_KERNEL_ALL) &&
        (opts->time_limit > 0.0 || opts->target_stderr > 0.0)) {
        S_run_free(run);
        return sd_error_set(err, SD_EUSAGE,
                            "--time-limit/--target-stderr stop after whole blocks of trials, but on a "
                            "streamed chain (kernel %s) every trial advances step by step together: "
                            "give --trials", run->kt->name);
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
    if (opts->want_cells || opts->want_per_trial || opts->want_tokens)
        return sd_error_set(err, SD_EUSAGE, "a block range runs with histogram and positions only");
    if (job->model->stream)
        return sd_error_set(err, SD_EUSAGE, "a streamed chain runs every trial at once, step by step, in "
                                            "one process: not split into block ranges");
    S_run run;
    const char *kernel;
    int rc = S_run_init(&run, job, opts, &kernel, err);
    if (rc)
        return rc;
    if (kernel_out)
        *kernel_out = kernel;
    uint64_t nrun, nclaimed;
    int why;
    if (hi > lo)
        rc = S_pass_run(&run, lo, hi, 0, blocks, hist, opts->want_positions ? pos : NULL, NULL, &nrun,
                        &nclaimed, &why, err);
    S_run_free(&run);
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
    const char *kernel = res->kernel;
    int have_run = 0;
    double t_setup = S_now();
    if (!blocks)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for %llu trials", (unsigned long long)opts->trials);
    if (!rc && !(rc = S_run_init(&run, job, opts, &kernel, err))) {
        have_run = 1;
        run.per_trial = res->per_trial;
        run.tokens = res->tokens;
    }
    if (!rc && run.kt && (run.kt->supports & SD_KERNEL_COPIES) && opts->kernel_ready)
        opts->kernel_ready(opts->kernel_ready_ctx);
    double t0 = S_now();
    uint64_t nrun = 0, nclaimed = 0;
    res->setup_seconds = t0 - t_setup;
    int why = SD_SIM_STOP_DONE;
    int stoppable = opts->time_limit > 0.0 || opts->target_stderr > 0.0;
    if (!rc && run.kt && (run.kt->supports & SD_KERNEL_ALL)) {
        /* a streamed model: every trial at once, step by step */
        const sd_kernel_all_type *ka = (const sd_kernel_all_type *)(const void *)run.kt;
        rc = ka->run_all(run.plan, opts, blocks, res->accept_hist, res->pos_counts, res->tokens, err);
        nrun = nclaimed = nblocks;
    } else if (!rc) {
        rc = S_pass_run(&run, 0, nblocks, stoppable, blocks, res->accept_hist, res->pos_counts, res->cells,
                        &nrun, &nclaimed, &why, err);
    }
    /* Blocks finished past the stopping prefix: take their counts out. */
    if (!rc && nclaimed > nrun)
        rc = S_discard(&run, nrun, nclaimed, res->accept_hist, res->pos_counts, res->cells, err);
    if (!rc) {
        res->kernel = kernel;
        sd_sim_result_merge(res, blocks, nrun);
        /* The trials run, also where a kernel fed no statistics (L > 0). */
        res->trials = nrun * SD_SIM_BLOCK < opts->trials ? nrun * SD_SIM_BLOCK : opts->trials;
        res->stop = why;
        res->seconds = S_now() - t0;
    }
    if (have_run)
        S_run_free(&run);
    free(blocks);
    if (rc)
        sd_sim_result_free(res);
    return rc;
}

int sd_sim_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
               const sd_sim_opts *opts, sd_sim_result *res, sd_error *err)
{
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, par};
    return sd_sim_run_job(&job, opts, res, err);
}

int sd_sim_has_rb(const sd_sim_result *res)
{
    return res->rejections_rb.n > 0 && isfinite(res->rejections_rb.mean);
}

void sd_sim_result_free(sd_sim_result *res)
{
    free(res->accept_hist);
    free(res->pos_counts);
    free(res->cells);
    free(res->per_trial);
    free(res->tokens);
    res->tokens = NULL;
    res->accept_hist = NULL;
    res->pos_counts = NULL;
    res->cells = NULL;
    res->per_trial = NULL;
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
