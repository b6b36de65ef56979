/* test_kernel_limits.c — the token kernel's memory bound: tables over the
 * bound are refused and run falls back to the step; suite kernel_limits. */
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

/* --- memory bound ------------------------------------------------------------------ */

Test(kernel_limits, tables_over_the_bound_are_refused_and_run_falls_back)
{
    sd_chain *c = tu_chain_alpha(7, 50, 10, 1.0);
    cr_assert_eq(sd_token_plan_bytes(c), (size_t)(50 * 7 + 1) * 16 * 8 + 50 * 7 * 8); /* tables + tv */
    sd_params par;
    sd_params_defaults(&par, NULL);
    sd_token_plan *plan = NULL;
    sd_error e;
    cr_assert_eq(sd_token_plan_new(c, &par, SD_TOKEN_EXACT, 4096, 1, &plan, &e), SD_ETOOBIG);
    cr_assert_null(plan);
    cr_assert(strstr(e.msg, "limit 4096") != NULL && strstr(e.msg, "47728 bytes") != NULL, "%s", e.msg);
    sd_sim_opts so = {.seed = 2, .trials = 3000, .kernel_max_bytes = 4096};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, NULL), SD_OK);
    cr_assert_str_eq(r.kernel, SD_SIM_KERNEL_TOO_BIG);
    sd_sim_result_free(&r);
    /* a vocabulary whose tables cannot even be counted */
    c->V = (size_t)1 << 40;
    cr_assert_eq(sd_token_plan_bytes(c), SIZE_MAX);
    c->V = 7;
    sd_chain_free(c);
}
