/* cli_exit.c — exit statuses and error printing of the command line
 * (cli_exit.h). */
#include "cli_exit.h"

#include <stdarg.h>
#include <stdio.h>

int cli_exit_code(sd_status code)
{
    switch (code) {
    case SD_OK: return EX_OK_;
    case SD_EUSAGE: return EX_USAGE_;
    case SD_EDATA: return EX_DATAERR_;
    case SD_ETOOBIG: return EX_DATAERR_;
    case SD_EIO: return EX_NOINPUT_;
    case SD_ENOMEM: return EX_OSERR_;
    case SD_EOUTPUT: return EX_CANTCREAT_;
    case SD_ESOLVER: return EX_SOFTWARE_;
    case SD_EINTERNAL: return EX_SOFTWARE_;
    }
    return EX_SOFTWARE_;
}

/* Writes a message that may quote the user's input with control bytes
 * (terminal escape sequences, NULs of a binary file) shown as \xNN. */
static void S_put_clean(const char *msg)
{
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    }
}

int cli_fail(const sd_error *err)
{
    fflush(stdout);
    fputs("simdec: ", stderr);
    /* A failure whose error says "success" (a callee returned a status but
     * set none) is still a failure: exit 70, never 0. */
    sd_status code = err->code != SD_OK ? err->code : SD_EINTERNAL;
    S_put_clean(err->msg[0] ? err->msg : err->code != SD_OK ? sd_status_name(code) : "failed without an error message");
    fputc('\n', stderr);
    return cli_exit_code(code);
}

int cli_out_of_memory(void)
{
    sd_error err;
    sd_error_set(&err, SD_ENOMEM, "out of memory");
    return cli_fail(&err);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[SD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fputs("simdec: ", stderr);
    S_put_clean(msg);
    fprintf(stderr, "\nsimdec: see 'simdec %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
    return EX_USAGE_;
}
