/* cmd_trace.h — `simdec trace` (cli/cmd_trace.c) with its arrays given
 * directly (the Python binding, cli/api_trace.c). */
#ifndef CMD_TRACE_H
#define CMD_TRACE_H

#include <jansson.h>

#include "../sims/exact/sd_trace.h"

/* Runs `simdec trace ARGV...` (argv[0] = "trace").  With given != NULL the
 * arrays are those (no --tokens/--draft/--target/--ratios) and, with
 * json_out != NULL, the --json value is handed back instead of printed
 * (the caller decrefs it).  Returns the exit status; errors are printed
 * on stderr as the command line prints them. */
int cli_trace_with_input(int argc, char **argv, const sd_trace_input *given, json_t **json_out);

#endif
