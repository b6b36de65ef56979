/* fuzz_samples.c — libFuzzer harness for the samples reader
 * (src/sd_samples.h), which `simdec check --samples` runs on files any
 * program wrote.
 *
 * The first two bytes choose V = 1 + b0 % 12 and L = 1 + b1 % 3; the rest
 * is the file.  Properties (abort() on violation): an accepted file has
 * >= 1 lines and its cell counts sum to the lines; a refusal is SD_EDATA
 * with a message naming the line and column (or an empty file).  Out-of-
 * range cell indices are caught by AddressSanitizer.
 *
 * Build and run: make fuzz (mk/quality.mk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_samples.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t V = 1 + data[0] % 12u, L = 1 + data[1] % 3u, cells = 1;
    for (size_t i = 0; i < L; i++)
        cells *= V;
    double *c = calloc(cells, sizeof *c);
    FILE *f = size > 2 ? fmemopen((char *)(uintptr_t)(data + 2), size - 2, "rb") : tmpfile();
    if (!c || !f) {
        free(c);
        if (f)
            fclose(f);
        return 0;
    }
    uint64_t lines = 0;
    sd_error err;
    sd_error_clear(&err);
    int rc = sd_samples_count(f, "fuzz.txt", V, L, c, &lines, &err);
    fclose(f);
    if (rc == SD_OK) {
        double sum = 0.0;
        for (size_t k = 0; k < cells; k++)
            sum += c[k];
        if (lines == 0 || sum != (double)lines)
            abort();
    } else if (rc != SD_EDATA || (int)err.code != rc ||
               (!strstr(err.msg, ": line ") && !strstr(err.msg, "no samples"))) {
        abort();
    }
    free(c);
    return 0;
}
