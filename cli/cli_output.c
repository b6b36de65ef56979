/* cli_output.c — output helpers of the command line: formats, JSON, CSV
 * fields, atomic files, progress lines (cli_output.h). */
#include "cli_output.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_exit.h"

double cli_gap_in_se(double a, double b, double se)
{
    double tiny = 64 * DBL_EPSILON * fmax(1.0, fmax(fabs(a), fabs(b)));
    double gap = fabs(a - b) <= tiny ? 0.0 : a - b;
    return se > tiny ? gap / se : gap == 0.0 ? 0.0 : NAN;
}

int cli_set_format(const char *cmd, cli_format *fmt, cli_format want)
{
    static const char *const names[] = {"table", "--json", "--csv"};
    if (*fmt != CLI_FMT_TABLE && *fmt != want)
        return cli_usage_error(cmd, "%s and %s are alternatives; give one", names[*fmt], names[want]);
    *fmt = want;
    return -1;
}

void cli_csv_field(const char *s)
{
    putchar(',');
    if (!s)
        return;
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

int cli_print_json(json_t *v)
{
    int rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(v);
    fputc('\n', stdout);
    if (rc != 0) {
        fprintf(stderr, "simdec: cannot write to standard output\n");
        return EX_CANTCREAT_;
    }
    return cli_stdout_status();
}

int cli_stdout_status(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return EX_OK_;
    fprintf(stderr, "simdec: cannot write to standard output\n");
    return EX_CANTCREAT_;
}

json_t *cli_json_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

int cli_write_atomic(const char *path, cli_writer_fn fn, void *ctx, sd_error *err)
{
    /* A device, FIFO or terminal (-o /dev/stdout, a pipe) is written in
     * place: renaming a temporary file over it would replace the device
     * itself (as root, -o /dev/null would delete /dev/null). */
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        FILE *f = fopen(path, "w");
        if (!f)
            return sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
        int rc = fn(f, ctx, err);
        if (fclose(f) != 0 && !rc)
            rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
        return rc;
    }
    size_t len = strlen(path) + 16;
    char *tmp = malloc(len);
    if (!tmp)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    snprintf(tmp, len, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    /* mkstemp's 0600 would become the output's mode: give it that of the
     * file it replaces, or what creating it would (0666 less the umask). */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, exists && S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    int rc = f ? fn(f, ctx, err) : sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
    if (f && fclose(f) != 0 && !rc)
        rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
    if (!f)
        close(fd);
    if (!rc && rename(tmp, path) != 0)
        rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

int cli_progress_force;

int cli_stderr_is_tty(void)
{
    return cli_progress_force || isatty(fileno(stderr));
}

void cli_progress_show(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *pr = ctx;
    long now = (long)time(NULL);
    if (pr->shown && now == pr->last && done < total)
        return;
    pr->last = now;
    pr->shown = 1;
    fprintf(stderr, "\rsimdec: %llu / %llu trials (%.0f%%)", (unsigned long long)done,
            (unsigned long long)total, 100.0 * (double)done / (double)total);
    fflush(stderr);
}

void cli_progress_end(cli_progress *pr)
{
    if (pr->shown)
        fputs("\r\033[K", stderr);
    pr->shown = 0;
}
