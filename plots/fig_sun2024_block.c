/* fig_sun2024_block.c — the figure of Sun, Mendlovic, Leviathan, Aharoni,
 * Ro, Beirami & Suresh 2025, "Block Verification Accelerates Speculative
 * Decoding": Fig. 3, the CCDF of the number of draft tokens accepted in one
 * iteration by token and by block verification, on the paper's toy model
 * (its eq. 2).
 *
 * Exact values come from sd_exact_accept_length (sd_exact_accept.h);
 * Monte-Carlo values from the token and block verifiers, one iteration per
 * trial through the trial engine (its accepted-count histogram).  The file
 * ends in its table of figures. */
#include <math.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../src/sd_exact_accept.h"
#include "sd_fig_util.h"

/* A proportion k/n with its binomial normal-approximation interval. */
static sd_fig_est S_est_prop(double k, double n)
{
    double m = k / n;
    return sd_fig_est_normal(m, sqrt(m * (1.0 - m) / n));
}

static int S_block_ccdf(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { G = 10 };
    /* The paper's eq. 2: Mb(A) = 1/3, Ms(A) = 2/3 (token 0 = A). */
    const double p[2] = {2.0 / 3.0, 1.0 / 3.0}, q[2] = {1.0 / 3.0, 2.0 / 3.0};
    sd_chain *c = sd_chain_from_pq(p, q, 2, G, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "block-fig3-ccdf", "Sun et al. 2025, Fig. 3: P(tau >= l), accepted draft tokens in one iteration, token vs block verification");
    fprintf(f, "# toy model of Sun et al. 2025, eq. 2: draft p(A) = 2/3, target q(A) = 1/3, context-free; gamma = %d\n", G);
    double ex[SD_ACCEPT_NALGO], ccdf[SD_ACCEPT_NALGO * G];
    int rc = sd_exact_accept_length(c, 1, 0, G, ex, ccdf, err);
    if (!rc) {
        fprintf(f, "# E[tau]: token %.10g, block %.10g, full information %.10g\n", ex[0], ex[1], ex[2]);
        sd_fig_block(f, "exact", "l P_token(tau>=l) P_block(tau>=l) P_full(tau>=l)");
        fprintf(f, "0 1 1 1\n");
        for (size_t l = 1; l <= G; l++)
            fprintf(f, "%zu %.10g %.10g %.10g\n", l, ccdf[l - 1], ccdf[G + l - 1],
                    ccdf[2 * G + l - 1]);
    }
    uint64_t trials = sd_fig_trials(o, 200000);
    static const char *const algos[2] = {"token", "block"};
    double hist[2][G + 1];
    memset(hist, 0, sizeof hist);
    for (int a = 0; a < 2 && !rc; a++) {
        const sd_verifier_type *vt = sd_fig_verifier(algos[a], err);
        if (!vt) {
            rc = SD_EINTERNAL;
            break;
        }
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.gamma = G;
        /* one iteration at position 1 after x_0 = 0 */
        sd_sim_result res;
        rc = sd_fig_first_iteration(vt, c, &par, 0, o->seed + 3000 + (uint64_t)a, trials, 0, &res, err);
        if (!rc) {
            memcpy(hist[a], res.accept_hist, sizeof hist[a]);
            sd_sim_result_free(&res);
        }
    }
    if (!rc) {
        sd_fig_block(f, "mc", "l token_mean ci95_lo ci95_hi block_mean ci95_lo ci95_hi");
        fprintf(f, "# seeds %llu (token), %llu (block); %llu iterations each\n",
                (unsigned long long)(o->seed + 3000), (unsigned long long)(o->seed + 3001),
                (unsigned long long)trials);
        for (size_t l = 0; l <= G; l++) {
            fprintf(f, "%zu", l);
            for (int a = 0; a < 2; a++) {
                double k = 0;
                for (size_t j = l; j <= G; j++)
                    k += hist[a][j];
                sd_fig_put_est(f, S_est_prop(k, (double)trials));
            }
            fputc('\n', f);
        }
    }
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_sun2024_block_fig3 = {
    "block-fig3-ccdf", "Sun 2025 Fig. 3",
    "On the two-token toy model with gamma = 10, block verification accepts longer prefixes than token verification (its CCDF lies above), below the full-information optimum.",
    S_block_ccdf};
