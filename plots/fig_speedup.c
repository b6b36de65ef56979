/* fig_speedup.c — simdec's speed-up figure: expected wall-clock speed-up
 * over target-only decoding against the draft length γ, for token, block
 * and batch verification at two draft/target cost ratios c, on the default
 * chain (V = 7, T = 50, model-seed 10).  The cost model is that of
 * sims/exact/sd_speedup.h (Leviathan et al. 2023, §3.4, with d·γ draft tokens per
 * iteration for d drafts).  E[target calls] is exact where the verifier has
 * an exact evaluator (token: the DP over (previous token, accepted count))
 * and a Monte-Carlo estimate with its 95% interval otherwise.  The file ends
 * in its table of figures. */
#include <math.h>

#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_speedup.h"
#include "sd_fig_util.h"

static int S_speedup(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { GMAX = 12, NA = 3, NC = 2 };
    static const char *const algos[NA] = {"token", "block", "batch"};
    static const double costs[NC] = {0.05, 0.2};
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    sd_chain *c = sd_chain_generate(&gp, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_model m = sd_model_of_chain(c);
    uint64_t trials = sd_fig_trials(o, 20000);
    sd_fig_head(f, "simdec-speedup-vs-gamma",
                "expected speed-up over target-only decoding vs draft length, token / block / batch (M = 2)");
    fprintf(f, "# model: generated, V=%zu, T=%zu, model-seed %lu, alpha %g, mix %g\n", c->V, c->T, gp.seed,
            gp.alpha, gp.mix);
    fprintf(f, "# cost model (Leviathan et al. 2023, sec. 3.4): S = T / (E[target calls] (1 + c d gamma)), d drafts\n");
    fprintf(f, "# E[target calls]: exact where the verifier has an evaluator, else Monte-Carlo, %llu trials, "
               "seed %llu + 100 gamma + verifier index (token 0, block 1, batch 2)\n",
            (unsigned long long)trials, (unsigned long long)o->seed);
    /* E[target calls] and its interval per verifier and gamma. */
    double calls[NA][GMAX + 1][3];
    double dt[NA][GMAX + 1];
    int rc = SD_OK;
    for (int a = 0; a < NA && !rc; a++) {
        const sd_verifier_type *vt = sd_fig_verifier(algos[a], err);
        if (!vt) {
            rc = SD_EINTERNAL;
            break;
        }
        for (size_t g = 1; g <= GMAX && !rc; g++) {
            sd_params par;
            sd_params_defaults(&par, vt);
            par.gamma = g;
            int exact;
            rc = sd_speedup_calls(vt, &m, &par, trials, o->seed + 100 * g + (uint64_t)a, &calls[a][g][0],
                                  &calls[a][g][1], &calls[a][g][2], &exact, err);
            dt[a][g] = sd_speedup_draft_tokens(vt, &par);
        }
    }
    for (int k = 0; k < NC && !rc; k++) {
        char name[32];
        snprintf(name, sizeof name, "c=%g", costs[k]);
        sd_fig_block(f, name, "gamma token_S lo hi block_S lo hi batch_S lo hi");
        for (size_t g = 1; g <= GMAX; g++) {
            fprintf(f, "%zu", g);
            for (int a = 0; a < NA; a++) {
                double T = (double)c->T, s = sd_speedup(T, calls[a][g][0], costs[k], dt[a][g]);
                /* the calls' interval maps through the decreasing S(calls) */
                sd_fig_est e = {s, NAN, sd_speedup(T, calls[a][g][2], costs[k], dt[a][g]),
                                sd_speedup(T, calls[a][g][1], costs[k], dt[a][g])};
                sd_fig_put_est(f, e);
            }
            fputc('\n', f);
        }
    }
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_simdec_speedup = {
    "simdec-speedup-vs-gamma", "simdec (Leviathan et al. 2023 cost model)",
    "The speed-up over target-only decoding peaks at a draft length that shrinks as drafting gets dearer; block verification's peak lies above token verification's, batch pays for its second draft.",
    S_speedup};
