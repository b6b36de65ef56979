/* sd_figures.h — the data behind every figure of `simdec plot`.
 *
 * One function per figure writes a gnuplot data file: a header of comment
 * lines (what is plotted, the model, the seeds and trial counts), then named
 * data blocks, each introduced by a comment line "# [name]" and separated
 * by two blank lines, so that a script selects them with
 * `index '[name]'`.  Numbers are printed with 10 significant digits.
 *
 * Every figure puts simdec's Monte-Carlo estimate (with the bounds of its
 * normal-approximation 95% interval, mean ± 1.96 se) beside the exact value
 * computed by the library's evaluators where both exist.  The Monte-Carlo
 * runs use fixed seeds (echoed in the header) and the per-trial Philox
 * streams of sd_rng.h, so a data file is identical, byte for byte, from run
 * to run and whatever the number of threads.
 *
 * The writers live one file per paper (plots/fig_*.c, listed in the
 * private header plots/sd_fig_util.h), each ending in its table of figures;
 * plots/sd_figures.c joins those tables into sd_figures[].  The plotting
 * itself (gnuplot scripts plots/NAME.gp, PNG output) belongs to the CLI
 * (cli/cmd_plot.c). */
#ifndef SD_FIGURES_H
#define SD_FIGURES_H

#include <stdint.h>
#include <stdio.h>

#include "../src/sd_error.h"

/* Base seed of every Monte-Carlo run of the figures; each run adds its own
 * offset (printed in the data file). */
#define SD_FIGURE_DEFAULT_SEED 20240610u

typedef struct sd_figure_opts {
    int quick;      /* 1: about a tenth of the trials (tests) */
    uint64_t seed;  /* base seed (SD_FIGURE_DEFAULT_SEED) */
} sd_figure_opts;

void sd_figure_opts_default(sd_figure_opts *o);

typedef struct sd_figure {
    const char *name;    /* file stem: plots/NAME.gp -> NAME.dat, NAME.png */
    const char *source;  /* the paper and figure it regenerates, or "simdec" */
    const char *summary; /* one sentence: what the figure demonstrates */
    /* Writes the data file to f.  SD_OK, or a library status with err set
     * (SD_EOUTPUT when writing fails). */
    int (*write)(FILE *f, const sd_figure_opts *o, sd_error *err);
} sd_figure;

/* All figures, in the order of `simdec plot all`; NULL-terminated. */
extern const sd_figure *const sd_figures[];

/* Looks a figure up by name; NULL if unknown. */
const sd_figure *sd_figure_find(const char *name);

#endif
