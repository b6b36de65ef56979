/* kernel_law.c — the table-driven kernel of sims/kernels/sd_kernel_law.h: one
 * alias draw per position from the verifier's own position law. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../../src/sd_rngbuf.h"
#include "../exact/sd_iter_laws.h"
#include "sd_kernel_law.h"
#include "../verifiers/sd_token.h"

#define S_MAX_BYTES ((size_t)1 << 30) /* the engine's default limit (sims/engine/sd_sim.h) */
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
    return tables > UINT32_MAX || tables > SIZE_MAX / per ? SIZE_MAX : tables * per; /* uint32 indices */
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

/* The rows of the plan, shared out among the team (an orphaned omp for);
 * each thread evaluates its own copy of the law (its scratch).  Sets *bad
 * when the law or a table fails. */
static void S_build_rows(S_plan *pl, const sd_chain *c, const sd_params *par, sd_kernel_law_fn lawfn,
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

/* Lockstep.  Every trial consumes one uniform per position, so a group of
 * trials advances position by position (uniform n of trial i is Philox
 * block n/2 of its stream, computed for many trials at once by
 * sd_rngbuf_trials): the table lookups of different trials do not depend
 * on each other and overlap, where one trial alone waits for each lookup
 * before the next (its row is the last token).  Per-trial state: previous
 * token, depth, state, and integer counts; a trial's accepted drafts enter
 * the accumulator as one exact summary (sd_welford_merge_sums), and every
 * statistic is added trial by trial in trial order: a function of
 * (seed, lo, hi) only. */
#define S_GROUP 512

/* The group's trials as structure of arrays (the vector passes load eight
 * trials' field at once): last token, depth, state, counts; Σ accepted,
 * Σ accepted², cell index (L > 0); Σ rejected mass of the drafting
 * positions.  Scratch of the vector path: row index, table, entry index
 * (then the histogram's index, S_draw_avx512), entry, rejected mass of each
 * trial's table at the position; hc: the group's histogram of accepted
 * drafts per iteration, one copy per lane.  One arena (sd_carve: no 4K
 * aliasing between the arrays a pass loads and stores). */
typedef struct {
    uint32_t *prev, *dep, *st, *rej, *calls, *its, *ri, *tb, *idx;
    uint64_t *s1, *s2, *cell, *ent, *hc;
    double *rb, *rm;
    uint64_t *ua, *ub;
    unsigned char *arena;
} S_work;

void sd_kernel_law_work_free(void *work)
{
    S_work *w = work;
    if (!w)
        return;
    free(w->arena);
    free(w);
}

/* The arrays of w carved from w->arena (NULL: only counts the bytes). */
static size_t S_carve(S_work *w, size_t T)
{
    size_t off = 0;
    uint32_t **u32[] = {&w->prev, &w->dep, &w->st, &w->rej, &w->calls, &w->its, &w->ri, &w->tb, &w->idx};
    uint64_t **u64[] = {&w->s1, &w->s2, &w->cell, &w->ent, &w->ua, &w->ub};
    for (size_t i = 0; i < sizeof u32 / sizeof *u32; i++)
        *u32[i] = sd_carve(w->arena, &off, S_GROUP * sizeof(uint32_t));
    for (size_t i = 0; i < sizeof u64 / sizeof *u64; i++)
        *u64[i] = sd_carve(w->arena, &off, S_GROUP * sizeof(uint64_t));
    w->rb = sd_carve(w->arena, &off, S_GROUP * sizeof(double));
    w->rm = sd_carve(w->arena, &off, S_GROUP * sizeof(double));
    w->hc = sd_carve(w->arena, &off, 8 * (T + 2) * sizeof(uint64_t));
    return off;
}

int sd_kernel_law_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    S_work *w = calloc(1, sizeof *w);
    size_t bytes = w ? S_carve(w, pl->T) : 0;
    if (w)
        w->arena = aligned_alloc(64, bytes);
    if (!w || !w->arena) {
        sd_kernel_law_work_free(w);
        return sd_error_set(err, SD_ENOMEM, "out of memory for a kernel's work");
    }
    S_carve(w, pl->T);
    *work = w;
    return SD_OK;
}

/* What a group's position needs, in one place. */
typedef struct {
    const S_plan *pl;
    const uint32_t *rows; /* the position's [V][NS] table indices */
    const uint64_t *u;    /* the position's uniforms */
    double *hist;         /* NULL: no statistics */
    uint32_t S, s0, bon, vmask;
    int rb_on;
} S_pos;

/* Position n of trial k: one alias draw from the slot of (depth, state) in
 * the row of the last token; an iteration ends on a rejection, a kept
 * ending, or the bonus.  Returns the token. */
static inline uint32_t S_step(const S_pos *P, S_work *w, size_t k)
{
    const S_plan *pl = P->pl;
    const size_t NS = pl->NS;
    uint32_t d = w->dep[k], bonus = d == P->bon;
    uint32_t tb = P->rows[w->prev[k] * NS + (bonus ? NS - 1 : d == 0 ? 0 : 1 + w->st[k])];
    if (P->rb_on && !bonus)
        w->rb[k] += pl->rmass[tb];
    uint32_t o = (uint32_t)sd_token_alias_draw(pl->tab + ((size_t)tb << pl->lgK), pl->lgK, P->u[k]);
    uint32_t kind = o >> pl->lgV, y = o & P->vmask;
    w->prev[k] = y;
    w->rej[k] += kind == P->S + 1;
    if (kind < P->S && !bonus) { /* the iteration goes on in state kind */
        w->dep[k] = d + 1;
        w->st[k] = kind;
        return y;
    }
    /* it ends: accepted d drafts, + x for a kept ending before the bonus */
    uint32_t a = d + (kind == P->S && !bonus);
    w->calls[k]++;
    w->its[k]++;
    w->s1[k] += a;
    w->s2[k] += (uint64_t)a * a;
    if (P->hist)
        P->hist[a] += 1.0;
    w->dep[k] = 0;
    w->st[k] = P->s0;
    return y;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define S_HAVE_X86 1

/* Pass 1 on trials 0..s-1 (s a multiple of 8): the row index of each
 * trial's slot, ri = prev·NS + slot, slot = NS-1 at the bonus, 0 at depth
 * 0, 1 + state after. */
__attribute__((target("avx512f"))) static void S_slot_avx512(const S_pos *P, S_work *w, size_t s)
{
    const __m512i ns = _mm512_set1_epi64((long long)P->pl->NS), last = _mm512_set1_epi64((long long)P->pl->NS - 1),
                  bon = _mm512_set1_epi64((long long)P->bon), one = _mm512_set1_epi64(1), zero = _mm512_setzero_si512();
    for (size_t i = 0; i < s; i += 8) {
        __m512i d = SD_LD32X8(w->dep + i), st = _mm512_add_epi64(SD_LD32X8(w->st + i), one);
        __m512i slot = _mm512_mask_blend_epi64(_mm512_cmpeq_epi64_mask(d, zero), st, zero);
        slot = _mm512_mask_blend_epi64(_mm512_cmpeq_epi64_mask(d, bon), slot, last);
        SD_ST32X8(w->ri + i, _mm512_add_epi64(_mm512_mul_epu32(SD_LD32X8(w->prev + i), ns), slot));
    }
}

/* Between the passes, four independent loads per turn (see sd_fetch64):
 * tb = rows[ri], idx = tb·K + (U >> (53 - lgK)), the entry of each trial. */
static void S_fetch_rows(const S_pos *P, S_work *w, size_t s)
{
    const unsigned lgK = P->pl->lgK, sh = 53u - lgK;
    for (size_t i = 0; i < s; i += 4) {
        uint32_t t0 = P->rows[w->ri[i]], t1 = P->rows[w->ri[i + 1]], t2 = P->rows[w->ri[i + 2]],
                 t3 = P->rows[w->ri[i + 3]];
#if defined(__GNUC__)
        __asm__("" : "+r"(t0), "+r"(t1), "+r"(t2), "+r"(t3));
#endif
        w->tb[i] = t0;
        w->tb[i + 1] = t1;
        w->tb[i + 2] = t2;
        w->tb[i + 3] = t3;
        w->idx[i] = (t0 << lgK) | (uint32_t)(P->u[i] >> sh);
        w->idx[i + 1] = (t1 << lgK) | (uint32_t)(P->u[i + 1] >> sh);
        w->idx[i + 2] = (t2 << lgK) | (uint32_t)(P->u[i + 2] >> sh);
        w->idx[i + 3] = (t3 << lgK) | (uint32_t)(P->u[i + 3] >> sh);
    }
    sd_fetch64(P->pl->tab, w->idx, s, w->ent);
    if (P->rb_on)
        sd_fetch64(P->pl->rmass, w->tb, s, (uint64_t *)(void *)w->rm);
}

/* Pass 2: S_step's arithmetic on eight trials at a time, the same
 * outcomes bit for bit: the alias test of sd_token_alias_draw as a mask,
 * the counts by masked additions, depth and state by blends, rb by one
 * addition per lane (per trial the same additions in the same order as
 * S_step).  Iteration ends go to the group's histogram hc, lane l into its
 * own copy hc[l·(T+2) ..] (no two increments of one pass on one word; T+1
 * takes the lanes that go on). */
__attribute__((target("avx512f"))) static void S_draw_avx512(const S_pos *P, S_work *w, size_t s)
{
    const S_plan *pl = P->pl;
    const unsigned lgK = pl->lgK;
    const __m128i sh = _mm_cvtsi32_si128((int)(53u - lgK)), lg = _mm_cvtsi32_si128((int)lgK),
                  lgv = _mm_cvtsi32_si128((int)pl->lgV);
    const __m512i cm = _mm512_set1_epi64((long long)(((uint64_t)1 << (53u - lgK)) - 1)),
                  km = _mm512_set1_epi64((long long)(((uint64_t)1 << lgK) - 1)),
                  vm = _mm512_set1_epi64((long long)P->vmask), one = _mm512_set1_epi64(1),
                  Sv = _mm512_set1_epi64((long long)P->S), S1 = _mm512_set1_epi64((long long)P->S + 1),
                  s0 = _mm512_set1_epi64((long long)P->s0), bon = _mm512_set1_epi64((long long)P->bon),
                  none = _mm512_set1_epi64((long long)pl->T + 1);
    for (size_t i = 0; i < s; i += 8) {
        __m512i U = _mm512_loadu_si512((const void *)(P->u + i)), e = _mm512_loadu_si512((const void *)(w->ent + i));
        __m512i k = _mm512_srl_epi64(U, sh), thr = _mm512_srl_epi64(e, lg);
        __mmask8 to_alias = _mm512_cmpge_epu64_mask(_mm512_and_si512(U, cm), thr);
        __m512i o = _mm512_mask_blend_epi64(to_alias, k, _mm512_and_si512(e, km));
        __m512i kind = _mm512_srl_epi64(o, lgv), d = SD_LD32X8(w->dep + i);
        SD_ST32X8(w->prev + i, _mm512_and_si512(o, vm));
        __mmask8 bonus = _mm512_cmpeq_epi64_mask(d, bon);
        __mmask8 go = (__mmask8)(_mm512_cmplt_epu64_mask(kind, Sv) & ~bonus), end = (__mmask8)~go;
        __mmask8 kept = (__mmask8)(_mm512_cmpeq_epi64_mask(kind, Sv) & ~bonus);
        __m512i r = SD_LD32X8(w->rej + i);
        SD_ST32X8(w->rej + i, _mm512_mask_add_epi64(r, _mm512_cmpeq_epi64_mask(kind, S1), r, one));
        if (P->rb_on) {
            __m512d rb = _mm512_loadu_pd(w->rb + i);
            _mm512_storeu_pd(w->rb + i, _mm512_mask_add_pd(rb, (__mmask8)~bonus, rb, _mm512_loadu_pd(w->rm + i)));
        }
        __m512i a = _mm512_mask_add_epi64(d, kept, d, one);
        __m512i c = SD_LD32X8(w->calls + i), it = SD_LD32X8(w->its + i);
        SD_ST32X8(w->calls + i, _mm512_mask_add_epi64(c, end, c, one));
        SD_ST32X8(w->its + i, _mm512_mask_add_epi64(it, end, it, one));
        __m512i s1 = _mm512_loadu_si512((const void *)(w->s1 + i)), s2 = _mm512_loadu_si512((const void *)(w->s2 + i));
        _mm512_storeu_si512((void *)(w->s1 + i), _mm512_mask_add_epi64(s1, end, s1, a));
        _mm512_storeu_si512((void *)(w->s2 + i), _mm512_mask_add_epi64(s2, end, s2, _mm512_mul_epu32(a, a)));
        SD_ST32X8(w->dep + i, _mm512_maskz_add_epi64(go, d, one));
        SD_ST32X8(w->st + i, _mm512_mask_blend_epi64(go, s0, kind));
        if (P->hist) {
            SD_ST32X8(w->idx + i, _mm512_mask_blend_epi64(end, none, a));
            for (size_t l = 0; l < 8; l++)
                w->hc[l * (pl->T + 2) + w->idx[i + l]]++;
        }
    }
}
#else
#define S_HAVE_X86 0
#endif

/* Trials g0..g0+m-1 (m <= S_GROUP) over positions 1..N; tok: their rows
 * x_0..x_T or NULL.  Statistics only when L = 0 (then N = T).  With
 * AVX-512F and a plan whose entries have 32-bit indices, trials
 * 0..8⌊m/8⌋-1 go through the vector passes (S_slot_avx512, S_fetch_rows,
 * S_draw_avx512), the rest through S_step: the same bits. */
static void S_group(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0, size_t m, size_t N,
                    const sd_observe *obs, size_t *tok)
{
    const size_t V = pl->V, T = pl->T, NS = pl->NS;
    const int stats = obs->L == 0;
    S_pos P = {.pl = pl,
               .hist = stats ? obs->hist : NULL,
               .S = (uint32_t)pl->S,
               .s0 = (uint32_t)pl->s0,
               .bon = pl->bonus < UINT32_MAX ? (uint32_t)pl->bonus : UINT32_MAX,
               .vmask = (1u << pl->lgV) - 1,
               .rb_on = stats && obs->rb};
    double *pos = stats ? obs->pos : NULL;
    const size_t ntab = pl->steps * V * NS;
    const size_t nv = S_HAVE_X86 && sd_rngbuf_avx512() && (ntab << pl->lgK) - 1 <= UINT32_MAX ? m / 8 * 8 : 0;
    sd_rngbuf_trials(seed, 0, g0, m, w->ua, w->ub);
    for (size_t k = 0; k < m; k++) {
        w->prev[k] = (uint32_t)sd_token_alias_draw(pl->init, pl->lgKi, w->ua[k]);
        w->st[k] = P.s0;
        w->dep[k] = w->rej[k] = w->calls[k] = w->its[k] = 0;
        w->s1[k] = w->s2[k] = w->cell[k] = 0;
        w->rb[k] = 0.0;
        if (tok)
            tok[k * (T + 1)] = w->prev[k];
    }
    if (nv && P.hist)
        memset(w->hc, 0, 8 * (T + 2) * sizeof *w->hc);
    for (size_t n = 1; n <= N; n++) {
        P.u = w->ub; /* odd n: uniform 2b+1 of block b = (n-1)/2 */
        if (n % 2 == 0) {
            sd_rngbuf_trials(seed, n / 2, g0, m, w->ua, w->ub);
            P.u = w->ua;
        }
        P.rows = pl->idx + (pl->steps == 1 ? 0 : (n - 1) * V * NS);
#if S_HAVE_X86
        if (nv) {
            S_slot_avx512(&P, w, nv);
            S_fetch_rows(&P, w, nv);
            S_draw_avx512(&P, w, nv);
        }
#endif
        for (size_t k = nv; k < m; k++)
            S_step(&P, w, k);
        if (tok)
            for (size_t k = 0; k < m; k++)
                tok[k * (T + 1) + n] = w->prev[k];
        if (pos) /* integer counts: any order gives the same doubles */
            for (size_t k = 0; k < m; k++)
                pos[(n - 1) * V + w->prev[k]] += 1.0;
        if (!stats && obs->cells)
            for (size_t k = 0; k < m; k++)
                w->cell[k] = w->cell[k] * V + w->prev[k];
    }
    if (!stats) {
        for (size_t k = 0; obs->cells && k < m; k++)
            obs->cells[w->cell[k]] += 1.0;
        return;
    }
    double *hist = P.hist;
    if (nv && hist) /* integer counts (< 2^53): one addition gives the doubles of many +1.0 */
        for (size_t a = 0; a <= T; a++) {
            uint64_t h = 0;
            for (size_t l = 0; l < 8; l++)
                h += w->hc[l * (T + 2) + a];
            if (h)
                hist[a] += (double)h;
        }
    for (size_t k = 0; k < m; k++) {
        if (w->dep[k] > 0) { /* the horizon ended an iteration that went on: dep accepted */
            uint32_t d = w->dep[k];
            w->calls[k] += pl->horizon_calls;
            w->its[k]++;
            w->s1[k] += d;
            w->s2[k] += (uint64_t)d * d;
            if (hist)
                hist[d] += 1.0;
        }
        if (obs->acc)
            sd_welford_merge_sums(obs->acc, w->its[k], w->s1[k], w->s2[k]);
        if (obs->rej)
            sd_welford_add(obs->rej, (double)w->rej[k]);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)w->calls[k]);
        if (obs->rb)
            sd_welford_add(obs->rb, w->rb[k]);
    }
}

void sd_kernel_law_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                       const sd_observe *obs)
{
    const S_plan *pl = plan;
    const size_t T = pl->T, N = obs->L && obs->L < T ? obs->L : T;
    for (uint64_t g0 = lo; g0 < hi; g0 += S_GROUP) {
        size_t m = hi - g0 < S_GROUP ? (size_t)(hi - g0) : S_GROUP;
        S_group(pl, work, seed, g0, m, N, obs, obs->tokens ? obs->tokens + (size_t)(g0 - lo) * (T + 1) : NULL);
    }
}
