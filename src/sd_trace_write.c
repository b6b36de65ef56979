/* sd_trace_write.c — traces sampled from a chain (sd_trace_write.h). */
#include "sd_trace_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_dist.h"
#include "sd_npy.h"
#include "sd_rng.h"

double sd_trace_write_bytes(const sd_chain *c, size_t n)
{
    return sd_trace_write_fn_bytes(n, c->T, c->V, 1);
}

double sd_trace_write_fn_bytes(size_t n, size_t T, size_t V, int rows)
{
    double nt = (double)n * (double)T;
    return 8.0 * ((rows ? 2.0 * nt * (double)V : 2.0 * (double)V) + 2.0 * nt + (double)n + (double)T + 1.0);
}

/* A draw from w (V entries summing to 1) that never lands on a zero. */
static size_t S_draw(const double *w, size_t V, double u)
{
    size_t y = sd_dist_sample(w, V, 1.0, u);
    if (w[y] > 0.0)
        return y;
    for (size_t k = y; k-- > 0;) /* the CDF's rounding edge: the nearest token with mass */
        if (w[k] > 0.0)
            return k;
    for (size_t k = y + 1; k < V; k++)
        if (w[k] > 0.0)
            return k;
    return y;
}

static int S_chain_rows(const void *ctx, const int64_t *hist, size_t t, double *p, double *q, sd_error *err)
{
    (void)err;
    const sd_chain *c = ctx;
    size_t a = (size_t)hist[t - 1];
    memcpy(p, sd_chain_p(c, t, a), c->V * sizeof *p);
    memcpy(q, sd_chain_q(c, t, a), c->V * sizeof *q);
    return SD_OK;
}

int sd_trace_write(const sd_chain *c, size_t n, uint64_t seed, const char *dir, size_t max_bytes,
                   sd_error *err)
{
    return sd_trace_write_fn(n, c->T, c->V, c->init, S_chain_rows, c, 1, seed, dir, max_bytes, err);
}

int sd_trace_write_fn(size_t n, size_t T, size_t V, const double *init, sd_trace_rows_fn rowsf, const void *ctx,
                      int rows, uint64_t seed, const char *dir, size_t max_bytes, sd_error *err)
{
    double need = sd_trace_write_fn_bytes(n, T, V, rows);
    if (max_bytes && need > (double)max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "the traces take %.0f MB (%zu sequences x %zu positions x V = %zu%s); "
                                             "the limit is %.0f MB (--max-memory)", need / 1e6, n, T, V,
                            rows ? ", rows kept" : "", (double)max_bytes / 1e6);
    int64_t *tok = malloc(n * T * sizeof *tok), *x0 = malloc(n * sizeof *x0), *hist = malloc((T + 1) * sizeof *hist);
    size_t rowlen = rows ? n * T * V : V;
    double *p = malloc(rowlen * sizeof *p), *q = malloc(rowlen * sizeof *q), *r = malloc(n * T * sizeof *r);
    int rc = SD_OK;
    if (!tok || !x0 || !hist || !p || !q || !r) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        sd_stream s;
        sd_stream_init(&s, seed, i);
        size_t a = S_draw(init, V, sd_stream_uniform(&s));
        x0[i] = (int64_t)a;
        hist[0] = (int64_t)a;
        for (size_t t = 1; t <= T; t++) {
            size_t at = i * T + t - 1;
            double *pr = rows ? p + at * V : p, *qr = rows ? q + at * V : q;
            if ((rc = rowsf(ctx, hist, t, pr, qr, err)))
                break;
            size_t y = S_draw(qr, V, sd_stream_uniform(&s));
            tok[at] = (int64_t)y;
            r[at] = pr[y] / qr[y];
            hist[t] = (int64_t)y;
        }
    }
    /* every file to NAME.npy.tmp, then all renamed: no partial set is left */
    char path[5][4096], tmp[5][4200];
    size_t s2[2] = {n, T}, s3[3] = {n, T, V}, s1[1] = {n};
    const char *names[5] = {"tokens", "ratios", "prompts", "draft", "target"};
    int nf = rows ? 5 : 3, f = 0;
    for (; f < nf && !rc; f++) {
        if ((size_t)snprintf(path[f], sizeof path[f], "%s/%s.npy", dir, names[f]) >= sizeof path[f]) {
            rc = sd_error_set(err, SD_EIO, "%s: path too long", dir);
            break;
        }
        snprintf(tmp[f], sizeof tmp[f], "%s.tmp", path[f]);
        switch (f) {
        case 0: rc = sd_npy_write_at(tmp[f], "<i8", 2, s2, tok, 8, err); break;
        case 1: rc = sd_npy_write_at(tmp[f], "<f8", 2, s2, r, 8, err); break;
        case 2: rc = sd_npy_write_at(tmp[f], "<i8", 1, s1, x0, 8, err); break;
        case 3: rc = sd_npy_write_at(tmp[f], "<f8", 3, s3, p, 8, err); break;
        default: rc = sd_npy_write_at(tmp[f], "<f8", 3, s3, q, 8, err); break;
        }
    }
    for (int g = 0; g < nf && !rc; g++)
        if (rename(tmp[g], path[g]))
            rc = sd_error_set(err, SD_EIO, "%s: cannot write: %s", path[g], strerror(errno));
    if (rc)
        for (int g = 0; g < f && g < nf; g++)
            remove(tmp[g]);
    if (!rc && !rows)
        for (int g = 3; g < 5; g++) { /* rows of an earlier set would not match these tokens */
            char old[4096];
            if ((size_t)snprintf(old, sizeof old, "%s/%s.npy", dir, names[g]) < sizeof old)
                remove(old);
        }
done:
    free(tok);
    free(x0);
    free(hist);
    free(p);
    free(q);
    free(r);
    return rc;
}
