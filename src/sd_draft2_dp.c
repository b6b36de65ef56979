/* sd_draft2_dp.c — the token DP with a bigram drafter from sparse sums
 * (sd_draft2_dp.h).  Reads the fields of sd_backoff only (src/sd_backoff.h
 * calls it: no call back). */
#include "sd_draft2_dp.h"
#include "sd_token_dp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The per-context quantities of the rest and the scratch of the union. */
typedef struct {
    const sd_backoff *m;
    double *K;      /* [V] draft rest weight: p_a(x) = K_a w(x) off D_a */
    double *t;      /* [V] c_a / K_a */
    uint32_t *ord;  /* [V] contexts by t increasing */
    double *pd;     /* [V] scratch: d_a(x) on D_a, NaN elsewhere */
    /* the union S_a ∪ D_a of each context (at uoff[a]..uoff[a+1]-1): its
     * tokens and min(p_a, q_a)(x) - min(K_a w(x), c_a u(x)), the push's
     * correction per unit of mass, computed once */
    size_t *uoff;   /* [V+1] */
    uint32_t *ux;
    double *ucorr;
} S_ctx;

typedef struct {
    double t;
    uint32_t a;
} S_key;

static int S_cmp(const void *x, const void *y)
{
    const S_key *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t ? 1 : (a->a > b->a) - (a->a < b->a);
}

static int S_ctx_init(S_ctx *c, const sd_backoff *m, sd_error *err)
{
    size_t V = m->V;
    const sd_backoff *d = m->draft2;
    double UT = m->d2mass[d->V];
    c->m = m;
    c->K = malloc(V * sizeof *c->K);
    c->t = malloc(V * sizeof *c->t);
    c->ord = malloc(V * sizeof *c->ord);
    c->pd = malloc(V * sizeof *c->pd);
    S_key *k = malloc(V * sizeof *k);
    if (!c->K || !c->t || !c->ord || !c->pd || !k) {
        free(k);
        return sd_error_set(err, SD_ENOMEM, "out of memory (the bigram-draft DP's context tables, V = %zu)", V);
    }
    for (size_t a = 0; a < V; a++) {
        int32_t ad = m->d2map[a];
        double K = ad >= 0 ? d->c[ad] / m->d2mass[ad] * UT : 1.0, ca = m->c[a];
        c->K[a] = K;
        c->t[a] = ca == 0.0 ? 0.0 : K > 0.0 ? ca / K : INFINITY;
        k[a].t = c->t[a];
        k[a].a = (uint32_t)a;
        c->pd[a] = NAN;
    }
    qsort(k, V, sizeof *k, S_cmp);
    for (size_t i = 0; i < V; i++)
        c->ord[i] = k[i].a;
    free(k);
    return SD_OK;
}

static void S_ctx_free(S_ctx *c)
{
    free(c->K), free(c->t), free(c->ord), free(c->pd);
    free(c->uoff), free(c->ux), free(c->ucorr);
}

/* Visits x in S_a ∪ D_a with p_a(x), q_a(x) and their rest forms K_a w(x),
 * c_a u(x): acc(x, p, q, pr, qr).  Leaves c->pd as it found it. */
#define S_UNION(c, a, BODY)                                                                    \
    do {                                                                                       \
        const sd_backoff *m_ = (c)->m, *d_ = m_->draft2;                                       \
        int32_t ad_ = m_->d2map[a];                                                            \
        double K_ = (c)->K[a], ca_ = m_->c[a];                                                 \
        size_t d0_ = ad_ >= 0 ? d_->off[ad_] : 0, d1_ = ad_ >= 0 ? d_->off[ad_ + 1] : 0;       \
        for (size_t j_ = d0_; j_ < d1_; j_++) {                                                \
            int32_t x_ = m_->d2inv[d_->tok[j_]];                                               \
            if (x_ >= 0)                                                                       \
                (c)->pd[x_] = d_->qe[j_] / m_->d2mass[ad_];                                    \
        }                                                                                      \
        for (size_t i_ = m_->off[a]; i_ < m_->off[(a) + 1]; i_++) {                            \
            size_t x = m_->tok[i_];                                                            \
            double pr = K_ * m_->p[x], qr = ca_ * m_->u[x], q = m_->qe[i_];                    \
            double p = isnan((c)->pd[x]) ? pr : (c)->pd[x];                                    \
            BODY;                                                                              \
            (c)->pd[x] = isnan((c)->pd[x]) ? NAN : -1.0; /* -1: done (in S_a) */               \
        }                                                                                      \
        for (size_t j_ = d0_; j_ < d1_; j_++) {                                                \
            int32_t xs_ = m_->d2inv[d_->tok[j_]];                                              \
            if (xs_ < 0)                                                                       \
                continue;                                                                      \
            size_t x = (size_t)xs_;                                                            \
            if ((c)->pd[x] >= 0.0) {                                                           \
                double pr = K_ * m_->p[x], qr = ca_ * m_->u[x], q = qr, p = (c)->pd[x];        \
                BODY;                                                                          \
            }                                                                                  \
            (c)->pd[x] = NAN;                                                                  \
        }                                                                                      \
    } while (0)

/* The unions and their corrections (S_ctx). */
static int S_ctx_unions(S_ctx *c, sd_error *err)
{
    const sd_backoff *m = c->m;
    size_t V = m->V, nu = 0;
    if (!(c->uoff = malloc((V + 1) * sizeof *c->uoff)))
        return sd_error_set(err, SD_ENOMEM, "out of memory (the bigram-draft DP's unions)");
    for (size_t a = 0; a < V; a++) {
        c->uoff[a] = nu;
        S_UNION(c, a, {
            (void)x;
            (void)p;
            (void)q;
            (void)pr;
            (void)qr;
            nu++;
        });
    }
    c->uoff[V] = nu;
    c->ux = malloc((nu ? nu : 1) * sizeof *c->ux);
    c->ucorr = malloc((nu ? nu : 1) * sizeof *c->ucorr);
    if (!c->ux || !c->ucorr)
        return sd_error_set(err, SD_ENOMEM, "out of memory (the bigram-draft DP's unions: %zu entries)", nu);
    size_t e = 0;
    for (size_t a = 0; a < V; a++)
        S_UNION(c, a, {
            c->ux[e] = (uint32_t)x;
            c->ucorr[e++] = fmin(p, q) - fmin(pr, qr);
        });
    return SD_OK;
}

/* out[x] = Σ_a M(a) min(p_a(x), q_a(x)): the min push for sd_token_dp_run
 * (ctx: the S_ctx). */
static void S_push_min(const void *ctx, const double *M, double *out)
{
    const S_ctx *c = ctx;
    const sd_backoff *m = c->m;
    size_t V = m->V;
    double SK = 0.0;
    for (size_t a = 0; a < V; a++)
        SK += M[a] * c->K[a];
    memset(out, 0, V * sizeof *out);
    size_t j = 0;
    double sc = 0.0, sk = 0.0; /* over contexts with t_a <= ρ: Σ M c, Σ M K */
    for (size_t k = 0; k < m->nr; k++) {
        double r = m->rho[k];
        while (j < V && c->t[c->ord[j]] <= r) {
            size_t a = c->ord[j++];
            sc += M[a] * m->c[a];
            sk += M[a] * c->K[a];
        }
        size_t x = m->rord[k];
        out[x] = m->p[x] * (SK - sk) + m->u[x] * sc;
    }
    for (size_t a = 0; a < V; a++) {
        if (M[a] == 0.0)
            continue;
        double Ma = M[a];
        for (size_t e = c->uoff[a]; e < c->uoff[a + 1]; e++)
            out[c->ux[e]] += Ma * c->ucorr[e];
    }
}

/* tv[a] = Σ_x (q_a - p_a)+: the rest c_a A_k - K_a B_k (k = #{ρ < t_a}),
 * the union's rest terms replaced by its own. */
static void S_tv(S_ctx *c, double *tv)
{
    const sd_backoff *m = c->m;
    size_t V = m->V, k = 0;
    for (size_t j = 0; j < V; j++) {
        size_t a = c->ord[j];
        while (k < m->nr && m->rho[k] < c->t[a])
            k++;
        double rest = m->c[a] * m->A[k] - c->K[a] * m->B[k], seen = 0.0;
        S_UNION(c, a, {
            seen += fmax(0.0, q - p);
            rest -= fmax(0.0, qr - pr);
        });
        tv[a] = seen + fmax(0.0, rest);
    }
}

size_t sd_draft2dp_bytes(const sd_backoff *m, size_t gamma)
{
    size_t V = m->V, vecs = gamma == 0 || gamma >= m->T ? 2 : 2 * (gamma + 1) + 1;
    size_t nu = m->nnz + (m->draft2 ? m->draft2->nnz : 0); /* at most the two models' bigrams */
    return (vecs + 6) * V * sizeof(double) + nu * (sizeof(uint32_t) + sizeof(double));
}

int sd_draft2dp_tv(const sd_backoff *m, double *tv, sd_error *err)
{
    if (!m->draft2 || !m->off)
        return sd_error_set(err, SD_EUSAGE, "the bigram-draft DP needs a bigram target with a bigram draft attached");
    S_ctx c;
    memset(&c, 0, sizeof c);
    int rc = S_ctx_init(&c, m, err);
    if (!rc)
        S_tv(&c, tv);
    S_ctx_free(&c);
    return rc;
}

int sd_draft2dp_token(const sd_backoff *m, size_t gamma, double *rejections, double *target_calls, sd_error *err)
{
    if (!m->draft2 || !m->off)
        return sd_error_set(err, SD_EUSAGE, "the bigram-draft DP needs a bigram target with a bigram draft attached");
    size_t T = m->T, V = m->V;
    int horizon = gamma == 0 || gamma >= T;
    if (!horizon && gamma > ((size_t)-1) / 16 / V)
        return sd_error_set(err, SD_ETOOBIG, "the bigram-draft DP at gamma = %zu: its vectors overflow", gamma);
    size_t bytes = sd_draft2dp_bytes(m, gamma);
    if (m->max_bytes && bytes > m->max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "the token DP with a bigram draft at gamma = %zu keeps %zu vectors of "
                            "V = %zu and the two models' bigrams: %.4g MB; memory budget %.4g MB", gamma,
                            horizon ? (size_t)8 : 2 * (gamma + 1) + 7, V, (double)bytes / 1e6,
                            (double)m->max_bytes / 1e6);
    size_t vecs = sd_token_dp_vectors(m, gamma);
    double *buf = calloc(vecs * V, sizeof *buf), *tv = malloc(V * sizeof *tv);
    S_ctx c;
    memset(&c, 0, sizeof c);
    int rc = !buf || !tv ? sd_error_set(err, SD_ENOMEM, "out of memory for the bigram-draft DP (%zu bytes)", bytes)
                         : S_ctx_init(&c, m, err);
    if (!rc && !horizon)
        rc = S_ctx_unions(&c, err);
    if (rc) {
        free(buf), free(tv);
        S_ctx_free(&c);
        return rc;
    }
    S_tv(&c, tv);
    size_t n = 0;
    /* a reachable context whose draft row has no mass: tv is NaN there */
    long bad = sd_token_dp_run(m, gamma, tv, S_push_min, &c, buf, &n, rejections, target_calls);
    free(buf), free(tv);
    S_ctx_free(&c);
    if (bad >= 0)
        return sd_error_set(err, SD_EDATA, "the bigram draft has no row at context '%s' (id %ld), which the target "
                            "reaches", m->words ? m->words[bad] : "?", bad);
    return SD_OK;
}
