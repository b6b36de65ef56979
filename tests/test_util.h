/* test_util.h — helpers shared by the Criterion tests.
 *
 * tu_run() runs the simdec executable (path in $SIMDEC_BIN, set by
 * scripts/run-tests.sh; default ./simdec) through /bin/sh with the given
 * argument string, captures stdout and stderr, and returns the exit status
 * (or 128+signal when it died of a signal).  *out and *err are malloc'd and
 * NUL-terminated; the caller frees them (either may be NULL to discard). */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stddef.h>

int tu_run(const char *args, char **out, char **err);

/* Writes text to a fresh temporary file and returns its malloc'd path. */
char *tu_tempfile(const char *text);

/* 1 if needle occurs in hay (NULL-safe). */
int tu_contains(const char *hay, const char *needle);

#endif
