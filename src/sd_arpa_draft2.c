/* sd_arpa_draft2.c — per-context TV of two n-gram bigram rows (sd_arpa_draft2.h). */
#include "sd_arpa_draft2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sd_arpa.h"

int sd_arpa_draft2_tv(const sd_ngram *draft, const sd_ngram *target, double *tv, double *max_dev, long *dev_ctx,
                      sd_error *err)
{
    size_t V = target->V;
    if (draft->V != V)
        return sd_error_set(err, SD_EUSAGE, "the draft has %zu words over the target's %zu; expected the draft "
                            "opened over the target's vocabulary", draft->V, V);
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    if (!p || !q) {
        free(p);
        free(q);
        return sd_error_set(err, SD_ENOMEM, "out of memory (two rows of V = %zu)", V);
    }
    if (max_dev)
        *max_dev = 0.0;
    if (dev_ctx)
        *dev_ctx = -1;
    for (size_t a = 0; a < V; a++) {
        int64_t h = (int64_t)a;
        double dev = 0.0;
        sd_error rerr;
        if (sd_ngram_row(draft, &h, 1, p, &dev, &rerr) || sd_ngram_row(target, &h, 1, q, NULL, &rerr)) {
            tv[a] = NAN; /* a row without mass: only an error where the target reaches it */
            continue;
        }
        if (max_dev && dev > *max_dev) {
            *max_dev = dev;
            if (dev_ctx)
                *dev_ctx = (long)a;
        }
        double s = 0.0;
        for (size_t x = 0; x < V; x++)
            s += fabs(p[x] - q[x]);
        tv[a] = 0.5 * s;
    }
    free(p);
    free(q);
    return SD_OK;
}

int sd_arpa_draft2_attach(sd_backoff *m, const sd_arpa *target, const sd_arpa *draft, size_t max_bytes,
                          sd_error *err)
{
    if (!m->off || m->V != target->V)
        return sd_error_set(err, SD_EUSAGE, "a bigram draft needs a bigram target over the target file's words");
    sd_backoff *d = NULL;
    int rc = sd_backoff_from_arpa(draft, 2, draft, m->T, max_bytes, &d, err);
    if (rc)
        return rc;
    size_t V = m->V, dV = d->V;
    int32_t *map = malloc(V * sizeof *map), *inv = malloc(dV * sizeof *inv);
    double *mass = malloc((dV + 1) * sizeof *mass);
    if (!map || !inv || !mass) {
        free(map), free(inv), free(mass);
        sd_backoff_free(d);
        return sd_error_set(err, SD_ENOMEM, "out of memory (a bigram draft's maps)");
    }
    for (size_t y = 0; y < dV; y++)
        inv[y] = -1;
    for (size_t x = 0; x < V; x++) {
        long y = sd_arpa_find(draft, target->words[x]);
        map[x] = (int32_t)y;
        if (y >= 0)
            inv[y] = (int32_t)x;
    }
    double UT = 0.0; /* the draft unigram's mass on target words */
    for (size_t y = 0; y < dV; y++)
        if (inv[y] >= 0)
            UT += d->u[y];
    mass[dV] = UT;
    for (size_t a = 0; a < dV && !rc; a++) {
        double seen = 0.0, seen_u = 0.0;
        for (size_t i = d->off[a]; i < d->off[a + 1]; i++)
            if (inv[d->tok[i]] >= 0) {
                seen += d->qe[i];
                seen_u += d->u[d->tok[i]];
            }
        mass[a] = seen + d->c[a] * fmax(0.0, UT - seen_u);
    }
    for (size_t x = 0; x < V && !rc; x++) { /* m's unigram draft is the draft file's (the rest term's order) */
        double w = map[x] >= 0 && UT > 0.0 ? d->u[map[x]] / UT : 0.0;
        if (fabs(m->p[x] - w) > 1e-12 * (w > 1.0 ? w : 1.0))
            rc = sd_error_set(err, SD_EUSAGE, "a bigram draft needs the target model built with the draft file's "
                              "unigram as its draft (word '%s': %.17g, expected %.17g)", target->words[x], m->p[x], w);
    }
    for (size_t a = 0; a <= dV && !rc; a++)
        if (!(mass[a] > 1e-300) && (a == dV || inv[a] >= 0))
            rc = sd_error_set(err, SD_EDATA, "the bigram draft's row after '%s' has no mass on the target's words",
                              a == dV ? "(its unigram)" : draft->words[a]);
    if (rc) {
        free(map), free(inv), free(mass);
        sd_backoff_free(d);
        return rc;
    }
    m->draft2 = d;
    m->d2map = map;
    m->d2inv = inv;
    m->d2mass = mass;
    return SD_OK;
}

