/* sd_greedy.c — the building blocks of one iteration of greedy block
 * verification with the distribution modification (Sun et al. 2025,
 * Appendix C, Alg. 4–6, eq. 31; sd_greedy.h): the nested modified targets
 * (frames), the path ratios p_i, h_i, and the row Y is drawn from.  The
 * mathematics is written out at the top of sims/verifiers/greedy_block.c,
 * whose Monte-Carlo step runs these pieces; the exact enumeration
 * (sims/exact/greedy_exact.c) runs the same pieces, so the two share every
 * line of the modification arithmetic. */
#include <assert.h>
#include <stdlib.h>

#include "sd_greedy.h"

/* The largest scratch greedy-block allocates, in doubles: (G+1)·G ratio
 * pairs for a draft length G.  2^24 doubles = 128 MiB. */
#define S_MAX_DOUBLES ((size_t)1 << 24)

typedef sd_greedy_ratio S_ratio;

/* A, B with A/B = r, max(A, B) = 1; 0 when both joints are 0. */
static int S_scale(S_ratio r, double *A, double *B)
{
    if (r.a == 0.0 && r.b == 0.0)
        return 0;
    *A = r.a;
    *B = r.b;
    return 1;
}

/* w = max(A mb - B ms, 0); returns Σ w (0 when dead). */
static double S_weights(S_ratio r, const double *mb, const double *ms, size_t V, double *w)
{
    double A, B, s = 0.0;
    if (!S_scale(r, &A, &B)) {
        for (size_t x = 0; x < V; x++)
            w[x] = 0.0;
        return 0.0;
    }
    for (size_t x = 0; x < V; x++) {
        double d = A * mb[x] - B * ms[x];
        w[x] = d > 0.0 ? d : 0.0;
        s += w[x];
    }
    return s;
}

size_t sd_greedy_frames_drop(sd_greedy_frame *fr, size_t nf, size_t n)
{
    size_t drop = 0;
    while (drop < nf && fr[drop].e < n)
        drop++;
    for (size_t a = drop; a < nf; a++)
        fr[a - drop] = fr[a];
    return nf - drop;
}

void sd_greedy_enter(sd_greedy *st, size_t n)
{
    st->nf = sd_greedy_frames_drop(st->fr, st->nf, n);
    for (size_t a = 0; a < st->nf; a++)
        st->R[a] = st->fr[a].r;
    st->K[0] = (S_ratio){1.0, 1.0};
}

size_t sd_greedy_levels(const sd_greedy *st, const sd_chain *c, size_t i, size_t j, size_t y,
                        double *D, size_t *a0out)
{
    size_t V = st->V, a0 = 0;
    const S_ratio *Ri = st->R + i * st->cap;
    while (a0 < st->nf && st->fr[a0].e < j)
        a0++;
    const double *q = sd_chain_q(c, j, y), *p = sd_chain_p(c, j, y);
    for (size_t x = 0; x < V; x++)
        D[x] = q[x];
    for (size_t a = a0; a < st->nf; a++) {
        const double *in = D + (a - a0) * V;
        double *o = D + (a - a0 + 1) * V;
        double s = S_weights(Ri[a], in, p, V, o);
        if (s > 0.0) {
            double inv = 1.0 / s;
            for (size_t x = 0; x < V; x++)
                o[x] *= inv;
        }
    }
    *a0out = a0;
    return st->nf - a0;
}

/* Frame a's ratio r extended by token x at a position whose levels are D:
 * by the frame's own target there (level a - a0) when the frame covers
 * the position (a >= a0), and not at all in the per-token reading. */
static S_ratio S_advance(const sd_greedy *st, const double *D, size_t a0, size_t a, S_ratio r,
                         size_t x, double px)
{
    return (a >= a0 && st->mode != SD_GREEDY_TOKENWISE)
               ? sd_greedy_ratio_extend(r, D[(a - a0) * st->V + x], px)
               : r;
}

void sd_greedy_extend(sd_greedy *st, const double *D, size_t a0, size_t L, size_t i, size_t x,
                      double px)
{
    const S_ratio *from = st->R + i * st->cap;
    S_ratio *to = st->R + (i + 1) * st->cap;
    for (size_t a = 0; a < st->nf; a++)
        to[a] = S_advance(st, D, a0, a, from[a], x, px);
    st->K[i + 1] = sd_greedy_ratio_extend(st->K[i], D[L * st->V + x], px);
}

void sd_greedy_h(const sd_greedy *st, size_t i, const double *top, const double *p, double *num,
                 double *den)
{
    double A = 0.0, B = 1.0;
    S_scale(st->K[i], &A, &B); /* K[i].b > 0: drafts have p > 0 */
    double sn = 0.0, sd = 0.0; /* branch-free: the signs of d are random */
    for (size_t x = 0; x < st->V; x++) {
        double d = A * top[x] - B * p[x], e = -d;
        sn += d > 0.0 ? d : 0.0;
        sd += e > 0.0 ? e : 0.0;
    }
    *num = sn;
    *den = sd;
}

double sd_greedy_pG(const sd_greedy *st, size_t G)
{
    return st->K[G].a / st->K[G].b;
}

double sd_greedy_next_row(const sd_greedy *st, size_t tau, int bonus, const double *top,
                          const double *p, const double *q, double *w)
{
    size_t V = st->V;
    double m = bonus ? 0.0 : S_weights(st->K[tau], top, p, V, w);
    if (m > 0.0)
        return m;
    /* The bonus, or a residual of zero mass (rounding): Mb, else q. */
    for (size_t x = 0; x < V; x++)
        m += top[x];
    const double *row = m > 0.0 ? top : q;
    for (size_t x = 0; x < V; x++)
        w[x] = row[x];
    return m > 0.0 ? m : 1.0;
}

size_t sd_greedy_frames_after(const sd_greedy *st, size_t n, size_t G, size_t tau, size_t y,
                              double py, const double *D, size_t a0, const double *top,
                              sd_greedy_frame *out)
{
    const S_ratio *Rt = st->R + tau * st->cap;
    for (size_t a = 0; a < st->nf; a++) {
        out[a].e = st->fr[a].e;
        out[a].r = S_advance(st, D, a0, a, Rt[a], y, py);
    }
    size_t nf = st->nf;
    if (tau + 1 < G && st->mode != SD_GREEDY_UNMODIFIED) {
        sd_greedy_frame f = {n + G - 1, {1.0, 1.0}};
        if (st->mode == SD_GREEDY_JOINT)
            f.r = sd_greedy_ratio_extend(st->K[tau], top[y], py);
        /* The active frames started at distinct positions in n-cap+1..n. */
        assert(nf < st->cap);
        out[nf++] = f;
    }
    return nf;
}

void sd_greedy_free(sd_greedy *st)
{
    if (!st)
        return;
    free(st->fr);
    free(st->D);
    free(st->R);
    free(st->K);
    free(st->w);
    free(st);
}

int sd_greedy_fits(size_t cap, size_t V)
{
    /* (cap+1) cap ratio pairs, (cap+1) V level entries. */
    return cap <= ((size_t)1 << 16) && 2 * (cap + 1) * cap + (cap + 2) * V <= S_MAX_DOUBLES;
}

int sd_greedy_alloc(sd_greedy **out, const sd_chain *c, const sd_params *par, sd_greedy_mode mode,
                    sd_error *err)
{
    size_t cap = sd_draft_len_max(par->gamma, c->T);
    if (!sd_greedy_fits(cap, c->V))
        return sd_error_set(err, SD_ETOOBIG,
                            "greedy-block keeps (G+1)·G path ratios for a draft length G = %zu "
                            "(V = %zu); limit %zu doubles: give a smaller --gamma",
                            cap, c->V, S_MAX_DOUBLES);
    sd_greedy *st = calloc(1, sizeof *st);
    if (!st)
        return sd_error_set(err, SD_ENOMEM, "greedy-block: out of memory");
    st->mode = mode;
    st->V = c->V;
    st->cap = cap;
    st->fr = malloc(cap * sizeof *st->fr);
    st->D = malloc((cap + 1) * c->V * sizeof *st->D);
    st->R = malloc((cap + 1) * cap * sizeof *st->R);
    st->K = malloc((cap + 1) * sizeof *st->K);
    st->w = malloc(c->V * sizeof *st->w);
    if (!st->fr || !st->D || !st->R || !st->K || !st->w) {
        sd_greedy_free(st);
        return sd_error_set(err, SD_ENOMEM, "greedy-block: out of memory for G = %zu, V = %zu",
                            cap, c->V);
    }
    *out = st;
    return SD_OK;
}

