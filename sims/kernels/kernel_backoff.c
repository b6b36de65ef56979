/* kernel_backoff.c — token-level speculative decoding (Leviathan et al.
 * 2023; Yin et al. 2024, Alg. 1) and block verification (Sun et al. 2025,
 * "Block verification accelerates speculative decoding", Alg. 2, eqs. 3–5)
 * on sparse-row models (src/sd_backoff.h: an ARPA bigram target with a
 * unigram draft, or the i.i.d. problem), with the laws of sd_token_step and
 * sd_block_step and rows never built.
 *
 * Per drafted token: a draw from p (alias table, O(1)); q_a(x) by binary
 * search among the seen bigrams of a (O(log |S_a|); block verification
 * draws its block first and searches its γ pairs together,
 * sd_backoff_q_many, so their cache misses overlap); token verification's
 * residual max(q_a - p, 0) by the running sums of its seen part or a binary
 * search over the ρ order for the backed-off rest (O(log V), redrawn while
 * in S_a); block verification's m_i = Σ max(p_i q - p, 0) and its residual
 * at scale p_i from the seen bigrams plus the one rest term F(p_i c_a)
 * (O(|S_a| + log V)).  No step scans the vocabulary.
 *
 * Recursive rejection sampling (rrs: SpecInfer's multi-round sampling, Sun
 * et al. 2023, "SpecTr: fast speculative decoding via optimal transport",
 * Alg. 3 and B.3) on a k-draft tree: the residuals q^1 = q,
 * q^{m+1} = [q^m - p]+ normalised are, by induction,
 *     q^m = max(0, q - σ_m p) / R(σ_m),   σ_1 = 0,  σ_{m+1} = σ_m + R(σ_m),
 * R(σ) = Σ_x max(0, q(x) - σ p(x)) = σ m_a(1/σ) (R(0) = 1): one family, so
 * each round costs one mass query and the final draw from q^{k+1} is the
 * residual draw at scale 1/σ_{k+1}.  With a bigram draft the multi-draft
 * walks (rrs, spectr, tree-rrs) read the row after the output's previous
 * token (S_md_p below says why) and draw their residuals by rejection from q. */
#include <math.h>
#include <stdlib.h>

#include "../../src/sd_backoff.h"
#include "../../src/sd_kseq.h"
#include "../../src/sd_rngbuf.h"
#include "../verifiers/sd_block.h"
#include "../verifiers/sd_multidraft.h"
#include "../verifiers/sd_token.h"
#include "../verifiers/sd_tree.h"

static double S_tv(const sd_backoff *m, size_t a)
{
    return m->off ? m->tv[a] : m->tv[0];
}

/* One trial of token-level SD: tokens[0..T], its rejections and iterations. */
static void S_token_trial(const sd_backoff *m, size_t gamma, uint64_t seed, uint64_t trial, size_t *tokens,
                          size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    const size_t T = m->T;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = m->start, rej = 0, its = 0;
    tokens[0] = prev;
    for (size_t n = 1; n <= T;) {
        size_t len = sd_draft_len_at(gamma, T, n), i = 0;
        int rejected = 0;
        for (; i < len; i++) {
            size_t t = n + i, x = sd_backoff_draw_p(m, &rng);
            double px = m->p[x], qx = sd_backoff_q(m, prev, x);
            if (!(sd_rngbuf_uniform(&rng) * px < qx)) {
                prev = tokens[t] = sd_backoff_draw_residual(m, prev, 1.0, S_tv(m, prev), &rng);
                rejected = 1;
                break;
            }
            prev = tokens[t] = x;
        }
        size_t emitted = rejected ? i + 1 : i;
        if (!rejected && n + len <= T) {
            prev = tokens[n + len] = sd_backoff_draw_q(m, prev, &rng);
            emitted++;
        }
        rej += (size_t)rejected;
        its++;
        if (obs->hist)
            obs->hist[i] += 1.0;
        if (obs->acc)
            sd_welford_add(obs->acc, (double)i);
        n += emitted;
        if (obs->first_iteration) /* SD_OBS_FIRST: one iteration (eval accept-length) */
            break;
    }
    *rejections = rej;
    *iterations = its;
}

/* One trial of token-level SD with a bigram draft (src/sd_arpa_draft2.h attaches it):
 * x ~ p_a by drawing the draft's own row and redrawing while x is not a
 * target word; accepted when U p_a(x) < q_a(x); after a rejection the
 * residual [q_a - p_a]+ / TV(p_a, q_a) by rejection: y ~ q_a kept with
 * probability (q_a(y) - p_a(y))+ / q_a(y).  Exact; O(1) expected draws per
 * token. */
static size_t S_draw_p2(const sd_backoff *m, size_t a, sd_rngbuf *rng)
{
    const sd_backoff *d = m->draft2;
    int32_t ad = m->d2map[a];
    for (;;) {
        size_t y = ad >= 0 ? sd_backoff_draw_q(d, (size_t)ad, rng) : sd_backoff_draw_u(d, rng);
        if (m->d2inv[y] >= 0)
            return (size_t)m->d2inv[y];
    }
}

static void S_token2_trial(const sd_backoff *m, size_t gamma, uint64_t seed, uint64_t trial, size_t *tokens,
                           size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    const size_t T = m->T;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = m->start, rej = 0, its = 0;
    tokens[0] = prev;
    for (size_t n = 1; n <= T;) {
        size_t len = sd_draft_len_at(gamma, T, n), i = 0;
        int rejected = 0;
        for (; i < len; i++) {
            size_t t = n + i, x = S_draw_p2(m, prev, &rng);
            double px = sd_backoff_draft2_p(m, prev, x), qx = sd_backoff_q(m, prev, x);
            if (!(sd_rngbuf_uniform(&rng) * px < qx)) {
                size_t y;
                for (;;) {
                    y = sd_backoff_draw_q(m, prev, &rng);
                    double qy = sd_backoff_q(m, prev, y), py = sd_backoff_draft2_p(m, prev, y);
                    if (sd_rngbuf_uniform(&rng) * qy < qy - py)
                        break;
                }
                prev = tokens[t] = y;
                rejected = 1;
                break;
            }
            prev = tokens[t] = x;
        }
        size_t emitted = rejected ? i + 1 : i;
        if (!rejected && n + len <= T) {
            prev = tokens[n + len] = sd_backoff_draw_q(m, prev, &rng);
            emitted++;
        }
        rej += (size_t)rejected;
        its++;
        if (obs->hist)
            obs->hist[i] += 1.0;
        if (obs->acc)
            sd_welford_add(obs->acc, (double)i);
        n += emitted;
        if (obs->first_iteration) /* SD_OBS_FIRST: one iteration (eval accept-length) */
            break;
    }
    *rejections = rej;
    *iterations = its;
}

/* Draft blocks up to this length are drawn ahead (S_block_trial). */
#define S_AHEAD 64

/* Block verification's test at drafted position i of G with p_i = pi > 0
 * after token x (Sun et al. 2025, Alg. 2): for i < G, accept with
 * probability mm / (mm + 1 - pi), mm = m_x(pi); the convexity bounds of
 * sd_backoff.h settle most draws without computing mm.  The margins (1e-9,
 * and a denominator of at least 1e-3) exceed the rounding of mm's sums by
 * orders of magnitude, so every decision is the one the computed mm gives.
 * At i = G, accept with probability pi (S_block_test; S_block_test_lt is
 * the test for i < G, with the context lines hctx or the pairs m1v read
 * through pointers the caller holds).  *mm_i gets m_x(pi) when computed,
 * else NaN (S_block_test_lt leaves it alone then). */
static inline int S_block_test_lt(const sd_backoff *m, const sd_backoff_ctx *hctx, const double *m1v, size_t x,
                                  double pi, double eta, double *mm_i)
{
    if (m1v && pi < 1.0) {
        double m1 = hctx ? hctx[x].m1 : m1v[2 * x], U = pi * m1,
               L = m1 + (hctx ? hctx[x].m1d : m1v[2 * x + 1]) * (pi - 1.0);
        L = L > 0.0 ? L : 0.0;
        if (L + (1.0 - pi) > 1e-3) {
            if (eta < L / (L + (1.0 - pi)) - 1e-9)
                return 1;
            if (eta > U / (U + (1.0 - pi)) + 1e-9)
                return 0;
        }
    }
    double mm = *mm_i = sd_backoff_mass(m, x, pi);
    return eta * (mm + (1.0 - pi)) < mm;
}

static int S_block_test(const sd_backoff *m, size_t i, size_t G, size_t x, double pi, double eta, double *mm_i)
{
    *mm_i = NAN;
    return i >= G ? eta < pi : S_block_test_lt(m, m->hctx, m->m1, x, pi, eta, mm_i);
}

/* The end of a block iteration that accepted tau of G drafts (tok[0..) are
 * the iteration's tokens x_n.., `left` = T - n positions after x_n): the
 * bonus token from q after x_G when all were accepted and the horizon
 * allows, else the residual max(0, s q_a - p)/m_a(s) at a = x_τ, s = p_τ
 * (eq. 4; s = 1 for the tokenwise control), its mass the test's own
 * m_{x_τ}(p_τ) when it was computed (the same call).  Returns the tokens
 * emitted (tau + 1 after a rejection). */
static size_t S_block_finish(const sd_backoff *m, size_t G, int tokenwise, size_t tau, double tau_p,
                             size_t tau_prev, double tau_mm, size_t left, size_t *tok, sd_rngbuf *rng)
{
    if (tau == G) {
        if (G <= left) {
            tok[G] = sd_backoff_draw_q_line(m, tau_prev, rng);
            return G + 1;
        }
        return G;
    }
    /* the mass m_{x_τ}(p_τ) when the test computed it, else NaN: the draw
     * computes it (and a residual of mass 0 draws from q) */
    tok[tau] = sd_backoff_draw_residual_line(m, tau_prev, tokenwise ? 1.0 : tau_p, tokenwise ? NAN : tau_mm, rng);
    return tau + 1;
}

/* One trial of block verification (sd_block_step's rule, rows on demand);
 * tokenwise: the residual [q - p]+ at a rejection instead of eq. 4's
 * max(p_τ q - p, 0) (the bug of the control broken-block-residual,
 * SD_BLOCK_RESIDUAL_TOKENWISE of sd_block.h). */
static void S_block_trial(const sd_backoff *m, size_t gamma, int tokenwise, uint64_t seed, uint64_t trial,
                          size_t *tokens, size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    const size_t T = m->T;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = m->start, rej = 0, its = 0;
    const sd_backoff_ctx *hctx = m->hctx;
    const double *m1 = m->m1, *ap = m->ap, *p = m->p;
    const uint32_t *lp = m->lp;
    const size_t V = m->V;
    double *hist = obs->hist;
    sd_welford *acc = obs->acc;
    const int first = obs->first_iteration;
    tokens[0] = prev;
    for (size_t n = 1; n <= T;) {
        size_t G = sd_draft_len_at(gamma, T, n), tau = 0, tau_prev = prev, y = prev;
        double pi = 1.0, tau_p = 1.0, tau_mm = NAN; /* tau_mm: m_{x_τ}(p_τ) when the test computed it */
        /* The draft is one row p at every context, so the block's tokens and
         * coins are drawn first, in the stream's order (x_1, η_1, x_2, ...),
         * and the G lookups q_{x_{i-1}}(x_i) are then independent: their
         * cache misses overlap instead of following one another.  Should
         * p_i reach 0 at i < G (η_i and the rest never drawn), the stream
         * is replayed from the iteration's start to just after x_i, so
         * every number is the one the step-by-step loop draws. */
        if (G <= S_AHEAD) {
            /* x_i is drawn into tokens[n + i - 1] (positions past the
             * iteration's output are rewritten by the next iterations), so
             * the contexts x_{i-1} are tokens[n - 1 ..] (tokens[n - 1] = prev). */
            size_t *xs = tokens + n;
            double etas[S_AHEAD], qs[S_AHEAD], ps[S_AHEAD];
            sd_rngbuf at_start = rng;
            /* x_i ~ p by sd_backoff_draw_p's arithmetic (so the same token
             * from the same one uniform): Walker's alias table (ap, lp) of p,
             * k = ⌊vV⌋ kept when vV - k < ap[k], else lp[k] (vV < 2^63: the
             * signed conversion truncates to the same k).  In two passes:
             * the slots of all G draws first (the uniforms in stream order),
             * so the table reads overlap. */
            double vs[S_AHEAD];
            for (size_t i = 0; i < G; i++) {
                double v = vs[i] = sd_rngbuf_uniform(&rng) * (double)V;
                size_t k = (size_t)(int64_t)v;
                k = k >= V ? V - 1 : k;
                xs[i] = k;
                __builtin_prefetch(ap + k);
                __builtin_prefetch(lp + k);
                etas[i] = sd_rngbuf_uniform(&rng);
            }
            for (size_t i = 0; i < G; i++) {
                size_t k = xs[i], x = xs[i] = vs[i] - (double)k < ap[k] ? k : lp[k];
                __builtin_prefetch(p + x);
                if (hctx)
                    __builtin_prefetch(hctx + x);
                else if (m1)
                    __builtin_prefetch(m1 + 2 * x);
            }
            sd_backoff_q_many(m, xs - 1, xs, G, qs);
            /* p_i forward; the loop of Alg. 2 stops at the first p_i = 0,
             * which leaves only positions 1..g testable. */
            size_t g = G;
            for (size_t i = 0; i < G; i++) {
                double num = pi * qs[i], px = p[xs[i]];
                pi = ps[i] = num >= px ? 1.0 : num / px;
                if (pi == 0.0) { /* p_{i+1} = 0: the stream resumes after x_1, η_1, ..., x_{i+1} */
                    g = i;
                    rng = at_start;
                    for (size_t j = 0; j < 2 * i + 1; j++)
                        (void)sd_rngbuf_uniform(&rng);
                    break;
                }
            }
            /* τ is the last accepted position (Alg. 2), and each test reads
             * only its own η_i, p_i, x_i: testing from i = g down and
             * stopping at the first accept gives the same τ, p_τ, x_τ and
             * the same m_{x_τ}(p_τ); the tests below τ are never needed.
             * At i = G the test is η_G < p_G. */
            size_t i = g;
            if (i == G) {
                if (etas[i - 1] < ps[i - 1])
                    tau = i;
                else
                    i--;
            }
            for (; i >= 1 && !tau; i--) {
                double mm_i = NAN;
                if (S_block_test_lt(m, hctx, m1, xs[i - 1], ps[i - 1], etas[i - 1], &mm_i)) {
                    tau = i;
                    tau_mm = mm_i;
                }
            }
            if (tau) {
                tau_p = ps[tau - 1];
                tau_prev = xs[tau - 1];
            }
        } else {
            for (size_t i = 1; i <= G; i++) {
                size_t x = sd_backoff_draw_p(m, &rng);
                tokens[n + i - 1] = x;
                double num = pi * sd_backoff_q(m, y, x), px = m->p[x];
                pi = num >= px ? 1.0 : num / px;
                y = x;
                if (pi == 0.0)
                    break;
                double eta = sd_rngbuf_uniform(&rng), mm_i = NAN;
                if (S_block_test(m, i, G, x, pi, eta, &mm_i)) {
                    tau = i;
                    tau_p = pi;
                    tau_prev = x;
                    tau_mm = mm_i;
                }
            }
        }
        size_t emitted = S_block_finish(m, G, tokenwise, tau, tau_p, tau_prev, tau_mm, T - n, tokens + n, &rng);
        rej += tau < G;
        its++;
        if (hist)
            hist[tau] += 1.0;
        if (acc)
            sd_welford_add(acc, (double)tau);
        prev = tokens[n + emitted - 1];
        n += emitted;
        if (first) /* SD_OBS_FIRST: one iteration (eval accept-length) */
            break;
    }
    *rejections = rej;
    *iterations = its;
}

/* One trial of block verification with a bigram draft (src/sd_arpa_draft2.h
 * attaches it): the rule of S_block_trial with the draft row p_y after
 * each drafted prefix.  Per drafted token: x ~ p_y (S_draw_p2), the ratio
 * q_y(x)/p_y(x) by two sparse lookups, p_i = min(1, p_{i-1} q/p), and for
 * i < γ the mass m_i = Σ max(0, p_i q_x - p_x) by the sparse sums of
 * sd_backoff_draft2_mass; the convexity bounds
 * max(0, m_x(1) + m_x'(1-)(s - 1)) <= m_x(s) <= s m_x(1) (m_x convex,
 * m_x(0) = 0; m_x(1) = TV(p_x, q_x) and m_x'(1-) kept per context in the
 * plan) settle most tests without the sums, with a margin of 1e-9 as in
 * S_block_trial.  At a rejection the residual
 * max(0, s q_a - p_a)/m_a(s), s = p_τ (eq. 4; s = 1 for the tokenwise
 * control), by exact rejection from the target row: y ~ q_a kept with
 * probability max(0, s q_a(y) - p_a(y)) / q_a(y) <= s, whose acceptance
 * rate is m_a(s): 1/m_a(s) expected proposals. */
static void S_block2_trial(const sd_backoff *m, const double *tv, size_t gamma, int tokenwise, uint64_t seed,
                           uint64_t trial, size_t *tokens, size_t *rejections, size_t *iterations,
                           const sd_observe *obs)
{
    const size_t T = m->T;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = m->start, rej = 0, its = 0;
    tokens[0] = prev;
    for (size_t n = 1; n <= T;) {
        size_t G = sd_draft_len_at(gamma, T, n), tau = 0, tau_prev = prev, y = prev;
        double pi = 1.0, tau_p = 1.0;
        for (size_t i = 1; i <= G; i++) {
            size_t x = S_draw_p2(m, y, &rng);
            tokens[n + i - 1] = x;
            double num = pi * sd_backoff_q(m, y, x), px = sd_backoff_draft2_p(m, y, x);
            pi = num >= px ? 1.0 : num / px;
            y = x;
            if (pi == 0.0)
                break;
            double eta = sd_rngbuf_uniform(&rng);
            int accept;
            if (i < G) {
                double U = pi * tv[x], L = fmax(0.0, tv[x] + tv[m->V + x] * (pi - 1.0));
                if (pi < 1.0 && U + (1.0 - pi) > 1e-3 && eta > U / (U + (1.0 - pi)) + 1e-9) {
                    accept = 0;
                } else if (pi < 1.0 && L + (1.0 - pi) > 1e-3 && eta < L / (L + (1.0 - pi)) - 1e-9) {
                    accept = 1;
                } else {
                    double mm = pi == 1.0 ? tv[x] : sd_backoff_draft2_mass(m, x, pi);
                    accept = eta * (mm + (1.0 - pi)) < mm;
                }
            } else {
                accept = eta < pi;
            }
            if (accept) {
                tau = i;
                tau_p = pi;
                tau_prev = x;
            }
        }
        size_t emitted = tau;
        if (tau == G) {
            if (n + G <= T) {
                tokens[n + G] = sd_backoff_draw_q(m, tau_prev, &rng);
                emitted = G + 1;
            }
        } else {
            double s = tokenwise ? 1.0 : tau_p;
            double mm = s == 1.0 ? tv[tau_prev] : sd_backoff_draft2_mass(m, tau_prev, s);
            size_t z;
            for (long tries = 0;; tries++) {
                z = sd_backoff_draw_q(m, tau_prev, &rng);
                if (!(mm > 0.0)) /* m_a(s) = 0: no residual mass (s q_a <= p_a); q_a as S_block_trial */
                    break;
                double qz = sd_backoff_q(m, tau_prev, z), pz = sd_backoff_draft2_p(m, tau_prev, z);
                if (sd_rngbuf_uniform(&rng) * qz < s * qz - pz || tries > 100000000)
                    break;
            }
            tokens[n + tau] = z;
            emitted = tau + 1;
            rej++;
        }
        its++;
        if (obs->hist)
            obs->hist[tau] += 1.0;
        if (obs->acc)
            sd_welford_add(obs->acc, (double)tau);
        prev = tokens[n + emitted - 1];
        n += emitted;
        if (obs->first_iteration) /* SD_OBS_FIRST: one iteration (eval accept-length) */
            break;
    }
    *rejections = rej;
    *iterations = its;
}

/* The multi-draft walks with a bigram draft (rrs, spectr, tree-rrs).  A
 * draft's row is the draft model's row after its own previous token; the
 * drafts (or tree children) that the walk still reads all agree with the
 * output so far, so that token is the output's previous token `prev`, at the
 * first position of an iteration as at the later ones: every draft read at a
 * position is drawn from p_prev, and drafts that left the walk are never
 * read (their later tokens, drawn from their own contexts, do not change the
 * law).  So the walks below take p_prev(x) for p(x), p_prev's masses
 * m_prev(s) = Σ max(0, s q_prev - p_prev) from the sparse sums
 * (sd_backoff_draft2_mass), and draw their residuals by rejection from q. */
static double S_md_p(const sd_backoff *m, size_t a, size_t x)
{
    return m->draft2 ? sd_backoff_draft2_p(m, a, x) : m->p[x];
}

static double S_md_mass(const sd_backoff *m, size_t a, double s)
{
    return m->draft2 ? sd_backoff_draft2_mass(m, a, s) : sd_backoff_mass(m, a, s);
}

static size_t S_md_draw(const sd_backoff *m, size_t a, sd_rngbuf *rng)
{
    return m->draft2 ? S_draw_p2(m, a, rng) : sd_backoff_draw_p(m, rng);
}

/* A draw from max(0, q_a - σ p_a) / R, R its mass (> 0). */
static size_t S_md_residual(const sd_backoff *m, size_t a, double sigma, double R, sd_rngbuf *rng)
{
    if (!m->draft2)
        return sd_backoff_draw_residual(m, a, 1.0 / sigma, R / sigma, rng);
    /* by rejection from q_a: keep y with probability max(0, q - σ p)(y) / q(y); acceptance rate R */
    for (long tries = 0;; tries++) {
        size_t y = sd_backoff_draw_q(m, a, rng);
        double qy = sd_backoff_q(m, a, y);
        if (sd_rngbuf_uniform(rng) * qy < qy - sigma * sd_backoff_draft2_p(m, a, y) || tries > 100000000)
            return y;
    }
}

/* The masses R(σ_{j+2}) of the rounds after j+1 rejections depend on the
 * context only (σ_1 = 0, σ_{m+1} = σ_m + R(σ_m)): with a bigram draft, where
 * a mass costs O(|S_a| + |D_a|), they are kept per (context, j) in the
 * thread's work area (NaN: not computed yet; kmax columns). */
typedef struct {
    double *R;
    size_t kmax;
} S_rrs_cache;

/* One position of rrs after prev with the `alive` drafts' tokens x[]: the
 * selected token; *acc (may be NULL) gets the index of the accepted draft,
 * or -1 when every draft was rejected (a residual token); cache may be NULL. */
static size_t S_rrs_select_at(const sd_backoff *m, size_t prev, const size_t *x, size_t alive, sd_rngbuf *rng,
                              long *acc, const S_rrs_cache *cache)
{
    double sigma = 0.0, R = 1.0;
    for (size_t j = 0; j < alive; j++) {
        double px = S_md_p(m, prev, x[j]), qx = sd_backoff_q(m, prev, x[j]);
        double w = qx - sigma * px;
        if (acc)
            *acc = (long)j;
        if (sd_rngbuf_uniform(rng) * px * R < w) /* u p(x) < q^m(x) = max(0, q - σ p)/R */
            return x[j];
        sigma += R;
        double *slot = cache && j < cache->kmax ? &cache->R[prev * cache->kmax + j] : NULL;
        if (slot && !isnan(*slot))
            R = *slot;
        else {
            R = sigma * S_md_mass(m, prev, 1.0 / sigma);
            if (slot)
                *slot = R;
        }
        if (!(R > 0.0)) /* q^m = p up to rounding: the rejection had probability 0 */
            return x[j];
    }
    if (acc)
        *acc = -1;
    return S_md_residual(m, prev, sigma, R, rng);
}

static size_t S_rrs_select(const sd_backoff *m, size_t prev, const size_t *x, size_t alive, sd_rngbuf *rng,
                           const S_rrs_cache *cache)
{
    return S_rrs_select_at(m, prev, x, alive, rng, NULL, cache);
}

/* How the walk below picks the output token among the alive drafts x[0..alive)
 * after prev: recursive rejection sampling (rrs) or k-Seq (spectr). */
typedef size_t (*S_select_fn)(const sd_backoff *m, size_t prev, const size_t *x, size_t alive, void *ctx,
                              sd_rngbuf *rng);

/* One trial of a k-draft verifier whose drafts that survive share the output's
 * prefix (the tree walk of sd_multidraft_tree_step): at each position the
 * alive drafts draw their next token from p, select() gives the output token,
 * and the drafts that agree with it stay alive; none agreeing is a rejection. */
static void S_multidraft_trial(const sd_backoff *m, size_t gamma, size_t k, S_select_fn select, void *ctx,
                               uint64_t seed, uint64_t trial, size_t *tokens, size_t *rejections,
                               size_t *iterations, const sd_observe *obs)
{
    const size_t T = m->T;
    size_t *x = tokens + T + 1; /* k draft tokens */
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = m->start, rej = 0, its = 0;
    tokens[0] = prev;
    for (size_t n = 1; n <= T;) {
        size_t G = sd_draft_len_at(gamma, T, n), alive = k, i = 0;
        int rejected = 0;
        for (; i < G; i++) {
            for (size_t j = 0; j < alive; j++) /* each alive draft's previous token is prev */
                x[j] = S_md_draw(m, prev, &rng);
            size_t y = select(m, prev, x, alive, ctx, &rng), agree = 0;
            tokens[n + i] = y;
            prev = y;
            for (size_t j = 0; j < alive; j++)
                agree += x[j] == y;
            if (!agree) {
                rejected = 1;
                break;
            }
            alive = agree;
        }
        size_t emitted = rejected ? i + 1 : i;
        if (!rejected && n + G <= T) {
            prev = tokens[n + G] = sd_backoff_draw_q(m, prev, &rng);
            emitted++;
        }
        rej += (size_t)rejected;
        its++;
        if (obs->hist)
            obs->hist[i] += 1.0;
        if (obs->acc)
            sd_welford_add(obs->acc, (double)i);
        n += emitted;
        if (obs->first_iteration) /* SD_OBS_FIRST: one iteration (eval accept-length) */
            break;
    }
    *rejections = rej;
    *iterations = its;
}

static size_t S_rrs_select_any(const sd_backoff *m, size_t prev, const size_t *x, size_t alive, void *ctx,
                               sd_rngbuf *rng)
{
    return S_rrs_select(m, prev, x, alive, rng, ctx);
}

/* One trial of rrs with k drafts. */
static void S_rrs_trial(const sd_backoff *m, size_t gamma, size_t k, uint64_t seed, uint64_t trial, size_t *tokens,
                        size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    S_multidraft_trial(m, gamma, k, S_rrs_select_any, NULL, seed, trial, tokens, rejections, iterations, obs);
}

static void S_token_trial_k(const sd_backoff *m, size_t gamma, size_t k, uint64_t seed, uint64_t trial,
                            size_t *tokens, size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    (void)k;
    S_token_trial(m, gamma, seed, trial, tokens, rejections, iterations, obs);
}

static void S_token2_trial_k(const sd_backoff *m, size_t gamma, size_t k, uint64_t seed, uint64_t trial,
                             size_t *tokens, size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    (void)k;
    S_token2_trial(m, gamma, seed, trial, tokens, rejections, iterations, obs);
}

static void S_block_trial_k(const sd_backoff *m, size_t gamma, size_t k, uint64_t seed, uint64_t trial,
                            size_t *tokens, size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    (void)k;
    S_block_trial(m, gamma, 0, seed, trial, tokens, rejections, iterations, obs);
}

static void S_block_tokenwise_trial_k(const sd_backoff *m, size_t gamma, size_t k, uint64_t seed, uint64_t trial,
                                      size_t *tokens, size_t *rejections, size_t *iterations, const sd_observe *obs)
{
    (void)k;
    S_block_trial(m, gamma, 1, seed, trial, tokens, rejections, iterations, obs);
}

typedef void (*S_trial_fn)(const sd_backoff *, size_t, size_t, uint64_t, uint64_t, size_t *, size_t *, size_t *,
                           const sd_observe *);

/* --- spectr (k-Seq) ------------------------------------------------------
 * Sun et al. 2023, Alg. 2 and 3 (src/sd_kseq.h for the letters): at a
 * depth with k' surviving drafts, X_i is accepted with probability
 * min(1, q(X_i)/(ρ p(X_i))), ρ = ρ*(k') the root of
 *     f(ρ) = 1 - (1 - β(ρ))^k' - ρ β(ρ),   β(ρ) = Σ min(p, q/ρ) = 1/ρ - m_a(1/ρ)
 * in [1, k'] (one mass query per evaluation; bisection to the upper end of
 * a bracket narrower than 1e-14 ρ, so f <= 0 and the residual is
 * non-negative, as sd_kseq_solve's Brent bracket).  The residual
 *     w(x) = max(0, q(x) - min(p(x), q(x)/ρ) p_acc/β)
 * is at most q(x), so it is drawn by rejection from q_a: propose y ~ q_a,
 * keep it with probability w(y)/q(y) = 1 - (p_acc/β) min(p(y)/q(y), 1/ρ).
 * Its acceptance rate is Σ w = 1 - p_acc, the probability that the residual
 * is needed at all: one proposal per position on average.  ρ*, β are solved
 * per (context, k') when first needed and kept in the thread's work area. */
static void S_kseq_solve(const sd_backoff *m, size_t a, size_t k, double *rho, double *beta)
{
    double b1 = 1.0 - S_md_mass(m, a, 1.0);
    if (k == 1 || sd_kseq_pacc(b1, k) - b1 <= 0.0 || !(b1 > 0.0)) { /* f(1) <= 0, or disjoint supports */
        *rho = 1.0;
        *beta = b1 > 0.0 ? b1 : 0.0;
        return;
    }
    double lo = 1.0, hi = (double)k;
    while (hi - lo > 1e-14 * hi) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi)
            break;
        double b = 1.0 / mid - S_md_mass(m, a, 1.0 / mid);
        b = b > 0.0 ? b : 0.0;
        if (sd_kseq_pacc(b, k) - mid * b > 0.0)
            lo = mid;
        else
            hi = mid;
    }
    double b = 1.0 / hi - S_md_mass(m, a, 1.0 / hi);
    *rho = hi;
    *beta = b > 0.0 ? b : 0.0;
}

typedef struct {
    double *rho, *beta; /* [V][k], NaN: not solved yet */
} S_kseq_cache;

static size_t S_kseq_select(const sd_backoff *m, size_t prev, const size_t *x, size_t alive, S_kseq_cache *cache,
                            size_t kmax, sd_rngbuf *rng)
{
    size_t at = prev * kmax + (alive - 1);
    if (isnan(cache->rho[at]))
        S_kseq_solve(m, prev, alive, &cache->rho[at], &cache->beta[at]);
    double rho = cache->rho[at], beta = cache->beta[at];
    for (size_t j = 0; j < alive; j++) {
        double px = S_md_p(m, prev, x[j]), qx = sd_backoff_q(m, prev, x[j]);
        if (sd_rngbuf_uniform(rng) * rho * px < qx) /* u < min(1, q/(ρ p)) */
            return x[j];
    }
    double g = beta > 0.0 ? sd_kseq_pacc(beta, alive) / beta : (double)alive;
    for (long tries = 0;; tries++) {
        size_t y = sd_backoff_draw_q(m, prev, rng);
        double py = S_md_p(m, prev, y), qy = sd_backoff_q(m, prev, y);
        double r = py < qy / rho ? py / qy : 1.0 / rho;
        if (sd_rngbuf_uniform(rng) < 1.0 - g * r || tries > 100000000)
            return y;
    }
}

typedef struct {
    const sd_backoff *m;
    size_t gamma, k;
    S_trial_fn trial;
    size_t tree[SD_TREE_MAX_DEPTH], depth; /* tree-rrs: b_1..b_d */
    int spectr;                            /* spectr: S_spectr_trial */
    int rcache;                            /* rrs, tree-rrs with a bigram draft: the R cache (S_rrs_cache) */
    int block2;                            /* block with a bigram draft: 1, or 2 for the tokenwise control */
    double tv[];                           /* block2: [2V] TV(p_a, q_a) = m_a(1), then m_a'(1-) */
} S_plan;

/* One trial of tree-rrs (sims/verifiers/tree_rrs.c's rule): at the node
 * reached, its b children are drafted i.i.d. from p and tested in turn by
 * recursive rejection sampling against q(.|node) (S_rrs_select_at); an
 * acceptance moves to that child, whose own children come next; all
 * rejected: a residual token and a rejection.  The depth is cut at the
 * horizon as the verifier's step cuts it (D = min(d, T - n + 1)); a leaf
 * before the horizon adds a bonus token from q.  Children of a node are
 * drafted from the draft's row after that node (p, or p_node with a bigram
 * draft), and only the children of the nodes on the path are read, so only
 * they are drawn, each from the row after the path's last token. */
static void S_tree_trial(const S_plan *pl, uint64_t seed, uint64_t trial, size_t *tokens, size_t *rejections,
                         size_t *iterations, const sd_observe *obs)
{
    const sd_backoff *m = pl->m;
    const size_t T = m->T;
    size_t *x = tokens + T + 1;
    S_rrs_cache rc = {(double *)(void *)((char *)tokens + ((T + 1 + pl->k) * sizeof(size_t) + 15) / 16 * 16), pl->k};
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = m->start, rej = 0, its = 0;
    tokens[0] = prev;
    for (size_t n = 1; n <= T;) {
        size_t rest = T - n + 1, D = pl->depth < rest ? pl->depth : rest, l = 0;
        int rejected = 0;
        for (; l < D; l++) {
            size_t b = pl->tree[l];
            for (size_t j = 0; j < b; j++) /* children of the path's node: drafted after prev */
                x[j] = S_md_draw(m, prev, &rng);
            long acc;
            prev = tokens[n + l] = S_rrs_select_at(m, prev, x, b, &rng, &acc, pl->rcache ? &rc : NULL);
            if (acc < 0) {
                rejected = 1;
                break;
            }
        }
        size_t emitted = rejected ? l + 1 : l;
        if (!rejected && n + D <= T) {
            prev = tokens[n + D] = sd_backoff_draw_q(m, prev, &rng);
            emitted++;
        }
        rej += (size_t)rejected;
        its++;
        if (obs->hist)
            obs->hist[l] += 1.0;
        if (obs->acc)
            sd_welford_add(obs->acc, (double)l);
        n += emitted;
        if (obs->first_iteration) /* SD_OBS_FIRST: one iteration (eval accept-length) */
            break;
    }
    *rejections = rej;
    *iterations = its;
}

static int S_new(void **plan, const sd_model *m, const sd_params *par, S_trial_fn fn, sd_error *err)
{
    if (!m->backoff)
        return SD_EUSAGE; /* not applicable */
    const sd_backoff *bm = m->backoff;
    int block2 = bm->draft2 && (fn == S_block_trial_k || fn == S_block_tokenwise_trial_k);
    if (bm->draft2 && fn != S_token2_trial_k && !block2 && fn != S_rrs_trial && fn != NULL)
        return SD_EUSAGE; /* a bigram draft: token, block and the multi-draft walks (rrs, spectr, tree-rrs) */
    S_plan *p = calloc(1, sizeof *p + (block2 ? 2 * bm->V * sizeof(double) : 0));
    if (!p)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    p->m = m->backoff;
    p->gamma = par->gamma;
    p->k = par->k;
    p->trial = fn;
    if (block2) {
        p->block2 = fn == S_block_trial_k ? 1 : 2;
        int rc = sd_backoff_draft2_tv(bm, p->tv, err);
        if (rc) {
            free(p);
            return rc;
        }
        for (size_t a = 0; a < bm->V; a++)
            p->tv[bm->V + a] = sd_backoff_draft2_slope(bm, a);
    }
    *plan = p;
    return SD_OK;
}

static int S_new_token(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                       unsigned threads, sd_error *err)
{
    (void)max_bytes, (void)threads;
    if (!sd_token_policy_fixed(par))
        return SD_EUSAGE; /* a draft policy: not on sparse rows */
    return S_new(plan, m, par, m->backoff && m->backoff->draft2 ? S_token2_trial_k : S_token_trial_k, err);
}

static int S_new_block(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                       unsigned threads, sd_error *err)
{
    (void)max_bytes, (void)threads;
    if (sd_draft_policy_decode(par->v[SD_BLOCK_SLOT_POLICY]).rule != SD_DRAFT_FIXED)
        return SD_EUSAGE; /* a draft policy: not on sparse rows */
    return S_new(plan, m, par, S_block_trial_k, err);
}

static int S_new_block_tokenwise(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                                 unsigned threads, sd_error *err)
{
    (void)max_bytes, (void)threads;
    return S_new(plan, m, par, S_block_tokenwise_trial_k, err);
}

static void S_rcache_plan(S_plan *p, size_t max_bytes, unsigned threads);

static int S_new_rrs(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                     unsigned threads, sd_error *err)
{
    if (par->k < 1 || par->k > ((size_t)1 << 20))
        return SD_EUSAGE; /* the step reports the bad count */
    int rc = S_new(plan, m, par, S_rrs_trial, err);
    if (!rc) {
        S_plan *p = *plan;
        S_rcache_plan(p, max_bytes, threads);
        if (p->rcache)
            p->trial = NULL; /* S_rrs_cached_trial */
    }
    return rc;
}

static int S_new_tree_rrs(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                          unsigned threads, sd_error *err)
{
    (void)max_bytes, (void)threads;
    if (par->tree_depth < 1 || par->tree_depth > SD_TREE_MAX_DEPTH)
        return SD_EUSAGE; /* no tree: the step reports it */
    int rc = S_new(plan, m, par, NULL, err);
    if (rc)
        return rc;
    S_plan *p = *plan;
    p->depth = par->tree_depth;
    p->k = 1;
    for (size_t i = 0; i < p->depth; i++) {
        p->tree[i] = par->tree[i];
        if (p->tree[i] > p->k)
            p->k = p->tree[i];
    }
    S_rcache_plan(p, max_bytes, threads);
    return SD_OK;
}

static int S_new_spectr(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                        unsigned threads, sd_error *err)
{
    if (sd_param_choice(par, SD_SPECTR_SLOT_PLAN) != SD_PLAN_KSEQ)
        return SD_EUSAGE; /* --plan otm: an LP per row, not on sparse rows */
    if (par->k < 1 || par->k > 64 || !m->backoff)
        return SD_EUSAGE; /* the step reports a bad count */
    /* the ρ*, β cache: 2 V k doubles per thread */
    double need = 16.0 * (double)m->backoff->V * (double)par->k * (threads ? threads : 1);
    if (max_bytes && need > (double)max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "spectr on sparse rows keeps rho* and beta per context and draft "
                                             "count: %.0f MB for V = %zu, k = %zu, %u threads; the budget is %.0f MB",
                            need / 1e6, m->backoff->V, par->k, threads ? threads : 1, (double)max_bytes / 1e6);
    int rc = S_new(plan, m, par, NULL, err);
    if (!rc)
        ((S_plan *)*plan)->spectr = 1;
    return rc;
}

/* The work area: tokens[T + 1], then k draft slots, then (spectr) the cache. */
static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *p = plan;
    size_t head = (p->m->T + 1 + p->k) * sizeof(size_t), n = p->spectr ? 2 * p->m->V * p->k
                                                             : p->rcache ? p->m->V * p->k : 0;
    head = (head + 15) / 16 * 16;
    char *w = malloc(head + n * sizeof(double));
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    double *c = (double *)(void *)(w + head);
    for (size_t i = 0; i < n; i++)
        c[i] = NAN;
    *work = w;
    return SD_OK;
}

/* The k-Seq selection with the trial's cache of ρ*, β and the plan's k. */
typedef struct {
    S_kseq_cache cache;
    size_t k;
} S_kseq_ctx;

static size_t S_kseq_select_any(const sd_backoff *m, size_t prev, const size_t *x, size_t alive, void *ctx,
                                sd_rngbuf *rng)
{
    S_kseq_ctx *c = ctx;
    return S_kseq_select(m, prev, x, alive, &c->cache, c->k, rng);
}

/* One trial of spectr with k drafts (the walk of S_multidraft_trial); the
 * work area's cache holds the thread's ρ*, β. */
static void S_spectr_trial(const S_plan *pl, uint64_t seed, uint64_t trial, size_t *tokens, size_t *rejections,
                           size_t *iterations, const sd_observe *obs)
{
    const sd_backoff *m = pl->m;
    const size_t T = m->T, k = pl->k;
    size_t head = ((T + 1 + k) * sizeof(size_t) + 15) / 16 * 16;
    double *c = (double *)(void *)((char *)tokens + head);
    S_kseq_ctx ctx = {{c, c + m->V * k}, k};
    S_multidraft_trial(m, pl->gamma, k, S_kseq_select_any, &ctx, seed, trial, tokens, rejections, iterations, obs);
}

/* One trial of rrs with a bigram draft and the work area's R cache. */
static void S_rrs_cached_trial(const S_plan *pl, uint64_t seed, uint64_t trial, size_t *tokens, size_t *rejections,
                               size_t *iterations, const sd_observe *obs)
{
    const size_t T = pl->m->T, k = pl->k;
    size_t head = ((T + 1 + k) * sizeof(size_t) + 15) / 16 * 16;
    S_rrs_cache rc = {(double *)(void *)((char *)tokens + head), k};
    S_multidraft_trial(pl->m, pl->gamma, k, S_rrs_select_any, &rc, seed, trial, tokens, rejections, iterations, obs);
}

/* The R cache of rrs and tree-rrs with a bigram draft: V k doubles per thread,
 * kept when within half the budget (k <= 64 without one); else every mass is
 * computed when needed (the same values). */
static void S_rcache_plan(S_plan *p, size_t max_bytes, unsigned threads)
{
    double need = 8.0 * (double)p->m->V * (double)p->k * (threads ? threads : 1);
    p->rcache = p->m->draft2 && (max_bytes ? need <= 0.5 * (double)max_bytes : p->k <= 64);
}

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                  const sd_observe *obs)
{
    const S_plan *p = plan;
    for (uint64_t t = lo; t < hi; t++) {
        size_t rej, its;
        if (p->block2)
            S_block2_trial(p->m, p->tv, p->gamma, p->block2 == 2, seed, t, work, &rej, &its, obs);
        else if (p->trial)
            p->trial(p->m, p->gamma, p->k, seed, t, work, &rej, &its, obs);
        else if (p->spectr)
            S_spectr_trial(p, seed, t, work, &rej, &its, obs);
        else if (p->rcache && !p->depth)
            S_rrs_cached_trial(p, seed, t, work, &rej, &its, obs);
        else
            S_tree_trial(p, seed, t, work, &rej, &its, obs);
        if (obs->rej)
            sd_welford_add(obs->rej, (double)rej);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)its);
        if (obs->pos && !obs->first_iteration) { /* the law of each output token */
            const size_t *tok = work;
            for (size_t n = 1; n <= p->m->T; n++)
                obs->pos[(n - 1) * p->m->V + tok[n]] += 1.0;
        }
    }
}

/* The kernels differ only in the plan: one trial function each. */
#define S_KERNEL(var, kname, plan)                                                                              \
    const sd_kernel_type var = {.name = kname,                                                                 \
                                .supports = SD_OBS_STATS | SD_OBS_POS | SD_OBS_FIRST,                          \
                                .plan_new = plan,                                                              \
                                .plan_free = free,                                                             \
                                .work_new = S_work_new,                                                        \
                                .work_free = free,                                                             \
                                .run = S_run}

S_KERNEL(sd_token_kernel_backoff, "token-backoff", S_new_token);
S_KERNEL(sd_block_kernel_backoff, "block-backoff", S_new_block);
S_KERNEL(sd_rrs_kernel_backoff, "rrs-backoff", S_new_rrs);
S_KERNEL(sd_spectr_kernel_backoff, "spectr-backoff", S_new_spectr);
S_KERNEL(sd_tree_rrs_kernel_backoff, "tree-rrs-backoff", S_new_tree_rrs);
S_KERNEL(sd_block_kernel_backoff_tokenwise, "block-backoff-tokenwise", S_new_block_tokenwise);
