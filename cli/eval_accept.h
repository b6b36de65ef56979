/* eval_accept.h — `simdec eval accept-length --algo NAME` for a verifier
 * other than token, block, full and the built-in tree verifiers (whose
 * values cmd_eval.c computes by enumeration): a plugin's, a Python
 * verifier's, any registered one (eval_accept.c). */
#ifndef CLI_EVAL_ACCEPT_H
#define CLI_EVAL_ACCEPT_H

#include <stddef.h>

#include "cli_opts.h"

/* 1 if `eval accept-length ARGV` names such a verifier with --algo (the
 * plugins of argv are loaded to know); argv[0] is "accept-length". */
int eval_accept_takes(int argc, char **argv);

/* argv[0] is "accept-length". */
int cmd_eval_accept_verifier(int argc, char **argv);

/* The same command from named fields (cli_field, cli_opts.h; the plugins
 * loaded already), its output JSON: -1 when the fields name no such
 * verifier (eval_accept_takes' rule; cmd_eval.c evaluates it), else the
 * exit status. */
int eval_accept_fields(const cli_field *fields, size_t n);

#endif
