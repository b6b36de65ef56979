/* sd_zipf.c — the on-demand Zipf model (sd_zipf.h). */
#include "sd_zipf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sd_draft.h"

size_t sd_zipf_bytes(size_t V)
{
    if (V > SIZE_MAX / (2 * SD_ZIPF_BYTES_PER_TOKEN))
        return SIZE_MAX;
    return (size_t)SD_ZIPF_BYTES_PER_TOKEN * V;
}

/* splitmix64's finaliser (Steele, Lea & Flood 2014): a bijective mixer. */
static uint64_t S_mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t S_context_key(const sd_zipf *m, size_t t, size_t a)
{
    return S_mix(m->seed ^ S_mix(((uint64_t)t << 32) ^ (uint64_t)a));
}

#define S_ROUNDS 4

/* One pass of the Feistel network on 2·h bits, forwards or backwards; the
 * round function is the mixer of (key, round, right half). */
static uint64_t S_feistel(uint64_t key, unsigned h, uint64_t x, int inverse)
{
    uint64_t mask = ((uint64_t)1 << h) - 1;
    uint64_t L = x >> h, R = x & mask;
    if (!inverse) {
        for (unsigned r = 0; r < S_ROUNDS; r++) {
            uint64_t f = S_mix(key + ((uint64_t)r << 56) + R) & mask;
            uint64_t nl = R;
            R = L ^ f;
            L = nl;
        }
    } else {
        for (unsigned r = S_ROUNDS; r-- > 0;) {
            uint64_t f = S_mix(key + ((uint64_t)r << 56) + L) & mask;
            uint64_t nr = L;
            L = R ^ f;
            R = nr;
        }
    }
    return (L << h) | R;
}

/* Cycle walking: apply the permutation of 0..2^(2h)-1 until the value
 * falls in 0..V-1; this is a permutation of 0..V-1 (Black & Rogaway). */
static size_t S_walk(const sd_zipf *m, uint64_t key, size_t x, int inverse)
{
    uint64_t y = x;
    do
        y = S_feistel(key, m->half_bits, y, inverse);
    while (y >= m->V);
    return (size_t)y;
}

size_t sd_zipf_rank(const sd_zipf *m, size_t t, size_t a, size_t b)
{
    return S_walk(m, S_context_key(m, t, a), b, 0);
}

size_t sd_zipf_token(const sd_zipf *m, size_t t, size_t a, size_t r)
{
    return S_walk(m, S_context_key(m, t, a), r, 1);
}

void sd_zipf_free(sd_zipf *m)
{
    if (!m)
        return;
    free(m->zd);
    free(m->zq);
    free(m->cd);
    free(m->cq);
    free(m->cr);
    free(m->gd);
    free(m->gq);
    free(m->gr);
    free(m);
}

/* Running sums of w skipping zeros (as sd_dist_sample adds), the last index
 * of positive weight, and a guide table of G buckets (Chen & Asau): bucket
 * g holds the first index whose running sum exceeds (g/G)·total, where an inverse-CDF
 * search for u starts (sims/kernels/kernel_token_zipf.c). */
static double S_cumulate(const double *w, size_t V, size_t G, double *cs, uint32_t *g,
                         uint32_t *last)
{
    double run = 0.0;
    *last = 0;
    for (size_t x = 0; x < V; x++) {
        if (w[x] > 0.0) {
            run += w[x];
            *last = (uint32_t)x;
        }
        cs[x] = run;
    }
    size_t i = 0;
    for (size_t k = 0; k < G; k++) {
        double lo = ((double)k / (double)G) * run;
        while (i < V && !(cs[i] > lo))
            i++;
        g[k] = (uint32_t)i;
    }
    return run;
}

int sd_zipf_new(const sd_zipf_params *lp, sd_zipf **out, sd_error *err)
{
    *out = NULL;
    if (lp->V < 2)
        return sd_error_set(err, SD_EUSAGE, "--V: the on-demand model needs V >= 2, got %zu", lp->V);
    if (lp->T < 1 || lp->T > SD_ZIPF_MAX_T)
        return sd_error_set(err, SD_EUSAGE, "--T: expected 1 to %zu, got %zu", SD_ZIPF_MAX_T, lp->T);
    if (!(lp->s_draft >= 0.0) || !isfinite(lp->s_draft))
        return sd_error_set(err, SD_EUSAGE, "--zipf-draft: expected a finite exponent >= 0, got %g", lp->s_draft);
    if (!(lp->s_target >= 0.0) || !isfinite(lp->s_target))
        return sd_error_set(err, SD_EUSAGE, "--zipf-target: expected a finite exponent >= 0, got %g", lp->s_target);
    size_t bytes = sd_zipf_bytes(lp->V);
    if (bytes > SD_ZIPF_MAX_BYTES || lp->V > UINT32_MAX / 2)
        return sd_error_set(err, SD_ETOOBIG,
                            "the on-demand model at V=%zu needs %zu bytes (%u per token); limit %zu",
                            lp->V, bytes, SD_ZIPF_BYTES_PER_TOKEN, SD_ZIPF_MAX_BYTES);
    sd_zipf *m = calloc(1, sizeof *m);
    if (!m)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the on-demand model");
    size_t V = lp->V, G = 1;
    while (G < V)
        G <<= 1;
    unsigned bits = 0;
    while (((uint64_t)1 << bits) < V)
        bits++;
    m->V = V;
    m->T = lp->T;
    m->G = G;
    m->seed = lp->seed;
    m->s_draft = lp->s_draft;
    m->s_target = lp->s_target;
    m->half_bits = (bits + 1) / 2;
    m->zd = malloc(V * sizeof *m->zd);
    m->zq = malloc(V * sizeof *m->zq);
    m->cd = malloc(V * sizeof *m->cd);
    m->cq = malloc(V * sizeof *m->cq);
    m->cr = malloc(V * sizeof *m->cr);
    m->gd = malloc(G * sizeof *m->gd);
    m->gq = malloc(G * sizeof *m->gq);
    m->gr = malloc(G * sizeof *m->gr);
    if (!m->zd || !m->zq || !m->cd || !m->cq || !m->cr || !m->gd || !m->gq || !m->gr) {
        sd_zipf_free(m);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the on-demand model (%zu bytes)", bytes);
    }
    /* Normalising constants summed from the smallest term up. */
    double hd = 0.0, hq = 0.0;
    for (size_t r = V; r-- > 0;) {
        hd += pow((double)r + 1.0, -lp->s_draft);
        hq += pow((double)r + 1.0, -lp->s_target);
    }
    for (size_t r = 0; r < V; r++) {
        m->zd[r] = pow((double)r + 1.0, -lp->s_draft) / hd;
        m->zq[r] = pow((double)r + 1.0, -lp->s_target) / hq;
    }
    /* Residual weights max(0, z_q - z_d) go in cr's slot first. */
    double *res = m->cr;
    for (size_t r = 0; r < V; r++) {
        double d = m->zq[r] - m->zd[r];
        res[r] = d > 0.0 ? d : 0.0;
    }
    S_cumulate(m->zd, V, G, m->cd, m->gd, &m->lastd);
    S_cumulate(m->zq, V, G, m->cq, m->gq, &m->lastq);
    m->tv = S_cumulate(res, V, G, m->cr, m->gr, &m->lastr);
    *out = m;
    return SD_OK;
}

void sd_zipf_rows(const sd_zipf *m, size_t t, size_t a, double *p, double *q)
{
    uint64_t key = S_context_key(m, t, a);
    for (size_t b = 0; b < m->V; b++) {
        size_t r = S_walk(m, key, b, 0);
        if (p)
            p[b] = m->zd[r];
        if (q)
            q[b] = m->zq[r];
    }
}

sd_chain *sd_zipf_to_chain(const sd_zipf *m, sd_error *err)
{
    sd_chain *c = sd_chain_alloc(m->V, m->T, m->T, m->T, err);
    if (!c)
        return NULL;
    for (size_t a = 0; a < m->V; a++)
        c->init[a] = 1.0 / (double)m->V;
    for (size_t t = 1; t <= m->T; t++)
        for (size_t a = 0; a < m->V; a++)
            sd_zipf_rows(m, t, a, c->draft + ((t - 1) * m->V + a) * m->V,
                         c->target + ((t - 1) * m->V + a) * m->V);
    if (sd_chain_validate(c, "on-demand model", err)) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}

int sd_zipf_exact_token(const sd_zipf *m, size_t gamma, double *rejections,
                        double *target_calls, sd_error *err)
{
    size_t T = m->T, g = sd_draft_len_max(gamma, T);
    /* F[j]: probability that j draft tokens of the current iteration are
     * already accepted before position n (j = g: a bonus position). */
    double *F = calloc(g + 1, sizeof *F), *N = calloc(g + 1, sizeof *N);
    if (!F || !N) {
        free(F);
        free(N);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the exact evaluation");
    }
    double tau = m->tv, rej = 0.0, calls = 0.0;
    F[0] = 1.0;
    for (size_t n = 1; n <= T; n++) {
        memset(N, 0, (g + 1) * sizeof *N);
        calls += F[0];
        size_t top = n - 1 < g ? n - 1 : g; /* j <= n-1 */
        for (size_t j = 0; j <= top; j++) {
            if (F[j] == 0.0)
                continue;
            if (j < g) {
                rej += F[j] * tau;
                N[0] += F[j] * tau;
                N[j + 1] += F[j] * (1.0 - tau);
            } else {
                N[0] += F[j];
            }
        }
        double *tmp = F;
        F = N;
        N = tmp;
    }
    free(F);
    free(N);
    if (rejections)
        *rejections = rej;
    if (target_calls)
        *target_calls = calls;
    return SD_OK;
}
