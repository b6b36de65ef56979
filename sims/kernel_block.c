/* kernel_block.c — a fast kernel for block verification (sims/block.c;
 * Sun et al. 2024, "Block verification accelerates speculative decoding",
 * Alg. 2, eqs. 3–5), with the law of sd_block_step and other random
 * numbers.
 *
 * The generic step spends two O(V) scans per drafted token on the residual
 * mass m(π) = Σ_x max(π q(x) - p(x), 0) and on the residual sample.  Per
 * row (position t, previous token a) this kernel stores the tokens sorted
 * by q/p decreasing (p = 0 < q first, p = q = 0 last), with prefix sums Q_j, P_j in
 * that order.  π q(x) > p(x) holds exactly for the first j*(π) tokens of
 * that order (q/p > 1/π), so
 *     m(π) = π Q_{j*} - P_{j*},
 * with j* found by one binary search; and the residual's cumulative weight
 * over the first j sorted tokens, W_j = π Q_j - P_j, increases with j up
 * to j*, so a residual sample is a second binary search for the first j
 * with W_{j+1} > u m.  Drafts and bonus tokens are drawn by binary search
 * in the rows' cumulative sums of p and q.  Everything else (the
 * acceptance rule η < h_i, h_i = m_i / (m_i + 1 - p_i), h_G = p_G; the
 * horizon's dummy position; the early stop at p_i = 0) is sd_block_step's.
 *
 * Random numbers: one Philox stream per trial (seed, trial), computed
 * eight counter blocks at a time (src/sd_rngbuf.h), so results do not
 * depend on the thread count; the uniforms are
 * 32-bit, (k + 1/2) 2^-32: a decision's probability is off by at most
 * 2^-32 from the exact one, far below any Monte-Carlo resolution here.
 *
 * The broken variant (SD_OBS-identical, a control for `check`) samples the
 * residual with π = 1, i.e. [q - p]+, instead of π = p_τ (eq. 4). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_rngbuf.h"
#include "sd_block.h"

typedef struct S_row {
    uint32_t *ord;    /* [V] tokens by q/p decreasing */
    double *qs, *ps;  /* [V] q, p in that order */
    double *Q, *P;    /* [V+1] prefix sums in that order */
    double *cp, *cq;  /* [V] cumulative p, q in token order */
    const double *p, *q; /* the chain's rows (the model outlives the plan's runs) */
} S_row;

typedef struct S_plan {
    size_t V, T, gamma;
    int broken;
    double *init_c; /* [V] cumulative init */
    S_row *rows;    /* [T*V]: row (t, a) at (t-1)V + a */
    void *mem;
} S_plan;

typedef struct S_work {
    size_t *tok; /* [T+2] */
} S_work;

static const double S_U32 = 1.0 / 4294967296.0;

static inline double S_u(sd_rngbuf *s)
{
    return ((double)sd_rngbuf_u32(s) + 0.5) * S_U32;
}

/* The searches below are branch-free binary searches (the loop runs
 * ceil(log2 n) times whatever the data; the comparisons become
 * conditional moves): each finds the length f of the prefix on which a
 * monotone predicate holds.  Invariant: f is in [base, base + n]; a step
 * moves base past a half known to hold, or keeps base with n - half >=
 * half; at n = 1, f = base + pred(base). */

/* The first index x with c[x] > u c[n-1] (a draw from the weights whose
 * cumulative sums are c; an entry of weight 0 is never returned). */
static inline size_t S_search(const double *c, size_t n, double u)
{
    double target = u * c[n - 1];
    size_t base = 0;
    while (n > 1) {
        size_t half = n / 2;
        base = c[base + half - 1] <= target ? base + half : base;
        n -= half;
    }
    return base + (c[base] <= target); /* the answer is base or base + 1 */
}

/* j*(π): the number of sorted tokens with π q > p. */
static inline size_t S_jstar(const S_row *r, size_t V, double pi)
{
    size_t base = 0, n = V;
    while (n > 1) {
        size_t half = n / 2;
        base = pi * r->qs[base + half - 1] > r->ps[base + half - 1] ? base + half : base;
        n -= half;
    }
    return base + (pi * r->qs[base] > r->ps[base]);
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
    double r; /* q/p, +inf where p = 0 */
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
    free(pl->init_c);
    free(pl);
}

static int S_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, int broken,
                 sd_error *err)
{
    *plan = NULL;
    const sd_chain *c = m->chain;
    if (!c || c->V > UINT32_MAX)
        return SD_EUSAGE; /* not applicable: no stored rows */
    size_t V = c->V, T = c->T, nrows = T * V;
    if (max_bytes == 0)
        max_bytes = (size_t)1 << 30; /* the engine's default (sims/sd_sim.h) */
    size_t per_row = V * (sizeof(uint32_t) + 6 * sizeof(double)) + 2 * sizeof(double);
    per_row = (per_row + sizeof(double) - 1) / sizeof(double) * sizeof(double); /* rows' doubles aligned */
    if (nrows && (max_bytes < V * sizeof(double) || per_row > (max_bytes - V * sizeof(double)) / nrows))
        return sd_error_set(err, SD_ETOOBIG, "block kernel: tables of %zu rows x %zu bytes exceed %zu bytes",
                            nrows, per_row, max_bytes);
    S_plan *pl = calloc(1, sizeof *pl);
    S_key *key = malloc(V * sizeof *key);
    if (pl) {
        pl->rows = malloc(nrows * sizeof *pl->rows);
        pl->mem = malloc(nrows * per_row);
        pl->init_c = malloc(V * sizeof *pl->init_c);
    }
    if (!pl || !key || !pl->rows || !pl->mem || !pl->init_c) {
        S_plan_free(pl);
        free(key);
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory for %zu rows", nrows);
    }
    pl->V = V;
    pl->T = T;
    pl->gamma = par->gamma;
    pl->broken = broken;
    double s = 0.0;
    for (size_t x = 0; x < V; x++)
        pl->init_c[x] = (s += c->init[x]);
    char *mem = pl->mem;
    for (size_t t = 1; t <= T; t++)
        for (size_t a = 0; a < V; a++) {
            S_row *r = pl->rows + (t - 1) * V + a;
            const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
            r->qs = (double *)mem;
            r->ps = r->qs + V;
            r->cp = r->ps + V;
            r->cq = r->cp + V;
            r->Q = r->cq + V;
            r->P = r->Q + V + 1;
            r->ord = (uint32_t *)(r->P + V + 1);
            mem += per_row;
            r->p = p;
            r->q = q;
            double sp = 0.0, sq = 0.0;
            for (size_t x = 0; x < V; x++) {
                /* p = 0 < q first (π q > p for every π > 0), p = q = 0 last
                 * (never): the predicate π q > p must hold on a prefix */
                key[x].r = p[x] > 0.0 ? q[x] / p[x] : q[x] > 0.0 ? HUGE_VAL : -1.0;
                key[x].x = (uint32_t)x;
                r->cp[x] = (sp += p[x]);
                r->cq[x] = (sq += q[x]);
            }
            qsort(key, V, sizeof *key, S_cmp);
            for (size_t j = 0; j < V; j++)
                r->ord[j] = key[j].x;
            r->Q[0] = r->P[0] = 0.0;
            for (size_t j = 0; j < V; j++) {
                r->qs[j] = q[r->ord[j]];
                r->ps[j] = p[r->ord[j]];
                r->Q[j + 1] = r->Q[j] + r->qs[j];
                r->P[j + 1] = r->P[j] + r->ps[j];
            }
        }
    free(key);
    *plan = pl;
    return SD_OK;
}

/* One iteration from position n after prev: tokens into out, returns the
 * number emitted; *acc the accepted count, *rej 1 on a rejection, *rb the
 * conditional rejection probability 1 - p_G (sims/block.c). */
static size_t S_iteration(const S_plan *pl, sd_rngbuf *rng, size_t n, size_t prev, size_t *out,
                          size_t *acc, int *rej, double *rb)
{
    const size_t V = pl->V, T = pl->T;
    size_t rest = T - n + 1, G = pl->gamma && pl->gamma < rest ? pl->gamma : rest;
    size_t tau = 0, tau_prev = prev, y = prev;
    double pi = 1.0, tau_p = 1.0;
    for (size_t i = 1; i <= G; i++) {
        const S_row *r = pl->rows + (n + i - 2) * V + y;
        size_t x = S_search(r->cp, V, S_u(rng));
        out[i - 1] = x;
        /* p_i = min(1, p_{i-1} q/p); p(x) > 0 because x was drawn from p */
        double num = pi * r->q[x];
        pi = num >= r->p[x] ? 1.0 : num / r->p[x];
        y = x;
        if (pi == 0.0)
            break;
        double eta = S_u(rng);
        int accept;
        if (i < G) {
            const S_row *nx = pl->rows + (n + i - 1) * V + x;
            double m = S_mass(nx, S_jstar(nx, V, pi), pi);
            accept = eta * (m + (1.0 - pi)) < m;
        } else {
            accept = eta < pi;
        }
        if (accept) {
            tau = i;
            tau_p = pi;
            tau_prev = x;
        }
    }
    *acc = tau;
    *rb = 1.0 - pi;
    if (tau == G) {
        *rej = 0;
        if (n + G <= T) {
            const S_row *r = pl->rows + (n + G - 1) * V + tau_prev;
            out[G] = S_search(r->cq, V, S_u(rng));
            return G + 1;
        }
        return G;
    }
    const S_row *r = pl->rows + (n + tau - 1) * V + tau_prev;
    double piv = pl->broken ? 1.0 : tau_p, u = S_u(rng);
    size_t j = S_jstar(r, V, piv);
    double m = S_mass(r, j, piv);
    out[tau] = j && m > 0.0 ? S_residual(r, j, piv, m, u) : S_search(r->cq, V, u);
    *rej = 1;
    return tau + 1;
}

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi, const sd_observe *obs)
{
    const S_plan *pl = plan;
    size_t *tok = ((S_work *)work)->tok;
    const size_t V = pl->V, T = pl->T, L = obs->L ? obs->L : T;
    for (uint64_t t = lo; t < hi; t++) {
        sd_rngbuf rng;
        sd_rngbuf_init(&rng, seed, t);
        tok[0] = S_search(pl->init_c, V, S_u(&rng));
        size_t rejections = 0, calls = 0;
        double rb = 0.0;
        for (size_t n = 1; n <= L;) {
            size_t acc;
            int rej;
            double rbi;
            size_t e = S_iteration(pl, &rng, n, tok[n - 1], tok + n, &acc, &rej, &rbi);
            rejections += (size_t)rej;
            calls++;
            rb += rbi;
            if (obs->hist)
                obs->hist[acc] += 1.0;
            if (obs->acc)
                sd_welford_add(obs->acc, (double)acc);
            n += e;
            if (obs->first_iteration)
                break;
        }
        if (obs->rej)
            sd_welford_add(obs->rej, (double)rejections);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)calls);
        if (obs->rb)
            sd_welford_add(obs->rb, rb);
        if (obs->pos)
            for (size_t n = 1; n <= T; n++)
                obs->pos[(n - 1) * V + tok[n]] += 1.0;
        if (obs->cells) {
            size_t k = 0;
            for (size_t i = 1; i <= L; i++)
                k = k * V + tok[i];
            obs->cells[k] += 1.0;
        }
        if (obs->tokens)
            memcpy(obs->tokens + (size_t)(t - lo) * (T + 1), tok, (L + 1) * sizeof *tok);
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

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    S_work *w = malloc(sizeof *w);
    if (w)
        w->tok = malloc((pl->T + 2) * sizeof *w->tok);
    if (!w || !w->tok) {
        free(w);
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory");
    }
    *work = w;
    return SD_OK;
}

static void S_work_free(void *work)
{
    S_work *w = work;
    if (w)
        free(w->tok);
    free(w);
}

#define S_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_FIRST | SD_OBS_RB | SD_OBS_TOKENS)

const sd_kernel_type sd_block_kernel = {
    "block-sorted", S_SUPPORTS, S_new_exact, S_plan_free, S_work_new, S_work_free, S_run,
};

const sd_kernel_type sd_block_kernel_broken = {
    "block-sorted-broken", S_SUPPORTS, S_new_broken, S_plan_free, S_work_new, S_work_free, S_run,
};
