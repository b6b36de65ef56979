/* sd_trace_write.c — traces sampled from a chain (sd_trace_write.h). */
#include "sd_trace_write.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_dist.h"
#include "sd_npy.h"
#include "sd_rng.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* stdio buffer of each streamed row file */
#define S_IOBUF ((size_t)1 << 20)

double sd_trace_write_bytes(const sd_chain *c, size_t n)
{
    return sd_trace_write_fn_bytes(n, c->T, c->V, 1);
}

double sd_trace_write_fn_bytes(size_t n, size_t T, size_t V, int rows)
{
    (void)rows; /* rows are streamed to their files: one row pair in memory either way */
    double nt = (double)n * (double)T;
    return 8.0 * (2.0 * (double)V + 2.0 * nt + (double)n + (double)T + 1.0) + 2.0 * S_IOBUF;
}

double sd_trace_write_disk_bytes(size_t n, size_t T, size_t V, int rows)
{
    double nt = (double)n * (double)T;
    return 8.0 * ((rows ? 2.0 * nt * (double)V : 0.0) + 2.0 * nt + (double)n) + 5.0 * 128.0;
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

/* Bytes of dir/NAME.npy, 0 when absent (a file the new set replaces). */
static double S_old_size(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s.npy", dir, name) >= sizeof path || stat(path, &st))
        return 0.0;
    return (double)st.st_size;
}

/* Puts the new set tmp[0..nf) in place of path[0..5) as a whole: the
 * files of an earlier set are first moved aside (NAME.npy.old), the new
 * ones renamed in, then the old ones removed (draft.npy and target.npy of
 * an earlier set too when the new set has no rows: they would not match
 * its tokens).  A rename that fails undoes those before it, so dir holds
 * the earlier set unchanged or the whole new one. */
static int S_install(char path[5][4096], char tmp[5][4200], int nf, sd_error *err)
{
    char old[5][4200];
    int aside[5] = {0}, in = 0, rc = SD_OK;
    for (int g = 0; g < 5; g++)
        if ((size_t)snprintf(old[g], sizeof old[g], "%s.old", path[g]) >= sizeof old[g])
            return sd_error_set(err, SD_EIO, "%s: path too long", path[g]);
    for (int g = 0; g < 5 && !rc; g++) {
        if (access(path[g], F_OK))
            continue;
        if (rename(path[g], old[g]))
            rc = sd_error_set(err, SD_EIO, "%s: cannot move the earlier file aside: %s", path[g], strerror(errno));
        else
            aside[g] = 1;
    }
    for (; in < nf && !rc; in++)
        if (rename(tmp[in], path[in])) {
            rc = sd_error_set(err, SD_EIO, "%s: cannot write: %s", path[in], strerror(errno));
            break;
        }
    if (rc) {
        for (int g = 0; g < in; g++) /* the new files already in place go back to their temporary names */
            rename(path[g], tmp[g]);
        for (int g = 0; g < 5; g++)
            if (aside[g])
                rename(old[g], path[g]);
        return rc;
    }
    for (int g = 0; g < 5; g++)
        if (aside[g])
            remove(old[g]);
    return SD_OK;
}

static int S_write(size_t n, size_t T, size_t V, const double *init, sd_trace_rows_fn rowsf, sd_trace_draw_fn drawf,
                   const void *ctx, int rows, uint64_t seed, const char *dir, size_t max_bytes, sd_error *err)
{
    static const char *names[5] = {"tokens", "ratios", "prompts", "draft", "target"};
    double need = sd_trace_write_fn_bytes(n, T, V, rows);
    if (max_bytes && need > (double)max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "the traces take %.0f MB of memory (%zu sequences x %zu positions, "
                                             "V = %zu); the limit is %.0f MB (--max-memory)", need / 1e6, n, T, V,
                            (double)max_bytes / 1e6);
    if (need >= (double)SIZE_MAX) /* n T doubles do not fit in size_t: refused before the products overflow */
        return sd_error_set(err, SD_ETOOBIG, "the traces take %.3g bytes of memory (%zu sequences x %zu positions, "
                                             "V = %zu), beyond the address space", need, n, T, V);
    /* free disk, when the file system tells it: the files written here
     * replace those of an earlier set in dir, whose space returns */
    double disk = sd_trace_write_disk_bytes(n, T, V, rows);
    struct statvfs fs;
    if (!statvfs(dir, &fs)) {
        double avail = (double)fs.f_bavail * (double)fs.f_frsize;
        for (int g = 0; g < 5; g++)
            avail += S_old_size(dir, names[g]);
        if (disk > avail)
            return sd_error_set(err, SD_ETOOBIG, "%s: the traces take %.0f MB on disk (%zu sequences x %zu positions, "
                                                 "V = %zu%s); %.0f MB are free there", dir, disk / 1e6, n, T, V,
                                rows ? ", rows kept" : "", avail / 1e6);
    }
    int64_t *tok = malloc(n * T * sizeof *tok), *x0 = malloc(n * sizeof *x0), *hist = malloc((T + 1) * sizeof *hist);
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q), *r = malloc(n * T * sizeof *r);
    char path[5][4096], tmp[5][4200];
    FILE *rf[2] = {NULL, NULL}; /* draft.npy.tmp, target.npy.tmp: written row by row */
    int rc = SD_OK, nf = rows ? 5 : 3, f = 0;
    for (int g = 0; g < 5; g++)
        if ((size_t)snprintf(path[g], sizeof path[g], "%s/%s.npy", dir, names[g]) >= sizeof path[g] ||
            (size_t)snprintf(tmp[g], sizeof tmp[g], "%s/%s.npy.tmp", dir, names[g]) >= sizeof tmp[g]) {
            free(tok), free(x0), free(hist), free(p), free(q), free(r);
            return sd_error_set(err, SD_EIO, "%s: path too long", dir);
        }
    if (!tok || !x0 || !hist || !p || !q || !r) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        goto done;
    }
    size_t s3[3] = {n, T, V};
    for (int g = 0; g < 2 && rows; g++) {
        if (!(rf[g] = fopen(tmp[3 + g], "wb"))) {
            rc = sd_error_set(err, SD_EIO, "%s: cannot write: %s", tmp[3 + g], strerror(errno));
            goto done;
        }
        setvbuf(rf[g], NULL, _IOFBF, S_IOBUF);
        if (!sd_npy_header_write(rf[g], "<f8", 3, s3)) {
            rc = sd_error_set(err, SD_EIO, "%s: cannot write: %s", tmp[3 + g], strerror(errno));
            goto done;
        }
    }
    for (size_t i = 0; i < n && !rc; i++) {
        sd_stream s;
        sd_stream_init(&s, seed, i);
        size_t a = S_draw(init, V, sd_stream_uniform(&s));
        x0[i] = (int64_t)a;
        hist[0] = (int64_t)a;
        for (size_t t = 1; t <= T; t++) {
            size_t at = i * T + t - 1, y;
            if (drawf) {
                if ((rc = drawf(ctx, hist, t, sd_stream_uniform(&s), &y, &r[at], err)))
                    break;
            } else {
                if ((rc = rowsf(ctx, hist, t, p, q, err)))
                    break;
                y = S_draw(q, V, sd_stream_uniform(&s));
                r[at] = p[y] / q[y];
            }
            tok[at] = (int64_t)y;
            hist[t] = (int64_t)y;
            for (int g = 0; g < 2 && rows; g++)
                if (fwrite(g ? q : p, sizeof *p, V, rf[g]) != V) {
                    rc = sd_error_set(err, SD_EIO, "%s: cannot write: %s", tmp[3 + g], strerror(errno));
                    break;
                }
            if (rc)
                break;
        }
    }
    for (int g = 0; g < 2; g++)
        if (rf[g]) {
            if (fclose(rf[g]) && !rc)
                rc = sd_error_set(err, SD_EIO, "%s: cannot write: %s", tmp[3 + g], strerror(errno));
            rf[g] = NULL;
        }
    /* the small files to NAME.npy.tmp too, then the set installed whole (S_install) */
    size_t s2[2] = {n, T}, s1[1] = {n};
    for (; f < 3 && !rc; f++) {
        switch (f) {
        case 0: rc = sd_npy_write_at(tmp[f], "<i8", 2, s2, tok, 8, err); break;
        case 1: rc = sd_npy_write_at(tmp[f], "<f8", 2, s2, r, 8, err); break;
        default: rc = sd_npy_write_at(tmp[f], "<i8", 1, s1, x0, 8, err); break;
        }
    }
    if (!rc)
        rc = S_install(path, tmp, nf, err);
done:
    for (int g = 0; g < 2; g++)
        if (rf[g])
            fclose(rf[g]);
    if (rc)
        for (int g = 0; g < nf; g++)
            remove(tmp[g]);
    free(tok);
    free(x0);
    free(hist);
    free(p);
    free(q);
    free(r);
    return rc;
}

int sd_trace_write_fn(size_t n, size_t T, size_t V, const double *init, sd_trace_rows_fn rowsf, const void *ctx,
                      int rows, uint64_t seed, const char *dir, size_t max_bytes, sd_error *err)
{
    return S_write(n, T, V, init, rowsf, NULL, ctx, rows, seed, dir, max_bytes, err);
}

int sd_trace_write_draw(size_t n, size_t T, size_t V, const double *init, sd_trace_draw_fn drawf, const void *ctx,
                        uint64_t seed, const char *dir, size_t max_bytes, sd_error *err)
{
    return S_write(n, T, V, init, NULL, drawf, ctx, 0, seed, dir, max_bytes, err);
}
