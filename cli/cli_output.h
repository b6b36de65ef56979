/* cli_output.h — output helpers of the command line: table/JSON/CSV
 * formats, JSON printing, CSV fields, atomic output files, progress lines. */
#ifndef CLI_OUTPUT_H
#define CLI_OUTPUT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "../src/sd_error.h"

/* (a - b) / se, the gap of an estimate from an exact value in standard
 * errors.  Gaps and standard errors at the rounding level of the values
 * (64 ulps) count as 0: a constant estimate (the Rao-Blackwellised
 * rejections of i.i.d. tokens) accumulates a standard error of 1e-17 that
 * would make a z of its last bits.  With no spread (one trial, or every
 * trial alike) only a match has one (0); any other gap is NaN, not 0. */
double cli_gap_in_se(double a, double b, double se);

/* Output formats. */
typedef enum { CLI_FMT_TABLE = 0, CLI_FMT_JSON, CLI_FMT_CSV } cli_format;
/* Sets *fmt to want: -1 to go on, or 64 (printed) when another machine
 * format was given already (--json with --csv). */
int cli_set_format(const char *cmd, cli_format *fmt, cli_format want);

/* Writes ",s" on stdout, s quoted as a CSV field when it holds a comma,
 * quote or newline (NULL: an empty field). */
void cli_csv_field(const char *s);

/* Prints a JSON value to stdout (indented, 17 significant digits, a final
 * newline) and decrefs it.  Returns 0, or 73 on a write error. */
int cli_print_json(json_t *v);

/* After a command has printed its output: 0 if everything reached standard
 * output, else 73 with "simdec: cannot write to standard output" on stderr
 * (a full disk, a closed pipe: a silent 73, or a 0, would hide it). */
int cli_stdout_status(void);

/* A JSON number that is null when x is NaN or infinite. */
json_t *cli_json_real(double x);

/* Writes to a temporary file beside `path` and renames it over `path` on
 * success, so a failing command leaves no partial output; a `path` that
 * exists and is neither a regular file nor a directory (a device, a FIFO,
 * /dev/stdout) is written in place instead.  The writer returns an
 * sd_status. */
typedef int (*cli_writer_fn)(FILE *f, void *ctx, sd_error *err);
int cli_write_atomic(const char *path, cli_writer_fn fn, void *ctx, sd_error *err);

/* 1 if stderr is a terminal (progress lines go there only then). */
int cli_stderr_is_tty(void);
/* --progress: progress lines even when stderr is not a terminal. */
extern int cli_progress_force;

/* A progress line "simdec: done / total trials (x%)" on stderr, redrawn at
 * most once a second; an sd_progress_fn (sims/engine/sd_sim.h) with ctx a
 * cli_progress.  cli_progress_end() erases the line if one was drawn. */
typedef struct cli_progress {
    long last;
    int shown;
} cli_progress;
void cli_progress_show(void *ctx, uint64_t done, uint64_t total);
void cli_progress_end(cli_progress *pr);

#endif
