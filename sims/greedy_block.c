/* greedy_block.c — greedy block verification with the distribution
 * modification (Sun et al. 2025, Appendix C, Alg. 4–6 and eq. 31;
 * it is Sun et al. 2024, Alg. 3; SPEC §2).
 *
 * One iteration (Alg. 4), target Mb = the current (possibly modified)
 * target, draft Ms = p, block X_1..X_G from position n, X^0 = x_{n-1}:
 *     p_i = p_{i-1} Mb(X_i|X^{i-1}) / Ms(X_i|X^{i-1})   (no min: p_i is the
 *           joint ratio Mb(X^i)/Ms(X^i)),
 *     h_i = Σ_x max(p_i Mb(x|X^i) - Ms(x|X^i), 0)
 *           / Σ_x max(Ms(x|X^i) - p_i Mb(x|X^i), 0)          (i < G),
 *     accept sub-block i when η_i < h_i (h_i may exceed 1), sub-block G
 *     when η_G < p_G; τ = the largest accepted i (0 if none);
 *     τ = G: Y ~ Mb(.|X^G), the bonus token (if position n+G <= T);
 *     τ < G: Y ~ max(p_τ Mb(.|X^τ) - Ms(.|X^τ), 0) normalised   (eq. 30).
 * Lemma 9: P(X^l = x^l, τ >= l) = min(Mb(x^l), Ms(x^l)), so one iteration
 * accepts Σ_l Σ_{x^l} min(p(x^l), q(x^l)) tokens on average — the
 * full-information optimum (12/9 on the toy model of Sun et al. 2025, §2).
 *
 * The output X^τ, Y alone is not distributed as Mb.  Alg. 5 therefore
 * replaces the target of the rest of the block, positions n+τ+1..n+G-1
 * (the iteration's "zone"), by (eq. 31)
 *     Mnew(x | X^τ, Y, z^{i-1}) ∝ max(Mb(X^τ Y z^{i-1} x) - Ms(X^τ Y z^{i-1} x), 0),
 * joint laws of the whole block from the iteration's start n: then
 * (X^τ, Y, Z) ~ Mb^G for Z ~ Mnew (Lemma 8), and later iterations, run
 * against Mnew, keep the law.  Dividing by the joint Ms(X^τ Y z^{i-1}),
 *     Mnew(x | .) ∝ max(r Mb(x|.) - Ms(x|.), 0),   r = Mb(prefix)/Ms(prefix)
 * the joint ratio of the path from n.  Modifications nest: the target of
 * iteration k at position j is obtained from q_j by applying, oldest first,
 * the modification of every earlier iteration f whose zone still covers j,
 * each with its own ratio r_f (computed with the target of iteration f).
 * Zones end at n_f + G_f - 1, which never decreases with f, so the covering
 * iterations are the most recent ones.  Each "frame" below is one such
 * iteration: its zone end and r_f along the emitted path.
 *
 * Ratios are kept as (log Mb-joint, log Ms-joint), so that a residual token
 * Y with p(Y) = 0 (r = ∞: Mnew is then Mb itself) and long blocks neither
 * overflow nor produce NaN; every weight max(A Mb - B Ms, 0) is formed with
 * A, B = exp(log - max) in [0,1].
 *
 * A modified row of zero mass (or an unreachable prefix, both joints 0) is
 * "dead" (all zeros): it is reached only along draft paths of target
 * probability 0, where the ratios that multiply it are 0.  Should rounding
 * make a residual of zero mass be sampled, Y comes from Mb(.|X^τ) (or q
 * when that row is dead) instead; exact arithmetic never does.
 *
 * Two other readings of eq. 31 are provided for the tests
 * (sd_block.h): the joint taken from the context after Y (Alg. 6 updates c
 * on line 5 before modifying Mb on line 6), and a per-token residual
 * [Mb(x|.) - Ms(x|.)]+; and Alg. 4 without any modification, which
 * Sun et al. 2025, App. C shows to be biased (P(x_1 x_2 = BA) = 1/3 instead of 2/9 on
 * the toy model).  `simdec check` flags all three; see tests/test_check.c. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "../src/sd_dist.h"
#include "sd_block.h"
#include "sd_iter_laws.h"

/* The largest scratch greedy-block allocates, in doubles: (G+1)·G ratio
 * pairs for a draft length G.  2^24 doubles = 128 MiB. */
#define S_MAX_DOUBLES ((size_t)1 << 24)

typedef enum { S_JOINT = 0, S_AFTER_Y = 1, S_TOKENWISE = 2, S_UNMODIFIED = 3 } S_mode;

/* r = exp(la - lb): la = log of the target joint, lb = log of the draft
 * joint, of the path since a frame's start (-inf for probability 0). */
typedef struct {
    double la, lb;
} S_ratio;

typedef struct {
    size_t e;   /* last position of the zone */
    S_ratio r;  /* along the emitted path up to the current n-1 */
} S_frame;

typedef struct {
    S_mode mode;
    size_t V, cap; /* cap: the largest draft length = the most active frames */
    size_t nf;     /* active frames, oldest first */
    S_frame *fr;   /* [cap] */
    double *D;     /* [(cap+1) V]: the targets of frames a0..nf-1 and the current one at one position */
    S_ratio *R;    /* [(cap+1) cap]: R[i cap + a] = frame a's ratio after the draft prefix X^i */
    S_ratio *K;    /* [cap+1]: the current iteration's ratio p_i after X^i */
    double *w;     /* [V] */
} S_state;

static double S_log(double x)
{
    return x > 0.0 ? log(x) : -INFINITY;
}

static S_ratio S_extend(S_ratio r, double mb, double ms)
{
    S_ratio o = {r.la + S_log(mb), r.lb + S_log(ms)};
    return o;
}

/* A = exp(la - m), B = exp(lb - m), m = max(la, lb); 0 when both joints are 0. */
static int S_scale(S_ratio r, double *A, double *B)
{
    if (r.la == -INFINITY && r.lb == -INFINITY)
        return 0;
    double m = r.la > r.lb ? r.la : r.lb;
    *A = exp(r.la - m);
    *B = exp(r.lb - m);
    return 1;
}

/* w = max(A mb - B ms, 0); returns Σ w (0 when dead). */
static double S_weights(S_ratio r, const double *mb, const double *ms, size_t V, double *w)
{
    double A, B, s = 0.0;
    if (!S_scale(r, &A, &B)) {
        for (size_t x = 0; x < V; x++)
            w[x] = 0.0;
        return 0.0;
    }
    for (size_t x = 0; x < V; x++) {
        double d = A * mb[x] - B * ms[x];
        w[x] = d > 0.0 ? d : 0.0;
        s += w[x];
    }
    return s;
}

/* The targets at position j after token y, given the frames' ratios Ri:
 * level 0 is q_j(.|y); level l+1 is level l modified by frame a0+l (eq. 31),
 * for the frames a0..nf-1 whose zones cover j.  Returns the number of
 * levels above 0; the current iteration's target is the top level. */
static size_t S_levels(S_state *st, const sd_chain *c, size_t j, size_t y, const S_ratio *Ri,
                       size_t *a0out)
{
    size_t V = st->V, a0 = 0;
    while (a0 < st->nf && st->fr[a0].e < j)
        a0++;
    const double *q = sd_chain_q(c, j, y), *p = sd_chain_p(c, j, y);
    for (size_t x = 0; x < V; x++)
        st->D[x] = q[x];
    for (size_t a = a0; a < st->nf; a++) {
        const double *in = st->D + (a - a0) * V;
        double *o = st->D + (a - a0 + 1) * V;
        double s = S_weights(Ri[a], in, p, V, o);
        if (s > 0.0)
            for (size_t x = 0; x < V; x++)
                o[x] /= s;
    }
    *a0out = a0;
    return st->nf - a0;
}

/* Samples from a target row; a dead row falls back to q (see the header). */
static size_t S_sample_row(const double *row, const double *q, size_t V, double u)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++)
        s += row[x];
    return s > 0.0 ? sd_dist_sample(row, V, s, u) : sd_dist_sample(q, V, 1.0, u);
}

/* Extends every covering frame's ratio (R row `from`) by token x at a
 * position whose levels are in st->D, into `to`. */
static void S_advance(const S_state *st, size_t a0, const S_ratio *from, S_ratio *to, size_t x,
                      double px)
{
    for (size_t a = 0; a < st->nf; a++)
        to[a] = (a >= a0 && st->mode != S_TOKENWISE)
                    ? S_extend(from[a], st->D[(a - a0) * st->V + x], px)
                    : from[a];
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    S_state *st = state;
    size_t V = c->V, G = sd_draft_len(c, par, n), cap = st->cap;
    /* Drop the frames whose zones ended before n. */
    size_t drop = 0;
    while (drop < st->nf && st->fr[drop].e < n)
        drop++;
    for (size_t a = drop; a < st->nf; a++)
        st->fr[a - drop] = st->fr[a];
    st->nf -= drop;
    for (size_t a = 0; a < st->nf; a++)
        st->R[a] = st->fr[a].r;
    st->K[0] = (S_ratio){0.0, 0.0};

    size_t tau = 0, y = prev, a0, L, drafted = G;
    for (size_t i = 0; i < G; i++) {
        size_t j = n + i;
        L = S_levels(st, c, j, y, st->R + i * cap, &a0);
        const double *top = st->D + L * V, *p = sd_chain_p(c, j, y);
        if (i >= 1) { /* h_i from the targets at X^i */
            double A = 0.0, B = 1.0, num = 0.0, den = 0.0;
            S_scale(st->K[i], &A, &B); /* K[i].lb is finite: drafts have p > 0 */
            for (size_t x = 0; x < V; x++) {
                double d = A * top[x] - B * p[x];
                if (d > 0.0)
                    num += d;
                else
                    den -= d;
            }
            if (sd_stream_uniform(rng) * den < num)
                tau = i;
        }
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        out[i] = x;
        S_advance(st, a0, st->R + i * cap, st->R + (i + 1) * cap, x, p[x]);
        st->K[i + 1] = S_extend(st->K[i], top[x], p[x]);
        y = x;
        if (st->K[i + 1].la == -INFINITY) { /* p_j = 0 for all j > i: h_j = 0 */
            drafted = i + 1;
            break;
        }
    }
    if (drafted == G && sd_stream_uniform(rng) < exp(st->K[G].la - st->K[G].lb))
        tau = G; /* η_G < p_G (Alg. 4 line 13) */

    it->accepted = tau;
    it->emitted = tau;
    if (tau == G && n + G > c->T)
        return SD_OK; /* the block ends at the horizon: no bonus position */
    /* The token after X^τ: the bonus from Mb(.|X^G), or eq. 30's residual. */
    size_t ytau = tau ? out[tau - 1] : prev, pos = n + tau;
    L = S_levels(st, c, pos, ytau, st->R + tau * cap, &a0);
    const double *top = st->D + L * V, *p = sd_chain_p(c, pos, ytau), *q = sd_chain_q(c, pos, ytau);
    double u = sd_stream_uniform(rng);
    size_t yv;
    if (tau == G) {
        yv = S_sample_row(top, q, V, u);
    } else {
        double m = S_weights(st->K[tau], top, p, V, st->w);
        yv = m > 0.0 ? sd_dist_sample(st->w, V, m, u) : S_sample_row(top, q, V, u);
        it->rejected = 1;
    }
    out[tau] = yv;
    it->emitted = tau + 1;
    /* The emitted path X^τ, Y: the frames' ratios, and this iteration's
     * frame when its zone n+τ+1..n+G-1 is not empty. */
    S_advance(st, a0, st->R + tau * cap, st->R + tau * cap, yv, p[yv]);
    for (size_t a = 0; a < st->nf; a++)
        st->fr[a].r = st->R[tau * cap + a];
    if (tau + 1 < G && st->mode != S_UNMODIFIED) {
        S_frame f = {n + G - 1, {0.0, 0.0}};
        if (st->mode == S_JOINT)
            f.r = S_extend(st->K[tau], top[yv], p[yv]);
        /* The active frames started at distinct positions in n-cap+1..n. */
        assert(st->nf < cap);
        st->fr[st->nf++] = f;
    }
    return SD_OK;
}

static void S_begin(void *state)
{
    ((S_state *)state)->nf = 0;
}

static void S_free(void *state)
{
    S_state *st = state;
    if (!st)
        return;
    free(st->fr);
    free(st->D);
    free(st->R);
    free(st->K);
    free(st->w);
    free(st);
}

static int S_alloc_mode(void **state, const sd_chain *c, const sd_params *par, S_mode mode,
                        sd_error *err)
{
    size_t cap = (par->gamma && par->gamma < c->T) ? par->gamma : c->T;
    /* (cap+1) cap ratio pairs, (cap+1) V level entries. */
    if (cap > ((size_t)1 << 16) || 2 * (cap + 1) * cap + (cap + 2) * c->V > S_MAX_DOUBLES)
        return sd_error_set(err, SD_ETOOBIG,
                            "greedy-block keeps (G+1)·G path ratios for a draft length G = %zu "
                            "(V = %zu); limit %zu doubles: give a smaller --gamma",
                            cap, c->V, S_MAX_DOUBLES);
    S_state *st = calloc(1, sizeof *st);
    if (!st)
        return sd_error_set(err, SD_ENOMEM, "greedy-block: out of memory");
    st->mode = mode;
    st->V = c->V;
    st->cap = cap;
    st->fr = malloc(cap * sizeof *st->fr);
    st->D = malloc((cap + 1) * c->V * sizeof *st->D);
    st->R = malloc((cap + 1) * cap * sizeof *st->R);
    st->K = malloc((cap + 1) * sizeof *st->K);
    st->w = malloc(c->V * sizeof *st->w);
    if (!st->fr || !st->D || !st->R || !st->K || !st->w) {
        S_free(st);
        return sd_error_set(err, SD_ENOMEM, "greedy-block: out of memory for G = %zu, V = %zu",
                            cap, c->V);
    }
    *state = st;
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return S_alloc_mode(state, c, par, S_JOINT, err);
}

static int S_alloc_after_y(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return S_alloc_mode(state, c, par, S_AFTER_Y, err);
}

static int S_alloc_unmodified(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return S_alloc_mode(state, c, par, S_UNMODIFIED, err);
}

static int S_alloc_tokenwise(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return S_alloc_mode(state, c, par, S_TOKENWISE, err);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

/* No exact law of one iteration: the modified target (Alg. 5, eq. 31)
 * carries state from one iteration to the next, so an iteration does not
 * depend on (n, x_{n-1}) alone and the DP of sims/sd_exact_gen.h does not
 * apply. */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    (void)c, (void)par, (void)n, (void)prev, (void)out;
    return sd_error_set(err, SD_EUSAGE,
                        "greedy-block: its modified target carries state across iterations "
                        "(Sun et al. 2025, Alg. 5), so no exact DP over (position, x_{n-1})");
}

const sd_verifier_type sd_verifier_greedy_block = {
    .name = "greedy-block",
    .summary = "greedy block verification with distribution modification (Sun et al. 2025, App. C, Sun et al. 2024, Alg. 3)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = S_free,
    .begin = S_begin,
    .step = S_step,
    .iteration_law = S_law,
};

const sd_verifier_type sd_verifier_greedy_block_after_y = {
    .name = "greedy-block-after-y",
    .summary = "greedy block, eq. 31 read with the joint law from after Y (test only)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc_after_y,
    .free = S_free,
    .begin = S_begin,
    .step = S_step,
};

const sd_verifier_type sd_verifier_greedy_block_tokenwise = {
    .name = "greedy-block-tokenwise",
    .summary = "greedy block, eq. 31 read per token (test only)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc_tokenwise,
    .free = S_free,
    .begin = S_begin,
    .step = S_step,
};

const sd_verifier_type sd_verifier_greedy_block_unmodified = {
    .name = "greedy-block-unmodified",
    .summary = "greedy block (Sun et al. 2025, Alg. 4) without the distribution modification (test only)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc_unmodified,
    .free = S_free,
    .begin = S_begin,
    .step = S_step,
};
