/* sd_backoff.c — sparse-row models (the mathematics is in sd_backoff.h). */
#include "sd_backoff.h"

#include "sd_draft2_dp.h"
#include "sd_rngbuf.h"
#include "sd_token_dp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define S_HAVE_X86 1
#else
#define S_HAVE_X86 0
#endif

size_t sd_backoff_bytes(size_t V, size_t nnz, int iid)
{
    /* the per-bigram arrays of at least 1 MB are rounded up to whole 2 MB
     * huge pages (S_big): up to 2 MB more each */
    static const size_t per[] = {4, 8, 8, 8, 16, 32, 8, 22, 16}; /* tok, qe, qcum, rcum, bp, bso, sthr,
                                                                  ssl (64/3), rrw */
    size_t round = 0;
    for (size_t i = 0; i < sizeof per / sizeof per[0]; i++)
        round += nnz * per[i] >= ((size_t)1 << 20) ? (size_t)2 << 20 : 0;
    round += !iid && V * sizeof(sd_backoff_ctx) >= ((size_t)1 << 20) ? (size_t)2 << 20 : 0; /* the context lines */
    return V * (iid ? SD_BACKOFF_BYTES_PER_IID_TOKEN : SD_BACKOFF_BYTES_PER_TOKEN) +
           nnz * SD_BACKOFF_BYTES_PER_BIGRAM + round + 4096;
}

void sd_backoff_free(sd_backoff *m)
{
    if (!m)
        return;
    sd_backoff_free(m->draft2);
    free(m->d2map);
    free(m->d2inv);
    free(m->d2mass);
    free(m->p);
    free(m->u);
    free(m->off);
    free(m->tok);
    free(m->qe);
    free(m->qcum);
    free(m->rcum);
    free(m->c);
    free(m->tv);
    free(m->emass);
    free(m->eres);
    free(m->restm);
    free(m->cord);
    free(m->bp);
    free(m->bso);
    free(m->sthr);
    free(m->ssl);
    free(m->rord);
    free(m->rho);
    free(m->rbk);
    free(m->m1);
    free(m->hctx);
    free(m->gde);
    free(m->rrw);
    free(m->A);
    free(m->B);
    free(m->ap);
    free(m->au);
    free(m->lp);
    free(m->lu);
    if (m->words)
        for (size_t i = 0; i < m->V; i++)
            free(m->words[i]);
    free(m->words);
    free(m);
}

/* malloc for the large arrays the kernels read at random: from 1 MB on,
 * whole 2 MB pages asked to be huge (transparent huge pages, Linux
 * madvise(2)), so a random read misses the TLB far less often (speed only;
 * freed by free()). */
static void *S_big(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < ((size_t)1 << 20))
        return malloc(bytes);
    size_t n = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, n);
#ifdef MADV_HUGEPAGE
    if (p)
        (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

/* --- building blocks ------------------------------------------------------ */

/* Walker's alias table of w[V] (Σ w = 1): draw k uniformly, keep it if
 * v < thr[k], else take alias[k]. */
static void S_alias(const double *w, size_t V, double *thr, uint32_t *alias, uint32_t *stack)
{
    size_t ns = 0, nl = V; /* small ones in stack[0, ns), large ones in stack[nl, V) */
    for (size_t i = 0; i < V; i++) {
        thr[i] = w[i] * (double)V;
        alias[i] = (uint32_t)i;
        if (thr[i] < 1.0)
            stack[ns++] = (uint32_t)i;
        else
            stack[--nl] = (uint32_t)i;
    }
    while (ns > 0 && nl < V) {
        uint32_t s = stack[--ns], l = stack[nl++];
        alias[s] = l;
        thr[l] -= 1.0 - thr[s];
        if (thr[l] < 1.0)
            stack[ns++] = l;
        else
            stack[--nl] = l;
    }
    while (ns > 0) /* rounding leftovers: weight ~1 */
        thr[stack[--ns]] = 1.0;
    while (nl < V)
        thr[stack[nl++]] = 1.0;
    for (size_t i = 0; i < V; i++) /* a token of weight 0 is never kept */
        if (w[i] == 0.0 && alias[i] != i)
            thr[i] = 0.0;
}

static size_t S_alias_draw(const double *thr, const uint32_t *alias, size_t V, sd_rngbuf *rng)
{
    double v = sd_rngbuf_uniform(rng) * (double)V;
    size_t k = (size_t)v;
    if (k >= V)
        k = V - 1;
    return v - (double)k < thr[k] ? k : alias[k];
}

static const double *S_sort_key;

static int S_cmp_key(const void *x, const void *y)
{
    double a = S_sort_key[*(const uint32_t *)x], b = S_sort_key[*(const uint32_t *)y];
    if (a != b)
        return a < b ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* The ρ order, prefix sums and alias tables (p and u set, sums 1). */
static int S_tables(sd_backoff *m, sd_error *err)
{
    size_t V = m->V;
    double *key = malloc(V * sizeof *key);
    uint32_t *stack = malloc(V * sizeof *stack);
    m->rord = malloc(V * sizeof *m->rord);
    m->rho = malloc(V * sizeof *m->rho);
    m->A = malloc((V + 1) * sizeof *m->A);
    m->B = malloc((V + 1) * sizeof *m->B);
    m->ap = malloc(V * sizeof *m->ap);
    m->au = malloc(V * sizeof *m->au);
    m->lp = malloc(V * sizeof *m->lp);
    m->lu = malloc(V * sizeof *m->lu);
    if (!key || !stack || !m->rord || !m->rho || !m->A || !m->B || !m->ap || !m->au || !m->lp || !m->lu) {
        free(key);
        free(stack);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tables of a model with V = %zu", V);
    }
    size_t nr = 0;
    for (size_t x = 0; x < V; x++)
        if (m->u[x] > 0.0) {
            key[x] = m->p[x] / m->u[x];
            m->rord[nr++] = (uint32_t)x;
        }
    S_sort_key = key;
    qsort(m->rord, nr, sizeof *m->rord, S_cmp_key);
    m->nr = nr;
    m->A[0] = m->B[0] = 0.0;
    for (size_t k = 0; k < nr; k++) {
        uint32_t x = m->rord[k];
        m->rho[k] = key[x];
        m->A[k + 1] = m->A[k] + m->u[x];
        m->B[k + 1] = m->B[k] + m->p[x];
    }
    m->rho_const = nr > 0 && m->rho[0] == m->rho[nr - 1];
    if (nr > 64 && !m->rho_const) { /* the bucket index (sd_backoff.h) */
        uint64_t lo, hi;
        size_t z = 0;
        while (z + 1 < nr && !(m->rho[z] > 0.0)) /* zeros (p = 0) fall below bucket 0 */
            z++;
        memcpy(&lo, &m->rho[z], sizeof lo);
        memcpy(&hi, &m->rho[nr - 1], sizeof hi);
        size_t cap = nr > 1024 ? nr : 1024;
        unsigned sh = 40;
        while (sh < 63 && (hi >> sh) - (lo >> sh) + 1 > cap)
            sh++;
        m->rbk_shift = sh;
        m->rbk_lo = lo >> sh;
        m->rbk_n = (size_t)((hi >> sh) - m->rbk_lo + 1);
        if ((m->rbk = malloc((m->rbk_n + 1) * sizeof *m->rbk))) {
            size_t k = 0;
            for (size_t j = 0; j <= m->rbk_n; j++) {
                for (; k < nr; k++) {
                    uint64_t b;
                    memcpy(&b, &m->rho[k], sizeof b);
                    if ((b >> sh) >= m->rbk_lo + j)
                        break;
                }
                m->rbk[j] = (uint32_t)k;
            }
        } /* out of memory: the plain search */
    }
    S_alias(m->p, V, m->ap, m->lp, stack);
    S_alias(m->u, V, m->au, m->lu, stack);
    free(key);
    free(stack);
    return SD_OK;
}

/* #{i < n : a[i] < s} for a sorted increasingly, without unpredictable
 * branches (the halving search of Khuong & Morin 2017, "Array layouts
 * for comparison-based searching": the compiler makes the step a
 * conditional move). */
static size_t S_count_less(const double *a, size_t n, double s)
{
    if (n == 0)
        return 0;
    const double *b = a;
    while (n > 1) {
        size_t half = n / 2;
        /* both probes of the next level requested now (Khuong & Morin):
         * the branch-free step cannot speculate, so this is what overlaps
         * a level's miss with the next */
        __builtin_prefetch(b + (n - half) / 2);
        __builtin_prefetch(b + half + (n - half) / 2);
        b = b[half] < s ? b + half : b;
        n -= half;
    }
    return (size_t)(b - a) + (*b < s);
}

/* The same for 32-bit tokens: #{i < n : a[i] < x}. */
static size_t S_count_less_u32(const uint32_t *a, size_t n, size_t x)
{
    if (n == 0)
        return 0;
    const uint32_t *b = a;
    while (n > 1) {
        size_t half = n / 2;
        b = b[half] < x ? b + half : b;
        n -= half;
    }
    return (size_t)(b - a) + (*b < x);
}

/* The guide of the rows (sd_backoff.h): its levels L for a row of n keys
 * (the least with n <= 16^(L+1)), and level l's size ceil(n / 16^l). */
static size_t S_glevels(size_t n)
{
    return n > 16 ? (size_t)(64 - __builtin_clzll((unsigned long long)n - 1) + 3) / 4 - 1 : 0;
}

static size_t S_gsize(size_t n, size_t l)
{
    return (n + ((size_t)1 << (4 * l)) - 1) >> (4 * l);
}

/* The search through the guide, for each instruction set: le16(g, cnt, x)
 * = #{i < cnt : g[i] <= x}, eq16(t, cnt, x) = the first i < cnt with
 * t[i] == x, or 16 (cnt <= 16; the entries up to g + 16 are readable).
 * Returns lo + the index of x in the row tok[lo..lo+n) of L guide levels
 * from gde[goff], or SIZE_MAX. */
#define S_GFIND(name, attr, le16, eq16)                                                                          \
    attr static size_t name(const uint32_t *tok, const double *val, const uint32_t *gde, size_t lo, size_t n, \
                            size_t goff, size_t L, uint32_t x)                                                \
    {                                                                                                         \
        size_t b = 0, pos = goff;                                                                             \
        for (size_t l = L; l > 0; l--) {                                                                      \
            size_t ml = S_gsize(n, l), cnt = ml - 16 * b;                                                     \
            unsigned c = le16(gde + pos + 16 * b, cnt < 16 ? (unsigned)cnt : 16u, x);                         \
            b = 16 * b + (c ? c - 1 : 0);                                                                     \
            pos += ml;                                                                                        \
        }                                                                                                     \
        size_t cnt = n - 16 * b;                                                                              \
        __builtin_prefetch(val + lo + 16 * b);                                                                \
        __builtin_prefetch(val + lo + 16 * b + 15);                                                           \
        unsigned i = eq16(tok + lo + 16 * b, cnt < 16 ? (unsigned)cnt : 16u, x);                              \
        return i < 16 ? lo + 16 * b + i : SIZE_MAX;                                                           \
    }

static inline unsigned S_le16(const uint32_t *g, unsigned cnt, uint32_t x)
{
    unsigned c = 0;
    for (unsigned i = 0; i < 16; i++)
        c += (i < cnt) & (g[i] <= x);
    return c;
}

static inline unsigned S_eq16(const uint32_t *t, unsigned cnt, uint32_t x)
{
    for (unsigned i = 0; i < cnt; i++)
        if (t[i] == x)
            return i;
    return 16;
}

S_GFIND(S_gfind_scalar, , S_le16, S_eq16)

#if S_HAVE_X86
/* AVX2 has signed compares only: keys and x are tokens below 2^31 (V is). */
__attribute__((target("avx2,popcnt,bmi"))) static inline unsigned S_mask16_avx2(const uint32_t *g, __m256i y,
                                                                                  int eq)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)g), b = _mm256_loadu_si256((const __m256i *)(g + 8));
    __m256i ca = eq ? _mm256_cmpeq_epi32(a, y) : _mm256_cmpgt_epi32(y, a);
    __m256i cb = eq ? _mm256_cmpeq_epi32(b, y) : _mm256_cmpgt_epi32(y, b);
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(ca)) |
           (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(cb)) << 8;
}

__attribute__((target("avx2,popcnt,bmi"))) static inline unsigned S_le16_avx2(const uint32_t *g, unsigned cnt,
                                                                              uint32_t x)
{
    return (unsigned)__builtin_popcount(S_mask16_avx2(g, _mm256_set1_epi32((int)x + 1), 0) & ((1u << cnt) - 1));
}

__attribute__((target("avx2,popcnt,bmi"))) static inline unsigned S_eq16_avx2(const uint32_t *t, unsigned cnt,
                                                                              uint32_t x)
{
    unsigned k = S_mask16_avx2(t, _mm256_set1_epi32((int)x), 1) & ((1u << cnt) - 1);
    return k ? (unsigned)__builtin_ctz(k) : 16u;
}

__attribute__((target("avx512f,popcnt,bmi"))) static inline unsigned S_le16_avx512(const uint32_t *g,
                                                                                   unsigned cnt, uint32_t x)
{
    __mmask16 k = _mm512_mask_cmple_epu32_mask((__mmask16)((1u << cnt) - 1), _mm512_loadu_si512(g),
                                               _mm512_set1_epi32((int)x));
    return (unsigned)__builtin_popcount(k);
}

__attribute__((target("avx512f,popcnt,bmi"))) static inline unsigned S_eq16_avx512(const uint32_t *t,
                                                                                   unsigned cnt, uint32_t x)
{
    __mmask16 k = _mm512_mask_cmpeq_epu32_mask((__mmask16)((1u << cnt) - 1), _mm512_loadu_si512(t),
                                               _mm512_set1_epi32((int)x));
    return k ? (unsigned)__builtin_ctz(k) : 16u;
}

S_GFIND(S_gfind_avx2, __attribute__((target("avx2,popcnt,bmi"))), S_le16_avx2, S_eq16_avx2)
S_GFIND(S_gfind_avx512, __attribute__((target("avx512f,popcnt,bmi"))), S_le16_avx512, S_eq16_avx512)
#endif

/* The guide's search for the processor (sd_rngbuf's checks and cap). */
typedef size_t (*S_gfind_fn)(const uint32_t *, const double *, const uint32_t *, size_t, size_t, size_t, size_t,
                             uint32_t);

static S_gfind_fn S_gfind_pick(void)
{
#if S_HAVE_X86
    if (sd_rngbuf_avx512())
        return S_gfind_avx512;
    if (sd_rngbuf_vectorised())
        return S_gfind_avx2;
#endif
    return S_gfind_scalar;
}

/* Builds gde and the lines' goff, glev (gde NULL when out of memory or
 * when the tokens or the guide's offsets exceed 31 and 32 bits: the plain
 * search then). */
static void S_guide(sd_backoff *m)
{
    size_t total = 0;
    for (size_t a = 0; a < m->V; a++) {
        size_t n = m->off[a + 1] - m->off[a];
        for (size_t l = S_glevels(n); l > 0; l--)
            total += S_gsize(n, l);
    }
    if (m->V >= ((size_t)1 << 31) || total >= ((size_t)1 << 32) || !(m->gde = malloc((total + 16) * sizeof *m->gde)))
        return;
    size_t pos = 0;
    for (size_t a = 0; a < m->V; a++) {
        size_t lo = m->off[a], n = m->off[a + 1] - lo;
        m->hctx[a].goff = (uint32_t)pos;
        m->hctx[a].glev = (uint32_t)S_glevels(n);
        for (size_t l = S_glevels(n); l > 0; l--)
            for (size_t j = 0, ml = S_gsize(n, l); j < ml; j++)
                m->gde[pos++] = m->tok[lo + (j << (4 * l))];
    }
    memset(m->gde + pos, 0, 16 * sizeof *m->gde);
}

/* Builds rrw: each row's Walker table of its seen residual at scale 1,
 * weights max(0, e_a(x) - p(x)) / Σ (rows of no such mass: unused), with
 * the tokens of both outcomes in the entry.  NULL when out of memory (the
 * search of rcum then). */
static void S_row_alias(sd_backoff *m)
{
    size_t most = 1;
    for (size_t a = 0; a < m->V; a++)
        most = m->off[a + 1] - m->off[a] > most ? m->off[a + 1] - m->off[a] : most;
    double *w = malloc(most * sizeof *w), *thr = malloc(most * sizeof *thr);
    uint32_t *stack = malloc(most * sizeof *stack), *alias = malloc(most * sizeof *alias);
    if (w && thr && stack && alias && (m->rrw = S_big((m->nnz ? m->nnz : 1) * sizeof *m->rrw)))
        for (size_t a = 0; a < m->V; a++) {
            size_t lo = m->off[a], n = m->off[a + 1] - lo;
            double tot = 0.0;
            for (size_t i = 0; i < n; i++) {
                double d = m->qe[lo + i] - m->p[m->tok[lo + i]];
                w[i] = d > 0.0 ? d : 0.0;
                tot += w[i];
            }
            for (size_t i = 0; i < n; i++)
                w[i] = tot > 0.0 ? w[i] / tot : 0.0;
            S_alias(w, n, thr, alias, stack);
            for (size_t k = 0; k < n; k++)
                m->rrw[lo + k] = (sd_backoff_walker){thr[k], m->tok[lo + k], m->tok[lo + alias[k]]};
        }
    free(w);
    free(thr);
    free(stack);
    free(alias);
}

/* #{k : rho[k] < s}. */
static size_t S_count_below(const sd_backoff *m, double s)
{
    if (!m->rbk || !(s > 0.0))
        return S_count_less(m->rho, m->nr, s);
    uint64_t b;
    memcpy(&b, &s, sizeof b);
    b >>= m->rbk_shift;
    if (b < m->rbk_lo)
        return m->rbk[0];
    if (b - m->rbk_lo >= m->rbk_n)
        return m->nr;
    size_t j = (size_t)(b - m->rbk_lo), lo = m->rbk[j];
    return lo + S_count_less(m->rho + lo, m->rbk[j + 1] - lo, s);
}

double sd_backoff_F(const sd_backoff *m, double s)
{
    size_t k = m->rho_const ? (s > m->rho[0] ? m->nr : 0) : S_count_below(m, s);
    double f = s * m->A[k] - m->B[k];
    return f > 0.0 ? f : 0.0;
}

/* 1 and *qe = e_a(x) if x is among context a's seen tokens, else 0. */
static int S_find(const sd_backoff *m, size_t a, size_t x, double *qe)
{
    if (!m->off)
        return 0;
    size_t lo = m->off[a], hi = m->off[a + 1];
    lo += S_count_less_u32(m->tok + lo, hi - lo, x);
    if (lo < hi && m->tok[lo] == x) {
        *qe = m->qe[lo];
        return 1;
    }
    return 0;
}

/* Whether x is among context a's seen tokens: 0 or -1 (not seen), as before. */
static long S_seen(const sd_backoff *m, size_t a, size_t x)
{
    double qe;
    return S_find(m, a, x, &qe) ? 0 : -1;
}

static double S_c(const sd_backoff *m, size_t a)
{
    return m->c ? m->c[a] : 1.0;
}

double sd_backoff_q(const sd_backoff *m, size_t a, size_t x)
{
    double qe;
    return S_find(m, a, x, &qe) ? qe : S_c(m, a) * m->u[x];
}

void sd_backoff_q_many(const sd_backoff *m, const size_t *a, const size_t *x, size_t n, double *q)
{
    if (!m->off) {
        for (size_t j = 0; j < n; j++)
            q[j] = m->u[x[j]];
        return;
    }
    if (m->gde) {
        S_gfind_fn find = S_gfind_pick();
        for (size_t j = 0; j < n; j++) {
            const sd_backoff_ctx *h = m->hctx + a[j];
            size_t i = find(m->tok, m->qe, m->gde, h->lo, h->hi - h->lo, h->goff, h->glev, (uint32_t)x[j]);
            q[j] = i != SIZE_MAX ? m->qe[i] : h->c * m->u[x[j]];
        }
        return;
    }
    enum { W = 4 }; /* lanes of fixed count (the compiler keeps them in registers); idle lanes search nothing */
    for (size_t j0 = 0; j0 < n; j0 += W) {
        size_t w = n - j0 < W ? n - j0 : W, len[W], xs[W], most = 1;
        const uint32_t *b[W];
        for (size_t j = 0; j < W; j++) {
            size_t lo = j < w ? m->off[a[j0 + j]] : 0;
            len[j] = j < w ? m->off[a[j0 + j] + 1] - lo : 0;
            xs[j] = j < w ? x[j0 + j] : 0;
            b[j] = len[j] ? m->tok + lo : m->tok; /* an empty row or idle lane: any readable entry (unused) */
            len[j] = len[j] ? len[j] : 1;
            most = len[j] > most ? len[j] : most;
        }
        /* one level of every search per pass (S_count_less_u32's steps), as
         * many passes as the longest needs: a finished search (len 1) takes
         * half = 0 steps and stays, so the passes have no data-dependent
         * branch but their count */
        const uint32_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
        size_t l0 = len[0], l1 = len[1], l2 = len[2], l3 = len[3];
        for (; most > 1; most -= most / 2) {
            size_t h0 = l0 / 2, h1 = l1 / 2, h2 = l2 / 2, h3 = l3 / 2;
            __builtin_prefetch(b0 + (l0 - h0) / 2), __builtin_prefetch(b0 + h0 + (l0 - h0) / 2);
            __builtin_prefetch(b1 + (l1 - h1) / 2), __builtin_prefetch(b1 + h1 + (l1 - h1) / 2);
            __builtin_prefetch(b2 + (l2 - h2) / 2), __builtin_prefetch(b2 + h2 + (l2 - h2) / 2);
            __builtin_prefetch(b3 + (l3 - h3) / 2), __builtin_prefetch(b3 + h3 + (l3 - h3) / 2);
            b0 = b0[h0] < xs[0] ? b0 + h0 : b0;
            b1 = b1[h1] < xs[1] ? b1 + h1 : b1;
            b2 = b2[h2] < xs[2] ? b2 + h2 : b2;
            b3 = b3[h3] < xs[3] ? b3 + h3 : b3;
            l0 -= h0, l1 -= h1, l2 -= h2, l3 -= h3;
        }
        b[0] = b0, b[1] = b1, b[2] = b2, b[3] = b3;
        for (size_t j = 0; j < w; j++) {
            size_t aj = a[j0 + j], xj = xs[j], hi = m->off[aj + 1];
            size_t i = m->off[aj] < hi ? (size_t)(b[j] - m->tok) + (*b[j] < xj) : hi;
            q[j0 + j] = i < hi && m->tok[i] == xj ? m->qe[i] : S_c(m, aj) * m->u[xj];
        }
    }
}

void sd_backoff_rows(const sd_backoff *m, size_t a, double *p, double *q)
{
    if (p)
        memcpy(p, m->p, m->V * sizeof *p);
    if (q) {
        double c = S_c(m, a);
        for (size_t x = 0; x < m->V; x++)
            q[x] = c * m->u[x];
        if (m->off)
            for (size_t i = m->off[a]; i < m->off[a + 1]; i++)
                q[m->tok[i]] = m->qe[i];
    }
}

/* se_j and sp_j of the seen residual's entry j (sd_backoff.h: ssl). */
static inline double S_se(const sd_backoff *m, size_t j)
{
    return m->ssl[j / 3].sesp[2 * (j % 3)];
}

static inline double S_sp(const sd_backoff *m, size_t j)
{
    return m->ssl[j / 3].sesp[2 * (j % 3) + 1];
}

/* The seen residual's mass at s >= 0 in the row lo..hi-1:
 * Σ_{x∈S_a} max(0, s e_a(x) - p(x)) = s se_j - sp_j over the seen tokens
 * by threshold p/e_a (sd_backoff.h), j the last with threshold < s; *jn
 * the end of those tokens (lo + their count).  With sthr built. */
static double S_seen_mass(const sd_backoff *m, size_t lo, size_t hi, double s, size_t *jn)
{
    /* a branching search on purpose: S_count_less's branch-free steps gave the
     * same count at 0.95x the speed here (docs/performance-arpa.md) */
    size_t l = lo, h = hi;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (m->sthr[mid] < s)
            l = mid + 1;
        else
            h = mid;
    }
    *jn = l;
    double seen = l > lo ? s * S_se(m, l - 1) - S_sp(m, l - 1) : 0.0;
    return seen > 0.0 ? seen : 0.0;
}

/* Whether the backed-off rest has no residual at s c_a: s c_a u(x) <= p(x)
 * for every token, i.e. s c_a <= min ρ (tokens of u(x) = 0 add nothing).
 * m_a(s) is then the seen part alone. */
static int S_rest_empty(const sd_backoff *m, double sc)
{
    return m->nr > 0 && sc <= m->rho[0];
}

double sd_backoff_mass(const sd_backoff *m, size_t a, double s)
{
    const sd_backoff_ctx *hc = m->hctx ? m->hctx + a : NULL;
    if (hc && s == 1.0)
        return hc->m1;
    if (s == 1.0 && m->m1)
        return m->m1[2 * a];
    double c = hc ? hc->c : S_c(m, a), sc = s * c;
    if (m->sthr && S_rest_empty(m, sc)) { /* one search, in the rows the residual draw reads too */
        size_t jn;
        return S_seen_mass(m, hc ? hc->lo : m->off[a], hc ? hc->hi : m->off[a + 1], s, &jn);
    }
    double rest = sd_backoff_F(m, sc), seen = 0.0;
    if (m->bp) {
        size_t b = 2 * (hc ? hc->lo : m->off[a]), e = 2 * (hc ? hc->hi : m->off[a + 1]);
        size_t lo = b + S_count_less(m->bp + b, e - b, s);
        double g = lo > b ? s * m->bso[2 * (lo - 1)] - m->bso[2 * (lo - 1) + 1] : 0.0;
        double t = g + rest;
        return t > 0.0 ? t : 0.0;
    }
    if (m->off)
        for (size_t i = m->off[a]; i < m->off[a + 1]; i++) {
            size_t x = m->tok[i];
            double d = s * m->qe[i] - m->p[x], r = sc * m->u[x] - m->p[x];
            seen += d > 0.0 ? d : 0.0;
            rest -= r > 0.0 ? r : 0.0;
        }
    return seen + (rest > 0.0 ? rest : 0.0);
}

size_t sd_backoff_draw_p(const sd_backoff *m, sd_rngbuf *rng)
{
    return S_alias_draw(m->ap, m->lp, m->V, rng);
}

/* The first index i in [lo, hi) with u < cum[i] (cum increasing), or hi-1. */
static size_t S_search(const double *cum, size_t lo, size_t hi, double u)
{
    size_t end = hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u < cum[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < end ? lo : end - 1;
}

size_t sd_backoff_draw_u(const sd_backoff *m, sd_rngbuf *rng)
{
    return S_alias_draw(m->au, m->lu, m->V, rng);
}

void sd_backoff_ucum(const sd_backoff *m, double *ucum)
{
    ucum[0] = 0.0;
    for (size_t x = 0; x < m->V; x++)
        ucum[x + 1] = ucum[x] + m->u[x];
}

/* The smallest k in [lo, hi) with c (U(k+1) - U(lo)) > r (one exists when
 * c (U(hi) - U(lo)) > r). */
static size_t S_block_inverse(const double *ucum, double c, size_t lo, size_t hi, double r)
{
    size_t l = lo, h = hi - 1;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (c * (ucum[mid + 1] - ucum[lo]) > r)
            h = mid;
        else
            l = mid + 1;
    }
    return l;
}

size_t sd_backoff_q_inverse(const sd_backoff *m, const double *ucum, size_t a, double v)
{
    double c = S_c(m, a), acc = 0.0;
    size_t lo = m->off ? m->off[a] : 0, hi = m->off ? m->off[a + 1] : 0, base = 0;
    for (size_t j = lo; j < hi; j++) {
        size_t s = m->tok[j];
        double blk = c * (ucum[s] - ucum[base]);
        if (acc + blk > v)
            return S_block_inverse(ucum, c, base, s, v - acc);
        acc += blk;
        if (m->qe[j] > 0.0 && acc + m->qe[j] > v)
            return s;
        acc += m->qe[j];
        base = s + 1;
    }
    double blk = c * (ucum[m->V] - ucum[base]);
    if (base < m->V && acc + blk > v)
        return S_block_inverse(ucum, c, base, m->V, v - acc);
    for (size_t x = m->V; x-- > 0;) /* the rounding edge: the last token of positive mass */
        if (sd_backoff_q(m, a, x) > 0.0)
            return x;
    return 0;
}

/* A draw from q_a reading the context's bounds and masses from its line hc
 * (sd_backoff_ctx) or, hc NULL, from the arrays (the same values). */
static size_t S_draw_q(const sd_backoff *m, size_t a, sd_rngbuf *rng, const sd_backoff_ctx *hc)
{
    size_t lo = hc ? hc->lo : m->off ? m->off[a] : 0, hi = hc ? hc->hi : m->off ? m->off[a + 1] : 0;
    if (hi > lo) {
        double em = hc ? hc->emass : m->emass[a], restm = hc ? hc->restm : m->restm[a], tot = em + restm;
        double v = sd_rngbuf_uniform(rng) * tot;
        if (v < em || restm <= 0.0)
            return m->tok[S_search(m->qcum, lo, hi, v < em ? v : em * sd_rngbuf_uniform(rng))];
        for (;;) {
            size_t x = S_alias_draw(m->au, m->lu, m->V, rng);
            if (S_seen(m, a, x) < 0)
                return x;
        }
    }
    return S_alias_draw(m->au, m->lu, m->V, rng);
}

/* sd_backoff_draw_residual with the context's line hc or, NULL, the arrays (S_draw_q). */
static size_t S_draw_residual(const sd_backoff *m, size_t a, double s, double mass, sd_rngbuf *rng,
                              const sd_backoff_ctx *hc)
{
    double c = hc ? hc->c : S_c(m, a), sc = s * c;
    size_t lo = hc ? hc->lo : m->off ? m->off[a] : 0, hi = hc ? hc->hi : m->off ? m->off[a + 1] : 0;
    double seen;
    size_t jn = lo; /* sorted seen tokens with threshold < s: lo..jn-1 */
    if (s == 1.0 && m->off)
        seen = hc ? hc->eres : m->eres[a];
    else if (m->sthr) {
        seen = S_seen_mass(m, lo, hi, s, &jn);
        if (isnan(mass) && S_rest_empty(m, sc))
            mass = seen; /* sd_backoff_mass's value, from this search */
    } else {
        seen = 0.0;
        for (size_t i = lo; i < hi; i++) {
            double d = s * m->qe[i] - m->p[m->tok[i]];
            seen += d > 0.0 ? d : 0.0;
        }
    }
    if (isnan(mass))
        mass = s == 1.0 && hc ? hc->m1 : sd_backoff_mass(m, a, s);
    if (!(mass > 0.0)) /* nothing to draw from: q_a (block verification's rule, sd_block.h) */
        return S_draw_q(m, a, rng, hc);
    double v = sd_rngbuf_uniform(rng) * mass;
    if (v < seen) {
        if (s == 1.0 && hc && m->rrw) { /* v / seen is uniform on [0, 1): the row's Walker table */
            double t = v / seen * (double)(hi - lo);
            size_t k = (size_t)t < hi - lo ? (size_t)t : hi - lo - 1;
            const sd_backoff_walker *e = m->rrw + lo + k;
            return t - (double)k < e->thr ? e->keep : e->alias;
        }
        if (s == 1.0)
            return m->tok[S_search(m->rcum, lo, hi, v)];
        if (m->sthr) { /* the first j in lo..jn-1 with s se_j - sp_j > v */
            size_t l = lo, h = jn - 1;
            while (l < h) {
                size_t mid = l + (h - l) / 2;
                if (s * S_se(m, mid) - S_sp(m, mid) > v)
                    h = mid;
                else
                    l = mid + 1;
            }
            return m->ssl[l / 3].tok[l % 3];
        }
        double run = 0.0;
        size_t last = lo;
        for (size_t i = lo; i < hi; i++) {
            double d = s * m->qe[i] - m->p[m->tok[i]];
            if (d > 0.0) {
                run += d;
                last = i;
                if (v < run)
                    return m->tok[i];
            }
        }
        return m->tok[last];
    }
    size_t k = m->rho_const ? (sc > m->rho[0] ? m->nr : 0) : S_count_below(m, sc);
    double F = sc * m->A[k] - m->B[k];
    if (k == 0 || !(F > 0.0)) /* rounding: no rest mass after all; fall back to a seen token */
        return hi > lo ? m->tok[lo] : sd_backoff_draw_q(m, a, rng);
    if (m->rho_const && k == m->nr) /* weights (sc - ρ) u(x): ∝ u */
        for (int tries = 0;; tries++) {
            size_t x = S_alias_draw(m->au, m->lu, m->V, rng);
            if (S_seen(m, a, x) < 0 || tries > 1000000)
                return x;
        }
    for (int tries = 0;; tries++) {
        double w = sd_rngbuf_uniform(rng) * F;
        /* the smallest j in 1..k with sc A_j - B_j > w: token rord[j-1] */
        size_t l = 1, h = k;
        while (l < h) {
            size_t mid = l + (h - l) / 2;
            if (sc * m->A[mid] - m->B[mid] > w)
                h = mid;
            else
                l = mid + 1;
        }
        size_t x = m->rord[l - 1];
        if (S_seen(m, a, x) < 0 || tries > 1000000)
            return x;
    }
}

size_t sd_backoff_draw_q(const sd_backoff *m, size_t a, sd_rngbuf *rng)
{
    return S_draw_q(m, a, rng, NULL); /* the arrays: what token verification keeps in cache */
}

size_t sd_backoff_draw_residual(const sd_backoff *m, size_t a, double s, double mass, sd_rngbuf *rng)
{
    return S_draw_residual(m, a, s, mass, rng, NULL);
}

size_t sd_backoff_draw_q_line(const sd_backoff *m, size_t a, sd_rngbuf *rng)
{
    return S_draw_q(m, a, rng, m->hctx ? m->hctx + a : NULL);
}

size_t sd_backoff_draw_residual_line(const sd_backoff *m, size_t a, double s, double mass, sd_rngbuf *rng)
{
    return S_draw_residual(m, a, s, mass, rng, m->hctx ? m->hctx + a : NULL);
}

/* --- builders -------------------------------------------------------------- */

static int S_check_T(size_t V, size_t T, sd_error *err)
{
    if (V < 1 || V > ((size_t)1 << 31))
        return sd_error_set(err, SD_EUSAGE, "V = %zu: expected 1..2^31", V);
    if (T < 1 || T > SD_BACKOFF_MAX_T)
        return sd_error_set(err, SD_EUSAGE, "T = %zu: expected 1..%zu", T, SD_BACKOFF_MAX_T);
    return SD_OK;
}

static int S_budget(size_t bytes, size_t max_bytes, const char *what, sd_error *err)
{
    if (max_bytes && bytes > max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "%s takes %.4g MB; memory budget %.4g MB (--max-memory)", what,
                            (double)bytes / 1e6, (double)max_bytes / 1e6);
    return SD_OK;
}

int sd_backoff_iid(const double *p, const double *q, size_t V, size_t T, size_t max_bytes, sd_backoff **out,
                   sd_error *err)
{
    *out = NULL;
    int rc = S_check_T(V, T, err);
    char what[96];
    snprintf(what, sizeof what, "the single-token problem with V = %zu", V);
    if (!rc)
        rc = S_budget(sd_backoff_bytes(V, 0, 1), max_bytes, what, err);
    if (rc)
        return rc;
    sd_backoff *m = calloc(1, sizeof *m);
    if (!m)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    m->V = V;
    m->T = T;
    m->max_bytes = max_bytes;
    m->row_dev_ctx = -2;
    m->p = malloc(V * sizeof *m->p);
    m->u = malloc(V * sizeof *m->u);
    m->tv = malloc(sizeof *m->tv);
    if (!m->p || !m->u || !m->tv) {
        sd_backoff_free(m);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    memcpy(m->p, p, V * sizeof *p);
    memcpy(m->u, q, V * sizeof *q);
    if ((rc = S_tables(m, err))) {
        sd_backoff_free(m);
        return rc;
    }
    m->tv[0] = sd_backoff_F(m, 1.0);
    *out = m;
    return SD_OK;
}

/* The unigram of a (probabilities 10^logp, <s> zero) over the target's
 * words: into w[V] normalised; returns the raw sum (over the words kept). */
static double S_unigram(const sd_arpa *a, const sd_arpa *onto, double *w)
{
    double s = 0.0;
    for (size_t x = 0; x < onto->V; x++) {
        long i = a == onto ? (long)x : sd_arpa_find(a, onto->words[x]);
        double v = (i < 0 || (long)x == onto->bos) ? 0.0 : pow(10.0, a->uni_logp[i]);
        w[x] = v;
        s += v;
    }
    if (s > 0.0)
        for (size_t x = 0; x < onto->V; x++)
            w[x] /= s;
    return s;
}

static int S_breakpoints(sd_backoff *m, sd_error *err);

int sd_backoff_from_arpa(const sd_arpa *ta, size_t order, const sd_arpa *da, size_t T, size_t max_bytes,
                         sd_backoff **out, sd_error *err)
{
    *out = NULL;
    size_t V = ta->V;
    int rc = S_check_T(V, T, err);
    if (rc)
        return rc;
    if (order != 1 && order != 2)
        return sd_error_set(err, SD_EUSAGE, "--order %zu: expected 1 (unigram) or 2 (bigram)", order);
    if (order > ta->order)
        return sd_error_set(err, SD_EUSAGE, "--order %zu: the model has order %zu", order, ta->order);
    size_t nnz = 0;
    if (order == 2)
        for (size_t i = 0; i < ta->n2; i++)
            nnz += (long)ta->bi_tok[i] != ta->bos;
    char what[128];
    snprintf(what, sizeof what, "the backoff model (V = %zu, %zu bigrams)", V, nnz);
    if ((rc = S_budget(sd_backoff_bytes(V, nnz, order == 1), max_bytes, what, err)))
        return rc;
    sd_backoff *m = calloc(1, sizeof *m);
    if (!m)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    m->V = V;
    m->T = T;
    m->max_bytes = max_bytes;
    m->start = ta->bos >= 0 ? (size_t)ta->bos : 0;
    m->p = malloc(V * sizeof *m->p);
    m->u = malloc(V * sizeof *m->u);
    m->words = calloc(V, sizeof *m->words);
    if (!m->p || !m->u || !m->words)
        goto nomem;
    for (size_t x = 0; x < V; x++)
        if (!(m->words[x] = strdup(ta->words[x])))
            goto nomem;
    double U = S_unigram(ta, ta, m->u);
    if (!(U > 0.0)) {
        sd_backoff_free(m);
        return sd_error_set(err, SD_EDATA, "the target's unigram has no mass outside <s>");
    }
    double Ud = S_unigram(da, ta, m->p);
    if (!(Ud > 0.0)) {
        sd_backoff_free(m);
        return sd_error_set(err, SD_EUSAGE, "the draft's unigram gives no mass to the target's words");
    }
    m->row_dev = fabs(U - 1.0);
    m->row_dev_ctx = -1;
    if (da != ta && fabs(Ud - 1.0) > m->row_dev)
        m->row_dev = fabs(Ud - 1.0);
    if ((rc = S_tables(m, err))) {
        sd_backoff_free(m);
        return rc;
    }
    if (order == 1) {
        if (!(m->tv = malloc(sizeof *m->tv)))
            goto nomem;
        m->tv[0] = sd_backoff_F(m, 1.0);
        *out = m;
        return SD_OK;
    }
    m->nnz = nnz;
    m->off = calloc(V + 1, sizeof *m->off);
    m->tok = S_big((nnz + 16) * sizeof *m->tok); /* 16 readable entries past the end (the guide's groups) */
    m->qe = S_big((nnz ? nnz : 1) * sizeof *m->qe);
    m->qcum = S_big((nnz ? nnz : 1) * sizeof *m->qcum);
    m->rcum = S_big((nnz ? nnz : 1) * sizeof *m->rcum);
    m->c = malloc(V * sizeof *m->c);
    m->tv = malloc(V * sizeof *m->tv);
    m->emass = malloc(V * sizeof *m->emass);
    m->eres = malloc(V * sizeof *m->eres);
    m->restm = malloc(V * sizeof *m->restm);
    m->cord = malloc(V * sizeof *m->cord);
    if (!m->off || !m->tok || !m->qe || !m->qcum || !m->rcum || !m->c || !m->tv || !m->emass || !m->eres ||
        !m->restm || !m->cord)
        goto nomem;
    size_t k = 0;
    for (size_t a = 0; a < V; a++) {
        m->off[a] = k;
        double raw = 0.0, useen = 0.0;
        for (size_t i = ta->ctx_off[a]; i < ta->ctx_off[a + 1]; i++) {
            if ((long)ta->bi_tok[i] == ta->bos)
                continue;
            m->tok[k] = ta->bi_tok[i];
            m->qe[k] = pow(10.0, ta->bi_logp[i]);
            raw += m->qe[k];
            useen += m->u[ta->bi_tok[i]];
            k++;
        }
        double rest = 1.0 - useen; /* Σ of u over the unseen tokens */
        if (rest < SD_BACKOFF_REST_EPS) /* the seen bigrams cover the unigram: nothing backs off */
            rest = 0.0;
        double beta = pow(10.0, ta->uni_bo[a]);
        double Z = raw + beta * U * rest;
        if (!(Z > 0.0) || !isfinite(Z)) {
            sd_backoff_free(m);
            return sd_error_set(err, SD_EDATA, "the row after '%s' has no mass (seen bigrams %g, backoff %g)",
                                ta->words[a], raw, beta);
        }
        if (fabs(Z - 1.0) > m->row_dev) {
            m->row_dev = fabs(Z - 1.0);
            m->row_dev_ctx = (long)a;
        }
        m->c[a] = rest > 0.0 ? beta * U / Z : 0.0;
        double em = 0.0, er = 0.0;
        for (size_t i = m->off[a]; i < k; i++) {
            m->qe[i] /= Z;
            em += m->qe[i];
            double d = m->qe[i] - m->p[m->tok[i]];
            er += d > 0.0 ? d : 0.0;
            m->qcum[i] = em;
            m->rcum[i] = er;
        }
        m->emass[a] = em;
        m->eres[a] = er;
        m->restm[a] = m->c[a] * rest;
    }
    m->off[V] = k;
    memset(m->tok + k, 0, 16 * sizeof *m->tok);
    for (size_t a = 0; a < V; a++)
        m->tv[a] = sd_backoff_mass(m, a, 1.0); /* by the sums (bp is not built yet) */
    if ((rc = S_breakpoints(m, err))) {
        sd_backoff_free(m);
        return rc;
    }
    if ((m->m1 = malloc(2 * V * sizeof *m->m1))) { /* else: searched each time */
        double *t = m->m1;
        m->m1 = NULL;
        for (size_t a = 0; a < V; a++) {
            t[2 * a] = sd_backoff_mass(m, a, 1.0); /* by the breakpoints, as the kernels query it */
            /* the slope just below s = 1: the rest's c_a A_k (k = #{ρ < c_a}) plus
             * the seen part's sl_j at the last breakpoint below 1 */
            double c = m->c[a];
            size_t kc = S_count_below(m, c), b = 2 * m->off[a];
            size_t lo = b + S_count_less(m->bp + b, 2 * m->off[a + 1] - b, 1.0);
            t[2 * a + 1] = c * m->A[kc] + (lo > b ? m->bso[2 * (lo - 1)] : 0.0);
        }
        m->m1 = t;
        if (nnz < ((size_t)1 << 32)) /* the lines' 32-bit offsets */
            m->hctx = V * sizeof *m->hctx >= ((size_t)1 << 20) ? S_big(V * sizeof *m->hctx)
                                                               : aligned_alloc(64, V * sizeof *m->hctx);
        if (m->hctx) {
            for (size_t a = 0; a < V; a++)
                m->hctx[a] = (sd_backoff_ctx){(uint32_t)m->off[a], (uint32_t)m->off[a + 1], 0, 0, m->c[a],
                                              t[2 * a], t[2 * a + 1], m->eres[a], m->emass[a], m->restm[a]};
            S_guide(m);
            S_row_alias(m);
        }
    }
    for (size_t a = 0; a < V; a++)
        m->cord[a] = (uint32_t)a;
    S_sort_key = m->c;
    qsort(m->cord, V, sizeof *m->cord, S_cmp_key);
    *out = m;
    return SD_OK;
nomem:
    sd_backoff_free(m);
    return sd_error_set(err, SD_ENOMEM, "out of memory building the backoff model (V = %zu)", V);
}

/* The breakpoints of g_a (sd_backoff.h). */
static int S_breakpoints(sd_backoff *m, sd_error *err)
{
    size_t n = 2 * m->nnz;
    m->bp = S_big((n ? n : 1) * sizeof *m->bp);
    m->bso = S_big(2 * (n ? n : 1) * sizeof *m->bso);
    uint32_t *ord = malloc((n ? n : 1) * sizeof *ord);
    double *slope = malloc((n ? n : 1) * sizeof *slope), *off = malloc((n ? n : 1) * sizeof *off);
    if (!m->bp || !m->bso || !ord || !slope || !off) {
        free(ord);
        free(slope);
        free(off);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the breakpoints of %zu bigrams", m->nnz);
    }
    /* term 2i: +max(0, s e - p); term 2i+1: -max(0, s k - p), k = c_a u */
    for (size_t a = 0; a < m->V; a++)
        for (size_t i = m->off[a]; i < m->off[a + 1]; i++) {
            double p = m->p[m->tok[i]], e = m->qe[i], k = m->c[a] * m->u[m->tok[i]];
            m->bp[2 * i] = e > 0.0 ? p / e : INFINITY;
            slope[2 * i] = e;
            off[2 * i] = p;
            m->bp[2 * i + 1] = k > 0.0 ? p / k : INFINITY;
            slope[2 * i + 1] = -k;
            off[2 * i + 1] = -p;
        }
    S_sort_key = m->bp;
    for (size_t a = 0; a < m->V; a++) {
        size_t lo = 2 * m->off[a], hi = 2 * m->off[a + 1];
        for (size_t j = lo; j < hi; j++)
            ord[j] = (uint32_t)j;
        qsort(ord + lo, hi - lo, sizeof *ord, S_cmp_key);
    }
    double *bp2 = malloc((n ? n : 1) * sizeof *bp2);
    if (!bp2) {
        free(ord);
        free(slope);
        free(off);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    for (size_t a = 0; a < m->V; a++) {
        double sl = 0.0, of = 0.0;
        for (size_t j = 2 * m->off[a]; j < 2 * m->off[a + 1]; j++) {
            uint32_t t = ord[j];
            bp2[j] = m->bp[t];
            if (isfinite(m->bp[t])) {
                sl += slope[t];
                of += off[t];
            }
            m->bso[2 * j] = sl;
            m->bso[2 * j + 1] = of;
        }
    }
    memcpy(m->bp, bp2, (n ? n : 1) * sizeof *bp2);
    free(bp2);
    /* the seen tokens by p/e (sd_backoff.h) */
    size_t z = m->nnz ? m->nnz : 1;
    m->sthr = S_big(z * sizeof *m->sthr);
    size_t zl = (z + 2) / 3 * sizeof *m->ssl; /* whole lines, 64-byte aligned */
    m->ssl = zl < ((size_t)1 << 20) ? aligned_alloc(64, zl) : S_big(zl);
    double *thr = malloc(z * sizeof *thr);
    if (m->ssl)
        memset(m->ssl + zl / sizeof *m->ssl - 1, 0, sizeof *m->ssl); /* the last line's unused slots */
    if (!m->sthr || !m->ssl || !thr) {
        free(thr);
        free(ord);
        free(slope);
        free(off);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the seen residuals of %zu bigrams", m->nnz);
    }
    for (size_t i = 0; i < m->nnz; i++) {
        thr[i] = m->qe[i] > 0.0 ? m->p[m->tok[i]] / m->qe[i] : INFINITY;
        ord[i] = (uint32_t)i;
    }
    S_sort_key = thr;
    for (size_t a = 0; a < m->V; a++) {
        size_t lo = m->off[a], hi = m->off[a + 1];
        qsort(ord + lo, hi - lo, sizeof *ord, S_cmp_key);
        double e = 0.0, p = 0.0;
        for (size_t j = lo; j < hi; j++) {
            uint32_t i = ord[j];
            m->ssl[j / 3].tok[j % 3] = m->tok[i];
            m->ssl[j / 3].pad = 0;
            m->sthr[j] = thr[i];
            if (isfinite(thr[i])) {
                e += m->qe[i];
                p += m->p[m->tok[i]];
            }
            m->ssl[j / 3].sesp[2 * (j % 3)] = e;
            m->ssl[j / 3].sesp[2 * (j % 3) + 1] = p;
        }
    }
    free(thr);
    free(ord);
    free(slope);
    free(off);
    return SD_OK;
}

/* --- exact values ------------------------------------------------------------ */

/* out[x] = Σ_a M(a) min(p(x), q_a(x)): the min push of the unigram draft
 * p for sd_token_dp_run (ctx: the model). */
static void S_push_min(const void *ctx, const double *M, double *out)
{
    const sd_backoff *m = ctx;
    size_t V = m->V;
    double tot = 0.0;
    for (size_t a = 0; a < V; a++)
        tot += M[a];
    memset(out, 0, V * sizeof *out);
    /* tokens by ρ increasing, merged with contexts by c increasing */
    size_t j = 0;
    double pm = 0.0, pmc = 0.0; /* Σ over contexts with c_a < ρ of M, M c */
    for (size_t k = 0; k < m->nr; k++) {
        double r = m->rho[k];
        while (j < V && m->c[m->cord[j]] < r) {
            pm += M[m->cord[j]];
            pmc += M[m->cord[j]] * m->c[m->cord[j]];
            j++;
        }
        size_t x = m->rord[k];
        if (m->p[x] > 0.0)
            out[x] += m->p[x] * (tot - pm) + m->u[x] * pmc;
    }
    for (size_t a = 0; a < V; a++) {
        if (M[a] == 0.0)
            continue;
        for (size_t i = m->off[a]; i < m->off[a + 1]; i++) {
            size_t x = m->tok[i];
            out[x] += M[a] * (fmin(m->p[x], m->qe[i]) - fmin(m->p[x], m->c[a] * m->u[x]));
        }
    }
}

/* --- a bigram draft (src/sd_arpa_draft2.h attaches it) --------------------- */

double sd_backoff_draft2_p(const sd_backoff *m, size_t a, size_t x)
{
    const sd_backoff *d = m->draft2;
    int32_t xd = m->d2map[x], ad = m->d2map[a];
    if (xd < 0)
        return 0.0;
    return ad >= 0 ? sd_backoff_q(d, (size_t)ad, (size_t)xd) / m->d2mass[ad] : d->u[xd] / m->d2mass[d->V];
}

double sd_backoff_draft2_mass(const sd_backoff *m, size_t a, double s)
{
    const sd_backoff *d = m->draft2;
    int32_t ad = m->d2map[a];
    double UT = m->d2mass[d->V];
    /* off the union of the seen sets: p_a(x) = k w(x) with w the draft unigram over the target's words
     * renormalised (m->p) times UT, so Σ_x max(0, s c u - k UT p) = k UT F(s c / (k UT)) (sd_backoff.h) */
    double c = s * m->c[a], kU = (ad >= 0 ? d->c[ad] / m->d2mass[ad] : 1.0 / UT) * UT;
    double rest = kU > 0.0 ? kU * sd_backoff_F(m, c / kU) : c;
    double seen = 0.0;
    for (size_t i = m->off[a]; i < m->off[a + 1]; i++) {
        size_t x = m->tok[i];
        double px = sd_backoff_draft2_p(m, a, x);
        seen += fmax(0.0, s * m->qe[i] - px);
        rest -= fmax(0.0, c * m->u[x] - kU * m->p[x]);
    }
    for (size_t j = ad >= 0 ? d->off[ad] : 0; ad >= 0 && j < d->off[ad + 1]; j++) {
        int32_t x = m->d2inv[d->tok[j]];
        if (x < 0 || S_seen(m, a, (size_t)x) == 0)
            continue;
        double px = sd_backoff_draft2_p(m, a, (size_t)x), qx = c * m->u[x];
        seen += fmax(0.0, qx - px);
        rest -= fmax(0.0, qx - kU * m->p[x]);
    }
    return seen + fmax(0.0, rest);
}

double sd_backoff_draft2_slope(const sd_backoff *m, size_t a)
{
    const sd_backoff *d = m->draft2;
    int32_t ad = m->d2map[a];
    double UT = m->d2mass[d->V];
    double c = m->c[a], kU = (ad >= 0 ? d->c[ad] / m->d2mass[ad] : 1.0 / UT) * UT;
    /* the rest: Σ c u over the tokens with c u > kU p, i.e. ρ = p/u < c/kU (every token with u > 0 when kU = 0) */
    double rest = kU > 0.0 ? c * m->A[S_count_below(m, c / kU)] : c * m->A[m->nr];
    double seen = 0.0;
    for (size_t i = m->off[a]; i < m->off[a + 1]; i++) {
        size_t x = m->tok[i];
        if (m->qe[i] > sd_backoff_draft2_p(m, a, x))
            seen += m->qe[i];
        if (c * m->u[x] > kU * m->p[x])
            rest -= c * m->u[x];
    }
    for (size_t j = ad >= 0 ? d->off[ad] : 0; ad >= 0 && j < d->off[ad + 1]; j++) {
        int32_t x = m->d2inv[d->tok[j]];
        if (x < 0 || S_seen(m, a, (size_t)x) == 0)
            continue;
        double qx = c * m->u[x];
        if (qx > sd_backoff_draft2_p(m, a, (size_t)x))
            seen += qx;
        if (qx > kU * m->p[x])
            rest -= qx;
    }
    return seen + fmax(0.0, rest);
}

int sd_backoff_draft2_tv(const sd_backoff *m, double *tv, sd_error *err)
{
    if (!m->draft2)
        return sd_error_set(err, SD_EUSAGE, "no bigram draft attached");
    for (size_t a = 0; a < m->V; a++)
        tv[a] = sd_backoff_draft2_mass(m, a, 1.0);
    return SD_OK;
}

int sd_backoff_theorem1_tv(const sd_backoff *m, const double *tv, double *rejections, double *target_calls,
                           long *bad_ctx, sd_error *err)
{
    size_t V = m->V;
    if (bad_ctx)
        *bad_ctx = -1;
    if (!m->off)
        return sd_error_set(err, SD_EUSAGE, "Theorem 1 with per-context TV needs a model with contexts");
    size_t bytes = 2 * V * sizeof(double);
    if (m->max_bytes && bytes > m->max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "Theorem 1 keeps 2 vectors of V = %zu: %.4g MB; memory budget %.4g MB",
                            V, (double)bytes / 1e6, (double)m->max_bytes / 1e6);
    double *buf = calloc(2 * V, sizeof *buf);
    if (!buf)
        return sd_error_set(err, SD_ENOMEM, "out of memory for Theorem 1 (%zu bytes)", bytes);
    size_t n = 0;
    long bad = sd_token_dp_run(m, 0, tv, NULL, NULL, buf, &n, rejections, target_calls);
    free(buf);
    if (bad >= 0) { /* a reachable context without a draft row */
        if (bad_ctx)
            *bad_ctx = bad;
        return sd_error_set(err, SD_EDATA, "the draft has no row at context %ld, which the target reaches at "
                            "position %zu", bad, n);
    }
    return SD_OK;
}

int sd_backoff_exact_token(const sd_backoff *m, size_t gamma, double *rejections, double *target_calls,
                           sd_error *err)
{
    if (m->draft2 && gamma != 0 && gamma < m->T) /* the DP over (x_{n-1}, j) with both rows sparse */
        return sd_draft2dp_token(m, gamma, rejections, target_calls, err);
    if (m->draft2) {
        double *tv = malloc(m->V * sizeof *tv);
        if (!tv)
            return sd_error_set(err, SD_ENOMEM, "out of memory");
        int rc = sd_backoff_draft2_tv(m, tv, err);
        if (!rc)
            rc = sd_backoff_theorem1_tv(m, tv, rejections, target_calls, NULL, err);
        free(tv);
        return rc;
    }
    size_t T = m->T, V = m->V;
    int horizon = gamma == 0 || gamma >= T;
    if (!m->off) { /* no contexts: the mass of each j */
        double tv = m->tv[0];
        if (horizon) {
            if (rejections)
                *rejections = (double)T * tv;
            if (target_calls)
                *target_calls = 1.0 + (double)(T - 1) * tv;
            return SD_OK;
        }
        double *P = calloc(gamma + 1, sizeof *P);
        if (!P)
            return sd_error_set(err, SD_ENOMEM, "out of memory");
        P[0] = 1.0;
        double rej = 0.0, calls = 0.0;
        for (size_t n = 1; n <= T; n++) {
            calls += P[0];
            double to0 = P[gamma], low = 0.0;
            for (size_t j = 0; j < gamma; j++)
                low += P[j];
            rej += low * tv;
            to0 += low * tv;
            for (size_t j = gamma; j > 0; j--)
                P[j] = P[j - 1] * (1.0 - tv);
            P[0] = to0;
        }
        free(P);
        if (rejections)
            *rejections = rej;
        if (target_calls)
            *target_calls = calls;
        return SD_OK;
    }
    size_t vecs = sd_token_dp_vectors(m, gamma);
    if (vecs > ((size_t)-1) / 8 / V)
        return sd_error_set(err, SD_ETOOBIG, "the DP's vectors overflow");
    size_t bytes = vecs * V * sizeof(double);
    if (m->max_bytes && bytes > m->max_bytes)
        return sd_error_set(err, SD_ETOOBIG,
                            "the token DP at gamma = %zu keeps %zu vectors of V = %zu: %.4g MB; memory budget "
                            "%.4g MB",
                            gamma, vecs, V, (double)bytes / 1e6, (double)m->max_bytes / 1e6);
    double *buf = calloc(vecs * V, sizeof *buf);
    if (!buf)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the token DP (%zu bytes)", bytes);
    size_t n = 0;
    sd_token_dp_run(m, gamma, m->tv, S_push_min, m, buf, &n, rejections, target_calls);
    free(buf);
    return SD_OK;
}
