/* kernel_law.c — the table-driven kernel of sims/sd_kernel_law.h: one
 * alias draw per position from the verifier's own position law. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../src/sd_rngbuf.h"
#include "sd_iter_laws.h"
#include "sd_kernel_law.h"
#include "sd_token.h"

#define S_MAX_BYTES ((size_t)1 << 30) /* the engine's default limit (sims/sd_sim.h) */
#define S_LGK_MAX 24u                 /* sd_token_alias_build's largest table */

typedef struct {
    size_t V, T, steps;
    size_t bonus;         /* the depth of the bonus (the draft length), SIZE_MAX: none */
    size_t S, s0, NS;     /* states, the first depth's state, slots per row (S + 2) */
    unsigned lgV, lgK, lgKi, horizon_calls;
    uint32_t *idx;        /* [steps·V][NS]: the table of each slot (first, later s, bonus) */
    uint64_t *tab;        /* [steps·V·NS][K] */
    double *rmass;        /* [steps·V·NS]: each table's rejected mass */
    uint64_t *init;       /* [2^lgKi]: x_0 */
} S_plan;

typedef struct {
    size_t *tok; /* [T+1] */
} S_work;

static unsigned S_lg(size_t n)
{
    unsigned lg = 0;
    while (((size_t)1 << lg) < n)
        lg++;
    return lg;
}

size_t sd_kernel_law_bytes(const sd_chain *c, size_t S)
{
    size_t V = c->V, steps = (c->draft_steps == 1 && c->target_steps == 1) ? 1 : c->T;
    if (V > ((size_t)1 << 20) || S > ((size_t)1 << 20))
        return SIZE_MAX;
    unsigned lgK = S_lg((S + 2) << S_lg(V));
    if (lgK > S_LGK_MAX || steps > SIZE_MAX / V / (S + 2))
        return SIZE_MAX;
    size_t tables = steps * V * (S + 2), per = ((size_t)8 << lgK) + sizeof(double) + sizeof(uint32_t);
    return tables > SIZE_MAX / per ? SIZE_MAX : tables * per;
}

void sd_kernel_law_plan_free(void *plan)
{
    S_plan *pl = plan;
    if (!pl)
        return;
    free(pl->idx);
    free(pl->tab);
    free(pl->rmass);
    free(pl->init);
    free(pl);
}

/* The weights of slot j of row (t, a) into w[(S+2) << lgV] (zeroed here);
 * ok, rej, cont: the law's buffers. */
static int S_slot_weights(const S_plan *pl, const sd_pos_law *law, const sd_chain *c, size_t t,
                          size_t a, size_t j, double *w, double *cont, sd_error *err)
{
    const size_t V = pl->V, S = pl->S;
    double *ok = cont + S * V, *rej = ok + V;
    memset(cont, 0, (S + 2) * V * sizeof *cont);
    size_t i = j == 0 ? 0 : j == pl->NS - 1 ? pl->bonus : 1, s = j == 0 ? pl->s0 : j - 1;
    int rc = law->fn(law->ctx, c, t, a, i, j == pl->NS - 1 ? pl->s0 : s, cont, ok, rej, err);
    if (rc)
        return rc;
    memset(w, 0, ((S + 2) << pl->lgV) * sizeof *w);
    int bonus = j == pl->NS - 1;
    for (size_t k = 0; k < S + 2; k++)
        for (size_t y = 0; y < V; y++) /* a bonus: every outcome is an ending (kind S) */
            w[((bonus ? S : k) << pl->lgV) + y] += cont[k * V + y];
    return SD_OK;
}

/* The slots a run can reach: the first depth always, later depths unless
 * the draft length is 1, the bonus when there is one. */
static int S_slot_used(const S_plan *pl, size_t j)
{
    if (j == pl->NS - 1)
        return pl->bonus != SIZE_MAX;
    return j == 0 || pl->bonus != 1;
}

/* Rows r0.. of the plan, on one thread with its own law. */
static int S_build_rows(S_plan *pl, const sd_chain *c, const sd_params *par, sd_kernel_law_fn lawfn,
                        int *bad)
{
    const size_t V = pl->V, S = pl->S, NS = pl->NS, nout = (S + 2) << pl->lgV;
    const size_t K = (size_t)1 << pl->lgK, rows = pl->steps * V;
    sd_pos_law law = {0};
    double *w = malloc(NS * nout * sizeof *w), *cont = malloc((S + 2) * V * sizeof *cont);
    int ok = w && cont && lawfn(c, par, &law, NULL) == SD_OK;
#pragma omp for schedule(static)
    for (size_t r = 0; r < rows; r++) {
        if (!ok)
            continue;
        size_t t = pl->steps == 1 ? 1 : r / V + 1, a = r % V;
        for (size_t j = 0; j < NS && ok; j++) {
            size_t id = r * NS + j;
            pl->idx[id] = (uint32_t)id;
            if (!S_slot_used(pl, j))
                continue;
            double *wj = w + j * nout;
            if (S_slot_weights(pl, &law, c, t, a, j, wj, cont, NULL)) {
                ok = 0;
                break;
            }
            for (size_t j2 = 0; j2 < j; j2++) /* the same weights as an earlier slot: share it */
                if (S_slot_used(pl, j2) && memcmp(w + j2 * nout, wj, nout * sizeof *w) == 0) {
                    pl->idx[id] = pl->idx[r * NS + j2];
                    break;
                }
            if (pl->idx[id] != id)
                continue;
            double m = 0.0;
            for (size_t y = 0; y < V; y++)
                m += wj[((S + 1) << pl->lgV) + y];
            pl->rmass[id] = m;
            if (sd_token_alias_build(wj, nout, pl->lgK, pl->tab + id * K, NULL))
                ok = 0;
        }
    }
    sd_pos_law_free(&law);
    free(w);
    free(cont);
    if (!ok) {
#pragma omp atomic write
        *bad = 1;
    }
    return SD_OK;
}

int sd_kernel_law_plan_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                           unsigned threads, sd_kernel_law_fn lawfn, sd_error *err)
{
    *plan = NULL;
    const sd_chain *c = m->chain;
    sd_pos_law law = {0};
    if (!c || c->V > UINT32_MAX || lawfn(c, par, &law, NULL) != SD_OK)
        return SD_EUSAGE; /* not applicable: no stored rows, or no law at par */
    size_t S = law.S, s0 = law.s0, G = law.G;
    unsigned hc = law.horizon_calls;
    sd_pos_law_free(&law);
    size_t bytes = sd_kernel_law_bytes(c, S), limit = max_bytes ? max_bytes : S_MAX_BYTES;
    if (bytes > limit)
        return sd_error_set(err, SD_ETOOBIG,
                            "kernel tables for V=%zu, T=%zu and %zu states need %zu bytes; limit %zu "
                            "(the generic verifier is used instead)",
                            c->V, c->T, S, bytes, limit);
    S_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return sd_error_set(err, SD_ENOMEM, "out of memory for a kernel's tables");
    pl->V = c->V;
    pl->T = c->T;
    pl->steps = (c->draft_steps == 1 && c->target_steps == 1) ? 1 : c->T;
    pl->bonus = G < c->T ? G : SIZE_MAX; /* a draft length >= T never reaches its bonus */
    pl->S = S;
    pl->s0 = s0;
    pl->NS = S + 2;
    pl->horizon_calls = hc;
    pl->lgV = S_lg(c->V);
    pl->lgK = S_lg((S + 2) << pl->lgV);
    pl->lgKi = S_lg(c->V) ? S_lg(c->V) : 1;
    const size_t ntab = pl->steps * c->V * pl->NS, K = (size_t)1 << pl->lgK;
    pl->idx = malloc(ntab * sizeof *pl->idx);
    pl->tab = malloc(ntab * K * sizeof *pl->tab);
    pl->rmass = calloc(ntab, sizeof *pl->rmass);
    pl->init = malloc(((size_t)1 << pl->lgKi) * sizeof *pl->init);
    if (!pl->idx || !pl->tab || !pl->rmass || !pl->init) {
        sd_kernel_law_plan_free(pl);
        return sd_error_set(err, SD_ENOMEM, "out of memory for a kernel's tables (%zu bytes)", bytes);
    }
    int bad = sd_token_alias_build(c->init, c->V, pl->lgKi, pl->init, NULL) != SD_OK, nth = 1;
#ifdef _OPENMP
    /* small tables on one thread: waking a team costs more than the build */
    nth = ntab * K < ((size_t)1 << 18) ? 1 : threads ? (int)threads : omp_get_num_procs();
#else
    (void)threads;
#endif
#pragma omp parallel num_threads(nth)
    S_build_rows(pl, c, par, lawfn, &bad);
    if (bad) {
        sd_kernel_law_plan_free(pl);
        return SD_EUSAGE; /* the law failed on a row (the generic step reports it) */
    }
    *plan = pl;
    return SD_OK;
}

int sd_kernel_law_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    S_work *w = malloc(sizeof *w);
    if (w)
        w->tok = malloc((pl->T + 1) * sizeof *w->tok);
    if (!w || !w->tok) {
        free(w);
        return sd_error_set(err, SD_ENOMEM, "out of memory for a kernel's work");
    }
    *work = w;
    return SD_OK;
}

void sd_kernel_law_work_free(void *work)
{
    S_work *w = work;
    if (w)
        free(w->tok);
    free(w);
}

/* The next 53-bit uniform integer of the trial's stream (sd_stream_uniform·2^53). */
static inline uint64_t S_u53(sd_rngbuf *r)
{
    uint64_t a = sd_rngbuf_u32(r) >> 5;
    return (a << 26) | (sd_rngbuf_u32(r) >> 6);
}

/* One iteration's end: accepted drafts a. */
static inline void S_end(const sd_observe *obs, size_t a)
{
    if (obs->hist)
        obs->hist[a] += 1.0;
    if (obs->acc)
        sd_welford_add(obs->acc, (double)a);
}

/* Trial `trial` over positions 1..N into tok[0..N] and the observers
 * (statistics only when N = T, i.e. L = 0). */
static void S_trial(const S_plan *pl, uint64_t seed, uint64_t trial, size_t N, size_t *tok,
                    const sd_observe *obs)
{
    const size_t V = pl->V, S = pl->S, NS = pl->NS, vmask = ((size_t)1 << pl->lgV) - 1;
    const unsigned lgV = pl->lgV, lgK = pl->lgK;
    const int stats = obs->L == 0, rb_on = obs->rb != NULL;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = sd_token_alias_draw(pl->init, pl->lgKi, S_u53(&rng));
    tok[0] = prev;
    size_t i = 0, s = pl->s0, rej = 0, calls = 0;
    double rb = 0.0;
    for (size_t n = 1; n <= N; n++) {
        const uint32_t *row = pl->idx + ((pl->steps == 1 ? 0 : (n - 1) * V) + prev) * NS;
        int bonus = i == pl->bonus;
        uint32_t tb = row[bonus ? NS - 1 : i == 0 ? 0 : 1 + s];
        if (rb_on && !bonus)
            rb += pl->rmass[tb];
        size_t o = sd_token_alias_draw(pl->tab + ((size_t)tb << lgK), lgK, S_u53(&rng));
        size_t kind = o >> lgV;
        prev = tok[n] = o & vmask;
        if (kind < S && !bonus) { /* the iteration goes on in state kind */
            i++;
            s = kind;
            continue;
        }
        rej += kind == S + 1;
        calls++;
        if (stats)
            S_end(obs, i + (kind == S && !bonus));
        i = 0;
        s = pl->s0;
    }
    if (!stats)
        return;
    if (i > 0) { /* the horizon ended an iteration that went on */
        calls += pl->horizon_calls;
        S_end(obs, i);
    }
    if (obs->rej)
        sd_welford_add(obs->rej, (double)rej);
    if (obs->calls)
        sd_welford_add(obs->calls, (double)calls);
    if (obs->rb)
        sd_welford_add(obs->rb, rb);
}

void sd_kernel_law_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                       const sd_observe *obs)
{
    const S_plan *pl = plan;
    const size_t V = pl->V, T = pl->T, N = obs->L && obs->L < T ? obs->L : T;
    for (uint64_t t = lo; t < hi; t++) {
        size_t *tok = obs->tokens ? obs->tokens + (size_t)(t - lo) * (T + 1) : ((S_work *)work)->tok;
        S_trial(pl, seed, t, N, tok, obs);
        if (obs->pos && !obs->L)
            for (size_t n = 1; n <= T; n++)
                obs->pos[(n - 1) * V + tok[n]] += 1.0;
        if (obs->cells && obs->L) {
            size_t k = 0;
            for (size_t n = 1; n <= N; n++)
                k = k * V + tok[n];
            obs->cells[k] += 1.0;
        }
    }
}
