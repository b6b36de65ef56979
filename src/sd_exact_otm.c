/* sd_exact_otm.c — k-draft acceptance probabilities (sd_exact_otm.h).
 *
 * Why the maximising set is a prefix of the q/p order (full version in
 * docs/otm-prefix.md).  Let f(B) = p(B)^k - q(B), k >= 1.  Relax the
 * indicator of B to w ∈ [0,1]^V and put φ(w) = (Σ w p)^k - Σ w q.
 * (i) Every subset is a vertex w, so max_B f <= max_w φ.
 * (ii) Fix s = Σ w p ∈ [0,1].  Minimising Σ w q under Σ w p = s,
 *      0 <= w <= 1, is a fractional knapsack: the greedy fill in q/p order
 *      is optimal (exchange argument: moving p-mass from a token of higher
 *      ratio to one of lower ratio never raises the cost).  Its value C(s)
 *      is the piecewise-linear, convex interpolation of the prefix points
 *      (P_j, Q_j) = (Σ_{i<=j} p, Σ_{i<=j} q) in that order; tokens with
 *      p = 0 add no p-mass, only cost, and come last.
 * (iii) So max_w φ = max_s [s^k - C(s)].  On each linear piece of C the
 *      function s^k - C(s) is convex (s^k is, for s >= 0 and k >= 1), so
 *      its maximum over the piece is at an end: a prefix point.
 * Hence max_B f <= max_j [P_j^k - Q_j] <= max_B f (prefixes are subsets):
 * equality, with a prefix attaining it.  Ties in q/p may be ordered
 * arbitrarily (tied tokens form one linear piece). */
#include "sd_exact_otm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sd_exact_batch.h"

typedef struct {
    double key; /* q/p, +∞ where p = 0 */
    double p, q;
} S_tok;

static int S_cmp(const void *x, const void *y)
{
    double a = ((const S_tok *)x)->key, b = ((const S_tok *)y)->key;
    return (a > b) - (a < b);
}

/* s + x with the compensation c (Neumaier's variant of Kahan summation):
 * prefix sums over 10^6 tokens stay exact to a few ulps. */
static void S_add(double *s, double *c, double x)
{
    double t = *s + x;
    if (fabs(*s) >= fabs(x))
        *c += (*s - t) + x;
    else
        *c += (x - t) + *s;
    *s = t;
}

int sd_exact_otm_acceptance(const double *p, const double *q, size_t V, size_t k,
                            double *out, size_t *best_len, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V < 1)
        return sd_error_set(err, SD_EUSAGE, "vocabulary size 0: expected at least 1 token");
    if (V > SD_EXACT_OTM_MAX_V)
        return sd_error_set(err, SD_ETOOBIG, "optimal acceptance at V = %zu exceeds the limit %zu",
                            V, SD_EXACT_OTM_MAX_V);
    S_tok *tk = malloc(V * sizeof *tk);
    if (!tk)
        return sd_error_set(err, SD_ENOMEM, "out of memory (optimal acceptance, vocab %zu)", V);
    for (size_t x = 0; x < V; x++) {
        tk[x].p = p[x];
        tk[x].q = q[x];
        tk[x].key = p[x] > 0.0 ? q[x] / p[x] : HUGE_VAL;
    }
    qsort(tk, V, sizeof *tk, S_cmp);
    /* max over prefixes j = 0..V of P_j^k - Q_j; j = 0 (B = ∅) gives 0 */
    double best = 0.0, ps = 0.0, pc = 0.0, qs = 0.0, qc = 0.0, kd = (double)k;
    size_t bj = 0;
    for (size_t j = 0; j < V; j++) {
        S_add(&ps, &pc, tk[j].p);
        S_add(&qs, &qc, tk[j].q);
        double P = ps + pc, Q = qs + qc;
        if (P > 1.0)
            P = 1.0;
        double f = pow(P, kd) - Q;
        if (f > best) {
            best = f;
            bj = j + 1;
        }
    }
    free(tk);
    *out = 1.0 - best;
    if (best_len)
        *best_len = bj;
    return SD_OK;
}

int sd_exact_otm_acceptance_brute(const double *p, const double *q, size_t V, size_t k,
                                  double *out, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V > SD_EXACT_OTM_BRUTE_MAX_V)
        return sd_error_set(err, SD_ETOOBIG, "brute force over 2^%zu subsets exceeds the limit 2^%d",
                            V, SD_EXACT_OTM_BRUTE_MAX_V);
    double best = 0.0;
    for (unsigned long B = 1; B < (1UL << V); B++) {
        double pb = 0.0, qb = 0.0;
        for (size_t x = 0; x < V; x++)
            if (B >> x & 1UL) {
                pb += p[x];
                qb += q[x];
            }
        double f = pow(pb, (double)k) - qb;
        if (f > best)
            best = f;
    }
    *out = 1.0 - best;
    return SD_OK;
}

int sd_exact_rrs_acceptance(const double *p, const double *q, size_t V, size_t k,
                            double *out, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if ((double)V * (double)k > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "RRS acceptance at V = %zu, k = %zu needs %.3g operations, beyond the "
                            "limit %.3g (V·k)",
                            V, k, (double)V * (double)k, SD_EXACT_MAX_WORK);
    double *u = malloc(V * sizeof *u);
    if (!u)
        return sd_error_set(err, SD_ENOMEM, "out of memory (RRS acceptance, vocab %zu)", V);
    *out = 1.0 - sd_exact_batch_row(p, q, V, k, u);
    free(u);
    return SD_OK;
}

double sd_exact_otm_bernoulli(double a, double b, size_t k)
{
    double kd = (double)k;
    double x = 1.0 - pow(1.0 - a, kd), y = 1.0 - pow(a, kd);
    return (b < x ? b : x) + (1.0 - b < y ? 1.0 - b : y);
}

double sd_exact_otm_uniform(double r, size_t k)
{
    return 1.0 - pow(1.0 - 1.0 / r, (double)k);
}

/* --- without replacement --------------------------------------------------- */

/* Σ over ordered distinct tuples of length left from the tokens tok[0..n-1]
 * not used yet, of Π p(x_i) / (1 - removed mass before x_i). */
static double S_wor_sum(const double *pt, size_t n, unsigned char *used, size_t left, double removed)
{
    if (left == 0)
        return 1.0;
    double s = 0.0, denom = 1.0 - removed;
    if (!(denom > 0.0))
        return 0.0;
    for (size_t i = 0; i < n; i++) {
        if (used[i])
            continue;
        used[i] = 1;
        s += pt[i] / denom * S_wor_sum(pt, n, used, left - 1, removed + pt[i]);
        used[i] = 0;
    }
    return s;
}

static size_t S_support(const double *p, size_t V)
{
    size_t n = 0;
    for (size_t x = 0; x < V; x++)
        n += p[x] > 0.0;
    return n;
}

double sd_exact_otm_wor_contained(const double *p, const unsigned char *in, size_t V, size_t k)
{
    size_t n = 0, supp = S_support(p, V), ke = k < supp ? k : supp;
    double *pt = malloc((V + 1) * sizeof *pt);
    unsigned char *used = calloc(V + 1, 1);
    double r = NAN;
    if (pt && used) {
        for (size_t x = 0; x < V; x++)
            if (in[x] && p[x] > 0.0)
                pt[n++] = p[x];
        r = n < ke ? 0.0 : S_wor_sum(pt, n, used, ke, 0.0);
    }
    free(pt);
    free(used);
    return r;
}

int sd_exact_otm_wor_acceptance(const double *p, const double *q, size_t V, size_t k, int brute,
                                double *out, size_t *best_len, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V < 1)
        return sd_error_set(err, SD_EUSAGE, "vocabulary size 0: expected at least 1 token");
    size_t supp = S_support(p, V), ke = k < supp ? k : supp;
    double work = brute ? (V > 60 ? HUGE_VAL : ldexp(1.0, (int)V)) * pow((double)V, (double)ke)
                        : pow((double)V, (double)ke + 1.0);
    if (brute && V > SD_EXACT_OTM_BRUTE_MAX_V)
        return sd_error_set(err, SD_ETOOBIG, "brute force over 2^%zu subsets exceeds the limit 2^%d",
                            V, SD_EXACT_OTM_BRUTE_MAX_V);
    if (work > SD_EXACT_OTM_WOR_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "the optimum without replacement at V = %zu, k = %zu needs %.3g ordered "
                            "draft tuples, beyond the limit %.3g",
                            V, k, work, SD_EXACT_OTM_WOR_MAX_WORK);
    unsigned char *in = calloc(V, 1);
    S_tok *tk = malloc(V * sizeof *tk);
    size_t *ord = malloc(V * sizeof *ord);
    if (!in || !tk || !ord) {
        free(in);
        free(tk);
        free(ord);
        return sd_error_set(err, SD_ENOMEM, "out of memory (optimum without replacement, vocab %zu)", V);
    }
    double best = 0.0;
    size_t bj = 0;
    if (brute) {
        for (unsigned long B = 1; B < (1UL << V); B++) {
            double qb = 0.0;
            for (size_t x = 0; x < V; x++) {
                in[x] = (unsigned char)(B >> x & 1UL);
                if (in[x])
                    qb += q[x];
            }
            double f = sd_exact_otm_wor_contained(p, in, V, k) - qb;
            if (f > best)
                best = f;
        }
    } else {
        /* the q/p order, ties by index (the key carries the index in p) */
        for (size_t x = 0; x < V; x++) {
            tk[x].p = (double)x;
            tk[x].q = q[x];
            tk[x].key = p[x] > 0.0 ? q[x] / p[x] : HUGE_VAL;
        }
        qsort(tk, V, sizeof *tk, S_cmp);
        double qs = 0.0;
        for (size_t j = 0; j < V; j++) {
            ord[j] = (size_t)tk[j].p;
            in[ord[j]] = 1;
            qs += q[ord[j]];
            double f = sd_exact_otm_wor_contained(p, in, V, k) - qs;
            if (f > best) {
                best = f;
                bj = j + 1;
            }
        }
    }
    (void)ke;
    free(in);
    free(tk);
    free(ord);
    *out = 1.0 - best;
    if (best_len)
        *best_len = bj;
    return SD_OK;
}

/* --- the convex problem ------------------------------------------------------ */

int sd_exact_otm_convex(const double *p, const double *q, size_t V, size_t k, double *out,
                        size_t *neg, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V < 1)
        return sd_error_set(err, SD_EUSAGE, "vocabulary size 0: expected at least 1 token");
    if (V > SD_EXACT_OTM_MAX_V)
        return sd_error_set(err, SD_ETOOBIG, "optimal acceptance at V = %zu exceeds the limit %zu",
                            V, SD_EXACT_OTM_MAX_V);
    S_tok *tk = malloc(V * sizeof *tk);
    double *hx = malloc((V + 1) * sizeof *hx), *hy = malloc((V + 1) * sizeof *hy);
    size_t *hi = malloc((V + 1) * sizeof *hi);
    if (!tk || !hx || !hy || !hi) {
        free(tk);
        free(hx);
        free(hy);
        free(hi);
        return sd_error_set(err, SD_ENOMEM, "out of memory (convex optimum, vocab %zu)", V);
    }
    size_t n = 0; /* tokens with p > 0 first, in q/p order */
    for (size_t x = 0; x < V; x++) {
        tk[x].p = p[x];
        tk[x].q = q[x];
        tk[x].key = p[x] > 0.0 ? q[x] / p[x] : HUGE_VAL;
        n += p[x] > 0.0;
    }
    qsort(tk, V, sizeof *tk, S_cmp);
    /* Greatest convex minorant of (P_j, C_j), C_j = Q_j - P_j^k, j = 0..n,
     * by a monotone stack (Andrew's lower hull; the P_j increase). */
    size_t m = 0;
    double ps = 0.0, pc = 0.0, qs = 0.0, qc = 0.0, kd = (double)k;
    hx[0] = 0.0;
    hy[0] = 0.0;
    hi[0] = 0;
    m = 1;
    for (size_t j = 0; j < n; j++) {
        S_add(&ps, &pc, tk[j].p);
        S_add(&qs, &qc, tk[j].q);
        double P = ps + pc, Q = qs + qc;
        if (P > 1.0)
            P = 1.0;
        double X = P, Y = Q - pow(P, kd);
        if (X <= hx[m - 1]) { /* a token of negligible mass: keep the lower point */
            if (Y < hy[m - 1]) {
                hy[m - 1] = Y;
                hi[m - 1] = j + 1;
            }
        } else {
            while (m >= 2) {
                /* pop the last point when it lies on or above the chord */
                double cross = (hx[m - 1] - hx[m - 2]) * (Y - hy[m - 2]) -
                               (hy[m - 1] - hy[m - 2]) * (X - hx[m - 2]);
                if (cross > 0.0)
                    break;
                m--;
            }
            hx[m] = X;
            hy[m] = Y;
            hi[m] = j + 1;
            m++;
        }
    }
    /* x*_y = p_y · slope of its piece; Σ of the negative ones over a piece
     * is the piece's rise when the slope is negative */
    double s = 0.0, sc = 0.0;
    size_t cnt = 0;
    for (size_t i = 1; i < m; i++) {
        double rise = hy[i] - hy[i - 1];
        if (rise < 0.0) {
            S_add(&s, &sc, rise);
            cnt += hi[i] - hi[i - 1];
        }
    }
    free(tk);
    free(hx);
    free(hy);
    free(hi);
    *out = 1.0 + (s + sc);
    if (*out < 0.0)
        *out = 0.0;
    if (neg)
        *neg = cnt;
    return SD_OK;
}

/* --- Wolfe's minimum-norm point (generic) ------------------------------------ */

typedef struct {
    const double *p, *q;
    size_t V;
    double k;
    int wor;             /* drafts without replacement: P(S ⊆ B) by sd_exact_otm_wor_contained */
    size_t *ord;         /* scratch */
    S_tok *tk;           /* scratch: (key, index) pairs */
    unsigned char *in;   /* scratch: the set of the chain */
} S_mnp;

/* P(drafts ⊆ the first i tokens of ord), P_i the p-mass of those. */
static double S_contained(S_mnp *m, double P)
{
    if (!m->wor)
        return pow(P > 1.0 ? 1.0 : P, m->k);
    return sd_exact_otm_wor_contained(m->p, m->in, m->V, (size_t)m->k);
}

/* ord = the tokens by key[] ascending, ties by index. */
static void S_order(S_mnp *m, const double *key)
{
    for (size_t y = 0; y < m->V; y++) {
        m->tk[y].key = key[y];
        m->tk[y].p = (double)y;
        m->tk[y].q = 0.0;
    }
    qsort(m->tk, m->V, sizeof *m->tk, S_cmp);
    for (size_t i = 0; i < m->V; i++)
        m->ord[i] = (size_t)m->tk[i].p;
}

/* Edmonds' greedy vertex of B(h) minimising <dir, b>: tokens by dir
 * ascending, b_y = h(S ∪ {y}) - h(S). */
static void S_greedy(S_mnp *m, const double *dir, double *b)
{
    S_order(m, dir);
    double P = 0.0, prev = 0.0;
    memset(m->in, 0, m->V);
    for (size_t i = 0; i < m->V; i++) {
        size_t y = m->ord[i];
        P += m->p[y];
        m->in[y] = 1;
        double cur = S_contained(m, P);
        b[y] = m->q[y] - (cur - prev);
        prev = cur;
    }
}

static double S_dot(const double *a, const double *b, size_t V)
{
    double s = 0.0;
    for (size_t i = 0; i < V; i++)
        s += a[i] * b[i];
    return s;
}

/* Affine minimiser of the points pts[0..m-1]: alpha (sum 1) minimising
 * |Σ alpha_i pts_i|; by the system [G 1; 1' 0], G the Gram matrix.
 * Returns 0 on success, -1 when singular. */
static int S_affine(const double *G, size_t m, size_t cap, double *alpha, double *A)
{
    size_t n = m + 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= n; j++) {
            double v;
            if (j == n)
                v = i == m ? 1.0 : 0.0;
            else if (i < m && j < m)
                v = G[i * cap + j];
            else if (i == m && j == m)
                v = 0.0;
            else
                v = 1.0;
            A[i * (n + 1) + j] = v;
        }
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(A[r * (n + 1) + c]) > fabs(A[piv * (n + 1) + c]))
                piv = r;
        if (fabs(A[piv * (n + 1) + c]) < 1e-300)
            return -1;
        if (piv != c)
            for (size_t j = 0; j <= n; j++) {
                double t = A[c * (n + 1) + j];
                A[c * (n + 1) + j] = A[piv * (n + 1) + j];
                A[piv * (n + 1) + j] = t;
            }
        for (size_t r = 0; r < n; r++) {
            if (r == c)
                continue;
            double f = A[r * (n + 1) + c] / A[c * (n + 1) + c];
            if (f != 0.0)
                for (size_t j = c; j <= n; j++)
                    A[r * (n + 1) + j] -= f * A[c * (n + 1) + j];
        }
    }
    for (size_t i = 0; i < m; i++)
        alpha[i] = A[i * (n + 1) + n] / A[i * (n + 1) + i];
    return 0;
}

int sd_exact_otm_convex_mnp(const double *p, const double *q, size_t V, size_t k, int wor, double *out,
                            size_t *iterations, sd_error *err)
{
    if (k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", k);
    if (V < 1 || V > SD_EXACT_OTM_MNP_MAX_V)
        return sd_error_set(err, V < 1 ? SD_EUSAGE : SD_ETOOBIG,
                            "the minimum-norm-point solver takes 1 to %d tokens, got %zu", SD_EXACT_OTM_MNP_MAX_V, V);
    size_t cap = V + 2;
    double *pts = malloc(cap * V * sizeof *pts), *G = malloc(cap * cap * sizeof *G);
    double *lam = malloc(cap * sizeof *lam), *alpha = malloc(cap * sizeof *alpha);
    double *A = malloc((cap + 1) * (cap + 2) * sizeof *A), *x = malloc(V * sizeof *x);
    double *y = malloc(V * sizeof *y), *b = malloc(V * sizeof *b);
    size_t *ord = malloc(V * sizeof *ord);
    S_tok *tk = malloc(V * sizeof *tk);
    unsigned char *in = malloc(V);
    if (!pts || !G || !lam || !alpha || !A || !x || !y || !b || !ord || !tk || !in) {
        free(pts), free(G), free(lam), free(alpha), free(A), free(x), free(y), free(b), free(ord), free(tk), free(in);
        return sd_error_set(err, SD_ENOMEM, "out of memory (minimum-norm point, vocab %zu)", V);
    }
    S_mnp mm = {p, q, V, (double)k, wor, ord, tk, in};
    /* start: the greedy vertex in index order */
    for (size_t i = 0; i < V; i++)
        y[i] = (double)i;
    S_greedy(&mm, y, pts);
    size_t m = 1, it = 0;
    lam[0] = 1.0;
    G[0] = S_dot(pts, pts, V);
    memcpy(x, pts, V * sizeof *x);
    double scale = 1.0;
    for (; it < 100000; it++) {
        S_greedy(&mm, x, b);
        double xx = S_dot(x, x, V), xb = S_dot(x, b, V);
        double bb = S_dot(b, b, V);
        if (bb > scale)
            scale = bb;
        if (xx - xb <= 1e-15 * scale || m >= cap)
            break;
        /* add b */
        memcpy(pts + m * V, b, V * sizeof *b);
        for (size_t i = 0; i <= m; i++)
            G[i * cap + m] = G[m * cap + i] = S_dot(pts + i * V, b, V);
        lam[m++] = 0.0;
        for (int minor = 0; minor < 1000; minor++) {
            if (S_affine(G, m, cap, alpha, A)) {
                m = 0; /* singular: give up, report what we have */
                break;
            }
            int allpos = 1;
            for (size_t i = 0; i < m; i++)
                allpos &= alpha[i] > 1e-15;
            if (allpos) {
                memcpy(lam, alpha, m * sizeof *lam);
                break;
            }
            double theta = 1.0;
            for (size_t i = 0; i < m; i++)
                if (alpha[i] <= 1e-15 && lam[i] - alpha[i] > 0.0) {
                    double t = lam[i] / (lam[i] - alpha[i]);
                    if (t < theta)
                        theta = t;
                }
            for (size_t i = 0; i < m; i++)
                lam[i] = theta * alpha[i] + (1.0 - theta) * lam[i];
            /* drop the points whose weight vanished */
            size_t w = 0;
            for (size_t i = 0; i < m; i++) {
                if (lam[i] <= 1e-15)
                    continue;
                if (w != i) {
                    memcpy(pts + w * V, pts + i * V, V * sizeof *pts);
                    lam[w] = lam[i];
                    for (size_t j = 0; j < m; j++)
                        G[w * cap + j] = G[i * cap + j];
                    for (size_t j = 0; j < m; j++)
                        G[j * cap + w] = G[j * cap + i];
                }
                w++;
            }
            /* the Gram matrix rows/columns were moved in two passes; rebuild
             * it exactly for the kept points */
            m = w;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j <= i; j++)
                    G[i * cap + j] = G[j * cap + i] = S_dot(pts + i * V, pts + j * V, V);
        }
        if (m == 0)
            break;
        for (size_t j = 0; j < V; j++) {
            double s = 0.0;
            for (size_t i = 0; i < m; i++)
                s += lam[i] * pts[i * V + j];
            x[j] = s;
        }
    }
    /* the best level set of x: tokens by x ascending, h on each prefix */
    S_order(&mm, x);
    double best = 0.0, P = 0.0, Q = 0.0;
    memset(in, 0, V);
    for (size_t i = 0; i < V; i++) {
        P += p[ord[i]];
        Q += q[ord[i]];
        in[ord[i]] = 1;
        double hv = Q - S_contained(&mm, P);
        if (hv < best)
            best = hv;
    }
    free(pts), free(G), free(lam), free(alpha), free(A), free(x), free(y), free(b), free(ord), free(tk), free(in);
    *out = 1.0 + best;
    if (iterations)
        *iterations = it;
    return SD_OK;
}
