/* sd_plot_table.h — plots of one's own results (`simdec plot --from FILE`).
 *
 * A table is read from the CSV or JSON that `run`, `check`, `eval`, `lp`
 * and `trace` print (sd_table_read), and a gnuplot data file and script are
 * written from it (sd_plot_write_data, sd_plot_write_script): y columns
 * against an x column, one line per y column and per value of a --by
 * column, with error bars where the y column has a standard-error column
 * beside it (sd_plot_err_col).
 *
 * The JSON forms become rows as follows (nested objects flattened with
 * "." joining the keys, arrays of numbers as NAME.0, NAME.1, ...):
 *   - an array of objects (a sweep's --json): one row per object;
 *   - an object holding an array of objects (lp's "comparisons", trace's
 *     per-verifier results, plot's "figures"): one row per element, the
 *     object's other scalars repeated in every row;
 *   - an object holding arrays of numbers (eval's "ccdf", "accept_law"):
 *     one row per index (column "index"), each such array a column;
 *   - any other object: one row.
 * Library errors are status codes with err set: SD_EIO (cannot open or
 * read), SD_EDATA (malformed: the file, line and what was expected),
 * SD_EUSAGE (an unknown extension, an unknown column: the list of the
 * columns), SD_ETOOBIG (over SD_TABLE_MAX_CELLS cells), SD_ENOMEM. */
#ifndef SD_PLOT_TABLE_H
#define SD_PLOT_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "../src/sd_error.h"

#define SD_TABLE_MAX_CELLS ((size_t)1 << 24)

typedef struct sd_table {
    size_t ncol, nrow;
    char **name; /* [ncol] */
    char **cell; /* [nrow * ncol], row-major; NULL where a row has no value */
} sd_table;

/* Reads path by its extension (.csv or .json) into *out (freed with
 * sd_table_free). */
int sd_table_read(const char *path, sd_table **out, sd_error *err);
void sd_table_free(sd_table *t);

/* The index of column name, or -1. */
long sd_table_col(const sd_table *t, const char *name);

/* "a, b, c" (every column, at most len - 1 characters, "..." when cut). */
const char *sd_table_columns(const sd_table *t, char *buf, size_t len);

/* The standard-error column of y: the first present of Y with its last
 * "mean" replaced by "stderr" or "se" (rejections_mean ->
 * rejections_stderr, mean -> stderr), Y_stderr, Y.stderr, Y_se, Y.se;
 * -1 when there is none. */
long sd_plot_err_col(const sd_table *t, const char *y);

typedef struct sd_plot_spec {
    const char *x;              /* the x column */
    const char *const *y;       /* the y columns */
    size_t ny;
    const char *by;             /* a column whose values split the rows into lines, or NULL */
    const char *data_name;      /* the data file's name, as the script reads it */
    const char *png_name;       /* the PNG's name, as the script writes it */
    const char *title;          /* the plot's title (the input file), or NULL */
} sd_plot_spec;

/* Checks that every column of s exists (SD_EUSAGE naming the bad one and
 * listing the columns) and that each y column holds at least one number. */
int sd_plot_check(const sd_table *t, const sd_plot_spec *s, sd_error *err);

/* The data file: a tab-separated block per --by value (blocks separated by
 * two blank lines, gnuplot's `index`), columns x, then each y and its
 * standard error (NaN where none); rows in file order.  A non-numeric x is
 * written quoted and plotted by row number with its text as tick label. */
int sd_plot_write_data(FILE *f, const sd_table *t, const sd_plot_spec *s, sd_error *err);

/* The gnuplot script (pngcairo 1000x600) that draws the data file. */
int sd_plot_write_script(FILE *f, const sd_table *t, const sd_plot_spec *s, sd_error *err);

#endif
