/* sd_gumbel.c — the exponential race of gumbel and gumbel-list (sd_gumbel.h). */
#include "sd_gumbel.h"

#include <math.h>
#include <stdlib.h>

#include "../../src/sd_dist.h"

static double S_exp1(sd_stream *rng)
{
    return -log1p(-sd_stream_uniform(rng)); /* u in [0, 1): finite */
}

size_t sd_gumbel_select(const double *p, const double *q, size_t V, const size_t *x, size_t a,
                        int bug, sd_stream *rng, double *w)
{
    for (size_t i = 0; i < V; i++)
        w[i] = INFINITY;
    for (size_t l = 0; l < a; l++) {
        double T = S_exp1(rng);
        for (size_t i = 0; i < V; i++) {
            double e = i == x[l] ? p[i] * T : p[i] * T + S_exp1(rng);
            if (e < w[i])
                w[i] = e;
        }
    }
    size_t y = V;
    double best = INFINITY;
    for (size_t i = 0; i < V; i++)
        if (q[i] > 0.0 && (y == V || w[i] / q[i] < best)) {
            best = w[i] / q[i];
            y = i;
        }
    if (!bug)
        return y;
    for (size_t l = 0; l < a; l++)
        if (x[l] == y)
            return y;
    /* broken-gumbel: standard speculative sampling's correction instead of Y */
    double tv = 0.0;
    for (size_t i = 0; i < V; i++) {
        w[i] = q[i] > p[i] ? q[i] - p[i] : 0.0;
        tv += w[i];
    }
    return tv > 0.0 ? sd_dist_sample(w, V, tv, sd_stream_uniform(rng))
                    : sd_dist_sample(q, V, 1.0, sd_stream_uniform(rng));
}

/* --- the joint law ----------------------------------------------------------- */

typedef struct {
    const double *c, *r; /* g(tau) = sum_m c[m] exp(-tau r[m]) */
    size_t M;
} S_sum;

/* I(R, n) = int_0^inf exp(-tau R) g(tau)^n dtau */
static double S_I(const S_sum *g, double R, size_t n)
{
    if (n == 0)
        return 1.0 / R;
    double s = 0.0;
    for (size_t m = 0; m < g->M; m++)
        if (g->c[m] != 0.0)
            s += g->c[m] * S_I(g, R + g->r[m], n - 1);
    return s;
}

static double S_choose(size_t n, size_t k)
{
    double c = 1.0;
    for (size_t i = 1; i <= k; i++)
        c = c * (double)(n - k + i) / (double)i;
    return c;
}

/* F(R, n, L) = int exp(-tau R) g^n (e^{-tau} - g)^L dtau */
static double S_F(const S_sum *g, double R, size_t n, size_t L)
{
    double s = 0.0;
    for (size_t l = 0; l <= L; l++)
        s += (l % 2 ? -1.0 : 1.0) * S_choose(L, l) * S_I(g, R + (double)(L - l), n + l);
    return s;
}

static int S_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double S_h(const double *p, const double *q, size_t V, double u)
{
    double h = 0.0;
    for (size_t i = 0; i < V; i++)
        h += q[i] > p[i] * u ? q[i] : p[i] * u;
    return h;
}

int sd_gumbel_law(void *ctx, const double *p, const double *q, size_t V, size_t a, double *J,
                  sd_error *err)
{
    int bug = ctx ? *(const int *)ctx : 0;
    if (a > SD_GUMBEL_LAW_MAX_A)
        return sd_error_set(err, SD_ETOOBIG, "the exact law of the exponential race is limited to "
                                             "%d lists (asked %zu)", SD_GUMBEL_LAW_MAX_A, a);
    if (bug && a != 1)
        return sd_error_set(err, SD_EUSAGE, "broken-gumbel's law is for one draft");
    double *buf = malloc(3 * (V + 1) * sizeof *buf);
    if (!buf)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    double *b = buf, *c = buf + V + 1, *r = buf + 2 * (V + 1);
    for (size_t y = 0; y < V; y++) {
        if (!(q[y] > 0.0))
            continue;
        if (!(p[y] > 0.0)) { /* no draft is ever y */
            J[y] += q[y];
            continue;
        }
        double u0 = q[y] / p[y], B = 0.0;
        size_t nb = 0;
        for (size_t i = 0; i < V; i++) {
            if (!(p[i] > 0.0))
                continue;
            if (q[i] * p[y] <= q[y] * p[i])
                B += p[i]; /* active at u0 (y itself among them) */
            else
                b[nb++] = q[i] / p[i];
        }
        qsort(b, nb, sizeof *b, S_cmp);
        size_t M = 0;
        double my = S_h(p, q, V, u0);
        c[M] = p[y] / B;
        r[M++] = my;
        for (size_t s = 0; s < nb;) {
            double u = b[s], Bn = B;
            size_t e = s;
            /* the tokens whose breakpoint is u */
            for (size_t i = 0; i < V; i++)
                if (p[i] > 0.0 && q[i] * p[y] > q[y] * p[i] && q[i] / p[i] == u)
                    Bn += p[i];
            while (e < nb && b[e] == u)
                e++;
            c[M] = p[y] / Bn - p[y] / B;
            r[M++] = S_h(p, q, V, u);
            B = Bn;
            s = e;
        }
        S_sum g = {c, r, M};
        for (size_t j = 0; j <= a; j++) {
            double t = 0.0;
            if (j >= 1)
                t += S_choose(a - 1, j - 1) * S_F(&g, my, j - 1, a - j);
            if (j + 1 <= a)
                t += S_choose(a - 1, j) * (S_F(&g, 1.0, j, a - 1 - j) - S_F(&g, my, j, a - 1 - j));
            double v = (double)a * q[y] * t;
            J[j * V + y] += v > 0.0 ? v : 0.0; /* rounding below 0 */
        }
    }
    free(buf);
    if (bug) { /* a = 1: rows 0 (rejected) and 1 (accepted) */
        double acc = 0.0, tv = 0.0;
        for (size_t y = 0; y < V; y++) {
            acc += J[V + y];
            tv += q[y] > p[y] ? q[y] - p[y] : 0.0;
        }
        double R = 1.0 - acc;
        for (size_t y = 0; y < V; y++) {
            double rr = tv > 0.0 ? (q[y] > p[y] ? q[y] - p[y] : 0.0) / tv : q[y];
            double xrej = p[y] - J[V + y]; /* X = y and Y != y */
            if (xrej < 0.0)
                xrej = 0.0;
            J[y] = (R - xrej) * rr;
            J[V + y] += xrej * rr;
        }
    }
    return SD_OK;
}

double sd_gumbel_law_work(size_t V, size_t a)
{
    /* per token y: the pieces (V sorts and V passes of V), then for each of
     * the a+1 counts at most 3 (a+1) expansions of (V+1)^(a-1) terms */
    double terms = 1.0;
    for (size_t i = 1; i < a; i++)
        terms *= (double)V + 1.0;
    double A = (double)a + 1.0;
    return 3.0 * (double)V + 3.0 * A * A * terms * 2.0;
}
