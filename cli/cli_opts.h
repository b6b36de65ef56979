/* cli_opts.h — option parsing helpers of the command line: getopt_long
 * with "did you mean", the numbering of shared options, strict numbers,
 * probability lists, lists of verifier names for messages. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "../sims/engine/sd_verifier.h"
#include "../src/sd_error.h"
#include "../src/sd_parse.h"

/* The usage error for what getopt_long returned as c when it is not an
 * option of the command: ':' (an option missing its value) or anything
 * else (an unknown option, named from argv).  Returns 64. */
int cli_option_error(const char *cmd, int c, char **argv);

/* getopt_long(argc, argv, shortopts, opts, NULL), remembering opts while
 * the loop runs so that cli_option_error can suggest the nearest option
 * ("unknown option '--gama'; did you mean '--gamma'?"). */
struct option;
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts);

/* The long option cli_getopt returned last as the command line spelled it
 * ("--model-alpha=2"), or NULL. */
const char *cli_getopt_spelled(void);

/* The `val`s of the options several commands share (getopt_long's table
 * entries: CLI_MODEL_LONGOPTS in cli_model.h, CLI_PLUGIN_LONGOPT and
 * CLI_PROGRESS_LONGOPT in cli_verifier.h). */
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
/* cli_parse_list with row tolerance tol; *sum_out gets the sum as given,
 * before renormalising (the --p/--q lists are read within 0.01 and checked
 * against --tol later). */
int cli_parse_list_tol(const char *opt, const char *s, double tol, double **out, size_t *n, double *sum_out,
                       sd_error *err);

/* The names of the verifiers (controls aside) that `pick` selects,
 * separated by `sep`, into buf (cut at len); returns buf. */
const char *cli_verifier_names(char *buf, size_t len, const char *sep, int (*pick)(const sd_verifier_type *));

/* --- one pass over a command line ------------------------------------------------
 *
 * Before getopt runs, a command that takes a verifier needs a few options'
 * values: the plugins to load, the verifier named (its parameters are
 * options), the lists a sweep expands, --paired.  cli_args_scan reads argv
 * once (up to "--") into its long options; everything before getopt reads
 * that, never argv again. */
typedef struct cli_arg {
    int at;             /* index in argv */
    char name[64];      /* after the dashes, up to '=' ("" when longer than 63) */
    const char *joined; /* the value of --name=value, or NULL */
} cli_arg;
typedef struct cli_args {
    int argc;
    char **argv;
    size_t n;
    cli_arg *opt;       /* [n]: every argument "--NAME..." before "--", in order */
} cli_args;
/* 0, or SD_ENOMEM.  Free with cli_args_free. */
int cli_args_scan(int argc, char **argv, cli_args *a);
void cli_args_free(cli_args *a);
/* The value getopt gives option i when it takes one: the joined value or
 * the next argument (NULL: none); *val_at its index in argv (== at when
 * joined). */
const char *cli_args_value(const cli_args *a, size_t i, int *val_at);
/* The value of a list-valued option as a sweep reads it: joined, or the
 * next argument unless that starts with "--" (the next option: in
 * `--json --algo a,b`, --json takes none); NULL: none. */
const char *cli_args_list_value(const cli_args *a, size_t i, int *val_at);
/* The value of the last --name (getopt's rule: the last one wins), or NULL;
 * *at (when given) the index of that option, *val_at of its value. */
const char *cli_args_last(const cli_args *a, const char *name, int *at, int *val_at);
/* 1 if --name (or --name=...) is given. */
int cli_args_has(const cli_args *a, const char *name);


/* --- named fields instead of a command line ----------------------------------------
 *
 * The Python package gives run and check their options as fields {name,
 * value} (cli/api.h): the option's name without dashes and its text (NULL
 * for a flag).  cli_fields_apply reads each through the command's own
 * option table and handler, so values and errors are the command line's. */
typedef struct cli_field {
    const char *name;
    const char *value;
} cli_field;
/* The value of the last field `name` (NULL: none, or a flag); 1 if a
 * field `name` is given. */
const char *cli_fields_last(const cli_field *fields, size_t n, const char *name);
int cli_fields_has(const cli_field *fields, size_t n, const char *name);
/* A field that is no option of the command's, or one the caller refuses:
 * nothing ran, the command line says what is wrong. */
#define CLI_NOT_A_FIELD 1000
/* fn(ctx, c, value): -1 to go on, 1 when c is not the command's, or an exit
 * status. */
typedef int (*cli_field_fn)(void *ctx, int c, const char *value);
/* Applies the fields in order (the last of a name wins, as with getopt):
 * each is looked up by its exact name in opts (a getopt_long table ending
 * in a zero entry); CLI_NOT_A_FIELD when a name is not there, its val is in
 * refuse (zero-terminated), a flag has a value or an option has none.
 * Returns -1 when all were read, else CLI_NOT_A_FIELD or fn's status. */
struct option;
int cli_fields_apply(const struct option *opts, const cli_field *fields, size_t n, const int *refuse,
                     cli_field_fn fn, void *ctx);
/* The usage error (64) for the field cli_fields_apply refused last: an
 * unknown name (with the nearest option's; a parameter of another verifier
 * than vt, when vt is given: whose), a flag given a value, an option
 * without one, or an option not taken here. */
int cli_fields_refused(const char *cmd, const sd_verifier_type *vt);

#endif
