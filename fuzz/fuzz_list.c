/* fuzz_list.c — libFuzzer harness for the command line's number parsers
 * (cli/cli_opts.c): cli_parse_list (--p/--q, inline or @FILE) and
 * cli_parse_size / cli_parse_u64 / cli_parse_double (every numeric option).
 *
 * An input starting with '@' is written (without the '@') to a private
 * temporary file and parsed as "@FILE", so the file path of the parser —
 * reading, the NUL-byte check, the size limit — is fuzzed without letting
 * the fuzzer name arbitrary files (/dev/zero, a FIFO).  Other inputs are
 * parsed as an inline list, and as a value of each numeric option.
 *
 * Properties (abort() on violation): a refusal sets a status and a message
 * and allocates nothing for the caller; an accepted list has >= 1 entries,
 * each finite and >= 0, summing to 1 within 1e-12 (renormalised); an
 * accepted number lies in the requested range.
 *
 * Build and run: make fuzz (mk/quality.mk). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char S_path[64];

static void S_check_refusal(int rc, const sd_error *err)
{
    if ((int)err->code != rc || err->msg[0] == '\0')
        abort();
}

static void S_list(const char *arg)
{
    double *x = NULL;
    size_t n = 0;
    sd_error err;
    sd_error_clear(&err);
    int rc = cli_parse_list("--p", arg, &x, &n, &err);
    if (rc != SD_OK) {
        S_check_refusal(rc, &err);
        if (x)
            abort();
        return;
    }
    if (!x || n == 0)
        abort();
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] < 0.0)
            abort();
        s += x[i];
    }
    if (fabs(s - 1.0) > 1e-12)
        abort();
    free(x);
}

static void S_numbers(const char *arg)
{
    sd_error err;
    size_t z;
    uint64_t u;
    double d;
    int rc = cli_parse_size("--T", arg, 1, (size_t)1 << 24, &z, &err);
    if (rc == SD_OK && (z < 1 || z > ((size_t)1 << 24)))
        abort();
    if (rc != SD_OK)
        S_check_refusal(rc, &err);
    rc = cli_parse_u64("--seed", arg, &u, &err);
    if (rc != SD_OK)
        S_check_refusal(rc, &err);
    rc = cli_parse_double("--eps", arg, 0.0, 1e300, &d, &err);
    if (rc == SD_OK && !(isfinite(d) && d >= 0.0 && d <= 1e300))
        abort();
    if (rc != SD_OK)
        S_check_refusal(rc, &err);
    rc = cli_parse_double("--tp", arg, 0.0, 1.0, &d, &err);
    if (rc == SD_OK && !(d >= 0.0 && d <= 1.0))
        abort();
    if (rc != SD_OK)
        S_check_refusal(rc, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] == '@') {
        if (!S_path[0])
            snprintf(S_path, sizeof S_path, "/tmp/simdec-fuzz-list-%ld.txt", (long)getpid());
        FILE *f = fopen(S_path, "wb");
        if (!f)
            return 0;
        fwrite(data + 1, 1, size - 1, f);
        fclose(f);
        char arg[80];
        snprintf(arg, sizeof arg, "@%s", S_path);
        S_list(arg);
        unlink(S_path);
        return 0;
    }
    char *arg = malloc(size + 1);
    if (!arg)
        return 0;
    memcpy(arg, data, size);
    arg[size] = '\0';
    S_list(arg);
    S_numbers(arg);
    free(arg);
    return 0;
}
