/* sd_accept_iid.c — accepted length on i.i.d. rows (sd_accept_iid.h). */
#include "sd_accept_iid.h"

#include <math.h>
#include <stdlib.h>

#include "sd_rngbuf.h"
#include "sd_stats.h"

typedef struct {
    size_t n;         /* tokens with p + q > 0, by r increasing */
    double *r, *Q, *P; /* r[n]; Q[n+1], P[n+1]: prefix sums of q and p */
} S_tab;

typedef struct {
    double r, q, p;
} S_item;

static int S_cmp(const void *a, const void *b)
{
    double x = ((const S_item *)a)->r, y = ((const S_item *)b)->r;
    return (x > y) - (x < y);
}

/* G(s) = Σ_y min(p(y), s q(y)). */
static double S_G(const S_tab *t, double s)
{
    if (!(s > 0.0))
        return 0.0;
    double th = 1.0 / s; /* r_y < th: min is s q(y) */
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid] < th)
            lo = mid + 1;
        else
            hi = mid;
    }
    return s * t->Q[lo] + (t->P[t->n] - t->P[lo]);
}

/* A draw from p by its cumulative sums cum[V] (cum[V-1] = total). */
static size_t S_draw(const double *cum, size_t V, sd_rngbuf *rng)
{
    double u = sd_rngbuf_uniform(rng) * cum[V - 1];
    size_t lo = 0, hi = V - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int sd_accept_iid_eval(const double *p, const double *q, size_t V, size_t gamma, uint64_t trials, uint64_t seed,
                       size_t max_bytes, sd_accept_iid *out, double *ccdf, sd_error *err)
{
    return sd_accept_iid_eval_weighted(p, q, V, gamma, trials, seed, max_bytes, NULL, out, ccdf, err);
}

int sd_accept_iid_eval_weighted(const double *p, const double *q, size_t V, size_t gamma, uint64_t trials,
                                uint64_t seed, size_t max_bytes, const double *w_in, sd_accept_iid *out, double *ccdf,
                                sd_error *err)
{
    if (gamma < 1)
        return sd_error_set(err, SD_EUSAGE, "--gamma %zu: expected at least 1 draft token", gamma);
    if (V < 1 || V > UINT32_MAX)
        return sd_error_set(err, SD_EUSAGE, "vocabulary %zu: expected 1..%u", V, UINT32_MAX);
    int mc = gamma > SD_ACCEPT_IID_EXACT_L;
    if (mc && trials < 2)
        return sd_error_set(err, SD_EUSAGE, "--trials %llu: the terms l >= 3 are Monte-Carlo; expected >= 2",
                            (unsigned long long)trials);
    size_t bytes = SD_ACCEPT_IID_BYTES(V);
    if (max_bytes > 0 && bytes > max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "accept-length on --p/--q at V = %zu needs %.3g MB; memory budget "
                            "%.3g MB", V, (double)bytes / 1e6, (double)max_bytes / 1e6);
    double *rr = malloc(V * sizeof *rr), *Q = malloc((V + 1) * sizeof *Q), *P = malloc((V + 1) * sizeof *P);
    double *cum = malloc(V * sizeof *cum), *rs = malloc(V * sizeof *rs);
    S_item *it = malloc(V * sizeof *it);
    if (!rr || !Q || !P || !cum || !rs || !it) {
        free(rr), free(Q), free(P), free(cum), free(rs), free(it);
        return sd_error_set(err, SD_ENOMEM, "out of memory (accept-length, V = %zu)", V);
    }
    double alpha = 0.0, run = 0.0;
    size_t n = 0;
    for (size_t x = 0; x < V; x++) {
        alpha += fmin(p[x], q[x]);
        rr[x] = p[x] > 0.0 ? q[x] / p[x] : INFINITY;
        run += p[x];
        cum[x] = run;
        if (p[x] > 0.0 || q[x] > 0.0)
            it[n++] = (S_item){rr[x], q[x], p[x]};
    }
    qsort(it, n, sizeof *it, S_cmp);
    S_tab t = {n, rs, Q, P};
    Q[0] = P[0] = 0.0;
    for (size_t k = 0; k < n; k++) {
        rs[k] = it[k].r;
        Q[k + 1] = Q[k] + it[k].q;
        P[k + 1] = P[k] + it[k].p;
    }
    free(it);
    double blk2 = 0.0, full2 = 0.0;
    if (gamma >= 2)
        for (size_t x = 0; x < V; x++)
            if (p[x] > 0.0) {
                blk2 += p[x] * S_G(&t, fmin(1.0, rr[x]));
                full2 += p[x] * S_G(&t, rr[x]);
            }
    double cc[SD_ACCEPT_NALGO][3] = {{0}};
    double al = 1.0;
    out->expected[SD_ACCEPT_TOKEN] = 0.0;
    for (size_t l = 1; l <= gamma; l++) {
        al *= alpha;
        out->expected[SD_ACCEPT_TOKEN] += al;
        if (ccdf)
            ccdf[SD_ACCEPT_TOKEN * gamma + l - 1] = al;
    }
    cc[SD_ACCEPT_BLOCK][1] = cc[SD_ACCEPT_FULL][1] = alpha;
    cc[SD_ACCEPT_BLOCK][2] = blk2;
    cc[SD_ACCEPT_FULL][2] = full2;
    for (int a = SD_ACCEPT_BLOCK; a <= SD_ACCEPT_FULL; a++) {
        out->expected[a] = 0.0;
        for (size_t l = 1; l <= gamma && l <= SD_ACCEPT_IID_EXACT_L; l++) {
            out->expected[a] += cc[a][l];
            if (ccdf)
                ccdf[(size_t)a * gamma + l - 1] = cc[a][l];
        }
        out->stderr_[a] = 0.0;
        out->exact[a] = !mc;
    }
    out->stderr_[SD_ACCEPT_TOKEN] = 0.0;
    out->exact[SD_ACCEPT_TOKEN] = 1;
    out->trials = mc ? trials : 0;
    out->seed = seed;
    if (mc) {
        sd_welford wb, wf;
        sd_welford_init(&wb);
        sd_welford_init(&wf);
        if (ccdf)
            for (size_t l = SD_ACCEPT_IID_EXACT_L + 1; l <= gamma; l++)
                ccdf[SD_ACCEPT_BLOCK * gamma + l - 1] = ccdf[SD_ACCEPT_FULL * gamma + l - 1] = 0.0;
        for (uint64_t i = 0; i < trials; i++) {
            sd_rngbuf rng;
            sd_rngbuf_init(&rng, seed, i);
            double pb = 1.0, w = 1.0, sb = 0.0, sf = 0.0;
            for (size_t l = 1; l <= gamma; l++) {
                double r = rr[S_draw(cum, V, &rng)];
                pb = fmin(1.0, pb * r); /* p_l (Sun et al. 2025, eq. 9) */
                w *= r;                 /* q(X^l)/p(X^l) */
                if (l > SD_ACCEPT_IID_EXACT_L) {
                    double f = fmin(1.0, w), wl = w_in ? w_in[l - 1] : 1.0;
                    sb += wl * pb;
                    sf += wl * f;
                    if (ccdf) {
                        ccdf[SD_ACCEPT_BLOCK * gamma + l - 1] += pb;
                        ccdf[SD_ACCEPT_FULL * gamma + l - 1] += f;
                    }
                }
            }
            sd_welford_add(&wb, sb);
            sd_welford_add(&wf, sf);
        }
        if (ccdf)
            for (size_t l = SD_ACCEPT_IID_EXACT_L + 1; l <= gamma; l++) {
                ccdf[SD_ACCEPT_BLOCK * gamma + l - 1] /= (double)trials;
                ccdf[SD_ACCEPT_FULL * gamma + l - 1] /= (double)trials;
            }
        out->expected[SD_ACCEPT_BLOCK] += wb.mean;
        out->expected[SD_ACCEPT_FULL] += wf.mean;
        out->stderr_[SD_ACCEPT_BLOCK] = sd_welford_stderr(&wb);
        out->stderr_[SD_ACCEPT_FULL] = sd_welford_stderr(&wf);
    }
    free(rr), free(Q), free(P), free(cum), free(rs);
    return SD_OK;
}

int sd_accept_iid_renewal(const double *c, size_t G, size_t T, size_t max_bytes, double *calls, double *rej,
                          double *gcalls, double *grej, sd_error *err)
{
    if (G < 1 || T < 1)
        return sd_error_set(err, SD_EUSAGE, "renewal: draft length %zu, horizon %zu; expected both >= 1", G, T);
    if (T > SIZE_MAX / (3 * sizeof(double)) - 1)
        return sd_error_set(err, SD_ETOOBIG, "renewal: horizon %zu too large", T);
    size_t bytes = 3 * (T + 1) * sizeof(double);
    if (max_bytes > 0 && bytes > max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "the renewal over T = %zu positions needs %.3g MB; memory budget %.3g MB",
                            T, (double)bytes / 1e6, (double)max_bytes / 1e6);
    double *W = calloc(T + 1, sizeof *W), *R = calloc(T + 1, sizeof *R), *D = calloc(T + 1, sizeof *D);
    if (!W || !R || !D) {
        free(W), free(R), free(D);
        return sd_error_set(err, SD_ENOMEM, "out of memory (renewal, T = %zu)", T);
    }
/* P_r(j) and e_r(j) for g = min(G, r) */
#define S_CC(l) ((l) == 0 ? 1.0 : c[(l) - 1])
#define S_P(j, g) ((j) < (g) ? S_CC(j) - S_CC((j) + 1) : S_CC(g))
#define S_E(j, g, r) ((j) < (g) ? (j) + 1 : ((g) < (r) ? (g) + 1 : (r)))
    for (size_t r = 1; r <= T; r++) {
        size_t g = r < G ? r : G;
        double w = 1.0, x = 0.0;
        for (size_t j = 0; j <= g; j++) {
            double pj = S_P(j, g);
            size_t e = S_E(j, g, r);
            w += pj * W[r - e];
            x += pj * ((j < g ? 1.0 : 0.0) + R[r - e]);
        }
        W[r] = w;
        R[r] = x;
    }
    if (gcalls || grej) {
        for (size_t l = 0; l < G; l++) {
            if (gcalls)
                gcalls[l] = 0.0;
            if (grej)
                grej[l] = 0.0;
        }
        D[T] = 1.0;
        for (size_t r = T; r >= 1; r--) {
            size_t g = r < G ? r : G;
            if (D[r] != 0.0)
                for (size_t j = 0; j <= g; j++) {
                    size_t e = S_E(j, g, r);
                    D[r - e] += D[r] * S_P(j, g);
                    if (j >= 1) { /* ∂/∂c_j: X_r(j) - X_r(j-1) */
                        size_t e0 = S_E(j - 1, g, r);
                        if (gcalls)
                            gcalls[j - 1] += D[r] * (W[r - e] - W[r - e0]);
                        if (grej)
                            grej[j - 1] += D[r] * ((j < g ? 1.0 : 0.0) + R[r - e] - 1.0 - R[r - e0]);
                    }
                }
        }
    }
#undef S_CC
#undef S_P
#undef S_E
    *calls = W[T];
    *rej = R[T];
    free(W), free(R), free(D);
    return SD_OK;
}
