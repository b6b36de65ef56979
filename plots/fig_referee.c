/* fig_referee.c — simdec's referee figure: for every lossless verifier
 * (built in), the fraction of the optimum of its class that its exact
 * expected accepted tokens per iteration attains, on the referee's
 * benchmark of models (treelp/sd_referee.h: the default chain, SpecTr's
 * Bernoulli example, a chain with zeros, the fortunes bigram when `make
 * lm` has built it).  Classes: valid-verify for one draft sequence (gamma
 * 2), the k-draft optimum at one position (k = 2; Sun et al. 2023, Hu et
 * al. 2025, Thomas & Pal 2025) and, for the k-draft verifiers at gamma 2,
 * tree-valid on the tree (2, 1), tree-valid for token trees where its LP
 * reaches.  Exact values only (no Monte-Carlo).  The file ends in its
 * table of figures. */
#include <math.h>
#include <string.h>

#include "../treelp/sd_referee.h"
#include "sd_fig_util.h"

static int S_referee(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    (void)o;
    sd_referee_opts ro = {.k = 2, .gamma = 2, .tree = NULL};
    sd_fig_head(f, "simdec-referee", "fraction of its class's optimum each lossless verifier attains");
    fprintf(f, "# k = %zu (k-draft class, one position), gamma = %zu (one sequence), trees: each verifier's shape;\n"
               "# context t = 1 after x_0 = 0; exact values (simdec referee --json has the same rows)\n",
            ro.k, ro.gamma);
    int rc = SD_OK;
    /* the verifiers' names by x, for the axis (the rows of the first model) */
    char names[64][48];
    size_t nnames = 0;
    for (size_t mi = 0; mi < SD_REFEREE_NMODELS && !rc; mi++) {
        sd_chain *c = NULL;
        const char *name = "";
        sd_error e = {0};
        int st = sd_referee_bench_model(mi, SD_REFEREE_ARPA, &c, &name, &e);
        if (st == SD_EIO) {
            sd_fig_block(f, name, "x algo fraction exact optimum");
            fprintf(f, "# skipped: %s\n", e.msg);
            continue;
        }
        if (st) {
            *err = e;
            rc = st;
            break;
        }
        sd_referee_row *rows = NULL;
        size_t n = 0;
        rc = sd_referee_model(c, name, 0, &ro, &rows, &n, err);
        sd_chain_free(c);
        if (!rc) {
            sd_fig_block(f, name, "x algo fraction exact optimum");
            for (size_t i = 0; i < n; i++) {
                const sd_referee_row *r = &rows[i];
                /* a k-draft verifier's second row (at gamma) is labelled so */
                int again = 0;
                for (size_t j = 0; j < i; j++)
                    again |= strcmp(rows[j].algo, r->algo) == 0;
                if (i == nnames && nnames < 64)
                    snprintf(names[nnames++], sizeof names[0], again ? "%s-γ%zu" : "%s", r->algo, ro.gamma);
                if (isfinite(r->fraction))
                    fprintf(f, "%zu %s %.10g %.10g %.10g\n", i, r->algo, r->fraction, r->exact_accepted, r->optimum);
                else
                    fprintf(f, "# %zu %s: not plotted (%s)\n", i, r->algo, r->note[0] ? r->note : "no value");
            }
        }
        free(rows);
    }
    if (!rc) {
        sd_fig_block(f, "verifiers", "x algo");
        for (size_t i = 0; i < nnames; i++)
            fprintf(f, "%zu %s\n", i, names[i]);
    }
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_simdec_referee = {
    "simdec-referee", "simdec (Hu et al. 2025; Thomas & Pal 2025)",
    "Each lossless verifier's exact accepted length as a fraction of the optimum of its class: block verification and optimal-md reach 1, the others show their gap.",
    S_referee};
