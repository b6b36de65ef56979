/* sd_samples.h — the samples format: sequences of output tokens, one line
 * per trial, written by `simdec run --samples` and read by
 * `simdec check --samples` (from any program).
 *
 * A line holds one trial's tokens x_1, x_2, ... as 0-based decimal token
 * ids separated by single spaces, ended by '\n' (a '\r' before it is
 * accepted, as is a missing '\n' at the end of the file).  Reading for a
 * test of the first L tokens, every line must hold at least L tokens and
 * every token on it must be an integer in 0..V-1; tokens after the L-th
 * are checked and otherwise ignored. */
#ifndef SD_SAMPLES_H
#define SD_SAMPLES_H

#include <stdint.h>
#include <stdio.h>

#include "sd_error.h"

/* Longest line read, in bytes (64 MiB): a line of 2^24 tokens of 3 digits. */
#define SD_SAMPLES_MAX_LINE ((size_t)1 << 26)

/* Writes rows 0..trials-1 of tokens[trials][k] to f, one line each.
 * SD_EOUTPUT when a write fails. */
int sd_samples_write(FILE *f, const uint32_t *tokens, uint64_t trials, size_t k, sd_error *err);

/* Reads every line of f (named `name` in messages) and adds 1 to
 * cells[x_1·V^{L-1} + ... + x_L] for each (the cell index of
 * sd_chain_target_joint; cells has V^L entries, zeroed by the caller);
 * *lines receives the number of lines.  SD_EDATA, naming the line and
 * column (both 1-based, the column in bytes), for a token that is not a
 * whole number or is >= V, a line with fewer than L tokens, a separator
 * other than one space, a line longer than SD_SAMPLES_MAX_LINE, or a file
 * without any line; SD_EIO when reading fails. */
int sd_samples_count(FILE *f, const char *name, size_t V, size_t L, double *cells, uint64_t *lines,
                     sd_error *err);

#endif
