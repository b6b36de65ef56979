/* sd_ngram.c — backoff rows at a history (sd_ngram.h). */
#include "sd_ngram.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sd_backoff.h"

void sd_ngram_free(sd_ngram *g)
{
    if (!g)
        return;
    free(g->map);
    free(g->uni);
    free(g->w);
    free(g->crows);
    free(g->cdev);
    free(g->ckey);
    free(g);
}

int sd_ngram_open(const sd_arpa *a, size_t order, const sd_arpa *vocab, sd_ngram **out, sd_error *err)
{
    *out = NULL;
    if (order < 1 || order > 3 || order > a->order)
        return sd_error_set(err, SD_EUSAGE, "order %zu: expected 1..%zu (the model's order, at most 3)", order,
                            a->order < 3 ? a->order : 3);
    sd_ngram *g = calloc(1, sizeof *g);
    if (!g)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    g->a = a;
    g->order = order;
    g->V = vocab && vocab != a ? vocab->V : a->V;
    g->uni = malloc(a->V * sizeof *g->uni);
    g->w = malloc(a->V * sizeof *g->w);
    if (!g->uni || !g->w)
        goto nomem;
    for (size_t x = 0; x < a->V; x++) {
        g->uni[x] = (long)x == a->bos ? 0.0 : pow(10.0, a->uni_logp[x]);
        g->usum += g->uni[x];
    }
    double mass = g->usum;
    if (vocab && vocab != a) {
        if (!(g->map = malloc(g->V * sizeof *g->map)))
            goto nomem;
        /* matched by spelling through a sorted copy of a's words */
        mass = 0.0;
        for (size_t x = 0; x < g->V; x++) {
            g->map[x] = -1;
        }
        /* O(V log V) would need a hash; the vocabularies are read once, so a
         * sort-and-search keeps it simple */
        size_t n = a->V;
        size_t *ord = malloc(n * sizeof *ord);
        if (!ord)
            goto nomem;
        for (size_t i = 0; i < n; i++)
            ord[i] = i;
        /* insertion into a sorted array by strcmp: shell sort on indices */
        for (size_t gap = n / 2; gap > 0; gap /= 2)
            for (size_t i = gap; i < n; i++)
                for (size_t j = i; j >= gap && strcmp(a->words[ord[j - gap]], a->words[ord[j]]) > 0; j -= gap) {
                    size_t t = ord[j];
                    ord[j] = ord[j - gap];
                    ord[j - gap] = t;
                }
        for (size_t x = 0; x < g->V; x++) {
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(a->words[ord[mid]], vocab->words[x]);
                if (c < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < n && strcmp(a->words[ord[lo]], vocab->words[x]) == 0) {
                g->map[x] = (long)ord[lo];
                mass += g->uni[ord[lo]];
            }
        }
        free(ord);
    }
    if (!(mass > 0.0)) {
        sd_ngram_free(g);
        return sd_error_set(err, SD_EDATA, "the model's unigram gives no mass to the vocabulary's words (outside <s>)");
    }
    *out = g;
    return SD_OK;
nomem:
    sd_ngram_free(g);
    return sd_error_set(err, SD_ENOMEM, "out of memory for the rows of a model of %zu words", a->V);
}

/* The raw bigram row after y (a's ids) into w: listed bigrams, else
 * 10^bo(y) P1; the EPS rule of sd_backoff.h. */
static void S_raw2(const sd_ngram *g, size_t y, double *w)
{
    const sd_arpa *a = g->a;
    size_t Va = a->V;
    double useen = 0.0;
    for (size_t i = a->ctx_off[y]; i < a->ctx_off[y + 1]; i++)
        useen += g->uni[a->bi_tok[i]];
    double rest = 1.0 - useen / g->usum;
    double beta = rest < SD_BACKOFF_REST_EPS ? 0.0 : pow(10.0, a->uni_bo[y]);
    for (size_t x = 0; x < Va; x++)
        w[x] = beta * g->uni[x];
    for (size_t i = a->ctx_off[y]; i < a->ctx_off[y + 1]; i++)
        w[a->bi_tok[i]] = pow(10.0, a->bi_logp[i]);
}

int sd_ngram_cache(sd_ngram *g, size_t slots, sd_error *err)
{
    free(g->crows);
    free(g->cdev);
    free(g->ckey);
    g->cslots = 0;
    g->crows = g->cdev = NULL;
    g->ckey = NULL;
    if (!slots)
        return SD_OK;
    if (slots > SIZE_MAX / 3 / sizeof *g->ckey || g->V > SIZE_MAX / sizeof *g->crows / slots)
        return sd_error_set(err, SD_ETOOBIG, "%zu cached rows of %zu words: the size overflows", slots, g->V);
    g->crows = malloc(slots * g->V * sizeof *g->crows);
    g->cdev = malloc(slots * sizeof *g->cdev);
    g->ckey = malloc(3 * slots * sizeof *g->ckey);
    if (!g->crows || !g->cdev || !g->ckey) {
        free(g->crows), free(g->cdev), free(g->ckey);
        g->crows = g->cdev = NULL;
        g->ckey = NULL;
        return sd_error_set(err, SD_ENOMEM, "out of memory for %zu cached rows of %zu words", slots, g->V);
    }
    for (size_t j = 0; j < 3 * slots; j++)
        g->ckey[j] = -1;
    g->cslots = slots;
    return SD_OK;
}

int sd_ngram_row(const sd_ngram *g, const int64_t *hist, size_t nh, double *row, double *dev, sd_error *err)
{
    const sd_arpa *a = g->a;
    size_t Va = a->V;
    double *w = g->w;
    /* the usable history in a's ids: at most order - 1 words, cut at an unknown one */
    long h[2] = {-1, -1};
    size_t k = 0;
    for (size_t j = 0; j < nh && k + 1 < g->order; j++) {
        int64_t v = hist[nh - 1 - j];
        long id = v < 0 || (size_t)v >= g->V ? -1 : g->map ? g->map[v] : (long)v;
        if (id < 0)
            break;
        h[k++] = id; /* h[0] the most recent */
    }
    size_t slot = 0;
    if (g->cslots) {
        slot = (size_t)(((uint64_t)(h[0] + 1) * 0x9E3779B97F4A7C15u + (uint64_t)(h[1] + 1) * 0xC2B2AE3D27D4EB4Fu + k) >>
                        32) % g->cslots;
        const long *key = g->ckey + 3 * slot;
        if (key[0] == (long)k && key[1] == h[0] && key[2] == h[1]) {
            memcpy(row, g->crows + slot * g->V, g->V * sizeof *row);
            if (dev)
                *dev = g->cdev[slot];
            return SD_OK;
        }
    }
    if (k == 0) {
        memcpy(w, g->uni, Va * sizeof *w);
    } else {
        S_raw2(g, (size_t)h[0], w);
        long bi = k == 2 && a->tri_off ? sd_arpa_bigram(a, (size_t)h[1], (size_t)h[0]) : -1;
        if (bi >= 0) {
            double tot = 0.0, seen = 0.0;
            for (size_t x = 0; x < Va; x++)
                tot += (long)x == a->bos ? 0.0 : w[x];
            for (size_t i = a->tri_off[bi]; i < a->tri_off[bi + 1]; i++)
                seen += (long)a->tri_tok[i] == a->bos ? 0.0 : w[a->tri_tok[i]];
            double beta = tot - seen < SD_BACKOFF_REST_EPS * tot ? 0.0 : pow(10.0, a->bi_bo[bi]);
            for (size_t x = 0; x < Va; x++)
                w[x] *= beta;
            for (size_t i = a->tri_off[bi]; i < a->tri_off[bi + 1]; i++)
                w[a->tri_tok[i]] = pow(10.0, a->tri_logp[i]);
        }
    }
    if (a->bos >= 0)
        w[a->bos] = 0.0;
    double Z = 0.0;
    if (g->map) {
        for (size_t x = 0; x < g->V; x++)
            Z += row[x] = g->map[x] >= 0 ? w[g->map[x]] : 0.0;
    } else {
        for (size_t x = 0; x < Va; x++)
            Z += row[x] = w[x];
    }
    if (!(Z > 0.0) || !isfinite(Z))
        return sd_error_set(err, SD_EDATA, "the row after '%s' has no mass (raw sum %g)",
                            k ? a->words[h[0]] : "(no context)", Z);
    for (size_t x = 0; x < g->V; x++)
        row[x] /= Z;
    if (dev)
        *dev = fabs(Z - 1.0);
    if (g->cslots) {
        long *key = g->ckey + 3 * slot;
        memcpy(g->crows + slot * g->V, row, g->V * sizeof *row);
        g->cdev[slot] = fabs(Z - 1.0);
        key[0] = (long)k;
        key[1] = h[0];
        key[2] = h[1];
    }
    return SD_OK;
}
