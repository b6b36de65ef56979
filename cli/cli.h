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
#include "../src/sd_model.h"
#include "../sims/engine/sd_verifier.h"
#include "../src/sd_error.h"
#include "../src/sd_parse.h"
#include "model_arpa.h"

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
/* (a - b) / se, the gap of an estimate from an exact value in standard
 * errors.  Gaps and standard errors at the rounding level of the values
 * (64 ulps) count as 0: a constant estimate (the Rao-Blackwellised
 * rejections of i.i.d. tokens) accumulates a standard error of 1e-17 that
 * would make a z of its last bits.  With no spread (one trial, or every
 * trial alike) only a match has one (0); any other gap is NaN, not 0. */
double cli_gap_in_se(double a, double b, double se);
/* Prints "simdec: out of memory" and returns 71 (EX_OSERR_). */
int cli_out_of_memory(void);

/* Prints "simdec: <message>" and a hint to run `simdec CMD --help`;
 * returns 64. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The usage error for what getopt_long returned as c when it is not an
 * option of the command: ':' (an option missing its value) or anything
 * else (an unknown option, named from argv).  Returns 64. */
int cli_option_error(const char *cmd, int c, char **argv);

/* getopt_long(argc, argv, shortopts, opts, NULL), remembering opts while
 * the loop runs so that cli_option_error can suggest the nearest option
 * ("unknown option '--gama'; did you mean '--gamma'?"). */
struct option;
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts);

/* Strict number parsing (src/sd_parse.h, whose functions the commands call
 * under these names). */
#define cli_parse_size sd_parse_size
#define cli_parse_u64 sd_parse_u64
#define cli_parse_double sd_parse_double
int cli_parse_trials(const char *s, uint64_t *out, sd_error *err);
/* --seed S: a whole number 0..2^63-1, the range that JSON's "seed" (a
 * signed 64-bit integer) echoes exactly.  SD_EUSAGE otherwise. */
int cli_parse_seed(const char *s, uint64_t *out, sd_error *err);
/* A file name given to option `opt`: SD_EUSAGE naming the option when it
 * is empty ("--model: expected a file name, got ''"), else SD_OK. */
int cli_check_path(const char *opt, const char *path, sd_error *err);
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
    int shape_given;    /* --alpha or --mix seen (even at its default) */
    int rng_given;      /* --rng seen */
    double *p, *q;      /* --p/--q single-token problem (malloc'd, renormalised), or NULL */
    size_t pV, qV;
    double psum, qsum;  /* their sums as given (checked against --tol by cli_model_lists_check) */
    int pq_file[2];     /* --p, --q given as @FILE (a bad sum is bad data, else a bad option value) */
    int zipf, zipf_given; /* --zipf; --zipf-draft/--zipf-target seen */
    double s_draft, s_target;
    double tol;         /* --tol: row-sum tolerance of --model (0: 1e-9) */
    size_t max_memory;  /* --max-memory: the memory budget in bytes (0: sd_mem_budget's default) */
    int stream;         /* --stream: a generated chain is streamed step by step */
    int may_stream;     /* set by the command: its verifier runs on a streamed chain, so a
                           generated chain over half the budget is streamed, not stored */
    cli_arpa_opts arpa; /* --arpa FILE ... (model_arpa.h) */
} cli_model_opts;

/* A model built from the options: its owner and the view the library
 * takes (src/sd_model.h). */
typedef struct cli_model {
    sd_chain *chain;
    sd_zipf *zipf;
    sd_model_stream *stream; /* a generated chain streamed step by step */
    size_t budget;           /* the memory budget the model was opened under (bytes) */
    sd_model view;
    char sha256[65];    /* of --model FILE ("" otherwise) */
    double row_dev;     /* largest |row sum - 1| of --model FILE before renormalising */
    sd_backoff *backoff; /* --arpa, or --p/--q whose chain would not fit (model_arpa.h) */
} cli_model;

void cli_model_init(cli_model_opts *mo);
/* Frees --p/--q lists. */
void cli_model_release(cli_model_opts *mo);
/* getopt_long option entries for the model options; the `val`s are
 * CLI_OPT_MODEL.. CLI_OPT_MIX.  Append them to a command's table with
 * CLI_MODEL_LONGOPTS. */
enum {
    CLI_OPT_MODEL = 1000, CLI_OPT_V, CLI_OPT_T, CLI_OPT_MODEL_SEED,
    CLI_OPT_ALPHA, CLI_OPT_MIX, CLI_OPT_P, CLI_OPT_Q,
    CLI_OPT_ZIPF, CLI_OPT_ZIPF_DRAFT, CLI_OPT_ZIPF_TARGET, CLI_OPT_PLUGIN,
    CLI_OPT_TOL, CLI_OPT_PROGRESS, CLI_OPT_MAX_MEMORY, CLI_OPT_STREAM,
    CLI_OPT_FIRST_FREE = 1100, /* commands number their own options from here */
    CLI_OPT_PARAM = 1200       /* + index: a verifier's declared parameters */
};
/* --rng NAME (generated chains: sd_gen_rng_parse), below the commands' own. */
enum { CLI_OPT_RNG = CLI_OPT_FIRST_FREE - 1 };
#define CLI_MODEL_LONGOPTS \
    {"model", required_argument, 0, CLI_OPT_MODEL}, \
    {"V", required_argument, 0, CLI_OPT_V}, \
    {"T", required_argument, 0, CLI_OPT_T}, \
    {"model-seed", required_argument, 0, CLI_OPT_MODEL_SEED}, \
    {"alpha", required_argument, 0, CLI_OPT_ALPHA}, \
    {"model-alpha", required_argument, 0, CLI_OPT_ALPHA}, \
    {"mix", required_argument, 0, CLI_OPT_MIX}, \
    {"p", required_argument, 0, CLI_OPT_P}, \
    {"q", required_argument, 0, CLI_OPT_Q}, \
    {"zipf", no_argument, 0, CLI_OPT_ZIPF}, \
    {"zipf-draft", required_argument, 0, CLI_OPT_ZIPF_DRAFT}, \
    {"zipf-target", required_argument, 0, CLI_OPT_ZIPF_TARGET}, \
    {"tol", required_argument, 0, CLI_OPT_TOL}, \
    {"max-memory", required_argument, 0, CLI_OPT_MAX_MEMORY}, \
    {"stream", no_argument, 0, CLI_OPT_STREAM}, \
    {"rng", required_argument, 0, CLI_OPT_RNG}, \
    CLI_ARPA_LONGOPTS
/* --plugin FILE, for every command that takes a verifier. */
#define CLI_PLUGIN_LONGOPT {"plugin", required_argument, 0, CLI_OPT_PLUGIN}
/* --progress: progress lines on stderr even when it is not a terminal
 * (handled by cli_param_option; sets cli_progress_force). */
#define CLI_PROGRESS_LONGOPT {"progress", no_argument, 0, CLI_OPT_PROGRESS}
extern int cli_progress_force;
/* Help text lines for the model options. */
extern const char cli_model_help[];
/* Handles option c if it is a model option: 1 handled, 0 not a model
 * option, -1 bad value (err set). */
int cli_model_option(cli_model_opts *mo, int c, const char *arg, sd_error *err);
/* Loads, generates or (with --p/--q: a single-token problem whose tokens
 * are i.i.d., horizon --T or 1) builds the chain, applying --T.  NULL with
 * err set; --zipf is refused (SD_EUSAGE): the command needs stored rows. */
sd_chain *cli_model_build(const cli_model_opts *mo, sd_error *err);
/* cli_model_build that also fills the identity of a --model FILE in *id
 * (sha256 of the bytes loaded, row_dev; "" and 0 for other models), for
 * cli_model_identity and cli_model_identity_line; id->chain is not set. */
struct cli_model;
sd_chain *cli_model_build_id(const cli_model_opts *mo, struct cli_model *id, sd_error *err);
/* Any model, the Zipf model included: fills *m (release with
 * cli_model_close).  A generated chain is streamed step by step (m->stream)
 * with --stream, or when mo->may_stream and stored it would take more than
 * half the memory budget (the other half for a kernel's tables); a stored
 * chain over the budget is refused (SD_ETOOBIG) before allocating.  A
 * library status with err set. */
int cli_model_open(const cli_model_opts *mo, cli_model *m, sd_error *err);
void cli_model_close(cli_model *m);
/* "model     generated, V=7, T=50, ..." — the model's line in every table,
 * after a label padded to 9 columns. */
void cli_model_summary(FILE *f, const char *label, const cli_model_opts *mo, const sd_model *md);
/* SD_EUSAGE unless --step t --state a name a row of c: 1 <= t <= T,
 * 0 <= a < V. */
int cli_context_check(const sd_chain *c, size_t step, size_t state, sd_error *err);
/* Adds "model": {"file"|"generated": ..., "vocab", "horizon", ...} to o. */
void cli_model_describe(const cli_model_opts *mo, const sd_model *md, json_t *o);
/* Adds to o's "model" the identity of a --model FILE that cli_model_open
 * read: "sha256", "row_tol", "row_max_deviation". */
void cli_model_identity(const cli_model_opts *mo, const cli_model *m, json_t *o);
/* The table line of the same ("          sha256 ..."), nothing for other models. */
void cli_model_identity_line(FILE *f, const cli_model_opts *mo, const cli_model *m);

/* --- verifiers ------------------------------------------------------------------
 *
 * A command that takes a verifier parses in two passes: cli_verifier_prescan
 * loads every --plugin FILE and finds the verifier named by --algo (or
 * another option, e.g. lp's --compare) before getopt runs, so the option
 * table can hold that verifier's declared parameters
 * (cli_options_with_params); cli_param_option then parses them through the
 * library (sims/engine/sd_params.h). */

typedef struct cli_verifier {
    const sd_verifier_type *vt; /* NULL when none was named and there is no default */
    sd_params par;
    int named;                  /* 1 if the command line named it */
} cli_verifier;

/* Loads the plugins named by --plugin FILE in argv (SD_EIO/SD_EDATA). */
int cli_plugins_load(int argc, char **argv, sd_error *err);

/* Loads the plugins, finds the verifier named by --ALGO_OPT (the last one
 * given) or `def` (NULL: none), sets its parameters to their defaults, and
 * makes *opts the option table cli_options_with_params(base, vt, skip)
 * (the caller frees it).  Returns -1 to go on, or an exit status after
 * printing the error (an unknown verifier: 64; a plugin that cannot be
 * loaded: 65/66; out of memory: 71). */
struct option;
int cli_verifier_prescan(const char *cmd, int argc, char **argv, const char *algo_opt,
                         const char *def, const struct option *base, const char *const *skip,
                         cli_verifier *cv, struct option **opts);

/* A new option table: `base` (ending in a zero entry), then vt's
 * parameters (val CLI_OPT_PARAM + index; names in `skip`, NULL-terminated,
 * left out, and so is a name of `base`, which getopt_long finds first).
 * NULL when out of memory; the caller frees it. */
struct option;
struct option *cli_options_with_params(const struct option *base, const sd_verifier_type *vt,
                                       const char *const *skip);

/* 1 handled (a parameter of cv->vt), 0 not a parameter, -1 bad value (err
 * set). */
int cli_param_option(cli_verifier *cv, int c, const char *arg, sd_error *err);

/* The options every command that takes a verifier shares: the model
 * options (cli_model_option), --plugin, --progress and cv's parameters
 * (cli_param_option).  1 if c was one of them (a bad value: the error is
 * printed and *status set to its exit code), 0 otherwise. */
int cli_verifier_option(cli_model_opts *mo, cli_verifier *cv, int c, const char *arg, int *status);

/* Like cli_option_error, but an option that is a parameter of another
 * verifier is named as such ("--eps does not apply to --algo token (it
 * reads: gamma)"). */
int cli_unknown_option(const char *cmd, int c, char **argv, const sd_verifier_type *vt);

/* The parameter help generated from the declarations: vt's, or (vt NULL)
 * every known verifier's, each name once with the verifiers reading it. */
void cli_params_help(FILE *f, const sd_verifier_type *vt);

/* A verifier command's --help: head, the parameters of cv's verifier when
 * the command line named one (else every verifier's), then the model
 * options; on stdout. */
void cli_verifier_help(const char *head, const cli_verifier *cv);

/* `run --list`: every known verifier (plugins included), its parameters and
 * summary, controls marked. */
void cli_verifier_list(FILE *f);
/* The names of the verifiers (controls aside) that `pick` selects,
 * separated by `sep`, into buf (cut at len); returns buf. */
const char *cli_verifier_names(char *buf, size_t len, const char *sep, int (*pick)(const sd_verifier_type *));
/* The same as a JSON array of {name, summary, params: [names], control}
 * (new reference). */
json_t *cli_verifier_list_json(void);
/* The same as CSV on stdout: name,params (space-separated),control (0/1),summary. */
void cli_verifier_list_csv(void);
/* Writes ",s" on stdout, s quoted as a CSV field when it holds a comma,
 * quote or newline (NULL: an empty field). */
void cli_csv_field(const char *s);

/* Output formats. */
typedef enum { CLI_FMT_TABLE = 0, CLI_FMT_JSON, CLI_FMT_CSV } cli_format;
/* Sets *fmt to want: -1 to go on, or 64 (printed) when another machine
 * format was given already (--json with --csv). */
int cli_set_format(const char *cmd, cli_format *fmt, cli_format want);

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
