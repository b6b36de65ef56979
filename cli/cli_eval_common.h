/* cli_eval_common.h — what the eval commands that evaluate one verifier
 * (eval generation, eval speedup with or without --draft-policy) share:
 * the fields every point of theirs has, the head of their option table,
 * the options they handle alike, and reading a point from a command line
 * or named fields. */
#ifndef CLI_EVAL_COMMON_H
#define CLI_EVAL_COMMON_H

#include "cli_model.h"
#include "cli_opts.h"
#include "cli_verifier.h"

/* A point's verifier, model options and output form, in every such
 * command's request. */
typedef struct cli_eval_req {
    cli_verifier cv;
    cli_model_opts mo;
    int json; /* 1: one JSON object (--json, or named fields) */
} cli_eval_req;

/* getopt_long's vals of the shared options; a command numbers its own
 * from CLI_EVAL_OPT_FIRST_FREE. */
enum { CLI_EVAL_OPT_ALGO = CLI_OPT_FIRST_FREE, CLI_EVAL_OPT_JSON, CLI_EVAL_OPT_FIRST_FREE };

/* The head of such a command's option table: the model options, --plugin,
 * --algo. */
#define CLI_EVAL_LONGOPTS CLI_MODEL_LONGOPTS, CLI_PLUGIN_LONGOPT, {"algo", required_argument, 0, CLI_EVAL_OPT_ALGO}

/* The options these commands handle alike: those of cli_verifier_option,
 * --help (cli_verifier_help with head; exit status 0), --json, and --algo
 * (its verifier chosen already by cli_verifier_read).  1 if c was one of
 * them, *status then -1 to go on or the exit status; 0 otherwise. */
int cli_eval_option(cli_eval_req *e, const char *head, int c, const char *arg, int *status);

/* One point from a command line (argv non-NULL) or named fields (then e->json
 * is 1): the model options initialised, cli_verifier_read with the verifier
 * named by --algo (else the baseline), refusing no field, the options
 * through fn(rq, ...); then run(rq) when all were read.  e is rq's
 * cli_eval_req, the rest of rq zeroed or set to its defaults already.
 * Returns the exit status. */
int cli_eval_read(const char *cmd, int argc, char **argv, const cli_field *fields, size_t n,
                  const struct option *base, const char *const *skip, cli_field_fn fn, cli_eval_req *e, void *rq,
                  int (*run)(void *rq));

#endif
