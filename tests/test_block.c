/* test_block.c — block and greedy-block verification against exact values
 * (Sun et al. 2025, §2, eq. 9, Lemma 9).
 *
 * Monte-Carlo tolerances are 4 standard errors: a correct simulator fails a
 * given comparison with probability ~6e-5, and the seeds are fixed, so a
 * failure is a finding, not noise. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "../sims/verifiers/sd_block.h"
#include "../sims/verifiers/sd_greedy.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact_accept.h"
#include "test_exact_util.h"

extern const sd_verifier_type sd_verifier_token;
extern const sd_verifier_type sd_verifier_block;
extern const sd_verifier_type sd_verifier_greedy_block;

#define S_TOL 4.0 /* standard errors */

/* The first iteration of `trials` trials, as sd_sim_trial runs it (stream
 * (seed, t), x_0 ~ init, begin, one step at n = 1): the mean accepted
 * length in *w and, in ccdf[l-1] (l = 1..gamma), the fraction of trials
 * with at least l accepted. */
static void S_first_iteration(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                              uint64_t seed, uint64_t trials, sd_welford *w, double *ccdf,
                              size_t gamma)
{
    void *state = NULL;
    sd_error err;
    cr_assert_eq(vt->alloc(&state, c, par, &err), SD_OK, "%s", err.msg);
    size_t *out = malloc((c->T + 1) * sizeof *out);
    sd_welford_init(w);
    for (size_t l = 0; l < gamma; l++)
        ccdf[l] = 0.0;
    for (uint64_t t = 0; t < trials; t++) {
        sd_stream rng;
        sd_stream_init(&rng, seed, t);
        size_t x0 = sd_dist_sample(c->init, c->V, 1.0, sd_stream_uniform(&rng));
        if (vt->begin)
            vt->begin(state);
        sd_iter it = {0, 0, 0, 1, NAN};
        cr_assert_eq(vt->step(state, c, par, &rng, 1, x0, out, &it, &err), SD_OK, "%s", err.msg);
        sd_welford_add(w, (double)it.accepted);
        for (size_t l = 1; l <= it.accepted && l <= gamma; l++)
            ccdf[l - 1] += 1.0 / (double)trials;
    }
    free(out);
    if (vt->free)
        vt->free(state);
}

/* E[τ] and P(τ >= l) of the first iteration, x_0 ~ init. */
static void S_exact_first(const sd_chain *c, size_t gamma, double expected[SD_ACCEPT_NALGO],
                          double *ccdf)
{
    double e[SD_ACCEPT_NALGO], *cc = malloc(SD_ACCEPT_NALGO * gamma * sizeof *cc);
    for (int a = 0; a < SD_ACCEPT_NALGO; a++)
        expected[a] = 0.0;
    for (size_t l = 0; l < SD_ACCEPT_NALGO * gamma; l++)
        ccdf[l] = 0.0;
    for (size_t x0 = 0; x0 < c->V; x0++) {
        sd_error err;
        cr_assert_eq(sd_exact_accept_length(c, 1, x0, gamma, e, cc, &err), SD_OK, "%s", err.msg);
        for (int a = 0; a < SD_ACCEPT_NALGO; a++)
            expected[a] += c->init[x0] * e[a];
        for (size_t l = 0; l < SD_ACCEPT_NALGO * gamma; l++)
            ccdf[l] += c->init[x0] * cc[l];
    }
    free(cc);
}

/* Each verifier's first-iteration mean within S_TOL se of `exact[]`, and
 * its CCDF P(τ >= l) within S_TOL binomial se. */
static void S_check_first(const sd_chain *c, size_t gamma, uint64_t seed, uint64_t trials,
                          const double *want, const double *want_ccdf)
{
    const sd_verifier_type *vts[SD_ACCEPT_NALGO] = {&sd_verifier_token, &sd_verifier_block,
                                                    &sd_verifier_greedy_block};
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    for (int a = 0; a < SD_ACCEPT_NALGO; a++) {
        sd_welford w;
        double ccdf[16];
        cr_assert(gamma <= 16);
        S_first_iteration(vts[a], c, &par, seed, trials, &w, ccdf, gamma);
        double se = sd_welford_stderr(&w);
        cr_expect(fabs(w.mean - want[a]) < S_TOL * se, "%s: mean accepted %.5f, exact %.5f (se %.5f)",
                  vts[a]->name, w.mean, want[a], se);
        for (size_t l = 0; l < gamma && want_ccdf; l++) {
            double pr = want_ccdf[a * gamma + l];
            double sep = sqrt(pr * (1.0 - pr) / (double)trials) + 1e-12;
            cr_expect(fabs(ccdf[l] - pr) < S_TOL * sep, "%s: P(tau >= %zu) %.5f, exact %.5f (se %.5f)",
                      vts[a]->name, l + 1, ccdf[l], pr, sep);
        }
    }
}

/* The toy model of Sun et al. 2025, §2 at γ = 2: 10/9 (token), 11/9 (block), 12/9
 * (greedy block = full information).  T = 3 leaves room for the bonus. */
Test(block, toy_model_10_11_12_ninths)
{
    sd_chain *c = tx_toy_chain(3);
    const double want[SD_ACCEPT_NALGO] = {10.0 / 9.0, 11.0 / 9.0, 12.0 / 9.0};
    double exact[SD_ACCEPT_NALGO], ccdf[SD_ACCEPT_NALGO * 2];
    S_exact_first(c, 2, exact, ccdf);
    for (int a = 0; a < SD_ACCEPT_NALGO; a++)
        cr_assert_float_eq(exact[a], want[a], 1e-12);
    S_check_first(c, 2, 11, 100000, want, ccdf);
    sd_chain_free(c);
}

/* A nonstationary random chain with zeros in both models: the first iteration's E[τ] and CCDF
 * against the enumeration of sd_exact_accept_length (eq. 9, Lemma 9). */
Test(block, first_iteration_exact_random_chain)
{
    sd_chain *c = tx_random_chain(3, 8, 0, 0.25, 5);
    double exact[SD_ACCEPT_NALGO], ccdf[SD_ACCEPT_NALGO * 4];
    S_exact_first(c, 4, exact, ccdf);
    cr_assert(exact[0] <= exact[1] + 1e-12 && exact[1] <= exact[2] + 1e-12,
              "token %.6f <= block %.6f <= full %.6f", exact[0], exact[1], exact[2]);
    S_check_first(c, 4, 12, 60000, exact, ccdf);
    sd_chain_free(c);
}

/* Mean target calls per trial of vt. */
static sd_welford S_calls(const sd_verifier_type *vt, const sd_chain *c, size_t gamma,
                          uint64_t seed, uint64_t trials)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    sd_sim_opts so = {.seed = seed, .trials = trials, .threads = 1};
    sd_sim_result r;
    sd_error err;
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
    sd_welford w = r.target_calls;
    sd_sim_result_free(&r);
    return w;
}

/* Sun et al. 2025, Theorem 2: block verification never needs more target calls than
 * token verification.  Independent runs: the difference has se
 * sqrt(se_b² + se_t²). */
Test(block, block_never_more_calls_than_token)
{
    struct { sd_chain *c; size_t gamma; } cases[3] = {
        {tx_toy_chain(20), 2}, {tx_random_chain(3, 20, 0, 0.25, 3), 3}, {tx_random_chain(5, 20, 0, 0.0, 4), 0}};
    for (int i = 0; i < 3; i++) {
        sd_welford b = S_calls(&sd_verifier_block, cases[i].c, cases[i].gamma, 21, 8000);
        sd_welford t = S_calls(&sd_verifier_token, cases[i].c, cases[i].gamma, 21, 8000);
        double se = sqrt(pow(sd_welford_stderr(&b), 2) + pow(sd_welford_stderr(&t), 2));
        cr_expect(b.mean <= t.mean + S_TOL * se, "case %d: block %.4f > token %.4f (se %.4f)", i,
                  b.mean, t.mean, se);
        sd_chain_free(cases[i].c);
    }
}

/* The acceptance test: at γ = 6 on a random 7-token chain (the
 * default generated model, T = 50), block verification saves target calls
 * over token verification by more than S_TOL se. */
Test(block, block_saves_calls_gamma6_v7)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp); /* V = 7, T = 50 */
    sd_error err;
    sd_chain *c = sd_chain_generate(&gp, &err);
    cr_assert_not_null(c, "%s", err.msg);
    sd_welford b = S_calls(&sd_verifier_block, c, 6, 31, 6000);
    sd_welford t = S_calls(&sd_verifier_token, c, 6, 31, 6000);
    double se = sqrt(pow(sd_welford_stderr(&b), 2) + pow(sd_welford_stderr(&t), 2));
    cr_expect(t.mean - b.mean > S_TOL * se, "token %.4f - block %.4f = %.4f, se %.4f", t.mean, b.mean,
              t.mean - b.mean, se);
    sd_chain_free(c);
}

/* Every emitted count is valid up to the horizon end (no bonus position
 * past T) for horizons shorter than, equal to and longer than γ; the
 * driver checks emitted <= T-n+1 and returns SD_EINTERNAL otherwise. */
Test(block, horizon_end_every_gamma)
{
    const sd_verifier_type *vts[] = {&sd_verifier_block, &sd_verifier_greedy_block,
                                     &sd_verifier_broken_greedy_after_y,
                                     &sd_verifier_broken_greedy_tokenwise,
                                     &sd_verifier_broken_greedy_unmodified};
    for (size_t T = 1; T <= 5; T++) {
        sd_chain *c = tx_random_chain(3, T, 0, 0.25, 7);
        for (size_t g = 0; g <= 4; g++)
            for (size_t v = 0; v < sizeof vts / sizeof *vts; v++) {
                sd_params par;
                sd_params_defaults(&par, NULL);
                par.gamma = g;
                sd_sim_opts so = {.seed = 3, .trials = 500, .threads = 1};
                sd_sim_result r;
                sd_error err;
                cr_assert_eq(sd_sim_run(vts[v], c, &par, &so, &r, &err), SD_OK, "%s T=%zu g=%zu: %s",
                             vts[v]->name, T, g, err.msg);
                sd_sim_result_free(&r);
            }
        sd_chain_free(c);
    }
}

/* greedy-block keeps (G+1)·G path ratios: a horizon of 5000 with the
 * default lookahead is refused before allocating, a finite --gamma is not. */
Test(block, greedy_refuses_huge_lookahead)
{
    sd_chain *c = tx_toy_chain(5000);
    sd_params par;
    sd_params_defaults(&par, NULL);
    void *state = NULL;
    sd_error err;
    cr_assert_eq(sd_verifier_greedy_block.alloc(&state, c, &par, &err), SD_ETOOBIG);
    cr_assert(state == NULL);
    par.gamma = 8;
    cr_assert_eq(sd_verifier_greedy_block.alloc(&state, c, &par, &err), SD_OK, "%s", err.msg);
    sd_verifier_greedy_block.free(state);
    sd_chain_free(c);
}
