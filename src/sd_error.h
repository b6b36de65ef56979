/* sd_error.h — status codes and error records of the simdec library.
 *
 * Every library function that can fail returns an sd_status and, when the
 * caller passes a non-NULL sd_error, a sentence that names the file, field,
 * value and what was expected.  The library never prints and never exits;
 * only the command-line front end (cli/) turns a status into a message on
 * stderr and an exit code.  Misuse of an internal API (a NULL that the
 * contract forbids) is an assert, not a status. */
#ifndef SD_ERROR_H
#define SD_ERROR_H

#include <stddef.h>

typedef enum sd_status {
    SD_OK = 0,        /* success */
    SD_EUSAGE = 1,    /* an invalid parameter or option value (exit 64) */
    SD_EDATA = 2,     /* malformed or invalid input data (exit 65) */
    SD_EIO = 3,       /* an input cannot be opened or read (exit 66) */
    SD_ENOMEM = 4,    /* an allocation failed (exit 71) */
    SD_ETOOBIG = 5,   /* the problem would not fit in memory or time (exit 65) */
    SD_ESOLVER = 6,   /* a numerical solver failed or reported no optimum (exit 70) */
    SD_EINTERNAL = 7, /* a bug or an unexpected failure (exit 70) */
    SD_EOUTPUT = 8    /* an output cannot be written (exit 73) */
} sd_status;

#define SD_ERROR_MSG_MAX 1024

typedef struct sd_error {
    sd_status code;
    char msg[SD_ERROR_MSG_MAX];
} sd_error;

/* Records code and a printf-style message in err (if err is not NULL) and
 * returns code, so that `return sd_error_set(err, SD_EDATA, "...", ...);`
 * reports and propagates in one line.  A later call overwrites an earlier
 * one. */
int sd_error_set(sd_error *err, sd_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the message already in err with "prefix: " (for context such as
 * a file name added by an outer layer).  No-op when err is NULL. */
void sd_error_prefix(sd_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Clears err to SD_OK with an empty message.  No-op when err is NULL. */
void sd_error_clear(sd_error *err);

/* A short English name of a status ("bad data", ...). */
const char *sd_status_name(sd_status code);

/* Turns GSL's aborting default error handler off (idempotent).  Every
 * library entry point that calls GSL calls this first; GSL errors are then
 * reported through return codes that simdec checks. */
void sd_gsl_quiet(void);

#endif
