/* commands.h — the commands of `simdec`, one function each (cli/cmd_*.c).
 * Each takes the arguments after "simdec" (argv[0] is the command name) and
 * returns the process exit status (see cli.h). */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stddef.h>

#include "cli_opts.h"

int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
/* `check --json` from named fields (cli_fields_apply; the verifier algo,
 * NULL: token-level SD), the plugins loaded already: what it prints and
 * its exit status; a field that is not an option of check's: a usage
 * error. */
int cmd_check_fields(const char *algo, const cli_field *fields, size_t n);
int cmd_eval(int argc, char **argv);
/* `eval WHAT --json` from named fields, every evaluator (generation and
 * speedup through eval_generation_fields and eval_speedup_fields), the
 * plugins loaded already; an unknown evaluator or field: a usage error. */
int cmd_eval_fields(const char *what, const cli_field *fields, size_t n);
int cmd_eval_generation(int argc, char **argv); /* cli/cmd_eval_gen.c */
int eval_generation_fields(const cli_field *fields, size_t n);
int cmd_lp(int argc, char **argv);
/* `lp PROBLEM --json` from named fields (the compared verifier from a
 * field "compare"); a plugin, --help or an unknown name: CLI_NOT_A_FIELD
 * without running. */
int cmd_lp_fields(const char *problem, const cli_field *fields, size_t n);
int cmd_plot(int argc, char **argv);
int cmd_trace(int argc, char **argv); /* cli/cmd_trace.c */
int cmd_referee(int argc, char **argv); /* cli/cmd_referee.c */

/* `simdec ARGV...` without the program name: argv[0] is a command, --help,
 * -h, help or --version (argc 0: no command, usage on stderr); an unknown
 * command gets the nearest known name.  Returns the exit status.  The one
 * entry of ./simdec (main.c) and of the library's sd_api_main (cli/api.c). */
int cli_dispatch(int argc, char **argv);

#endif
