/* sd_npy.c — .npy arrays (sd_npy.h; numpy's NEP 1 format). */
#include "sd_npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int S_descr(sd_npy *a, const char *d, const char *src, sd_error *err)
{
    size_t n = strlen(d);
    if (n < 3 || n >= sizeof a->descr)
        return sd_error_set(err, SD_EDATA, "%s: dtype '%s': expected a numeric dtype such as '<f4' or '<i8'", src, d);
    char order = d[0], k = d[1];
    char *end;
    long sz = strtol(d + 2, &end, 10);
    if (*end)
        return sd_error_set(err, SD_EDATA, "%s: dtype '%s': expected a numeric dtype such as '<f4' or '<i8'", src, d);
    if (order == '>' && sz > 1)
        return sd_error_set(err, SD_EDATA, "%s: dtype '%s' is big-endian; expected little-endian ('<'): "
                                           "save it with arr.astype(arr.dtype.newbyteorder('<'))", src, d);
    if (order != '<' && order != '|' && order != '=' && order != '>')
        return sd_error_set(err, SD_EDATA, "%s: dtype '%s': expected a byte order '<', '|' or '='", src, d);
    if (k == 'i' && (sz == 1 || sz == 2 || sz == 4 || sz == 8))
        a->kind = SD_NPY_INT;
    else if (k == 'u' && (sz == 1 || sz == 2 || sz == 4 || sz == 8))
        a->kind = SD_NPY_UINT;
    else if (k == 'f' && (sz == 2 || sz == 4 || sz == 8))
        a->kind = SD_NPY_FLOAT;
    else if (k == 'b' && sz == 1)
        a->kind = SD_NPY_BOOL;
    else
        return sd_error_set(err, SD_EDATA, "%s: dtype '%s' is not supported; expected int8..int64, "
                                           "uint8..uint64, float16, float32 or float64", src, d);
    a->size = (size_t)sz;
    memcpy(a->descr, d, n + 1);
    return SD_OK;
}

static int S_shape(sd_npy *a, size_t ndim, const size_t *shape, const char *src, sd_error *err)
{
    if (ndim > SD_NPY_MAX_DIM)
        return sd_error_set(err, SD_EDATA, "%s: %zu dimensions; at most %d are read", src, ndim, SD_NPY_MAX_DIM);
    a->ndim = ndim;
    a->count = 1;
    for (size_t i = 0; i < ndim; i++) {
        a->shape[i] = shape[i];
        if (shape[i] && a->count > SIZE_MAX / 16 / shape[i])
            return sd_error_set(err, SD_EDATA, "%s: shape too large", src);
        a->count *= shape[i];
    }
    return SD_OK;
}

/* Finds 'key': in the dict text h (NUL-terminated); returns the value's start. */
static const char *S_key(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *k = strstr(h, pat);
    if (!k) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        k = strstr(h, pat);
    }
    if (!k)
        return NULL;
    k += strlen(pat);
    while (*k == ' ')
        k++;
    if (*k != ':')
        return NULL;
    k++;
    while (*k == ' ')
        k++;
    return k;
}

static int S_header(sd_npy *a, const char *h, const char *src, sd_error *err)
{
    const char *v = S_key(h, "descr");
    if (!v || (*v != '\'' && *v != '"'))
        return sd_error_set(err, SD_EDATA, "%s: the header has no 'descr' string (a structured dtype?); "
                                           "expected a numeric dtype", src);
    char d[32];
    size_t n = 0;
    char quote = *v++;
    while (*v && *v != quote && n + 1 < sizeof d)
        d[n++] = *v++;
    d[n] = 0;
    if (*v != quote)
        return sd_error_set(err, SD_EDATA, "%s: the header's 'descr' is malformed", src);
    int rc = S_descr(a, d, src, err);
    if (rc)
        return rc;
    v = S_key(h, "fortran_order");
    if (!v || (strncmp(v, "False", 5) && strncmp(v, "True", 4)))
        return sd_error_set(err, SD_EDATA, "%s: the header has no 'fortran_order'", src);
    if (!strncmp(v, "True", 4))
        return sd_error_set(err, SD_EDATA, "%s: the array is in Fortran order; expected C order "
                                           "(save np.ascontiguousarray(arr))", src);
    v = S_key(h, "shape");
    if (!v || *v != '(')
        return sd_error_set(err, SD_EDATA, "%s: the header has no 'shape' tuple", src);
    v++;
    size_t shape[SD_NPY_MAX_DIM + 1], nd = 0;
    for (;;) {
        while (*v == ' ' || *v == ',')
            v++;
        if (*v == ')')
            break;
        if (*v < '0' || *v > '9')
            return sd_error_set(err, SD_EDATA, "%s: the header's 'shape' is malformed", src);
        if (nd > SD_NPY_MAX_DIM)
            return sd_error_set(err, SD_EDATA, "%s: more than %d dimensions", src, SD_NPY_MAX_DIM);
        errno = 0;
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || x > SIZE_MAX / 16)
            return sd_error_set(err, SD_EDATA, "%s: the header's 'shape' is malformed", src);
        shape[nd++] = (size_t)x;
        v = end;
    }
    return S_shape(a, nd, shape, src, err);
}

int sd_npy_open(sd_npy *a, const char *path, sd_error *err)
{
    memset(a, 0, sizeof *a);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return sd_error_set(err, SD_EIO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    if (len < 10) {
        close(fd);
        return sd_error_set(err, SD_EDATA, "%s: %zu bytes; not a .npy file (expected the magic \\x93NUMPY "
                                           "and a header)", path, len);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return sd_error_set(err, SD_EIO, "%s: cannot map: %s", path, strerror(errno));
    a->map = map;
    a->map_len = len;
    const unsigned char *b = map;
    int rc;
    if (memcmp(b, "\x93NUMPY", 6)) {
        rc = sd_error_set(err, SD_EDATA, "%s: not a .npy file (expected the magic \\x93NUMPY at byte 0)", path);
        goto fail;
    }
    size_t hl, off;
    if (b[6] == 1) {
        hl = b[8] | (size_t)b[9] << 8;
        off = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (len < 12) {
            rc = sd_error_set(err, SD_EDATA, "%s: the header is truncated", path);
            goto fail;
        }
        hl = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        off = 12;
    } else {
        rc = sd_error_set(err, SD_EDATA, "%s: .npy format version %u.%u; expected 1.0, 2.0 or 3.0", path, b[6], b[7]);
        goto fail;
    }
    if (hl > len - off || hl > 1u << 20) {
        rc = sd_error_set(err, SD_EDATA, "%s: the header (%zu bytes) runs past the end of the file", path, hl);
        goto fail;
    }
    char *h = malloc(hl + 1);
    if (!h) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(h, b + off, hl);
    h[hl] = 0;
    rc = S_header(a, h, path, err);
    free(h);
    if (rc)
        goto fail;
    size_t need = a->count * a->size;
    if (need > len - off - hl) {
        char buf[SD_ERROR_MSG_MAX];
        size_t n = (size_t)snprintf(buf, sizeof buf, "%s: shape (", path);
        for (size_t i = 0; i < a->ndim && n < sizeof buf; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%zu", i ? ", " : "", a->shape[i]);
        rc = sd_error_set(err, SD_EDATA, "%s) of %s needs %zu data bytes; the file holds %zu", buf, a->descr,
                          need, len - off - hl);
        goto fail;
    }
    a->data = b + off + hl;
    return SD_OK;
fail:
    munmap(map, len);
    memset(a, 0, sizeof *a);
    return rc;
}

int sd_npy_wrap(sd_npy *a, const void *data, const char *descr, size_t ndim, const size_t *shape,
                sd_error *err)
{
    memset(a, 0, sizeof *a);
    int rc = S_descr(a, descr, "array", err);
    if (!rc)
        rc = S_shape(a, ndim, shape, "array", err);
    if (rc == SD_EDATA && err)
        err->code = SD_EUSAGE;
    if (rc)
        return rc == SD_EDATA ? (int)SD_EUSAGE : rc;
    a->data = data;
    return SD_OK;
}

void sd_npy_release(const sd_npy *a, size_t first, size_t count)
{
    if (!a->map || count == 0 || first >= a->count)
        return;
    if (count > a->count - first)
        count = a->count - first;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)(a->data + first * a->size), hi = lo + count * a->size;
    lo = (lo + page - 1) / page * page; /* whole pages inside the range only */
    hi = hi / page * page;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: failure is harmless */
}

void sd_npy_close(sd_npy *a)
{
    if (a->map)
        munmap(a->map, a->map_len);
    memset(a, 0, sizeof *a);
}

static double S_half(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp((double)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp((double)(m + 1024), e - 25);
    return s ? -v : v;
}

double sd_npy_get(const sd_npy *a, size_t i)
{
    const unsigned char *p = a->data + i * a->size;
    switch (a->kind) {
    case SD_NPY_FLOAT:
        if (a->size == 8) {
            double d;
            memcpy(&d, p, 8);
            return d;
        }
        if (a->size == 4) {
            float f;
            memcpy(&f, p, 4);
            return f;
        } else {
            uint16_t h;
            memcpy(&h, p, 2);
            return S_half(h);
        }
    case SD_NPY_INT:
    case SD_NPY_UINT:
    case SD_NPY_BOOL: {
        uint64_t v;
        if (sd_npy_get_index(a, i, &v))
            return -1.0;
        return (double)v;
    }
    }
    return NAN;
}

int sd_npy_get_index(const sd_npy *a, size_t i, uint64_t *v)
{
    const unsigned char *p = a->data + i * a->size;
    uint64_t u = 0;
    for (size_t j = 0; j < a->size; j++)
        u |= (uint64_t)p[j] << (8 * j);
    *v = u;
    if (a->kind == SD_NPY_INT && (u >> (8 * a->size - 1)) & 1) {
        *v = 0;
        return -1;
    }
    return 0;
}

const char *sd_npy_type_name(const sd_npy *a, char *buf, size_t len)
{
    const char *k = a->kind == SD_NPY_INT ? "int" : a->kind == SD_NPY_UINT ? "uint" : a->kind == SD_NPY_FLOAT ? "float" : "bool";
    if (a->kind == SD_NPY_BOOL)
        snprintf(buf, len, "bool");
    else
        snprintf(buf, len, "%s%zu", k, 8 * a->size);
    return buf;
}

int sd_npy_header_write(FILE *f, const char *descr, size_t ndim, const size_t *shape)
{
    char dict[512];
    size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (size_t i = 0; i < ndim; i++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%zu%s", shape[i], ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
    n += (size_t)snprintf(dict + n, sizeof dict - n, "), }");
    /* magic(6) + version(2) + len(2) + dict + pad + '\n' a multiple of 64 */
    size_t total = 10 + n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hl = n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, n, f) == n;
    for (size_t i = 0; ok && i < pad; i++)
        ok = fputc(' ', f) != EOF;
    return ok && fputc('\n', f) != EOF;
}

int sd_npy_write_at(const char *path, const char *descr, size_t ndim, const size_t *shape, const void *data,
                    size_t elsize, sd_error *err)
{
    size_t count = 1;
    for (size_t i = 0; i < ndim; i++)
        count *= shape[i];
    FILE *f = fopen(path, "wb");
    if (!f)
        return sd_error_set(err, SD_EIO, "%s: cannot write: %s", path, strerror(errno));
    int ok = sd_npy_header_write(f, descr, ndim, shape);
    ok = ok && (count == 0 || fwrite(data, elsize, count, f) == count);
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        remove(path);
        return sd_error_set(err, SD_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    return SD_OK;
}

static int S_write(const char *path, const char *descr, size_t ndim, const size_t *shape, const void *data,
                   size_t elsize, sd_error *err)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return sd_error_set(err, SD_EIO, "%s: path too long", path);
    int rc = sd_npy_write_at(tmp, descr, ndim, shape, data, elsize, err);
    if (rc)
        return rc;
    if (rename(tmp, path)) {
        remove(tmp);
        return sd_error_set(err, SD_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    return SD_OK;
}

int sd_npy_write_f8(const char *path, size_t ndim, const size_t *shape, const double *data,
                    sd_error *err)
{
    return S_write(path, "<f8", ndim, shape, data, 8, err);
}

int sd_npy_write_i8(const char *path, size_t ndim, const size_t *shape, const int64_t *data,
                    sd_error *err)
{
    return S_write(path, "<i8", ndim, shape, data, 8, err);
}
