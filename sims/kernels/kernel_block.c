/* kernel_block.c — a fast kernel for block verification (sims/verifiers/block.c;
 * Sun et al. 2025, "Block verification accelerates speculative decoding",
 * Alg. 2, eqs. 3–5), with the law of sd_block_step and other random
 * numbers.
 *
 * Tables.  The generic step spends two O(V) scans per drafted token on the
 * residual mass m(π) = Σ_x max(π q(x) - p(x), 0) and on the residual
 * sample.  Per row (position t, previous token a) this kernel stores the
 * tokens sorted by r = q/p decreasing (p = 0 < q first with r = +inf,
 * p = q = 0 last with r = -1), with prefix sums Q_j, P_j in that order
 * (stored as interleaved pairs: one cache line holds both).
 * π q(x) > p(x), i.e. π r(x) > 1, holds exactly for the first j*(π)
 * tokens of that order, so
 *     m(π) = π Q_{j*} - P_{j*},
 * with j* found by one binary search (or by counting on small rows: the
 * same number).  The row stores, in place of each sorted r, its threshold
 * θ = sd_block_threshold(r), the least double with fl(θ r) > 1: as
 * fl(π r) is monotone in π, fl(π r) > 1 <=> π >= θ for every π in (0, 1]
 * (sims/verifiers/sd_block.h), so j*(π) = #{j : π >= θ_j} is the same count with one
 * comparison and no multiply on the chain of dependent loads (row, θ, j*,
 * pair) of a drafting step; and the residual's
 * cumulative weight over the first j sorted tokens, W_j = π Q_j - P_j,
 * increases with j up to j*, so a residual sample is the number of
 * t = 1..j*-1 with W_t <= u m (a count, or a binary search on long rows).
 * The residual of an iteration that stopped at τ is at row (n + τ, X_τ)
 * with π = p_τ: the j* and m that drafting step τ computed there for h_τ
 * (τ = 0: π = 1, whose j*(1), m(1) each row stores).  Drafts X_i ~ p and bonus
 * tokens ~ q are drawn from integer alias tables (sd_token_alias_draw,
 * sims/verifiers/sd_token.h: every token returned for exactly its mass of the 2^53
 * values of a 53-bit uniform, never one of probability 0), and
 * p_i = min(1, p_{i-1} q(X_i)/p(X_i)) multiplies p_{i-1} by the row's
 * stored ratio r(X_i) (p(X_i) > 0: X_i was drawn from p), kept beside the
 * alias word of each column of p's table (S_APR): one line gives the
 * draft and its ratio.  Everything
 * else (the acceptance rule η < h_i, h_i = m_i / (m_i + 1 - p_i),
 * h_G = p_G; the horizon's dummy position; the early stop at p_i = 0) is
 * sd_block_step's.
 *
 * Lockstep.  A group of trials runs iteration by iteration: in round k
 * every trial still running does its k-th iteration, drafting step i of
 * all of them before step i + 1, so the per-trial state lives in arrays,
 * the random numbers of a step are computed for all its trials at once
 * (sd_rngbuf_trials_hi_at, sd_rngbuf_trials_at: AVX-512 across trials)
 * and the table loads of different trials are independent (they overlap in
 * the processor).  Each
 * step records X_i, p_i, j*, m_i; after the last step τ and its state are
 * picked from these records (S_tau_scalar).  The
 * list of trials still running is compacted after each round; within a
 * round, trials that stopped drafting are masked.  With AVX-512 a step runs
 * as vector passes over the trials (S_draft_avx512, S_last_avx512), with
 * the scalar code's arithmetic in the same order; the list is padded to a
 * multiple of eight places with places that never draft.
 *
 * Random numbers: 53-bit uniforms of the trial's sd_stream (seed, trial),
 * laid out so that every trial of a round uses the same Philox block
 * (the uniform of (seed, trial, iteration, role) is a fixed function, so
 * results do not depend on the thread count).  With Gmax = γ (or T at
 * lookahead to the horizon) and H = ⌈Gmax/4⌉, block 0 draws x_0 (its
 * even uniform: words 0, 1), and iteration k (0-based) uses blocks
 * b_k = 1 + k (H + 1) onwards.  X_i's uniform is the 53-bit integer
 * U = w·2^21 + L with w = word (i - 1) mod 4 of block b_k + ⌊(i - 1)/4⌋
 * (four drafts per block) and L = the top 21 bits of the same word of
 * block SD_TOKEN_LOW_BLOCK + b_k + ⌊(i - 1)/4⌋ (a counter range no trial
 * reaches), the token kernel's scheme (sims/kernels/kernel_token.c, "uniforms"): the
 * alias test compares f = U mod 2^(53-lgK) with the column's thr, and w
 * alone decides it unless f_w < thr <= f_w + 2^21 - 1 (f_w: w·2^21 mod
 * 2^(53-lgK)), at most 2^21 of the 2^53 values of U per column; only then
 * is L computed (S_draw_p), so the outcome is always the whole U's.  Block
 * b_k + H draws the iteration's last token (even uniform) and its τ (odd):
 * instead of a coin η_i per step (Alg. 2), τ is drawn from its law given
 * the drafts with one uniform (S_tau_scalar), the same joint law of drafts
 * and τ.  No uniform is used twice, so they are independent, as
 * sd_block_step's are.
 *
 * Statistics are accumulated per trial (integer counts, the iteration's
 * 1 - p_G summed in iteration order; they move with the trial's place when
 * the list is compacted) and, after the group, merged into the observers
 * once per statistic from exact integer sums over the group's trials
 * (sd_welford_merge_sums: rejections and target calls from Σx, Σx²,
 * accepted per iteration from the group's histogram of τ); the
 * Rao-Blackwellised 1 - p_G sums, doubles, are added trial by trial in
 * trial order.  Groups start at the first trial of each run call (an
 * engine block): a function of (seed, block).
 *
 * The broken variant (SD_OBS-identical, a control for `check`) samples the
 * residual with π = 1, i.e. [q - p]+, instead of π = p_τ (eq. 4). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_rngbuf.h"
#include "../verifiers/sd_block.h"
#include "../verifiers/sd_token.h"
#include "sd_kernel_pair.h"


#define S_GROUP 256    /* trials per lockstep group */
#define S_COUNT_MAX 64 /* rows up to this size: j* by counting (vector code) */
#define S_LINE 64      /* bytes of a cache line: rows are aligned to it */
#define S_HCOPIES 4    /* copies of the histogram of τ */

/* A row's tables, inside the plan's slab (S_row_at). */
/* Entry k of a row's draft table takes S_APR words: the alias word
 * thr·K + alias of p's table (sd_token_alias_build's), then r(k) and
 * r(alias) as doubles (q/p, 0 where p = 0 or k >= V: never drafted), so
 * that a draft and its ratio come from one load of one line; the fourth
 * word pads the entry to 32 bytes. */
#define S_APR 4

typedef struct S_row {
    const uint64_t *apr;     /* [K][S_APR] p's alias table with the ratios (above) */
    const uint64_t *aq;      /* [K] q's alias table */
    const double *th;        /* [V, padded with +inf to a multiple of 8] the thresholds
                                sd_block_threshold(r) of q/p by q/p decreasing (r = +inf where
                                p = 0 < q, -1 where p = q = 0) */
    const double *QP;        /* [V+1 pairs, padded to a multiple of 8] the prefix sums (Q_j, P_j) of
                                q, p in the sorted order, interleaved: one line holds both */
    const uint32_t *ord;     /* [V] tokens by q/p decreasing */
    size_t j1;               /* j*(1) */
    double m1;               /* m(1) = Σ max(q - p, 0) */
} S_row;

/* Byte offsets of a row's arrays from its start; rows are `stride` bytes
 * apart (the vector code computes addresses from these). */
typedef struct S_layout {
    size_t apr, aq, th, QP, ord, j1, m1, stride;
} S_layout;

typedef struct S_plan {
    size_t V, T, gamma, gmax;
    unsigned lgK;
    int broken;
    uint64_t *init; /* [K] alias table of the initial law */
    S_layout lay;
    char *slab;     /* [T*V rows]: row (t, a) at ((t-1)V + a)·stride */
} S_plan;

/* A trial's counts (rejections, iterations, Σ (1 - p_G)) in arrays, entry
 * k for trial act[k]. */
typedef struct S_counts {
    uint32_t *act, *rej, *its;
    double *rb;
} S_counts;

static inline void S_counts_set(const S_counts *c, size_t k, uint32_t s, uint32_t rej, uint32_t its, double rb)
{
    c->act[k] = s;
    c->rej[k] = rej;
    c->its[k] = its;
    c->rb[k] = rb;
}

typedef struct S_work {
    size_t S;
    double *trb;    /* [S]: Σ (1 - p_G) by trial of the group */
    size_t *tok;    /* [S][T+1]: x_0..x_T when an observer needs them */
    /* the trials running, by place (compacted after each round), with
     * their counts so far (moved with them: sequential, not scattered by
     * trial); run.act: the trials */
    S_counts run;
    uint32_t *n;
    S_counts done; /* the trials done, in the order they finished */
    /* the round's iteration, by place in act */
    uint32_t *G, *y, *tau, *tauprev;
    double *pi, *taup;
    double *pis; /* p_{i-1} of the groups whose draft test was left open (S_draft8) */
    /* j*(p_τ) and m(p_τ) at row (n + τ, X_τ), from step τ's records
     * (S_tau): the residual's (S_reject_token; τ = 0 reads the row's j1, m1) */
    uint32_t *tauj;
    double *taum;
    /* the round's drafting steps, step i at [i·(S + 8)..]: X_i, p_i, and
     * where i < G, j*(p_i) and m_i at row (n + i, X_i) (S_tau) */
    uint32_t *xs, *js;
    double *ps, *ms;
    uint64_t *ue, *uo; /* 53-bit uniforms by place */
    uint64_t *uh[2][4]; /* the drafts' high words by place: two sets (S_group) */
    /* the vector passes (S_draft_avx512, S_last_avx512), by place */
    uint32_t *x;    /* the round's last token */
    uint64_t *R;    /* byte offset of the row in use */
    uint64_t *jb;   /* j* being searched */
    uint8_t *mk;    /* [2·S/8] lane masks: places drafting, places with i < G */
    uint32_t *rl;   /* places whose iteration rejected */
    size_t nrej;    /* how many (S_tau_avx512) */
    uint32_t *idx;  /* slab words to load (sd_fetch64) */
    uint64_t *ent;  /* the words loaded */
    uint64_t *ent1; /* the words after them (S_fetch2) */
    uint64_t *ea;   /* [S + 8][S_APR]: the draft entries of the step, by place (S_copy_entries) */
    double *qp;     /* [2 S] (Q_{j*}, P_{j*}) of m_i = max(π Q_{j*} - P_{j*}, 0), by place */
    uint64_t *hist; /* [S_HCOPIES][Gmax+1]: the group's iterations by τ, place b in copy b % S_HCOPIES
                       (consecutive increments of one counter would wait for each other) */
    unsigned char *arena; /* every array above (S_carve) */
} S_work;

/* The row at byte offset off of the slab. */
static inline S_row S_row_off(const S_plan *pl, size_t off)
{
    const char *r = pl->slab + off;
    const S_layout *l = &pl->lay;
    uint32_t j1;
    double m1;
    memcpy(&j1, r + l->j1, sizeof j1);
    memcpy(&m1, r + l->m1, sizeof m1);
    return (S_row){(const uint64_t *)(const void *)(r + l->apr), (const uint64_t *)(const void *)(r + l->aq),
                   (const double *)(const void *)(r + l->th),   (const double *)(const void *)(r + l->QP),
                   (const uint32_t *)(const void *)(r + l->ord), j1, m1};
}

/* Row ridx = (t - 1) V + a: position t after a. */
static inline S_row S_row_at(const S_plan *pl, size_t ridx)
{
    return S_row_off(pl, ridx * pl->lay.stride);
}

static const double S_2M53 = 1.0 / 9007199254740992.0;

/* The searches below are branch-free binary searches (the loop runs
 * ceil(log2 n) times whatever the data; the comparisons become
 * conditional moves): each finds the length f of the prefix on which a
 * monotone predicate holds.  Invariant: f is in [base, base + n]; a step
 * moves base past a half known to hold, or keeps base with n - half >=
 * half; at n = 1, f = base + pred(base). */

/* j*(π): the number of sorted tokens with π q > p, i.e. fl(π r) > 1, i.e.
 * π >= θ (π in (0, 1]; sd_block_threshold).  Up to 16 tokens a
 * branch-free count (the same number: the predicate holds on a prefix),
 * else the binary search. */
static inline size_t S_jstar(const S_row *r, size_t V, double pi)
{
    if (V <= 16) {
        size_t j = 0;
        for (size_t i = 0; i < V; i++)
            j += pi >= r->th[i];
        return j;
    }
    size_t base = 0, n = V;
    while (n > 1) {
        size_t half = n / 2;
        base += half & -(size_t)(pi >= r->th[base + half - 1]);
        n -= half;
    }
    return base + (pi >= r->th[base]);
}

/* θ(r): the least double with fl(θ r) > 1 (sims/verifiers/sd_block.h).  For finite
 * r > 1 the set {π : fl(π r) > 1} is an up-set of the doubles (fl is
 * monotone) that contains 1 (fl(r) = r > 1) and not 0; 1/r rounded lies
 * within an ulp or two of its least element, which a walk by
 * nextafter from there finds: down while the predecessor still has it,
 * else up to the first that has it. */
double sd_block_threshold(double r)
{
    if (!(r > 1.0))
        return HUGE_VAL; /* no π <= 1: fl(π r) <= r <= 1 (r = -1, 0 included) */
    if (r == HUGE_VAL)
        return DBL_TRUE_MIN; /* π·inf = inf for every π > 0 */
    double t = 1.0 / r;
    if (t * r > 1.0)
        for (double d = nextafter(t, 0.0); d * r > 1.0; d = nextafter(t, 0.0))
            t = d;
    else
        do
            t = nextafter(t, 2.0);
        while (!(t * r > 1.0));
    return t;
}

/* min(v, 1) and c ? a : b without a branch (the compilers' branches on
 * these coins mispredict half the time); same values as the comparisons. */
static inline double S_min1(double v)
{
#if SD_KERNEL_X86
    return _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(v), _mm_set_sd(1.0))); /* v < 1 ? v : 1 */
#else
    return v < 1.0 ? v : 1.0;
#endif
}

/* Where a drafting step's uniforms come from (the layout: top of the
 * file): the run's seed, the group's first trial g0 (trial g0 + act[b] at
 * place b), the index n of the low bits' word (sd_token_low21(seed, trial,
 * n)) and the bits of w·2^21 not trusted to decide (S_window). */
typedef struct S_draws {
    uint64_t seed, g0, nlow, window;
} S_draws;

#define S_LOW21 (((uint64_t)1 << 21) - 1)
static uint64_t S_window = S_LOW21;

void sd_block_test_trust_bits(unsigned bits)
{
    uint64_t w = bits >= 32 ? S_LOW21 : bits == 0 ? ~(uint64_t)0 >> 11 : ((uint64_t)1 << (53 - bits)) - 1;
    __atomic_store_n(&S_window, w, __ATOMIC_RELAXED);
}

/* X ~ p from the row's draft table (apr) with the 53-bit uniform
 * U = hi + L of trial t (hi = w·2^21, L = sd_token_low21(d->seed, t,
 * d->nlow)): sd_token_alias_draw's outcome (column k = U >> (53 - lgK),
 * kept where f = U mod 2^(53-lgK) < thr, else its alias), and r(X) into
 * *rx.  L is computed only where the trusted bits of hi leave f < thr open
 * (f_w < thr <= f_w + window, f_w = hi mod 2^(53-lgK) with the window's
 * bits cleared): at most 2^21 of the 2^53 values of U per column. */
static inline size_t S_draw_p(const uint64_t *apr, unsigned lgK, uint64_t hi, const S_draws *d, uint64_t t,
                              double *rx)
{
    const unsigned s = 53u - lgK;
    const uint64_t cm = ((uint64_t)1 << s) - 1, k = hi >> s, *e = apr + S_APR * k, thr = e[0] >> lgK;
    uint64_t f = hi & cm & ~d->window;
    if (f < thr && (f | d->window) >= thr) /* open: the whole uniform */
        f = (hi | sd_token_low21(d->seed, t, d->nlow)) & cm;
    const int keep = f < thr;
    double rk, ra;
    memcpy(&rk, e + 1, sizeof rk);
    memcpy(&ra, e + 2, sizeof ra);
    *rx = sd_block_sel(keep, rk, ra);
    const uint64_t a = e[0] & (((uint64_t)1 << lgK) - 1);
    return (size_t)(a ^ ((a ^ k) & -(uint64_t)keep));
}

static inline double S_mass(const S_row *r, size_t j, double pi)
{
    double m = pi * r->QP[2 * j] - r->QP[2 * j + 1];
    return m > 0.0 ? m : 0.0;
}

/* A draw from max(π q - p, 0) / m given j = j*(π) >= 1, m > 0 and
 * target = u m (u uniform on [0, 1)): the sorted token t < j with
 * W_t <= target < W_{t+1}, i.e. the number of t in 1..j-1 with W_t <= target
 * (W increases up to j*: the predicate holds on a prefix); at most j - 1,
 * even where u m rounds up to m = W_j.  Rows up to S_COUNT_MAX tokens count
 * (as the vector code, S_count_w8, does), longer ones search by halving. */
static inline size_t S_residual(const S_row *r, size_t V, size_t j, double pi, double target)
{
    size_t base = 0;
    if (V <= S_COUNT_MAX) {
        for (size_t t = 1; t < V; t++)
            base += (t < j) & (pi * r->QP[2 * t] - r->QP[2 * t + 1] <= target);
        return r->ord[base];
    }
    size_t n = j - 1; /* the prefix of t = 1..j-1 (as S_jstar) */
    while (n > 1) {
        size_t half = n / 2;
        size_t t = base + half;
        base += half & -(size_t)(pi * r->QP[2 * t] - r->QP[2 * t + 1] <= target);
        n -= half;
    }
    return r->ord[base + (n && pi * r->QP[2 * base + 2] - r->QP[2 * base + 3] <= target)];
}

static int S_cmp(const void *a, const void *b)
{
    const sd_block_key *u = a, *v = b;
    return u->r > v->r ? -1 : u->r < v->r ? 1 : (u->x > v->x) - (u->x < v->x);
}

void sd_block_sort_row(const double *p, const double *q, size_t V, sd_block_key *key, double *rs, double *Q,
                       double *P, uint32_t *ord)
{
    for (size_t x = 0; x < V; x++) {
        /* p = 0 < q first (π q > p for every π > 0), p = q = 0 last
         * (never): the predicate π r > 1 must hold on a prefix */
        key[x].r = p[x] > 0.0 ? q[x] / p[x] : q[x] > 0.0 ? HUGE_VAL : -1.0;
        key[x].x = (uint32_t)x;
    }
    qsort(key, V, sizeof *key, S_cmp);
    for (size_t j = V; j % 8; j++)
        rs[j] = -1.0; /* never π r > 1 */
    Q[0] = P[0] = 0.0;
    for (size_t j = 0; j < V; j++) {
        ord[j] = key[j].x;
        rs[j] = key[j].r;
        Q[j + 1] = Q[j] + q[ord[j]];
        P[j + 1] = P[j] + p[ord[j]];
    }
}

static void S_plan_free(void *plan)
{
    S_plan *pl = plan;
    if (!pl)
        return;
    free(pl->slab);
    free(pl->init);
    free(pl);
}

/* Row (p, q)'s tables into the row at r (layout l); key: V, Q: 2(V + 1)
 * of scratch. */
static int S_row_build(char *r, const S_layout *l, const double *p, const double *q, size_t V, unsigned lgK,
                       sd_block_key *key, double *Q, sd_error *err)
{
    uint64_t *apr = (uint64_t *)(void *)(r + l->apr), *aq = (uint64_t *)(void *)(r + l->aq);
    double *th = (double *)(void *)(r + l->th);
    double *QP = (double *)(void *)(r + l->QP), *P = Q + V + 1;
    uint32_t *ord = (uint32_t *)(void *)(r + l->ord);
    int rc = sd_token_alias_build(p, V, lgK, apr, err); /* into words 0..K-1, spread below */
    if (!rc)
        rc = sd_token_alias_build(q, V, lgK, aq, err);
    if (rc)
        return rc;
    /* entry k to words S_APR·k.. from the top down (S_APR·k >= k: no word
     * is overwritten before it is read) */
    for (size_t k = ((size_t)1 << lgK); k-- > 0;) {
        const uint64_t e = apr[k], a = e & (((uint64_t)1 << lgK) - 1);
        const double rk = k < V && p[k] > 0.0 ? q[k] / p[k] : 0.0, ra = a < V && p[a] > 0.0 ? q[a] / p[a] : 0.0;
        apr[S_APR * k] = e;
        memcpy(apr + S_APR * k + 1, &rk, sizeof rk);
        memcpy(apr + S_APR * k + 2, &ra, sizeof ra);
        apr[S_APR * k + 3] = 0;
    }
    sd_block_sort_row(p, q, V, key, th, Q, P, ord);
    for (size_t j = 0; j < (V + 7) / 8 * 8; j++)
        th[j] = sd_block_threshold(th[j]); /* the ratios' thresholds (the padding's -1: +inf) */
    for (size_t j = 0; j < (V + 8) / 8 * 8; j++) {
        QP[2 * j] = j <= V ? Q[j] : Q[V]; /* the padding: W_j = π Q_V - P_V */
        QP[2 * j + 1] = j <= V ? P[j] : P[V];
    }
    /* j*(1) and m(1): the residual of an iteration that rejected its first
     * draft (τ = 0, π = p_0 = 1), and of every rejection of the broken
     * control */
    S_row sr = {.th = th, .QP = QP};
    uint32_t j1 = (uint32_t)S_jstar(&sr, V, 1.0);
    double m1 = S_mass(&sr, j1, 1.0);
    memcpy(r + l->j1, &j1, sizeof j1);
    memcpy(r + l->m1, &m1, sizeof m1);
    return SD_OK;
}

static int S_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, int broken,
                 sd_error *err)
{
    *plan = NULL;
    if (sd_draft_policy_decode(par->v[SD_BLOCK_SLOT_POLICY]).rule != SD_DRAFT_FIXED)
        return SD_EUSAGE; /* a draft policy: the generic step */
    const sd_chain *c = m->chain;
    if (!c || c->V > ((size_t)1 << 23))
        return SD_EUSAGE; /* not applicable: no stored rows (or beyond the alias tables' 2^24 columns) */
    size_t V = c->V, T = c->T, nrows = T * V;
    unsigned lgK = sd_kernel_lg_columns(V);
    const size_t K = (size_t)1 << lgK;
    if (max_bytes == 0)
        max_bytes = (size_t)1 << 30; /* the engine's default (sims/engine/sd_sim.h) */
    /* Rows start on 64-byte lines: the sorted thresholds (padded with +inf) and
     * the prefix sums first, each padded to whole 64-byte loads, then the
     * draft's alias table with the ratios, then the bonus's table. */
    S_layout l;
    const size_t r8 = (V + 7) / 8 * 8 * sizeof(double), s16 = (V + 8) / 8 * 16 * sizeof(double);
    l.th = 0;
    l.QP = l.th + r8;
    l.apr = l.QP + s16;
    l.aq = l.apr + S_APR * K * sizeof(uint64_t);
    l.m1 = l.aq + K * sizeof(uint64_t);
    l.j1 = l.m1 + sizeof(double);
    l.ord = l.j1 + sizeof(uint32_t);
    l.stride = (l.ord + V * sizeof(uint32_t) + S_LINE - 1) / S_LINE * S_LINE;
    /* the vector code's byte offsets are products of 32-bit numbers */
    if (nrows && (max_bytes < K * sizeof(uint64_t) || l.stride > (max_bytes - K * sizeof(uint64_t)) / nrows ||
                  nrows * l.stride > UINT32_MAX))
        return sd_error_set(err, SD_ETOOBIG, "block kernel: tables of %zu rows x %zu bytes exceed %zu bytes",
                            nrows, l.stride, max_bytes < UINT32_MAX ? max_bytes : (size_t)UINT32_MAX);
    S_plan *pl = calloc(1, sizeof *pl);
    sd_block_key *key = malloc(V * sizeof *key);
    double *Qs = malloc(2 * (V + 1) * sizeof *Qs);
    if (pl) {
        pl->slab = aligned_alloc(S_LINE, nrows ? nrows * l.stride : S_LINE); /* a multiple of S_LINE */
        pl->init = malloc(K * sizeof *pl->init);
    }
    if (!pl || !key || !Qs || !pl->slab || !pl->init) {
        S_plan_free(pl);
        free(key);
        free(Qs);
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory for %zu rows", nrows);
    }
    pl->V = V;
    pl->T = T;
    pl->gamma = par->gamma;
    pl->gmax = sd_draft_len_max(par->gamma, T);
    pl->lgK = lgK;
    pl->broken = broken;
    pl->lay = l;
    int rc = sd_token_alias_build(c->init, V, lgK, pl->init, err);
    for (size_t t = 1; t <= T && !rc; t++)
        for (size_t a = 0; a < V && !rc; a++)
            rc = S_row_build(pl->slab + ((t - 1) * V + a) * l.stride, &l, sd_chain_p(c, t, a), sd_chain_q(c, t, a),
                             V, lgK, key, Qs, err);
    free(key);
    free(Qs);
    return sd_kernel_plan_done(rc, pl, S_plan_free, plan);
}

#if SD_KERNEL_X86
/* j*(π) of the row at th by counting π >= θ on the padded sorted row,
 * eight tokens per compare (V <= S_COUNT_MAX; the same number as S_jstar). */
__attribute__((target("avx512f"))) static inline size_t S_count8(const double *th, size_t V, double pi)
{
    const __m512d vp = _mm512_set1_pd(pi);
    size_t j = (size_t)__builtin_popcount(_mm512_cmp_pd_mask(vp, _mm512_loadu_pd(th), _CMP_GE_OQ));
    for (size_t c = 8; c < V; c += 8)
        j += (size_t)__builtin_popcount(_mm512_cmp_pd_mask(vp, _mm512_loadu_pd(th + c), _CMP_GE_OQ));
    return j;
}

/* The even and the odd lanes of (lo, hi): Q_j and P_j of eight
 * interleaved pairs. */
#define S_EVEN _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0)
#define S_ODD _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1)

/* S_residual's count on a row of up to S_COUNT_MAX tokens: the t in
 * 1..j-1 with π Q_t - P_t <= target, eight per compare (the same
 * arithmetic: the same number). */
__attribute__((target("avx512f"))) static inline size_t S_count_w8(const double *QP, size_t V, size_t j, double pi,
                                                                 double target)
{
    const __m512d vp = _mm512_set1_pd(pi), tg = _mm512_set1_pd(target);
    size_t c = 0;
    for (size_t o = 0; o < V; o += 8) { /* pairs o..o+7 */
        size_t n = j > o ? j - o : 0;   /* lanes below j */
        __mmask8 k = (__mmask8)((n >= 8 ? 0xffu : (1u << n) - 1u) & (o ? 0xffu : 0xfeu)); /* and t >= 1 */
        __m512d lo = _mm512_loadu_pd(QP + 2 * o), hi = _mm512_loadu_pd(QP + 2 * o + 8);
        __m512d W = _mm512_sub_pd(_mm512_mul_pd(vp, _mm512_permutex2var_pd(lo, S_EVEN, hi)),
                                  _mm512_permutex2var_pd(lo, S_ODD, hi));
        c += (size_t)__builtin_popcount(_mm512_mask_cmp_pd_mask(k, W, tg, _CMP_LE_OQ));
    }
    return c;
}

/* A masked gather from byte offsets off of base: lanes outside m read
 * base itself (always valid) and return src (sd_gather8, sims/verifiers/sd_token.h). */
__attribute__((target("avx512f"))) static inline __m512i S_gather(__m512i src, __mmask8 m, __m512i off, const void *base)
{
    return _mm512_mask_blend_epi64(m, src, sd_gather8(base, _mm512_maskz_mov_epi64(m, off)));
}

__attribute__((target("avx512f"))) static inline __m512d S_gather_pd(__m512d src, __mmask8 m, __m512i off, const void *base)
{
    return _mm512_castsi512_pd(S_gather(_mm512_castpd_si512(src), m, off, base));
}
#endif

/* Drafting step i of the round's iteration (Alg. 2's X_i, p_i and, for
 * h_i, m_i) for the running trials at places b0..na-1 whose iteration
 * still drafts (i <= G, p_{i-1} > 0), recorded for S_tau_scalar (p_i at
 * every place); U: the high words w·2^21 of X_i's uniforms, d: where their
 * low bits come from (S_draw_p).  The vector version below does the
 * same arithmetic on eight places at once. */
static void S_draft_scalar(const S_plan *pl, S_work *w, size_t i, const uint64_t *U, const S_draws *d, size_t b0,
                           size_t na, size_t *tok)
{
    const size_t V = pl->V, S8 = w->S + 8;
    const unsigned lgK = pl->lgK;
    uint32_t *xs = w->xs + i * S8, *js = w->js + i * S8;
    double *ps = w->ps + i * S8, *ms = w->ms + i * S8;
    for (size_t b = b0; b < na; b++) {
        uint32_t n = w->n[b], G = w->G[b];
        ps[b] = w->pi[b];
        if (i > G || !(w->pi[b] > 0.0))
            continue;
        S_row r = S_row_at(pl, (size_t)(n + i - 2) * V + w->y[b]);
        double rx;
        size_t x = S_draw_p(r.apr, lgK, U[b], d, d->g0 + w->run.act[b], &rx);
        if (tok)
            tok[(size_t)w->run.act[b] * (pl->T + 1) + n + i - 1] = x;
        double pi = S_min1(w->pi[b] * rx); /* p_i = min(1, p_{i-1} q/p) */
        w->pi[b] = ps[b] = pi;
        w->y[b] = xs[b] = (uint32_t)x;
        if (pi == 0.0 || i == G)
            continue; /* p_i = 0: nothing later can be accepted (m_j = 0), it stops drafting */
        S_row nx = S_row_at(pl, (size_t)(n + i - 1) * V + x);
        size_t j = S_jstar(&nx, V, pi);
        js[b] = (uint32_t)j;
        ms[b] = S_mass(&nx, j, pi);
    }
}

/* The iteration's τ at places b0..na-1 from their drafting steps' records
 * and one uniform each (u[b]): Alg. 2 accepts sub-block i with probability
 * h_i = m_i / (m_i + 1 - p_i) (i < G), h_G = p_G, by independent coins, and
 * τ is the last i accepted (0 if none), so given the drafts
 *     P(τ >= i) = 1 - Π_{j >= i} (1 - h_j) = 1 - A_i / B_i,
 * A_i = Π_{j >= i} a_j, B_i = Π_{j >= i} b_j, 1 - h_j = a_j / b_j with
 * a_j = 1 - p_j, b_j = m_j + 1 - p_j (i < G), a_G = 1 - p_G, b_G = 1, and
 * a_j = b_j = 1 where step j tests nothing (j > G, p_j = 0, or b_j = 0,
 * where the coin never accepts).  These events shrink as i grows, so τ is
 * the largest i with u B_i < B_i - A_i: one uniform instead of a coin per
 * step.  Sets tau, tauprev, taup, tauj, taum (from S_begin's where τ = 0).
 * The vector version below does the same arithmetic in the same order. */
static void S_tau_scalar(const S_work *w, size_t maxG, const uint64_t *u, size_t b0, size_t na)
{
    const size_t S8 = w->S + 8;
    for (size_t b = b0; b < na; b++) {
        const double v = (double)u[b] * S_2M53;
        const uint32_t G = w->G[b];
        double A = 1.0, B = 1.0;
        int found = 0;
        for (size_t i = maxG; i >= 1; i--) {
            const double p = w->ps[i * S8 + b], m = w->ms[i * S8 + b];
            int alive = i <= G && p > 0.0, inner = alive && i < G;
            double a = alive ? 1.0 - p : 1.0, bb = inner ? m + (1.0 - p) : 1.0;
            if (bb == 0.0)
                a = bb = 1.0;
            A *= a;
            B *= bb;
            int hit = !found && v * B < B - A;
            found |= hit;
            if (hit) {
                w->tau[b] = (uint32_t)i;
                w->tauprev[b] = w->xs[i * S8 + b];
                w->taup[b] = p;
                w->tauj[b] = w->js[i * S8 + b];
                w->taum[b] = m;
            }
        }
    }
}

#if SD_KERNEL_X86
/* S_draft_scalar on places 0..8⌊na/8⌋-1 with AVX-512F, DQ and VL: the same
 * operations in the same order on eight places at once, lanes masked where
 * the scalar code skips.  A drafting step chains table loads (the draft's
 * entry; then, at the row (n + i, X_i) it selects, the sorted thresholds for
 * j* and the pair Q_{j*}, P_{j*}), so a step runs as passes over all
 * places, within which the loads of different places are independent:
 *   S_draft_avx512 (vector): m_{i-1} from step i - 1's pair; X_i by the
 *     alias test on its entry, p_i = min(1, p_{i-1} r(X_i)) with r(X_i)
 *     from the same entry; the row (n + i, X_i) and the slab offset of
 *     step i + 1's entry there;
 *   S_next (one place at a time, the loads only): j*(p_i) and the pair
 *     (Q_{j*}, P_{j*}) at that row, and step i + 1's entry (S_APR words of
 *     one line, copied whole).
 * Step 1's entries come from S_first.  At the round's last step (i = max G)
 * no place has i < G: no j*, m_i, nor next entry.  Loads are made one place
 * at a time, not gathered (a gather costs 30–40 cycles here,
 * docs/findings.md), in loops that do little else, so that many places'
 * loads are in flight at once; only the halving search for rows over
 * S_COUNT_MAX tokens gathers. */
/* The eight 32-bit lanes of v to a[0..7] where m is set. */
#define S_MST32(a, m, v) _mm256_mask_storeu_epi32((void *)(a), (__mmask8)(m), (v))
#define S_LD256(a) _mm256_loadu_si256((const __m256i *)(const void *)(a))

/* The draft entry (S_APR words, 32 bytes of one line) at slab byte offset
 * idx[b] into ea[S_APR·b ..], for b < nb. */
__attribute__((target("avx512f,avx512vl"))) static inline void S_copy_entries(const char *slab, const uint32_t *idx,
                                                                             size_t nb, uint64_t *ea)
{
    for (size_t b = 0; b < nb; b++)
        _mm256_storeu_si256((__m256i *)(void *)(ea + S_APR * b), S_LD256(slab + idx[b]));
}

/* Step 1's draft entries at places 0..nb-1 (nb a multiple of 8): row
 * (n - 1, y), the column of U (row 0 where G = 0: the padding, which never
 * drafts). */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void S_first(const S_plan *pl, S_work *w, const uint64_t *U,
                                                                         size_t nb)
{
    const __m128i c_sh = _mm_cvtsi32_si128((int)(53u - pl->lgK));
    const __m512i V = _mm512_set1_epi64((long long)pl->V), stride = _mm512_set1_epi64((long long)pl->lay.stride);
    const __m512i apr = _mm512_set1_epi64((long long)pl->lay.apr), one = _mm512_set1_epi64(1);
    for (size_t b = 0; b < nb; b += 8) {
        __m512i n = SD_LD32X8(w->n + b), G = SD_LD32X8(w->G + b), y = SD_LD32X8(w->y + b);
        __mmask8 lv = _mm512_test_epi64_mask(G, G);
        __m512i R = _mm512_mul_epu32(_mm512_add_epi64(_mm512_mul_epu32(_mm512_sub_epi64(n, one), V), y), stride);
        __m512i k = _mm512_srl_epi64(_mm512_loadu_si512((const void *)(U + b)), c_sh);
        SD_ST32X8(w->idx + b, _mm512_maskz_add_epi64(lv, _mm512_add_epi64(R, apr), _mm512_slli_epi64(k, 5)));
    }
    S_copy_entries(pl->slab, w->idx, nb, w->ea);
}

/* The work arrays S_draft8 uses (step i's where by step) and the plan's
 * numbers, in locals: the vector stores (of may-alias types) would
 * otherwise make the compiler reload every pointer and number from the
 * work and plan structs after each. */
typedef struct S_dp {
    unsigned lgK;
    size_t V, T, stride, apr;
    const uint32_t *n, *G, *act;
    uint32_t *y, *xs, *idx;
    double *pi, *ps, *ms, *pis;
    const double *qp;
    uint64_t *R, *jb;
    const uint64_t *ea;
    uint8_t *inner;
} S_dp;

static inline S_dp S_dp_of(const S_plan *pl, S_work *w, size_t i)
{
    const size_t S8 = w->S + 8;
    return (S_dp){.lgK = pl->lgK, .V = pl->V, .T = pl->T, .stride = pl->lay.stride, .apr = pl->lay.apr,
                  .n = w->n, .G = w->G, .act = w->run.act, .y = w->y, .xs = w->xs + i * S8, .idx = w->idx,
                  .pi = w->pi, .ps = w->ps + i * S8, .ms = w->ms + (i - 1) * S8, .pis = w->pis, .qp = w->qp,
                  .R = w->R, .jb = w->jb, .ea = w->ea, .inner = w->mk + S_GROUP / 8};
}

/* Drafting step i (see above) at the eight places b..b+7; un, the
 * uniforms of step i + 1 (NULL at i = max G).  X_i's alias test is
 * decided by the trusted bits of w (S_draw_p) or, with `given`, is the
 * caller's keep; returns the lanes it left open (S_draw_p: the whole
 * uniform decides), after saving p_{i-1} for them in w->pis. */
__attribute__((target("avx512f,avx512dq,avx512vl"), always_inline)) static inline __mmask8
S_draft8(const S_dp w, size_t i, const uint64_t *ue, const uint64_t *un, uint64_t window, size_t *tok, size_t b,
         int given, __mmask8 keep)
{
    const unsigned lgK = w.lgK;
    const uint64_t cm = ((uint64_t)1 << (53u - lgK)) - 1;
    const __m512i vi = _mm512_set1_epi64((long long)i), im1 = _mm512_set1_epi64((long long)i - 1);
    const __m128i c_sh = _mm_cvtsi32_si128((int)(53u - lgK)), c_lg = _mm_cvtsi32_si128((int)lgK);
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    /* the words of the entries of places 2c, 2c+1 (lanes 0-3, 4-7 of a
     * load): words 0 and 1 of four places, word 2 of four places */
    const __m512i w01 = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0), w2 = _mm512_set_epi64(14, 10, 6, 2, 14, 10, 6, 2);
    __m512i n = SD_LD32X8(w.n + b), G = SD_LD32X8(w.G + b);
    __m512d pi0 = _mm512_loadu_pd(w.pi + b);
    if (i > 1) { /* m_{i-1} = S_mass: max(π Q_{j*} - P_{j*}, 0), the same value as its comparison
                    (garbage where i - 1 = G or p_{i-1} = 0: S_tau reads no m there) */
        __m512d lo = _mm512_loadu_pd(w.qp + 2 * b), hi = _mm512_loadu_pd(w.qp + 2 * b + 8);
        _mm512_storeu_pd(w.ms + b,
                         _mm512_max_pd(_mm512_sub_pd(_mm512_mul_pd(pi0, _mm512_permutex2var_pd(lo, S_EVEN, hi)),
                                                     _mm512_permutex2var_pd(lo, S_ODD, hi)), zero));
    }
    __mmask8 lv = _mm512_cmple_epu64_mask(vi, G) & _mm512_cmp_pd_mask(pi0, zero, _CMP_GT_OQ);
    /* the entries of the eight places: alias word, r(k), r(alias) */
    const uint64_t *eb = w.ea + S_APR * b;
    __m512i a0 = _mm512_loadu_si512((const void *)eb), a1 = _mm512_loadu_si512((const void *)(eb + 8));
    __m512i a2 = _mm512_loadu_si512((const void *)(eb + 16)), a3 = _mm512_loadu_si512((const void *)(eb + 24));
    __m512i t01 = _mm512_permutex2var_epi64(a0, w01, a1), t23 = _mm512_permutex2var_epi64(a2, w01, a3);
    __m512i u01 = _mm512_permutex2var_epi64(a0, w2, a1), u23 = _mm512_permutex2var_epi64(a2, w2, a3);
    __m512i e = _mm512_maskz_shuffle_i64x2(lv, t01, t23, 0x44); /* 0 where not live */
    __m512d rk = _mm512_castsi512_pd(_mm512_shuffle_i64x2(t01, t23, 0xee));
    __m512d ra = _mm512_castsi512_pd(_mm512_shuffle_i64x2(u01, u23, 0x44));
    /* X_i: the alias test; r(X_i) */
    __m512i U = _mm512_loadu_si512((const void *)(ue + b)), k = _mm512_srl_epi64(U, c_sh);
    __mmask8 open = 0;
    if (!given) {
        const __m512i win = _mm512_set1_epi64((long long)window), cmw = _mm512_set1_epi64((long long)(cm & ~window));
        __m512i thr = _mm512_srl_epi64(e, c_lg), fw = _mm512_and_si512(U, cmw);
        keep = _mm512_cmplt_epu64_mask(_mm512_or_si512(fw, win), thr);
        open = (__mmask8)(_mm512_cmplt_epu64_mask(fw, thr) & ~keep);
        if (__builtin_expect(open != 0, 0))
            _mm512_storeu_pd(w.pis + b, pi0);
    }
    __m512i x = _mm512_mask_blend_epi64(keep, _mm512_and_si512(e, _mm512_set1_epi64((long long)(((uint64_t)1 << lgK) - 1))), k);
    __m512d r = _mm512_mask_blend_pd(keep, ra, rk);
    __m256i x32 = _mm512_cvtepi64_epi32(x);
    _mm256_storeu_si256((__m256i *)(void *)(w.xs + b), x32);
    if (tok) {
        __m512i a = SD_LD32X8(w.act + b);
        __m512i at = _mm512_add_epi64(_mm512_mul_epu32(a, _mm512_set1_epi64((long long)(w.T + 1))),
                                      _mm512_add_epi64(n, im1));
        _mm512_mask_i64scatter_epi64(tok, lv, at, x, 8);
    }
    /* p_i = min(1, p_{i-1} r(X_i)) */
    __m512d pi = _mm512_mask_min_pd(pi0, lv, _mm512_mul_pd(pi0, r), one);
    _mm512_storeu_pd(w.pi + b, pi);
    _mm512_storeu_pd(w.ps + b, pi);
    S_MST32(w.y + b, lv, x32);
    if (!un)
        return open;
    __mmask8 in = lv & _mm512_cmp_pd_mask(pi, zero, _CMP_NEQ_UQ) & _mm512_cmplt_epu64_mask(vi, G);
    w.inner[b / 8] = in;
    /* row (n + i, X_i), row 0 where unused; step i + 1's entry there */
    const __m512i V = _mm512_set1_epi64((long long)w.V), stride = _mm512_set1_epi64((long long)w.stride);
    __m512i R = _mm512_maskz_mul_epu32(in, _mm512_add_epi64(_mm512_mul_epu32(_mm512_add_epi64(n, im1), V), x), stride);
    __m512i kn = _mm512_srl_epi64(_mm512_loadu_si512((const void *)(un + b)), c_sh);
    _mm512_storeu_si512((void *)(w.R + b), R);
    SD_ST32X8(w.idx + b, _mm512_add_epi64(_mm512_add_epi64(R, _mm512_set1_epi64((long long)w.apr)), _mm512_slli_epi64(kn, 5)));
    if (w.V > S_COUNT_MAX)
        _mm512_storeu_si512((void *)(w.jb + b), _mm512_setzero_si512());
    return open;
}

/* The groups of eight places at ol[0..no) that S_draft8 left open, again:
 * p_{i-1} restored, the open lanes' tests decided by their whole uniforms
 * (S_draw_p), the step redone with that keep.  Rare: out of line, so that
 * the call to sd_token_low21 does not weigh on the main loop. */
__attribute__((target("avx512f,avx512dq,avx512vl"), noinline, cold)) static void
S_draft_open(const S_plan *pl, S_work *w, size_t i, const uint64_t *ue, const uint64_t *un, const S_draws *d,
             size_t *tok, const uint32_t *ol, size_t no)
{
    const unsigned lgK = pl->lgK;
    const uint64_t cm = ((uint64_t)1 << (53u - lgK)) - 1;
    for (size_t o = 0; o < no; o++) {
        const size_t b = ol[o];
        memcpy(w->pi + b, w->pis + b, 8 * sizeof *w->pi);
        __mmask8 keep = 0;
        for (unsigned c = 0; c < 8; c++) {
            const size_t p = b + c;
            const int lv = i <= w->G[p] && w->pi[p] > 0.0;
            const uint64_t thr = lv ? w->ea[S_APR * p] >> lgK : 0, f = ue[p] & cm & ~d->window;
            int kp = (f | d->window) < thr;
            if (f < thr && !kp) /* open */
                kp = ((ue[p] | sd_token_low21(d->seed, d->g0 + w->run.act[p], d->nlow)) & cm) < thr;
            keep = (__mmask8)(keep | (unsigned)kp << c);
        }
        S_draft8(S_dp_of(pl, w, i), i, ue, un, d->window, tok, b, 1, keep);
    }
}

/* The vector pass of drafting step i on places 0..8⌊na/8⌋-1 (S_draft8 on
 * each group of eight, S_draft_open on the rare groups left open); returns
 * how many places it did. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static size_t S_draft_avx512(const S_plan *pl, S_work *w, size_t i,
                                                                          const uint64_t *ue, const uint64_t *un,
                                                                          const S_draws *d, size_t na, size_t *tok)
{
    const size_t nb = na / 8 * 8;
    const S_dp p = S_dp_of(pl, w, i);
    const uint64_t window = d->window;
    size_t no = 0;
    for (size_t b = 0; b < nb; b += 8)
        if (__builtin_expect(S_draft8(p, i, ue, un, window, tok, b, 0, 0) != 0, 0))
            w->rl[no++] = (uint32_t)b;
    if (no)
        S_draft_open(pl, w, i, ue, un, d, tok, w->rl, no);
    return nb;
}

/* The loads of drafting step i < max G at places 0..nb-1 (nb a multiple
 * of 8; see S_draft_avx512), at row (n + i, X_i) (R; row 0 where the place
 * stops drafting: every place, without a branch, S_tau reads the inner
 * ones): j*(p_i) as a count (V <= 8: p_i >= θ on the padded sorted
 * thresholds, one compare; V <= S_COUNT_MAX: eight tokens per compare) or by
 * halving (S_jstar's search, one gather per round over all places), the
 * pair (Q_{j*}, P_{j*}) into qp, and step i + 1's entry (idx) into ea. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void S_next_avx512(const S_plan *pl, S_work *w, size_t i,
                                                                               size_t nb)
{
    const S_layout *l = &pl->lay;
    const size_t Vn = pl->V, S8 = w->S + 8;
    const char *slab = pl->slab, *th = pl->slab + l->th, *QP = pl->slab + l->QP;
    const double *restrict piv = w->pi;
    const uint64_t *restrict Rv = w->R;
    const uint32_t *restrict idx = w->idx;
    uint64_t *restrict jb = w->jb, *restrict ea = w->ea;
    uint32_t *restrict jw = w->js + i * S8;
    double *restrict qp = w->qp;
    const uint8_t *restrict inner = w->mk + S_GROUP / 8;
    const __m512d never = _mm512_set1_pd(HUGE_VAL); /* θ of the lanes not searched: j* stays 0 */
    if (Vn <= 8) {
        for (size_t b = 0; b < nb; b++) {
            size_t off = Rv[b];
            size_t j = S_count8((const double *)(const void *)(th + off), Vn, piv[b]);
            jw[b] = (uint32_t)j;
            memcpy(qp + 2 * b, QP + off + 16 * j, 2 * sizeof *qp);
            _mm256_storeu_si256((__m256i *)(void *)(ea + S_APR * b), S_LD256(slab + idx[b]));
        }
        return;
    }
    if (Vn > S_COUNT_MAX)
        for (size_t len = Vn;;) {
            size_t half = len > 1 ? len / 2 : 1;
            for (size_t b = 0; b < nb; b += 8) {
                __mmask8 in = inner[b / 8];
                __m512i base = _mm512_loadu_si512((const void *)(jb + b));
                __m512i at = _mm512_add_epi64(base, _mm512_set1_epi64((long long)(len > 1 ? half - 1 : 0)));
                __m512d r = S_gather_pd(never, in, _mm512_add_epi64(_mm512_loadu_si512((const void *)(Rv + b)),
                                                                   _mm512_slli_epi64(at, 3)), th);
                __mmask8 up = _mm512_cmp_pd_mask(_mm512_loadu_pd(piv + b), r, _CMP_GE_OQ);
                _mm512_storeu_si512((void *)(jb + b), _mm512_mask_add_epi64(base, up, base, _mm512_set1_epi64((long long)half)));
            }
            if (len <= 1)
                break;
            len -= half;
        }
    for (size_t b = 0; b < nb; b++) {
        size_t off = Rv[b];
        size_t j = Vn <= S_COUNT_MAX ? S_count8((const double *)(const void *)(th + off), Vn, piv[b]) : jb[b];
        jw[b] = (uint32_t)j;
        memcpy(qp + 2 * b, QP + off + 16 * j, 2 * sizeof *qp);
    }
    S_copy_entries(slab, idx, nb, ea);
}

/* S_tau_scalar on places 0..8⌊na/8⌋-1, eight at a time (the same
 * arithmetic in the same order; u: τ's uniforms), followed by the first
 * pass of S_last_avx512 on the same places while τ and X_τ are in
 * registers: the row (n + τ, X_τ) of the last token (R), the slab word
 * to load there (idx: the bonus's alias entry, or the row's m1, j1 where
 * the residual has π = 1), the masks of the bonus and of those residuals
 * (mk), and the list of places whose iteration rejected (rl, w->nrej of
 * them).  Returns how many places it did. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static size_t S_tau_avx512(const S_plan *pl, S_work *w, size_t maxG,
                                                                                const uint64_t *u, size_t na)
{
    const size_t S8 = w->S + 8, nb = na / 8 * 8;
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd(), s53 = _mm512_set1_pd(S_2M53);
    const S_layout *l = &pl->lay;
    const double *restrict ps = w->ps, *restrict ms = w->ms;
    const uint32_t *restrict Gv = w->G, *restrict nv = w->n, *restrict xs = w->xs, *restrict js = w->js;
    uint32_t *restrict tauv = w->tau, *restrict tpv = w->tauprev, *restrict tjv = w->tauj, *restrict idx = w->idx,
                       *restrict rl = w->rl;
    double *restrict tppv = w->taup, *restrict tmv = w->taum;
    const uint64_t *restrict ue = w->ue;
    uint64_t *restrict Rv = w->R;
    uint8_t *restrict bon = w->mk, *restrict dflt = w->mk + S_GROUP / 8;
    const __m512i V = _mm512_set1_epi64((long long)pl->V), stride = _mm512_set1_epi64((long long)l->stride);
    const __m512i T1 = _mm512_set1_epi64((long long)pl->T + 1), lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i onei = _mm512_set1_epi64(1), zi = _mm512_setzero_si512();
    const __m128i c_sh = _mm_cvtsi32_si128((int)(53u - pl->lgK));
    const __m512i aq = _mm512_set1_epi64((long long)l->aq), m1 = _mm512_set1_epi64((long long)l->m1);
    const __mmask8 ctl = pl->broken ? 0 : 0xff; /* the control's residual: π = 1 at every τ */
    size_t nr = 0;
    for (size_t b = 0; b < nb; b += 8) {
        const __m512d v = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_loadu_si512((const void *)(u + b))), s53);
        const __m512i G = SD_LD32X8(Gv + b);
        __m512d A = one, B = one, tpp = _mm512_loadu_pd(tppv + b), tm = _mm512_loadu_pd(tmv + b);
        __m256i tau = S_LD256(tauv + b), tp = S_LD256(tpv + b), tj = S_LD256(tjv + b);
        __mmask8 found = 0;
        for (size_t i = maxG; i >= 1; i--) {
            const __m512d p = _mm512_loadu_pd(ps + i * S8 + b), m = _mm512_loadu_pd(ms + i * S8 + b);
            const __m512i vi = _mm512_set1_epi64((long long)i);
            __mmask8 alive = _mm512_cmple_epu64_mask(vi, G) & _mm512_cmp_pd_mask(p, zero, _CMP_GT_OQ);
            __mmask8 inner = alive & _mm512_cmplt_epu64_mask(vi, G);
            __m512d om = _mm512_sub_pd(one, p);
            __m512d a = _mm512_mask_blend_pd(alive, one, om), bb = _mm512_mask_blend_pd(inner, one, _mm512_add_pd(m, om));
            __mmask8 z = _mm512_cmp_pd_mask(bb, zero, _CMP_EQ_OQ);
            a = _mm512_mask_blend_pd(z, a, one);
            bb = _mm512_mask_blend_pd(z, bb, one);
            A = _mm512_mul_pd(A, a);
            B = _mm512_mul_pd(B, bb);
            __mmask8 hit = (__mmask8)(~found & _mm512_cmp_pd_mask(_mm512_mul_pd(v, B), _mm512_sub_pd(B, A), _CMP_LT_OQ));
            found |= hit;
            tau = _mm256_mask_blend_epi32(hit, tau, _mm256_set1_epi32((int)i));
            tp = _mm256_mask_blend_epi32(hit, tp, S_LD256(xs + i * S8 + b));
            tj = _mm256_mask_blend_epi32(hit, tj, S_LD256(js + i * S8 + b));
            tpp = _mm512_mask_blend_pd(hit, tpp, p);
            tm = _mm512_mask_blend_pd(hit, tm, m);
        }
        _mm256_storeu_si256((__m256i *)(void *)(tauv + b), tau);
        _mm256_storeu_si256((__m256i *)(void *)(tpv + b), tp);
        _mm256_storeu_si256((__m256i *)(void *)(tjv + b), tj);
        _mm512_storeu_pd(tppv + b, tpp);
        _mm512_storeu_pd(tmv + b, tm);
        /* S_last_avx512's first pass */
        __m512i n = SD_LD32X8(nv + b), t = _mm512_cvtepu32_epi64(tau), x = _mm512_cvtepu32_epi64(tp);
        __m512i off = _mm512_mul_epu32(_mm512_add_epi64(_mm512_mul_epu32(_mm512_sub_epi64(_mm512_add_epi64(n, t), onei), V), x),
                                       stride);
        __mmask8 full = _mm512_cmpeq_epi64_mask(t, G), rej = (__mmask8)~full;
        __mmask8 bonus = full & _mm512_cmplt_epu64_mask(_mm512_add_epi64(n, G), T1);
        __mmask8 d = rej & ~(ctl & _mm512_cmpneq_epi64_mask(t, zi));
        bon[b / 8] = bonus;
        dflt[b / 8] = d;
        __m512i k = _mm512_srl_epi64(_mm512_loadu_si512((const void *)(ue + b)), c_sh);
        __m512i at = _mm512_mask_blend_epi64(bonus, _mm512_add_epi64(off, m1), _mm512_add_epi64(_mm512_add_epi64(off, aq), _mm512_slli_epi64(k, 3)));
        SD_ST32X8(idx + b, _mm512_maskz_srli_epi64(bonus | d, at, 3));
        _mm512_storeu_si512((void *)(Rv + b), off);
        __m256i pl32 = _mm512_cvtepi64_epi32(_mm512_add_epi64(lane, _mm512_set1_epi64((long long)b)));
        _mm512_mask_compressstoreu_epi32(rl + nr, (__mmask16)rej, _mm512_castsi256_si512(pl32));
        nr += (size_t)__builtin_popcount(rej);
    }
    w->nrej = nr;
    return nb;
}

#endif

/* The residual of a place whose iteration rejected (τ < G): max(π q - p, 0)
 * at row (n + τ, X_τ) (byte offset off), π = p_τ (eq. 4; 1 in the broken
 * control), with j = j*(π), m = m(π) as step τ computed them (τ = 0, and
 * the control: π = 1, the row's j1, m1); target = u m for the draw.  res:
 * 0 where m = 0 (probability 0 at τ < G, sims/verifiers/block.c; rounding): the
 * token is then drawn from q. */
typedef struct S_rej {
    S_row r;
    size_t j;
    double pi, target;
    int res;
} S_rej;

static inline S_rej S_reject_setup(const S_plan *pl, const S_work *w, size_t b, size_t off)
{
    S_rej s = {.r = S_row_off(pl, off)};
    int own = !pl->broken && w->tau[b] > 0;
    s.pi = own ? w->taup[b] : 1.0;
    s.j = own ? w->tauj[b] : s.r.j1;
    double m = own ? w->taum[b] : s.r.m1;
    s.target = (double)w->ue[b] * S_2M53 * m;
    s.res = s.j && m > 0.0;
    return s;
}

static inline uint32_t S_reject_token(const S_plan *pl, const S_work *w, size_t b, size_t off)
{
    S_rej s = S_reject_setup(pl, w, b, off);
    return (uint32_t)(s.res ? S_residual(&s.r, pl->V, s.j, s.pi, s.target)
                            : sd_token_alias_draw(s.r.aq, pl->lgK, w->ue[b]));
}

/* The last token of the round's iteration at places b0..na-1 into x
 * (uniforms of block b_k + Gmax): τ = G: the bonus from q(.|X^G) at
 * position n + G <= T, else (the horizon) X_G itself; τ < G: the
 * residual.  Both read row (n + τ, X_τ). */
static void S_last_scalar(const S_plan *pl, S_work *w, size_t b0, size_t na)
{
    for (size_t b = b0; b < na; b++) {
        uint32_t n = w->n[b], G = w->G[b], tau = w->tau[b];
        size_t off = ((size_t)(n + tau - 1) * pl->V + w->tauprev[b]) * pl->lay.stride;
        if (tau < G)
            w->x[b] = S_reject_token(pl, w, b, off);
        else if (n + G <= pl->T)
            w->x[b] = (uint32_t)sd_token_alias_draw(S_row_off(pl, off).aq, pl->lgK, w->ue[b]);
        else
            w->x[b] = w->tauprev[b];
    }
}

#if SD_KERNEL_X86
/* S_last_scalar on places 0..8⌊na/8⌋-1: the bonus draws eight at a time
 * (their entries by sd_fetch64), the places that rejected listed and then
 * done one by one without a branch on the coin; returns how many places it
 * did. */
/* sd_fetch64 for two consecutive words: e0[i], e1[i] = the words at
 * base + 8·idx[i] and 8 bytes further (n a multiple of 2). */
static inline void S_fetch2(const void *base, const uint32_t *idx, size_t n, uint64_t *e0, uint64_t *e1)
{
    const unsigned char *bp = base;
    for (size_t i = 0; i < n; i += 2) {
        const unsigned char *a = bp + (size_t)idx[i] * 8, *c = bp + (size_t)idx[i + 1] * 8;
        uint64_t a0, a1, c0, c1;
        memcpy(&a0, a, 8);
        memcpy(&a1, a + 8, 8);
        memcpy(&c0, c, 8);
        memcpy(&c1, c + 8, 8);
#if defined(__GNUC__)
        __asm__("" : "+r"(a0), "+r"(a1), "+r"(c0), "+r"(c1)); /* no gather (sd_fetch64) */
#endif
        e0[i] = a0;
        e1[i] = a1;
        e0[i + 1] = c0;
        e1[i + 1] = c1;
    }
}

/* S_last_scalar on places 0..8⌊na/8⌋-1, after S_tau_avx512 on the same
 * places (which made its first pass): the bonus draws eight at a time,
 * and for the places that rejected the residual's π, j = j*(π) and target
 * u m (S_reject_setup: j = 0 where m = 0), the row's j1, m1 where τ = 0
 * (their slab words, like the bonus's table entries, by one fetch); then
 * the residual draws place by place, without a branch on the coin.
 * Returns how many places it did. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static size_t S_last_avx512(const S_plan *pl, S_work *w, size_t na)
{
    const S_layout *l = &pl->lay;
    const unsigned lgK = pl->lgK;
    const size_t nb = na / 8 * 8, Vn = pl->V;
    const uint32_t *restrict tpv = w->tauprev;
    uint32_t *restrict xv = w->x, *restrict idx = w->idx, *restrict rl = w->rl, *restrict tjv = w->tauj;
    double *restrict tpp = w->taup, *restrict tmv = w->taum;
    const uint64_t *restrict ue = w->ue;
    uint64_t *restrict Rv = w->R, *restrict e0 = w->ent, *restrict e1 = w->ent1;
    uint8_t *restrict bon = w->mk, *restrict dflt = w->mk + S_GROUP / 8;
    const __m512i lo32 = _mm512_set1_epi64(0xffffffffll), zi = _mm512_setzero_si512();
    const __m128i c_sh = _mm_cvtsi32_si128((int)(53u - lgK)), c_lg = _mm_cvtsi32_si128((int)lgK);
    const __m512i cm = _mm512_set1_epi64((long long)(((uint64_t)1 << (53u - lgK)) - 1));
    const __m512i km = _mm512_set1_epi64((long long)(((uint64_t)1 << lgK) - 1));
    const __m512d oned = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd(), s53 = _mm512_set1_pd(S_2M53);
    const size_t nr = w->nrej; /* the first pass: S_tau_avx512 */
    S_fetch2(pl->slab, idx, nb, e0, e1);
    /* the bonus draws (the alias test), else X_G (the horizon) for now; the
     * residual's π, j, target in taup, tauj, taum */
    for (size_t b = 0; b < nb; b += 8) {
        __mmask8 bonus = bon[b / 8], d = dflt[b / 8];
        __m512i U = _mm512_loadu_si512((const void *)(ue + b));
        __m512i k = _mm512_srl_epi64(U, c_sh);
        __m512i e = _mm512_maskz_loadu_epi64(bonus, (const void *)(e0 + b));
        __mmask8 keep = _mm512_cmplt_epu64_mask(_mm512_and_si512(U, cm), _mm512_srl_epi64(e, c_lg));
        __m512i xb = _mm512_mask_blend_epi64(keep, _mm512_and_si512(e, km), k);
        S_MST32(xv + b, ~bonus, S_LD256(tpv + b));
        S_MST32(xv + b, bonus, _mm512_cvtepi64_epi32(xb));
        __m512d pi = _mm512_mask_blend_pd(d, _mm512_loadu_pd(tpp + b), oned);
        __m512d m = _mm512_mask_blend_pd(d, _mm512_loadu_pd(tmv + b), _mm512_loadu_pd((const double *)(const void *)(e0 + b)));
        __m512i j = _mm512_mask_blend_epi64(d, SD_LD32X8(tjv + b), _mm512_and_si512(_mm512_loadu_si512((const void *)(e1 + b)), lo32));
        __mmask8 res = _mm512_cmpneq_epi64_mask(j, zi) & _mm512_cmp_pd_mask(m, zero, _CMP_GT_OQ);
        _mm512_storeu_pd(tpp + b, pi);
        _mm512_storeu_pd(tmv + b, _mm512_mul_pd(_mm512_mul_pd(_mm512_cvtepu64_pd(U), s53), m));
        SD_ST32X8(tjv + b, _mm512_maskz_mov_epi64(res, j));
    }
    const char *slab = pl->slab;
    if (Vn <= 8) { /* the same, one compare of the pairs 0..7 */
        const char *QP = slab + l->QP;
        for (size_t r = 0; r < nr; r++) {
            size_t b = rl[r], j = tjv[b], off = Rv[b];
            const double *qp = (const double *)(const void *)(QP + off);
            __m512d lo = _mm512_loadu_pd(qp), hi = _mm512_loadu_pd(qp + 8);
            __m512d W = _mm512_sub_pd(_mm512_mul_pd(_mm512_set1_pd(tpp[b]), _mm512_permutex2var_pd(lo, S_EVEN, hi)),
                                      _mm512_permutex2var_pd(lo, S_ODD, hi));
            __mmask8 k = (__mmask8)(((1u << j) - 1u) & 0xfeu); /* t in 1..j-1 */
            size_t c = (size_t)__builtin_popcount(_mm512_mask_cmp_pd_mask(k, W, _mm512_set1_pd(tmv[b]), _CMP_LE_OQ));
            S_row row = S_row_off(pl, off);
            if (__builtin_expect(j != 0, 1))
                xv[b] = row.ord[c];
            else /* m = 0: q (S_reject_token) */
                xv[b] = (uint32_t)sd_token_alias_draw(row.aq, lgK, ue[b]);
        }
        return nb;
    }
    for (size_t r = 0; r < nr; r++) {
        size_t b = rl[r], j = tjv[b];
        S_row row = S_row_off(pl, Rv[b]);
        if (!j) /* m = 0 at τ < G has probability 0 (sims/verifiers/block.c); rounding: q */
            xv[b] = (uint32_t)sd_token_alias_draw(row.aq, lgK, ue[b]);
        else if (Vn <= S_COUNT_MAX)
            xv[b] = row.ord[S_count_w8((const double *)(const void *)(slab + Rv[b] + l->QP), Vn, j, tpp[b], tmv[b])];
        else
            xv[b] = (uint32_t)S_residual(&row, Vn, j, tpp[b], tmv[b]);
    }
    return nb;
}
#endif

/* The iteration of place k that starts at position n after token x: its
 * draft length G (γ, or what is left of the horizon) and the state of
 * Alg. 2 before its first draft.  Returns G. */
static inline uint32_t S_begin(const S_plan *pl, S_work *w, size_t k, uint32_t n, uint32_t x)
{
    size_t G = sd_draft_len_at(pl->gamma, pl->T, n);
    w->n[k] = n;
    w->G[k] = (uint32_t)G;
    w->y[k] = w->tauprev[k] = x;
    w->pi[k] = w->taup[k] = 1.0;
    w->tau[k] = 0;
    return (uint32_t)G;
}

/* The round's bookkeeping at places b..na-1 once x holds their last tokens
 * (places 0..b-1 done, keep of them kept, nd trials finished so far): the
 * counts, the histogram of τ, the tokens; a place whose trial runs another
 * iteration moves to place keep (counts and all) and begins it (S_begin),
 * a trial that is done joins the list of finished ones.  Returns the
 * number of places kept; *maxG: the largest G among them. */
static size_t S_finish_scalar(const S_plan *pl, S_work *w, size_t b, size_t na, size_t L, int first, size_t *tok,
                              size_t keep, size_t *nd, uint32_t *maxG)
{
    const size_t T = pl->T;
    for (; b < na; b++) {
        uint32_t s = w->run.act[b], n = w->n[b], G = w->G[b], tau = w->tau[b], x = w->x[b];
        uint32_t full = tau == G, emitted = tau + 1 - (full & (n + G > T)); /* no bonus past T */
        if (tok && emitted > tau)
            tok[(size_t)s * (T + 1) + n + tau] = x;
        uint32_t rej = w->run.rej[b] + (full ^ 1u), its = w->run.its[b] + 1;
        double rb = w->run.rb[b] + (1.0 - w->pi[b]); /* P(rejection | drafts) = 1 - p_G (eq. 5) */
        w->hist[(b % S_HCOPIES) * (pl->gmax + 1) + tau]++;
        if (!first && n + emitted <= L) {
            S_counts_set(&w->run, keep, s, rej, its, rb);
            uint32_t g = S_begin(pl, w, keep++, n + emitted, x);
            *maxG = g > *maxG ? g : *maxG;
        } else {
            S_counts_set(&w->done, (*nd)++, s, rej, its, rb);
        }
    }
    return keep;
}

#if SD_KERNEL_X86
/* S_finish_scalar on places 0..8⌊na/8⌋-1, eight at a time: the same
 * arithmetic, the moves as compressions (every store of eight lanes lands
 * on places already read), the histogram of τ by comparisons for small
 * Gmax.  Returns the places kept; *nd, *maxG as there. */
/* The lanes m of (s, counts) to entries k.. of c, compressed: eight
 * entries are written, those past the popcount of m with garbage. */
__attribute__((target("avx512f"))) static inline void S_counts_put8(const S_counts *c, size_t k, __mmask8 m, __m512i s,
                                                                    __m512i rej, __m512i its, __m512d rb)
{
    SD_ST32X8(c->act + k, _mm512_maskz_compress_epi64(m, s));
    SD_ST32X8(c->rej + k, _mm512_maskz_compress_epi64(m, rej));
    SD_ST32X8(c->its + k, _mm512_maskz_compress_epi64(m, its));
    _mm512_storeu_pd(c->rb + k, _mm512_maskz_compress_pd(m, rb));
}

__attribute__((target("avx512f,avx512dq"))) static size_t S_finish_avx512(const S_plan *pl, S_work *w, size_t na,
                                                                           size_t L, int first, size_t *tok,
                                                                           size_t *nd, uint32_t *maxG)
{
    const size_t T = pl->T, gmax = pl->gmax, nb = na / 8 * 8;
    const __m512i one = _mm512_set1_epi64(1), Tv = _mm512_set1_epi64((long long)T), T1 = _mm512_set1_epi64((long long)T + 1);
    const __m512i Lv = _mm512_set1_epi64((long long)L), gam = _mm512_set1_epi64((long long)pl->gamma);
    const __m512i Tp1 = _mm512_set1_epi64((long long)(T + 1));
    const __m512d oned = _mm512_set1_pd(1.0);
    /* the arrays in locals (S_draft_avx512) */
    uint32_t *restrict act = w->run.act, *restrict rejv = w->run.rej, *restrict itsv = w->run.its;
    double *restrict rbv = w->run.rb, *restrict piv = w->pi, *restrict tpp = w->taup;
    uint32_t *restrict nv = w->n, *restrict Gv = w->G, *restrict yv = w->y, *restrict tauv = w->tau,
                       *restrict tpv = w->tauprev;
    const uint32_t *restrict xv = w->x;
    uint64_t *restrict hist = w->hist;
    const S_counts done = w->done;
    const __m512i three = _mm512_set1_epi64(3), four = _mm512_set1_epi64(4);
    __m512i mg = _mm512_setzero_si512(), h0 = _mm512_setzero_si512(), h1 = _mm512_setzero_si512();
    size_t keep = 0, d = *nd;
    for (size_t b = 0; b < nb; b += 8) {
        __m512i s = SD_LD32X8(act + b), n = SD_LD32X8(nv + b), G = SD_LD32X8(Gv + b), tau = SD_LD32X8(tauv + b);
        __m512i x = SD_LD32X8(xv + b);
        __mmask8 full = _mm512_cmpeq_epi64_mask(tau, G);
        __mmask8 nob = (__mmask8)(full & _mm512_cmpgt_epu64_mask(_mm512_add_epi64(n, G), Tv)); /* no bonus past T */
        __m512i t1 = _mm512_add_epi64(tau, one), emitted = _mm512_mask_sub_epi64(t1, nob, t1, one);
        if (tok)
            _mm512_mask_i64scatter_epi64(tok, (__mmask8)~nob,
                                         _mm512_add_epi64(_mm512_mullo_epi64(s, Tp1), _mm512_add_epi64(n, tau)), x, 8);
        __m512i rej = SD_LD32X8(rejv + b), its = _mm512_add_epi64(SD_LD32X8(itsv + b), one);
        rej = _mm512_mask_add_epi64(rej, (__mmask8)~full, rej, one);
        __m512d rb = _mm512_add_pd(_mm512_loadu_pd(rbv + b), _mm512_sub_pd(oned, _mm512_loadu_pd(piv + b)));
        if (gmax < 8) { /* 16-bit counters in the lanes: τ < 4 in h0, else h1 */
            __m512i bit = _mm512_sllv_epi64(one, _mm512_slli_epi64(_mm512_and_si512(tau, three), 4));
            __mmask8 lo = _mm512_cmplt_epu64_mask(tau, four);
            h0 = _mm512_mask_add_epi64(h0, lo, h0, bit);
            h1 = _mm512_mask_add_epi64(h1, (__mmask8)~lo, h1, bit);
        } else if (gmax < 16)
            for (size_t t = 0; t <= gmax; t++)
                hist[t] += (uint64_t)__builtin_popcount(_mm512_cmpeq_epi64_mask(tau, _mm512_set1_epi64((long long)t)));
        else
            for (size_t c = 0; c < 8; c++)
                hist[(c % S_HCOPIES) * (gmax + 1) + tauv[b + c]]++;
        __m512i nn = _mm512_add_epi64(n, emitted);
        __mmask8 km = first ? 0 : _mm512_cmple_epu64_mask(nn, Lv), dm = (__mmask8)~km;
        /* the places kept, and their next iteration (S_begin) */
        __m512i xk = _mm512_maskz_compress_epi64(km, x), nk = _mm512_maskz_compress_epi64(km, nn);
        __m512i Gk = _mm512_sub_epi64(T1, nk);
        if (pl->gamma)
            Gk = _mm512_min_epu64(Gk, gam);
        mg = _mm512_mask_max_epu64(mg, (__mmask8)((1u << __builtin_popcount(km)) - 1u), mg, Gk);
        SD_ST32X8(act + keep, _mm512_maskz_compress_epi64(km, s));
        SD_ST32X8(rejv + keep, _mm512_maskz_compress_epi64(km, rej));
        SD_ST32X8(itsv + keep, _mm512_maskz_compress_epi64(km, its));
        _mm512_storeu_pd(rbv + keep, _mm512_maskz_compress_pd(km, rb));
        SD_ST32X8(nv + keep, nk);
        SD_ST32X8(Gv + keep, Gk);
        SD_ST32X8(yv + keep, xk);
        SD_ST32X8(tpv + keep, xk);
        _mm512_storeu_pd(piv + keep, oned);
        _mm512_storeu_pd(tpp + keep, oned);
        SD_ST32X8(tauv + keep, _mm512_setzero_si512());
        keep += (size_t)__builtin_popcount(km);
        /* the trials done */
        if (dm) {
            S_counts_put8(&done, d, dm, s, rej, its, rb);
            d += (size_t)__builtin_popcount(dm);
        }
    }
    if (gmax < 8) /* a field counts at most one place per eight: < 2^16 */
        for (size_t t = 0; t <= gmax; t++)
            hist[t] += (uint64_t)_mm512_reduce_add_epi64(_mm512_and_si512(
                _mm512_srli_epi64(t < 4 ? h0 : h1, (unsigned)(16 * (t & 3))), _mm512_set1_epi64(0xffff)));
    uint32_t g = (uint32_t)_mm512_reduce_max_epu64(mg);
    *maxG = g > *maxG ? g : *maxG;
    *nd = d;
    return keep;
}
#undef S_MST32
#undef S_LD256
#endif

/* The bookkeeping of the round at places 0..na-1 (S_finish_scalar). */
static size_t S_finish(const S_plan *pl, S_work *w, size_t na, size_t L, int first, size_t *tok, size_t *nd,
                       uint32_t *maxG, int wide)
{
    size_t keep = 0, b = 0;
    *maxG = 0;
#if SD_KERNEL_X86
    if (wide) {
        keep = S_finish_avx512(pl, w, na, L, first, tok, nd, maxG);
        b = na / 8 * 8;
    }
#else
    (void)wide;
#endif
    return S_finish_scalar(pl, w, b, na, L, first, tok, keep, nd, maxG);
}

/* Trials g0..g0+S-1 (S <= w->S); tok: their rows x_0..x_T (T + 1 each) or NULL. */
static void S_group(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0, size_t S, const sd_observe *obs,
                    size_t *tok)
{
    const size_t V = pl->V, T = pl->T, L = obs->L ? obs->L : T, gmax = pl->gmax;
    int wide = 0;
#if SD_KERNEL_X86
    wide = sd_rngbuf_avx512dq() && __builtin_cpu_supports("avx512vl");
#endif
    const uint64_t window = __atomic_load_n(&S_window, __ATOMIC_RELAXED);
    sd_rngbuf_trials(seed, 0, g0, S, w->ue, w->uo);
    uint32_t maxG = 0;
    for (size_t s = 0; s < S; s++) {
        uint32_t x0 = (uint32_t)sd_token_alias_draw(pl->init, pl->lgK, w->ue[s]);
        S_counts_set(&w->run, s, (uint32_t)s, 0, 0, 0.0);
        uint32_t g = S_begin(pl, w, s, 1, x0);
        maxG = g > maxG ? g : maxG;
        if (tok)
            tok[s * (T + 1)] = x0;
    }
    memset(w->hist, 0, S_HCOPIES * (gmax + 1) * sizeof *w->hist);
    size_t na = L >= 1 ? S : 0, nd = 0;
    for (uint64_t k = 0; na > 0; k++) {
        const uint64_t hb = (gmax + 3) / 4, base = 1 + k * (hb + 1); /* b_k */
        /* whole groups of eight places for the uniforms (vector Philox) and
         * the drafting steps: the list padded with places that never draft
         * (G = 0), repeating the first trial, whose values nothing reads */
        size_t nu = wide ? (na + 7) / 8 * 8 : na;
        for (size_t b = na; b < nu; b++) {
            w->run.act[b] = w->run.act[0];
            w->G[b] = 0;
        }
        /* X_i's high words: block b_k + c holds those of steps 4c + 1 ..
         * 4c + 4 (words 0..3), into the set of arrays c % 2; the vector
         * passes also read step i + 1's (S_draft_avx512), so block c + 1 is
         * made at step 4c + 4, before the pass */
        for (size_t i = 1; i <= maxG; i++) {
            const size_t c = (i - 1) / 4, r = (i - 1) % 4;
            uint64_t *const *Wc = w->uh[c % 2];
            if (r == 0 && (i == 1 || !wide))
                sd_rngbuf_trials_hi_at(seed, base + c, g0, w->run.act, nu, Wc);
            const uint64_t *U = Wc[r]; /* X_i's */
            const S_draws d = {seed, g0, 4 * (base + c) + r, window};
            size_t b0 = 0;
#if SD_KERNEL_X86
            if (wide) {
                const uint64_t *un = NULL; /* step i + 1's */
                if (i < maxG && r == 3) {
                    sd_rngbuf_trials_hi_at(seed, base + c + 1, g0, w->run.act, nu, w->uh[(c + 1) % 2]);
                    un = w->uh[(c + 1) % 2][0];
                } else if (i < maxG)
                    un = Wc[r + 1];
                if (i == 1)
                    S_first(pl, w, U, nu);
                b0 = S_draft_avx512(pl, w, i, U, un, &d, nu, tok);
                if (un)
                    S_next_avx512(pl, w, i, b0);
            }
#endif
            S_draft_scalar(pl, w, i, U, &d, b0, na, tok);
        }
        /* the last tokens' uniforms (even) and τ's (odd) */
        sd_rngbuf_trials_at(seed, base + hb, g0, w->run.act, nu, w->ue, w->uo);
        size_t b0 = 0;
#if SD_KERNEL_X86
        if (wide)
            b0 = S_tau_avx512(pl, w, maxG, w->uo, na);
#endif
        S_tau_scalar(w, maxG, w->uo, b0, na);
        b0 = 0;
#if SD_KERNEL_X86
        if (wide)
            b0 = S_last_avx512(pl, w, na);
#endif
        S_last_scalar(pl, w, b0, na);
        na = S_finish(pl, w, na, L, obs->first_iteration, tok, &nd, &maxG, wide);
    }
    /* The group's statistics: exact integer sums over its trials (in any
     * order: the finished list), one sd_welford_merge_sums per statistic;
     * accepted per iteration from the group's histogram of τ (Σ h_a, Σ a h_a,
     * Σ a² h_a); rb, a double per trial, added trial by trial. */
    const S_counts *dn = &w->done;
    uint64_t r1 = 0, r2 = 0, c1 = 0, c2 = 0, h0 = 0, h1 = 0, h2 = 0;
    for (size_t d = 0; d < nd; d++) {
        r1 += dn->rej[d];
        r2 += (uint64_t)dn->rej[d] * dn->rej[d];
        c1 += dn->its[d];
        c2 += (uint64_t)dn->its[d] * dn->its[d];
    }
    for (size_t a = 0; a <= gmax; a++) {
        uint64_t h = 0;
        for (size_t k = 0; k < S_HCOPIES; k++)
            h += w->hist[k * (gmax + 1) + a];
        h0 += h;
        h1 += a * h;
        h2 += a * a * h;
        if (obs->hist)
            obs->hist[a] += (double)h; /* an integer below 2^53: exact in any order */
    }
    if (obs->rej)
        sd_welford_merge_sums(obs->rej, S, r1, r2);
    if (obs->calls)
        sd_welford_merge_sums(obs->calls, S, c1, c2);
    if (obs->acc)
        sd_welford_merge_sums(obs->acc, h0, h1, h2);
    if (obs->rb) {
        memset(w->trb, 0, S * sizeof *w->trb);
        for (size_t d = 0; d < nd; d++)
            w->trb[dn->act[d]] = dn->rb[d];
        for (size_t s = 0; s < S; s++)
            sd_welford_add(obs->rb, w->trb[s]);
    }
    for (size_t s = 0; tok && s < S; s++) {
        const size_t *x = tok + s * (T + 1);
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

SD_KERNEL_WORK_FREE

/* The next array of n elements of `size` bytes from the arena (sd_carve). */
static void *S_carve(unsigned char *arena, size_t *off, size_t n, size_t size)
{
    return sd_carve(arena, off, n * size);
}

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    S_work *w = calloc(1, sizeof *w);
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory");
    const size_t S = w->S = S_GROUP, S8 = S + 8; /* vector stores run up to 8 lanes past the last place */
    for (int pass = 0; pass < 2; pass++) { /* 0: the size, 1: the arrays */
        size_t off = 0;
        unsigned char *a = w->arena;
        uint32_t **u32[] = {&w->run.act, &w->run.rej, &w->run.its, &w->done.act, &w->done.rej, &w->done.its,
                            &w->n,       &w->G,       &w->y,       &w->tau,      &w->tauprev,  &w->tauj,
                            &w->x,       &w->rl,      &w->idx};
        uint64_t **u64[] = {&w->ue, &w->uo, &w->uh[0][0], &w->uh[0][1], &w->uh[0][2], &w->uh[0][3],
                            &w->uh[1][0], &w->uh[1][1], &w->uh[1][2], &w->uh[1][3], &w->R, &w->jb, &w->ent, &w->ent1};
        double **dbl[] = {&w->run.rb, &w->done.rb, &w->trb, &w->pi, &w->taup, &w->taum, &w->pis};
        for (size_t i = 0; i < sizeof u32 / sizeof u32[0]; i++)
            *u32[i] = S_carve(a, &off, S8, sizeof **u32[i]);
        for (size_t i = 0; i < sizeof u64 / sizeof u64[0]; i++)
            *u64[i] = S_carve(a, &off, S8, sizeof **u64[i]);
        for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
            *dbl[i] = S_carve(a, &off, S8, sizeof **dbl[i]);
        w->qp = S_carve(a, &off, 2 * S8, sizeof *w->qp);
        w->ea = S_carve(a, &off, S_APR * S8, sizeof *w->ea);
        w->xs = S_carve(a, &off, (pl->gmax + 1) * S8, sizeof *w->xs);
        w->js = S_carve(a, &off, (pl->gmax + 1) * S8, sizeof *w->js);
        w->ps = S_carve(a, &off, (pl->gmax + 1) * S8, sizeof *w->ps);
        w->ms = S_carve(a, &off, (pl->gmax + 1) * S8, sizeof *w->ms);
        w->tok = S_carve(a, &off, S * (pl->T + 1), sizeof *w->tok);
        w->mk = S_carve(a, &off, 2 * S / 8, 1);
        w->hist = S_carve(a, &off, S_HCOPIES * (pl->gmax + 1), sizeof *w->hist);
        if (pass == 0 && !(w->arena = aligned_alloc(S_LINE, off))) { /* off: a multiple of S_LINE */
            free(w);
            return sd_error_set(err, SD_ENOMEM, "block kernel: out of memory");
        }
        if (pass == 0)
            memset(w->arena, 0, off);
    }
    *work = w;
    return SD_OK;
}

#define S_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_FIRST | SD_OBS_RB | SD_OBS_TOKENS)

SD_KERNEL_PAIR(sd_block_kernel, "block-sorted", S_SUPPORTS);
