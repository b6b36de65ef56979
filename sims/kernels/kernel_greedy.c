/* kernel_greedy.c — a fast kernel for greedy block verification with the
 * distribution modification (sims/verifiers/greedy_block.c; Sun et al. 2025, App. C,
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
 * (a binary search, as in the block kernel, sims/kernels/kernel_block.c; for rows
 * of at most 8 tokens the number of j < j* - 1 with a Q_{j+1} - b P_{j+1}
 * <= u·mass, one vector comparison: the same token wherever these
 * cumulative weights are nondecreasing, as they are in exact arithmetic).
 * The denominator of h_i is Σ max(K_b p - K_a D_L, 0) = num - (K_a Σ D_L -
 * K_b), with Σ D_L = 1 for a normalised level (Σ q for D_0, 0 for a dead
 * one).
 * A level's value at one token, needed to extend the frames' ratios, is
 * max(α q(x) - β p(x), 0) from the row's p and q.  The ratios themselves are
 * extended as sd_greedy_ratio_extend does (S_extend: (x, y)/max(x, y) with
 * one division, (1, y/x) or (x/y, 1), the same bits since z/z = 1), and the
 * frames retired as sd_greedy_frames_drop does, at the end of the iteration
 * (a frame whose zone ends before the next iteration is neither extended
 * nor kept: it would be dropped before being read); the order of the
 * levels, which frames cover a position, the acceptance η_i den < num
 * (i < G) and η_G < p_G, the early stop once p_i = 0, the horizon's missing
 * bonus, the fall-backs of a residual of zero mass (rounding: D_L, then q)
 * and the new frame (zone n+τ+1..n+G-1, ratio p_τ D_L(Y)/p(Y)) are the
 * step's.  The law is therefore the step's exactly; floating-point rounding
 * differs (prefix sums instead of V-long sums).
 *
 * Tables, per row (position t, previous token a; rows start on cache
 * lines): the integer alias table of p (sims/verifiers/sd_token.h: every token
 * returned for exactly its mass of the 2^53 values of a 53-bit uniform,
 * never one of probability 0), in an array of its own so that the drafts'
 * chain of lookups stays in a small table; r sorted decreasing (padded with
 * -1 to a multiple of 8: never counted), the prefix sums, the order, and
 * p, q by token.  The draft X_i ~ p is one alias draw; the bonus and the
 * residuals are draws by the search above (the bonus from q itself is the
 * row (1, 0)).
 *
 * Lockstep.  A group of trials runs iteration by iteration, as the block
 * kernel's: in round k every trial still running does its k-th iteration,
 * first its G drafts (alias lookups only; they do not depend on the
 * verification), depth by depth across the trials, then the levels and
 * the verification of depth i of every trial before depth i + 1, then the
 * last token.  The state of the trials still running is kept by place
 * (compacted after each round) in structure-of-arrays tables, and each
 * step is a sequence of passes over the places: the table reads of a pass
 * (row words, counts j*, prefix sums) apart from its arithmetic, which the
 * AVX-512 instance (F and DQ, run-time check) does eight places at a time
 * with the scalar code's operations in the same order (no fused
 * multiply-adds; max(x, 0) for x > 0 ? x : 0), fetching table words by
 * scalar loads between vector passes (a gather is slower here,
 * sims/verifiers/sd_token.h).  The frames covering a depth are applied in steps over
 * the places that have them (most have none).  Uniforms are those of the
 * block kernel's layout (53-bit, sd_rngbuf_trials_at across trials): block
 * 0 draws x_0; iteration k uses blocks b_k = 1 + k (Gmax + 1) onwards,
 * block b_k + i giving X_{i+1} (even) and η_i (odd, unused at i = 0), block
 * b_k + Gmax η_G (even) and the last token (odd).  No uniform is used
 * twice, and each is a function of
 * (seed, trial, block), so results do not depend on the thread count or on
 * the instruction set (tests/test_kernel_greedy.c).  Statistics are per
 * trial, added to the observers in trial order after the group.
 *
 * The bonus's level.  D_L at depth G, where the bonus is drawn, is q
 * itself: no frame covers n+G.  A frame made at position n' ends at
 * n' + G' - 1 and the next iteration starts at n = n' + τ' + 1, so it
 * covers at most n..n + G' - 2 - τ'; the ones made before end earlier.
 * Where the bonus has a position (n + G <= T), G = γ >= G', so n + G is
 * past every frame.  Only depths 0..G-1 are therefore built.
 *
 * The broken variant (a control for `check`, broken-greedy-kernel) never
 * records the iteration's modification: Alg. 4 alone, which Sun et al.
 * 2025, App. C show to be biased. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_rngbuf.h"
#include "../verifiers/sd_block.h"
#include "../verifiers/sd_greedy.h"
#include "../verifiers/sd_token.h"
#include "sd_kernel_pair.h"


#define S_COUNT_MAX 16 /* rows up to this size: j* by counting, else a binary search */
#define S_GROUP 256                     /* trials in lockstep */
#define S_LINE 64                       /* bytes of a cache line: rows start on one */
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

/* A group of up to S trials in lockstep.  Counts are kept by the trial's
 * number s in the group, the state of the trials still running by their
 * place b in the list (compacted after each round), as structure-of-arrays
 * tables: entry [k][b] at k S + b. */
typedef struct S_work {
    size_t S, cap;          /* trials per group; cap = gmax (depths, frame slots) */
    size_t *tok;            /* [S][T+1] by trial: x_0..x_T (and drafts past them) */
    uint32_t *rej, *its;    /* [S] by trial: rejections, iterations */
    uint64_t *s1, *s2;      /* [S] by trial: Σ τ, Σ τ² */
    uint32_t *ts;           /* [S] by place: the trial */
    uint32_t *n, *nf;       /* [S] the iteration's position, its active frames (oldest first) */
    uint32_t *fe;           /* [cap][S] frame f's last position */
    uint32_t *G, *dr, *tau; /* [S] draft length, depths to verify, accepted drafts */
    uint32_t *X;            /* [cap+1][S] X^i's last token (X^0 = x_{n-1}) */
    uint64_t *eta;          /* [cap][S] η_i (53-bit integers) */
    double *Ka, *Kb;        /* [cap+1][S] p_i */
    double *R;              /* [(cap+2) cap][S][2] frame f's ratio (a, b) after X^i at row i cap + f
                               (row f: the frames' ratios between iterations); pairs side by side,
                               one cache line for both halves */
    double *L;              /* [(cap+1) cap][S][2] frame f's input level (α, β) at depth i (where it
                               covers) */
    double *TT;             /* [cap+1][S][2] the top level (α, β) at depth i (pairs side by side) */
    double *MT;             /* [cap+1][S] its mass */
    /* one depth's scratch, by place */
    size_t *off;            /* the row's byte offset in the slab */
    double *PQX;            /* [S][2] p(X_{i+1}), q(X_{i+1}) */
    double *WA, *WB;        /* a weight max(a q - b p, 0) */
    double *QJ, *PJ;        /* its prefix sums Q_{j*}, P_{j*} */
    uint8_t *fl, *cv;       /* flags (S_rows); places whose weight is counted */
    uint32_t *lst;          /* those places */
    uint32_t *jj;           /* their j* */
    uint64_t *ip;           /* byte offsets of row words to fetch (S_rows_avx512) */
    uint32_t *a0, *fls;     /* the first frame covering the depth; the places where one does */
    uint32_t *nfl;          /* the places verifying the depth that no frame covers (S_rows_avx512) */
    uint32_t *em, *Y;       /* the round's last pass: tokens emitted, the last token */
    double *PY, *QY;        /* p(Y), q(Y) */
    double *KTa, *KTb;      /* p_τ */
    double *TTa, *TTb;      /* the top level at depth τ */
    uint64_t *ue, *uo;      /* [S] the round's uniforms, by place */
    uint8_t *mk;            /* [S/8] the compaction's masks of places kept */
    unsigned char *arena;   /* every array above (sd_carve) */
} S_work;

/* The row at byte offset off of the slab. */
static inline S_row S_row_off(const S_plan *pl, size_t off)
{
    const char *r = pl->slab + off;
    const S_layout *l = &pl->lay;
    return (S_row){(const double *)(const void *)(r + l->rs), (const double *)(const void *)(r + l->Q),
                   (const double *)(const void *)(r + l->P),  (const double *)(const void *)(r + l->pq),
                   (const uint32_t *)(const void *)(r + l->ord)};
}

#if SD_KERNEL_X86
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
 * comparison in the kernel's AVX-512 instances: `wide` 1 for rows of 8
 * tokens or fewer, 2 where every row is one); else a branch-free binary
 * search. */
static inline __attribute__((always_inline)) size_t S_count(const S_plan *pl, const S_row *r, S_shape w, int wide)
{
#if SD_KERNEL_X86
    if (wide == 2 || (wide && pl->Vpad == 8))
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

#if SD_KERNEL_X86
/* The count of S_draw over a row of at most 8 tokens as one AVX-512
 * comparison of W_1..W_{j-1} (the lanes past j-1 neither loaded nor
 * counted): the same number. */
__attribute__((target("avx512f"))) static inline size_t S_below8(const S_row *r, size_t j, S_shape w, double target)
{
    const __mmask8 k = (__mmask8)((1u << (j - 1)) - 1u);
    const __m512d W = _mm512_sub_pd(_mm512_mul_pd(_mm512_set1_pd(w.al), _mm512_maskz_loadu_pd(k, r->Q + 1)),
                                    _mm512_mul_pd(_mm512_set1_pd(w.be), _mm512_maskz_loadu_pd(k, r->P + 1)));
    return (size_t)__builtin_popcount(_mm512_mask_cmp_pd_mask(k, W, _mm512_set1_pd(target), _CMP_LE_OQ));
}
#endif

/* A draw from max(al q - be p, 0) / m given j = j* >= 1 and m > 0: the
 * first sorted token k < j with cumulative weight W_{k+1} > u m (j-1 at
 * the latest), W_k = al Q_k - be P_k nondecreasing on k <= j*.  Rows of at
 * most 8 tokens: the number of k in 1..j-1 with W_k <= u m (the same token
 * where W is nondecreasing; where rounding breaks that, still a token of
 * the row of positive weight), one vector comparison when `wide`; longer
 * rows: a branch-free binary search. */
static inline __attribute__((always_inline)) size_t S_draw(const S_plan *pl, const S_row *r, size_t j, S_shape w,
                                                           double m, double u, int wide)
{
    const double target = u * m;
    if (wide == 2 || pl->V <= 8) {
#if SD_KERNEL_X86
        if (wide)
            return r->ord[S_below8(r, j, w, target)];
#else
        (void)wide;
#endif
        size_t below = 0;
        for (size_t k = 1; k < j; k++)
            below += w.al * r->Q[k] - w.be * r->P[k] <= target;
        return r->ord[below];
    }
    size_t base = 0, n = j;
    /* lgK >= log2 V >= log2 j turns: past n = 1 a turn adds 0 and keeps n
     * (the search of a while (n > 1) loop, without its unpredictable exit) */
    for (unsigned s = 0; s < pl->lgK; s++) {
        size_t half = n / 2;
        base += half & -(size_t)(w.al * r->Q[base + half] - w.be * r->P[base + half] <= target);
        n -= half;
    }
    return r->ord[base + (w.al * r->Q[base + 1] - w.be * r->P[base + 1] <= target)];
}

/* max(K_a D - K_b p, 0) for the level D: h's numerator and eq. 30's residual. */
static inline S_shape S_times(sd_greedy_ratio k, S_shape d)
{
    return (S_shape){k.a * d.al, k.a * d.be + k.b};
}

static const double S_2M53 = 1.0 / 9007199254740992.0;

/* c ? a : b without a branch (the coins are unpredictable). */
static inline size_t S_pick(int c, size_t a, size_t b)
{
    return b ^ ((a ^ b) & -(size_t)(c != 0));
}

/* sd_greedy_ratio_extend with one division: (x, y) = (a mb, b ms) divided
 * by m = max(x, y) is (1, y/x) when x > y, else (x/y, 1), since z/z = 1
 * exactly; (0, 0) when m = 0.  The same bits. */
static inline sd_greedy_ratio S_extend(sd_greedy_ratio r, double mb, double ms)
{
    const double x = r.a * mb, y = r.b * ms;
    const int gt = x > y; /* unpredictable: selections without a branch */
    const double m = sd_block_sel(gt, x, y), q = sd_block_sel(gt, y, x) / m;
    const int live = m > 0.0;
    return (sd_greedy_ratio){sd_block_sel(live, sd_block_sel(gt, 1.0, q), 0.0),
                             sd_block_sel(live, sd_block_sel(gt, q, 1.0), 0.0)};
}

/* A level's (or weight's) value max(al q(x) - be p(x), 0) at a token of
 * probabilities p(x) = px, q(x) = qx. */
static inline double S_val(double al, double be, double qx, double px)
{
    const double v = al * qx - be * px;
    return v > 0.0 ? v : 0.0;
}

/* Entry [k][b] of a structure-of-arrays table of the work (k S + b). */
#define S_AT(k, b) ((size_t)(k) * w->S + (b))

/* Pair tables (R, L, TT: [..][S][2], the two halves side by side, so that a
 * place's pair is one cache line): entry at = S_AT(k, b) read as a ratio or
 * as a shape, and written. */
static inline sd_greedy_ratio S_ratio_at(const double *t, size_t at)
{
    return (sd_greedy_ratio){t[2 * at], t[2 * at + 1]};
}

static inline S_shape S_shape_at(const double *t, size_t at)
{
    return (S_shape){t[2 * at], t[2 * at + 1]};
}

static inline void S_put(double *t, size_t at, double x, double y)
{
    t[2 * at] = x;
    t[2 * at + 1] = y;
}

/* Place b begins an iteration at position n after token x (its frames,
 * those still active at n, are in R row 0): p_0 = 1, G = γ or what is
 * left of the horizon.  Returns G. */
static inline size_t S_begin(const S_plan *pl, S_work *w, size_t b, size_t n, uint32_t x)
{
    const size_t G = sd_draft_len_at(pl->gamma, pl->T, n);
    w->n[b] = (uint32_t)n;
    w->X[b] = x;
    w->Ka[b] = w->Kb[b] = 1.0;
    w->G[b] = w->dr[b] = (uint32_t)G;
    w->tau[b] = 0;
    return G;
}

/* Drafting step i (X_{i+1} ~ p at row (n+i, X^i), an alias lookup) of the
 * places 0..na-1 that draft it, with the uniform ue of block b_k + i (its
 * other one, η_i, is drawn into eta's row i). */
static void S_draft_scalar(const S_plan *pl, S_work *w, size_t i, size_t b0, size_t na)
{
    const size_t T = pl->T, V = pl->V;
    for (size_t b = b0; b < na; b++) {
        if (i >= w->G[b])
            continue;
        size_t n = w->n[b], ridx = (n + i - 1) * V + w->X[S_AT(i, b)];
        uint32_t x = (uint32_t)sd_token_alias_draw(pl->ap + (ridx << pl->lgK), pl->lgK, w->ue[b]);
        w->X[S_AT(i + 1, b)] = x;
        w->tok[(size_t)w->ts[b] * (T + 1) + n + i] = x;
    }
}

/* h_i's weight max(K_a D - K_b p, 0) for the top level D at place b
 * (S_times), its count and prefix sums into WA, WB, QJ, PJ. */
static inline __attribute__((always_inline)) void S_hcount(const S_plan *pl, S_work *w, size_t i, size_t b,
                                                           const S_row *r, S_shape top, int wide)
{
    const S_shape h = S_times((sd_greedy_ratio){w->Ka[S_AT(i, b)], w->Kb[S_AT(i, b)]}, top);
    const size_t j = S_count(pl, r, h, wide);
    w->WA[b] = h.al;
    w->WB[b] = h.be;
    w->QJ[b] = r->Q[j];
    w->PJ[b] = r->P[j];
}

/* Depth i: the places that verify it (flag: i < dr), their row's offset,
 * level 0 = q, i.e. (1, 0), of mass Σq, and p, q of X_{i+1}. */
static inline __attribute__((always_inline)) size_t S_rows_scalar(const S_plan *pl, S_work *w, size_t i, size_t b0,
                                                                   size_t na, size_t maxF, int count, size_t nl,
                                                                   int wide)
{
    const size_t V = pl->V, stride = pl->lay.stride;
    for (size_t b = b0; b < na; b++) {
        const size_t n = w->n[b];
        const int ver = i < w->dr[b];
        w->fl[b] = (uint8_t)ver;
        if (!ver)
            continue;
        const size_t off = ((n + i - 1) * V + w->X[S_AT(i, b)]) * stride;
        const S_row r = S_row_off(pl, off);
        w->off[b] = off;
        S_put(w->TT, S_AT(i, b), 1.0, 0.0);
        w->MT[S_AT(i, b)] = r.Q[V];
        const size_t x = w->X[S_AT(i + 1, b)];
        w->PQX[2 * b] = r.pq[2 * x];
        w->PQX[2 * b + 1] = r.pq[2 * x + 1];
        if (count) /* h's weight and count at level 0 (S_frames redoes them where frames cover) */
            S_hcount(pl, w, i, b, &r, (S_shape){1.0, 0.0}, wide);
        size_t c = 0, nf = w->nf[b];
        for (size_t f = 0; f < maxF; f++)
            c += f < nf && w->fe[S_AT(f, b)] >= n + i;
        w->a0[b] = (uint32_t)(nf - c);
        w->fls[nl] = (uint32_t)b;
        nl += c > 0;
    }
    return nl;
}

/* Depth i at the places fls[0..nl) where frames cover n+i (frames a0..nf-1):
 * the levels, each frame's input level (L) and its ratio after X^{i+1}
 * (extended by its input level); with `count`, then h's weight and count
 * at the top level, once per place after the last step (they replace
 * S_rows_scalar's level-0 ones; S_rows_avx512 makes those only where no
 * frame covers).  Frames not
 * covering n+i are not extended: they are dropped before they are read
 * again (their zones end before the next iteration). */
static inline __attribute__((always_inline)) void S_frames(const S_plan *pl, S_work *w, size_t i, size_t nl, int count,
                                                           int wide)
{
    const size_t cap = w->cap;
    const uint32_t *in = w->fls;
    uint32_t *lst = w->lst;
    const size_t nl0 = nl;
    /* step l applies frame a0 + l at every listed place, then keeps those
     * with a frame after it (no branch on a place's own frame count) */
    for (size_t l = 0; nl > 0; l++) {
        size_t keep = 0;
        for (size_t t = 0; t < nl; t++) {
            const size_t b = in[t], f = w->a0[b] + l, k = i * cap + f;
            const S_row r = S_row_off(pl, w->off[b]);
            const sd_greedy_ratio R = S_ratio_at(w->R, S_AT(k, b));
            const S_shape top = S_shape_at(w->TT, S_AT(i, b));
            S_put(w->L, S_AT(k, b), top.al, top.be);
            const double px = w->PQX[2 * b];
            const sd_greedy_ratio e = S_extend(R, S_val(top.al, top.be, w->PQX[2 * b + 1], px), px);
            S_put(w->R, S_AT(k + cap, b), e.a, e.b);
            const S_shape wt = S_times(R, top);
            const double s = S_mass(&r, S_count(pl, &r, wt, wide), wt), inv = s > 0.0 ? 1.0 / s : 0.0;
            const S_shape nt = {wt.al * inv, wt.be * inv};
            S_put(w->TT, S_AT(i, b), nt.al, nt.be);
            w->MT[S_AT(i, b)] = s > 0.0 ? 1.0 : 0.0;
            lst[keep] = (uint32_t)b;
            keep += f + 1 < w->nf[b];
        }
        nl = keep;
        in = lst;
    }
    if (count) /* h's weight and count at the top level, after the last frame */
        for (size_t t = 0; t < nl0; t++) {
            const size_t b = w->fls[t];
            const S_row r = S_row_off(pl, w->off[b]);
            S_hcount(pl, w, i, b, &r, S_shape_at(w->TT, S_AT(i, b)), wide);
        }
}

/* The places verifying depth i: h_i = num / den at X^i (Alg. 4, i >= 1),
 * accepted when η_i den < num, with num the mass of h's weight (QJ, PJ)
 * and den = num - (K_a ΣD - K_b); p_{i+1} = p_i extended by D(X_{i+1});
 * drafting stops when p_{i+1} = 0 (every later h is 0). */
static void S_accept_scalar(S_work *w, size_t i, size_t b0, size_t na)
{
    for (size_t b = b0; b < na; b++) {
        if (!w->fl[b])
            continue;
        const sd_greedy_ratio K = {w->Ka[S_AT(i, b)], w->Kb[S_AT(i, b)]};
        const S_shape top = S_shape_at(w->TT, S_AT(i, b));
        if (i >= 1) {
            double num = w->WA[b] * w->QJ[b] - w->WB[b] * w->PJ[b];
            num = num > 0.0 ? num : 0.0;
            double den = num - (K.a * w->MT[S_AT(i, b)] - K.b);
            w->tau[b] = (uint32_t)S_pick((double)w->eta[S_AT(i, b)] * S_2M53 * den < num, i, w->tau[b]);
        }
        const sd_greedy_ratio K1 = S_extend(K, S_val(top.al, top.be, w->PQX[2 * b + 1], w->PQX[2 * b]), w->PQX[2 * b]);
        w->Ka[S_AT(i + 1, b)] = K1.a;
        w->Kb[S_AT(i + 1, b)] = K1.b;
        w->dr[b] = (uint32_t)S_pick(K1.a == 0.0, i + 1, w->dr[b]); /* p_j = 0 for all j > i */
    }
}

/* The end of the round's iterations at places 0..na-1, in passes (the
 * uniforms ue: η_G, uo: the last token's).  First η_G < p_G, and the
 * weight of the token after X^τ: the bonus from D_L(.|X^G), or eq. 30's
 * residual max(p_τ D_L - p, 0), from the levels at depth τ (counted where
 * there is a position: not a bonus past T); em = the tokens emitted. */
static void S_last_weight_scalar(const S_plan *pl, S_work *w, size_t b0, size_t na)
{
    const size_t T = pl->T, V = pl->V, stride = pl->lay.stride;
    for (size_t b = b0; b < na; b++) {
        const size_t n = w->n[b], G = w->G[b], dr = w->dr[b];
        const int full = dr == G && (double)w->ue[b] * S_2M53 < w->Ka[S_AT(G, b)] / w->Kb[S_AT(G, b)];
        const size_t tau = S_pick(full, G, w->tau[b]);
        const int go = !(tau == G && n + G > T); /* else no bonus position */
        w->tau[b] = (uint32_t)tau;
        w->em[b] = (uint32_t)(tau + (size_t)go);
        w->cv[b] = (uint8_t)go;
        w->off[b] = S_pick(go, ((n + tau - 1) * V + w->X[S_AT(tau, b)]) * stride, 0);
        const int bonus = tau == G; /* D_L = q: no frame covers n+G */
        const sd_greedy_ratio Kt = {w->Ka[S_AT(tau, b)], w->Kb[S_AT(tau, b)]};
        const S_shape tt = S_shape_at(w->TT, S_AT(tau, b));
        const S_shape top = {sd_block_sel(bonus, 1.0, tt.al), sd_block_sel(bonus, 0.0, tt.be)}, res = S_times(Kt, top);
        w->WA[b] = sd_block_sel(bonus, top.al, res.al);
        w->WB[b] = sd_block_sel(bonus, top.be, res.be);
        w->KTa[b] = Kt.a;
        w->KTb[b] = Kt.b;
        w->TTa[b] = top.al;
        w->TTb[b] = top.be;
    }
}

/* The last token Y where there is a position: its weight's count and
 * mass (zero mass, from rounding or a dead row, falls back to D_L, then
 * to q) and a draw from it. */
static inline __attribute__((always_inline)) void S_last_draw1(const S_plan *pl, S_work *w, size_t b, int wide)
{
    const S_row r = S_row_off(pl, w->off[b]);
    S_shape wt = {w->WA[b], w->WB[b]};
    size_t j = S_count(pl, &r, wt, wide);
    double m = S_mass(&r, j, wt);
    if (!(m > 0.0)) { /* rounding (or a dead row): D_L, else q */
        wt = (S_shape){w->TTa[b], w->TTb[b]};
        j = S_count(pl, &r, wt, wide);
        m = S_mass(&r, j, wt);
        if (!(m > 0.0)) { /* D_L dead: q, i.e. max(1 q - 0 p, 0) */
            wt = (S_shape){1.0, 0.0};
            j = S_count(pl, &r, wt, wide);
            m = S_mass(&r, j, wt);
        }
    }
    const size_t y = S_draw(pl, &r, j, wt, m, (double)w->uo[b] * S_2M53, wide);
    w->Y[b] = (uint32_t)y;
    w->PY[b] = r.pq[2 * y];
    w->QY[b] = r.pq[2 * y + 1];
    w->tok[(size_t)w->ts[b] * (pl->T + 1) + w->n[b] + w->tau[b]] = y;
}

static inline __attribute__((always_inline)) void S_last_draw_scalar(const S_plan *pl, S_work *w, size_t b0, size_t na,
                                                                     int wide)
{
    for (size_t b = b0; b < na; b++)
        if (w->cv[b])
            S_last_draw1(pl, w, b, wide);
}

/* The frames along X^τ, Y (R row 0): those covering n+τ extended by Y from
 * their input levels there, the others kept, then this iteration's own
 * (zone n+τ+1..n+G-1).  Places without a position end their trial here:
 * what is written for them is not read. */
static void S_last_frames_scalar(S_work *w, size_t b0, size_t na)
{
    const size_t cap = w->cap;
    for (size_t b = b0; b < na; b++) {
        const size_t tau = w->tau[b], nf = w->nf[b], next = w->n[b] + tau + 1;
        size_t k = 0;
        for (size_t f = 0; f < nf; f++) {
            if (w->fe[S_AT(f, b)] < next)
                continue; /* its zone ends before the next iteration (as sd_greedy_frames_drop) */
            const size_t a = tau * cap + f;
            const S_shape lv = S_shape_at(w->L, S_AT(a, b));
            const sd_greedy_ratio e = S_extend(S_ratio_at(w->R, S_AT(a, b)), S_val(lv.al, lv.be, w->QY[b], w->PY[b]), w->PY[b]);
            w->fe[S_AT(k, b)] = w->fe[S_AT(f, b)];
            S_put(w->R, S_AT(k, b), e.a, e.b);
            k++;
        }
        w->nf[b] = (uint32_t)k;
    }
}

/* This iteration's frame (zone n+τ+1..n+G-1, ratio p_τ D_L(Y)/p(Y)) in slot
 * nf of places b0..na-1.  Slot nf exists: the frames active here started
 * at distinct positions in n-cap+1..n-1, so nf < cap; it counts only when
 * its zone is not empty. */
static void S_last_new_scalar(const S_plan *pl, S_work *w, size_t b0, size_t na)
{
    for (size_t b = b0; b < na; b++) {
        const size_t tau = w->tau[b], nf = w->nf[b], G = w->G[b];
        const sd_greedy_ratio Kt = {w->KTa[b], w->KTb[b]};
        const sd_greedy_ratio e = S_extend(Kt, S_val(w->TTa[b], w->TTb[b], w->QY[b], w->PY[b]), w->PY[b]);
        w->fe[S_AT(nf, b)] = (uint32_t)(w->n[b] + G - 1);
        S_put(w->R, S_AT(nf, b), e.a, e.b);
        w->nf[b] = (uint32_t)(nf + (tau + 1 < G && !pl->broken));
    }
}

#if SD_KERNEL_X86
/* The passes above, eight places at a time (places 0..8⌊na/8⌋-1; they
 * return how many they did, the scalar code does the rest): the same
 * operations in the same order, lanes masked where the scalar code skips
 * (x > 0 ? x : 0 is max(x, 0) and a > b ? a : b is max(a, b), NaN and
 * signed zeros included; no fused multiply-adds). */
#define S_LD8(a) _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(a)))
#define S_ST8(a, m) _mm_storel_epi64((__m128i *)(void *)(a), _mm512_cvtepi64_epi8(_mm512_maskz_mov_epi64((m), _mm512_set1_epi64(1))))

/* S_extend of (a, b) by (mb, ms), eight lanes. */
__attribute__((target("avx512f"))) static inline void S_extend8(__m512d a, __m512d b, __m512d mb, __m512d ms,
                                                               __m512d *na, __m512d *nb)
{
    const __m512d one = _mm512_set1_pd(1.0);
    __m512d x = _mm512_mul_pd(a, mb), y = _mm512_mul_pd(b, ms);
    __mmask8 gt = _mm512_cmp_pd_mask(x, y, _CMP_GT_OQ);
    __m512d m = _mm512_mask_blend_pd(gt, y, x), q = _mm512_div_pd(_mm512_mask_blend_pd(gt, x, y), m);
    __mmask8 ok = _mm512_cmp_pd_mask(m, _mm512_setzero_pd(), _CMP_GT_OQ);
    *na = _mm512_maskz_mov_pd(ok, _mm512_mask_blend_pd(gt, q, one));
    *nb = _mm512_maskz_mov_pd(ok, _mm512_mask_blend_pd(gt, one, q));
}

/* S_val, eight lanes. */
__attribute__((target("avx512f"))) static inline __m512d S_val8(__m512d al, __m512d be, __m512d qx, __m512d px)
{
    return _mm512_max_pd(_mm512_sub_pd(_mm512_mul_pd(al, qx), _mm512_mul_pd(be, px)), _mm512_setzero_pd());
}

/* The mask of the four pairs (eight lanes) of places whose bits are set
 * among the low four of m: each bit twice. */
static inline __mmask8 S_pairs4(unsigned m)
{
    m &= 15u;
    m = (m | m << 2) & 0x33u;
    m = (m | m << 1) & 0x55u;
    return (__mmask8)(m | m << 1);
}

/* The first (S_even8) and second (S_odd8) halves of the pairs of eight
 * places, four in lo and four in hi. */
__attribute__((target("avx512f"))) static inline __m512d S_even8(__m512d lo, __m512d hi)
{
    return _mm512_permutex2var_pd(lo, _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), hi);
}

__attribute__((target("avx512f"))) static inline __m512d S_odd8(__m512d lo, __m512d hi)
{
    return _mm512_permutex2var_pd(lo, _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1), hi);
}

__attribute__((target("avx512f,avx512dq"))) static size_t S_accept_avx512(S_work *w, size_t i, size_t na)
{
    const size_t nb = na / 8 * 8;
    const double *ka = w->Ka + S_AT(i, 0), *kb = w->Kb + S_AT(i, 0), *tt = w->TT + 2 * S_AT(i, 0);
    const double *mt = w->MT + S_AT(i, 0);
    const uint64_t *eta = w->eta + S_AT(i, 0);
    double *ka1 = w->Ka + S_AT(i + 1, 0), *kb1 = w->Kb + S_AT(i + 1, 0);
    const __m512d zero = _mm512_setzero_pd(), s53 = _mm512_set1_pd(S_2M53);
    const __m512i vi = _mm512_set1_epi64((long long)i), vi1 = _mm512_set1_epi64((long long)i + 1);
    for (size_t b = 0; b < nb; b += 8) {
        __mmask8 ver = _mm512_test_epi64_mask(S_LD8(w->fl + b), _mm512_set1_epi64(1));
        __m512d Ka = _mm512_loadu_pd(ka + b), Kb = _mm512_loadu_pd(kb + b);
        if (i >= 1) {
            __m512d num = _mm512_sub_pd(_mm512_mul_pd(_mm512_loadu_pd(w->WA + b), _mm512_loadu_pd(w->QJ + b)),
                                        _mm512_mul_pd(_mm512_loadu_pd(w->WB + b), _mm512_loadu_pd(w->PJ + b)));
            num = _mm512_max_pd(num, zero);
            __m512d den = _mm512_sub_pd(num, _mm512_sub_pd(_mm512_mul_pd(Ka, _mm512_loadu_pd(mt + b)), Kb));
            __m512d u = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_loadu_si512((const void *)(eta + b))), s53);
            __mmask8 acc = ver & _mm512_cmp_pd_mask(_mm512_mul_pd(u, den), num, _CMP_LT_OQ);
            SD_ST32X8(w->tau + b, _mm512_mask_mov_epi64(SD_LD32X8(w->tau + b), acc, vi));
        }
        const __m512d t0 = _mm512_loadu_pd(tt + 2 * b), t1 = _mm512_loadu_pd(tt + 2 * b + 8);
        const __m512d x0 = _mm512_loadu_pd(w->PQX + 2 * b), x1 = _mm512_loadu_pd(w->PQX + 2 * b + 8);
        __m512d px = S_even8(x0, x1), k1a, k1b;
        S_extend8(Ka, Kb, S_val8(S_even8(t0, t1), S_odd8(t0, t1), S_odd8(x0, x1), px), px,
                  &k1a, &k1b);
        _mm512_mask_storeu_pd(ka1 + b, ver, k1a);
        _mm512_mask_storeu_pd(kb1 + b, ver, k1b);
        __mmask8 stop = ver & _mm512_cmp_pd_mask(k1a, zero, _CMP_EQ_OQ);
        SD_ST32X8(w->dr + b, _mm512_mask_mov_epi64(SD_LD32X8(w->dr + b), stop, vi1));
    }
    return nb;
}

/* S_rows on places 0..8⌊na/8⌋-1: flags, offsets and the covering count as
 * vector passes, the row words (p and q of X_{i+1}; Σq with the counts)
 * fetched by scalar loads between them (sims/verifiers/sd_token.h: a gather is
 * slower here);
 * *nl: the places listed.  Returns how many places it did. */
__attribute__((target("avx512f,avx512dq"))) static size_t S_rows_avx512(const S_plan *pl, S_work *w, size_t i, size_t na,
                                                                         size_t maxF, int count, size_t *nl, int wide)
{
    const S_layout *l = &pl->lay;
    const size_t nb = na / 8 * 8;
    const char *slab = pl->slab;
    const __m512i vi = _mm512_set1_epi64((long long)i), vim1 = _mm512_set1_epi64((long long)i - 1);
    const __m512i V = _mm512_set1_epi64((long long)pl->V), stride = _mm512_set1_epi64((long long)l->stride);
    const __m512i one = _mm512_set1_epi64(1), cpq = _mm512_set1_epi64((long long)l->pq);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512d oned = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    const uint32_t *Xi = w->X + S_AT(i, 0), *Xi1 = w->X + S_AT(i + 1, 0);
    double *tt = w->TT + 2 * S_AT(i, 0), *mt = w->MT + S_AT(i, 0);
    const __m512d lev0 = _mm512_set_pd(0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0); /* (1, 0) pairs */
    size_t k = *nl, z = 0;
    for (size_t b = 0; b < nb; b += 8) {
        __m512i n = SD_LD32X8(w->n + b), dr = SD_LD32X8(w->dr + b), nf = SD_LD32X8(w->nf + b);
        __mmask8 ver = _mm512_cmplt_epu64_mask(vi, dr);
        S_ST8(w->fl + b, ver);
        __m512i row = _mm512_add_epi64(_mm512_mul_epu32(_mm512_add_epi64(n, vim1), V), SD_LD32X8(Xi + b));
        __m512i off = _mm512_maskz_mov_epi64(ver, _mm512_mul_epu32(row, stride));
        __m512i x1 = _mm512_maskz_mov_epi64(ver, SD_LD32X8(Xi1 + b));
        _mm512_storeu_si512((void *)(w->off + b), off);
        _mm512_storeu_si512((void *)(w->ip + b), _mm512_add_epi64(_mm512_add_epi64(off, cpq), _mm512_slli_epi64(x1, 4)));
        _mm512_mask_storeu_pd(tt + 2 * b, S_pairs4(ver), lev0);
        _mm512_mask_storeu_pd(tt + 2 * b + 8, S_pairs4((unsigned)ver >> 4), lev0);
        if (count) { /* h's weight for level 0 (S_times(K_i, (1, 0))) */
            __m512d Ka = _mm512_loadu_pd(w->Ka + S_AT(i, b));
            _mm512_storeu_pd(w->WA + b, _mm512_mul_pd(Ka, oned));
            _mm512_storeu_pd(w->WB + b, _mm512_add_pd(_mm512_mul_pd(Ka, zero), _mm512_loadu_pd(w->Kb + S_AT(i, b))));
        }
        __m512i c = _mm512_setzero_si512(), nj = _mm512_add_epi64(n, vi);
        for (size_t f = 0; f < maxF; f++) {
            __mmask8 cf = _mm512_cmpgt_epu64_mask(nf, _mm512_set1_epi64((long long)f)) &
                          _mm512_cmpge_epu64_mask(SD_LD32X8(w->fe + S_AT(f, b)), nj);
            c = _mm512_mask_add_epi64(c, cf, c, one);
        }
        SD_ST32X8(w->a0 + b, _mm512_sub_epi64(nf, c));
        __mmask8 has = ver & _mm512_cmpneq_epi64_mask(c, _mm512_setzero_si512());
        __m256i pl32 = _mm512_cvtepi64_epi32(_mm512_add_epi64(lane, _mm512_set1_epi64((long long)b)));
        _mm512_mask_compressstoreu_epi32(w->fls + k, (__mmask16)has, _mm512_castsi256_si512(pl32));
        k += (size_t)__builtin_popcount(has);
        const __mmask8 bare = ver & (__mmask8)~has;
        _mm512_mask_compressstoreu_epi32(w->nfl + z, (__mmask16)bare, _mm512_castsi256_si512(pl32));
        z += (size_t)__builtin_popcount(bare);
    }
    /* the row words p and q of X_{i+1} (row 0 where not verifying) */
    const uint64_t *ip = w->ip;
    const size_t *ofs = w->off;
    const double *wa = w->WA, *wb = w->WB;
    double *pqx = w->PQX, *qj = w->QJ, *pj = w->PJ;
    for (size_t b = 0; b < nb; b++)
        memcpy(pqx + 2 * b, slab + ip[b], 2 * sizeof(double));
    if (count) /* h's counts at level 0 and their mass Σq (read only by the
                * acceptance) where no frame covers: S_frames makes both where
                * frames cover */
        for (size_t t = 0; t < z; t++) {
            const size_t b = w->nfl[t];
            const S_row r = S_row_off(pl, ofs[b]);
            const size_t j = S_count(pl, &r, (S_shape){wa[b], wb[b]}, wide);
            qj[b] = r.Q[j];
            pj[b] = r.P[j];
            mt[b] = r.Q[pl->V];
        }
    *nl = k;
    return nb;
}

/* The 64-bit word at p + o. */
static inline uint64_t S_word(const unsigned char *p, uint64_t o)
{
    uint64_t v;
    memcpy(&v, p + o, sizeof v);
    return v;
}

/* Eight lanes of 64-bit words at base + off[l] (byte offsets), fetched
 * by scalar loads (sd_fetch64's reason: a gather is slower here), the
 * offsets taken out and the words put in by lane moves: no arrays on the
 * stack, whose vector moves the compiler may make aligned ones, which
 * AddressSanitizer's fake frames (detect_stack_use_after_return) do not
 * always align. */
__attribute__((target("avx512f"))) static inline __m512i S_fetch8(const void *base, __m512i off)
{
    const unsigned char *p = base;
    const __m256i lo = _mm512_castsi512_si256(off), hi = _mm512_extracti64x4_epi64(off, 1);
    const __m128i q0 = _mm256_castsi256_si128(lo), q1 = _mm256_extracti128_si256(lo, 1);
    const __m128i q2 = _mm256_castsi256_si128(hi), q3 = _mm256_extracti128_si256(hi, 1);
    return _mm512_set_epi64(
        (long long)S_word(p, (uint64_t)_mm_extract_epi64(q3, 1)), (long long)S_word(p, (uint64_t)_mm_cvtsi128_si64(q3)),
        (long long)S_word(p, (uint64_t)_mm_extract_epi64(q2, 1)), (long long)S_word(p, (uint64_t)_mm_cvtsi128_si64(q2)),
        (long long)S_word(p, (uint64_t)_mm_extract_epi64(q1, 1)), (long long)S_word(p, (uint64_t)_mm_cvtsi128_si64(q1)),
        (long long)S_word(p, (uint64_t)_mm_extract_epi64(q0, 1)), (long long)S_word(p, (uint64_t)_mm_cvtsi128_si64(q0)));
}

/* S_draft on places 0..8⌊na/8⌋-1: the alias entries' indices as one vector
 * pass, the entries fetched by scalar loads, the alias test as another. */
__attribute__((target("avx512f,avx512dq"))) static size_t S_draft_avx512(const S_plan *pl, S_work *w, size_t i, size_t na)
{
    const size_t nb = na / 8 * 8;
    const unsigned lgK = pl->lgK;
    const __m512i vim1 = _mm512_set1_epi64((long long)i - 1), vi = _mm512_set1_epi64((long long)i);
    const __m512i V = _mm512_set1_epi64((long long)pl->V), T1 = _mm512_set1_epi64((long long)pl->T + 1);
    const __m128i c_sh = _mm_cvtsi32_si128((int)(53u - lgK)), c_lg = _mm_cvtsi32_si128((int)lgK);
    const __m512i cm = _mm512_set1_epi64((long long)(((uint64_t)1 << (53u - lgK)) - 1));
    const __m512i km = _mm512_set1_epi64((long long)(((uint64_t)1 << lgK) - 1));
    const uint32_t *Xi = w->X + S_AT(i, 0);
    uint32_t *Xi1 = w->X + S_AT(i + 1, 0);
    for (size_t b = 0; b < nb; b += 8) {
        __m512i n = SD_LD32X8(w->n + b);
        __mmask8 dm = _mm512_cmplt_epu64_mask(vi, SD_LD32X8(w->G + b));
        __m512i row = _mm512_add_epi64(_mm512_mul_epu32(_mm512_add_epi64(n, vim1), V), SD_LD32X8(Xi + b));
        __m512i U = _mm512_loadu_si512((const void *)(w->ue + b)), k = _mm512_srl_epi64(U, c_sh);
        __m512i e = S_fetch8(pl->ap, _mm512_slli_epi64(_mm512_maskz_mov_epi64(dm, _mm512_add_epi64(_mm512_sll_epi64(row, c_lg), k)), 3));
        __mmask8 keep = _mm512_cmplt_epu64_mask(_mm512_and_si512(U, cm), _mm512_srl_epi64(e, c_lg));
        __m512i x = _mm512_mask_blend_epi64(keep, _mm512_and_si512(e, km), k);
        _mm512_mask_cvtepi64_storeu_epi32(Xi1 + b, dm, x);
        __m512i at_tok = _mm512_add_epi64(_mm512_mul_epu32(SD_LD32X8(w->ts + b), T1), _mm512_add_epi64(n, vi));
        _mm512_mask_i64scatter_epi64(w->tok, dm, at_tok, x, 8);
    }
    return nb;
}

__attribute__((target("avx512f"))) static inline __m512d S_fetch8_pd(const void *base, __m512i off)
{
    return _mm512_castsi512_pd(S_fetch8(base, off));
}

/* S_last_weight on places 0..8⌊na/8⌋-1 (also keeping p_τ and the top
 * level at τ, KT and TT, for the new frame). */
__attribute__((target("avx512f,avx512dq"))) static size_t S_last_weight_avx512(const S_plan *pl, S_work *w, size_t na)
{
    const size_t nb = na / 8 * 8;
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), Sv = _mm512_set1_epi64((long long)w->S);
    const __m512i T = _mm512_set1_epi64((long long)pl->T), V = _mm512_set1_epi64((long long)pl->V);
    const __m512i stride = _mm512_set1_epi64((long long)pl->lay.stride), one = _mm512_set1_epi64(1);
    const __m512d s53 = _mm512_set1_pd(S_2M53);
    for (size_t b = 0; b < nb; b += 8) {
        __m512i n = SD_LD32X8(w->n + b), G = SD_LD32X8(w->G + b), dr = SD_LD32X8(w->dr + b);
        __m512i at = _mm512_slli_epi64(_mm512_add_epi64(_mm512_mul_epu32(G, Sv), _mm512_add_epi64(lane, _mm512_set1_epi64((long long)b))), 3);
        __m512d pG = _mm512_div_pd(S_fetch8_pd(w->Ka, at), S_fetch8_pd(w->Kb, at));
        __m512d u = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_loadu_si512((const void *)(w->ue + b))), s53);
        __mmask8 full = _mm512_cmpeq_epi64_mask(dr, G) & _mm512_cmp_pd_mask(u, pG, _CMP_LT_OQ);
        __m512i tau = _mm512_mask_blend_epi64(full, SD_LD32X8(w->tau + b), G);
        __mmask8 bonus = _mm512_cmpeq_epi64_mask(tau, G);
        __mmask8 go = (__mmask8)~(bonus & _mm512_cmpgt_epu64_mask(_mm512_add_epi64(n, G), T));
        SD_ST32X8(w->tau + b, tau);
        SD_ST32X8(w->em + b, _mm512_mask_add_epi64(tau, go, tau, one));
        S_ST8(w->cv + b, go);
        __m512i t8 = _mm512_slli_epi64(_mm512_add_epi64(_mm512_mul_epu32(tau, Sv), _mm512_add_epi64(lane, _mm512_set1_epi64((long long)b))), 3);
        __m512d ka = S_fetch8_pd(w->Ka, t8), kb = S_fetch8_pd(w->Kb, t8);
        __m512d ta = _mm512_mask_blend_pd(bonus, S_fetch8_pd(w->TT, _mm512_add_epi64(t8, t8)), _mm512_set1_pd(1.0)); /* D_L = q at G */
        __m512d tb = _mm512_maskz_mov_pd((__mmask8)~bonus, S_fetch8_pd(w->TT + 1, _mm512_add_epi64(t8, t8)));
        __m512i xt = _mm512_and_si512(S_fetch8(w->X, _mm512_srli_epi64(t8, 1)), _mm512_set1_epi64(0xffffffff));
        __m512i row = _mm512_add_epi64(_mm512_mul_epu32(_mm512_sub_epi64(_mm512_add_epi64(n, tau), one), V), xt);
        _mm512_storeu_si512((void *)(w->off + b), _mm512_maskz_mov_epi64(go, _mm512_mul_epu32(row, stride)));
        _mm512_storeu_pd(w->WA + b, _mm512_mask_blend_pd(bonus, _mm512_mul_pd(ka, ta), ta));
        _mm512_storeu_pd(w->WB + b, _mm512_mask_blend_pd(bonus, _mm512_add_pd(_mm512_mul_pd(ka, tb), kb), tb));
        _mm512_storeu_pd(w->KTa + b, ka);
        _mm512_storeu_pd(w->KTb + b, kb);
        _mm512_storeu_pd(w->TTa + b, ta);
        _mm512_storeu_pd(w->TTb + b, tb);
    }
    return nb;
}

/* S_last_draw on places 0..8⌊na/8⌋-1 of rows longer than 8 tokens (shorter
 * ones: none, the scalar pass draws by one comparison): the search as
 * vector passes with the prefix sums fetched between them, its lgK turns
 * for every lane; places whose weight has zero mass (rounding) are done by
 * the scalar code. */
__attribute__((target("avx512f,avx512dq"))) static size_t S_last_draw_avx512(const S_plan *pl, S_work *w, size_t na,
                                                                              int wide)
{
    const S_layout *l = &pl->lay;
    const size_t nb = na / 8 * 8;
    const char *slab = pl->slab;
    const __m512d zero = _mm512_setzero_pd(), s53 = _mm512_set1_pd(S_2M53);
    const __m512i cQ = _mm512_set1_epi64((long long)l->Q), cP = _mm512_set1_epi64((long long)l->P);
    const __m512i cord = _mm512_set1_epi64((long long)l->ord), cpq = _mm512_set1_epi64((long long)l->pq);
    const __m512i one = _mm512_set1_epi64(1), T1 = _mm512_set1_epi64((long long)pl->T + 1);
    if (pl->V <= 8)
        return 0;
    {
        const size_t *ofs = w->off;
        const double *wa = w->WA, *wb = w->WB;
        double *qj = w->QJ, *pj = w->PJ;
        uint32_t *jj = w->jj;
        for (size_t b = 0; b < nb; b++) { /* S_counts at every place (row 0 where no position) */
            const S_row r = S_row_off(pl, ofs[b]);
            const size_t j = S_count(pl, &r, (S_shape){wa[b], wb[b]}, 1);
            jj[b] = (uint32_t)j;
            qj[b] = r.Q[j];
            pj[b] = r.P[j];
        }
    }
    for (size_t b = 0; b < nb; b += 8) {
        __mmask8 go = _mm512_test_epi64_mask(S_LD8(w->cv + b), one);
        __m512d wa = _mm512_loadu_pd(w->WA + b), wb = _mm512_loadu_pd(w->WB + b);
        __m512d m = _mm512_sub_pd(_mm512_mul_pd(wa, _mm512_loadu_pd(w->QJ + b)), _mm512_mul_pd(wb, _mm512_loadu_pd(w->PJ + b)));
        m = _mm512_max_pd(m, zero);
        __mmask8 ok = go & _mm512_cmp_pd_mask(m, zero, _CMP_GT_OQ);
        __m512d target = _mm512_mul_pd(_mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_loadu_si512((const void *)(w->uo + b))), s53), m);
        __m512i off = _mm512_maskz_loadu_epi64(ok, (const void *)(w->off + b)); /* row 0 where not drawn */
        __m512i oQ = _mm512_add_epi64(off, cQ), oP = _mm512_add_epi64(off, cP);
        __m512i base = _mm512_setzero_si512(), len = _mm512_maskz_mov_epi64(ok, SD_LD32X8(w->jj + b));
        for (unsigned s = 0; s < pl->lgK; s++) {
            __m512i half = _mm512_srli_epi64(len, 1), a8 = _mm512_slli_epi64(_mm512_add_epi64(base, half), 3);
            __m512d W = _mm512_sub_pd(_mm512_mul_pd(wa, S_fetch8_pd(slab, _mm512_add_epi64(oQ, a8))),
                                      _mm512_mul_pd(wb, S_fetch8_pd(slab, _mm512_add_epi64(oP, a8))));
            base = _mm512_mask_add_epi64(base, _mm512_cmp_pd_mask(W, target, _CMP_LE_OQ), base, half);
            len = _mm512_sub_epi64(len, half);
        }
        __m512i a8 = _mm512_slli_epi64(_mm512_add_epi64(base, one), 3);
        __m512d W = _mm512_sub_pd(_mm512_mul_pd(wa, S_fetch8_pd(slab, _mm512_add_epi64(oQ, a8))),
                                  _mm512_mul_pd(wb, S_fetch8_pd(slab, _mm512_add_epi64(oP, a8))));
        /* places not drawn read ord[0] of row 0 (their base may be 1, past the row's tokens at V = 1) */
        base = _mm512_maskz_mov_epi64(ok, _mm512_mask_add_epi64(base, _mm512_cmp_pd_mask(W, target, _CMP_LE_OQ), base, one));
        __m512i y = _mm512_and_si512(S_fetch8(slab, _mm512_add_epi64(_mm512_add_epi64(off, cord), _mm512_slli_epi64(base, 2))),
                                     _mm512_set1_epi64(0xffffffff));
        __m512i opq = _mm512_add_epi64(_mm512_add_epi64(off, cpq), _mm512_slli_epi64(y, 4));
        _mm512_mask_cvtepi64_storeu_epi32(w->Y + b, ok, y);
        _mm512_mask_storeu_pd(w->PY + b, ok, S_fetch8_pd(slab, opq));
        _mm512_mask_storeu_pd(w->QY + b, ok, S_fetch8_pd(slab, _mm512_add_epi64(opq, _mm512_set1_epi64(8))));
        __m512i at = _mm512_add_epi64(_mm512_mul_epu32(SD_LD32X8(w->ts + b), T1), _mm512_add_epi64(SD_LD32X8(w->n + b), SD_LD32X8(w->tau + b)));
        _mm512_mask_i64scatter_epi64(w->tok, ok, at, y, 8);
        for (__mmask8 fb = go & (__mmask8)~ok; fb; fb &= (__mmask8)(fb - 1))
            S_last_draw1(pl, w, b + (size_t)__builtin_ctz(fb), wide);
    }
    return nb;
}

/* The new frames of S_last_frames on places 0..8⌊na/8⌋-1 (slot nf of each,
 * scattered). */
__attribute__((target("avx512f"))) static size_t S_last_new_avx512(const S_plan *pl, S_work *w, size_t na)
{
    const size_t nb = na / 8 * 8;
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), Sv = _mm512_set1_epi64((long long)w->S);
    const __m512i one = _mm512_set1_epi64(1);
    for (size_t b = 0; b < nb; b += 8) {
        __m512i nf = SD_LD32X8(w->nf + b), G = SD_LD32X8(w->G + b), tau = SD_LD32X8(w->tau + b);
        __m512d py = _mm512_loadu_pd(w->PY + b), ea, eb;
        S_extend8(_mm512_loadu_pd(w->KTa + b), _mm512_loadu_pd(w->KTb + b),
                  S_val8(_mm512_loadu_pd(w->TTa + b), _mm512_loadu_pd(w->TTb + b), _mm512_loadu_pd(w->QY + b), py), py, &ea, &eb);
        __m512i at = _mm512_add_epi64(_mm512_mul_epu32(nf, Sv), _mm512_add_epi64(lane, _mm512_set1_epi64((long long)b)));
        _mm512_i64scatter_epi32(w->fe, at, _mm512_cvtepi64_epi32(_mm512_sub_epi64(_mm512_add_epi64(SD_LD32X8(w->n + b), G), one)), 4);
        _mm512_i64scatter_pd(w->R, _mm512_add_epi64(at, at), ea, 8);
        _mm512_i64scatter_pd(w->R + 1, _mm512_add_epi64(at, at), eb, 8);
        if (!pl->broken)
            nf = _mm512_mask_add_epi64(nf, _mm512_cmplt_epu64_mask(_mm512_add_epi64(tau, one), G), nf, one);
        SD_ST32X8(w->nf + b, nf);
    }
    return nb;
}

/* The round's compaction (S_group) on places 0..8⌊na/8⌋-1: the places
 * whose trial goes on move to places keep.. (trial, position, last token;
 * then frame slot by frame slot, f < nfmax) as compressions (every store of
 * eight lanes lands on places already read) and begin their next iteration
 * (S_begin).  Returns the places kept; *maxG, *maxF as there. */
__attribute__((target("avx512f"))) static size_t S_compact_avx512(const S_plan *pl, S_work *w, size_t na, size_t L,
                                                                   int first, size_t nfmax, size_t *maxG, size_t *maxF)
{
    const size_t nb = na / 8 * 8;
    const __m512i Lv = _mm512_set1_epi64((long long)L), T1 = _mm512_set1_epi64((long long)pl->T + 1);
    const __m512i gam = _mm512_set1_epi64((long long)pl->gamma);
    const __m512d oned = _mm512_set1_pd(1.0);
    __m512i mg = _mm512_setzero_si512(), mf = _mm512_setzero_si512();
    size_t keep = 0;
    for (size_t b = 0; b < nb; b += 8) {
        __m512i nn = _mm512_add_epi64(SD_LD32X8(w->n + b), SD_LD32X8(w->em + b)), nf = SD_LD32X8(w->nf + b);
        __mmask8 km = first ? 0 : _mm512_cmple_epu64_mask(nn, Lv);
        w->mk[b / 8] = km;
        SD_ST32X8(w->ts + keep, _mm512_maskz_compress_epi64(km, SD_LD32X8(w->ts + b)));
        SD_ST32X8(w->nf + keep, _mm512_maskz_compress_epi64(km, nf));
        /* S_begin */
        __m512i nk = _mm512_maskz_compress_epi64(km, nn), G = _mm512_sub_epi64(T1, nk);
        if (pl->gamma)
            G = _mm512_min_epu64(G, gam);
        const __mmask8 lo = (__mmask8)((1u << __builtin_popcount(km)) - 1u);
        mg = _mm512_mask_max_epu64(mg, lo, mg, G);
        mf = _mm512_mask_max_epu64(mf, km, mf, nf);
        SD_ST32X8(w->n + keep, nk);
        SD_ST32X8(w->X + keep, _mm512_maskz_compress_epi64(km, SD_LD32X8(w->Y + b)));
        _mm512_storeu_pd(w->Ka + keep, oned);
        _mm512_storeu_pd(w->Kb + keep, oned);
        SD_ST32X8(w->G + keep, G);
        SD_ST32X8(w->dr + keep, G);
        SD_ST32X8(w->tau + keep, _mm512_setzero_si512());
        keep += (size_t)__builtin_popcount(km);
    }
    for (size_t f = 0; f < nfmax; f++) {
        uint32_t *fe = w->fe + S_AT(f, 0);
        double *r = w->R + 2 * S_AT(f, 0);
        size_t k = 0;
        for (size_t b = 0; b < nb; b += 8) {
            const __mmask8 km = w->mk[b / 8];
            SD_ST32X8(fe + k, _mm512_maskz_compress_epi64(km, SD_LD32X8(fe + b)));
            /* the ratios' pairs, four places a vector: both read before either store */
            const __m512d lo = _mm512_loadu_pd(r + 2 * b), hi = _mm512_loadu_pd(r + 2 * b + 8);
            const size_t klo = k + (size_t)__builtin_popcount(km & 15u);
            _mm512_storeu_pd(r + 2 * k, _mm512_maskz_compress_pd(S_pairs4(km), lo));
            _mm512_storeu_pd(r + 2 * klo, _mm512_maskz_compress_pd(S_pairs4((unsigned)km >> 4), hi));
            k += (size_t)__builtin_popcount(km);
        }
    }
    *maxG = (size_t)_mm512_reduce_max_epu64(mg);
    *maxF = (size_t)_mm512_reduce_max_epu64(mf);
    return keep;
}

/* S_last_frames on places 0..8⌊na/8⌋-1 (frames f < nfmax): the ratios and
 * input levels at depth τ fetched, the kept frames scattered to their
 * slots (slot k <= f: frame f's entries are read before any store to them). */
__attribute__((target("avx512f"))) static size_t S_last_frames_avx512(S_work *w, size_t na, size_t nfmax)
{
    const size_t nb = na / 8 * 8, S = w->S, cap = w->cap;
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), one = _mm512_set1_epi64(1);
    const __m512i Sv = _mm512_set1_epi64((long long)S), capS = _mm512_set1_epi64((long long)(cap * S));
    for (size_t b = 0; b < nb; b += 8) {
        __m512i tau = SD_LD32X8(w->tau + b), nf = SD_LD32X8(w->nf + b), pl_ = _mm512_add_epi64(lane, _mm512_set1_epi64((long long)b));
        __m512i next = _mm512_add_epi64(_mm512_add_epi64(SD_LD32X8(w->n + b), tau), one);
        __m512d py = _mm512_loadu_pd(w->PY + b), qy = _mm512_loadu_pd(w->QY + b);
        __m512i at = _mm512_slli_epi64(_mm512_add_epi64(_mm512_mul_epu32(tau, capS), pl_), 3); /* row τ cap, in bytes */
        __m512i k = _mm512_setzero_si512();
        for (size_t f = 0; f < nfmax; f++) {
            __m512i fe = SD_LD32X8(w->fe + S_AT(f, b));
            __mmask8 kp = _mm512_cmpgt_epu64_mask(nf, _mm512_set1_epi64((long long)f)) & _mm512_cmpge_epu64_mask(fe, next);
            if (!kp)
                continue; /* no place keeps frame f */
            __m512i a8 = _mm512_add_epi64(at, _mm512_set1_epi64((long long)(f * S * 8)));
            __m512d ea, eb;
            const __m512i p16 = _mm512_add_epi64(a8, a8); /* byte offsets of the pairs */
            S_extend8(S_fetch8_pd(w->R, p16), S_fetch8_pd(w->R + 1, p16),
                      S_val8(S_fetch8_pd(w->L, p16), S_fetch8_pd(w->L + 1, p16), qy, py), py, &ea, &eb);
            __m512i to = _mm512_add_epi64(_mm512_mul_epu32(k, Sv), pl_);
            _mm512_mask_i64scatter_epi32(w->fe, kp, to, _mm512_cvtepi64_epi32(fe), 4);
            _mm512_mask_i64scatter_pd(w->R, kp, _mm512_add_epi64(to, to), ea, 8);
            _mm512_mask_i64scatter_pd(w->R + 1, kp, _mm512_add_epi64(to, to), eb, 8);
            k = _mm512_mask_add_epi64(k, kp, k, one);
        }
        SD_ST32X8(w->nf + b, k);
    }
    return nb;
}
#undef S_LD8
#undef S_ST8
#endif

/* A pass's vector part where `wide` (the AVX-512 instance): the number of
 * places it did, 0 where there is none; the scalar code does the rest. */
#if SD_KERNEL_X86
#define S_VEC(call) (wide ? (call) : 0)
#else
#define S_VEC(call) 0
#endif

/* Depth i of the round at places 0..na-1 (maxF: the most frames at a
 * place): the levels at position n+i after X^i (frames oldest first, each
 * applied to the level the earlier ones made: S_frames' steps) and, where
 * depth i is verified, h_i's coin, the frames' ratios after X^{i+1} and
 * p_{i+1}.  Passes over the places, the table reads (row words, counts)
 * apart from the arithmetic, which runs eight places at a time in the
 * AVX-512 instance. */
static inline __attribute__((always_inline)) void S_depth(const S_plan *pl, S_work *w, size_t i, size_t na,
                                                          size_t maxF, int wide)
{
    const int count = i >= 1; /* h_i's counts, at the levels' top */
    size_t nl = 0;
    const size_t b0 = S_VEC(S_rows_avx512(pl, w, i, na, maxF, count, &nl, wide));
    nl = S_rows_scalar(pl, w, i, b0, na, maxF, count, nl, wide);
    S_frames(pl, w, i, nl, count, wide);
    S_accept_scalar(w, i, S_VEC(S_accept_avx512(w, i, na)), na);
}

/* Trials g0..g0+S-1 in lockstep: in round k every trial still running does
 * its k-th iteration, drafting step i of all of them before step i + 1,
 * then depth i of all of them before depth i + 1, so that the processor
 * overlaps the trials' serial chains (of alias lookups, then of levels and
 * ratios).  Uniforms (sd_rngbuf_trials_at, across trials): block 0 draws
 * x_0 (even uniform); iteration k (0-based) uses blocks b_k = 1 + k
 * (Gmax + 1) onwards: block b_k + i draws X_{i+1} (even) and η_i (odd;
 * unused at i = 0), block b_k + Gmax η_G (even) and the last token (odd),
 * drawn after the depths.  No uniform is used twice.  The places of the
 * trials still running are compacted after each round (their n, frames,
 * last token and trial move with them); counts are kept by trial. */
static inline __attribute__((always_inline)) void S_group(const S_plan *pl, S_work *w, uint64_t seed, uint64_t g0,
                                                          size_t S, const sd_observe *obs, int wide)
{
    const size_t T = pl->T, L = obs->L ? obs->L : T, cap = w->cap;
    sd_rngbuf_trials(seed, 0, g0, S, w->ue, w->uo);
    size_t maxG = 0, maxF = 0;
    for (size_t s = 0; s < S; s++) {
        const uint32_t x0 = (uint32_t)sd_token_alias_draw(pl->init, pl->lgK, w->ue[s]);
        w->tok[s * (T + 1)] = x0;
        w->ts[s] = (uint32_t)s;
        w->nf[s] = w->rej[s] = w->its[s] = 0;
        w->s1[s] = w->s2[s] = 0;
        const size_t G = S_begin(pl, w, s, 1, x0);
        maxG = G > maxG ? G : maxG;
    }
    size_t na = L >= 1 ? S : 0;
    for (uint64_t k = 0; na > 0; k++) {
        const uint64_t base = 1 + k * (cap + 1);
        for (size_t i = 0; i < maxG; i++) { /* the drafts X_{i+1} ~ p (alias lookups) */
            sd_rngbuf_trials_at(seed, base + i, g0, w->ts, na, w->ue, w->eta + S_AT(i, 0)); /* X_{i+1}, η_i */
            S_draft_scalar(pl, w, i, S_VEC(S_draft_avx512(pl, w, i, na)), na);
        }
        for (size_t i = 0; i < maxG; i++)
            S_depth(pl, w, i, na, maxF, wide);
        sd_rngbuf_trials_at(seed, base + cap, g0, w->ts, na, w->ue, w->uo); /* η_G, the last token */
        const size_t b0 = S_VEC(S_last_weight_avx512(pl, w, na));
        S_last_weight_scalar(pl, w, b0, na);
        S_last_draw_scalar(pl, w, S_VEC(S_last_draw_avx512(pl, w, na, wide)), na, wide);
        S_last_frames_scalar(w, S_VEC(S_last_frames_avx512(w, na, maxF)), na);
        S_last_new_scalar(pl, w, S_VEC(S_last_new_avx512(pl, w, na)), na);
        size_t nfmax = 0;
        for (size_t b = 0; b < na; b++) { /* the counts, by trial */
            const size_t s = w->ts[b], tau = w->tau[b];
            w->rej[s] += tau < w->G[b];
            w->its[s]++;
            w->s1[s] += tau;
            w->s2[s] += (uint64_t)tau * tau;
            if (obs->hist)
                obs->hist[tau] += 1.0;
            nfmax = w->nf[b] > nfmax ? w->nf[b] : nfmax;
        }
        size_t keep = 0, b = 0;
        maxG = maxF = 0;
#if SD_KERNEL_X86
        if (wide) {
            keep = S_compact_avx512(pl, w, na, L, obs->first_iteration, nfmax, &maxG, &maxF);
            b = na / 8 * 8;
        }
#endif
        for (; b < na; b++) {
            const size_t s = w->ts[b], n = w->n[b] + w->em[b], nf = w->nf[b];
            const uint32_t y = w->Y[b];
            if (obs->first_iteration || n > L)
                continue;
            w->ts[keep] = (uint32_t)s;
            w->nf[keep] = (uint32_t)nf;
            for (size_t f = 0; f < nf; f++) {
                w->fe[S_AT(f, keep)] = w->fe[S_AT(f, b)];
                const sd_greedy_ratio r = S_ratio_at(w->R, S_AT(f, b));
                S_put(w->R, S_AT(f, keep), r.a, r.b);
            }
            const size_t G = S_begin(pl, w, keep++, n, y);
            maxG = G > maxG ? G : maxG;
            maxF = nf > maxF ? nf : maxF;
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

#if SD_KERNEL_X86
/* The same code compiled for AVX-512 (the counts as one comparison). */
__attribute__((target("avx512f,avx512dq"))) static void S_trials_avx512(const S_plan *pl, S_work *w, uint64_t seed, uint64_t lo,
                                                               uint64_t hi, const sd_observe *obs)
{
    S_trials(pl, w, seed, lo, hi, obs, 1);
}

/* And for rows of at most 8 tokens (wide = 2: every count and draw one
 * comparison, without the run-time choice of the row's method). */
__attribute__((target("avx512f,avx512dq"))) static void S_trials_avx512_v8(const S_plan *pl, S_work *w, uint64_t seed,
                                                                            uint64_t lo, uint64_t hi, const sd_observe *obs)
{
    S_trials(pl, w, seed, lo, hi, obs, 2);
}
#endif

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi, const sd_observe *obs)
{
#if SD_KERNEL_X86
    if (sd_rngbuf_avx512dq()) {
        if (((const S_plan *)plan)->V <= 8)
            S_trials_avx512_v8(plan, work, seed, lo, hi, obs);
        else
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
    size_t V = c->V, T = c->T, nrows = T * V, gmax = sd_draft_len_max(par->gamma, T);
    if (!sd_greedy_fits(gmax, V))
        return SD_EUSAGE; /* the step refuses it with its own message */
    unsigned lgK = sd_kernel_lg_columns(V);
    const size_t K = (size_t)1 << lgK, Vpad = (V + 7) / 8 * 8;
    if (max_bytes == 0)
        max_bytes = (size_t)1 << 30; /* the engine's default (sims/engine/sd_sim.h) */
    S_layout l;
    l.rs = 0;
    l.Q = l.rs + Vpad * sizeof(double);
    l.P = l.Q + (V + 1) * sizeof(double);
    l.pq = l.P + (V + 1) * sizeof(double);
    l.ord = l.pq + 2 * V * sizeof(double);
    l.stride = (l.ord + V * sizeof(uint32_t) + S_LINE - 1) / S_LINE * S_LINE; /* rows on cache lines */
    const size_t per = l.stride + K * sizeof(uint64_t); /* a row's bytes, its alias table of p included */
    if (nrows && (max_bytes < K * sizeof(uint64_t) || per > (max_bytes - K * sizeof(uint64_t)) / nrows))
        return sd_error_set(err, SD_ETOOBIG, "greedy-block kernel: tables of %zu rows x %zu bytes exceed %zu bytes",
                            nrows, per, max_bytes);
    S_plan *pl = calloc(1, sizeof *pl);
    sd_block_key *key = malloc(V * sizeof *key);
    if (pl) {
        /* + S_LINE: the vector code loads eight bytes for a 4-byte ord entry */
        pl->slab = aligned_alloc(S_LINE, nrows * l.stride + S_LINE);
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
    return sd_kernel_plan_done(rc, pl, S_plan_free, plan);
}

SD_KERNEL_WORK_FREE

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *pl = plan;
    const size_t g = pl->gmax;
    S_work *w = calloc(1, sizeof *w);
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "greedy-block kernel: out of memory");
    /* S_GROUP trials, fewer when their ratios and levels, or their tokens,
     * would exceed S_GROUP_BYTES */
    size_t per = 4 * (g + 1) * g * sizeof(double), S = S_GROUP_BYTES / per,
           St = S_GROUP_BYTES / ((pl->T + 1) * sizeof *w->tok);
    S = St < S ? St : S;
    S = w->S = S < 1 ? 1 : S > S_GROUP ? S_GROUP : S;
    w->cap = g;
    /* zeroed: the vector passes read (and discard) entries of places and
     * frame slots not in use */
    const size_t R = (g + 1) * g * S, R2 = (g + 2) * g * S;
    struct {
        void **p;
        size_t n, size;
    } a[] = {
        {(void **)&w->tok, S * (pl->T + 1), sizeof *w->tok}, {(void **)&w->rej, S, sizeof *w->rej},
        {(void **)&w->its, S, sizeof *w->its},              {(void **)&w->s1, S, sizeof *w->s1},
        {(void **)&w->s2, S, sizeof *w->s2},                {(void **)&w->ts, S, sizeof *w->ts},
        {(void **)&w->n, S, sizeof *w->n},                  {(void **)&w->nf, S, sizeof *w->nf},
        {(void **)&w->fe, g * S, sizeof *w->fe},            {(void **)&w->G, S, sizeof *w->G},
        {(void **)&w->dr, S, sizeof *w->dr},                {(void **)&w->tau, S, sizeof *w->tau},
        {(void **)&w->X, (g + 1) * S + 2, sizeof *w->X},        {(void **)&w->eta, g * S, sizeof *w->eta},
        {(void **)&w->Ka, (g + 1) * S, sizeof *w->Ka},      {(void **)&w->Kb, (g + 1) * S, sizeof *w->Kb},
        {(void **)&w->R, 2 * R2, sizeof *w->R},             {(void **)&w->L, 2 * R, sizeof *w->L},
        {(void **)&w->TT, 2 * (g + 1) * S, sizeof *w->TT},
        {(void **)&w->MT, (g + 1) * S, sizeof *w->MT},      {(void **)&w->off, S, sizeof *w->off},
        {(void **)&w->PQX, 2 * S, sizeof *w->PQX},
        {(void **)&w->WA, S, sizeof *w->WA},                {(void **)&w->WB, S, sizeof *w->WB},
        {(void **)&w->QJ, S, sizeof *w->QJ},                {(void **)&w->PJ, S, sizeof *w->PJ},
        {(void **)&w->fl, S, sizeof *w->fl},                {(void **)&w->cv, S, sizeof *w->cv},
        {(void **)&w->lst, S, sizeof *w->lst},              {(void **)&w->ue, S, sizeof *w->ue},
        {(void **)&w->uo, S, sizeof *w->uo},                {(void **)&w->jj, S, sizeof *w->jj},
        {(void **)&w->mk, S / 8 + 1, sizeof *w->mk},
        {(void **)&w->a0, S, sizeof *w->a0},                {(void **)&w->fls, S, sizeof *w->fls},
        {(void **)&w->nfl, S, sizeof *w->nfl},
        {(void **)&w->ip, S, sizeof *w->ip},
        {(void **)&w->em, S, sizeof *w->em},                {(void **)&w->Y, S, sizeof *w->Y},
        {(void **)&w->PY, S, sizeof *w->PY},                {(void **)&w->QY, S, sizeof *w->QY},
        {(void **)&w->KTa, S, sizeof *w->KTa},              {(void **)&w->KTb, S, sizeof *w->KTb},
        {(void **)&w->TTa, S, sizeof *w->TTa},              {(void **)&w->TTb, S, sizeof *w->TTb},
    };
    int bad = 0;
    size_t off = 0; /* one arena (sd_carve: no 4K aliasing between the arrays) */
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        sd_carve(NULL, &off, a[i].n * a[i].size);
    bad = !(w->arena = aligned_alloc(64, off));
    if (bad) {
        S_work_free(w);
        return sd_error_set(err, SD_ENOMEM, "greedy-block kernel: out of memory for G = %zu", g);
    }
    memset(w->arena, 0, off);
    off = 0;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        *a[i].p = sd_carve(w->arena, &off, a[i].n * a[i].size);
    *work = w;
    return SD_OK;
}

#define S_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_FIRST | SD_OBS_TOKENS)

SD_KERNEL_PAIR(sd_greedy_kernel, "greedy-sorted", S_SUPPORTS);
