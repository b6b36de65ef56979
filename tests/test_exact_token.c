/* test_exact_token.c — Theorem 1 (Yin et al.) and the finite-γ DP of
 * token-level speculative decoding against each other and against
 * Monte-Carlo; suite exact_token. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_rng.h"
#include "../src/sd_stats.h"

extern const sd_verifier_type sd_verifier_token;

/* --- Theorem 1 ---------------------------------------------------------- */

Test(exact_token, token_dp_equals_theorem1_at_full_lookahead)
{
    /* Two independent evaluations: Theorem 1's sum over marginals and the
     * DP over (x_{n-1}, accepted-so-far) at γ = rest of horizon. */
    for (unsigned long seed = 1; seed <= 5; seed++) {
        sd_gen_params gp;
        sd_gen_defaults(&gp);
        gp.seed = seed;
        gp.V = 3 + seed;
        gp.T = 10 * seed;
        gp.alpha = 0.2 * (double)seed;
        sd_chain *c = sd_chain_generate(&gp, NULL);
        double t1, dp, calls, dp_calls;
        sd_exact_rejections(c, &t1, NULL);
        sd_exact_token(c, 0, NULL, &calls, NULL);
        sd_exact_token_dp(c, 0, &dp, &dp_calls, NULL);
        cr_assert(fabs(t1 - dp) <= 1e-12 * t1, "seed %lu: %.17g vs %.17g", seed, t1, dp);
        cr_assert(fabs(calls - dp_calls) <= 1e-12 * calls, "seed %lu: calls %.17g vs %.17g", seed, calls,
                  dp_calls);
        sd_chain_free(c);
    }
}

/* Monte-Carlo of token-level SD against the exact values.  Tolerance: 4
 * standard errors — for a correct simulator each check fails with
 * probability ~6e-5 (normal approximation, trials >= 20000), while a bias
 * of a few percent of E[N_rej] is many standard errors at these counts. */
static void S_mc_vs_exact(const sd_chain *c, size_t gamma, uint64_t seed, uint64_t trials)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    sd_sim_opts so = {.seed = seed, .trials = trials};
    sd_sim_result r;
    sd_error e;
    cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, &e), SD_OK, "%s", e.msg);
    double rej, calls;
    sd_exact_token(c, gamma, &rej, &calls, NULL);
    double se = sd_welford_stderr(&r.rejections), sec = sd_welford_stderr(&r.target_calls);
    cr_expect(fabs(r.rejections.mean - rej) < 4.0 * se, "gamma %zu: rejections %.6f vs exact %.6f (se %.6f)",
              gamma, r.rejections.mean, rej, se);
    cr_expect(fabs(r.target_calls.mean - calls) < 4.0 * sec, "gamma %zu: calls %.6f vs exact %.6f (se %.6f)",
              gamma, r.target_calls.mean, calls, sec);
    sd_sim_result_free(&r);
}

Test(exact_token, theorem1_against_monte_carlo_several_chains)
{
    for (unsigned long seed = 10; seed < 13; seed++) {
        sd_gen_params gp;
        sd_gen_defaults(&gp);
        gp.seed = seed;
        gp.alpha = seed == 11 ? 0.1 : 1.0; /* sparse rows: many near-zeros */
        sd_chain *c = sd_chain_generate(&gp, NULL);
        S_mc_vs_exact(c, 0, seed, 20000);
        sd_chain_free(c);
    }
}

Test(exact_token, finite_gamma_dp_against_monte_carlo)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.T = 30;
    sd_chain *c = sd_chain_generate(&gp, NULL);
    S_mc_vs_exact(c, 1, 5, 20000);
    S_mc_vs_exact(c, 4, 6, 20000);
    sd_chain_free(c);
}

Test(exact_token, zeros_and_nonuniform_init)
{
    /* Exact zeros in rows, target mass where the draft has none and the
     * reverse, a non-uniform init, nonstationary steps. */
    const char *txt = "{\"format\":\"simdec-chain-1\",\"vocab\":3,\"horizon\":3,"
                      "\"init\":[0.7,0.3,0],"
                      "\"draft\":[[[1,0,0],[0.5,0.5,0],[0,0,1]],[[0.2,0.8,0],[0,1,0],[0.3,0.3,0.4]],[[0,0,1],[1,0,0],[0.1,0.1,0.8]]],"
                      "\"target\":[[[0,1,0],[0.5,0.5,0],[0,0.5,0.5]],[[0.2,0.8,0],[0,0,1],[1,0,0]],[[0,0.5,0.5],[0.3,0.3,0.4],[0.1,0.1,0.8]]]}";
    sd_chain *c = NULL;
    sd_error e;
    cr_assert_eq(sd_chain_load_string(txt, "mem", &c, &e), SD_OK, "%s", e.msg);
    S_mc_vs_exact(c, 0, 3, 40000);
    S_mc_vs_exact(c, 1, 4, 40000);
    sd_chain_free(c);
}
