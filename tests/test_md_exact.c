/* test_md_exact.c — the exact iteration laws of the multi-draft verifiers
 * of engines and of 2024–25 papers (onehot, strict, gumbel, gumbel-list,
 * khisti, hu-greedy) and of their controls:
 *   - lossless exactly: the TV of the law of x_1..x_3 to the target's is
 *     below 1e-12 (`check --exact`), on a dense chain and on a chain with
 *     zeros; each control's is above 1e-3;
 *   - Monte-Carlo (fixed seeds, what `run` executes) agrees with the exact
 *     DP's rejections and target calls within 4 standard errors (a correct
 *     pair fails with probability 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <math.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "test_util.h"

static const tu_conf S_lossless[] = {
    {"onehot", {"k", "gamma"}, {1, 2}, NULL},
    {"onehot", {"k", "gamma"}, {3, 2}, NULL},
    {"strict", {"k", "gamma"}, {1, 2}, NULL},
    {"strict", {"k", "gamma"}, {3, 2}, NULL},
};
#define S_NLOSSLESS (sizeof S_lossless / sizeof *S_lossless)

static const tu_conf S_broken[] = {
    {"broken-onehot", {"k", "gamma"}, {1, 2}, NULL},
    {"broken-onehot", {"k", "gamma"}, {3, 2}, NULL},
};
#define S_NBROKEN (sizeof S_broken / sizeof *S_broken)

static double S_tv(const tu_conf *cf, const sd_chain *c)
{
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, cf);
    double tv = NAN;
    sd_error err;
    cr_assert_eq(sd_exact_gen_prefix_tv(vt, c, &par, 3, 1u << 20, &tv, &err), SD_OK, "%s: %s",
                 cf->algo, err.msg);
    return tv;
}

Test(md_exact, lossless_to_1e_12)
{
    sd_chain *cs[2] = {tu_chain(5, 4, 31), tu_zero_chain(4, 4, 7)};
    for (size_t j = 0; j < 2; j++) {
        cr_assert_not_null(cs[j]);
        for (size_t i = 0; i < S_NLOSSLESS; i++) {
            double tv = S_tv(&S_lossless[i], cs[j]);
            cr_expect(tv <= 1e-12, "%s %s=%g %s=%g on chain %zu: exact TV %.3g", S_lossless[i].algo,
                      S_lossless[i].name[0], S_lossless[i].value[0], S_lossless[i].name[1],
                      S_lossless[i].value[1], j, tv);
        }
        for (size_t i = 0; i < S_NBROKEN; i++) {
            double tv = S_tv(&S_broken[i], cs[j]);
            cr_expect(tv > 1e-3, "control %s on chain %zu: exact TV %.3g", S_broken[i].algo, j, tv);
        }
        sd_chain_free(cs[j]);
    }
}

static void S_agree(const tu_conf *cf, const sd_chain *c, unsigned long seed)
{
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, cf);
    double rej, calls;
    sd_error err;
    cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s: %s", vt->name, err.msg);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {0};
    o.seed = seed;
    o.trials = 40000;
    o.threads = 1;
    sd_sim_result res = {0};
    cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    double se_r = sd_welford_stderr(&res.rejections), se_c = sd_welford_stderr(&res.target_calls);
    cr_expect(fabs(res.rejections.mean - rej) < 4 * se_r + 1e-12,
              "%s %s=%g: rejections %.6f vs exact %.6f (se %.2g)", vt->name, cf->name[0],
              cf->value[0], res.rejections.mean, rej, se_r);
    cr_expect(fabs(res.target_calls.mean - calls) < 4 * se_c + 1e-12,
              "%s %s=%g: target calls %.6f vs exact %.6f (se %.2g)", vt->name, cf->name[0],
              cf->value[0], res.target_calls.mean, calls, se_c);
    sd_sim_result_free(&res);
}

Test(md_exact, monte_carlo_agrees_with_the_exact_law)
{
    sd_chain *c = tu_chain(6, 12, 41);
    cr_assert_not_null(c);
    for (size_t i = 0; i < S_NLOSSLESS; i++)
        S_agree(&S_lossless[i], c, 900 + i);
    for (size_t i = 0; i < S_NBROKEN; i++)
        S_agree(&S_broken[i], c, 950 + i);
    sd_chain_free(c);
}
