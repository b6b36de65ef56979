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

/* One trial's state, in one place (few live pointers in the loop). */
typedef struct {
    uint32_t prev, dep, st, rej, calls, its; /* last token, depth, state, counts */
    uint64_t s1, s2, cell;                   /* Σ accepted, Σ accepted², cell index (L > 0) */
    double rb;                               /* Σ rejected mass of the drafting positions */
} S_tr;

typedef struct {
    S_tr *tr;
    uint64_t *ua, *ub;
} S_work;

void sd_kernel_law_work_free(void *work)
{
    S_work *w = work;
    if (!w)
        return;
    free(w->tr);
    free(w->ua);
    free(w);
}

int sd_kernel_law_work_new(const void *plan, void **work, sd_error *err)
{
    (void)plan;
    S_work *w = calloc(1, sizeof *w);
    if (w) {
        w->tr = malloc(S_GROUP * sizeof *w->tr);
        w->ua = malloc(2 * S_GROUP * sizeof *w->ua);
    }
    if (!w || !w->tr || !w->ua) {
        sd_kernel_law_work_free(w);
        return sd_error_set(err, SD_ENOMEM, "out of memory for a kernel's work");
    }
    w->ub = w->ua + S_GROUP;
    *work = w;
    return SD_OK;
}

/* Trials g0..g0+m-1 (m <= S_GROUP) over positions 1..N; tok: their rows
 * x_0..x_T or NULL.  Statistics only when L = 0 (then N = T). */
static void S_group(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0, size_t m, size_t N,
                    const sd_observe *obs, size_t *tok)
{
    const size_t V = pl->V, T = pl->T, NS = pl->NS;
    const uint32_t S = (uint32_t)pl->S, s0 = (uint32_t)pl->s0, vmask = (1u << pl->lgV) - 1;
    const uint32_t bon = pl->bonus < UINT32_MAX ? (uint32_t)pl->bonus : UINT32_MAX;
    const unsigned lgV = pl->lgV, lgK = pl->lgK;
    const int stats = obs->L == 0, rb_on = stats && obs->rb;
    const uint64_t *tab = pl->tab;
    const double *rmass = pl->rmass;
    double *hist = stats ? obs->hist : NULL, *pos = stats ? obs->pos : NULL;
    S_tr *tr = w->tr;
    sd_rngbuf_trials(seed, 0, g0, m, w->ua, w->ub);
    for (size_t k = 0; k < m; k++) {
        tr[k] = (S_tr){.prev = (uint32_t)sd_token_alias_draw(pl->init, pl->lgKi, w->ua[k]), .st = s0};
        if (tok)
            tok[k * (T + 1)] = tr[k].prev;
    }
    for (size_t n = 1; n <= N; n++) {
        const uint64_t *u = w->ub; /* odd n: uniform 2b+1 of block b = (n-1)/2 */
        if (n % 2 == 0) {
            sd_rngbuf_trials(seed, n / 2, g0, m, w->ua, w->ub);
            u = w->ua;
        }
        const uint32_t *rows = pl->idx + (pl->steps == 1 ? 0 : (n - 1) * V * NS);
        double *posn = pos ? pos + (n - 1) * V : NULL;
        for (size_t k = 0; k < m; k++) {
            S_tr *x = tr + k;
            uint32_t d = x->dep, bonus = d == bon;
            uint32_t tb = rows[x->prev * NS + (bonus ? NS - 1 : d == 0 ? 0 : 1 + x->st)];
            if (rb_on && !bonus)
                x->rb += rmass[tb];
            uint32_t o = (uint32_t)sd_token_alias_draw(tab + ((size_t)tb << lgK), lgK, u[k]);
            uint32_t kind = o >> lgV, y = o & vmask;
            x->prev = y;
            if (tok)
                tok[k * (T + 1) + n] = y;
            if (posn)
                posn[y] += 1.0;
            x->cell = x->cell * V + y;
            x->rej += kind == S + 1;
            if (kind < S && !bonus) { /* the iteration goes on in state kind */
                x->dep = d + 1;
                x->st = kind;
                continue;
            }
            /* it ends: accepted d drafts, + x for a kept ending before the bonus */
            uint32_t a = d + (kind == S && !bonus);
            x->calls++;
            x->its++;
            x->s1 += a;
            x->s2 += (uint64_t)a * a;
            if (hist)
                hist[a] += 1.0;
            x->dep = 0;
            x->st = s0;
        }
    }
    if (!stats) {
        for (size_t k = 0; obs->cells && k < m; k++)
            obs->cells[tr[k].cell] += 1.0;
        return;
    }
    for (size_t k = 0; k < m; k++) {
        S_tr *x = tr + k;
        if (x->dep > 0) { /* the horizon ended an iteration that went on: dep accepted */
            x->calls += pl->horizon_calls;
            x->its++;
            x->s1 += x->dep;
            x->s2 += (uint64_t)x->dep * x->dep;
            if (hist)
                hist[x->dep] += 1.0;
        }
        if (obs->acc)
            sd_welford_merge_sums(obs->acc, x->its, x->s1, x->s2);
        if (obs->rej)
            sd_welford_add(obs->rej, (double)x->rej);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)x->calls);
        if (obs->rb)
            sd_welford_add(obs->rb, x->rb);
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
