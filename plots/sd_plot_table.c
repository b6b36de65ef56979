/* sd_plot_table.c — tables from simdec's CSV and JSON output, and the
 * gnuplot data and script that draw them (sd_plot_table.h). */
#include "sd_plot_table.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- a table under construction ------------------------------------------- */

typedef struct {
    sd_table *t;
    size_t capcol, caprow;
    char ***rows;   /* [nrow][capcol of that row] */
    size_t *rowcap; /* [nrow] */
    int oom;
} S_build;

static char *S_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static long S_col(S_build *b, const char *name)
{
    sd_table *t = b->t;
    for (size_t i = 0; i < t->ncol; i++)
        if (!strcmp(t->name[i], name))
            return (long)i;
    if (t->ncol == b->capcol) {
        size_t cap = b->capcol ? 2 * b->capcol : 16;
        char **n = realloc(t->name, cap * sizeof *n);
        if (!n)
            return b->oom = 1, -1;
        t->name = n;
        b->capcol = cap;
    }
    if (!(t->name[t->ncol] = S_dup(name)))
        return b->oom = 1, -1;
    return (long)t->ncol++;
}

/* A new empty row; its index. */
static long S_row(S_build *b)
{
    sd_table *t = b->t;
    if (t->nrow == b->caprow) {
        size_t cap = b->caprow ? 2 * b->caprow : 16;
        char ***r = realloc(b->rows, cap * sizeof *r);
        size_t *c = r ? realloc(b->rowcap, cap * sizeof *c) : NULL;
        if (r)
            b->rows = r;
        if (!c)
            return b->oom = 1, -1;
        b->rowcap = c;
        b->caprow = cap;
    }
    b->rows[t->nrow] = NULL;
    b->rowcap[t->nrow] = 0;
    return (long)t->nrow++;
}

/* Sets row r's value of column name (a copy of val; NULL: none). */
static void S_set(S_build *b, long r, const char *name, const char *val)
{
    long c = S_col(b, name);
    if (c < 0 || r < 0 || !val)
        return;
    if ((size_t)c >= b->rowcap[r]) {
        size_t cap = (size_t)c + 16;
        char **n = realloc(b->rows[r], cap * sizeof *n);
        if (!n) {
            b->oom = 1;
            return;
        }
        memset(n + b->rowcap[r], 0, (cap - b->rowcap[r]) * sizeof *n);
        b->rows[r] = n;
        b->rowcap[r] = cap;
    }
    free(b->rows[r][c]);
    if (!(b->rows[r][c] = S_dup(val)))
        b->oom = 1;
}

/* The built table in *out, or a status. */
static int S_finish(S_build *b, const char *path, sd_table **out, sd_error *err)
{
    sd_table *t = b->t;
    int rc = SD_OK;
    if (b->oom)
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory reading the table", path);
    else if (t->nrow == 0 || t->ncol == 0)
        rc = sd_error_set(err, SD_EDATA, "%s: no rows to plot", path);
    else if (t->nrow > SD_TABLE_MAX_CELLS / t->ncol)
        rc = sd_error_set(err, SD_ETOOBIG, "%s: %zu rows of %zu columns, beyond the limit of %zu cells", path,
                          t->nrow, t->ncol, SD_TABLE_MAX_CELLS);
    else if (!(t->cell = calloc(t->nrow * t->ncol, sizeof *t->cell)))
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory reading the table", path);
    for (size_t r = 0; r < t->nrow; r++) {
        for (size_t c = 0; c < b->rowcap[r]; c++)
            if (!rc && c < t->ncol)
                t->cell[r * t->ncol + c] = b->rows[r][c];
            else
                free(b->rows[r][c]);
        free(b->rows[r]);
    }
    free(b->rows);
    free(b->rowcap);
    if (rc) {
        sd_table_free(t);
        return rc;
    }
    *out = t;
    return SD_OK;
}

/* --- CSV -------------------------------------------------------------------- */

/* One CSV record of line (quotes "..." with "" inside) into fields, in
 * place; the number of fields, or -1 on a malformed quote. */
static long S_csv_fields(char *line, char ***fields, size_t *cap)
{
    size_t n = 0;
    char *p = line, *w;
    for (;;) {
        if (n == *cap) {
            size_t c = *cap ? 2 * *cap : 64;
            char **f = realloc(*fields, c * sizeof *f);
            if (!f)
                return -2;
            *fields = f;
            *cap = c;
        }
        (*fields)[n++] = w = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0')
                    return -1;
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            if (*p != ',' && *p != '\0')
                return -1;
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        char sep = *p;
        *w = '\0';
        if (sep == '\0')
            return (long)n;
        p++;
    }
}

static int S_read_csv(const char *path, FILE *f, S_build *b, sd_error *err)
{
    char *line = NULL, **fields = NULL, **head = NULL;
    size_t lcap = 0, fcap = 0, nhead = 0, lineno = 0;
    ssize_t len;
    int rc = SD_OK;
    while (!rc && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        long n = S_csv_fields(line, &fields, &fcap);
        if (n == -2) {
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", path);
        } else if (n < 0) {
            rc = sd_error_set(err, SD_EDATA, "%s:%zu: an unterminated or misplaced quote; expected CSV "
                              "(fields separated by commas, quoted with \"...\")", path, lineno);
        } else if (!head) {
            nhead = (size_t)n;
            if (!(head = calloc(nhead, sizeof *head)))
                rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", path);
            for (size_t i = 0; !rc && i < nhead; i++) {
                if (!fields[i][0])
                    rc = sd_error_set(err, SD_EDATA, "%s:%zu: column %zu of the header has no name", path, lineno,
                                      i + 1);
                else if (!(head[i] = S_dup(fields[i])))
                    rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", path);
                else
                    S_col(b, head[i]);
            }
        } else if ((size_t)n != nhead) {
            rc = sd_error_set(err, SD_EDATA, "%s:%zu: %ld fields; expected %zu (the header's)", path, lineno, n,
                              nhead);
        } else {
            long r = S_row(b);
            for (size_t i = 0; i < nhead; i++)
                S_set(b, r, head[i], fields[i][0] ? fields[i] : NULL);
            if (b->t->nrow * nhead > SD_TABLE_MAX_CELLS)
                rc = sd_error_set(err, SD_ETOOBIG, "%s: more than %zu cells", path, SD_TABLE_MAX_CELLS);
        }
    }
    if (!rc && ferror(f))
        rc = sd_error_set(err, SD_EIO, "%s: cannot read: %s", path, strerror(errno));
    if (!rc && !head)
        rc = sd_error_set(err, SD_EDATA, "%s: empty; expected a CSV header line and rows", path);
    for (size_t i = 0; head && i < nhead; i++)
        free(head[i]);
    free(head);
    free(fields);
    free(line);
    return rc;
}

/* --- JSON ------------------------------------------------------------------- */

static int S_is_number_array(json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) if (!json_is_number(e) && !json_is_null(e)) return 0;
    return 1;
}

static int S_is_object_array(json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) if (!json_is_object(e)) return 0;
    return 1;
}

/* A scalar's text, into buf; NULL for null (and for what is not a scalar). */
static const char *S_scalar(json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%.17g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%d", json_is_true(v));
    else
        return NULL;
    return buf;
}

/* Sets row r from v under prefix: objects flattened with ".", arrays of
 * numbers as NAME.i; `skip` (a member of the top object) left out. */
static void S_flatten(S_build *b, long r, const char *prefix, json_t *v, const json_t *skip)
{
    char name[512], buf[64];
    if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            if (e == skip)
                continue;
            snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", k);
            S_flatten(b, r, name, e, NULL);
        }
    } else if (S_is_number_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            snprintf(name, sizeof name, "%s.%zu", prefix, i);
            S_set(b, r, name, S_scalar(e, buf, sizeof buf));
        }
    } else if (!json_is_array(v)) {
        S_set(b, r, prefix, S_scalar(v, buf, sizeof buf));
    }
}

static int S_read_json(const char *path, S_build *b, sd_error *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return sd_error_set(err, SD_EDATA, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    if (json_is_array(j)) {
        size_t i;
        json_t *e;
        json_array_foreach(j, i, e) {
            if (!json_is_object(e)) {
                json_decref(j);
                return sd_error_set(err, SD_EDATA, "%s: element %zu of the top-level array is not an object; "
                                    "expected an array of objects (one row each)", path, i);
            }
            S_flatten(b, S_row(b), "", e, NULL);
        }
    } else if (json_is_object(j)) {
        const char *k;
        json_t *e, *rows = NULL, *longest = NULL;
        json_object_foreach(j, k, e) {
            if (!rows && S_is_object_array(e))
                rows = e;
            if (S_is_number_array(e) && json_array_size(e) >= 3 &&
                (!longest || json_array_size(e) > json_array_size(longest)))
                longest = e;
        }
        if (rows) {
            size_t i;
            json_array_foreach(rows, i, e) {
                long r = S_row(b);
                S_flatten(b, r, "", e, NULL);
                S_flatten(b, r, "", j, rows);
            }
        } else if (longest) {
            char buf[64], name[512];
            for (size_t i = 0; i < json_array_size(longest); i++) {
                long r = S_row(b);
                snprintf(buf, sizeof buf, "%zu", i);
                S_set(b, r, "index", buf);
                json_object_foreach(j, k, e) {
                    if (S_is_number_array(e) && json_array_size(e) >= 3) {
                        snprintf(name, sizeof name, "%s", k);
                        S_set(b, r, name, i < json_array_size(e) ? S_scalar(json_array_get(e, i), buf, sizeof buf)
                                                                 : NULL);
                    } else if (!json_is_array(e)) {
                        S_flatten(b, r, k, e, NULL);
                    }
                }
            }
        } else {
            S_flatten(b, S_row(b), "", j, NULL);
        }
    } else {
        json_decref(j);
        return sd_error_set(err, SD_EDATA, "%s: expected a JSON object or an array of objects", path);
    }
    json_decref(j);
    return SD_OK;
}

/* --- the table ---------------------------------------------------------------- */

static int S_ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int sd_table_read(const char *path, sd_table **out, sd_error *err)
{
    *out = NULL;
    int csv = S_ends(path, ".csv"), js = S_ends(path, ".json");
    if (!csv && !js)
        return sd_error_set(err, SD_EUSAGE, "--from %s: expected a .csv or .json file (the output of run, check, "
                            "eval, lp or trace with --csv or --json)", path);
    FILE *f = fopen(path, "r");
    if (!f)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    S_build b = {0};
    if (!(b.t = calloc(1, sizeof *b.t))) {
        fclose(f);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    int rc = csv ? S_read_csv(path, f, &b, err) : SD_OK;
    fclose(f);
    if (!rc && js)
        rc = S_read_json(path, &b, err);
    if (!rc)
        return S_finish(&b, path, out, err);
    for (size_t r = 0; r < b.t->nrow; r++) {
        for (size_t c = 0; c < b.rowcap[r]; c++)
            free(b.rows[r][c]);
        free(b.rows[r]);
    }
    free(b.rows);
    free(b.rowcap);
    sd_table_free(b.t);
    return rc;
}

void sd_table_free(sd_table *t)
{
    if (!t)
        return;
    if (t->cell)
        for (size_t i = 0; i < t->nrow * t->ncol; i++)
            free(t->cell[i]);
    for (size_t i = 0; i < t->ncol; i++)
        free(t->name[i]);
    free(t->cell);
    free(t->name);
    free(t);
}

long sd_table_col(const sd_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncol; i++)
        if (!strcmp(t->name[i], name))
            return (long)i;
    return -1;
}

const char *sd_table_columns(const sd_table *t, char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->ncol; i++) {
        size_t need = strlen(t->name[i]) + (i ? 2 : 0);
        if (u + need + 4 >= len) {
            snprintf(buf + u, len - u, "%s...", i ? ", " : "");
            break;
        }
        u += (size_t)snprintf(buf + u, len - u, "%s%s", i ? ", " : "", t->name[i]);
    }
    return buf;
}

long sd_plot_err_col(const sd_table *t, const char *y)
{
    char cand[512];
    const char *m = NULL;
    for (const char *p = strstr(y, "mean"); p; p = strstr(p + 1, "mean"))
        m = p;
    static const char *const repl[] = {"stderr", "se"};
    for (int i = 0; m && i < 2; i++) {
        snprintf(cand, sizeof cand, "%.*s%s%s", (int)(m - y), y, repl[i], m + 4);
        long c = sd_table_col(t, cand);
        if (c >= 0)
            return c;
    }
    static const char *const suf[] = {"_stderr", ".stderr", "_se", ".se"};
    for (int i = 0; i < 4; i++) {
        snprintf(cand, sizeof cand, "%s%s", y, suf[i]);
        long c = sd_table_col(t, cand);
        if (c >= 0)
            return c;
    }
    return -1;
}

/* --- the plot ----------------------------------------------------------------- */

/* The cell as a number: 1 with *x, 0 when missing or not a number. */
static int S_num(const char *s, double *x)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    *x = strtod(s, &end);
    return *end == '\0' && errno == 0;
}

static const char *S_cell(const sd_table *t, size_t r, long c)
{
    return c < 0 ? NULL : t->cell[r * t->ncol + (size_t)c];
}

int sd_plot_check(const sd_table *t, const sd_plot_spec *s, sd_error *err)
{
    char cols[2048];
    const char *what[2] = {"--x", "--by"}, *names[2] = {s->x, s->by};
    for (int i = 0; i < 2; i++)
        if (names[i] && sd_table_col(t, names[i]) < 0)
            return sd_error_set(err, SD_EUSAGE, "%s %s: no such column; the columns are: %s", what[i], names[i],
                                sd_table_columns(t, cols, sizeof cols));
    for (size_t k = 0; k < s->ny; k++) {
        long c = sd_table_col(t, s->y[k]);
        if (c < 0)
            return sd_error_set(err, SD_EUSAGE, "--y %s: no such column; the columns are: %s", s->y[k],
                                sd_table_columns(t, cols, sizeof cols));
        int any = 0;
        double v;
        for (size_t r = 0; r < t->nrow && !any; r++)
            any = S_num(S_cell(t, r, c), &v);
        if (!any)
            return sd_error_set(err, SD_EDATA, "--y %s: the column holds no numbers (first value '%s')", s->y[k],
                                S_cell(t, 0, c) ? S_cell(t, 0, c) : "");
    }
    return SD_OK;
}

/* 1 if every present x value is a number. */
static int S_x_numeric(const sd_table *t, long xc)
{
    double v;
    for (size_t r = 0; r < t->nrow; r++)
        if (S_cell(t, r, xc) && !S_num(S_cell(t, r, xc), &v))
            return 0;
    return 1;
}

/* The distinct --by values in order of first appearance: their first rows
 * into first[] (*n of them); NULL values form one group. */
static size_t *S_groups(const sd_table *t, long bc, size_t *n)
{
    size_t *first = malloc((t->nrow ? t->nrow : 1) * sizeof *first);
    *n = 0;
    if (!first)
        return NULL;
    for (size_t r = 0; r < t->nrow; r++) {
        const char *v = S_cell(t, r, bc);
        int seen = 0;
        for (size_t g = 0; g < *n && !seen; g++) {
            const char *w = S_cell(t, first[g], bc);
            seen = (!v && !w) || (v && w && !strcmp(v, w));
        }
        if (!seen)
            first[(*n)++] = r;
    }
    return first;
}

/* Text for the data file: tabs and newlines as spaces. */
static void S_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void S_value(FILE *f, const char *s)
{
    double v;
    if (S_num(s, &v) && isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("NaN", f);
}

int sd_plot_write_data(FILE *f, const sd_table *t, const sd_plot_spec *s, sd_error *err)
{
    long xc = sd_table_col(t, s->x), bc = s->by ? sd_table_col(t, s->by) : -1;
    size_t ng;
    size_t *first = S_groups(t, bc, &ng);
    if (!first)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    fprintf(f, "# simdec plot --from: x = %s", s->x);
    for (size_t k = 0; k < s->ny; k++)
        fprintf(f, ", y = %s (standard error: %s)", s->y[k],
                sd_plot_err_col(t, s->y[k]) >= 0 ? t->name[sd_plot_err_col(t, s->y[k])] : "none");
    fprintf(f, "\n");
    for (size_t g = 0; g < ng; g++) {
        const char *gv = S_cell(t, first[g], bc);
        if (g)
            fputs("\n\n", f);
        fputs("# ", f);
        if (s->by) {
            fprintf(f, "%s = ", s->by);
            S_text(f, gv ? gv : "(none)");
        }
        fputc('\n', f);
        for (size_t r = 0; r < t->nrow; r++) {
            const char *v = S_cell(t, r, bc), *x = S_cell(t, r, xc);
            if (s->by && !((!v && !gv) || (v && gv && !strcmp(v, gv))))
                continue;
            if (!x)
                continue;
            S_text(f, x);
            for (size_t k = 0; k < s->ny; k++) {
                fputc('\t', f);
                S_value(f, S_cell(t, r, sd_table_col(t, s->y[k])));
                fputc('\t', f);
                S_value(f, S_cell(t, r, sd_plot_err_col(t, s->y[k])));
            }
            fputc('\n', f);
        }
    }
    free(first);
    return ferror(f) ? sd_error_set(err, SD_EOUTPUT, "cannot write the data file: %s", strerror(errno)) : SD_OK;
}

/* A gnuplot single-quoted string. */
static void S_gpstr(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

int sd_plot_write_script(FILE *f, const sd_table *t, const sd_plot_spec *s, sd_error *err)
{
    long xc = sd_table_col(t, s->x), bc = s->by ? sd_table_col(t, s->by) : -1;
    int xnum = S_x_numeric(t, xc);
    size_t ng;
    size_t *first = S_groups(t, bc, &ng);
    if (!first)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    fputs("# Written by `simdec plot --from`; edit and rerun `gnuplot` on this file.\n", f);
    fputs("set terminal pngcairo size 1000,600 noenhanced font ',11'\nset output ", f);
    S_gpstr(f, s->png_name);
    fputs("\nset datafile separator '\\t'\nset grid\nset key below\n", f);
    if (s->title) {
        fputs("set title ", f);
        S_gpstr(f, s->title);
        fputc('\n', f);
    }
    fputs("set xlabel ", f);
    S_gpstr(f, s->x);
    char ylab[1024];
    size_t u = 0;
    for (size_t k = 0; k < s->ny && u < sizeof ylab; k++)
        u += (size_t)snprintf(ylab + u, sizeof ylab - u, "%s%s", k ? ", " : "", s->y[k]);
    fputs("\nset ylabel ", f);
    S_gpstr(f, ylab);
    fputc('\n', f);
    if (!xnum)
        fputs("set offsets 0.5, 0.5, 0, 0\nset xtics rotate by -30\n", f);
    fputs("plot ", f);
    int firstplot = 1;
    for (size_t g = 0; g < ng; g++)
        for (size_t k = 0; k < s->ny; k++) {
            int has_err = sd_plot_err_col(t, s->y[k]) >= 0;
            size_t yc = 2 + 2 * k;
            char title[1024];
            const char *gv = S_cell(t, first[g], bc);
            if (s->by)
                snprintf(title, sizeof title, "%s, %s = %s", s->y[k], s->by, gv ? gv : "(none)");
            else
                snprintf(title, sizeof title, "%s", s->y[k]);
            fputs(firstplot ? "" : ", \\\n     ", f);
            firstplot = 0;
            S_gpstr(f, s->data_name);
            fprintf(f, " index %zu using ", g);
            if (xnum)
                fprintf(f, has_err ? "1:%zu:%zu" : "1:%zu", yc, yc + 1);
            else
                fprintf(f, has_err ? "0:%zu:%zu:xtic(1)" : "0:%zu:xtic(1)", yc, yc + 1);
            fprintf(f, " with %s lc %zu pt %zu title ", has_err ? "yerrorlines" : "linespoints",
                    (g * s->ny + k) % 8 + 1, (g * s->ny + k) % 13 + 1);
            S_gpstr(f, title);
        }
    fputc('\n', f);
    free(first);
    return ferror(f) ? sd_error_set(err, SD_EOUTPUT, "cannot write the script: %s", strerror(errno)) : SD_OK;
}
