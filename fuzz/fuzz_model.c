/* fuzz_model.c — libFuzzer harness for the simdec-chain-1 model parser
 * (src/sd_chain_io.c, sd_chain_load_string).
 *
 * Any input must either be refused with a status and a message, or load
 * into a chain that satisfies the sd_chain.h invariant (every row finite,
 * >= 0, summing to 1 within 1e-12) and survives a write and a reload bit
 * for bit (sd_chain_write promises 17 significant digits).  Anything else
 * — a crash, a sanitizer report, a leak, an abort() below — is a finding.
 * The loader's allocations are bounded by what the input holds, so
 * libFuzzer's -malloc_limit_mb catches a size checked too late.
 *
 * Build and run: make fuzz (mk/quality.mk). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_chain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The sd_chain.h invariant on n rows of V entries. */
static void S_rows_valid(const double *m, size_t n, size_t V)
{
    for (size_t r = 0; r < n; r++) {
        double s = 0.0;
        for (size_t i = 0; i < V; i++) {
            double x = m[r * V + i];
            if (!isfinite(x) || x < 0.0)
                abort();
            s += x;
        }
        if (fabs(s - 1.0) > 1e-12)
            abort();
    }
}

static void S_same(const double *a, const double *b, size_t n)
{
    if (memcmp(a, b, n * sizeof *a) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* sd_chain_load_string wants a NUL-terminated string; an embedded NUL
     * ends it, which jansson then sees as the end of the input. */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    sd_chain *c = NULL;
    sd_error err;
    sd_error_clear(&err);
    int rc = sd_chain_load_string(text, "fuzz", &c, &err);
    free(text);
    if (rc != SD_OK) {
        /* refused: a status, a message, no chain */
        if (c || (int)err.code != rc || err.msg[0] == '\0')
            abort();
        return 0;
    }
    if (!c || c->V == 0 || c->T == 0 || (c->draft_steps != 1 && c->draft_steps != c->T) ||
        (c->target_steps != 1 && c->target_steps != c->T))
        abort();
    size_t V = c->V;
    S_rows_valid(c->init, 1, V);
    S_rows_valid(c->draft, c->draft_steps * V, V);
    S_rows_valid(c->target, c->target_steps * V, V);

    /* Write and reload: the same chain, bit for bit. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        int wrc = sd_chain_write(c, f, &err);
        fclose(f);
        sd_chain *d = NULL;
        if (wrc != SD_OK || sd_chain_load_string(buf, "fuzz (reloaded)", &d, &err) != SD_OK)
            abort();
        if (d->V != V || d->T != c->T || d->draft_steps != c->draft_steps ||
            d->target_steps != c->target_steps)
            abort();
        S_same(c->init, d->init, V);
        S_same(c->draft, d->draft, c->draft_steps * V * V);
        S_same(c->target, d->target, c->target_steps * V * V);
        sd_chain_free(d);
        free(buf);
    }
    sd_chain_free(c);
    return 0;
}
