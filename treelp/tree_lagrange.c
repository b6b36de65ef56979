/* tree_lagrange.c — an upper bound on tree-valid without enumerating the
 * drafted trees: the Lagrangian dual of its aggregated LP
 * (treelp/tree_valid.c), minimised by a trust-region cutting-plane method.
 *
 * The aggregated LP (maximise Σ_S Σ_{u ∈ S∪root} |u| f(S, u)):
 *   Σ_{u ∈ S ∪ {root}} f(S, u) = P(S)                       every path set S,
 *   Σ_y q(u y) r(u y) = Σ_S f(S, u)                         every node u, q(u) > 0,
 *   Σ_{l=0}^{D} r(o^{l+1}) = 1                              every o ∈ V^{D+1}, q(o) > 0,
 * f, r >= 0.  Multiply the node rows by λ_u (free) and move them into the
 * objective; what remains splits:
 *   L(λ) = Σ_S P(S) max_{u ∈ S∪root, q(u)>0} (|u| - λ_u)
 *        + max { Σ_z λ_{parent(z)} q(z) r(z) : r >= 0, every root-to-leaf
 *                 path of the prefix tree (levels 1..D+1) sums to 1 }.
 * Weak duality: for a feasible (f, r) the added term is 0, so L(λ) >=
 * tree-valid for every λ; LP duality: min_λ L(λ) = tree-valid.  L is
 * convex and piecewise linear.
 *
 * The first term is E_T[max_{u ∈ T} h(u)], h(u) = |u| - λ_u, over the
 * drafted tree T (the max over a tree's nodes equals the max over its path
 * set).  Order the nodes by (h, index): ranks are distinct, so
 * P(max = the node of rank k) = F(k) - F(k-1), F(k) = P(every node of T
 * has rank <= k), and F is a recursion over the prefix tree:
 *   F_u(k) = 1{rank(u) <= k} · E_C[Π_{children c of u} F_c(k)];
 * the children's subtrees are drafted independently given their tokens,
 * so with i.i.d. drafts E_C[Π] = (Σ_x p(x|u) F_{ux}(k))^b, and with
 * drafts without replacement or top-k it is Σ_C P(C) Π_{x∈C} F_{ux}(k)
 * over the children's token sets C (one node's children enumerated once).
 * The probability that node u is the argmax is the f-part of the
 * subgradient, -P(argmax = u).
 *
 * The second term: the path-sum constraint matrix has the consecutive-ones
 * property in the columns (a node covers an interval of the leaves in
 * depth-first order), so the optimum is at a cut of the prefix tree (every
 * leaf path meets it once) and
 *   G(z) = max(c(z), Σ_y G(z y)),  G(z) = c(z) at depth D+1,
 * c(z) = λ_{parent(z)} q(z), the term Σ_x G(x); its subgradient in λ_u is
 * Σ_y q(u y) 1{u y in the chosen cut}.
 *
 * L is invariant under λ -> λ + s·1 (the max drops by s, a cut's q-mass is
 * 1), so λ_root = 0.  The minimisation: Kelley's cutting planes with an
 * ℓ∞ trust region around the best point (Linderoth & Wright 2003), the
 * master on GLPK's dual simplex, warm started; with 256 or more
 * multipliers a first half of the time goes to subgradient steps (Polyak's
 * step to a variable target).  Every evaluated L(λ) is a certified bound.
 * The method stops when the model predicts no decrease above 1e-9 with
 * its minimiser strictly inside the trust region (converged: the model's
 * global minimum, a lower bound on min L, is within 1e-9 of L(center)),
 * when no decrease is predicted within the widest region (flat), at the
 * time limit, or after max_iter evaluations.  The master's dual then gives
 * a primal point of the LP (the comment at its end). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../lp/sd_lp.h"
#include "sd_treelp.h"

/* Largest (internal nodes) x (nodes) doubles of the recursion's tables. */
#define S_MAX_TABLE 2.5e7
/* Largest Σ over internal nodes of their children sequences (wor, topk). */
#define S_MAX_SEQ 2e6
/* The subgradient phase: with at least S_SUB_MIN_DIM multipliers, for a
 * share S_SUB_SHARE of the time; the target's distance halves after
 * S_SUBWAIT steps without a decrease. */
#define S_SUB_MIN_DIM 256
/* The cutting planes: the trust region halves after S_NNULL null steps in
 * a row and is at most 4(D+1) wide; at most S_MAX_ROWS·N + 200 cuts. */
#define S_NNULL 10
#define S_MAX_ROWS 4
#define S_DELTA_MAX(g) (4.0 * (double)((g)->D + 1))
#define S_SUB_SHARE 0.5
#define S_SUBWAIT 300

struct sd_lp_tree_lagrange {
    const sd_chain *c;
    size_t V, D, draw;
    size_t b[SD_TREE_MAX_DEPTH];
    size_t noff[SD_TREE_MAX_DEPTH + 3]; /* node u ∈ V^l at noff[l] + u; levels 0..D+1 */
    size_t N, Nint;                     /* nodes to depth D; internal ones (depth < D) */
    double **Q;                         /* target prefix laws, levels 0..D+1 */
    double *p;                          /* [Nint][V]: the draft law of u's children */
    /* wor, topk: u's children token sets (bit masks) and their probabilities */
    size_t *soff;                       /* [Nint+1] */
    uint64_t *smask;
    double *sprob;
    /* work */
    size_t *order;                      /* [N] nodes by (h, index); inactive ones first */
    long *rank;                         /* [N]; -1: inactive (q(u) = 0) */
    double *h, *F, *mix, *G, *gup;      /* F: [Nint][N] */
    size_t nact;
};

static _Thread_local const double *S_sort_h;
static int S_cmp_h(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    double ha = S_sort_h[a], hb = S_sort_h[b];
    if (ha != hb)
        return ha < hb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* --- one node's children sets (wor, topk) ------------------------------------ */

typedef struct S_seq {
    const sd_chain *c;
    sd_tree *tr;
    sd_tree_draw draw;
    double *w;
    uint64_t *mask;
    double *prob;
    size_t n, cap;
    int oom;
} S_seq;

static void S_seq_visit(S_seq *e, size_t v, double prob)
{
    sd_tree *tr = e->tr;
    size_t V = tr->V;
    if (e->oom)
        return;
    if (v == tr->nodes) {
        uint64_t m = 0;
        for (size_t u = 1; u < tr->nodes; u++)
            if (tr->tok[u] != SD_TREE_NONE)
                m |= (uint64_t)1 << tr->tok[u];
        for (size_t i = 0; i < e->n; i++)
            if (e->mask[i] == m) {
                e->prob[i] += prob;
                return;
            }
        if (e->n == e->cap) {
            size_t cap = e->cap ? 2 * e->cap : 64;
            uint64_t *mk = realloc(e->mask, cap * sizeof *mk);
            if (mk)
                e->mask = mk;
            double *pr = mk ? realloc(e->prob, cap * sizeof *pr) : NULL;
            if (pr)
                e->prob = pr;
            if (!mk || !pr) {
                e->oom = 1;
                return;
            }
            e->cap = cap;
        }
        e->mask[e->n] = m;
        e->prob[e->n++] = prob;
        return;
    }
    double *w = e->w + v * V;
    if (sd_tree_draft_law(tr, e->c, v, e->draw, w) <= 0.0) {
        tr->tok[v] = SD_TREE_NONE;
        S_seq_visit(e, v + 1, prob);
        return;
    }
    for (size_t x = 0; x < V; x++)
        if (w[x] > 0.0) {
            tr->tok[v] = x;
            S_seq_visit(e, v + 1, prob * w[x]);
        }
}

static double S_seqs(size_t V, const sd_params *par, sd_tree_draw draw)
{
    double n = 0.0, nodes = 1.0;
    for (size_t l = 0; l < par->tree_depth; l++) {
        double f = 1.0;
        for (size_t j = 0; j < par->tree[l]; j++)
            f *= draw == SD_DRAW_TOPK ? 1.0 : (double)(j < V ? V - j : 1);
        n += nodes * f;
        nodes *= (double)V;
    }
    return n;
}

/* --- set-up ------------------------------------------------------------------ */

void sd_lp_tree_lagrange_free(sd_lp_tree_lagrange *g)
{
    if (!g)
        return;
    free(g->Q);
    free(g->p);
    free(g->soff);
    free(g->smask);
    free(g->sprob);
    free(g->order);
    free(g->rank);
    free(g->h);
    free(g->F);
    free(g->mix);
    free(g->G);
    free(g->gup);
    free(g);
}

size_t sd_lp_tree_lagrange_dim(const sd_lp_tree_lagrange *g)
{
    return g->N;
}

int sd_lp_tree_lagrange_new(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                            sd_lp_tree_lagrange **out, sd_error *err)
{
    *out = NULL;
    int rc = sd_lp_tree_context("tree-valid", c, t, a, par, err);
    if (rc)
        return rc;
    size_t V = c->V, D = par->tree_depth;
    if (draw != SD_DRAW_IID && draw != SD_DRAW_WOR && draw != SD_DRAW_TOPK)
        return sd_error_set(err, SD_EUSAGE, "the Lagrangian bound knows the drafting rules iid, wor and topk");
    if (draw != SD_DRAW_IID && V > 64)
        return sd_error_set(err, SD_ETOOBIG, "the Lagrangian bound with --draw %s needs V <= 64",
                            sd_tree_draw_name((sd_tree_draw)draw));
    double N = 0.0, Nint = 0.0, leaves = 1.0;
    for (size_t l = 0; l <= D; l++) {
        N += leaves;
        if (l < D)
            Nint += leaves;
        leaves *= (double)V;
    }
    if (Nint * N > S_MAX_TABLE || leaves * (double)(D + 2) > S_MAX_TABLE)
        return sd_error_set(err, SD_ETOOBIG, "the Lagrangian bound would need %.3g table entries; the limit is %.3g",
                            fmax(Nint * N, leaves * (double)(D + 2)), S_MAX_TABLE);
    if (draw != SD_DRAW_IID && S_seqs(V, par, (sd_tree_draw)draw) > S_MAX_SEQ)
        return sd_error_set(err, SD_ETOOBIG, "the Lagrangian bound would enumerate %.3g children sequences; the "
                            "limit is %.3g", S_seqs(V, par, (sd_tree_draw)draw), S_MAX_SEQ);
    sd_lp_tree_lagrange *g = calloc(1, sizeof *g);
    if (!g)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
    g->c = c;
    g->V = V;
    g->D = D;
    g->draw = (size_t)draw;
    for (size_t l = 0; l < D; l++)
        g->b[l] = par->tree[l];
    g->noff[0] = 0;
    for (size_t l = 0; l <= D + 1; l++)
        g->noff[l + 1] = g->noff[l] + sd_lp_pow(V, l);
    g->N = g->noff[D + 1];
    g->Nint = g->noff[D];
    if ((rc = sd_lp_prefix_laws(c, t, a, D + 1, 1, &g->Q, err))) {
        sd_lp_tree_lagrange_free(g);
        return rc;
    }
    g->p = malloc(g->Nint * V * sizeof *g->p);
    g->order = malloc(g->N * sizeof *g->order);
    g->rank = malloc(g->N * sizeof *g->rank);
    g->h = malloc(g->N * sizeof *g->h);
    g->F = malloc(g->Nint * g->N * sizeof *g->F);
    g->mix = malloc(g->N * sizeof *g->mix);
    g->G = malloc((g->noff[D + 2] + 1) * sizeof *g->G);
    g->gup = malloc(g->N * sizeof *g->gup);
    if (!g->p || !g->order || !g->rank || !g->h || !g->F || !g->mix || !g->G || !g->gup) {
        sd_lp_tree_lagrange_free(g);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
    }
    for (size_t l = 0; l < D; l++)
        for (size_t u = 0; u < sd_lp_pow(V, l); u++)
            memcpy(g->p + (g->noff[l] + u) * V, sd_chain_p(c, t + l, l == 0 ? a : u % V), V * sizeof *g->p);
    if (draw != SD_DRAW_IID) {
        g->soff = calloc(g->Nint + 1, sizeof *g->soff);
        S_seq e = {.c = c, .draw = (sd_tree_draw)draw};
        for (size_t l = 0; l < D && !rc && g->soff; l++)
            for (size_t u = 0; u < sd_lp_pow(V, l) && !rc; u++) {
                sd_params p1 = *par;
                p1.tree_depth = 1;
                p1.tree[0] = par->tree[l];
                size_t i = g->noff[l] + u, n0 = e.n;
                if ((rc = sd_tree_new(&e.tr, V, &p1, err)))
                    break;
                sd_tree_cut(e.tr, 1, t + l, l == 0 ? a : u % V);
                e.w = malloc(e.tr->nodes * V * sizeof *e.w);
                /* the sets of node i are appended after n0; S_seq_visit merges
                 * within the whole list, so keep a private list per node */
                S_seq f = {.c = c, .draw = (sd_tree_draw)draw, .tr = e.tr, .w = e.w};
                if (e.w)
                    S_seq_visit(&f, 1, 1.0);
                if (!e.w || f.oom)
                    rc = sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
                if (!rc && e.n + f.n > e.cap) {
                    size_t cap = 2 * (e.n + f.n);
                    uint64_t *mk = realloc(e.mask, cap * sizeof *mk);
                    if (mk)
                        e.mask = mk;
                    double *pr = mk ? realloc(e.prob, cap * sizeof *pr) : NULL;
                    if (pr)
                        e.prob = pr;
                    if (!mk || !pr)
                        rc = sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
                    else
                        e.cap = cap;
                }
                if (!rc) {
                    memcpy(e.mask + n0, f.mask, f.n * sizeof *f.mask);
                    memcpy(e.prob + n0, f.prob, f.n * sizeof *f.prob);
                    e.n = n0 + f.n;
                    g->soff[i + 1] = e.n;
                }
                free(f.mask);
                free(f.prob);
                free(e.w);
                sd_tree_free(e.tr);
                e.tr = NULL;
            }
        g->smask = e.mask;
        g->sprob = e.prob;
        if (!rc && !g->soff)
            rc = sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
        if (rc) {
            sd_lp_tree_lagrange_free(g);
            return rc;
        }
    }
    *out = g;
    return SD_OK;
}

/* --- L(λ) and a subgradient --------------------------------------------------- */

double sd_lp_tree_lagrange_eval(sd_lp_tree_lagrange *g, const double *lam, double *grad)
{
    size_t V = g->V, D = g->D, N = g->N;
    /* ranks by (h, index); inactive nodes (q(u) = 0) never count */
    size_t na = 0;
    for (size_t l = 0; l <= D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            g->h[i] = (double)l - lam[i];
            if (g->Q[l][u] > 0.0)
                g->order[na++] = i;
            g->rank[i] = -1;
        }
    S_sort_h = g->h;
    qsort(g->order, na, sizeof *g->order, S_cmp_h);
    for (size_t k = 0; k < na; k++)
        g->rank[g->order[k]] = (long)k;
    g->nact = na;
    /* F_u(k), k < na, deepest internal level first */
    for (size_t l = D; l-- > 0;) {
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            double *F = g->F + i * N;
            const double *p = g->p + i * V;
            long ri = g->rank[i];
            if (ri < 0) { /* never the max, nor anything below it */
                for (size_t k = 0; k < na; k++)
                    F[k] = 1.0;
                continue;
            }
            for (size_t k = 0; k < (size_t)ri; k++)
                F[k] = 0.0;
            if (g->draw == SD_DRAW_IID) {
                for (size_t k = (size_t)ri; k < na; k++)
                    g->mix[k] = 0.0;
                for (size_t x = 0; x < V; x++) {
                    if (!(p[x] > 0.0))
                        continue;
                    size_t ch = g->noff[l + 1] + u * V + x;
                    if (l + 1 == D) {
                        long rc = g->rank[ch];
                        for (size_t k = (size_t)ri; k < na; k++)
                            g->mix[k] += (long)k >= rc ? p[x] : 0.0;
                    } else {
                        const double *Fc = g->F + ch * N;
                        for (size_t k = (size_t)ri; k < na; k++)
                            g->mix[k] += p[x] * Fc[k];
                    }
                }
                double b = (double)g->b[l];
                for (size_t k = (size_t)ri; k < na; k++)
                    F[k] = g->b[l] == 1 ? g->mix[k] : pow(g->mix[k], b);
            } else {
                for (size_t k = (size_t)ri; k < na; k++)
                    F[k] = 0.0;
                for (size_t s = g->soff[i]; s < g->soff[i + 1]; s++) {
                    for (size_t k = (size_t)ri; k < na; k++)
                        g->mix[k] = g->sprob[s];
                    for (size_t x = 0; x < V; x++) {
                        if (!((g->smask[s] >> x) & 1u))
                            continue;
                        size_t ch = g->noff[l + 1] + u * V + x;
                        if (l + 1 == D) {
                            long rc = g->rank[ch];
                            for (size_t k = (size_t)ri; k < na && (long)k < rc; k++)
                                g->mix[k] = 0.0;
                        } else {
                            const double *Fc = g->F + ch * N;
                            for (size_t k = (size_t)ri; k < na; k++)
                                g->mix[k] *= Fc[k];
                        }
                    }
                    for (size_t k = (size_t)ri; k < na; k++)
                        F[k] += g->mix[k];
                }
            }
        }
    }
    /* E[max h] and P(argmax = u); D = 0 does not occur (depth >= 1) */
    double val = 0.0, prev = 0.0;
    if (grad)
        memset(grad, 0, N * sizeof *grad);
    for (size_t k = 0; k < na; k++) {
        double Fk = g->F[k], pk = Fk - prev; /* the root is node 0 */
        prev = Fk;
        if (pk != 0.0) {
            val += pk * g->h[g->order[k]];
            if (grad)
                grad[g->order[k]] -= pk;
        }
    }
    /* the cut term: G over levels D+1 .. 1, G[noff[l] + z] */
    double *G = g->G;
    for (size_t l = D + 1; l >= 1; l--) {
        size_t n = g->noff[l + 1] - g->noff[l];
        for (size_t z = 0; z < n; z++) {
            double qz = g->Q[l][z];
            if (!(qz > 0.0)) {
                G[g->noff[l] + z] = 0.0;
                continue;
            }
            double cz = lam[g->noff[l - 1] + z / V] * qz;
            if (l == D + 1) {
                G[g->noff[l] + z] = cz;
            } else {
                double s = 0.0;
                for (size_t y = 0; y < V; y++)
                    s += G[g->noff[l + 1] + z * V + y];
                G[g->noff[l] + z] = fmax(cz, s);
            }
        }
    }
    double cut = 0.0;
    for (size_t x = 0; x < V; x++)
        cut += G[g->noff[1] + x];
    val += cut;
    if (grad) {
        /* the chosen cut, from the top: z is in it when c(z) >= Σ_y G(z y);
         * gup marks the nodes (levels 1..D) whose subtree is still open */
        for (size_t l = 1; l <= D + 1; l++) {
            size_t n = g->noff[l + 1] - g->noff[l];
            for (size_t z = 0; z < n; z++) {
                double qz = g->Q[l][z];
                int open = l == 1 || (g->gup[g->noff[l - 1] + z / V] > 0.0);
                if (!(qz > 0.0) || !open) {
                    if (l <= D)
                        g->gup[g->noff[l] + z] = 0.0;
                    continue;
                }
                size_t par = g->noff[l - 1] + z / V;
                double cz = lam[par] * qz, s = 0.0;
                if (l <= D)
                    for (size_t y = 0; y < V; y++)
                        s += G[g->noff[l + 1] + z * V + y];
                int take = l == D + 1 || cz >= s;
                if (take)
                    grad[par] += qz;
                if (l <= D)
                    g->gup[g->noff[l] + z] = take ? 0.0 : 1.0;
            }
        }
        grad[0] = 0.0; /* λ_root = 0 */
    }
    return val;
}

/* --- the minimisation --------------------------------------------------------- */

/* Adds the cut θ >= L(λ_k) + g·(λ - λ_k) of the point x = λ_k; past
 * S_MAX_ROWS·N + 200 cuts, drops the slack ones (basic rows). */
static void S_cut(glp_prob *lp, const int *act, size_t N, double Lk, const double *grad, const double *x, int *ind,
                  double *val)
{
    int nz = 0;
    double rhs = Lk;
    ind[++nz] = 1;
    val[nz] = 1.0;
    for (size_t i = 0; i < N; i++)
        if (act[i] && grad[i] != 0.0) {
            ind[++nz] = act[i];
            val[nz] = -grad[i];
            rhs -= grad[i] * x[i];
        }
    int row = glp_add_rows(lp, 1);
    glp_set_mat_row(lp, row, nz, ind, val);
    glp_set_row_bnds(lp, row, GLP_LO, rhs, 0.0);
    int nr = glp_get_num_rows(lp);
    if ((size_t)nr > S_MAX_ROWS * N + 200) {
        int nd = 0;
        int *del = malloc(((size_t)nr + 1) * sizeof *del);
        if (del) {
            for (int r = 1; r < nr; r++)
                if (glp_get_row_stat(lp, r) == GLP_BS)
                    del[++nd] = r;
            if (nd)
                glp_del_rows(lp, nd, del);
            free(del);
        }
    }
}

int sd_lp_tree_lagrange_min(sd_lp_tree_lagrange *g, double *lam, double seconds, size_t max_iter, double lower,
                            sd_lp_tree_lagrange_info *info, sd_error *err)
{
    size_t N = g->N;
    double t0 = sd_lp_now();
    memset(info, 0, sizeof *info);
    double *grad = malloc(N * sizeof *grad), *cand = malloc(N * sizeof *cand);
    int *ind = malloc((N + 2) * sizeof *ind);
    double *val = malloc((N + 2) * sizeof *val);
    int *act = malloc(N * sizeof *act); /* column of λ_i, 0 when fixed */
    if (!grad || !cand || !ind || !val || !act) {
        free(grad);
        free(cand);
        free(ind);
        free(val);
        free(act);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
    }
    lam[0] = 0.0;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, 1, GLP_FR, 0.0, 0.0);
    glp_set_obj_coef(lp, 1, 1.0);
    int ncol = 1;
    for (size_t i = 0; i < N; i++) {
        act[i] = 0;
        size_t l = 0, u = i;
        while (u >= g->noff[l + 1] - g->noff[l]) {
            u -= g->noff[l + 1] - g->noff[l];
            l++;
        }
        if (i > 0 && g->Q[l][u] > 0.0)
            act[i] = ++ncol;
        else if (i > 0)
            lam[i] = 0.0;
    }
    glp_add_cols(lp, ncol - 1);
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.meth = GLP_DUALP;
    /* a first phase of subgradient steps with Polyak's step to a variable
     * target (Brännlund 1995): cheap steps that take λ near the minimum
     * before the cutting planes polish it */
    double sub = N >= S_SUB_MIN_DIM ? S_SUB_SHARE : 0.0;
    size_t nsub = 0;
    if (sub > 0.0) {
        double Lb = sd_lp_tree_lagrange_eval(g, lam, grad), Lx = Lb;
        double lo = isfinite(lower) ? lower : 0.0, gapt = 0.5 * fmax(Lb - lo, 1e-6);
        size_t since = 0;
        memcpy(cand, lam, N * sizeof *cand);
        while (sd_lp_now() - t0 < sub * seconds && nsub < max_iter) {
            double gg = 0.0;
            for (size_t i = 0; i < N; i++)
                gg += grad[i] * grad[i];
            if (!(gg > 0.0))
                break;
            double step = (Lx - (Lb - gapt)) / gg;
            for (size_t i = 0; i < N; i++)
                cand[i] -= step * grad[i];
            Lx = sd_lp_tree_lagrange_eval(g, cand, grad);
            nsub++;
            if (Lx < Lb - 1e-12) {
                if (Lx < Lb - 0.5 * gapt) {
                    since = 0;
                    gapt *= 1.5;
                }
                Lb = Lx;
                memcpy(lam, cand, N * sizeof *lam);
            }
            if (++since >= S_SUBWAIT) {
                gapt *= 0.5;
                since = 0;
                if (gapt < 1e-9 * (1.0 + fabs(Lb)))
                    break; /* stalled */
            }
        }
    }
    info->sub_iters = nsub;
    double delta = 0.1, best = sd_lp_tree_lagrange_eval(g, lam, grad);
    size_t iter = 1, nnull = 0;
    int rc = SD_OK;
    memcpy(cand, lam, N * sizeof *cand);
    double Lc = best;
    S_cut(lp, act, N, Lc, grad, cand, ind, val);
    for (;;) {
        if (sd_lp_now() - t0 > seconds || iter >= max_iter)
            break;
        /* the master within the trust region around lam */
        for (size_t i = 0; i < N; i++)
            if (act[i])
                glp_set_col_bnds(lp, act[i], GLP_DB, lam[i] - delta, lam[i] + delta);
        double left = seconds - (sd_lp_now() - t0);
        sm.tm_lim = left < 2e6 ? (int)ceil(1000.0 * left) + 1 : INT_MAX;
        int sr = glp_simplex(lp, &sm);
        if (sr == GLP_ETMLIM)
            break;
        if (sr != 0 || glp_get_status(lp) != GLP_OPT) {
            glp_std_basis(lp);
            sr = glp_simplex(lp, &sm);
            if (sr == GLP_ETMLIM)
                break;
        }
        if (sr != 0 || glp_get_status(lp) != GLP_OPT) {
            info->master_failed = 1;
            break;
        }
        double theta = glp_get_col_prim(lp, 1), pred = Lc - theta;
        info->model_gap = pred;
        for (size_t i = 0; i < N; i++)
            cand[i] = act[i] ? glp_get_col_prim(lp, act[i]) : 0.0;
        if (pred <= 1e-9 * (1.0 + fabs(Lc))) {
            /* the model's minimum in the trust region is within 1e-9 of
             * L(center); strictly inside the region it is the model's global
             * minimum, a lower bound on min L: converged.  On the region's
             * boundary, widen it. */
            int inside = 1;
            for (size_t i = 0; i < N && inside; i++)
                inside = !act[i] || fabs(cand[i] - lam[i]) < delta * (1.0 - 1e-9);
            if (inside) {
                info->converged = 1;
                break;
            }
            if (delta >= S_DELTA_MAX(g)) {
                info->flat = 1;
                break;
            }
            delta = fmin(2.0 * delta, S_DELTA_MAX(g));
            continue;
        }
        double Lk = sd_lp_tree_lagrange_eval(g, cand, grad);
        iter++;
        info->last = Lk;
        if (Lk < best)
            best = Lk;
        S_cut(lp, act, N, Lk, grad, cand, ind, val);
        double dec = Lc - Lk;
        if (dec >= 0.1 * pred) { /* a serious step */
            double step = 0.0;
            for (size_t i = 0; i < N; i++)
                step = fmax(step, fabs(cand[i] - lam[i]));
            memcpy(lam, cand, N * sizeof *lam);
            Lc = Lk;
            nnull = 0;
            info->serious++;
            if (dec >= 0.5 * pred && step >= 0.99 * delta)
                delta = fmin(2.0 * delta, S_DELTA_MAX(g));
        } else if (++nnull >= S_NNULL) { /* the model stays poor here: a smaller region */
            delta = fmax(0.5 * delta, 1e-7);
            nnull = 0;
        }
    }
    /* The master's dual is a primal point of tree-valid's LP: weights
     * μ_i >= 0, Σ μ_i = 1, on the cuts; each cut's maximiser (f_i, r_i)
     * meets the path-set and leaf rows exactly, so their mixture does too,
     * misses the node rows by Σ_i μ_i g_i (computed here from the cuts'
     * coefficients, not taken from GLPK) and has the value Σ_i μ_i rhs_i
     * (rhs_i = L(λ_i) - g_i·λ_i, the i-th maximiser's objective).  It is a
     * verifier (stop at u with probability f(S, u)/P(S), emit from the
     * mixed r: tree_valid.c) as valid as that residual is small. */
    info->primal = NAN;
    info->primal_residual = NAN;
    if (glp_get_status(lp) == GLP_OPT) {
        int nr = glp_get_num_rows(lp);
        double *res = calloc(N + 2, sizeof *res), mu_sum = 0.0, pv = 0.0;
        if (res) {
            for (int r = 1; r <= nr; r++) {
                double mu = fmax(0.0, glp_get_row_dual(lp, r));
                if (!(mu > 0.0))
                    continue;
                mu_sum += mu;
                pv += mu * glp_get_row_lb(lp, r);
                int len = glp_get_mat_row(lp, r, ind, val);
                for (int k = 1; k <= len; k++)
                    if (ind[k] > 1)
                        res[ind[k]] -= mu * val[k]; /* val = -g */
            }
            double worst = 0.0;
            for (size_t j = 0; j < N + 2; j++)
                worst = fmax(worst, fabs(res[j]));
            if (mu_sum > 0.0) {
                info->primal = pv / mu_sum;
                info->primal_residual = worst / mu_sum;
            }
            free(res);
        }
    }
    info->value = Lc < best ? Lc : best;
    info->center = Lc;
    info->iters = iter;
    info->seconds = sd_lp_now() - t0;
    info->delta = delta;
    glp_delete_prob(lp);
    free(grad);
    free(cand);
    free(ind);
    free(val);
    free(act);
    return rc;
}

int sd_lp_tree_lagrange_bound(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                              double seconds, double lower, sd_lp_tree_lagrange_info *info, sd_error *err)
{
    sd_lp_tree_lagrange *g = NULL;
    int rc = sd_lp_tree_lagrange_new(c, t, a, par, draw, &g, err);
    if (rc)
        return rc;
    double *lam = calloc(g->N, sizeof *lam);
    if (!lam) {
        sd_lp_tree_lagrange_free(g);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
    }
    rc = sd_lp_tree_lagrange_min(g, lam, seconds, SIZE_MAX, lower, info, err);
    free(lam);
    sd_lp_tree_lagrange_free(g);
    return rc;
}
