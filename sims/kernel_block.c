/* kernel_block.c — a fast kernel for block verification (sims/block.c;
 * Sun et al. 2024, "Block verification accelerates speculative decoding",
 * Alg. 2, eqs. 3–5), with the law of sd_block_step and other random
 * numbers.
 *
 * Tables.  The generic step spends two O(V) scans per drafted token on the
 * residual mass m(π) = Σ_x max(π q(x) - p(x), 0) and on the residual
 * sample.  Per row (position t, previous token a) this kernel stores the
 * tokens sorted by r = q/p decreasing (p = 0 < q first with r = +inf,
 * p = q = 0 last with r = -1), with prefix sums Q_j, P_j in that order.
 * π q(x) > p(x), i.e. π r(x) > 1, holds exactly for the first j*(π)
 * tokens of that order, so
 *     m(π) = π Q_{j*} - P_{j*},
 * with j* found by one binary search on the sorted r; and the residual's
 * cumulative weight over the first j sorted tokens, W_j = π Q_j - P_j,
 * increases with j up to j*, so a residual sample is a second binary
 * search for the first j with W_{j+1} > u m.  Drafts X_i ~ p and bonus
 * tokens ~ q are drawn from integer alias tables (sd_token_alias_draw,
 * sims/sd_token.h: every token returned for exactly its mass of the 2^53
 * values of a 53-bit uniform, never one of probability 0), and
 * p_i = min(1, p_{i-1} q(X_i)/p(X_i)) multiplies p_{i-1} by the row's
 * stored ratio r(X_i) (p(X_i) > 0: X_i was drawn from p).  Everything
 * else (the acceptance rule η < h_i, h_i = m_i / (m_i + 1 - p_i),
 * h_G = p_G; the horizon's dummy position; the early stop at p_i = 0) is
 * sd_block_step's.
 *
 * Lockstep.  A group of trials runs iteration by iteration: in round k
 * every trial still running does its k-th iteration, drafting step i of
 * all of them before step i + 1, so the per-trial state lives in arrays,
 * the random numbers of a step are computed for all its trials at once
 * (sd_rngbuf_trials_at, AVX-512 across trials) and the table searches of
 * different trials are independent (they overlap in the processor).  The
 * lists of trials still drafting and still running are compacted after
 * each step and round.
 *
 * Random numbers: 53-bit uniforms of the trial's sd_stream (seed, trial),
 * laid out so that every trial of a round uses the same Philox block
 * (the uniform of (seed, trial, iteration, role) is a fixed function, so
 * results do not depend on the thread count).  With Gmax = γ (or T at
 * lookahead to the horizon), block 0 draws x_0 (even uniform), and
 * iteration k (0-based) uses blocks b_k = 1 + k (Gmax + 1) onwards:
 * block b_k + i - 1 draws X_i (even) and η_i (odd), block b_k + Gmax the
 * iteration's last token (even).  No uniform is used twice, so they are
 * independent, as sd_block_step's are.
 *
 * Statistics are accumulated per trial (integer counts, the iteration's
 * 1 - p_G summed in iteration order) and added to the observers trial by
 * trial in trial order after the group: a function of (seed, block).
 *
 * The broken variant (SD_OBS-identical, a control for `check`) samples the
 * residual with π = 1, i.e. [q - p]+, instead of π = p_τ (eq. 4). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_rngbuf.h"
#include "sd_block.h"
#include "sd_token.h"

#define S_GROUP 512 /* trials per lockstep group */

typedef struct S_row {
    const uint32_t *ord; /* [V] tokens by q/p decreasing */
    const double *rs;    /* [V] q/p in that order (+inf where p = 0 < q, -1 where p = q = 0) */
    const double *Q, *P; /* [V+1] prefix sums of q, p in that order */
    const double *rat;   /* [V] q/p in token order (0 where p = 0: never drafted) */
    const uint64_t *ap, *aq; /* [K] alias tables of p and q */
} S_row;

typedef struct S_plan {
    size_t V, T, gamma, gmax;
    unsigned lgK;
    int broken;
    uint64_t *init; /* [K] alias table of the initial law */
    S_row *rows;    /* [T*V]: row (t, a) at (t-1)V + a */
    void *mem;
} S_plan;

typedef struct S_work {
    size_t S;
    /* per trial of the group */
    uint32_t *n, *prev, *G, *y, *tau, *tauprev, *rej, *its;
    uint64_t *s1, *s2;
    double *pi, *taup, *rb;
    size_t *tok; /* [S][T+1]: x_0..x_T when an observer needs them */
    /* per step */
    uint32_t *act, *live;
    uint64_t *ue, *uo;
} S_work;

static const double S_2M53 = 1.0 / 9007199254740992.0;

/* The searches below are branch-free binary searches (the loop runs
 * ceil(log2 n) times whatever the data; the comparisons become
 * conditional moves): each finds the length f of the prefix on which a
 * monotone predicate holds.  Invariant: f is in [base, base + n]; a step
 * moves base past a half known to hold, or keeps base with n - half >=
 * half; at n = 1, f = base + pred(base). */

/* j*(π): the number of sorted tokens with π q > p, i.e. π r > 1 (π > 0). */
static inline size_t S_jstar(const S_row *r, size_t V, double pi)
{
    size_t base = 0, n = V;
    while (n > 1) {
        size_t half = n / 2;
        base = pi * r->rs[base + half - 1] > 1.0 ? base + half : base;
        n -= half;
    }
    return base + (pi * r->rs[base] > 1.0);
}

static inline double S_mass(const S_row *r, size_t j, double pi)
{
    double m = pi * r->Q[j] - r->P[j];
    return m > 0.0 ? m : 0.0;
}

/* A draw from max(π q - p, 0) / m given j = j*(π) >= 1 and m > 0. */
static inline size_t S_residual(const S_row *r, size_t j, double pi, double m, double u)
{
    double target = u * m;
    size_t base = 0, n = j; /* the first of 0..j-1 with W_{base+1} > target; j-1 at the latest */
    while (n > 1) {
        size_t half = n / 2;
        base = pi * r->Q[base + half] - r->P[base + half] <= target ? base + half : base;
        n -= half;
    }
    return r->ord[base + (pi * r->Q[base + 1] - r->P[base + 1] <= target)];
}

typedef struct S_key {
    double r; /* q/p, +inf where p = 0 < q, -1 where p = q = 0 */
    uint32_t x;
} S_key;

static int S_cmp(const void *a, const void *b)
{
    const S_key *u = a, *v = b;
    return u->r > v->r ? -1 : u->r < v->r ? 1 : (u->x > v->x) - (u->x < v->x);
}

static void S_plan_free(void *plan)
{
    S_plan *pl = plan;
    if (!pl)
        return;
    free(pl->mem);
    free(pl->rows);
    free(pl->init);
    free(pl);
}

/* Row (t, a)'s tables into the slab at mem (S_new's layout); key: V of scratch. */
static int S_row_build(S_row *r, char *mem, const double *p, const double *q, size_t V, unsigned lgK,
                       S_key *key, sd_error *err)
{
    const size_t K = (size_t)1 << lgK;
    uint64_t *ap = (uint64_t *)(void *)mem, *aq = ap + K;
    double *rs = (double *)(aq + K), *rat = rs + V, *Q = rat + V, *P = Q + V + 1;
    uint32_t *ord = (uint32_t *)(P + V + 1);
    int rc = sd_token_alias_build(p, V, lgK, ap, err);
    if (!rc)
        rc = sd_token_alias_build(q, V, lgK, aq, err);
    if (rc)
        return rc;
    for (size_t x = 0; x < V; x++) {
        /* p = 0 < q first (π q > p for every π > 0), p = q = 0 last
         * (never): the predicate π r > 1 must hold on a prefix */
        key[x].r = p[x] > 0.0 ? q[x] / p[x] : q[x] > 0.0 ? HUGE_VAL : -1.0;
        key[x].x = (uint32_t)x;
        rat[x] = p[x] > 0.0 ? q[x] / p[x] : 0.0;
    }
    qsort(key, V, sizeof *key, S_cmp);
    Q[0] = P[0] = 0.0;
    for (size_t j = 0; j < V; j++) {
        ord[j] = key[j].x;
        rs[j] = key[j].r;
        Q[j + 1] = Q[j] + q[ord[j]];
        P[j + 1] = P[j] + p[ord[j]];
    }
    *r = (S_row){ord, rs, Q, P, rat, ap, aq};
    return SD_OK;
}

static int S_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, int broken,
                 sd_error *err)
{
    *plan = NULL;
    const sd_chain *c = m->chain;
    if (!c || c->V > ((size_t)1 << 23))
        return SD_EUSAGE; /* not applicable: no stored rows (or beyond the alias tables' 2^24 columns) */
    size_t V = c->V, T = c->T, nrows = T * V;
    unsigned lgK = 1;
    while (((size_t)1 << lgK) < V)
        lgK++;
    const size_t K = (size_t)1 << lgK;
    if (max_bytes == 0)
        max_bytes = (size_t)1 << 30; /* the engine's default (sims/sd_sim.h) */
    /* per row: two alias tables, rs and rat, Q and P, ord; 8-byte aligned */
    size_t per_row = 2 * K * sizeof(uint64_t) + 2 * V * sizeof(double) + 2 * (V + 1) * sizeof(double) +
                     V * sizeof(uint32_t);
    per_row = (per_row + 7) / 8 * 8;
    if (nrows && (max_bytes < K * sizeof(uint64_t) || per_row > (max_bytes - K * sizeof(uint64_t)) / nrows))
        return sd_error_set(err, SD_ETOOBIG, "block kernel: tables of %zu rows x %zu bytes exceed %zu bytes",
                            nrows, per_row, max_bytes);
    S_plan *pl = calloc(1, sizeof *pl);
    S_key *key = malloc(V * sizeof *key);
    if (pl) {
        pl->rows = malloc(nrows * sizeof *pl->rows);
        pl->mem = malloc(nrows * per_row);
        pl->init = malloc(K * sizeof *pl->init);
    }
    if (!pl || !key || !pl->rows || !pl->mem || !pl->init) {
        S_plan_free(pl);
        free(key);
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory for %zu rows", nrows);
    }
    pl->V = V;
    pl->T = T;
    pl->gamma = par->gamma;
    pl->gmax = par->gamma && par->gamma < T ? par->gamma : T;
    pl->lgK = lgK;
    pl->broken = broken;
    int rc = sd_token_alias_build(c->init, V, lgK, pl->init, err);
    for (size_t t = 1; t <= T && !rc; t++)
        for (size_t a = 0; a < V && !rc; a++) {
            size_t i = (t - 1) * V + a;
            rc = S_row_build(pl->rows + i, (char *)pl->mem + i * per_row, sd_chain_p(c, t, a),
                             sd_chain_q(c, t, a), V, lgK, key, err);
        }
    free(key);
    if (rc) {
        S_plan_free(pl);
        return rc;
    }
    *plan = pl;
    return SD_OK;
}

/* Drafting step i of the round's iteration for the trials live[0..nl-1]
 * (block b + i - 1 of their streams); returns the trials that go on to
 * step i + 1, compacted in live. */
static size_t S_draft_step(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0, uint64_t blk, size_t i,
                           size_t nl, size_t *tok)
{
    const size_t V = pl->V;
    const unsigned lgK = pl->lgK;
    uint32_t *live = w->live;
    sd_rngbuf_trials_at(seed, blk, g0, live, nl, w->ue, w->uo);
    size_t keep = 0;
    for (size_t b = 0; b < nl; b++) {
        uint32_t s = live[b], n = w->n[s], G = w->G[s];
        const S_row *r = pl->rows + (size_t)(n + i - 2) * V + w->y[s];
        size_t x = sd_token_alias_draw(r->ap, lgK, w->ue[b]);
        if (tok)
            tok[s * (pl->T + 1) + n + i - 1] = x;
        double pi = w->pi[s] * r->rat[x];
        pi = pi >= 1.0 ? 1.0 : pi; /* p_i = min(1, p_{i-1} q/p) */
        w->pi[s] = pi;
        w->y[s] = (uint32_t)x;
        if (pi == 0.0)
            continue; /* nothing later can be accepted (m_j = 0): stop drafting */
        double eta = (double)w->uo[b] * S_2M53;
        int accept;
        if (i < G) {
            const S_row *nx = pl->rows + (size_t)(n + i - 1) * V + x;
            double m = S_mass(nx, S_jstar(nx, V, pi), pi);
            accept = eta * (m + (1.0 - pi)) < m; /* η < h_i = m_i / (m_i + 1 - p_i) */
        } else {
            accept = eta < pi; /* h_G = p_G */
        }
        if (accept) {
            w->tau[s] = (uint32_t)i;
            w->taup[s] = pi;
            w->tauprev[s] = (uint32_t)x;
        }
        live[keep] = s;
        keep += i < G;
    }
    return keep;
}

/* The last token of the round's iteration for the trials act[0..na-1]
 * (block blk): the bonus or the residual; per-trial statistics; returns the
 * trials that run another iteration, compacted in act. */
static size_t S_finish(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0, uint64_t blk, size_t na,
                       size_t L, int first, double *hist, size_t *tok)
{
    const size_t V = pl->V, T = pl->T;
    const unsigned lgK = pl->lgK;
    uint32_t *act = w->act;
    sd_rngbuf_trials_at(seed, blk, g0, act, na, w->ue, w->uo);
    size_t keep = 0;
    for (size_t b = 0; b < na; b++) {
        uint32_t s = act[b], n = w->n[s], G = w->G[s], tau = w->tau[s];
        uint64_t U = w->ue[b];
        size_t x = 0, emitted;
        if (tau == G) {
            emitted = G;
            x = w->tauprev[s]; /* X_G */
            if (n + G <= T) {   /* the bonus token, from q(.|X^G) */
                x = sd_token_alias_draw(pl->rows[(size_t)(n + G - 1) * V + x].aq, lgK, U);
                emitted++;
            }
        } else {
            const S_row *r = pl->rows + (size_t)(n + tau - 1) * V + w->tauprev[s];
            double piv = pl->broken ? 1.0 : w->taup[s];
            size_t j = S_jstar(r, V, piv);
            double m = S_mass(r, j, piv);
            /* m = 0 at τ < G has probability 0 (sims/block.c); rounding: q */
            x = j && m > 0.0 ? S_residual(r, j, piv, m, (double)U * S_2M53) : sd_token_alias_draw(r->aq, lgK, U);
            w->rej[s]++;
            emitted = tau + 1;
        }
        if (tok && emitted > tau)
            tok[s * (T + 1) + n + tau] = x;
        w->its[s]++;
        w->s1[s] += tau;
        w->s2[s] += (uint64_t)tau * tau;
        w->rb[s] += 1.0 - w->pi[s]; /* P(rejection | drafts) = 1 - p_G (eq. 5) */
        if (hist)
            hist[tau] += 1.0;
        w->prev[s] = (uint32_t)x;
        w->n[s] = n + (uint32_t)emitted;
        act[keep] = s;
        keep += !first && n + emitted <= L;
    }
    return keep;
}

/* Trials g0..g0+S-1 (S <= w->S); tok: their rows x_0..x_T (T + 1 each) or NULL. */
static void S_group(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0, size_t S, const sd_observe *obs,
                    size_t *tok)
{
    const size_t V = pl->V, T = pl->T, L = obs->L ? obs->L : T, gmax = pl->gmax, tstride = T + 1;
    sd_rngbuf_trials(seed, 0, g0, S, w->ue, w->uo);
    for (size_t s = 0; s < S; s++) {
        size_t x0 = sd_token_alias_draw(pl->init, pl->lgK, w->ue[s]);
        w->prev[s] = (uint32_t)x0;
        w->n[s] = 1;
        w->act[s] = (uint32_t)s;
        if (tok)
            tok[s * tstride] = x0;
    }
    memset(w->rej, 0, S * sizeof *w->rej);
    memset(w->its, 0, S * sizeof *w->its);
    memset(w->s1, 0, S * sizeof *w->s1);
    memset(w->s2, 0, S * sizeof *w->s2);
    for (size_t s = 0; s < S; s++)
        w->rb[s] = 0.0;
    size_t na = L >= 1 ? S : 0;
    for (uint64_t k = 0; na > 0; k++) {
        uint64_t base = 1 + k * (gmax + 1);
        for (size_t b = 0; b < na; b++) {
            uint32_t s = w->act[b];
            size_t rest = T - w->n[s] + 1;
            w->G[s] = (uint32_t)(pl->gamma && pl->gamma < rest ? pl->gamma : rest);
            w->y[s] = w->tauprev[s] = w->prev[s];
            w->pi[s] = w->taup[s] = 1.0;
            w->tau[s] = 0;
            w->live[b] = s;
        }
        size_t nl = na;
        for (size_t i = 1; i <= gmax && nl > 0; i++)
            nl = S_draft_step(pl, w, seed, g0, base + i - 1, i, nl, tok);
        na = S_finish(pl, w, seed, g0, base + gmax, na, L, obs->first_iteration, obs->hist, tok);
    }
    for (size_t s = 0; s < S; s++) {
        if (obs->acc)
            sd_welford_merge_sums(obs->acc, w->its[s], w->s1[s], w->s2[s]);
        if (obs->rej)
            sd_welford_add(obs->rej, (double)w->rej[s]);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)w->its[s]);
        if (obs->rb)
            sd_welford_add(obs->rb, w->rb[s]);
        if (!tok)
            continue;
        const size_t *x = tok + s * tstride;
        if (obs->pos)
            for (size_t n = 1; n <= T; n++)
                obs->pos[(n - 1) * V + x[n]] += 1.0;
        if (obs->cells) {
            size_t c = 0;
            for (size_t i = 1; i <= L; i++)
                c = c * V + x[i];
            obs->cells[c] += 1.0;
        }
    }
}

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi, const sd_observe *obs)
{
    const S_plan *pl = plan;
    S_work *w = work;
    const size_t T = pl->T, L = obs->L ? obs->L : T;
    size_t *tok = obs->pos || obs->cells || obs->tokens ? w->tok : NULL;
    for (uint64_t g0 = lo; g0 < hi; g0 += w->S) {
        size_t S = hi - g0 < w->S ? (size_t)(hi - g0) : w->S;
        S_group(pl, w, seed, g0, S, obs, tok);
        if (obs->tokens) /* x_0..x_L: drafts past x_L of the last iteration are not the trial's */
            for (size_t s = 0; s < S; s++)
                memcpy(obs->tokens + (size_t)(g0 - lo + s) * (T + 1), tok + s * (T + 1), (L + 1) * sizeof *tok);
    }
}

static int S_new_exact(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                       unsigned threads, sd_error *err)
{
    (void)threads;
    return S_new(plan, m, par, max_bytes, 0, err);
}

static int S_new_broken(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                        unsigned threads, sd_error *err)
{
    (void)threads;
    return S_new(plan, m, par, max_bytes, 1, err);
}

static void S_work_free(void *work)
{
    S_work *w = work;
    if (!w)
        return;
    void *arrays[] = {w->n, w->prev, w->G, w->y, w->tau, w->tauprev, w->rej, w->its, w->s1, w->s2,
                      w->pi, w->taup, w->rb, w->tok, w->act, w->live, w->ue, w->uo};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(w);
}

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    S_work *w = calloc(1, sizeof *w);
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory");
    size_t S = w->S = S_GROUP;
    uint32_t **u32[] = {&w->n, &w->prev, &w->G, &w->y, &w->tau, &w->tauprev, &w->rej, &w->its, &w->act, &w->live};
    uint64_t **u64[] = {&w->s1, &w->s2, &w->ue, &w->uo};
    double **dbl[] = {&w->pi, &w->taup, &w->rb};
    int bad = 0;
    for (size_t i = 0; i < sizeof u32 / sizeof u32[0]; i++)
        bad |= !(*u32[i] = malloc(S * sizeof **u32[i]));
    for (size_t i = 0; i < sizeof u64 / sizeof u64[0]; i++)
        bad |= !(*u64[i] = malloc(S * sizeof **u64[i]));
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
        bad |= !(*dbl[i] = malloc(S * sizeof **dbl[i]));
    bad |= !(w->tok = malloc(S * (pl->T + 1) * sizeof *w->tok));
    if (bad) {
        S_work_free(w);
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory");
    }
    *work = w;
    return SD_OK;
}

#define S_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_FIRST | SD_OBS_RB | SD_OBS_TOKENS)

const sd_kernel_type sd_block_kernel = {
    "block-sorted", S_SUPPORTS, S_new_exact, S_plan_free, S_work_new, S_work_free, S_run,
};

const sd_kernel_type sd_block_kernel_broken = {
    "block-sorted-broken", S_SUPPORTS, S_new_broken, S_plan_free, S_work_new, S_work_free, S_run,
};
