/* sd_arpa_draft2.c — per-context TV of two n-gram bigram rows (sd_arpa_draft2.h). */
#include "sd_arpa_draft2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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
