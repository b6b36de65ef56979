/* cli.h — the command-line front end's shared helpers, by job:
 *
 *   cli_exit.h      exit statuses, error printing
 *   cli_opts.h      getopt with "did you mean", shared option numbers,
 *                   strict numbers, probability lists
 *   cli_model.h     the model options and the model's identity
 *   cli_verifier.h  plugins, the verifier named, its parameters and help
 *   cli_output.h    table/JSON/CSV output, atomic files, progress lines
 *
 * Every command is `int cmd_NAME(int argc, char **argv)` (argv[0] is the
 * command name) returning a process exit status (cli_exit.h). */
#ifndef CLI_H
#define CLI_H

#include "cli_exit.h"
#include "cli_model.h"
#include "cli_opts.h"
#include "cli_output.h"
#include "cli_verifier.h"

#endif
