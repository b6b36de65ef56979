/* sweep.h — `simdec run` over a grid, and the output every run shares.
 *
 * A sweep is `--algo a,b,...` and/or a comma list or a range of counts
 * (`--gamma 1..8`, `--k 2,4`, `--eps 0,0.05,0.1`) on any declared numeric
 * parameter: run simulates the cross product, each point on the same
 * --seed and hence the same per-trial streams (seed, trial) — common random
 * numbers: every point starts from the same x_0 and draws from the same
 * stream — and prints one long-format table, CSV (one header, one column
 * per parameter of any verifier in the sweep) or JSON array.
 *
 * With --paired, each point is compared with the first: the difference of
 * the per-trial rejections and target calls, with its paired standard
 * error sd(d_i)/sqrt(n), beside the unpaired sqrt(se_a^2 + se_b^2) that
 * independent runs would give.  Pairing removes the covariance the two runs
 * share through their common random numbers:
 *   Var(mean(a - b)) = (Var a + Var b - 2 Cov(a, b)) / n. */
#ifndef CLI_SWEEP_H
#define CLI_SWEEP_H

#include <jansson.h>

#include "../sims/engine/sd_run.h"
#include "cli.h"

/* One simulated point and everything its output echoes: the command line
 * that asked for it, its model, and the run API's result
 * (sims/engine/sd_run.h). */
typedef struct cli_run_point {
    cli_verifier cv;
    cli_model_opts mo;
    cli_model model;
    sd_run_result run;
    double setup_seconds;         /* model and kernel tables */
    const char *samples;          /* --samples FILE written, or NULL */
    unsigned ranks;               /* MPI ranks (1: one process) */
    double time_limit, target_stderr;
} cli_run_point;

/* What bias_est estimates, in the output's words. */
#define CLI_BIAS_ESTIMATES "mean over n of sum_b (P_n(b) - Q_n(b))^2, P_n the law of x_n, Q_n the target's"

/* The argument vectors of a sweep: the command line (read once:
 * cli_args_scan, which also gives the plugins it loads) expanded into the cross product of
 * --algo's names and every list-valued parameter (options that a point's
 * verifier does not declare are left out of that point when --algo names
 * several).  *n = 1 and (*out)[0] a copy of argv when there is nothing to
 * sweep.  Free with cli_sweep_free.  Returns -1 to go on, or an exit
 * status after printing the error (64: a bad list or more than 10000
 * points; 71: out of memory). */
typedef struct cli_sweep {
    size_t n;         /* points */
    char ***argv;     /* [n]: each NULL-terminated, argc entries */
    int *argc;
    const char **algo; /* [n]: the verifier each point names (NULL: none, the default) */
    char **strings;   /* the value strings the vectors point into */
    size_t nstrings;
    cli_field **fields; /* cli_sweep_expand_fields: [n] each point's fields */
    size_t *nfields;
} cli_sweep;
int cli_sweep_expand(const char *cmd, const cli_args *args, cli_sweep *sw);
/* The same expansion from named fields (cli_opts.h; the API's form of a
 * command line): algo may be a comma list, a field's value a list or a
 * range; the plugins named by "plugin" fields are loaded first.  Each
 * point gets its verifier in sw->algo and its fields in sw->fields (argv
 * and argc stay NULL), by the rules of cli_sweep_expand: the same points
 * in the same order. */
int cli_sweep_expand_fields(const char *cmd, const char *algo, const cli_field *fields, size_t n, cli_sweep *sw);
void cli_sweep_free(cli_sweep *sw);
/* 1 if value v of the parameter declared by d (NULL: none) is a list or a
 * range that a sweep expands: a comma list on a number, a choice or a
 * draft policy, a range LO..HI on a number (a tree shape's commas are its
 * levels). */
int cli_sweep_is_list(const sd_param_decl *d, const char *v);

/* Outputs of n points (n >= 1).  JSON: one object for one point, an array
 * for more; CSV: one header and a row per point.  paired: add the
 * comparisons of every point with the first (their per_trial records must
 * be filled).  Return 0 or 73. */
json_t *cli_point_json(const cli_run_point *pt);
/* The text after "threads N" in a table: "" for one process, else
 * " per rank x R MPI ranks" (a static string). */
const char *cli_ranks_text(const cli_run_point *pt);
int cli_points_print_json(const cli_run_point *pts, size_t n, int paired);
int cli_points_print_csv(const cli_run_point *pts, size_t n, int paired);
/* The long table of a sweep (more than one point). */
int cli_points_print_table(const cli_run_point *pts, size_t n, int paired);

#endif
