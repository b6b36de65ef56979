/* cmd_run.h — `simdec run` with a replaceable simulation step, so that
 * simdec-mpi (mpi/simdec_mpi.c) parses, checks and prints exactly as
 * `simdec run` does and only splits the trials differently. */
#ifndef CMD_RUN_H
#define CMD_RUN_H

#include "../sims/engine/sd_run.h"
#include "sweep.h"

/* Runs the simulation for `run`; same contract as sd_sim_run_job
 * (sd_run_opts.sim). */
typedef sd_run_sim_fn cmd_run_sim_fn;

typedef struct cmd_run_hooks {
    cmd_run_sim_fn sim;     /* NULL: sd_sim_run_job */
    void *ctx;
    int quiet;              /* 1: no progress line (MPI ranks > 0, whose output the
                               caller sends to /dev/null) */
    int no_early_stop;      /* 1: refuse --time-limit and --target-stderr */
    const char *name;       /* the command in messages ("run") */
    unsigned ranks;         /* MPI ranks the trials are split over (0 or 1: one process);
                               echoed beside --threads, which is per rank */
} cmd_run_hooks;

/* `simdec run` (cmd_run is this with default hooks). */
int cmd_run_with(int argc, char **argv, const cmd_run_hooks *hooks);

/* `simdec run` from named fields instead of a command line (the Python
 * package's way in, cli/api.h sd_api_run): the verifier `algo` (NULL:
 * token-level SD; a comma list: a sweep) and fields named as run's options
 * without the dashes, value the option's text (NULL for a flag), read by
 * the same code as the command line's, so values and errors are alike.  A
 * list or a range on a parameter sweeps (cli_sweep_expand_fields); the
 * "plugin" fields are loaded first.  Prints what `run --json` prints (or
 * --csv's CSV, --list's list, --help's help) and returns the exit status;
 * a field that is not one of run's options is a usage error (64). */
int cmd_run_fields(const char *algo, const cli_field *fields, size_t n);
void cmd_run_point_free(cli_run_point *pt);

#endif
