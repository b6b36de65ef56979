/* sd_error.c — see sd_error.h. */
#include "sd_error.h"

#include <gsl/gsl_errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sd_error_set(sd_error *err, sd_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return (int)code;
}

void sd_error_prefix(sd_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char old[SD_ERROR_MSG_MAX];
    memcpy(old, err->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (used + 2 < sizeof err->msg) {
        memcpy(err->msg + used, ": ", 2);
        size_t room = sizeof err->msg - used - 2, len = strlen(old);
        if (len >= room)
            len = room - 1;
        memcpy(err->msg + used + 2, old, len);
        err->msg[used + 2 + len] = '\0';
    }
}

void sd_error_clear(sd_error *err)
{
    if (err) {
        err->code = SD_OK;
        err->msg[0] = '\0';
    }
}

const char *sd_status_name(sd_status code)
{
    switch (code) {
    case SD_OK: return "success";
    case SD_EUSAGE: return "invalid parameter";
    case SD_EDATA: return "bad data";
    case SD_EIO: return "cannot open input";
    case SD_ENOMEM: return "out of memory";
    case SD_ETOOBIG: return "problem too large";
    case SD_ESOLVER: return "solver failure";
    case SD_EINTERNAL: return "internal error";
    case SD_EOUTPUT: return "cannot write output";
    }
    return "unknown status";
}

void sd_gsl_quiet(void)
{
    /* Idempotent and cheap: GSL keeps one global handler pointer. */
    gsl_set_error_handler_off();
}
