/* sd_trace_write.h — logged traces sampled from a chain, written as numpy
 * arrays (the input of `simdec trace`, sims/exact/sd_trace.h).
 *
 * Sequence i (0-based) of seed s reads the stream (s, i) (src/sd_rng.h):
 * x_0 ~ init by its first uniform, then x_t ~ q_t(.|x_{t-1}) by its
 * uniform t, for t = 1..T.  Written to DIR:
 *   tokens.npy  int64   [n][T]     x_1..x_T
 *   draft.npy   float64 [n][T][V]  p_t(.|x_{t-1})
 *   target.npy  float64 [n][T][V]  q_t(.|x_{t-1})
 *   ratios.npy  float64 [n][T]     p_t(x_t|x_{t-1}) / q_t(x_t|x_{t-1})
 *   prompts.npy int64   [n]        x_0
 * The set is written whole or not at all: each file to NAME.npy.tmp; when
 * every one is complete the files of an earlier set in DIR are moved aside
 * (NAME.npy.old), the new ones renamed in and the old ones removed; a
 * rename that fails undoes the renames before it, so DIR keeps the earlier
 * set unchanged (a crash between the renames may leave NAME.npy.old files).
 * A token of target probability 0 is never drawn.
 * The rows are streamed: each position's draft and target rows go to their
 * files as they are computed, so memory is O(n T + V) whatever the rows
 * take on disk (n T V doubles each). */
#ifndef SD_TRACE_WRITE_H
#define SD_TRACE_WRITE_H

#include <stdint.h>

#include "sd_chain.h"

/* Bytes the five arrays take (what sd_trace_write allocates). */
double sd_trace_write_bytes(const sd_chain *c, size_t n);

/* The rows of position t (1..T) after the history hist[0..t) = x_0..x_{t-1}:
 * the draft row into p[V], the target row into q[V] (each summing to 1). */
typedef int (*sd_trace_rows_fn)(const void *ctx, const int64_t *hist, size_t t, double *p, double *q, sd_error *err);

/* Bytes sd_trace_write_fn allocates: 2 n T + 2 V doubles and two stdio
 * buffers, with or without rows (rows = 1 streams them). */
double sd_trace_write_fn_bytes(size_t n, size_t T, size_t V, int rows);
/* Bytes the files take on disk (rows = 0: without draft.npy, target.npy). */
double sd_trace_write_disk_bytes(size_t n, size_t T, size_t V, int rows);

/* The same for any model given by its rows at a history (a language model
 * of order 3 is not a first-order chain): x_0 ~ init (V entries) by the
 * stream's first uniform, x_t ~ q of rows(hist = x_0..x_{t-1}, t) by its
 * uniform t.  rows = 0 writes tokens, ratios and prompts only (what token
 * and block verification need: the rows are not kept, any draft.npy and
 * target.npy left in dir from before are removed so that no mixed set
 * remains).  SD_ETOOBIG before writing anything when the memory exceeds
 * max_bytes or the address space, or when the files would not fit in the free space of dir's
 * file system (statvfs; the files of an earlier set there count as free).
 * Errors as sd_trace_write, and the callback's. */
int sd_trace_write_fn(size_t n, size_t T, size_t V, const double *init, sd_trace_rows_fn rowsf, const void *ctx,
                      int rows, uint64_t seed, const char *dir, size_t max_bytes, sd_error *err);

/* The same without rows (tokens, ratios, prompts) for a model that draws
 * its next token without dense rows: drawf(ctx, hist, t, v, &y, &r) gives
 * the token y at position t after hist[0..t) by the inverse CDF of q at
 * the stream's uniform v (x_t ~ q by its uniform t, as above) and r =
 * p(y)/q(y). */
typedef int (*sd_trace_draw_fn)(const void *ctx, const int64_t *hist, size_t t, double v, size_t *y, double *r,
                                sd_error *err);
int sd_trace_write_draw(size_t n, size_t T, size_t V, const double *init, sd_trace_draw_fn drawf, const void *ctx,
                        uint64_t seed, const char *dir, size_t max_bytes, sd_error *err);

/* Samples n sequences of chain c with seed and writes them to directory
 * dir (which must exist).  SD_ETOOBIG before allocating when the arrays
 * exceed max_bytes (0: no limit) or the disk's free space; SD_EIO naming a file that cannot be
 * written; SD_ENOMEM. */
int sd_trace_write(const sd_chain *c, size_t n, uint64_t seed, const char *dir, size_t max_bytes,
                   sd_error *err);

#endif
