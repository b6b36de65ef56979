/* sd_paired.h — the output-first path: lossless verifiers simulated from
 * the tokens they output, so that several verifiers can share them
 * (`run --algo A,B --paired`).
 *
 * A lossless verifier outputs the target chain: x_0 ~ init,
 * x_t ~ q_t(.|x_{t-1}).  What differs between verifiers is only where
 * their iterations end, and for token-level SD and block verification the
 * law of that, GIVEN the output x, has a closed form.  For an iteration
 * that starts at position n with G drafts, let z_j = x_{n+j-1} and
 *     r_j = p(z_j|z_{j-1}) / q(z_j|z_{j-1})   (at position n+j-1; q > 0 on x),
 *     ρ_l = Π_{j<=l} r_j = p(z^l)/q(z^l).
 * Then the number τ of drafts it accepts satisfies, for 0 <= l <= G,
 *     token-level SD:      P(τ >= l | x) = Π_{j<=l} min(1, r_j),
 *     block verification:  P(τ >= l | x) = M_l = min_{0<=k<=l} ρ_k.
 * Token: given its drafts, each is accepted w.p. min(1, q/p), so
 * P(τ >= l, X^l = z^l) = Π min(p, q)(z_j), and the output after an
 * accepted prefix is a fresh lossless continuation; divide by q(z^l).
 * Block (Sun et al. 2025, Alg. 2, eqs. 3-5): P(τ >= l, X^l = x^l) =
 * p(x^l) p_l(x^l) (the summand of its expected accepted length), and with
 * p_l = min(1, p_{l-1} q/p) this is A_l = min(p(x^l), A_{l-1} q(x_l|x^{l-1}))
 * = min_k p(x^k) q(x_{k+1..l}|x^k); dividing by q(x^l) gives M_l.  That the
 * event τ >= l is independent of the output after position n+l-1 given
 * x^l was checked by enumerating every draft block, coin and residual for
 * V <= 4, G <= 3, with a bonus position and at the horizon (error < 4e-16;
 * the test `paired/block_given_output_is_the_min_of_prefix_ratios` repeats
 * it).  The iteration ends at position n+τ: with a token from the residual
 * (a rejection) when τ < G, else with the bonus (τ = G, n+G <= T) or at
 * the horizon.
 *
 * Both laws are sequential: the iteration accepts its l-th draft, given
 * that it accepted the first l-1, with probability a(s, r_l), where the
 * verifier's state s starts at 1 (sd_verifier_type.given_output):
 *     token:  a = min(1, r),      s unchanged;
 *     block:  a = min(1, s r),    s <- max(1, s r)   (s = ρ_l / M_l).
 *
 * The path.  Trial i of run `seed` reads its stream (seed, i) (src/sd_rng.h):
 * uniform 0 draws x_0 from init and uniform t draws x_t from q_t(.|x_{t-1})
 * (t = 1..T).  Given x, the iterations form a Markov chain over the
 * states (s, drafts left) of the iterations open at each position; the
 * forward pass computes alpha_t(state, k), the probability of each state
 * entering t with k rejections before t.  Uniform T+1, U, then draws the
 * trial's number of rejections N = F^{-1}(U | x) from its exact law given
 * x, and uniforms T+2, ..., 2T+1 draw the states and events at T, T-1,
 * ..., 1 given (x, N) backwards (each ∝ alpha_{t}(i, k) · P(i -> the state
 * drawn after it)).  So (x, N, iterations) has the verifier's law exactly,
 * for any U independent of x.  Every verifier on this path outputs the
 * SAME x and uses the SAME U in a trial: their rejection counts are
 * comonotone given x — the coupling that minimises the variance of their
 * difference given x.  (A shared coin per position instead, v_t accepting
 * iff v_t < a, gives the same laws but only 2.3x on the default chain:
 * docs/findings.md.)  Cost: the forward pass is O(Σ_t |L_t| · t) per trial
 * with |L_t| <= min(t, G+1) open iterations; plans whose tables would pass
 * 2^23 cells (about T = 200 at full lookahead) are refused (SD_ETOOBIG).
 *
 * Rao-Blackwellisation given the output.  Given x the iteration structure
 * is a Markov chain over (s, drafts left) and can be filtered exactly:
 * E[N_rej | x] and E[target calls | x] are computed along with the plain
 * counts (the trial's rb_rejections and rb_target_calls).  Their
 * expectations are E[N_rej] and E[target calls]; as both verifiers see the
 * same x, their difference is far less variable than either. */
#ifndef SD_PAIRED_H
#define SD_PAIRED_H

#include "sd_verifier.h"

/* The rules a(s, r) above (sd_verifier_type.given_output). */
double sd_paired_token_rule(double *s, double r);
double sd_paired_block_rule(double *s, double r);

/* Deliberately broken variants, for tests: they must be caught. */
enum {
    SD_PAIRED_BUG_REUSE_DRAW = 1u << 0 /* U is the uniform that drew x_T */
};

/* The plan for vt with parameters par on model m: SD_EUSAGE (message set
 * when err is not NULL) when the path does not apply — no rule, a lossy
 * verifier at par, or a model without stored rows; SD_ETOOBIG when the
 * filter's tables would be too large.  m and par must outlive
 * the plan.  Free with sd_paired_kernel.plan_free. */
int sd_paired_plan_new(void **plan, const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                       unsigned bugs, sd_error *err);

/* The path as a kernel of the trial engine (sd_sim_opts.coupled): feeds
 * statistics, per-trial records (with rb_rejections, rb_target_calls),
 * the Rao-Blackwellised rejections, positions and tokens of horizon runs.
 * Its plan_new refuses (it needs the verifier: sd_paired_plan_new). */
extern const sd_kernel_type sd_paired_kernel;
#define SD_PAIRED_KERNEL_NAME "output-first"

#endif
