/* eval_policy.h — `simdec eval speedup --draft-policy RULE` (eval_policy.c). */
#ifndef CLI_EVAL_POLICY_H
#define CLI_EVAL_POLICY_H

#include "cli_opts.h"

/* argv[0] is "speedup". */
int cmd_eval_policy(int argc, char **argv);
/* The same from named fields (cli_opts.h), the plugins loaded already;
 * prints the JSON of --json and returns the exit status. */
int eval_policy_fields(const cli_field *fields, size_t n);

#endif
