/* test_kernel_numerics.c — the token kernel at the numerical edges: p = q,
 * vocabulary one, horizon one, tiny entries and zero target cells; suite
 * kernel_numerics. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_zipf.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

/* --- lockstep = scalar reference, and the driver's statistics ---------------- */

/* --- the law: Theorem 1, the finite-gamma DP, the generic verifier ------------ */

/* --- numerics ---------------------------------------------------------------------- */

Test(kernel_numerics, p_equals_q_never_rejects)
{
    /* p = q: the rejection outcomes have weight exactly 0 and are never
     * drawn; every iteration accepts all of its drafts. */
    double p[5] = {0.1, 0.0, 0.4, 0.2, 0.3};
    sd_chain *c = sd_chain_from_pq(p, p, 5, 20, NULL);
    sd_params par;
    sd_params_defaults(&par, NULL);
    sd_sim_opts so = {.seed = 3, .trials = 20000};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, NULL), SD_OK);
    cr_assert_eq(r.rejections.mean, 0.0);
    cr_assert_eq(r.rejections.m2, 0.0);
    cr_assert_eq(r.target_calls.mean, 1.0);
    cr_assert_eq(r.accept_hist[20], 20000.0);
    sd_sim_result_free(&r);
    par.gamma = 3; /* iterations of 3 drafts + a bonus: ceil(20/4) = 5 calls */
    cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, NULL), SD_OK);
    cr_assert_eq(r.rejections.mean, 0.0);
    cr_assert_eq(r.target_calls.mean, 5.0);
    cr_assert_eq(r.target_calls.m2, 0.0);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

Test(kernel_numerics, vocabulary_one_and_horizon_one)
{
    double one[1] = {1.0};
    const size_t Ts[] = {1, 5};
    for (size_t i = 0; i < 2; i++)
        for (size_t gamma = 0; gamma <= 1; gamma++) {
            sd_chain *c = sd_chain_from_pq(one, one, 1, Ts[i], NULL);
            sd_params par;
            sd_params_defaults(&par, NULL);
            par.gamma = gamma;
            sd_sim_opts so = {.seed = 1, .trials = 100, .want_positions = 1};
            sd_sim_result r;
            cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, NULL), SD_OK);
            cr_assert_str_eq(r.kernel, SD_SIM_KERNEL_TOKEN);
            double calls;
            sd_exact_token(c, gamma, NULL, &calls, NULL);
            cr_assert_eq(r.rejections.mean, 0.0);
            cr_assert_eq(r.target_calls.mean, calls, "T=%zu gamma %zu: %g vs %g", Ts[i], gamma,
                         r.target_calls.mean, calls);
            for (size_t n = 0; n < Ts[i]; n++)
                cr_assert_eq(r.pos_counts[n], 100.0);
            sd_sim_result_free(&r);
            sd_chain_free(c);
        }
}

Test(kernel_numerics, tiny_entries_and_zero_target_cells)
{
    /* 1e-300 entries: the law is still q (Theorem 1, 4 se); tokens of
     * target probability 0 (exact zeros) never appear at any position. */
    double p[3] = {1e-300, 0.6, 0.4}, q[3] = {0.5, 1e-300, 0.5};
    sd_chain *c = sd_chain_from_pq(p, q, 3, 10, NULL);
    cr_assert_not_null(c);
    tu_token_vs_exact(c, 0, 5, 20000);
    tu_token_vs_exact(c, 2, 6, 20000);
    sd_chain_free(c);
    sd_chain *cz = tu_zero3_chain();
    double Q[4 * 3];
    sd_exact_target_marginals(cz, Q);
    for (size_t gamma = 0; gamma <= 1; gamma++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.gamma = gamma;
        sd_sim_opts so = {.seed = 9, .trials = 30000, .want_positions = 1};
        sd_sim_result r;
        cr_assert_eq(sd_sim_run(&sd_verifier_token, cz, &par, &so, &r, NULL), SD_OK);
        for (size_t n = 1; n <= 3; n++)
            for (size_t b = 0; b < 3; b++)
                if (Q[n * 3 + b] == 0.0)
                    cr_assert_eq(r.pos_counts[(n - 1) * 3 + b], 0.0, "x_%zu = %zu has target probability 0", n, b);
        cr_expect_lt(sd_sim_position_tv(&r, cz), 0.02);
        sd_sim_result_free(&r);
    }
    sd_chain_free(cz);
}
