/* test_backoff_block_underflow.c — block verification's sparse-row kernel
 * (sims/kernels/kernel_backoff.c, S_block_trial) where p_i reaches 0.
 *
 * A hand-written bigram whose seen pairs a b, b a, a a, b b have log10
 * probability -99, which the ARPA reader takes for probability 0: against
 * a unigram draft of about 0.25, q_{x_{i-1}}(x_i) = 0 and so
 * p_i = min(1, p_{i-1} q / p) = 0 at any such pair.  The kernel then
 * stops the block at that position and replays its stream to just after
 * x_i; its rejections and target calls must still agree with block
 * verification's exact values on the same rows stored as a chain (within 4
 * standard errors, fixed seeds; a false alarm of 6e-5 per comparison), at
 * γ = 4, 8 and the horizon. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../src/sd_arpa.h"
#include "../src/sd_backoff.h"
#include "tu_lm.h"
#include "../src/sd_chain.h"
#include "../src/sd_model.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"

static const char S_lm[] = "\\data\\\n"
                           "ngram 1=6\n"
                           "ngram 2=9\n"
                           "\n"
                           "\\1-grams:\n"
                           "-99 <s> -0.2\n"
                           "-0.5 a -0.3\n"
                           "-0.6 b -0.3\n"
                           "-0.7 c -0.1\n"
                           "-0.9 d -0.2\n"
                           "-0.8 </s>\n"
                           "\n"
                           "\\2-grams:\n"
                           "-0.3 <s> a\n"
                           "-0.4 <s> b\n"
                           "-99 a b\n"
                           "-99 b a\n"
                           "-99 a a\n"
                           "-99 b b\n"
                           "-0.1 a c\n"
                           "-0.2 c d\n"
                           "-0.3 d </s>\n"
                           "\n"
                           "\\end\\\n";

static sd_backoff *S_model(size_t T)
{
    sd_arpa *a = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(S_lm, "underflow.arpa", 0, &a, &err), SD_OK, "%s", err.msg);
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(a, 2, a, T, 0, &m, &err), SD_OK, "%s", err.msg);
    sd_arpa_free(a);
    return m;
}

/* The smallest number of steps along a constant token x, from any
 * context, after which p_i is exactly 0 in the kernel's arithmetic (0 if
 * none within 8). */
static size_t S_steps_to_zero(const sd_backoff *m)
{
    size_t best = 0;
    for (size_t a = 0; a < m->V; a++)
        for (size_t x = 0; x < m->V; x++) {
            double pi = 1.0;
            size_t prev = a;
            for (size_t i = 1; i <= 8 && m->p[x] > 0.0; i++) {
                double num = pi * sd_backoff_q(m, prev, x);
                pi = num >= m->p[x] ? 1.0 : num / m->p[x];
                if (pi == 0.0) {
                    best = best && best <= i ? best : i;
                    break;
                }
                prev = x;
            }
        }
    return best;
}

static void S_mc(size_t gamma, size_t T, uint64_t seed)
{
    sd_backoff *m = S_model(T);
    sd_chain *c = tu_lm_stored(m);
    const sd_verifier_type *vt = sd_verifier_find("block");
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    sd_model sparse = sd_model_of_backoff(m, m->V, m->T), stored = sd_model_of_chain(c);
    sd_exact_values ex;
    sd_error err;
    cr_assert_eq(vt->exact ? vt->exact(&stored, &par, &ex, &err) : sd_exact_gen_values(vt, &stored, &par, &ex, &err),
                 SD_OK, "%s", err.msg);
    sd_sim_opts so = {.seed = seed, .trials = 40000, .threads = 2};
    sd_sim_result res;
    memset(&res, 0, sizeof res);
    sd_sim_job job = {vt, &sparse, &par};
    cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
    cr_assert_str_eq(res.kernel, "block-backoff");
    double zr = (res.rejections.mean - ex.rejections) / sd_welford_stderr(&res.rejections);
    double zc = (res.target_calls.mean - ex.target_calls) / sd_welford_stderr(&res.target_calls);
    cr_log_info("gamma %zu T %zu: rejections %.5f vs exact %.5f (z %.2f), calls %.5f vs %.5f (z %.2f)", gamma, T,
                res.rejections.mean, ex.rejections, zr, res.target_calls.mean, ex.target_calls, zc);
    cr_expect_lt(fabs(zr), 4.0, "gamma %zu T %zu: rejections z = %.2f", gamma, T, zr);
    cr_expect_lt(fabs(zc), 4.0, "gamma %zu T %zu: calls z = %.2f", gamma, T, zc);
    sd_sim_result_free(&res);
    sd_chain_free(c);
    sd_backoff_free(m);
}

Test(backoff_block_underflow, the_model_has_p_i_zero)
{
    sd_backoff *m = S_model(10);
    size_t k = S_steps_to_zero(m);
    cr_assert_eq(k, 1, "p_i first reaches 0 after %zu steps", k);
    sd_backoff_free(m);
}

Test(backoff_block_underflow, kernel_agrees_with_exact, .timeout = 120)
{
    S_mc(4, 10, 21);
    S_mc(8, 10, 22);
    S_mc(0, 8, 23);
}
