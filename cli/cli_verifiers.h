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

/* The accepted draft tokens of the FIRST iteration of verifier vt
 * (parameters par, draft length G: its gamma, or its tree's depth) from
 * the context x_{t-1} = a of chain c: the iteration runs on the sub-chain
 * of horizon min(T - t + 1, G + 1) that starts there (x_0 = a).  With
 * trials > 0, *acc gets the Monte-Carlo mean over trials (seed, i) of the
 * trial engine stopped after its first iteration; with exact != NULL,
 * *exact gets E[accepted] from the verifier's iteration law (each
 * outcome's emitted tokens minus the one that ends it: a bonus or a
 * residual draw), NaN when it has none or refuses it (*why then says
 * why, if given).  SD_OK or a status with err set. */
#include <stdint.h>
int cli_first_iteration(const sd_verifier_type *vt, const sd_params *par, const sd_chain *c, size_t t, size_t a,
                        size_t G, uint64_t trials, uint64_t seed, sd_welford *acc, double *exact, char *why,
                        size_t whylen, sd_error *err);

/* "a, b and c" into buf (the listed names). */
const char *cli_verifiers_names(const cli_verifiers *vs, char *buf, size_t len);

#endif
