/* sd_parse.c — strict parsing of option values (sd_parse.h). */
#include "sd_parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 if [s, end) holds only the characters of a decimal number: strtod also
 * reads hexadecimal ("0x10"), "inf" and "nan", which simdec refuses. */
int sd_parse_is_decimal(const char *s, const char *end)
{
    for (; s < end; s++)
        if (!strchr("0123456789+-.eE", *s) || !*s)
            return 0;
    return 1;
}

/* 2^53: every whole number up to here is exact as a double. */
#define S_EXACT_INT 9007199254740992.0

int sd_parse_u64(const char *opt, const char *s, uint64_t *out, sd_error *err)
{
    if (!s || !*s)
        return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number, got an empty value", opt);
    int digits = 1;
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c))
            digits = 0;
    if (digits) {
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno == ERANGE)
            return sd_error_set(err, SD_EUSAGE, "%s: '%s' is too large (at most %llu)", opt, s, ULLONG_MAX);
        *out = (uint64_t)v;
        return SD_OK;
    }
    /* Also accept a whole number in scientific notation ("1e6"). */
    char *end;
    double d = strtod(s, &end);
    if (end != s && *end == '\0' && sd_parse_is_decimal(s, end) && isfinite(d) && d >= 0.0 && d == floor(d) &&
        d <= S_EXACT_INT &&
        !isspace((unsigned char)s[0]) && s[0] != '-' && s[0] != '+') {
        *out = (uint64_t)d;
        return SD_OK;
    }
    return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number >= 0, got '%s'", opt, s);
}

int sd_parse_size(const char *opt, const char *s, size_t min, size_t max,
                   size_t *out, sd_error *err)
{
    uint64_t v = 0;
    if (sd_parse_u64(opt, s, &v, NULL) || v < min || v > max)
        return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number from %zu to %zu, got '%s'",
                            opt, min, max, s ? s : "");
    *out = (size_t)v;
    return SD_OK;
}

int sd_parse_double(const char *opt, const char *s, double min, double max,
                     double *out, sd_error *err)
{
    char *end = NULL;
    errno = 0;
    double d = (s && *s && !isspace((unsigned char)s[0])) ? strtod(s, &end) : NAN;
    if (!end || end == s || *end != '\0' || !sd_parse_is_decimal(s, end))
        return sd_error_set(err, SD_EUSAGE, "%s: expected a finite decimal number, got '%s'", opt, s ? s : "");
    if (!isfinite(d) || (errno == ERANGE && fabs(d) > 1.0))
        return sd_error_set(err, SD_EUSAGE, "%s: '%s' overflows a double", opt, s);
    if (errno == ERANGE)
        return sd_error_set(err, SD_EUSAGE, "%s: '%s' is too small to represent (it underflows to %g)",
                            opt, s, d);
    if (d < min || d > max)
        return sd_error_set(err, SD_EUSAGE, "%s: %s is out of range; expected %g to %g", opt, s, min, max);
    *out = d;
    return SD_OK;
}
