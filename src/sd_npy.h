/* sd_npy.h — numpy's .npy arrays, read (memory-mapped) and written.
 *
 * Format (numpy's NEP 1, "A simple file format for NumPy arrays"): the
 * magic "\x93NUMPY", a major and minor version byte, the header length
 * (2 bytes little-endian for version 1, 4 bytes for versions 2 and 3),
 * then an ASCII (version 3: UTF-8) Python dict literal
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (64, 32, 32000), }
 * padded with spaces and a newline, then the data in C order.  Read here:
 * little-endian or byte-order-free ('<', '|', '=') signed and unsigned
 * integers of 1, 2, 4, 8 bytes, float16/32/64, bool; C order only.  A
 * file is mapped, not copied (O(1) memory whatever its size); an array in
 * memory (Python's numpy buffer) is wrapped the same way. */
#ifndef SD_NPY_H
#define SD_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sd_error.h"

#define SD_NPY_MAX_DIM 8

typedef enum { SD_NPY_INT = 0, SD_NPY_UINT = 1, SD_NPY_FLOAT = 2, SD_NPY_BOOL = 3 } sd_npy_kind;

typedef struct sd_npy {
    sd_npy_kind kind;
    size_t size;                 /* bytes per element: 1, 2, 4, 8 */
    size_t ndim;
    size_t shape[SD_NPY_MAX_DIM];
    size_t count;                /* Π shape */
    const unsigned char *data;   /* count·size bytes */
    char descr[16];              /* as the header gave it, e.g. "<f4" */
    void *map;                   /* the mapping (files), or NULL */
    size_t map_len;
} sd_npy;

/* Opens and maps path.  SD_EIO (exit 66) when it cannot be opened;
 * SD_EDATA naming the file and what is wrong (not .npy, a bad header, a
 * big-endian or unsupported dtype, Fortran order, data shorter than the
 * shape says).  Close with sd_npy_close. */
int sd_npy_open(sd_npy *a, const char *path, sd_error *err);

/* Wraps count elements at data (the caller's, outliving *a) with a numpy
 * dtype string ("<f4", "<i8", "|u1", ...) and shape.  SD_EUSAGE for an
 * unsupported dtype or ndim. */
int sd_npy_wrap(sd_npy *a, const void *data, const char *descr, size_t ndim, const size_t *shape,
                sd_error *err);

void sd_npy_close(sd_npy *a);

/* Advice that elements [first, first + count) will not be read again soon:
 * for a mapped file the whole pages inside them leave the process's
 * resident memory (madvise MADV_DONTNEED on a read-only mapping: a later
 * read maps them again from the file), so a pass over a file larger than
 * memory keeps O(count) of it resident.  Nothing for wrapped arrays. */
void sd_npy_release(const sd_npy *a, size_t first, size_t count);

/* Element i (C order) as a double (integers exactly below 2^53; float16
 * converted exactly). */
double sd_npy_get(const sd_npy *a, size_t i);

/* Element i of an integer or bool array: 0 with *v set, or -1 when it is
 * negative (a signed type) — *v then holds 0. */
int sd_npy_get_index(const sd_npy *a, size_t i, uint64_t *v);

/* "int32", "float16", ... for messages. */
const char *sd_npy_type_name(const sd_npy *a, char *buf, size_t len);

/* Writes a little-endian array of doubles ("<f8") or of 64-bit integers
 * ("<i8") with the given shape to path: to path.tmp, then renamed, so
 * that no partial file is left.  SD_EIO naming the file.  The _at forms
 * write exactly path (the caller renames). */
int sd_npy_write_at(const char *path, const char *descr, size_t ndim, const size_t *shape, const void *data,
                    size_t elsize, sd_error *err);
/* The header alone (the array's bytes follow it: a writer that streams
 * them): 1 when written, 0 on an output error. */
int sd_npy_header_write(FILE *f, const char *descr, size_t ndim, const size_t *shape);
int sd_npy_write_f8(const char *path, size_t ndim, const size_t *shape, const double *data,
                    sd_error *err);
int sd_npy_write_i8(const char *path, size_t ndim, const size_t *shape, const int64_t *data,
                    sd_error *err);

#endif
