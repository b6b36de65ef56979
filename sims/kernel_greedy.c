/* kernel_greedy.c — a fast kernel for greedy block verification with the
 * distribution modification (sims/greedy_block.c; Sun et al. 2025, App. C,
 * Alg. 4–6 and eq. 31), with the law of its step and other random numbers.
 *
 * Closed form of the modified targets.  At a position j after token y the
 * step builds the levels D_0 = q_j(.|y), D_{l+1} ∝ max(A_l D_l - B_l p, 0)
 * (eq. 31; A_l/B_l the ratio r of the l-th frame covering j, scaled to
 * max(A, B) = 1), each an O(V) vector.  Every level is of the form
 *     D_l(x) = max(α_l q(x) - β_l p(x), 0),   α_l, β_l >= 0,
 * since, by induction, where α_l q - β_l p <= 0 the next weight is
 * max(-B p, 0) = 0, and elsewhere it is A α_l q - (A β_l + B) p:
 *     (α_{l+1}, β_{l+1}) = (A α_l, A β_l + B) / s,
 *     s = Σ_x max(A α_l q(x) - (A β_l + B) p(x), 0)
 * (D_0 = (1, 0); s = 0 gives the "dead" row (0, 0), all zeros, which stays
 * dead: (0, B) has no positive weight).  So every sum the iteration needs
 * is the mass of a row max(a q - b p, 0) for some a, b >= 0:
 *     the levels' s, the acceptance's h_i numerator
 *         Σ max(K_a D_L - K_b p, 0)       (a, b) = (K_a α_L, K_a β_L + K_b),
 *     and eq. 30's residual (the same at depth τ),
 * and a q(x) > b p(x) holds exactly for the tokens with r(x) = q/p > b/a,
 * a prefix of the tokens sorted by r decreasing (p = 0 < q first, r = +inf;
 * p = q = 0 last).  With prefix sums Q_j, P_j of q and p in that order,
 *     mass(a, b) = a Q_{j*} - b P_{j*},   j* = #{x : a r(x) > b},
 * and a draw from the row is the first j with a Q_{j+1} - b P_{j+1} > u·mass
 * (a binary search), as in the block kernel (sims/kernel_block.c).  The
 * denominator of h_i is Σ max(K_b p - K_a D_L, 0) = num - (K_a Σ D_L - K_b),
 * with Σ D_L = 1 for a normalised level (Σ q for D_0, 0 for a dead one).
 * A level's value at one token, needed to extend the frames' ratios, is
 * max(α q(x) - β p(x), 0) from the row's p and q.  The ratios themselves are
 * extended by sd_greedy_ratio_extend and the frames retired by
 * sd_greedy_frames_drop, the step's own pieces (sims/sd_block.h); the order
 * of the levels, which frames cover a position, the acceptance η_i den <
 * num (i < G) and η_G < p_G, the early stop once p_i = 0, the horizon's
 * missing bonus, the fall-backs of a residual of zero mass (rounding: D_L,
 * then q) and the new frame (zone n+τ+1..n+G-1, ratio p_τ D_L(Y)/p(Y)) are
 * the step's.  The law is therefore the step's exactly; floating-point
 * rounding differs (prefix sums instead of V-long sums).
 *
 * Tables, per row (position t, previous token a): the integer alias table
 * of p (sims/sd_token.h: every token returned for exactly its mass of the
 * 2^53 values of a 53-bit uniform, never one of probability 0), in an array
 * of its own so that the drafts' chain of lookups stays in a small table;
 * r sorted decreasing (padded with -1 to a multiple of 8: never counted),
 * the prefix sums, the order, and p, q by token.  The draft X_i ~ p is one
 * alias draw; the bonus and the residuals are draws by the search above
 * (the bonus from q itself is the row (1, 0)).
 *
 * Lockstep.  A group of trials runs iteration by iteration, as the block
 * kernel's: in round k every trial still running does its k-th iteration,
 * first its G drafts (alias lookups only; they do not depend on the
 * verification), depth by depth across the trials, then the verification
 * of depth i of every trial before depth i + 1, so that the processor
 * overlaps the trials' serial chains.  Per-trial state (the frames, their
 * ratios after each X^i, p_i, the rows and η_i of each depth) lives in the
 * work arrays, indexed by the trial's number in the group.  Uniforms are
 * those of the block kernel's layout (53-bit, sd_rngbuf_trials_at across
 * trials): block 0 draws x_0; iteration k uses blocks b_k = 1 + k (Gmax + 1)
 * onwards, block b_k + i giving X_{i+1} (even) and η_i (odd, unused at
 * i = 0), block b_k + Gmax η_G (even) and the last token (odd).  No uniform
 * is used twice, and each is a function of (seed, trial, block), so results
 * do not depend on the thread count.  Statistics are per trial, added to
 * the observers in trial order after the group.
 *
 * The broken variant (a control for `check`, broken-greedy-kernel) never
 * records the iteration's modification: Alg. 4 alone, which Sun et al.
 * 2025, App. C show to be biased. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_rngbuf.h"
#include "sd_block.h"
#include "sd_token.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define S_HAVE_X86 1
#else
#define S_HAVE_X86 0
#endif

#define S_COUNT_MAX 16 /* rows up to this size: j* by counting, else a binary search */
#define S_GROUP 128                     /* trials in lockstep */
#define S_GROUP_BYTES ((size_t)1 << 24) /* a group's ratios, and its tokens, at most (unless one trial needs more) */

/* max(al q - be p, 0): a level, or a weight built from one. */
typedef struct S_shape {
    double al, be;
} S_shape;

typedef struct S_row {
    const double *rs;        /* [V padded to 8] q/p decreasing (+inf: p = 0 < q; -1: p = q = 0, padding) */
    const double *Q, *P;     /* [V+1] prefix sums of q, p in that order */
    const double *pq;        /* [2V] p(x), q(x) by token */
    const uint32_t *ord;     /* [V] the tokens in that order */
} S_row;

typedef struct S_layout {
    size_t rs, Q, P, pq, ord, stride; /* byte offsets in a row; rows stride bytes apart */
} S_layout;

typedef struct S_plan {
    size_t V, Vpad, T, gamma, gmax;
    unsigned lgK;
    int broken;
    uint64_t *init; /* [K] alias table of x_0's law */
    uint64_t *ap;   /* [T V][K]: row (t, a)'s alias table of p at ((t-1) V + a) K (apart: the
                       drafts' chain of lookups stays in a small array) */
    S_layout lay;
    char *slab;     /* [T V rows]: row (t, a)'s other tables at ((t-1) V + a) stride */
} S_plan;

/* A group of up to S trials in lockstep; per-trial state is indexed by the
 * trial's number s in the group, the round's uniforms by its place b in
 * the list act of trials still running. */
/* A group of up to S trials in lockstep.  Counts are kept by the trial's
 * number s in the group; the state of the trials still running by their
 * place b in the list (compacted after each round), structure of arrays:
 * entry [k][b] at k S + b. */
typedef struct S_work {
    size_t S, cap;          /* trials per group; cap = gmax (depths, frame slots) */
    size_t *tok;            /* [S][T+1] by trial: x_0..x_T (and drafts past them) */
    uint32_t *rej, *its;    /* [S] by trial: rejections, iterations */
    uint64_t *s1, *s2;      /* [S] by trial: Σ τ, Σ τ² */
    uint32_t *ts;           /* [S] by place: the trial */
    uint32_t *n, *nf;       /* [S] the iteration's position, its active frames (oldest first) */
    uint32_t *fe;           /* [cap][S] frame f's last position */
    double *fa, *fb;        /* [cap][S] its ratio along the emitted path up to n-1 */
    uint32_t *G, *dr, *tau; /* [S] draft length, depths to verify, accepted drafts */
    uint32_t *X;            /* [cap+1][S] X^i's last token (X^0 = x_{n-1}) */
    size_t *ro;             /* [cap][S] the row index of depth i, (n+i-1) V + X^i's last token */
    uint64_t *eta;          /* [cap][S] η_i (53-bit integers) */
    double *Ka, *Kb;        /* [cap+1][S] p_i */
    double *Ra, *Rb;        /* [(cap+1) cap][S] frame f's ratio after X^i at row i cap + f */
    double *ta, *tb, *mt;   /* [S] the level being built at the current depth, its mass */
    uint32_t *lv;           /* [S] the places verifying the current depth */
    uint32_t *cov;          /* [cap][S] the places whose position frame f covers */
    size_t *ncov;           /* [cap] their number */
    uint64_t *ue, *uo;      /* [S] the round's uniforms, by place */
    sd_greedy_frame *fr;    /* [cap] one place's frames (S_last) */
    sd_greedy_ratio *Rs;    /* [cap] their ratios */
    S_shape *lev;           /* [cap+1] the levels at one position */
} S_work;

/* Row ridx = (t - 1) V + a: position t after a. */
static inline S_row S_row_at(const S_plan *pl, size_t ridx)
{
    const char *r = pl->slab + ridx * pl->lay.stride;
    const S_layout *l = &pl->lay;
    return (S_row){(const double *)(const void *)(r + l->rs), (const double *)(const void *)(r + l->Q),
                   (const double *)(const void *)(r + l->P),  (const double *)(const void *)(r + l->pq),
                   (const uint32_t *)(const void *)(r + l->ord)};
}

#if S_HAVE_X86
/* The count below over a row of at most 8 tokens (padded to 8), as one
 * AVX-512 comparison: the same number. */
__attribute__((target("avx512f"))) static inline size_t S_count8(const double *rs, S_shape w)
{
    __m512d v = _mm512_mul_pd(_mm512_set1_pd(w.al), _mm512_loadu_pd(rs));
    return (size_t)__builtin_popcount(_mm512_cmp_pd_mask(v, _mm512_set1_pd(w.be), _CMP_GT_OQ));
}
#endif

/* j* = #{x : al r(x) > be} (al, be >= 0; the predicate holds on a prefix of
 * the sorted row; 0 when al = 0, where 0·inf is NaN and never counted).
 * Small rows: a branch-free count over the padded row (one vector
 * comparison when `wide`, the kernel's AVX-512 instance); else a
 * branch-free binary search. */
static inline __attribute__((always_inline)) size_t S_count(const S_plan *pl, const S_row *r, S_shape w, int wide)
{
#if S_HAVE_X86
    if (wide && pl->Vpad == 8)
        return S_count8(r->rs, w);
#else
    (void)wide;
#endif
    if (pl->V <= S_COUNT_MAX) {
        size_t j = 0;
        for (size_t k = 0; k < pl->Vpad; k++)
            j += w.al * r->rs[k] > w.be;
        return j;
    }
    size_t base = 0, n = pl->V;
    while (n > 1) {
        size_t half = n / 2;
        base += half & -(size_t)(w.al * r->rs[base + half - 1] > w.be);
        n -= half;
    }
    return base + (w.al * r->rs[base] > w.be);
}

/* Σ max(al q - be p, 0) over the first j sorted tokens, j = j*: the row's mass. */
static inline double S_mass(const S_row *r, size_t j, S_shape w)
{
    double m = w.al * r->Q[j] - w.be * r->P[j];
    return m > 0.0 ? m : 0.0;
}

/* A draw from max(al q - be p, 0) / m given j = j* >= 1 and m > 0: the
 * first sorted token k < j with cumulative weight W_{k+1} > u m (j-1 at
 * the latest). */
static inline size_t S_draw(const S_row *r, size_t j, S_shape w, double m, double u)
{
    double target = u * m;
    size_t base = 0, n = j;
    while (n > 1) {
        size_t half = n / 2;
        base += half & -(size_t)(w.al * r->Q[base + half] - w.be * r->P[base + half] <= target);
        n -= half;
    }
    return r->ord[base + (w.al * r->Q[base + 1] - w.be * r->P[base + 1] <= target)];
}

/* The level's (or weight's) value at token x. */
static inline double S_val(const S_row *r, S_shape w, size_t x)
{
    double d = w.al * r->pq[2 * x + 1] - w.be * r->pq[2 * x];
    return d > 0.0 ? d : 0.0;
}

/* max(K_a D - K_b p, 0) for the level D: h's numerator and eq. 30's residual. */
static inline S_shape S_times(sd_greedy_ratio k, S_shape d)
{
    return (S_shape){k.a * d.al, k.a * d.be + k.b};
}

/* The levels at position j after the row r with the frames' ratios Ri
 * (sd_greedy_levels in closed form, see the top): lev[0..L], returns L;
 * *a0 = the first frame covering j, *mtop = the top level's mass. */
static inline __attribute__((always_inline)) size_t S_levels(const S_plan *pl, const S_row *r, const sd_greedy_frame *fr,
                                                             size_t nf, const sd_greedy_ratio *Ri, size_t j, S_shape *lev,
                                                             size_t *a0, double *mtop, int wide)
{
    size_t a = 0;
    while (a < nf && fr[a].e < j)
        a++;
    *a0 = a;
    lev[0] = (S_shape){1.0, 0.0};
    double m = r->Q[pl->V];
    for (size_t l = 0; a < nf; a++, l++) {
        S_shape w = S_times(Ri[a], lev[l]);
        double s = S_mass(r, S_count(pl, r, w, wide), w);
        double inv = s > 0.0 ? 1.0 / s : 0.0;
        lev[l + 1] = (S_shape){w.al * inv, w.be * inv};
        m = s > 0.0 ? 1.0 : 0.0;
    }
    *mtop = m;
    return nf - *a0;
}

static const double S_2M53 = 1.0 / 9007199254740992.0;

/* c ? a : b without a branch (the coins are unpredictable). */
static inline size_t S_pick(int c, size_t a, size_t b)
{
    return b ^ ((a ^ b) & -(size_t)(c != 0));
}

/* Every frame's ratio after X^{i+1} = x at a position whose levels are lev
 * (frames a0.. cover it, each extended by its own input level). */
static inline void S_advance(const S_row *r, const S_shape *lev, size_t a0, size_t nf,
                             const sd_greedy_ratio *from, sd_greedy_ratio *to, size_t x)
{
    double px = r->pq[2 * x];
    for (size_t a = 0; a < nf; a++)
        to[a] = a >= a0 ? sd_greedy_ratio_extend(from[a], S_val(r, lev[a - a0], x), px) : from[a];
}

/* Trial of place b: frames, ratios and levels of the round's iteration are
 * stored structure-of-arrays, entry [k][b] at k S + b (S the group size). */
#define S_AT(k, b) ((size_t)(k) * w->S + (b))

/* The round's iterations begin at places 0..na-1 (as sd_greedy_enter):
 * frames whose zones ended before n dropped, R row 0 = their ratios,
 * p_0 = 1, G, X^0 = x_{n-1}.  *maxG, *maxF: the largest G and frame count. */
static void S_enter_all(const S_plan *pl, S_work *w, size_t na, size_t *maxG, size_t *maxF)
{
    const size_t T = pl->T, cap = w->cap;
    size_t mg = 0, mf = 0;
    for (size_t b = 0; b < na; b++) {
        const size_t n = w->n[b], nf = w->nf[b], rest = T - n + 1;
        size_t d = 0;
        while (d < nf && w->fe[S_AT(d, b)] < n) /* the zones end in order: a prefix */
            d++;
        for (size_t f = d; f < nf; f++) {
            w->fe[S_AT(f - d, b)] = w->fe[S_AT(f, b)];
            w->fa[S_AT(f - d, b)] = w->fa[S_AT(f, b)];
            w->fb[S_AT(f - d, b)] = w->fb[S_AT(f, b)];
        }
        w->nf[b] = (uint32_t)(nf - d);
        for (size_t f = 0; f < nf - d; f++) {
            w->Ra[S_AT(f, b)] = w->fa[S_AT(f, b)];
            w->Rb[S_AT(f, b)] = w->fb[S_AT(f, b)];
        }
        w->Ka[b] = w->Kb[b] = 1.0;
        size_t G = pl->gamma && pl->gamma < rest ? pl->gamma : rest;
        w->G[b] = w->dr[b] = (uint32_t)G;
        w->tau[b] = 0;
        w->X[b] = (uint32_t)w->tok[(size_t)w->ts[b] * (T + 1) + n - 1];
        mg = G > mg ? G : mg;
        mf = nf - d > mf ? nf - d : mf;
    }
    (void)cap;
    *maxG = mg;
    *maxF = mf;
}

/* Drafting step i (X_{i+1} ~ p at row (n+i, X^i), an alias lookup) of the
 * places 0..na-1 that draft it, with the uniforms ue (X_{i+1}) and uo
 * (η_i) of block b_k + i. */
static void S_draft_all(const S_plan *pl, S_work *w, size_t i, size_t na)
{
    const size_t T = pl->T, V = pl->V;
    for (size_t b = 0; b < na; b++) {
        if (i >= w->G[b])
            continue;
        size_t n = w->n[b], ridx = (n + i - 1) * V + w->X[S_AT(i, b)];
        uint32_t x = (uint32_t)sd_token_alias_draw(pl->ap + (ridx << pl->lgK), pl->lgK, w->ue[b]);
        w->ro[S_AT(i, b)] = ridx;
        w->eta[S_AT(i, b)] = w->uo[b];
        w->X[S_AT(i + 1, b)] = x;
        w->tok[(size_t)w->ts[b] * (T + 1) + n + i] = x;
    }
}

/* Depth i < dr of the places 0..na-1 (their drafts X_1..X_G drawn): the
 * levels at position n+i after X^i, h_i's coin (i >= 1), every frame's
 * ratio after X^{i+1} and p_{i+1}; drafting stops when p_{i+1} = 0 (every
 * later h is 0).  In passes over the places: the frames covering the
 * position are listed per frame (the levels apply them oldest first, each
 * to the level the earlier ones made: frame f's pass runs after frame
 * f-1's), so that no pass branches on a trial's own frame count. */
static inline __attribute__((always_inline)) void S_verify_all(const S_plan *pl, S_work *w, size_t i, size_t na,
                                                               size_t maxF, int wide)
{
    const size_t V = pl->V, cap = w->cap;
    size_t nl = 0, *ncov = w->ncov;
    for (size_t f = 0; f < maxF; f++)
        ncov[f] = 0;
    /* the places verifying depth i; level 0 (q: (1, 0), mass Σq); the frames covering n+i */
    for (size_t b = 0; b < na; b++) {
        if (i >= w->dr[b])
            continue;
        w->lv[nl++] = (uint32_t)b;
        const size_t j = w->n[b] + i, nf = w->nf[b];
        S_row r = S_row_at(pl, w->ro[S_AT(i, b)]);
        w->ta[b] = 1.0;
        w->tb[b] = 0.0;
        w->mt[b] = r.Q[V];
        for (size_t f = 0; f < maxF; f++) {
            uint32_t *c = w->cov + f * w->S;
            c[ncov[f]] = (uint32_t)b;
            ncov[f] += f < nf && w->fe[S_AT(f, b)] >= j;
        }
    }
    /* frame by frame: its ratio after X^{i+1} (extended by its input
     * level), then the next level max(A α q - (A β + B) p, 0) / s; frames
     * not covering n+i keep their ratio */
    for (size_t f = 0; f < maxF; f++) {
        const double *ra = w->Ra + S_AT(i * cap + f, 0), *rb = w->Rb + S_AT(i * cap + f, 0);
        double *na_ = w->Ra + S_AT((i + 1) * cap + f, 0), *nb_ = w->Rb + S_AT((i + 1) * cap + f, 0);
        memcpy(na_, ra, na * sizeof *na_);
        memcpy(nb_, rb, na * sizeof *nb_);
        const uint32_t *c = w->cov + f * w->S;
        for (size_t k = 0; k < ncov[f]; k++) {
            const size_t b = c[k], x = w->X[S_AT(i + 1, b)];
            S_row r = S_row_at(pl, w->ro[S_AT(i, b)]);
            const sd_greedy_ratio R = {ra[b], rb[b]};
            const S_shape in = {w->ta[b], w->tb[b]};
            sd_greedy_ratio nr = sd_greedy_ratio_extend(R, S_val(&r, in, x), r.pq[2 * x]);
            na_[b] = nr.a;
            nb_[b] = nr.b;
            S_shape wt = S_times(R, in);
            double s = S_mass(&r, S_count(pl, &r, wt, wide), wt);
            double inv = s > 0.0 ? 1.0 / s : 0.0;
            w->ta[b] = wt.al * inv;
            w->tb[b] = wt.be * inv;
            w->mt[b] = s > 0.0 ? 1.0 : 0.0;
        }
    }
    /* h_i = num / den at X^i (Alg. 4): accepted when η_i den < num; p_{i+1} */
    for (size_t k = 0; k < nl; k++) {
        const size_t b = w->lv[k], x = w->X[S_AT(i + 1, b)];
        S_row r = S_row_at(pl, w->ro[S_AT(i, b)]);
        const sd_greedy_ratio K = {w->Ka[S_AT(i, b)], w->Kb[S_AT(i, b)]};
        const S_shape top = {w->ta[b], w->tb[b]};
        if (i >= 1) {
            S_shape h = S_times(K, top);
            double num = S_mass(&r, S_count(pl, &r, h, wide), h), den = num - (K.a * w->mt[b] - K.b);
            w->tau[b] = (uint32_t)S_pick((double)w->eta[S_AT(i, b)] * S_2M53 * den < num, i, w->tau[b]);
        }
        sd_greedy_ratio K1 = sd_greedy_ratio_extend(K, S_val(&r, top, x), r.pq[2 * x]);
        w->Ka[S_AT(i + 1, b)] = K1.a;
        w->Kb[S_AT(i + 1, b)] = K1.b;
        w->dr[b] = (uint32_t)S_pick(K1.a == 0.0, i + 1, w->dr[b]); /* p_j = 0 for all j > i: h_j = 0 */
    }
}

/* Place b ends its iteration with the uniforms etaG, U: η_G < p_G, then
 * the token after X^τ (the bonus from D_L(.|X^G), or eq. 30's residual)
 * and the frames along X^τ, Y with this iteration's own (zone
 * n+τ+1..n+G-1).  Returns the tokens emitted. */
static inline __attribute__((always_inline)) size_t S_last(const S_plan *pl, S_work *w, size_t b, uint64_t etaG,
                                                          uint64_t U, sd_greedy_frame *fr, sd_greedy_ratio *R,
                                                          S_shape *lev, int wide)
{
    const size_t cap = w->cap, n = w->n[b], G = w->G[b], nf = w->nf[b], dr = w->dr[b];
    const sd_greedy_ratio KG = {w->Ka[S_AT(dr, b)], w->Kb[S_AT(dr, b)]};
    size_t tau = w->tau[b] = (uint32_t)S_pick(dr == G && (double)etaG * S_2M53 < KG.a / KG.b, G, w->tau[b]);
    if (tau == G && n + G > pl->T)
        return tau; /* no bonus position */
    for (size_t a = 0; a < nf; a++) {
        fr[a].e = w->fe[S_AT(a, b)];
        R[a] = (sd_greedy_ratio){w->Ra[S_AT(tau * cap + a, b)], w->Rb[S_AT(tau * cap + a, b)]};
    }
    const sd_greedy_ratio Kt = {w->Ka[S_AT(tau, b)], w->Kb[S_AT(tau, b)]};
    size_t a0;
    double mtop;
    S_row r = S_row_at(pl, (n + tau - 1) * pl->V + w->X[S_AT(tau, b)]);
    size_t L = S_levels(pl, &r, fr, nf, R, n + tau, lev, &a0, &mtop, wide);
    S_shape top = lev[L], res = S_times(Kt, top);
    int bonus = tau == G;
    S_shape wt = {sd_block_sel(bonus, top.al, res.al), sd_block_sel(bonus, top.be, res.be)};
    size_t j = S_count(pl, &r, wt, wide);
    double m = S_mass(&r, j, wt);
    if (!(m > 0.0)) { /* rounding (or a dead row): D_L, else q */
        wt = top;
        j = S_count(pl, &r, wt, wide);
        m = S_mass(&r, j, wt);
    }
    if (!(m > 0.0)) { /* D_L dead: q, i.e. max(1 q - 0 p, 0) */
        wt = (S_shape){1.0, 0.0};
        j = S_count(pl, &r, wt, wide);
        m = S_mass(&r, j, wt);
    }
    size_t y = S_draw(&r, j, wt, m, (double)U * S_2M53);
    w->tok[(size_t)w->ts[b] * (pl->T + 1) + n + tau] = y;
    S_advance(&r, lev, a0, nf, R, R, y);
    for (size_t a = 0; a < nf; a++) {
        w->fa[S_AT(a, b)] = R[a].a;
        w->fb[S_AT(a, b)] = R[a].b;
    }
    /* slot nf exists: the frames active here started at distinct positions
     * in n-cap+1..n-1, so nf < cap; it counts only when its zone is not empty */
    sd_greedy_ratio nr = sd_greedy_ratio_extend(Kt, S_val(&r, top, y), r.pq[2 * y]);
    w->fe[S_AT(nf, b)] = (uint32_t)(n + G - 1);
    w->fa[S_AT(nf, b)] = nr.a;
    w->fb[S_AT(nf, b)] = nr.b;
    w->nf[b] = (uint32_t)(nf + (tau + 1 < G && !pl->broken));
    return tau + 1;
}

/* Trials g0..g0+S-1 in lockstep: in round k every trial still running does
 * its k-th iteration, drafting step i of all of them before step i + 1,
 * then verifying depth i of all of them before depth i + 1, so that the
 * processor overlaps the trials' serial chains (of alias lookups, then of
 * levels and ratios).  Uniforms (sd_rngbuf_trials_at, across trials):
 * block 0 draws x_0 (even uniform); iteration k (0-based) uses blocks
 * b_k = 1 + k (Gmax + 1) onwards: block b_k + i draws X_{i+1} (even) and
 * η_i (odd; unused at i = 0), block b_k + Gmax η_G (even) and the last
 * token (odd).  No uniform is used twice.  The places of the trials still
 * running are compacted after each round (their n, frames and trial move
 * with them); counts are kept by trial. */
static inline __attribute__((always_inline)) void S_group(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0,
                                                          size_t S, const sd_observe *obs, int wide)
{
    const size_t T = pl->T, L = obs->L ? obs->L : T, cap = w->cap;
    sd_rngbuf_trials(seed, 0, g0, S, w->ue, w->uo);
    for (size_t s = 0; s < S; s++) {
        w->tok[s * (T + 1)] = sd_token_alias_draw(pl->init, pl->lgK, w->ue[s]);
        w->ts[s] = (uint32_t)s;
        w->n[s] = 1;
        w->nf[s] = w->rej[s] = w->its[s] = 0;
        w->s1[s] = w->s2[s] = 0;
    }
    size_t na = L >= 1 ? S : 0;
    for (uint64_t k = 0; na > 0; k++) {
        const uint64_t base = 1 + k * (cap + 1);
        size_t maxG, maxF;
        S_enter_all(pl, w, na, &maxG, &maxF);
        for (size_t i = 0; i < maxG; i++) { /* the drafts X_{i+1} ~ p (alias lookups) */
            sd_rngbuf_trials_at(seed, base + i, g0, w->ts, na, w->ue, w->uo);
            S_draft_all(pl, w, i, na);
        }
        for (size_t i = 0; i < maxG; i++)
            S_verify_all(pl, w, i, na, maxF, wide);
        sd_rngbuf_trials_at(seed, base + cap, g0, w->ts, na, w->ue, w->uo);
        size_t keep = 0;
        for (size_t b = 0; b < na; b++) {
            size_t s = w->ts[b], emitted = S_last(pl, w, b, w->ue[b], w->uo[b], w->fr, w->Rs, w->lev, wide);
            size_t tau = w->tau[b], n = w->n[b] + emitted, nf = w->nf[b];
            w->rej[s] += tau < w->G[b];
            w->its[s]++;
            w->s1[s] += tau;
            w->s2[s] += (uint64_t)tau * tau;
            if (obs->hist)
                obs->hist[tau] += 1.0;
            if (obs->first_iteration || n > L)
                continue;
            w->ts[keep] = (uint32_t)s;
            w->n[keep] = (uint32_t)n;
            w->nf[keep] = (uint32_t)nf;
            for (size_t f = 0; f < nf; f++) {
                w->fe[S_AT(f, keep)] = w->fe[S_AT(f, b)];
                w->fa[S_AT(f, keep)] = w->fa[S_AT(f, b)];
                w->fb[S_AT(f, keep)] = w->fb[S_AT(f, b)];
            }
            keep++;
        }
        na = keep;
    }
}

static inline __attribute__((always_inline)) void S_trials(const S_plan *pl, S_work *w, uint64_t seed, uint64_t lo,
                                                           uint64_t hi, const sd_observe *obs, int wide)
{
    const size_t V = pl->V, T = pl->T, L = obs->L ? obs->L : T;
    for (uint64_t g0 = lo; g0 < hi; g0 += w->S) {
        size_t S = hi - g0 < w->S ? (size_t)(hi - g0) : w->S;
        S_group(pl, w, seed, g0, S, obs, wide);
        for (size_t s = 0; s < S; s++) { /* the observers, in trial order */
            const size_t *x = w->tok + s * (T + 1);
            if (obs->acc)
                sd_welford_merge_sums(obs->acc, w->its[s], w->s1[s], w->s2[s]);
            if (obs->rej)
                sd_welford_add(obs->rej, (double)w->rej[s]);
            if (obs->calls)
                sd_welford_add(obs->calls, (double)w->its[s]);
            if (obs->pos) /* horizon runs (L = T): positions past a stop at L are not the trial's */
                for (size_t n = 1; n <= L; n++)
                    obs->pos[(n - 1) * V + x[n]] += 1.0;
            if (obs->cells) {
                size_t c = 0;
                for (size_t i = 1; i <= L; i++)
                    c = c * V + x[i];
                obs->cells[c] += 1.0;
            }
            if (obs->tokens) /* x_0..x_L: drafts past x_L of the last iteration are not the trial's */
                memcpy(obs->tokens + (size_t)(g0 - lo + s) * (T + 1), x, (L + 1) * sizeof *x);
        }
    }
}

static void S_trials_scalar(const S_plan *pl, S_work *w, uint64_t seed, uint64_t lo, uint64_t hi, const sd_observe *obs)
{
    S_trials(pl, w, seed, lo, hi, obs, 0);
}

#if S_HAVE_X86
/* The same code compiled for AVX-512 (the counts as one comparison). */
__attribute__((target("avx512f"))) static void S_trials_avx512(const S_plan *pl, S_work *w, uint64_t seed, uint64_t lo,
                                                               uint64_t hi, const sd_observe *obs)
{
    S_trials(pl, w, seed, lo, hi, obs, 1);
}
#endif

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi, const sd_observe *obs)
{
#if S_HAVE_X86
    if (sd_rngbuf_avx512()) {
        S_trials_avx512(plan, work, seed, lo, hi, obs);
        return;
    }
#endif
    S_trials_scalar(plan, work, seed, lo, hi, obs);
}

static void S_plan_free(void *plan)
{
    S_plan *pl = plan;
    if (!pl)
        return;
    free(pl->slab);
    free(pl->ap);
    free(pl->init);
    free(pl);
}

/* Row (p, q)'s tables into the row at r; key: V of scratch. */
static int S_row_build(const S_plan *pl, char *r, uint64_t *ap, const double *p, const double *q, sd_block_key *key,
                       sd_error *err)
{
    const S_layout *l = &pl->lay;
    const size_t V = pl->V;
    double *rs = (double *)(void *)(r + l->rs), *Q = (double *)(void *)(r + l->Q);
    double *P = (double *)(void *)(r + l->P), *pq = (double *)(void *)(r + l->pq);
    uint32_t *ord = (uint32_t *)(void *)(r + l->ord);
    int rc = sd_token_alias_build(p, V, pl->lgK, ap, err);
    if (rc)
        return rc;
    for (size_t x = 0; x < V; x++) {
        pq[2 * x] = p[x];
        pq[2 * x + 1] = q[x];
    }
    sd_block_sort_row(p, q, V, key, rs, Q, P, ord); /* rs padded with -1: never counted */
    return SD_OK;
}

static int S_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, int broken, sd_error *err)
{
    *plan = NULL;
    const sd_chain *c = m->chain;
    if (!c || c->V > ((size_t)1 << 23))
        return SD_EUSAGE; /* not applicable: no stored rows (or beyond the alias tables' 2^24 columns) */
    size_t V = c->V, T = c->T, nrows = T * V, gmax = par->gamma && par->gamma < T ? par->gamma : T;
    if (!sd_greedy_fits(gmax, V))
        return SD_EUSAGE; /* the step refuses it with its own message */
    unsigned lgK = 1;
    while (((size_t)1 << lgK) < V)
        lgK++;
    const size_t K = (size_t)1 << lgK, Vpad = (V + 7) / 8 * 8;
    if (max_bytes == 0)
        max_bytes = (size_t)1 << 30; /* the engine's default (sims/sd_sim.h) */
    S_layout l;
    l.rs = 0;
    l.Q = l.rs + Vpad * sizeof(double);
    l.P = l.Q + (V + 1) * sizeof(double);
    l.pq = l.P + (V + 1) * sizeof(double);
    l.ord = l.pq + 2 * V * sizeof(double);
    l.stride = (l.ord + V * sizeof(uint32_t) + 7) / 8 * 8;
    const size_t per = l.stride + K * sizeof(uint64_t); /* a row's bytes, its alias table of p included */
    if (nrows && (max_bytes < K * sizeof(uint64_t) || per > (max_bytes - K * sizeof(uint64_t)) / nrows))
        return sd_error_set(err, SD_ETOOBIG, "greedy-block kernel: tables of %zu rows x %zu bytes exceed %zu bytes",
                            nrows, per, max_bytes);
    S_plan *pl = calloc(1, sizeof *pl);
    sd_block_key *key = malloc(V * sizeof *key);
    if (pl) {
        pl->slab = malloc(nrows * l.stride);
        pl->ap = malloc(nrows * K * sizeof *pl->ap);
        pl->init = malloc(K * sizeof *pl->init);
    }
    if (!pl || !key || !pl->slab || !pl->ap || !pl->init) {
        S_plan_free(pl);
        free(key);
        return sd_error_set(err, SD_ENOMEM, "greedy-block kernel: out of memory for %zu rows", nrows);
    }
    pl->V = V;
    pl->Vpad = Vpad;
    pl->T = T;
    pl->gamma = par->gamma;
    pl->gmax = gmax;
    pl->lgK = lgK;
    pl->broken = broken;
    pl->lay = l;
    int rc = sd_token_alias_build(c->init, V, lgK, pl->init, err);
    for (size_t t = 1; t <= T && !rc; t++)
        for (size_t a = 0; a < V && !rc; a++)
            rc = S_row_build(pl, pl->slab + ((t - 1) * V + a) * l.stride, pl->ap + (((t - 1) * V + a) << lgK),
                             sd_chain_p(c, t, a), sd_chain_q(c, t, a), key, err);
    free(key);
    if (rc) {
        S_plan_free(pl);
        return rc;
    }
    *plan = pl;
    return SD_OK;
}

static int S_new_exact(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, unsigned threads,
                       sd_error *err)
{
    (void)threads;
    return S_new(plan, m, par, max_bytes, 0, err);
}

static int S_new_broken(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, unsigned threads,
                        sd_error *err)
{
    (void)threads;
    return S_new(plan, m, par, max_bytes, 1, err);
}

static void S_work_free(void *work)
{
    S_work *w = work;
    if (!w)
        return;
    void *arrays[] = {w->tok, w->rej, w->its, w->s1, w->s2, w->ts,  w->n,  w->nf,   w->fe, w->fa, w->fb, w->G,
                      w->dr,  w->tau, w->X,   w->ro, w->eta, w->Ka, w->Kb, w->Ra,  w->Rb,  w->ta, w->tb, w->mt,
                      w->lv,  w->cov, w->ncov, w->ue, w->uo, w->fr, w->Rs, w->lev};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(w);
}

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    const size_t g = pl->gmax;
    S_work *w = calloc(1, sizeof *w);
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "greedy-block kernel: out of memory");
    /* S_GROUP trials, fewer when their ratios or their tokens would exceed
     * S_GROUP_BYTES each */
    size_t per = 2 * (g + 1) * g * sizeof *w->Ra, S = S_GROUP_BYTES / per,
           St = S_GROUP_BYTES / ((pl->T + 1) * sizeof *w->tok);
    S = St < S ? St : S;
    S = w->S = S < 1 ? 1 : S > S_GROUP ? S_GROUP : S;
    w->cap = g;
    /* every array zeroed: the passes copy entries of unused frame slots */
    struct {
        void **p;
        size_t n, size;
    } a[] = {
        {(void **)&w->tok, S * (pl->T + 1), sizeof *w->tok}, {(void **)&w->rej, S, sizeof *w->rej},
        {(void **)&w->its, S, sizeof *w->its},              {(void **)&w->s1, S, sizeof *w->s1},
        {(void **)&w->s2, S, sizeof *w->s2},                {(void **)&w->ts, S, sizeof *w->ts},
        {(void **)&w->n, S, sizeof *w->n},                  {(void **)&w->nf, S, sizeof *w->nf},
        {(void **)&w->fe, g * S, sizeof *w->fe},            {(void **)&w->fa, g * S, sizeof *w->fa},
        {(void **)&w->fb, g * S, sizeof *w->fb},            {(void **)&w->G, S, sizeof *w->G},
        {(void **)&w->dr, S, sizeof *w->dr},                {(void **)&w->tau, S, sizeof *w->tau},
        {(void **)&w->X, (g + 1) * S, sizeof *w->X},        {(void **)&w->ro, g * S, sizeof *w->ro},
        {(void **)&w->eta, g * S, sizeof *w->eta},          {(void **)&w->Ka, (g + 1) * S, sizeof *w->Ka},
        {(void **)&w->Kb, (g + 1) * S, sizeof *w->Kb},      {(void **)&w->Ra, (g + 1) * g * S, sizeof *w->Ra},
        {(void **)&w->Rb, (g + 1) * g * S, sizeof *w->Rb},  {(void **)&w->ta, S, sizeof *w->ta},
        {(void **)&w->tb, S, sizeof *w->tb},                {(void **)&w->mt, S, sizeof *w->mt},
        {(void **)&w->lv, S, sizeof *w->lv},                {(void **)&w->cov, g * S, sizeof *w->cov},
        {(void **)&w->ncov, g, sizeof *w->ncov},            {(void **)&w->ue, S, sizeof *w->ue},
        {(void **)&w->uo, S, sizeof *w->uo},                {(void **)&w->fr, g, sizeof *w->fr},
        {(void **)&w->Rs, g, sizeof *w->Rs},                {(void **)&w->lev, g + 1, sizeof *w->lev},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        bad |= !(*a[i].p = calloc(a[i].n, a[i].size));
    if (bad) {
        S_work_free(w);
        return sd_error_set(err, SD_ENOMEM, "greedy-block kernel: out of memory for G = %zu", g);
    }
    *work = w;
    return SD_OK;
}

#define S_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_FIRST | SD_OBS_TOKENS)

const sd_kernel_type sd_greedy_kernel = {
    "greedy-sorted", S_SUPPORTS, S_new_exact, S_plan_free, S_work_new, S_work_free, S_run,
};

const sd_kernel_type sd_greedy_kernel_broken = {
    "greedy-sorted-broken", S_SUPPORTS, S_new_broken, S_plan_free, S_work_new, S_work_free, S_run,
};
