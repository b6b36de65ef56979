/* sd_trace_laws.c — laws given a logged output (sd_trace_laws.h). */
#include "sd_trace_laws.h"

#include <gsl/gsl_randist.h>
#include <stdlib.h>
#include <string.h>

#include "sd_exact_tree.h"
#include "sd_iter_laws.h"
#include "../engine/sd_paired.h"
#include "../verifiers/sd_tree.h"
#include "../../src/sd_dist.h"
#include "../../src/sd_kseq.h"

/* The view chain's row pointers (read only through sd_chain_p/q). */
static double *S_mut(const double *p)
{
    union {
        const double *c;
        double *m;
    } u = {p};
    return u.m;
}

/* --- ratio rules ------------------------------------------------------------------ */

static int S_one_plan(void **plan, const struct sd_verifier_type *vt, const sd_params *par, size_t V,
                      size_t *S, size_t *s0, sd_error *err)
{
    (void)vt, (void)par, (void)V, (void)err;
    *plan = NULL;
    *S = 1;
    *s0 = 0;
    return SD_OK;
}

size_t sd_trace_gamma_len(const void *plan, const sd_params *par, size_t T, size_t n)
{
    (void)plan;
    return sd_draft_len_at(par->gamma, T, n);
}

static int S_token_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                      sd_error *err)
{
    (void)plan, (void)i, (void)sigma, (void)err;
    go[0] = sd_paired_token_rule(real, pos->r);
    return SD_OK;
}

static int S_block_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                      sd_error *err)
{
    (void)plan, (void)i, (void)sigma, (void)err;
    go[0] = sd_paired_block_rule(real, pos->r);
    return SD_OK;
}

/* The bug of broken-block-trace: the state is read but never carried. */
static int S_block_broken_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real,
                             double *go, sd_error *err)
{
    (void)plan, (void)i, (void)sigma, (void)err;
    double s = *real;
    go[0] = sd_paired_block_rule(&s, pos->r);
    return SD_OK;
}

const sd_trace_type sd_trace_token = {.needs_rows = 0, .real_state = 0, .by_depth = 0,
                                      .plan_new = S_one_plan, .plan_free = NULL,
                                      .draft_len = sd_trace_gamma_len, .go = S_token_go};
const sd_trace_type sd_trace_block = {.needs_rows = 0, .real_state = 1, .by_depth = 0,
                                      .plan_new = S_one_plan, .plan_free = NULL,
                                      .draft_len = sd_trace_gamma_len, .go = S_block_go};
const sd_trace_type sd_trace_block_broken_s = {.needs_rows = 0, .real_state = 1, .by_depth = 0,
                                               .plan_new = S_one_plan, .plan_free = NULL,
                                               .draft_len = sd_trace_gamma_len, .go = S_block_broken_go};

/* --- position laws ---------------------------------------------------------------- */

typedef struct {
    sd_pos_law pl;
    size_t V;
    double *cont, *ok, *rej; /* [S·V], [V], [V] */
} S_pos_plan;

void sd_trace_pos_plan_free(void *plan)
{
    S_pos_plan *pp = plan;
    if (!pp)
        return;
    sd_pos_law_free(&pp->pl);
    free(pp->cont);
    free(pp);
}

int sd_trace_pos_plan_new(void **plan, sd_trace_pos_ctor ctor, const sd_params *par, size_t V, size_t *S,
                          size_t *s0, sd_error *err)
{
    sd_chain view = {.V = V, .T = 1, .draft_steps = 1, .target_steps = 1};
    S_pos_plan *pp = calloc(1, sizeof *pp);
    if (!pp)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    int rc = ctor(&view, par, &pp->pl, err);
    if (rc) {
        free(pp);
        if (rc == SD_EUSAGE && err && !err->msg[0])
            sd_error_set(err, SD_EUSAGE, "no law given the output at these parameters");
        return rc;
    }
    pp->V = V;
    size_t Sn = pp->pl.S;
    pp->cont = calloc((Sn + 2) * V, sizeof *pp->cont);
    if (!pp->cont) {
        sd_trace_pos_plan_free(pp);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    pp->ok = pp->cont + Sn * V;
    pp->rej = pp->ok + V;
    *S = Sn;
    *s0 = pp->pl.s0;
    *plan = pp;
    return SD_OK;
}

int sd_trace_pos_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                    sd_error *err)
{
    (void)real;
    S_pos_plan *pp = plan;
    size_t V = pp->V, Sn = pp->pl.S, y = pos->y;
    memset(pp->cont, 0, (Sn + 2) * V * sizeof *pp->cont);
    sd_chain view = {.V = V, .T = 1, .draft_steps = 1, .target_steps = 1,
                     .draft = S_mut(pos->p), .target = S_mut(pos->q)};
    int rc = pp->pl.fn(pp->pl.ctx, &view, 1, 0, i, sigma, pp->cont, pp->ok, pp->rej, err);
    if (rc)
        return rc;
    double qy = pos->q[y];
    for (size_t s = 0; s < Sn; s++)
        go[s] = pp->cont[s * V + y] / qy;
    if (pp->ok[y] > 0.0)
        return sd_error_set(err, SD_EDATA, "the verifier ends an iteration without a rejection before its "
                                           "last draft: no law given the output");
    return SD_OK;
}

/* --- the k-draft tree's selection, by the logged token's column ------------------- */

typedef struct {
    size_t k, V;
    int kseq;
    double *w, *b1, *b2; /* [V], [k+1], [k+1] */
} S_sel;

void sd_trace_sel_plan_free(void *plan)
{
    free(plan);
}

int sd_trace_sel_plan_new(void **plan, size_t k, int kseq, size_t V, size_t *S, size_t *s0, sd_error *err)
{
    if (k < 1 || k > ((size_t)1 << 12))
        return sd_error_set(err, SD_EUSAGE, "the law given the output takes 1..4096 drafts, not %zu", k);
    S_sel *sp = malloc(sizeof *sp + (V + 2 * (k + 1)) * sizeof(double));
    if (!sp)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    double *w = (double *)(void *)(sp + 1);
    *sp = (S_sel){k, V, kseq, w, w + V, w + V + k + 1};
    *S = k;
    *s0 = k - 1;
    *plan = sp;
    return SD_OK;
}

static void S_binom(size_t nn, double pr, double *out)
{
    for (size_t j = 0; j <= nn; j++)
        out[j] = gsl_ran_binomial_pdf((unsigned)j, pr < 0.0 ? 0.0 : (pr > 1.0 ? 1.0 : pr), (unsigned)nn);
}

/* go[agree - 1] += mass · P(agree = base + B1 + B2), B1 ~ Bin(n1, p1), B2 ~ Bin(n2, p2). */
static void S_sel_spread(S_sel *sp, double mass, size_t base, size_t n1, double p1, size_t n2, double p2, double *go)
{
    S_binom(n1, p1, sp->b1);
    S_binom(n2, p2, sp->b2);
    for (size_t j1 = 0; j1 <= n1; j1++)
        for (size_t j2 = 0; j2 <= n2; j2++) {
            size_t agree = base + j1 + j2;
            if (agree > 0)
                go[agree - 1] += mass * sp->b1[j1] * sp->b2[j2];
        }
}

int sd_trace_sel_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                    sd_error *err)
{
    (void)i, (void)real;
    S_sel *sp = plan;
    size_t V = sp->V, y = pos->y, a = sigma + 1;
    const double *p = pos->p, *q = pos->q;
    for (size_t s = 0; s < sp->k; s++)
        go[s] = 0.0;
    if (!sp->kseq) {
        double sm = 1.0;
        memcpy(sp->w, q, V * sizeof *sp->w);
        for (size_t m = 1; m <= a; m++) {
            double x = sm * (p[y] < sp->w[y] ? p[y] : sp->w[y]);
            if (x > 0.0)
                S_sel_spread(sp, x, 1, 0, 0.0, a - m, p[y], go);
            if (m == a)
                break;
            double r = sd_dist_residual(p, sp->w, V, sp->w);
            if (!(r > 0.0))
                break; /* later rounds are never reached */
            sm *= r;
        }
    } else {
        double rho, beta;
        int rc = sd_kseq_solve(p, q, V, a, &rho, &beta, err);
        if (rc)
            return rc;
        double f = 1.0 - beta, reach = 1.0;
        double acc = p[y] < q[y] / rho ? p[y] : q[y] / rho;
        double pi = f > 0.0 ? (p[y] - acc) / f : 0.0;
        for (size_t m = 1; m <= a; m++) {
            if (reach * acc > 0.0)
                S_sel_spread(sp, reach * acc, 1, m - 1, pi, a - m, p[y], go);
            reach *= f;
        }
        if (reach > 0.0) {
            double mass = sd_kseq_residual(p, q, V, a, rho, beta, sp->w);
            double r = mass > 0.0 ? sp->w[y] / mass : q[y];
            if (reach * r > 0.0)
                S_sel_spread(sp, reach * r, 0, a, pi, 0, 0.0, go);
        }
    }
    for (size_t s = 0; s < sp->k; s++)
        go[s] /= q[y];
    return SD_OK;
}

/* --- recursive rejection sampling without replacement, given the output -------------- */

double sd_trace_wor_terms(size_t V, size_t b)
{
    double t = 1.0;
    for (size_t j = 0; j + 1 < b && j < V; j++)
        t *= (double)(V - j);
    return t;
}

typedef struct {
    double v;
    size_t i;
} S_vi;

size_t sd_trace_wor_scratch(size_t V, size_t b)
{
    return (b + 1) * V * sizeof(double) + V * sizeof(S_vi);
}

typedef struct {
    size_t V, b, y;
    double *pm;  /* p with the drafted (rejected) children set to 0 */
    double *buf; /* [b][V]: the residual after m rejections at row m */
    S_vi *grp;   /* [V]: b = 3, the first children by their draft probability */
    double acc;
} S_wor;

/* m children drafted and rejected with probability W; R the residual
 * they leave, s = Σ pm the draft mass left. */
static void S_wor_rec(S_wor *w, size_t m, double W, const double *R, double s)
{
    size_t V = w->V, y = w->y;
    const double *pm = w->pm;
    double py = pm[y];
    if (!(py > 0.0) || !(s > 0.0))
        return; /* y drafted and rejected already, or never drafted */
    w->acc += W * (py / s < R[y] ? py / s : R[y]);
    if (m + 1 >= w->b)
        return;
    double *Rn = w->buf + (m + 1) * V, Z = 0.0;
    for (size_t x = 0; x < V; x++) {
        double d = pm[x] / s;
        Rn[x] = R[x] > d ? R[x] - d : 0.0;
        Z += Rn[x];
    }
    if (!(Z > 0.0))
        return; /* R = D: child m+1 is never rejected */
    for (size_t x = 0; x < V; x++)
        Rn[x] /= Z;
    if (m + 2 == w->b) { /* the last child, whatever the one rejected before it */
        double Ry = Rn[y], sum = 0.0;
        if (!(Ry > 0.0))
            return;
        for (size_t c = 0; c < V; c++) {
            double d = pm[c] / s;
            if (c == y || !(d > R[c]))
                continue;
            double dy = py / (s - pm[c]);
            sum += (d - R[c]) * (dy < Ry ? dy : Ry);
        }
        w->acc += W * sum;
        return;
    }
    for (size_t c = 0; c < V; c++) {
        double d = pm[c] / s;
        if (c == y || !(d > R[c]))
            continue;
        double pc = pm[c];
        w->pm[c] = 0.0;
        S_wor_rec(w, m + 1, W * (d - R[c]), Rn, s - pc);
        w->pm[c] = pc;
    }
}

static int S_vi_cmp(const void *a, const void *b)
{
    const S_vi *u = a, *v = b;
    return u->v < v->v ? -1 : u->v > v->v ? 1 : (u->i > v->i) - (u->i < v->i);
}

/* The third child's term of c2 (≠ y) after a first child of draft mass
 * p(c1) = s0 - s: [D_2(c2) - R_2(c2)]+ min(p(y)/(s - p(c2)), K), K = R_3(y). */
static double S_wor_t3(double pc, double rc, double s, double py, double K)
{
    double d = pc / s;
    if (!(d > rc) || !(s - pc > 0.0))
        return 0.0;
    double dy = py / (s - pc);
    return (d - rc) * (dy < K ? dy : K);
}

/* Three children.  R_2 = [q - p/s0]+ renormalised is zero at every
 * rejected first child c1 (D_1(c1) > q(c1)), so R_3 = [R_2 - p/s]+
 * renormalised, s = s0 - p(c1), whether c1 is removed from the draft row
 * or not: R_3 and the third child's sum over c2 depend on c1 only through
 * p(c1), but for the term c2 = c1, subtracted.  The tokens where R_2 = 0
 * (A0) enter R_3 not at all and the sum over c2 through p(c2) only; so
 * with A1 = supp R_2, d the distinct values of p on the rejectable first
 * children and d0 those on A0, O(V log V + d·(d0 + |A1|)). */
static int S_wor3(S_wor *w, const double *p, const double *q, double s0, sd_error *err)
{
    size_t V = w->V, y = w->y, n0 = 0, n1 = 0;
    double py = p[y], *R2 = w->buf + V, Z = 0.0;
    w->acc += py / s0 < q[y] ? py / s0 : q[y];
    if (!(py > 0.0))
        return SD_OK;
    for (size_t x = 0; x < V; x++) {
        double d = p[x] / s0;
        R2[x] = q[x] > d ? q[x] - d : 0.0;
        Z += R2[x];
    }
    if (!(Z > 0.0))
        return SD_OK;
    S_vi *g0 = w->grp, *g1 = w->grp + V; /* A0 from the front by p, A1 from the back */
    for (size_t x = 0; x < V; x++) {
        R2[x] /= Z;
        if (R2[x] > 0.0)
            *--g1 = (S_vi){R2[x], x}, n1++;
        else if (x != y && p[x] > 0.0)
            g0[n0++] = (S_vi){p[x], x};
    }
    qsort(g0, n0, sizeof *g0, S_vi_cmp);
    size_t d0 = 0, d = 0; /* the values on A0, those with a rejectable first child */
    for (size_t g = 0; g < n0;) {
        size_t h = g;
        int rej = 0;
        for (; h < n0 && g0[h].v == g0[g].v; h++)
            rej |= g0[h].v / s0 > q[g0[h].i];
        d0++;
        d += rej;
        g = h;
    }
    double cost = (double)d * (double)(d0 + n1);
    if (cost > SD_TRACE_WOR_MAX_TERMS)
        return sd_error_set(err, SD_ETOOBIG, "recursive rejection sampling without replacement with 3 children: "
                                             "the law given the output (token %zu) sums over %zu distinct draft "
                                             "probabilities of a rejectable first child times %zu second children "
                                             "(%zu distinct draft probabilities where q <= p, %zu tokens where q > p), "
                                             "%.3g terms; the limit is %.0f (rows with few distinct draft "
                                             "probabilities, such as an n-gram model's, fit)", y, d, d0 + n1, d0, n1,
                            cost, SD_TRACE_WOR_MAX_TERMS);
    for (size_t g = 0; g < n0;) {
        size_t h = g;
        double W = 0.0, v = g0[g].v;
        for (; h < n0 && g0[h].v == v; h++) {
            double r = v / s0 - q[g0[h].i];
            W += r > 0.0 ? r : 0.0;
        }
        double s = s0 - v;
        if (!(W > 0.0) || !(s > 0.0)) {
            g = h;
            continue;
        }
        double dy = py / s, Z3 = 0.0, Ry = 0.0;
        w->acc += W * (dy < R2[y] ? dy : R2[y]); /* child 2 accepts y */
        for (size_t j = 0; j < n1; j++) {
            double r = g1[j].v - p[g1[j].i] / s;
            if (r > 0.0) {
                Z3 += r;
                if (g1[j].i == y)
                    Ry = r;
            }
        }
        double K = Z3 > 0.0 ? Ry / Z3 : 0.0;
        if (K > 0.0) { /* child 3 accepts y */
            double full = 0.0;
            for (size_t j = 0; j < n0;) {
                size_t k = j;
                while (k < n0 && g0[k].v == g0[j].v)
                    k++;
                full += (double)(k - j) * S_wor_t3(g0[j].v, 0.0, s, py, K);
                j = k;
            }
            for (size_t j = 0; j < n1; j++)
                if (g1[j].i != y)
                    full += S_wor_t3(p[g1[j].i], g1[j].v, s, py, K);
            w->acc += W * (full - S_wor_t3(v, 0.0, s, py, K));
        }
        g = h;
    }
    return SD_OK;
}

int sd_trace_wor_accept(const double *p, const double *q, size_t V, size_t b, size_t y, void *scratch,
                        double *acc, sd_error *err)
{
    double *sd = scratch;
    S_wor w = {.V = V, .b = b, .y = y, .pm = sd, .buf = sd + V, .grp = (S_vi *)(void *)(sd + (b + 1) * V),
               .acc = 0.0};
    double s = 0.0;
    for (size_t x = 0; x < V; x++)
        s += p[x];
    *acc = 0.0;
    if (b == 3 && s > 0.0) {
        int rc = S_wor3(&w, p, q, s, err);
        *acc = w.acc;
        return rc;
    }
    memcpy(w.pm, p, V * sizeof *w.pm);
    memcpy(w.buf, q, V * sizeof *w.buf);
    if (b > 0)
        S_wor_rec(&w, 0, 1.0, w.buf, s);
    *acc = w.acc;
    return SD_OK;
}

void sd_trace_wor_estimate(const double *p, const double *q, size_t V, size_t b, size_t y, sd_stream *rng,
                           void *scratch, unsigned bugs, double *acc)
{
    double *pm = scratch, *R = pm + V, *e = R + V; /* p without the rejected children; R_j; [D_j - R_j]+ */
    memcpy(pm, p, V * sizeof *pm);
    memcpy(R, q, V * sizeof *R);
    double w = 1.0, a = 0.0;
    for (size_t j = 1; j <= b; j++) {
        double s = 0.0;
        for (size_t x = 0; x < V; x++)
            s += pm[x];
        if (!(s > 0.0) || !(pm[y] > 0.0))
            break; /* nothing left to draft, or y drafted and rejected already */
        double dy = pm[y] / s;
        a += w * (dy < R[y] ? dy : R[y]);
        if (j == b)
            break;
        double rho = 0.0, Z = 0.0;
        for (size_t x = 0; x < V; x++) {
            double d = pm[x] / s;
            e[x] = d > R[x] ? d - R[x] : 0.0;
            R[x] = R[x] > d ? R[x] - d : 0.0;
            rho += e[x];
            Z += R[x];
        }
        if (!(rho > 0.0) || !(Z > 0.0))
            break; /* R_j = D_j: child j is never rejected */
        double u = sd_stream_uniform(rng) * rho, cum = 0.0;
        size_t c = V;
        for (size_t x = 0; x < V; x++)
            if (e[x] > 0.0) {
                c = x;
                cum += e[x];
                if (u < cum)
                    break;
            }
        for (size_t x = 0; x < V; x++)
            R[x] /= Z;
        if (!(bugs & SD_TRACE_WOR_BUG_NO_WEIGHT))
            w *= rho;
        pm[c] = 0.0;
    }
    *acc = a;
}

/* --- top-down trees ---------------------------------------------------------------- */

typedef struct {
    const sd_tree_kind *k;
    sd_params par; /* the shape and drafting rule */
    sd_tree_draw draw;
    size_t V;
    int closed;                       /* i.i.d. children of a correct kind: the closed form */
    int wor;                          /* without replacement, a correct kind: sd_trace_wor_accept */
    unsigned char est[SD_TREE_MAX_DEPTH]; /* wor: depth i's exact law refused, estimated */
    void *ws;                         /* its scratch */
    void *sel[SD_TREE_MAX_DEPTH];     /* closed form: RRS with b_{i+1} drafts (S_sel) */
    sd_tree *tr[SD_TREE_MAX_DEPTH];   /* enumeration: one-level trees of b_{i+1} children */
    double *w;                        /* [(b+1)·V] enumeration scratch, or [(b_max+2)·V] closed */
    size_t y;
    double acc;                       /* Σ P(children) Σ_{j: c_j = y} pi(j) */
    const sd_chain *view;
} S_tplan;

static void S_tree_free(void *plan)
{
    S_tplan *tp = plan;
    if (!tp)
        return;
    for (size_t i = 0; i < SD_TREE_MAX_DEPTH; i++) {
        sd_trace_sel_plan_free(tp->sel[i]);
        sd_tree_free(tp->tr[i]);
    }
    free(tp->w);
    free(tp->ws);
    free(tp);
}

static int S_tree_plan(void **plan, const struct sd_verifier_type *vt, const sd_params *par, size_t V,
                       size_t *S, size_t *s0, sd_error *err)
{
    const sd_tree_kind *k = vt->tree;
    if (!k)
        return sd_error_set(err, SD_EUSAGE, "%s is not a tree verifier", vt->name);
    if (k->rule != SD_TREE_TOPDOWN)
        return sd_error_set(err, SD_EUSAGE, "%s accepts a path by the leaves below it: its law given the "
                                            "output needs rows off the logged path", vt->name);
    S_tplan *tp = calloc(1, sizeof *tp);
    if (!tp)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    sd_params buf;
    tp->par = *sd_tree_params(k, par, &buf);
    tp->k = k;
    tp->V = V;
    tp->draw = sd_tree_draw_of(&tp->par);
    int rc = sd_tree_check_draw(k, tp->draw, vt->name, err);
    if (rc) {
        free(tp);
        return rc;
    }
    tp->closed = tp->draw == SD_DRAW_IID && k->bugs == 0;
    tp->wor = tp->draw == SD_DRAW_WOR && k->bugs == 0;
    size_t bmax = 1;
    for (size_t i = 0; i < tp->par.tree_depth; i++)
        bmax = tp->par.tree[i] > bmax ? tp->par.tree[i] : bmax;
    if (tp->wor) { /* the exact sum's scratch where it runs, else the estimate's 3V doubles */
        size_t bytes = 3 * V * sizeof(double);
        for (size_t i = 0; i < tp->par.tree_depth; i++) {
            size_t b = tp->par.tree[i];
            tp->est[i] = b > 3 && sd_trace_wor_terms(V, b) > SD_TRACE_WOR_MAX_TERMS;
            size_t need = tp->est[i] ? 0 : sd_trace_wor_scratch(V, b);
            bytes = need > bytes ? need : bytes;
        }
        tp->ws = malloc(bytes);
    } else /* the enumeration's children laws (V^b within its limit), or the closed form's b sums */
        tp->w = calloc(tp->closed ? bmax + 2 : (bmax + 2) * V, sizeof *tp->w);
    if (tp->wor ? !tp->ws : !tp->w) {
        S_tree_free(tp);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < tp->par.tree_depth; i++) {
        size_t b = tp->par.tree[i];
        if (tp->closed) {
            size_t Sb, s0b;
            rc = sd_trace_sel_plan_new(&tp->sel[i], b, 0, V, &Sb, &s0b, err);
        } else if (!tp->wor) {
            sd_params one = tp->par;
            one.tree[0] = b;
            one.tree_depth = 1;
            sd_tree_draw draw = tp->draw;
            double count = sd_exact_tree_count(V, &one, draw);
            if (count > SD_EXACT_TREE_MAX_TREES) {
                S_tree_free(tp);
                return sd_error_set(err, SD_ETOOBIG, "%s with --draw %s: the law given the output enumerates "
                                                     "%.3g drafted children per position (V = %zu, %zu children); "
                                                     "the limit is %.0f", vt->name, sd_tree_draw_name(draw),
                                    count, V, b, SD_EXACT_TREE_MAX_TREES);
            }
            rc = sd_tree_new(&tp->tr[i], V, &one, err);
        }
        if (rc) {
            S_tree_free(tp);
            return rc;
        }
    }
    *S = 1;
    *s0 = 0;
    *plan = tp;
    return SD_OK;
}

static size_t S_tree_len(const void *plan, const sd_params *par, size_t T, size_t n)
{
    (void)par;
    const S_tplan *tp = plan;
    size_t rest = T - n + 1, d = tp->par.tree_depth;
    return d < rest ? d : rest;
}

/* Drafts child u onwards of the one-level tree in every way. */
static void S_tree_visit(S_tplan *tp, sd_tree *tr, size_t u, double prob)
{
    size_t V = tp->V;
    if (u == tr->nodes) {
        sd_tree_outcome(tr, tp->view, tp->k, tp->draw);
        for (size_t v = 1; v < tr->nodes; v++)
            if (tr->tok[v] == tp->y)
                tp->acc += prob * tr->pi[v];
        return;
    }
    double *w = tp->w + u * V;
    if (sd_tree_draft_law(tr, tp->view, u, tp->draw, w) <= 0.0) {
        tr->tok[u] = SD_TREE_NONE;
        S_tree_visit(tp, tr, u + 1, prob);
        return;
    }
    for (size_t x = 0; x < V; x++)
        if (w[x] > 0.0) {
            tr->tok[u] = x;
            S_tree_visit(tp, tr, u + 1, prob * w[x]);
        }
}

static int S_tree_go(void *plan, const sd_trace_pos *pos, size_t i, size_t sigma, double *real, double *go,
                     sd_error *err)
{
    (void)sigma, (void)real;
    S_tplan *tp = plan;
    size_t V = tp->V, y = pos->y;
    sd_chain view = {.V = V, .T = 1, .draft_steps = 1, .target_steps = 1,
                     .draft = S_mut(pos->p), .target = S_mut(pos->q)};
    if (tp->closed) { /* all b children survive at first; any accepted one goes on */
        size_t b = tp->par.tree[i];
        double *g = tp->w;
        int rc = sd_trace_sel_go(tp->sel[i], pos, 0, b - 1, real, g, err);
        if (rc)
            return rc;
        double a = 0.0;
        for (size_t s = 0; s < b; s++)
            a += g[s];
        go[0] = a;
        return SD_OK;
    }
    if (tp->wor) {
        double acc;
        size_t b = tp->par.tree[i];
        int rc = SD_ETOOBIG;
        if (!tp->est[i] && !pos->estimate)
            rc = sd_trace_wor_accept(pos->p, pos->q, V, b, y, tp->ws, &acc, err);
        if (rc == SD_ETOOBIG) { /* refused (b = 3 on rows of many distinct values, b >= 4 at large V) */
            if (!pos->rng)
                return sd_error_set(err, SD_EINTERNAL, "no stream to estimate the law given the output with "
                                                       "%zu children drafted without replacement", b);
            sd_trace_wor_estimate(pos->p, pos->q, V, b, y, pos->rng, tp->ws, 0, &acc);
            if (pos->estimated)
                ++*pos->estimated;
            rc = SD_OK;
        }
        go[0] = acc / pos->q[y];
        return rc;
    }
    sd_tree *tr = tp->tr[i];
    sd_tree_cut(tr, 1, 1, 0);
    tp->view = &view;
    tp->y = y;
    tp->acc = 0.0;
    S_tree_visit(tp, tr, 1, 1.0);
    go[0] = tp->acc / pos->q[y];
    return SD_OK;
}

const sd_trace_type sd_trace_tree = {.needs_rows = 1, .real_state = 0, .by_depth = 1,
                                     .plan_new = S_tree_plan, .plan_free = S_tree_free,
                                     .draft_len = S_tree_len, .go = S_tree_go};
