/* sd_chain_io.c — the simdec-chain-1 JSON format, read with
 * jansson.  Every refusal names the source, then the field, step (1-based),
 * row and value; syntax errors name line and column. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sd_chain.h"
#include "sd_sha256.h"

#define SD_CHAIN_FORMAT "simdec-chain-1"

/* Reads a positive whole number field ("vocab", "horizon"). */
static int S_size_field(json_t *root, const char *src, const char *key,
                        size_t *out, sd_error *err)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return sd_error_set(err, SD_EDATA, "%s: missing field \"%s\"", src, key);
    double x;
    if (json_is_integer(v))
        x = (double)json_integer_value(v);
    else if (json_is_real(v))
        x = json_real_value(v);
    else
        return sd_error_set(err, SD_EDATA, "%s: field \"%s\" must be a positive whole number", src, key);
    if (!(x >= 1.0) || x != floor(x) || x > 9.0e15)
        return sd_error_set(err, SD_EDATA, "%s: field \"%s\" is %.17g; expected a positive whole number",
                            src, key, x);
    *out = (size_t)x;
    return SD_OK;
}

/* Reads a JSON array of V numbers into x. */
static int S_vector(json_t *a, size_t V, double *x, const char *src,
                    const char *where, sd_error *err)
{
    if (!json_is_array(a))
        return sd_error_set(err, SD_EDATA, "%s: %s must be an array of %zu numbers", src, where, V);
    if (json_array_size(a) != V)
        return sd_error_set(err, SD_EDATA, "%s: %s has %zu entries; expected %zu (vocab)",
                            src, where, json_array_size(a), V);
    for (size_t i = 0; i < V; i++) {
        json_t *e = json_array_get(a, i);
        if (!json_is_number(e))
            return sd_error_set(err, SD_EDATA, "%s: %s entry %zu is not a number", src, where, i);
        x[i] = json_number_value(e) + 0.0; /* -0.0 is stored as +0.0: a write and a reload give the same bits */
    }
    return SD_OK;
}

/* Determines the shape of "draft"/"target" — [T][V][V] (steps = T,
 * *nested = 1) or [V][V] (steps = 1, *nested = 0) — and checks every step
 * and row length against the declared sizes before anything is allocated,
 * so that a file declaring a huge vocabulary or horizon is refused for what
 * it lacks rather than allocated for what it claims. */
static int S_matrix_shape(json_t *root, const char *src, const char *key,
                          size_t V, size_t T, size_t *steps, int *nested, sd_error *err)
{
    json_t *m = json_object_get(root, key);
    if (!m)
        return sd_error_set(err, SD_EDATA, "%s: missing field \"%s\"", src, key);
    if (!json_is_array(m) || json_array_size(m) == 0)
        return sd_error_set(err, SD_EDATA, "%s: field \"%s\" must be a [%zu][%zu][%zu] or [%zu][%zu] array",
                            src, key, T, V, V, V, V);
    json_t *first = json_array_get(m, 0);
    int three = json_is_array(first) && json_array_size(first) > 0 &&
                json_is_array(json_array_get(first, 0));
    size_t want = three ? T : V;
    if (json_array_size(m) != want)
        return sd_error_set(err, SD_EDATA,
                            three ? "%s: field \"%s\" has %zu steps; expected %zu (horizon)"
                                  : "%s: field \"%s\" has %zu rows; expected %zu (vocab)",
                            src, key, json_array_size(m), want);
    size_t ns = three ? T : 1;
    for (size_t s = 0; s < ns; s++) {
        json_t *mat = three ? json_array_get(m, s) : m;
        if (!json_is_array(mat) || json_array_size(mat) != V)
            return sd_error_set(err, SD_EDATA, "%s: %s step %zu must be a %zu x %zu matrix (it has %zu rows)",
                                src, key, s + 1, V, V, json_is_array(mat) ? json_array_size(mat) : 0);
        for (size_t a = 0; a < V; a++) {
            json_t *row = json_array_get(mat, a);
            if (!json_is_array(row) || json_array_size(row) != V) {
                if (three)
                    return sd_error_set(err, SD_EDATA, "%s: %s step %zu row %zu must be an array of %zu numbers (vocab)",
                                        src, key, s + 1, a, V);
                return sd_error_set(err, SD_EDATA, "%s: %s row %zu must be an array of %zu numbers (vocab)",
                                    src, key, a, V);
            }
        }
    }
    *steps = ns;
    *nested = three;
    return SD_OK;
}

/* nested: the field is [steps][V][V] (possibly with steps = T = 1), not
 * [V][V]. */
static int S_matrices(json_t *root, const char *src, const char *key, size_t V,
                      size_t steps, int nested, double *dst, sd_error *err)
{
    json_t *m = json_object_get(root, key);
    char where[96];
    for (size_t s = 0; s < steps; s++) {
        json_t *mat = nested ? json_array_get(m, s) : m;
        if (nested && (!json_is_array(mat) || json_array_size(mat) != V))
            return sd_error_set(err, SD_EDATA, "%s: %s step %zu must be a %zu x %zu matrix",
                                src, key, s + 1, V, V);
        for (size_t a = 0; a < V; a++) {
            if (!nested)
                snprintf(where, sizeof where, "%s row %zu", key, a);
            else
                snprintf(where, sizeof where, "%s step %zu row %zu", key, s + 1, a);
            int rc = S_vector(json_array_get(mat, a), V, dst + (s * V + a) * V, src, where, err);
            if (rc)
                return rc;
        }
    }
    return SD_OK;
}

static int S_from_json(json_t *root, const char *src, double tol, double *max_dev, sd_chain **out,
                       sd_error *err)
{
    if (!json_is_object(root))
        return sd_error_set(err, SD_EDATA, "%s: expected a JSON object with format \"%s\"",
                            src, SD_CHAIN_FORMAT);
    json_t *fmt = json_object_get(root, "format");
    if (!fmt)
        return sd_error_set(err, SD_EDATA, "%s: missing field \"format\" (expected \"%s\")",
                            src, SD_CHAIN_FORMAT);
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), SD_CHAIN_FORMAT) != 0)
        return sd_error_set(err, SD_EDATA, "%s: field \"format\" must be \"%s\"", src, SD_CHAIN_FORMAT);
    size_t V, T, ds, ts;
    int rc, dn, tn;
    if ((rc = S_size_field(root, src, "vocab", &V, err)) ||
        (rc = S_size_field(root, src, "horizon", &T, err)))
        return rc;
    if (T > SD_CHAIN_MAX_HORIZON)
        return sd_error_set(err, SD_ETOOBIG, "%s: field \"horizon\" is %zu; simdec handles horizons up to %zu",
                            src, T, (size_t)SD_CHAIN_MAX_HORIZON);
    json_t *init = json_object_get(root, "init");
    if (!init)
        return sd_error_set(err, SD_EDATA, "%s: missing field \"init\"", src);
    if (!json_is_array(init))
        return sd_error_set(err, SD_EDATA, "%s: init must be an array of %zu numbers", src, V);
    if (json_array_size(init) != V)
        return sd_error_set(err, SD_EDATA, "%s: init has %zu entries; expected %zu (vocab)", src,
                            json_array_size(init), V);
    if ((rc = S_matrix_shape(root, src, "draft", V, T, &ds, &dn, err)) ||
        (rc = S_matrix_shape(root, src, "target", V, T, &ts, &tn, err)))
        return rc;
    /* A file that declares a huge size must also contain it: the shape
     * checks above compared the declared sizes with every array length, so
     * the allocation below is bounded by what the file holds. */
    sd_chain *c = sd_chain_alloc(V, T, ds, ts, err);
    if (!c) {
        sd_error_prefix(err, "%s", src);
        return err ? err->code : SD_ENOMEM;
    }
    if ((rc = S_vector(init, V, c->init, src, "init", err)) ||
        (rc = S_matrices(root, src, "draft", V, ds, dn, c->draft, err)) ||
        (rc = S_matrices(root, src, "target", V, ts, tn, c->target, err)) ||
        (rc = sd_chain_validate_tol(c, src, tol, max_dev, err))) {
        sd_chain_free(c);
        return rc;
    }
    *out = c;
    return SD_OK;
}

/* jansson flags: duplicate keys are an error, not "last one wins". */
#define SD_JSON_FLAGS JSON_REJECT_DUPLICATES

int sd_chain_load(const char *path, sd_chain **out, sd_error *err)
{
    return sd_chain_load_tol(path, 0.0, out, NULL, err);
}

/* json_load_callback's reader: the file's bytes, hashed as they pass. */
typedef struct {
    FILE *f;
    sd_sha256 sha;
} S_hashed_reader;

static size_t S_read_hashed(void *buf, size_t len, void *ctx)
{
    S_hashed_reader *r = ctx;
    size_t n = fread(buf, 1, len, r->f);
    sd_sha256_update(&r->sha, buf, n);
    return n;
}

int sd_chain_load_tol(const char *path, double tol, sd_chain **out, double *max_dev,
                      sd_error *err)
{
    return sd_chain_load_sha(path, tol, out, max_dev, NULL, err);
}

int sd_chain_load_sha(const char *path, double tol, sd_chain **out, double *max_dev, char sha256[65],
                      sd_error *err)
{
    S_hashed_reader rd = {fopen(path, "rb"), {{0}, 0, {0}, 0}};
    if (!rd.f)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    sd_sha256_init(&rd.sha);
    json_error_t je;
    json_t *root = json_load_callback(S_read_hashed, &rd, SD_JSON_FLAGS, &je);
    int read_error = ferror(rd.f);
    fclose(rd.f);
    if (root && sha256)
        sd_sha256_hex(&rd.sha, sha256);
    if (!root) {
        if (read_error)
            return sd_error_set(err, SD_EIO, "%s: read error", path);
        return sd_error_set(err, SD_EDATA, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    int rc = S_from_json(root, path, tol, max_dev, out, err);
    json_decref(root);
    return rc;
}

int sd_chain_load_string(const char *json, const char *source, sd_chain **out,
                         sd_error *err)
{
    json_error_t je;
    json_t *root = json_loads(json, SD_JSON_FLAGS, &je);
    if (!root)
        return sd_error_set(err, SD_EDATA, "%s:%d:%d: %s", source, je.line, je.column, je.text);
    int rc = S_from_json(root, source, 0.0, NULL, out, err);
    json_decref(root);
    return rc;
}

/* Writing goes through stdio directly (not a jansson tree) so a large
 * chain does not need a second in-memory copy. "%.17g" round-trips every
 * double exactly. */
static void S_write_row(FILE *f, const double *x, size_t V)
{
    fputc('[', f);
    for (size_t i = 0; i < V; i++)
        fprintf(f, i ? ", %.17g" : "%.17g", x[i]);
    fputc(']', f);
}

static void S_write_matrices(FILE *f, const char *key, const double *m, size_t steps, size_t V)
{
    /* [V][V] for a time-homogeneous part, [T][V][V] otherwise; one row per line. */
    const char *indent = steps == 1 ? "\n    " : "\n      ";
    fprintf(f, ",\n  \"%s\": [", key);
    for (size_t s = 0; s < steps; s++) {
        if (steps != 1)
            fputs(s ? ",\n    [" : "\n    [", f);
        for (size_t a = 0; a < V; a++) {
            fputs(a ? "," : "", f);
            fputs(indent, f);
            S_write_row(f, m + (s * V + a) * V, V);
        }
        if (steps != 1)
            fputs("]", f);
    }
    fputs("]", f);
}

int sd_chain_write(const sd_chain *c, FILE *f, sd_error *err)
{
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"vocab\": %zu,\n  \"horizon\": %zu,\n  \"init\": ",
            SD_CHAIN_FORMAT, c->V, c->T);
    S_write_row(f, c->init, c->V);
    S_write_matrices(f, "draft", c->draft, c->draft_steps, c->V);
    S_write_matrices(f, "target", c->target, c->target_steps, c->V);
    fputs("\n}\n", f);
    if (fflush(f) != 0 || ferror(f))
        return sd_error_set(err, SD_EOUTPUT, "cannot write the model: %s", strerror(errno));
    return SD_OK;
}
