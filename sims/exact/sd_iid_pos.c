/* sd_iid_pos.c — the law of τ on i.i.d. rows from a position law
 * (sd_iid_pos.h). */
#include "sd_iid_pos.h"

#include "../engine/sd_verifier.h"
#include "sd_iter_laws.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sd_iid_pos_ccdf(const sd_pos_law *pl, const double *p, const double *q, size_t V, size_t max_bytes,
                    double *ccdf, sd_error *err)
{
    size_t S = pl->S, G = pl->G;
    if (!(S >= 1 && pl->s0 < S))
        return sd_error_set(err, SD_EUSAGE, "a position law with %zu states starting in state %zu", S, pl->s0);
    double bytes = ((double)S * (double)V + 2.0 * (double)V + 2.0 * (double)S) * sizeof(double);
    if ((max_bytes && bytes > (double)max_bytes) || bytes >= (double)SIZE_MAX)
        return sd_error_set(err, SD_ETOOBIG, "the law of one iteration on i.i.d. rows needs %.3g MB of weights "
                            "(%zu states x V = %zu), over the budget %.3g MB", bytes / 1e6, S, V,
                            (double)max_bytes / 1e6);
    double *cont = malloc(S * V * sizeof *cont), *ok = malloc(V * sizeof *ok), *rej = malloc(V * sizeof *rej);
    double *d = calloc(S, sizeof *d), *nd = calloc(S, sizeof *nd);
    int rc = SD_OK;
    if (!cont || !ok || !rej || !d || !nd)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for the law of one iteration on i.i.d. rows");
    /* one context: every row of this chain view is p (q); the position law
     * is always asked at context 0 */
    sd_chain c = {.V = V, .T = G + 1, .draft_steps = 1, .target_steps = 1, .draft = (double *)(uintptr_t)p,
                  .target = (double *)(uintptr_t)q};
    if (!rc)
        d[pl->s0] = 1.0;
    for (size_t i = 0; i < G && !rc; i++) {
        memset(nd, 0, S * sizeof *nd);
        for (size_t s = 0; s < S && !rc; s++) {
            if (!(d[s] > 0.0))
                continue;
            memset(cont, 0, S * V * sizeof *cont);
            memset(ok, 0, V * sizeof *ok);
            memset(rej, 0, V * sizeof *rej);
            if ((rc = pl->fn(pl->ctx, &c, i + 1, 0, i, s, cont, ok, rej, err)) != SD_OK)
                break;
            double end_ok = 0.0;
            for (size_t y = 0; y < V; y++)
                end_ok += ok[y];
            if (end_ok > 1e-15) {
                rc = sd_error_set(err, SD_EUSAGE, "the position law ends an iteration without a rejection at "
                                  "depth %zu < %zu (probability %.3g): its accepted length is not the depth "
                                  "reached", i, G, end_ok);
                break;
            }
            for (size_t s2 = 0; s2 < S; s2++) {
                double m = 0.0;
                for (size_t y = 0; y < V; y++)
                    m += cont[s2 * V + y];
                nd[s2] += d[s] * m;
            }
        }
        double tail = 0.0;
        for (size_t s = 0; s < S; s++) {
            d[s] = nd[s];
            tail += nd[s];
        }
        ccdf[i] = tail;
    }
    free(cont);
    free(ok);
    free(rej);
    free(d);
    free(nd);
    return rc;
}

double sd_iid_pos_work(const sd_pos_law *pl, size_t V)
{
    double cw = pl->call_work > 0.0 ? pl->call_work : 4.0;
    return (double)pl->G * (double)pl->S * (double)V * (cw + (double)pl->S + 3.0);
}

int sd_iid_pos_verifier(const sd_verifier_type *vt, const sd_params *par, const double *p, const double *q,
                        size_t V, size_t G, size_t max_bytes, double *ccdf, sd_error *err)
{
    if (!vt->iid_pos_law)
        return sd_error_set(err, SD_EUSAGE, "--algo %s has no per-position law", vt->name);
    /* S and call_work from the law at V = 1 */
    sd_chain c1 = {.V = 1, .T = 1, .draft_steps = 1, .target_steps = 1};
    sd_pos_law pl = {0};
    if (err)
        err->msg[0] = 0;
    int rc = vt->iid_pos_law(&c1, par, &pl, err);
    if (rc == SD_EUSAGE && (!err || !err->msg[0]))
        sd_error_set(err, SD_EUSAGE, "--algo %s has no per-position law at these parameters", vt->name);
    if (rc)
        return rc;
    pl.G = G;
    size_t S = pl.S;
    double work = sd_iid_pos_work(&pl, V);
    sd_pos_law_free(&pl);
    double bytes = (2.0 * (double)S + 3.0) * (double)V * sizeof(double);
    if (work > SD_IID_POS_MAX_OPS)
        return sd_error_set(err, SD_ETOOBIG, "the exact law of --algo %s on one row pair (V = %zu, %zu states, "
                            "draft length %zu) needs about %.3g operations, over the limit %.3g (about 9 s)",
                            vt->name, V, S, G, work, SD_IID_POS_MAX_OPS);
    if (max_bytes && bytes > (double)max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "the exact law of --algo %s on one row pair (V = %zu, %zu states) "
                            "needs %.3g MB, over the budget %.3g MB", vt->name, V, S, bytes / 1e6,
                            (double)max_bytes / 1e6);
    sd_chain c = {.V = V, .T = 1, .draft_steps = 1, .target_steps = 1};
    memset(&pl, 0, sizeof pl);
    if ((rc = vt->iid_pos_law(&c, par, &pl, err)) != SD_OK)
        return rc;
    pl.G = G;
    rc = sd_iid_pos_ccdf(&pl, p, q, V, max_bytes, ccdf, err);
    sd_pos_law_free(&pl);
    return rc;
}

int sd_iid_pos_mean(const sd_verifier_type *vt, const sd_params *par, const double *p, const double *q, size_t V,
                    size_t G, size_t max_bytes, double *mean, sd_error *err)
{
    *mean = NAN;
    double *ccdf = malloc((G ? G : 1) * sizeof *ccdf);
    if (!ccdf)
        return sd_error_set(err, SD_ENOMEM, "out of memory (draft length %zu)", G);
    int rc = sd_iid_pos_verifier(vt, par, p, q, V, G, max_bytes, ccdf, err);
    if (!rc) {
        double m = 0.0;
        for (size_t l = 0; l < G; l++)
            m += ccdf[l];
        *mean = m;
    }
    free(ccdf);
    return rc;
}
