/* sd_chain.c — allocation, validation and derived laws of a chain
 * (sd_chain.h).  JSON input/output is in sd_chain_io.c, the generator in
 * sd_gen.c. */
#include "sd_chain.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sd_dist.h"

/* Rows within this distance of summing to 1 are renormalised. */
#define SD_ROW_TOL 1e-9

sd_chain *sd_chain_alloc(size_t V, size_t T, size_t draft_steps,
                         size_t target_steps, sd_error *err)
{
    if (V == 0 || T == 0) {
        sd_error_set(err, SD_EUSAGE, "vocabulary and horizon must be >= 1 (got V=%zu, T=%zu)", V, T);
        return NULL;
    }
    if (T > SD_CHAIN_MAX_HORIZON) {
        sd_error_set(err, SD_ETOOBIG, "horizon %zu exceeds the limit %zu", T, (size_t)SD_CHAIN_MAX_HORIZON);
        return NULL;
    }
    if ((draft_steps != 1 && draft_steps != T) || (target_steps != 1 && target_steps != T)) {
        sd_error_set(err, SD_EINTERNAL, "chain steps must be 1 or T");
        return NULL;
    }
    /* Entries = V + (draft_steps + target_steps) V², checked for overflow
     * and against the memory bound before anything is allocated. */
    size_t vv, steps = draft_steps + target_steps, mats;
    if (V > SIZE_MAX / V || (vv = V * V) > SIZE_MAX / steps ||
        (mats = vv * steps) > SD_CHAIN_MAX_ENTRIES - V) {
        sd_error_set(err, SD_ETOOBIG,
                     "a chain with vocab %zu and %zu stored steps needs more than %zu probabilities (%.0f GiB); refusing",
                     V, steps, (size_t)SD_CHAIN_MAX_ENTRIES,
                     (double)SD_CHAIN_MAX_ENTRIES * 8.0 / 1073741824.0);
        return NULL;
    }
    sd_chain *c = calloc(1, sizeof *c);
    if (!c)
        goto nomem;
    c->V = V;
    c->T = T;
    c->draft_steps = draft_steps;
    c->target_steps = target_steps;
    c->init = calloc(V, sizeof *c->init);
    c->draft = calloc(draft_steps * vv, sizeof *c->draft);
    c->target = calloc(target_steps * vv, sizeof *c->target);
    if (!c->init || !c->draft || !c->target)
        goto nomem;
    return c;
nomem:
    sd_chain_free(c); /* exception in constructor: free what was made */
    sd_error_set(err, SD_ENOMEM, "out of memory allocating a chain with vocab %zu, horizon %zu", V, T);
    return NULL;
}

void sd_chain_free(sd_chain *c)
{
    if (!c)
        return;
    free(c->init);
    free(c->draft);
    free(c->target);
    free(c);
}

/* Validates and renormalises one row; `what` and `step`/`row` name it. */
static int S_check_row(double *x, size_t V, const char *source, const char *what,
                       size_t step, long row, double tol, double *max_dev, sd_error *err)
{
    double sum;
    long bad = sd_dist_check(x, V, tol, &sum);
    char where[128];
    if (row < 0)
        snprintf(where, sizeof where, "%s", what);
    else if (step == 0)
        snprintf(where, sizeof where, "%s row %ld", what, row);
    else
        snprintf(where, sizeof where, "%s step %zu row %ld", what, step, row);
    if (bad >= 0 && (size_t)bad < V)
        return sd_error_set(err, SD_EDATA,
                            "%s: %s entry %ld is %g; expected a finite probability >= 0",
                            source, where, bad, x[bad]);
    if (bad >= 0)
        return sd_error_set(err, SD_EDATA,
                            "%s: %s sums to %.12g; expected 1 (within %g%s)",
                            source, where, sum, tol, tol == SD_ROW_TOL ? "; --tol X accepts more" : "");
    if (max_dev && fabs(sum - 1.0) > *max_dev)
        *max_dev = fabs(sum - 1.0);
    /* Renormalise, unless the sum is already 1 up to rounding: dividing by
     * such a sum would only move last bits, and a written-then-read chain
     * must come back bit for bit. */
    if (fabs(sum - 1.0) > (double)V * DBL_EPSILON)
        for (size_t i = 0; i < V; i++)
            x[i] /= sum;
    return SD_OK;
}

static int S_check_matrices(double *m, size_t steps, size_t V, const char *source,
                            const char *what, double tol, double *max_dev, sd_error *err)
{
    for (size_t s = 0; s < steps; s++)
        for (size_t a = 0; a < V; a++) {
            int rc = S_check_row(m + (s * V + a) * V, V, source, what,
                                 steps == 1 ? 0 : s + 1, (long)a, tol, max_dev, err);
            if (rc)
                return rc;
        }
    return SD_OK;
}

int sd_chain_validate_step(double *rows, size_t V, size_t t, const char *source, const char *what,
                           sd_error *err)
{
    for (size_t a = 0; a < V; a++) {
        int rc = S_check_row(rows + a * V, V, source, what, t, (long)a, SD_ROW_TOL, NULL, err);
        if (rc)
            return rc;
    }
    return SD_OK;
}

int sd_chain_validate(sd_chain *c, const char *source, sd_error *err)
{
    return sd_chain_validate_tol(c, source, SD_ROW_TOL, NULL, err);
}

int sd_chain_validate_tol(sd_chain *c, const char *source, double tol, double *max_dev,
                          sd_error *err)
{
    if (max_dev)
        *max_dev = 0.0;
    if (!(tol >= SD_ROW_TOL))
        tol = SD_ROW_TOL;
    int rc = S_check_row(c->init, c->V, source, "init", 0, -1, tol, max_dev, err);
    if (!rc)
        rc = S_check_matrices(c->draft, c->draft_steps, c->V, source, "draft", tol, max_dev, err);
    if (!rc)
        rc = S_check_matrices(c->target, c->target_steps, c->V, source, "target", tol, max_dev, err);
    return rc;
}

int sd_chain_truncate(sd_chain *c, size_t T, sd_error *err)
{
    if (T == 0 || T > c->T)
        return sd_error_set(err, SD_EUSAGE,
                            "--T %zu: the model's horizon is %zu; expected 1..%zu",
                            T, c->T, c->T);
    /* The first T steps are a prefix of the arrays: only the counts change. */
    if (c->draft_steps != 1)
        c->draft_steps = T;
    if (c->target_steps != 1)
        c->target_steps = T;
    c->T = T;
    return SD_OK;
}

sd_chain *sd_chain_from_pq(const double *p, const double *q, size_t V, size_t T,
                           sd_error *err)
{
    sd_chain *c = sd_chain_alloc(V, T, 1, 1, err);
    if (!c)
        return NULL;
    for (size_t a = 0; a < V; a++) {
        c->init[a] = 1.0 / (double)V;
        memcpy(c->draft + a * V, p, V * sizeof *p);
        memcpy(c->target + a * V, q, V * sizeof *q);
    }
    if (sd_chain_validate(c, "--p/--q", err)) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}

int sd_chain_target_joint(const sd_chain *c, size_t L, size_t max_cells,
                          double *out, sd_error *err)
{
    size_t V = c->V, cells = 1;
    if (L == 0 || L > c->T)
        return sd_error_set(err, SD_EUSAGE, "--L %zu: expected 1..%zu (the horizon)", L, c->T);
    for (size_t i = 0; i < L; i++) {
        if (cells > max_cells / V)
            return sd_error_set(err, SD_ETOOBIG,
                                "V^L = %zu^%zu cells exceeds the limit %zu", V, L, max_cells);
        cells *= V;
    }
    /* P(x_1..x_L) = Σ_{x_0} init(x_0) Π_n q_n(x_n|x_{n-1}), built level by
     * level: out holds P(x_1..x_l) for the current l in its first V^l
     * cells, extended in place from the back. */
    size_t have = V;
    for (size_t b = 0; b < V; b++) {
        double s = 0.0;
        for (size_t a = 0; a < V; a++)
            s += c->init[a] * sd_chain_q(c, 1, a)[b];
        out[b] = s;
    }
    for (size_t l = 2; l <= L; l++) {
        for (size_t i = have; i-- > 0;) {
            double base = out[i];
            const double *row = sd_chain_q(c, l, i % V);
            for (size_t b = 0; b < V; b++)
                out[i * V + b] = base * row[b];
        }
        have *= V;
    }
    return SD_OK;
}
