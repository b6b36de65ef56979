/* fig_draft_policy.c — simdec's draft-length figure: the speed-up of
 * token-level SD against the threshold of the two draft-length policies of
 * src/sd_draft.h, SpecDec++'s (Huang et al. 2025: stop once P(some draft
 * rejected) > H) and the entropy rule of SVIP / AdaEDL (stop before a draft
 * row of entropy > H; plotted at H / log V), beside the best fixed gamma and
 * the best stopping rule of all, on a generated chain (V = 4, T = 30,
 * model-seed 10), cap gamma = 5, draft cost c = 0.1.  Cost model and exact
 * values: src/sd_exact_policy.h (no Monte-Carlo).  The file ends in its
 * table of figures. */
#include <math.h>

#include "../src/sd_exact_policy.h"
#include "sd_fig_util.h"

static int S_policy(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { CAP = 5, STEPS = 40 };
    const double cost = 0.1;
    (void)o;
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = 4;
    gp.T = 30;
    sd_chain *c = sd_chain_generate(&gp, err);
    if (!c)
        return err ? (int)err->code : SD_EINTERNAL;
    sd_fig_head(f, "simdec-draft-policy", "speed-up vs threshold of the draft-length policies, token-level SD");
    fprintf(f, "# model: generated, V=%zu, T=%zu, model-seed %lu, alpha %g, mix %g\n", c->V, c->T, gp.seed,
            gp.alpha, gp.mix);
    fprintf(f, "# cap gamma %d, c = %g; S = T / (E[target calls] + c E[draft tokens]), exact (src/sd_exact_policy.h)\n",
            CAP, cost);
    double T = (double)c->T, logV = log((double)c->V), calls, drafted;
    int rc = SD_OK;
    static const sd_draft_rule rules[2] = {SD_DRAFT_SPECDECPP, SD_DRAFT_ENTROPY};
    static const char *const names[2] = {"specdecpp", "entropy"};
    for (int r = 0; r < 2 && !rc; r++) {
        sd_fig_block(f, names[r], "x threshold speedup target_calls draft_tokens");
        for (int i = 0; i <= STEPS && !rc; i++) {
            double x = (double)i / STEPS;
            sd_draft_policy pol = {rules[r], r == 0 ? x : x * logV};
            rc = sd_exact_policy(c, CAP, &pol, &calls, &drafted, err);
            if (!rc)
                fprintf(f, "%.10g %.10g %.10g %.10g %.10g\n", x, pol.h,
                        sd_exact_policy_speedup(T, calls, drafted, cost), calls, drafted);
        }
    }
    double sfix = 0.0;
    size_t gfix = 1;
    for (size_t g = 1; g <= CAP && !rc; g++) {
        sd_draft_policy fixed = {SD_DRAFT_FIXED, 0.0};
        rc = sd_exact_policy(c, g, &fixed, &calls, &drafted, err);
        double s = sd_exact_policy_speedup(T, calls, drafted, cost);
        if (!rc && s > sfix) {
            sfix = s;
            gfix = g;
        }
    }
    if (!rc)
        rc = sd_exact_policy_best(c, CAP, cost, &calls, &drafted, err);
    if (!rc) {
        sd_fig_block(f, "reference", "x best_fixed_speedup best_fixed_gamma optimal_speedup");
        double sopt = sd_exact_policy_speedup(T, calls, drafted, cost);
        fprintf(f, "0 %.10g %zu %.10g\n1 %.10g %zu %.10g\n", sfix, gfix, sopt, sfix, gfix, sopt);
    }
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_simdec_draft_policy = {
    "simdec-draft-policy", "simdec (SpecDec++, Huang et al. 2025; SVIP, Zhang et al. 2025)",
    "A draft-length policy with a well-chosen threshold beats the best fixed draft length, and the best stopping rule of all bounds both; the gap is the heuristic's loss.",
    S_policy};
