/* test_kernel_token_law.c — the token kernel's law against Theorem 1, the
 * finite-γ DP, the generic verifier and the target joint law,
 * statistically; suite kernel_token_law. */
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

/* --- the law: Theorem 1, the finite-gamma DP, the generic verifier ------------ */

/* A homogeneous draft (one matrix) with a target that changes every step,
 * and the reverse: the kernel reads each side with its own stride. */
static sd_chain *S_mixed_chain(int draft_homogeneous)
{
    static const char *const one = "[[0.6,0.3,0.1],[0.2,0.5,0.3],[0.1,0.1,0.8]]";
    static const char *const three = "[[[0.1,0.2,0.7],[0.6,0.2,0.2],[0.3,0.4,0.3]],"
                                     "[[0.2,0.2,0.6],[0.5,0.4,0.1],[0.7,0.2,0.1]],"
                                     "[[0.3,0.3,0.4],[0.1,0.8,0.1],[0.2,0.3,0.5]]]";
    char txt[1024];
    snprintf(txt, sizeof txt,
             "{\"format\":\"simdec-chain-1\",\"vocab\":3,\"horizon\":3,\"init\":[0.5,0.3,0.2],"
             "\"draft\":%s,\"target\":%s}",
             draft_homogeneous ? one : three, draft_homogeneous ? three : one);
    sd_chain *c = NULL;
    sd_error e;
    cr_assert_eq(sd_chain_load_string(txt, "mem", &c, &e), SD_OK, "%s", e.msg);
    cr_assert_eq(c->draft_steps, draft_homogeneous ? 1u : 3u);
    cr_assert_eq(c->target_steps, draft_homogeneous ? 3u : 1u);
    return c;
}

Test(kernel_token_law, rejections_and_calls_match_theorem1_and_the_dp)
{
    sd_chain *m1 = S_mixed_chain(1), *m2 = S_mixed_chain(0);
    tu_token_vs_exact(m1, 0, 31, 40000);
    tu_token_vs_exact(m1, 1, 32, 40000);
    tu_token_vs_exact(m2, 0, 33, 40000);
    tu_token_vs_exact(m2, 1, 34, 40000);
    sd_chain_free(m1);
    sd_chain_free(m2);
    sd_chain *c7 = tu_chain_alpha(7, 50, 10, 1.0), *cs = tu_chain_alpha(6, 30, 11, 0.1), *c256 = tu_chain_alpha(256, 8, 3, 1.0);
    sd_chain *cz = tu_zero3_chain(), *c1 = tu_chain_alpha(5, 1, 4, 1.0);
    tu_token_vs_exact(c7, 0, 21, 20000);
    tu_token_vs_exact(c7, 1, 22, 20000);
    tu_token_vs_exact(c7, 4, 23, 20000);
    tu_token_vs_exact(cs, 0, 24, 20000);
    tu_token_vs_exact(cs, 3, 25, 20000);
    tu_token_vs_exact(c256, 0, 26, 20000);
    tu_token_vs_exact(c256, 2, 27, 20000);
    tu_token_vs_exact(cz, 0, 28, 40000);
    tu_token_vs_exact(cz, 1, 29, 40000);
    tu_token_vs_exact(c1, 0, 30, 20000); /* T = 1 */
    sd_chain_free(c7);
    sd_chain_free(cs);
    sd_chain_free(c256);
    sd_chain_free(cz);
    sd_chain_free(c1);
}

/* Two-sample chi-square test of homogeneity of two histograms (cells with
 * a pooled count below 10 are merged into one); returns the p-value. */
static double S_homogeneity(const double *a, const double *b, size_t n)
{
    double na = 0.0, nb = 0.0;
    for (size_t j = 0; j < n; j++) {
        na += a[j];
        nb += b[j];
    }
    double chi2 = 0.0, pa = 0.0, pb = 0.0;
    size_t cells = 0;
    for (size_t j = 0; j <= n; j++) {
        double x = j < n ? a[j] : 0.0, y = j < n ? b[j] : 0.0;
        if (j < n && x + y < 10.0) { /* pooled */
            pa += x;
            pb += y;
            continue;
        }
        if (j == n) {
            x = pa;
            y = pb;
            if (x + y == 0.0)
                break;
        }
        double tot = x + y, ea = tot * na / (na + nb), eb = tot * nb / (na + nb);
        chi2 += (x - ea) * (x - ea) / ea + (y - eb) * (y - eb) / eb;
        cells++;
    }
    return cells < 2 ? 1.0 : gsl_cdf_chisq_Q(chi2, (double)(cells - 1));
}

Test(kernel_token_law, accepted_length_distribution_matches_the_generic_verifier)
{
    /* The per-iteration histogram of accepted drafts (and so the iteration
     * count) of the kernel and of the mechanistic verifier (the driver's
     * generic option), 30000 trials each, fixed seeds: a correct kernel
     * fails with probability 1e-3 per comparison. */
    sd_chain *c = tu_chain_alpha(7, 40, 10, 1.0), *cz = tu_zero3_chain();
    const struct {
        const sd_chain *c;
        size_t gamma;
    } cases[] = {{c, 0}, {c, 3}, {cz, 0}, {cz, 1}};
    for (size_t i = 0; i < 4; i++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.gamma = cases[i].gamma;
        sd_sim_opts so = {.seed = 40 + i, .trials = 30000};
        sd_sim_result k, g;
        cr_assert_eq(sd_sim_run(&sd_verifier_token, cases[i].c, &par, &so, &k, NULL), SD_OK);
        so.generic = 1;
        so.seed = 50 + i;
        cr_assert_eq(sd_sim_run(&sd_verifier_token, cases[i].c, &par, &so, &g, NULL), SD_OK);
        cr_assert_str_eq(k.kernel, SD_SIM_KERNEL_TOKEN);
        cr_assert_str_eq(g.kernel, "generic");
        double pv = S_homogeneity(k.accept_hist, g.accept_hist, cases[i].c->T + 1);
        cr_expect_geq(pv, 1e-3, "case %zu (gamma %zu): accepted-length histograms differ, p-value %.3g", i,
                      cases[i].gamma, pv);
        sd_sim_result_free(&k);
        sd_sim_result_free(&g);
    }
    sd_chain_free(c);
    sd_chain_free(cz);
}
