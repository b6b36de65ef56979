/* sd_parse.h — strict parsing of option values.
 *
 * The whole string must be the number: "12x", "0x10", "inf", " 3" and ""
 * are refused.  `opt` names the option or parameter in the message
 * ("--trials: expected a whole number from 1 to 100, got '1.5'"), so the
 * command line, verifier parameters (sims/engine/sd_params.c) and the Python
 * interface refuse bad values with the same words.  Every function returns
 * SD_OK or SD_EUSAGE with err set. */
#ifndef SD_PARSE_H
#define SD_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "sd_error.h"

/* A whole number >= 0: digits, or a whole number in scientific notation
 * ("1e6") up to 2^53. */
int sd_parse_u64(const char *opt, const char *s, uint64_t *out, sd_error *err);

/* A whole number in [min, max]. */
int sd_parse_size(const char *opt, const char *s, size_t min, size_t max, size_t *out,
                  sd_error *err);

/* A finite decimal double in [min, max]; an underflow to 0 or a denormal is
 * refused with its value named. */
int sd_parse_double(const char *opt, const char *s, double min, double max, double *out,
                    sd_error *err);

/* 1 if [s, end) holds only the characters of a decimal number. */
int sd_parse_is_decimal(const char *s, const char *end);

#endif
