/* eval_speedup.h — `simdec eval speedup` (eval_speedup.c). */
#ifndef CLI_EVAL_SPEEDUP_H
#define CLI_EVAL_SPEEDUP_H

#include "cli_opts.h"

/* argv[0] is "speedup". */
int cmd_eval_speedup(int argc, char **argv);
/* The same from named fields (cli_opts.h: the options without dashes; a
 * "draft-policy" field: eval_policy_fields), the plugins loaded already;
 * prints the JSON of --json and returns the exit status. */
int eval_speedup_fields(const cli_field *fields, size_t n);

#endif
