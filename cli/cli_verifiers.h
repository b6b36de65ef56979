/* cli_verifiers.h — several verifiers named by one option as a
 * comma-separated list (`lp ... --compare tree-rrs,traversal,my-rule`): the
 * plugins, the verifiers, and one option table holding the union of their
 * declared parameters.  A parameter given on the command line is set in
 * every listed verifier that declares it (each checks its own range). */
#ifndef CLI_VERIFIERS_H
#define CLI_VERIFIERS_H

#include "cli_verifier.h"

#define CLI_VERIFIERS_MAX 8

typedef struct cli_verifiers {
    size_t n;                            /* 0: the option was not given */
    cli_verifier v[CLI_VERIFIERS_MAX];   /* in the order listed; each named */
    const char *param[CLI_VERIFIERS_MAX * SD_PARAMS_MAX]; /* the union's names */
    size_t nparam;
} cli_verifiers;

/* Loads every --plugin FILE, reads the last --OPT LIST of argv, finds each
 * verifier of LIST (an unknown name: 64 with "did you mean"; more than
 * CLI_VERIFIERS_MAX or an empty name: 64), sets their parameters to their
 * defaults, and makes *opts `base` followed by the union of their
 * parameters not in `skip` (val CLI_OPT_PARAM + index into vs->param; the
 * caller frees it).  A parameter named as an option of `base` is refused
 * (65), as cli_verifier_prescan does.  Returns -1 to go on, or an exit
 * status after printing the error. */
struct option;
int cli_verifiers_prescan(const char *cmd, int argc, char **argv, const char *opt, const struct option *base,
                          const char *const *skip, cli_verifiers *vs, struct option **opts);
/* The same without the scan: the verifiers of `list` (NULL: none; an
 * error names it as --opt), the plugins loaded already (cmd_lp_fields). */
int cli_verifiers_choose(const char *cmd, const char *opt, const char *list, const struct option *base,
                         const char *const *skip, cli_verifiers *vs, struct option **opts);

/* 1 handled (a parameter of the union, set in each verifier declaring it,
 * or --plugin), 0 not one, -1 bad value (err set). */
int cli_verifiers_option(cli_verifiers *vs, int c, const char *arg, sd_error *err);

/* "a, b and c" into buf (the listed names). */
const char *cli_verifiers_names(const cli_verifiers *vs, char *buf, size_t len);

#endif
