/* token_stream.c — the token kernel on a generated chain streamed step by
 * step (src/sd_model.h), for vocabularies whose stored chain (2·T·V²
 * doubles) or whose tables for every step ((T·V+1)·2^lgK·8 bytes) would
 * not fit in memory: 13.4 GB each at V = 4096, T = 50.
 *
 * Step-outer order.  The lockstep kernel of sims/kernels/kernel_token.c runs a group of
 * trials through positions 1..T with every step's tables built; here the
 * loop is turned inside out: for n = 1..T, the generator produces step n's
 * rows (sd_gen_stream, after step n-1's: one MT19937 stream), step n's V
 * alias tables and rejected masses are built from them
 * (sd_token_step_tables, the plan's own builder), ALL trials advance
 * through position n (sd_token_position, the plan's own lockstep code, on
 * per-trial arrays: x_{n-1}, drafts accepted j, rejections, the
 * Rao-Blackwellised sum, one end bit per position), and the step's rows and
 * tables are overwritten by the next step's.  Trial i draws uniform n of
 * its stream (seed, i) at position n as the plan does (sd_token.h; its
 * Philox block n/4 recomputed at each position), so its sequence (x_n, R_n) is the plan's; after position T
 * each trial's iterations are replayed from its end bits in trial order,
 * in the plan's groups of each block (sd_token_replay, the plan's replay),
 * so the statistics are the stored run's bit for bit, for any number of
 * threads.  Its law is therefore the token kernel's (Yin et al. 2024,
 * Alg. 1 and Theorem 1; the argument at the top of
 * sims/kernels/kernel_token.c), which `check` tests on stored chains; tests/test_stream.c holds the two runs to the same bytes.
 *
 * Memory: 2·V²·8 bytes of rows, V·2^lgK·8 of tables (268 MB each at
 * V = 4096), and 20 + 8·⌈T/64⌉ bytes per trial; the plan refuses more than
 * its bound before allocating (sd_token_stream_bytes).
 *
 * Exact values on the way.  Theorem 1 of Yin et al. 2024,
 *   E[N_rej] = Σ_n Σ_a Q_{n-1}(a) TV(p_n(.|a), q_n(.|a)),  Q_n = Q_{n-1} q_n,
 * and, for a finite draft length, the DP over (x_{n-1}, j) of
 * sd_exact_token_dp, only ever read step n's rows at position n: they run
 * forward beside the trials, in the same operations as the evaluators on a
 * stored chain (so the same bits), and are kept in the model's memo. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../../src/sd_dist.h"
#include "../../src/sd_exact.h"
#include "../../src/sd_rngbuf.h"
#include "../engine/sd_sim.h"
#include "../verifiers/sd_token.h"

#define S_CHUNK 1024 /* trials per lockstep chunk of one position */

/* --- exact values, forward ---------------------------------------------------- */

typedef struct {
    size_t V, T, G;     /* G = 0: Theorem 1; else the DP with draft length G */
    double *cur, *next; /* Theorem 1: Q_{n-1}, Q_n; the DP: F_n, F_{n+1} ([V][G+1]) */
    double rej, calls, last;
    int ok;             /* 0: refused (the DP's work bound) or out of memory */
} S_fwd;

static void S_fwd_init(S_fwd *f, size_t V, size_t T, size_t gamma, const double *init)
{
    memset(f, 0, sizeof *f);
    f->V = V;
    f->T = T;
    f->G = sd_draft_binding(gamma, T);
    if (f->G && (double)T * (double)V * (double)V * (double)(f->G + 1) > SD_EXACT_MAX_WORK)
        return; /* sd_exact_token_dp refuses it too */
    size_t cells = V * (f->G + 1);
    f->cur = calloc(cells, sizeof *f->cur);
    f->next = calloc(cells, sizeof *f->next);
    if (!f->cur || !f->next)
        return;
    for (size_t a = 0; a < V; a++)
        f->cur[a * (f->G + 1)] = init[a];
    f->ok = 1;
}

/* Position n with step n's rows (the operations of sd_exact_token). */
static void S_fwd_step(S_fwd *f, size_t n, double *p, double *q)
{
    if (!f->ok)
        return;
    const size_t V = f->V;
    if (f->G) {
        sd_exact_token_dp_step(p, q, V, f->G, f->cur, f->next, &f->rej, &f->calls);
    } else {
        /* step n as a one-step chain view */
        sd_chain c = {V, 1, 1, 1, f->cur, p, q};
        double term = 0.0;
        for (size_t a = 0; a < V; a++)
            if (f->cur[a] != 0.0)
                term += f->cur[a] * sd_dist_tv(p + a * V, q + a * V, V);
        f->rej += term;
        f->last = term;
        if (n == f->T)
            return;
        sd_exact_target_step(&c, 1, f->cur, f->next);
    }
    double *t = f->cur;
    f->cur = f->next;
    f->next = t;
}

/* Keeps the values in the model's memo (when the pass was not refused). */
static void S_fwd_keep(const S_fwd *f, sd_model_stream *ms, size_t gamma)
{
    if (!f->ok)
        return;
    ms->memo_ok = 1;
    ms->memo_gamma = gamma;
    ms->memo_rejections = f->rej;
    ms->memo_calls = f->G ? f->calls : f->rej + 1.0 - f->last;
}

static void S_fwd_free(S_fwd *f)
{
    free(f->cur);
    free(f->next);
    f->cur = f->next = NULL;
}

/* --- the plan ------------------------------------------------------------------ */

typedef struct {
    sd_model_stream *ms;
    size_t V, T, gamma, max_bytes;
    unsigned lgK, threads;
    sd_token_kind kind;
} S_plan;

size_t sd_token_stream_bytes(size_t V)
{
    if (V == 0 || V > ((size_t)1 << 23))
        return SIZE_MAX;
    size_t K = (size_t)1 << sd_token_lgK(V);
    return 2 * V * V * sizeof(double) + (V + 1) * K * sizeof(uint64_t) + V * sizeof(double);
}

size_t sd_token_stream_trial_bytes(size_t T)
{
    /* x_{n-1}, j, rejections (4 bytes each), the RB sum, ⌈T/64⌉ words of
     * end bits */
    return 3 * sizeof(uint32_t) + sizeof(double) + (T + 63) / 64 * sizeof(uint64_t);
}

static int S_plan_kind(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                       unsigned threads, sd_token_kind kind, sd_error *err)
{
    *plan = NULL;
    if (!m->stream)
        return SD_EUSAGE; /* not applicable: the rows are stored or computed */
    size_t bytes = sd_token_stream_bytes(m->V);
    if (max_bytes && bytes > max_bytes)
        return sd_error_set(err, SD_ETOOBIG,
                            "streamed token kernel: one step's rows and alias tables at V=%zu need %zu "
                            "bytes; memory budget %zu (--max-memory)", m->V, bytes, max_bytes);
    S_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the streamed token kernel");
    pl->ms = m->stream;
    pl->V = m->V;
    pl->T = m->T;
    pl->gamma = par->gamma;
    pl->max_bytes = max_bytes;
    pl->lgK = sd_token_lgK(m->V);
    pl->threads = threads;
    pl->kind = kind;
    *plan = pl;
    return SD_OK;
}

static int S_plan_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                      unsigned threads, sd_error *err)
{
    if (!sd_token_policy_fixed(par))
        return SD_EUSAGE; /* a draft policy: the generic step */
    return S_plan_kind(plan, m, par, max_bytes, threads, SD_TOKEN_EXACT, err);
}

static int S_plan_broken(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                         unsigned threads, sd_error *err)
{
    return S_plan_kind(plan, m, par, max_bytes, threads, SD_TOKEN_BROKEN_RESIDUAL, err);
}

static void S_plan_free(void *plan)
{
    free(plan);
}

/* --- one pass over the rows ------------------------------------------------------ */

/* The trials' state, [N] each; ends [words][N]. */
typedef struct {
    uint64_t N;
    uint32_t *prev, *j, *rej;
    double *rb;
    uint64_t *ends;
} S_trials;

static void S_trials_free(S_trials *s)
{
    free(s->prev);
    free(s->j);
    free(s->rej);
    free(s->rb);
    free(s->ends);
}

static int S_threads(unsigned requested)
{
#ifdef _OPENMP
    return requested ? (int)requested : omp_get_num_procs();
#else
    (void)requested;
    return 1;
#endif
}

/* Trials c0..c0+s-1 through position n (1..T). */
static void S_chunk(const S_plan *pl, S_trials *st, uint64_t seed, const uint64_t *tab, const double *tv,
                    size_t n, uint64_t c0, size_t s, uint64_t *ua, uint32_t *tokens, size_t k)
{
    const uint64_t N = st->N;
    const uint32_t gamma = (uint32_t)sd_draft_binding(pl->gamma, pl->T);
    /* uniform n: word n mod 4 of Philox block n/4, recomputed at each
     * position (no uniform kept per trial; the rows cost far more) */
    uint64_t *const w[4] = {ua, ua + S_CHUNK, ua + 2 * S_CHUNK, ua + 3 * S_CHUNK};
    sd_rngbuf_trials_hi(seed, n / 4, c0, s, w);
    sd_token_position(tab, tv, pl->lgK, gamma, s, w[n % 4], st->prev + c0, st->rej + c0, st->j + c0,
                      st->rb ? st->rb + c0 : NULL, st->ends + ((n - 1) / 64) * N + c0,
                      (unsigned)((n - 1) % 64), seed, c0, n);
    if (tokens && n <= k)
        for (size_t i = 0; i < s; i++)
            tokens[(c0 + i) * k + n - 1] = st->prev[c0 + i];
}

/* Position n of every trial, chunk by chunk over the threads; n = 0: x_0
 * from the init table and uniform 0 (itab), uniform 1 kept. */
static void S_position(const S_plan *pl, S_trials *st, uint64_t seed, const uint64_t *tab, const double *tv,
                       const uint64_t *itab, size_t n, int threads, uint32_t *tokens, size_t k)
{
    const uint64_t N = st->N, chunks = (N + S_CHUNK - 1) / S_CHUNK;
#pragma omp parallel num_threads(threads)
    {
        uint64_t ua[4 * S_CHUNK];
#pragma omp for schedule(static)
        for (uint64_t c = 0; c < chunks; c++) {
            uint64_t c0 = c * S_CHUNK;
            size_t s = N - c0 < S_CHUNK ? (size_t)(N - c0) : S_CHUNK;
            if (n > 0) {
                S_chunk(pl, st, seed, tab, tv, n, c0, s, ua, tokens, k);
                continue;
            }
            uint64_t *const w[4] = {ua, ua + S_CHUNK, ua + 2 * S_CHUNK, ua + 3 * S_CHUNK};
            sd_rngbuf_trials_hi(seed, 0, c0, s, w);
            for (size_t i = 0; i < s; i++)
                st->prev[c0 + i] = (uint32_t)(sd_token_draw_hi(itab, pl->lgK, ua[i], seed, c0 + i, 0) >> 1);
        }
    }
}

/* Each block's statistics from its trials' end bits, in trial order. */
static void S_replay_blocks(const S_plan *pl, const S_trials *st, const sd_sim_opts *o,
                            sd_sim_block *blocks, double *hist, int threads, int *bad)
{
    const uint64_t N = st->N, nb = sd_sim_block_count(N);
    const size_t T = pl->T, G = sd_token_group(T);
#pragma omp parallel num_threads(threads)
    {
        double *h = calloc(T + 1, sizeof *h);
        uint64_t *cnt = malloc(8 * (T + 1) * sizeof *cnt);
        if (!h || !cnt) {
#pragma omp atomic write
            *bad = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nb; b++) {
            if (!h || !cnt)
                continue;
            sd_sim_block *blk = &blocks[b];
            sd_welford_init(&blk->rej);
            sd_welford_init(&blk->calls);
            sd_welford_init(&blk->acc);
            sd_welford_init(&blk->rb);
            sd_observe obs = {.rej = &blk->rej, .calls = &blk->calls, .acc = &blk->acc, .hist = h,
                              .rb = o->want_rb ? &blk->rb : NULL};
            uint64_t hi = (b + 1) * SD_SIM_BLOCK < N ? (b + 1) * SD_SIM_BLOCK : N;
            for (uint64_t g0 = b * SD_SIM_BLOCK; g0 < hi; g0 += G) /* the plan's groups */
                sd_token_replay(T, N, st->ends, st->rej, st->rb, g0, hi - g0 < G ? hi - g0 : G, cnt, &obs);
        }
        /* integer-valued counts: exact in any order */
#pragma omp critical(sd_token_stream_hist)
        for (size_t a = 0; h && a <= T; a++)
            hist[a] += h[a];
        free(h);
        free(cnt);
    }
}

/* One pass over the model's rows: the forward exact values always, the
 * trials when st is not NULL. */
static int S_pass(const S_plan *pl, const sd_sim_opts *o, S_trials *st, sd_sim_block *blocks,
                  double *hist, double *pos, uint32_t *tokens, sd_error *err)
{
    const size_t V = pl->V, T = pl->T, K = (size_t)1 << pl->lgK;
    const int threads = S_threads(o ? o->threads : pl->threads);
    /* Small steps on one thread, as the plan builds small tables. */
    const int build_threads = V * K < ((size_t)1 << 18) ? 1 : threads;
    sd_gen_stream *g = NULL;
    double *p = malloc(V * V * sizeof *p), *q = malloc(V * V * sizeof *q), *init = malloc(V * sizeof *init);
    double *tv = malloc(V * sizeof *tv);
    uint64_t *tab = st ? sd_token_table_alloc(V * K * sizeof *tab) : NULL;
    uint64_t *itab = malloc(K * sizeof *itab);
    int rc = (!p || !q || !init || !tv || (st && !tab) || !itab)
                 ? sd_error_set(err, SD_ENOMEM, "out of memory for a step of the streamed model (V=%zu)", V)
                 : sd_gen_stream_new(&pl->ms->gen, &g, err);
    S_fwd fwd;
    memset(&fwd, 0, sizeof fwd);
    if (!rc) {
        sd_gen_stream_init(g, init);
        S_fwd_init(&fwd, V, T, pl->gamma, init);
        rc = sd_token_init_table(init, V, itab, err);
    }
    if (!rc && st)
        S_position(pl, st, o->seed, NULL, NULL, itab, 0, threads, NULL, 0);
    const uint64_t N = st ? st->N : 0;
    const size_t k = o ? o->want_tokens : 0;
    for (size_t n = 1; n <= T && !rc; n++) {
        if ((rc = sd_gen_stream_next(g, p, q, NULL, err)))
            break;
        S_fwd_step(&fwd, n, p, q);
        if (!st)
            continue;
        if ((rc = sd_token_step_tables(p, q, V, pl->kind, build_threads, tab, tv, err)))
            break;
        S_position(pl, st, o->seed, tab, tv, itab, n, threads, tokens, k);
        if (pos)
            for (uint64_t i = 0; i < N; i++)
                pos[(n - 1) * V + st->prev[i]] += 1.0;
    }
    if (!rc)
        S_fwd_keep(&fwd, pl->ms, pl->gamma);
    S_fwd_free(&fwd);
    int bad = 0;
    if (!rc && st)
        S_replay_blocks(pl, st, o, blocks, hist, threads, &bad);
    if (bad)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory replaying the trials");
    sd_gen_stream_free(g);
    free(p);
    free(q);
    free(init);
    free(tv);
    free(tab);
    free(itab);
    return rc;
}

static int S_run_all(const void *plan, const sd_sim_opts *o, sd_sim_block *blocks, double *hist, double *pos,
                     uint32_t *tokens, sd_error *err)
{
    const S_plan *pl = plan;
    const uint64_t N = o->trials;
    const size_t per = sd_token_stream_trial_bytes(pl->T), fixed = sd_token_stream_bytes(pl->V);
    if (pl->max_bytes && (N > (pl->max_bytes - fixed) / per))
        return sd_error_set(err, SD_ETOOBIG,
                            "streamed token kernel: --trials %llu keep %zu bytes of state each (%.3g GB) "
                            "beside one step's rows and tables (%zu bytes); memory budget %zu bytes "
                            "(--max-memory): lower --trials",
                            (unsigned long long)N, per, (double)N * (double)per / 1e9, fixed, pl->max_bytes);
    const size_t words = (pl->T + 63) / 64;
    S_trials st = {.N = N};
    st.prev = malloc(N * sizeof *st.prev);
    st.j = calloc(N, sizeof *st.j);
    st.rej = calloc(N, sizeof *st.rej);
    st.rb = o->want_rb ? calloc(N, sizeof *st.rb) : NULL;
    st.ends = calloc(N * words, sizeof *st.ends);
    int rc = (!st.prev || !st.j || !st.rej || (o->want_rb && !st.rb) || !st.ends)
                 ? sd_error_set(err, SD_ENOMEM, "out of memory for the state of %llu trials",
                                (unsigned long long)N)
                 : S_pass(pl, o, &st, blocks, hist, pos, tokens, err);
    S_trials_free(&st);
    return rc;
}

int sd_token_stream_exact(sd_model_stream *ms, size_t gamma, double *rejections, double *target_calls,
                          sd_error *err)
{
    if (!(ms->memo_ok && ms->memo_gamma == gamma)) {
        S_plan pl = {.ms = ms, .V = ms->gen.V, .T = ms->gen.T, .gamma = gamma, .lgK = sd_token_lgK(ms->gen.V)};
        ms->memo_ok = 0;
        int rc = S_pass(&pl, NULL, NULL, NULL, NULL, NULL, NULL, err);
        if (rc)
            return rc;
        if (!(ms->memo_ok && ms->memo_gamma == gamma))
            return sd_error_set(err, SD_ETOOBIG, "the exact token DP needs T*V^2*(gamma+1) = %zu*%zu^2*%zu "
                                                 "operations; limit 2^36", ms->gen.T, ms->gen.V, gamma + 1);
    }
    if (rejections)
        *rejections = ms->memo_rejections;
    if (target_calls)
        *target_calls = ms->memo_calls;
    return SD_OK;
}

#define S_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_TOKENS | SD_OBS_RB | SD_KERNEL_ALL)

const sd_kernel_all_type sd_token_kernel_stream = {
    .kernel = {.name = "token-stream", .supports = S_SUPPORTS, .plan_new = S_plan_new,
               .plan_free = S_plan_free},
    .run_all = S_run_all,
};

const sd_kernel_all_type sd_token_kernel_stream_broken = {
    .kernel = {.name = "token-stream-broken", .supports = S_SUPPORTS, .plan_new = S_plan_broken,
               .plan_free = S_plan_free},
    .run_all = S_run_all,
};
