/* cli_verifier.h — the verifier a command runs: plugins, the verifier
 * named on the command line, its declared parameters as options, their
 * help and the verifier list. */
#ifndef CLI_VERIFIER_H
#define CLI_VERIFIER_H

#include <jansson.h>
#include <stdio.h>

#include "../sims/engine/sd_verifier.h"
#include "../src/sd_error.h"
#include "cli_model.h"
#include "cli_opts.h"

/* --- verifiers ------------------------------------------------------------------
 *
 * A command that takes a verifier reads its command line once before
 * getopt runs (cli_args_scan, cli_opts.h): cli_verifier_prescan loads
 * every --plugin FILE and finds the verifier named by --algo (or another
 * option, e.g. lp's --compare) there, so that the option table can hold
 * that verifier's declared parameters (cli_options_with_params);
 * cli_param_option then parses them through the library
 * (sims/engine/sd_params.h).  `run` makes that one pass for its whole
 * sweep (cli_sweep_expand) and chooses each point's verifier by name
 * (cli_verifier_choose). */

typedef struct cli_verifier {
    const sd_verifier_type *vt; /* NULL when none was named and there is no default */
    sd_params par;
    int named;                  /* 1 if the command line named it */
} cli_verifier;

/* Loads the plugins named by --plugin FILE (SD_EIO/SD_EDATA); a file
 * loaded already is not loaded again. */
int cli_plugins_load(const cli_args *args, sd_error *err);
/* One plugin file (the same rule); and every field named "plugin" of a
 * command given as named fields (cli_field, cli_opts.h). */
int cli_plugin_load(const char *path, sd_error *err);
int cli_plugins_load_fields(const cli_field *fields, size_t n, sd_error *err);
/* --plugin FILE, for every command that takes a verifier. */
#define CLI_PLUGIN_LONGOPT {"plugin", required_argument, 0, CLI_OPT_PLUGIN}
/* --progress: progress lines on stderr even when it is not a terminal
 * (handled by cli_param_option; sets cli_progress_force). */
#define CLI_PROGRESS_LONGOPT {"progress", no_argument, 0, CLI_OPT_PROGRESS}

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
/* The same without the scan: the verifier `name` (NULL: `def`, and
 * cv->named = 0), the plugins loaded already. */
int cli_verifier_choose(const char *cmd, const char *name, const char *def, const struct option *base,
                        const char *const *skip, cli_verifier *cv, struct option **opts);

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

/* The command line's twin of cli_fields_apply: reads argv's options with
 * getopt_long (":h", opts), each through fn(ctx, c, optarg) (its 1: not
 * this command's, the usage error of cli_unknown_option with vt), then
 * refuses a positional argument left over.  Returns -1 when all were read,
 * else the exit status. */
int cli_options_read(const char *cmd, int argc, char **argv, const struct option *opts, cli_field_fn fn, void *ctx,
                     const sd_verifier_type *vt);

/* One verifier command's point, from a command line (argv non-NULL) or
 * from named fields (the plugins loaded already): the verifier named by
 * --algo, or with fields `algo` (NULL: the last field "algo", else the
 * baseline), chosen into *cv
 * with the option table base + its parameters (skip as in
 * cli_options_with_params), then every option read through fn
 * (cli_options_read; cli_fields_apply refusing the options in `refuse`,
 * zero-terminated, and saying why with cli_fields_refused).  Returns -1 to
 * go on, or an exit status after printing the error; then *mo is released. */
int cli_verifier_read(const char *cmd, int argc, char **argv, const char *algo, const cli_field *fields, size_t n,
                      const struct option *base, const char *const *skip, const int *refuse, cli_field_fn fn,
                      void *ctx, cli_verifier *cv, cli_model_opts *mo);

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
/* The same as a JSON array of {name, summary, params: [names], control}
 * (new reference). */
json_t *cli_verifier_list_json(void);
/* The same as CSV on stdout: name,params (space-separated),control (0/1),summary. */
void cli_verifier_list_csv(void);

#endif
