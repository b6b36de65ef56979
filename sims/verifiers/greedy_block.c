/* greedy_block.c — greedy block verification with the distribution
 * modification (Sun et al. 2025, Appendix C, Alg. 4–6 and eq. 31;
 * it is Sun et al. 2024, Alg. 3).
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
 * Ratios are kept as the pair (Mb-joint, Ms-joint) divided by the larger
 * (sd_greedy_ratio), so that a residual token Y with p(Y) = 0 (r = ∞: Mnew
 * is then Mb itself) and long blocks neither overflow nor produce NaN, and
 * every weight max(A Mb - B Ms, 0) is formed with A, B in [0,1] without exp
 * or log.  A ratio below the smallest double (about 1e-308) becomes 0, as
 * exp would make it; it then stays 0, where exact arithmetic could bring it
 * back only through draft probabilities below 1e-308.
 *
 * A modified row of zero mass (or an unreachable prefix, both joints 0) is
 * "dead" (all zeros): it is reached only along draft paths of target
 * probability 0, where the ratios that multiply it are 0.  Should rounding
 * make a residual of zero mass be sampled, Y comes from Mb(.|X^τ) (or q
 * when that row is dead) instead; exact arithmetic never does.
 *
 * Two other readings of eq. 31 are controls (sims/controls/broken_greedy_*.c,
 * through the reading hook sd_greedy_mode of sd_greedy.h): the joint taken
 * from the context after Y (Alg. 6 updates c on line 5 before modifying Mb
 * on line 6), and a per-token residual [Mb(x|.) - Ms(x|.)]+; and Alg. 4
 * without any modification, which Sun et al. 2025, App. C shows to be
 * biased (P(x_1 x_2 = BA) = 1/3 instead of 2/9 on the toy model).
 * `simdec check` flags all three; see tests/test_check.c.
 *
 * The iteration is cut into the sd_greedy_* pieces of sd_greedy.h
 * (sims/verifiers/sd_greedy.c), which the exact enumeration
 * (sims/exact/greedy_exact.c: the verifiers' exact and prefix_law slots)
 * runs as well, so that both compute the same targets. */
#include "../../src/sd_dist.h"
#include "../exact/sd_iter_laws.h"
#include "sd_greedy.h"

int sd_greedy_block_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                         size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    sd_greedy *st = state;
    size_t V = c->V, G = sd_draft_len(c, par, n);
    sd_greedy_enter(st, n);

    size_t tau = 0, y = prev, a0, L, drafted = G;
    for (size_t i = 0; i < G; i++) {
        L = sd_greedy_levels(st, c, i, n + i, y, st->D, &a0);
        const double *top = st->D + L * V, *p = sd_chain_p(c, n + i, y);
        if (i >= 1) { /* h_i from the targets at X^i */
            double num, den;
            sd_greedy_h(st, i, top, p, &num, &den);
            if (sd_stream_uniform(rng) * den < num)
                tau = i;
        }
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        out[i] = x;
        sd_greedy_extend(st, st->D, a0, L, i, x, p[x]);
        y = x;
        if (st->K[i + 1].a == 0.0) { /* p_j = 0 for all j > i: h_j = 0 */
            drafted = i + 1;
            break;
        }
    }
    if (drafted == G && sd_stream_uniform(rng) < sd_greedy_pG(st, G))
        tau = G; /* η_G < p_G (Alg. 4 line 13) */

    it->accepted = tau;
    it->emitted = tau;
    if (tau == G && n + G > c->T)
        return SD_OK; /* the block ends at the horizon: no bonus position */
    /* The token after X^τ: the bonus from Mb(.|X^G), or eq. 30's residual. */
    size_t ytau = tau ? out[tau - 1] : prev, pos = n + tau;
    L = sd_greedy_levels(st, c, tau, pos, ytau, st->D, &a0);
    const double *top = st->D + L * V, *p = sd_chain_p(c, pos, ytau);
    double m = sd_greedy_next_row(st, tau, tau == G, top, p, sd_chain_q(c, pos, ytau), st->w);
    size_t yv = sd_dist_sample(st->w, V, m, sd_stream_uniform(rng));
    if (tau < G)
        it->rejected = 1; /* Y from eq. 30's residual */
    out[tau] = yv;
    it->emitted = tau + 1;
    /* The emitted path X^τ, Y: the frames' ratios, and this iteration's
     * frame. */
    st->nf = sd_greedy_frames_after(st, n, G, tau, yv, p[yv], st->D, a0, top, st->fr);
    return SD_OK;
}

void sd_greedy_block_begin(void *state)
{
    ((sd_greedy *)state)->nf = 0;
}

void sd_greedy_block_free(void *state)
{
    sd_greedy_free(state);
}

/* greedy-block reads eq. 31 with the joint law from the iteration's start. */
SD_GREEDY_READING(SD_GREEDY_JOINT)

int sd_greedy_block_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return S_alloc(state, c, par, err);
}

const sd_param_decl sd_greedy_block_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

/* No law of one iteration for the DP of sims/exact/sd_exact_gen.h: the modified
 * target (Alg. 5, eq. 31) carries state from one iteration to the next, so
 * an iteration does not depend on (n, x_{n-1}) alone.  The exact and
 * prefix_law slots enumerate over that state instead. */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    (void)c, (void)par, (void)n, (void)prev, (void)out;
    return sd_error_set(err, SD_EUSAGE,
                        "greedy-block: its modified target carries state across iterations "
                        "(Sun et al. 2025, Alg. 5), so no exact DP over (position, x_{n-1})");
}

static const sd_kernel_type *const S_kernels[] = {&sd_greedy_kernel, NULL};

const sd_verifier_type sd_verifier_greedy_block = {
    .name = "greedy-block",
    .summary = "greedy block verification with distribution modification (Sun et al. 2025, App. C, Sun et al. 2024, Alg. 3)",
    SD_GREEDY_READING_SLOTS,
    .iteration_law = S_law,
    .kernels = S_kernels,
};
