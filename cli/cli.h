/* cli.h — the command-line front end's shared helpers.
 *
 * Every command is `int cmd_NAME(int argc, char **argv)` (argv[0] is the
 * command name) returning a process exit status:
 *   0 success, 64 usage, 65 bad data (or too large), 66 cannot open input,
 *   70 internal or solver failure, 71 out of memory, 73 cannot write output.
 * Errors are printed once, on stderr, prefixed "simdec: ", by cli_fail(). */
#ifndef CLI_H
#define CLI_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "../src/sd_chain.h"
#include "../src/sd_error.h"

enum {
    EX_OK_ = 0,
    EX_USAGE_ = 64,
    EX_DATAERR_ = 65,
    EX_NOINPUT_ = 66,
    EX_SOFTWARE_ = 70,
    EX_OSERR_ = 71,
    EX_CANTCREAT_ = 73
};

/* The exit status for a library status. */
int cli_exit_code(sd_status code);

/* Prints "simdec: <err->msg>" on stderr and returns cli_exit_code. */
int cli_fail(const sd_error *err);

/* Prints "simdec: <message>" and a hint to run `simdec CMD --help`;
 * returns 64. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The usage error for what getopt_long returned as c when it is not an
 * option of the command: ':' (an option missing its value) or anything
 * else (an unknown option, named from argv).  Returns 64. */
int cli_option_error(const char *cmd, int c, char **argv);

/* Strict number parsing: the whole string must be the number; "opt" names
 * the option in the message ("--trials: expected a whole number >= 1, got
 * '12x'").  Return SD_OK or SD_EUSAGE. */
int cli_parse_size(const char *opt, const char *s, size_t min, size_t max,
                   size_t *out, sd_error *err);
int cli_parse_u64(const char *opt, const char *s, uint64_t *out, sd_error *err);
/* --trials: a whole number from 1 to the driver's limit
 * (SD_SIM_MAX_BLOCKS * SD_SIM_BLOCK, sims/sd_sim.h). */
int cli_parse_trials(const char *s, uint64_t *out, sd_error *err);
/* A finite double in [min, max]. */
int cli_parse_double(const char *opt, const char *s, double min, double max,
                     double *out, sd_error *err);
/* A probability list: comma- or space-separated numbers, or @FILE (numbers
 * separated by commas or white space).  Validated like a model row
 * (finite, >= 0, Σ within 1e-9 of 1, then renormalised).  *out is malloc'd
 * (caller frees), *n its length.  SD_EUSAGE/SD_EDATA/SD_EIO. */
int cli_parse_list(const char *opt, const char *s, double **out, size_t *n,
                   sd_error *err);

/* Model options shared by every command that needs a chain:
 *   --model FILE | --V n --T n --model-seed s [--alpha a --mix m]
 * and --T also truncates a file's horizon. */
typedef struct cli_model_opts {
    const char *file;
    sd_gen_params gen;
    int T_given;
    int gen_given;      /* --V/--model-seed/--alpha/--mix seen */
    double *p, *q;      /* --p/--q single-token problem (malloc'd), or NULL */
    size_t pV, qV;
} cli_model_opts;

void cli_model_init(cli_model_opts *mo);
/* Frees --p/--q lists. */
void cli_model_release(cli_model_opts *mo);
/* getopt_long option entries for the model options; the `val`s are
 * CLI_OPT_MODEL.. CLI_OPT_MIX.  Append them to a command's table with
 * CLI_MODEL_LONGOPTS. */
enum {
    CLI_OPT_MODEL = 1000, CLI_OPT_V, CLI_OPT_T, CLI_OPT_MODEL_SEED,
    CLI_OPT_ALPHA, CLI_OPT_MIX, CLI_OPT_P, CLI_OPT_Q,
    CLI_OPT_GAMMA = 1050, CLI_OPT_M, CLI_OPT_K, CLI_OPT_EPS, CLI_OPT_RESIDUAL,
    CLI_OPT_TP, CLI_OPT_FP, CLI_OPT_PLAN,
    CLI_OPT_FIRST_FREE = 1100 /* commands number their own options from here */
};
#define CLI_MODEL_LONGOPTS \
    {"model", required_argument, 0, CLI_OPT_MODEL}, \
    {"V", required_argument, 0, CLI_OPT_V}, \
    {"T", required_argument, 0, CLI_OPT_T}, \
    {"model-seed", required_argument, 0, CLI_OPT_MODEL_SEED}, \
    {"alpha", required_argument, 0, CLI_OPT_ALPHA}, \
    {"model-alpha", required_argument, 0, CLI_OPT_ALPHA}, \
    {"mix", required_argument, 0, CLI_OPT_MIX}, \
    {"p", required_argument, 0, CLI_OPT_P}, \
    {"q", required_argument, 0, CLI_OPT_Q}
/* Help text lines for the model options. */
extern const char cli_model_help[];
/* Handles option c if it is a model option: 1 handled, 0 not a model
 * option, -1 bad value (err set). */
int cli_model_option(cli_model_opts *mo, int c, const char *arg, sd_error *err);
/* Loads, generates or (with --p/--q: a single-token problem whose tokens
 * are i.i.d., horizon --T or 1) builds the chain, applying --T.  NULL with
 * err set. */
sd_chain *cli_model_build(const cli_model_opts *mo, sd_error *err);
/* SD_EUSAGE unless --step t --state a name a row of c: 1 <= t <= T,
 * 0 <= a < V. */
int cli_context_check(const sd_chain *c, size_t step, size_t state, sd_error *err);
/* Adds "model": {"file"|"generated": ..., "vocab", "horizon", ...} to o. */
void cli_model_describe(const cli_model_opts *mo, const sd_chain *c, json_t *o);

/* Verifier parameters shared by `run` and `check`:
 *   --gamma G --M m --k k --eps e --residual opt|uno --tp η --fp η
 *   --plan kseq|otm
 * `given` has bit (c - CLI_OPT_GAMMA) set for each option seen. */
#define CLI_PARAM_LONGOPTS \
    {"gamma", required_argument, 0, CLI_OPT_GAMMA}, \
    {"M", required_argument, 0, CLI_OPT_M}, \
    {"k", required_argument, 0, CLI_OPT_K}, \
    {"eps", required_argument, 0, CLI_OPT_EPS}, \
    {"residual", required_argument, 0, CLI_OPT_RESIDUAL}, \
    {"tp", required_argument, 0, CLI_OPT_TP}, \
    {"fp", required_argument, 0, CLI_OPT_FP}, \
    {"plan", required_argument, 0, CLI_OPT_PLAN}
extern const char cli_param_help[];
struct sd_params;
struct sd_verifier_type;
typedef struct cli_params {
    struct sd_params *par;
    unsigned given;
} cli_params;
/* 1 handled, 0 not a parameter option, -1 bad value (err set). */
int cli_param_option(cli_params *cp, int c, const char *arg, sd_error *err);
/* A model option, else (when cp is not NULL) a verifier parameter:
 * 1 handled, 0 neither, -1 bad value (err set). */
int cli_shared_option(cli_model_opts *mo, cli_params *cp, int c, const char *arg, sd_error *err);
/* SD_EUSAGE if an option was given that verifier vt does not read. */
int cli_param_check(const cli_params *cp, const struct sd_verifier_type *vt, sd_error *err);
/* Adds the parameters vt reads to JSON object o. */
void cli_param_describe(const cli_params *cp, const struct sd_verifier_type *vt, json_t *o);

/* Output formats. */
typedef enum { CLI_FMT_TABLE = 0, CLI_FMT_JSON, CLI_FMT_CSV } cli_format;

/* Prints a JSON value to stdout (indented, 17 significant digits, a final
 * newline) and decrefs it.  Returns 0, or 73 on a write error. */
int cli_print_json(json_t *v);

/* A JSON number that is null when x is NaN or infinite. */
json_t *cli_json_real(double x);

/* Writes to a temporary file beside `path` and renames it over `path` on
 * success, so a failing command leaves no partial output.  The writer
 * returns an sd_status. */
typedef int (*cli_writer_fn)(FILE *f, void *ctx, sd_error *err);
int cli_write_atomic(const char *path, cli_writer_fn fn, void *ctx, sd_error *err);

/* 1 if stderr is a terminal (progress lines go there only then). */
int cli_stderr_is_tty(void);

/* A progress line "simdec: done / total trials (x%)" on stderr, redrawn at
 * most once a second; an sd_progress_fn (sims/sd_sim.h) with ctx a
 * cli_progress.  cli_progress_end() erases the line if one was drawn. */
typedef struct cli_progress {
    long last;
    int shown;
} cli_progress;
void cli_progress_show(void *ctx, uint64_t done, uint64_t total);
void cli_progress_end(cli_progress *pr);

#endif
