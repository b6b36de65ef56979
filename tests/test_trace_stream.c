/* test_trace_stream.c — traces written with their rows streamed
 * (src/sd_trace_write.h): the files hold exactly the rows along each
 * sampled path, and too large a set is refused before anything is written. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/sd_chain.h"
#include "../src/sd_npy.h"
#include "../src/sd_trace_write.h"
#include "test_util.h"

static char *S_dir(void)
{
    char *d = strdup("/tmp/simdec-trace-stream-XXXXXX");
    cr_assert(d && mkdtemp(d));
    return d;
}

static void S_open(sd_npy *a, const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    sd_error err = {0};
    cr_assert_eq(sd_npy_open(a, path, &err), SD_OK, "%s", err.msg);
}

static void S_clean(char *dir)
{
    static const char *names[] = {"tokens", "ratios", "prompts", "draft", "target"};
    char path[512];
    for (size_t g = 0; g < 5; g++) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[g]);
        remove(path);
        snprintf(path, sizeof path, "%s/%s.npy.tmp", dir, names[g]);
        remove(path);
    }
    rmdir(dir);
    free(dir);
}

/* Every streamed row is the chain's row at the sampled context, bit for bit,
 * and every ratio is p/q of those rows at the sampled token; a second
 * write with the same seed gives the same bytes. */
Test(trace_stream, rows_on_disk_are_the_rows_along_each_path)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    sd_chain *c = tu_random_chain(r, 5, 6, 0.7, 0.3);
    const size_t n = 40, T = c->T, V = c->V;
    char *dir = S_dir();
    sd_error err = {0};
    cr_assert_eq(sd_trace_write(c, n, 3, dir, 0, &err), SD_OK, "%s", err.msg);
    sd_npy tok, x0, rat, P, Q;
    S_open(&tok, dir, "tokens");
    S_open(&x0, dir, "prompts");
    S_open(&rat, dir, "ratios");
    S_open(&P, dir, "draft");
    S_open(&Q, dir, "target");
    cr_assert(P.ndim == 3 && P.shape[0] == n && P.shape[1] == T && P.shape[2] == V);
    cr_assert(Q.count == n * T * V && tok.count == n * T && rat.count == n * T && x0.count == n);
    for (size_t i = 0; i < n; i++) {
        size_t a = (size_t)sd_npy_get(&x0, i);
        for (size_t t = 1; t <= T; t++) {
            size_t at = i * T + t - 1, y = (size_t)sd_npy_get(&tok, at);
            const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
            cr_assert_eq(memcmp(P.data + at * V * 8, p, V * 8), 0, "draft row of sequence %zu, t %zu", i, t);
            cr_assert_eq(memcmp(Q.data + at * V * 8, q, V * 8), 0, "target row of sequence %zu, t %zu", i, t);
            cr_assert(q[y] > 0.0);
            cr_assert_eq(sd_npy_get(&rat, at), p[y] / q[y]);
            a = y;
        }
    }
    char *b1 = NULL;
    {
        char path[512];
        snprintf(path, sizeof path, "%s/target.npy", dir);
        b1 = tu_slurp(path);
    }
    sd_npy_close(&tok), sd_npy_close(&x0), sd_npy_close(&rat), sd_npy_close(&P), sd_npy_close(&Q);
    cr_assert_eq(sd_trace_write(c, n, 3, dir, 0, &err), SD_OK, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/target.npy", dir);
    char *b2 = tu_slurp(path);
    cr_assert(b1 && b2);
    sd_npy_open(&Q, path, &err);
    cr_assert_eq(memcmp(b1, b2, 128 + n * T * V * 8), 0, "the same seed writes the same bytes");
    sd_npy_close(&Q);
    free(b1);
    free(b2);
    S_clean(dir);
    sd_chain_free(c);
    gsl_rng_free(r);
}

/* The bytes of dir/name (*len of them; NULL, 0 when absent). */
static char *S_file(const char *dir, const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    size_t cap = 0, got;
    do {
        cap = cap ? 2 * cap : 4096;
        b = realloc(b, cap);
        cr_assert_not_null(b);
        got = fread(b + *len, 1, cap - *len, f);
        *len += got;
    } while (*len == cap);
    fclose(f);
    return b;
}

static int S_exists(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* A rename that fails while the set is put in place leaves the earlier set
 * whole.  target.npy of the earlier set is replaced by a non-empty
 * directory and target.npy.old is one too, so that neither the new
 * target.npy nor the earlier one moved aside can be renamed: the write
 * fails with SD_EIO after the files before target went aside, and dir
 * must still hold the earlier tokens, ratios, prompts and draft, byte for
 * byte, with no .tmp or .old file left.  Once the obstacles are gone the
 * same write succeeds (other tokens: the test would not see a mix
 * otherwise) and leaves no .old file. */
Test(trace_stream, a_failed_rename_leaves_the_earlier_set)
{
    static const char *const names[] = {"tokens.npy", "ratios.npy", "prompts.npy", "draft.npy"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    sd_chain *c = tu_random_chain(r, 5, 6, 0.7, 0.3);
    char *dir = S_dir(), path[512];
    sd_error err = {0};
    cr_assert_eq(sd_trace_write(c, 30, 3, dir, 0, &err), SD_OK, "%s", err.msg);
    char *before[4];
    size_t blen[4], len;
    for (int g = 0; g < 4; g++)
        cr_assert_not_null(before[g] = S_file(dir, names[g], &blen[g]), "%s", names[g]);
    static const char *const blocks[] = {"target.npy", "target.npy.old"};
    for (int b = 0; b < 2; b++) {
        snprintf(path, sizeof path, "%s/%s", dir, blocks[b]);
        remove(path);
        cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
        snprintf(path, sizeof path, "%s/%s/x", dir, blocks[b]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fclose(f);
    }
    cr_assert_eq(sd_trace_write(c, 30, 4, dir, 0, &err), SD_EIO);
    cr_log_info("refused: %s", err.msg);
    for (int g = 0; g < 4; g++) {
        char *now = S_file(dir, names[g], &len), tmp[64], old[64];
        cr_expect(now && len == blen[g] && !memcmp(now, before[g], len), "%s changed", names[g]);
        snprintf(tmp, sizeof tmp, "%s.tmp", names[g]);
        snprintf(old, sizeof old, "%s.old", names[g]);
        cr_expect(!S_exists(dir, tmp) && !S_exists(dir, old), "%s left behind", names[g]);
        free(now);
    }
    cr_expect(!S_exists(dir, "target.npy.tmp"));
    for (int b = 0; b < 2; b++) {
        snprintf(path, sizeof path, "%s/%s/x", dir, blocks[b]);
        remove(path);
        snprintf(path, sizeof path, "%s/%s", dir, blocks[b]);
        cr_assert_eq(rmdir(path), 0, "%s", path);
    }
    cr_assert_eq(sd_trace_write(c, 30, 4, dir, 0, &err), SD_OK, "%s", err.msg);
    char *tok = S_file(dir, "tokens.npy", &len);
    cr_expect(tok && len == blen[0] && memcmp(tok, before[0], len) != 0, "seed 4 writes other tokens");
    for (int g = 0; g < 4; g++) {
        char old[64];
        snprintf(old, sizeof old, "%s.old", names[g]);
        cr_expect(!S_exists(dir, old), "%s left behind", old);
        free(before[g]);
    }
    cr_expect(!S_exists(dir, "target.npy.old"));
    free(tok);
    S_clean(dir);
    sd_chain_free(c);
    gsl_rng_free(r);
}

static int S_never(const void *ctx, const int64_t *hist, size_t t, double *p, double *q, sd_error *err)
{
    (void)ctx, (void)hist, (void)t, (void)p, (void)q, (void)err;
    cr_assert_fail("rows computed for a set that was to be refused");
    return SD_OK;
}

/* Over the memory budget, or over the disk's free space (10^6 sequences x
 * 32 positions x V = 10^6: 5e17 bytes of rows), the set is refused with
 * SD_ETOOBIG before any row is computed or any file created. */
Test(trace_stream, too_large_sets_are_refused_before_writing)
{
    char *dir = S_dir();
    double init[1] = {1.0};
    sd_error err = {0};
    int rc = sd_trace_write_fn(1000000, 32, 1000000, init, S_never, NULL, 1, 1, dir, (size_t)64 << 20, &err);
    cr_assert_eq(rc, SD_ETOOBIG);
    cr_assert(strstr(err.msg, "--max-memory"), "%s", err.msg);
    rc = sd_trace_write_fn(1000000, 32, 1000000, init, S_never, NULL, 1, 1, dir, 0, &err);
    cr_assert_eq(rc, SD_ETOOBIG);
    cr_assert(strstr(err.msg, "on disk") && strstr(err.msg, "free"), "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/draft.npy.tmp", dir);
    cr_assert(access(path, F_OK) != 0, "nothing written");
    snprintf(path, sizeof path, "%s/tokens.npy", dir);
    cr_assert(access(path, F_OK) != 0, "nothing written");
    S_clean(dir);
}

/* Without a memory limit and without a file system to ask (the directory
 * does not exist, so statvfs fails), n T doubles whose byte count does not
 * fit in size_t are refused with SD_ETOOBIG before any allocation: n =
 * 2^61 + 1, T = 1 would otherwise allocate n T 8 mod 2^64 = 8 bytes and
 * write past them. */
Test(trace_stream, sizes_past_the_address_space_are_refused)
{
    double init[2] = {0.5, 0.5};
    sd_error err = {0};
    int rc = sd_trace_write_fn(((size_t)1 << 61) + 1, 1, 2, init, S_never, NULL, 0, 1,
                               "/nonexistent/simdec-trace-stream", 0, &err);
    cr_assert_eq(rc, SD_ETOOBIG, "%d: %s", rc, err.msg);
    cr_assert(strstr(err.msg, "address space"), "%s", err.msg);
}

/* The command line: gen --arpa --trace refuses a set over --max-memory or
 * over the free disk (3.5 TB of rows) with exit 65, before writing a file. */
Test(trace_stream, gen_refuses_sets_too_large_for_memory_or_disk, .timeout = 60)
{
    char *dir = S_dir();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "gen --arpa build/lm/en-us-phone.arpa --trace 100000000 --T 50 --max-memory 1G -o %s",
             dir);
    tu_expect(cmd, 65, "(--max-memory)");
    snprintf(cmd, sizeof cmd, "gen --arpa build/lm/en-us-phone.arpa --trace 100000000 --T 50 --max-memory 1T -o %s",
             dir);
    tu_expect(cmd, 65, "MB on disk (100000000 sequences x 50 positions, V = 43, rows kept)");
    char path[512];
    snprintf(path, sizeof path, "%s/draft.npy.tmp", dir);
    cr_assert(access(path, F_OK) != 0, "nothing written");
    S_clean(dir);
}

#include "../src/sd_arpa.h"
#include "../src/sd_ngram.h"

/* Rows kept by history (sd_ngram_cache) are the computed rows bit for bit,
 * through collisions and evictions (3 slots), at orders 1 to 3. */
Test(trace_stream, cached_ngram_rows_are_the_computed_rows)
{
    sd_arpa *a = NULL;
    sd_error err = {0};
    cr_assert_eq(sd_arpa_load("build/lm/en-us-phone.arpa", 0, &a, &err), SD_OK, "%s", err.msg);
    for (size_t order = 1; order <= 3; order++) {
        sd_ngram *plain = NULL, *cached = NULL;
        cr_assert_eq(sd_ngram_open(a, order, NULL, &plain, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_ngram_open(a, order, NULL, &cached, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_ngram_cache(cached, 3, &err), SD_OK, "%s", err.msg);
        double *r1 = malloc(a->V * sizeof *r1), *r2 = malloc(a->V * sizeof *r2);
        cr_assert(r1 && r2);
        unsigned long s = 12345;
        for (int it = 0; it < 400; it++) {
            int64_t h[2];
            for (int j = 0; j < 2; j++) {
                s = s * 6364136223846793005ul + 1442695040888963407ul;
                h[j] = (int64_t)((s >> 33) % 6); /* few histories: many repeats */
            }
            double d1 = -1.0, d2 = -2.0;
            cr_assert_eq(sd_ngram_row(plain, h, 2, r1, &d1, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_ngram_row(cached, h, 2, r2, &d2, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(memcmp(r1, r2, a->V * sizeof *r1), 0, "order %zu, history %ld %ld", order, (long)h[0],
                         (long)h[1]);
            cr_assert_eq(d1, d2);
        }
        free(r1);
        free(r2);
        sd_ngram_free(plain);
        sd_ngram_free(cached);
    }
    sd_arpa_free(a);
}

/* The n-gram row cache is optional: gen --arpa --trace runs without it when
 * it cannot be allocated, and writes the same bytes (a cached row is the
 * computed row, bit for bit).  The allocation is made to fail by a malloc
 * shim, built here and preloaded into the command, that refuses blocks of
 * exactly 64 (V) doubles: the cache's rows at its 64 slots, V = 43. */
Test(trace_stream, gen_runs_without_the_row_cache, .timeout = 120)
{
    char *dir = S_dir(), src[600], so[600], cmd[1600];
    snprintf(src, sizeof src, "%s/shim.c", dir);
    snprintf(so, sizeof so, "%s/shim.so", dir);
    FILE *f = fopen(src, "w");
    cr_assert_not_null(f);
    fputs("#include <errno.h>\n#include <stdio.h>\n#include <stddef.h>\n"
          "void *__libc_malloc(size_t);\n"
          "void *malloc(size_t n)\n{\n"
          "    if (n == 64 * 43 * sizeof(double)) {\n"
          "        fputs(\"shim: refused\\n\", stderr);\n"
          "        errno = ENOMEM;\n        return NULL;\n    }\n"
          "    return __libc_malloc(n);\n}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o %s %s", so, src);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    static const char *const names[] = {"tokens.npy", "ratios.npy", "prompts.npy", "draft.npy", "target.npy"};
    char *ref[5];
    size_t rlen[5], len;
    for (int pass = 0; pass < 2; pass++) {
        char sub[600], *errs = NULL;
        snprintf(sub, sizeof sub, "%s/%d", dir, pass);
        cr_assert_eq(mkdir(sub, 0700), 0);
        snprintf(cmd, sizeof cmd, "gen --arpa build/lm/en-us-phone.arpa --order 3 --trace 40 --T 12 --seed 5 -o %s",
                 sub);
        if (pass)
            setenv("LD_PRELOAD", so, 1);
        int st = tu_run(cmd, NULL, &errs);
        unsetenv("LD_PRELOAD");
        cr_assert_eq(st, 0, "%s%s: exit %d: %s", pass ? "without the cache: " : "", cmd, st, errs);
        if (pass)
            cr_assert(tu_contains(errs, "shim: refused"), "the cache's allocation was not refused: %s", errs);
        free(errs);
        for (int g = 0; g < 5; g++) {
            char *b = S_file(sub, names[g], &len);
            cr_assert_not_null(b, "%s/%s", sub, names[g]);
            if (!pass) {
                ref[g] = b, rlen[g] = len;
                continue;
            }
            cr_expect(len == rlen[g] && !memcmp(b, ref[g], len), "%s differs without the cache", names[g]);
            free(b);
            free(ref[g]);
        }
        for (int g = 0; g < 5; g++) {
            snprintf(cmd, sizeof cmd, "%s/%s", sub, names[g]);
            remove(cmd);
        }
        rmdir(sub);
    }
    remove(src);
    remove(so);
    S_clean(dir);
}
