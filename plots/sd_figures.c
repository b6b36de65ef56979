/* sd_figures.c — the registry of `simdec plot` (sd_figures.h).  The
 * helpers the figure files share are in sd_fig_util.c (sd_fig_util.h), so
 * that the registry calls the figure files and they call the helpers, and
 * no two files call each other.
 *
 * The figures themselves live one file per paper (fig_*.c, listed in
 * sd_fig_util.h); each ends in its table of figures, and sd_figures[] below
 * lists those tables in the order of `simdec plot all`.  The figure library
 * sits above the rest: it calls the exact evaluators (src/sd_exact*.h,
 * src/sd_kseq.h), the linear programs (lp/sd_lp.h) and the trial engine
 * (sims/engine/sd_sim.h) directly, never the CLI.  It has no loop over trials of
 * its own: every Monte-Carlo estimate is one sd_sim_run, whose statistics,
 * histogram, position counts or per-trial records the figures read. */
#include "sd_figures.h"

#include <string.h>

#include "sd_fig_util.h"

void sd_figure_opts_default(sd_figure_opts *o)
{
    o->quick = 0;
    o->seed = SD_FIGURE_DEFAULT_SEED;
}

/* ---- the registry: each paper's table, in the order of `simdec plot all` -- */

const sd_figure *const sd_figures[] = {
    /* Yin et al. 2024 (fig_yin2024.c) */
    &sd_fig_yin2024_fig2a, &sd_fig_yin2024_fig2b, &sd_fig_yin2024_fig2c, &sd_fig_yin2024_fig3,
    &sd_fig_yin2024_fig4, &sd_fig_yin2024_fig5,
    /* Sun et al. 2025, block verification (fig_sun2024_block.c) */
    &sd_fig_sun2024_block_fig3,
    /* Sun et al. 2023, SpecTr (fig_spectr.c) */
    &sd_fig_spectr_fig4, &sd_fig_spectr_fig5, &sd_fig_spectr_fig6,
    /* Zhong et al. 2025, SPRINTER (fig_sprinter.c) */
    &sd_fig_sprinter_fig5, &sd_fig_sprinter_fig6,
    /* simdec's own (fig_simdec.c) */
    &sd_fig_simdec_multidraft, &sd_fig_simdec_verify, &sd_fig_simdec_biased,
    &sd_fig_simdec_speedup,
    /* token trees (fig_trees.c) */
    &sd_fig_simdec_trees,
    /* draft-length policies (fig_draft_policy.c) */
    &sd_fig_simdec_draft_policy,
    /* the referee (fig_referee.c) */
    &sd_fig_simdec_referee,
    NULL,
};

const sd_figure *sd_figure_find(const char *name)
{
    for (size_t i = 0; sd_figures[i]; i++)
        if (strcmp(sd_figures[i]->name, name) == 0)
            return sd_figures[i];
    return NULL;
}
