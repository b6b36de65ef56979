/* cli_exit.h — the command line's exit statuses and error printing.
 *
 * Every command returns a process exit status:
 *   0 success, 64 usage, 65 bad data (or too large), 66 cannot open input,
 *   70 internal or solver failure, 71 out of memory, 73 cannot write output.
 * Errors are printed once, on stderr, prefixed "simdec: ", by cli_fail(). */
#ifndef CLI_EXIT_H
#define CLI_EXIT_H

#include "../src/sd_error.h"

enum {
    EX_OK_ = 0,
    EX_USAGE_ = 64,
    EX_DATAERR_ = 65,
    EX_NOINPUT_ = 66,
    EX_SOFTWARE_ = 70,
    EX_OSERR_ = 71,
    EX_CANTCREAT_ = 73
};

/* The exit status for a library status. */
int cli_exit_code(sd_status code);

/* Prints "simdec: <err->msg>" on stderr and returns cli_exit_code. */
int cli_fail(const sd_error *err);
/* Prints "simdec: out of memory" and returns 71 (EX_OSERR_). */
int cli_out_of_memory(void);

/* Prints "simdec: <message>" and a hint to run `simdec CMD --help`;
 * returns 64. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));


#endif
