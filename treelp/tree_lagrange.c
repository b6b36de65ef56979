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
 * 1), so λ_root = 0.  The minimisation: with 256 or more multipliers a
 * first share of the time goes to subgradient steps (Polyak's step to a
 * variable target); then column generation over stop rules (S_colgen: the
 * restricted master on CLP, its mixture of stop rules repaired into a
 * point of the LP by stopping earlier (S_repair), the least L(λ)
 * evaluated the upper bound; converged when they meet within 1e-9; the
 * master's duals kept in a box around the best point's, and a first rule
 * that is a point of the LP by itself, S_seed_first_child), and
 * if CLP fails Kelley's cutting planes with an ℓ∞ trust region around the
 * best point (Linderoth & Wright 2003) on GLPK's dual simplex, whose
 * master's dual gives a primal point too (the comment at its end). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <coin/Clp_C_Interface.h>
#include <glpk.h>

#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../lp/sd_lp.h"
#include "../lp/sd_lp_clp.h"
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
/* GLPK's primal and dual feasibility tolerances in the master (its
 * default 1e-7 would leave node-row residuals of that order) and the
 * starting trust region. */
#define S_TOL 1e-10
#define S_DELTA0 0.1
/* CLP's primal and dual feasibility tolerances in the column generation
 * master: the stop-mass rows X(z) <= q(z | parent) X(parent) become r >= 0
 * divided by q(z), so their error must stay well below 1e-9, and reduced
 * costs of a few 1e-9 must still price in (a tolerance of 1e-9 would let
 * the gap stall at a few 1e-9, above S_GAP). */
#define S_CLP_TOL 1e-11
/* ... and once more at S_CLP_TIGHT when nothing prices out but the
 * master's point misses the residual. */
#define S_CLP_TIGHT 1e-13
/* The box on the column generation master's duals: first half-width, and
 * the width past which it is dropped. */
#define S_DELTA_CG 0.5
#define S_DELTA_CG_MAX 1e3
/* Converged: the best L within S_GAP of a primal point whose residual is
 * at most S_RESIDUAL (the exact route's certificate standard). */
#define S_GAP 1e-9
#define S_RESIDUAL 1e-9
/* Pricing points per master solve in the column generation. */
#define S_NALPHA 10
/* The subgradient phase's rules kept as the first columns: the last
 * S_RING_COLS, at most S_RING doubles.  They are the cuts of L near the
 * point the column generation starts from; with 64 of them the master's
 * model there is too coarse for hundreds of rounds (2,2,2 at V = 6: no
 * serious step in 60 s, the first after 40 s idle; with 1000, after 5 s). */
#define S_RING 4000000
#define S_RING_COLS 1000
/* Column management: past S_PRUNE(rows) stop-rule columns the master keeps
 * the S_PRUNE(rows)/2 best (S_dw_prune).  2,2,2 at V = 5 (156 rows):
 * 49 s without, 25 s with 2·rows + 100, same trajectory of bounds. */
#define S_PRUNE(rows) (2 * (size_t)(rows) + 100)

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

/* parts: 1 the expected maximum, 2 the cut term, 3 both (L itself). */
static double S_eval(sd_lp_tree_lagrange *g, const double *lam, double *grad, int parts)
{
    size_t V = g->V, D = g->D, N = g->N;
    double val = 0.0;
    if (grad)
        memset(grad, 0, N * sizeof *grad);
    if (parts & 1) {
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
        double prev = 0.0;
        for (size_t k = 0; k < na; k++) {
            double Fk = g->F[k], pk = Fk - prev; /* the root is node 0 */
            prev = Fk;
            if (pk != 0.0) {
                val += pk * g->h[g->order[k]];
                if (grad)
                    grad[g->order[k]] -= pk;
            }
        }
    }
    if (!(parts & 2)) {
        if (grad)
            grad[0] = 0.0;
        return val;
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

double sd_lp_tree_lagrange_eval(sd_lp_tree_lagrange *g, const double *lam, double *grad)
{
    return S_eval(g, lam, grad, 3);
}

double sd_lp_tree_lagrange_price(sd_lp_tree_lagrange *g, const double *lam, double *m)
{
    double A = S_eval(g, lam, m, 1), rest = 1.0;
    for (size_t i = 1; i < g->N; i++) {
        m[i] = m[i] != 0.0 ? -m[i] : 0.0;
        rest -= m[i];
    }
    m[0] = fmax(0.0, rest);
    return A;
}

/* --- the minimisation --------------------------------------------------------- */

/* The master LP (GLPK, minimise) models L(λ) = A(λ) + B(λ), A the expected
 * maximum and B the cut term, with A by its cutting planes and B exactly:
 * B(λ) = min { Σ_{x ∈ V} G(x) : G(z) >= λ_{parent(z)} q(z) (levels 1..D+1),
 *              G(z) >= Σ_y G(z y) (levels 1..D) },
 * the LP of the recursion (its least solution is the recursion's G, and
 * the objective is increasing in every G).  Columns: θ (A's model), the
 * active λ_u (u ≠ root, q(u) > 0), G(z) for q(z) > 0; rows: the G rows
 * (fixed), then A's cuts θ >= A(λ_k) + g_k·(λ - λ_k).
 *
 * Its dual is the restricted master of Dantzig–Wolfe column generation on
 * tree-valid's aggregated LP: weights μ_k >= 0, Σ μ_k = 1 (θ's column) on
 * the cuts, each cut's maximiser f_k (the stop rule "stop at the node of
 * largest |u| - λ_k(u)") meeting the path-set rows exactly; r(z) >= 0 the
 * duals of the rows G(z) >= λ_{parent(z)} q(z), whose path sums equal 1
 * (G's columns: r(x) + ρ(x) = 1, r(z) + ρ(z) = ρ(parent(z)), r(o) =
 * ρ(parent(o)) at the leaves, ρ the recursion rows' duals); λ's columns
 * are the node rows Σ_k μ_k P_k(u) = Σ_y q(u y) r(u y).  Where the trust
 * region does not bind, the master's dual is a primal point of tree-valid's
 * LP with the master's value (Σ_k μ_k Σ_u |u| P_k(u)); its residual is
 * recomputed here from the cuts' coefficients and the duals, not taken
 * from GLPK. */
typedef struct S_master {
    glp_prob *lp;
    int nfix;     /* the G rows */
    int *act;     /* [N] column of λ_i, 0 when fixed (the root, q(u) = 0) */
    int *gcol;    /* [noff[D+2]] column of G(z), 0 when q(z) = 0 */
    int *crow;    /* [noff[D+2]] row G(z) >= λ_{parent(z)} q(z) */
    int *colnode; /* column -> node of λ */
    int *ind;
    double *val, *r, *x;
} S_master;

static void S_master_free(S_master *m)
{
    if (m->lp)
        glp_delete_prob(m->lp);
    free(m->act);
    free(m->gcol);
    free(m->crow);
    free(m->colnode);
    free(m->ind);
    free(m->val);
    free(m->r);
    free(m->x);
}

static int S_master_new(const sd_lp_tree_lagrange *g, S_master *m)
{
    size_t N = g->N, D = g->D, V = g->V, NT = g->noff[D + 2];
    memset(m, 0, sizeof *m);
    m->act = calloc(N, sizeof *m->act);
    m->gcol = calloc(NT, sizeof *m->gcol);
    m->crow = calloc(NT, sizeof *m->crow);
    m->colnode = calloc(N + NT + 2, sizeof *m->colnode);
    m->ind = malloc((N + NT + 2) * sizeof *m->ind);
    m->val = malloc((N + NT + 2) * sizeof *m->val);
    m->r = calloc(NT, sizeof *m->r);
    m->x = calloc(N, sizeof *m->x);
    if (!m->act || !m->gcol || !m->crow || !m->colnode || !m->ind || !m->val || !m->r || !m->x)
        return SD_ENOMEM;
    glp_prob *lp = m->lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    int ncol = 1;
    for (size_t l = 1; l <= D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++)
            if (g->Q[l][u] > 0.0) {
                m->act[g->noff[l] + u] = ++ncol;
                m->colnode[ncol] = (int)(g->noff[l] + u);
            }
    for (size_t l = 1; l <= D + 1; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++)
            if (g->Q[l][u] > 0.0)
                m->gcol[g->noff[l] + u] = ++ncol;
    glp_add_cols(lp, ncol);
    for (int j = 1; j <= ncol; j++)
        glp_set_col_bnds(lp, j, GLP_FR, 0.0, 0.0);
    glp_set_obj_coef(lp, 1, 1.0);
    for (size_t x = 0; x < V; x++)
        if (m->gcol[g->noff[1] + x])
            glp_set_obj_coef(lp, m->gcol[g->noff[1] + x], 1.0);
    int *ind = m->ind;
    double *val = m->val;
    for (size_t l = 1; l <= D + 1; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t z = g->noff[l] + u;
            if (!m->gcol[z])
                continue;
            int nz = 0;
            ind[++nz] = m->gcol[z];
            val[nz] = 1.0;
            size_t par = g->noff[l - 1] + u / V;
            if (m->act[par]) {
                ind[++nz] = m->act[par];
                val[nz] = -g->Q[l][u];
            }
            int row = glp_add_rows(lp, 1);
            glp_set_mat_row(lp, row, nz, ind, val);
            glp_set_row_bnds(lp, row, GLP_LO, 0.0, 0.0);
            m->crow[z] = row;
            if (l <= D) {
                nz = 0;
                ind[++nz] = m->gcol[z];
                val[nz] = 1.0;
                for (size_t y = 0; y < V; y++)
                    if (m->gcol[g->noff[l + 1] + u * V + y]) {
                        ind[++nz] = m->gcol[g->noff[l + 1] + u * V + y];
                        val[nz] = -1.0;
                    }
                if (nz > 1) {
                    row = glp_add_rows(lp, 1);
                    glp_set_mat_row(lp, row, nz, ind, val);
                    glp_set_row_bnds(lp, row, GLP_LO, 0.0, 0.0);
                }
            }
        }
    m->nfix = glp_get_num_rows(lp);
    return SD_OK;
}

/* Adds A's cut θ >= A(λ_k) + g·(λ - λ_k) of the point x = λ_k; past
 * S_MAX_ROWS·N + 200 cuts, drops the slack ones (basic rows). */
static void S_cut(S_master *m, size_t N, double Ak, const double *grad, const double *x)
{
    glp_prob *lp = m->lp;
    int nz = 0, *ind = m->ind;
    double rhs = Ak, *val = m->val;
    ind[++nz] = 1;
    val[nz] = 1.0;
    for (size_t i = 0; i < N; i++)
        if (m->act[i] && grad[i] != 0.0) {
            ind[++nz] = m->act[i];
            val[nz] = -grad[i];
            rhs -= grad[i] * x[i];
        }
    int row = glp_add_rows(lp, 1);
    glp_set_mat_row(lp, row, nz, ind, val);
    glp_set_row_bnds(lp, row, GLP_LO, rhs, 0.0);
    int nr = glp_get_num_rows(lp);
    if ((size_t)(nr - m->nfix) > S_MAX_ROWS * N + 200) {
        int nd = 0;
        int *del = malloc(((size_t)nr + 1) * sizeof *del);
        if (del) {
            for (int r = m->nfix + 1; r < nr; r++)
                if (glp_get_row_stat(lp, r) == GLP_BS)
                    del[++nd] = r;
            if (nd)
                glp_del_rows(lp, nd, del);
            free(del);
        }
    }
}

/* The master's dual as a primal point of tree-valid's LP (the comment
 * above S_master): its value, and the largest violation of the node rows,
 * the leaf path rows and r >= 0 (μ clipped at 0 and normalised, so the
 * path-set rows hold exactly). */
static void S_primal(const sd_lp_tree_lagrange *g, S_master *m, double *value, double *residual)
{
    glp_prob *lp = m->lp;
    size_t N = g->N, D = g->D, V = g->V;
    int nr = glp_get_num_rows(lp);
    double mu_sum = 0.0, pv = 0.0, worst = 0.0;
    memset(m->x, 0, N * sizeof *m->x);
    for (int r = m->nfix + 1; r <= nr; r++) {
        double mu = fmax(0.0, glp_get_row_dual(lp, r));
        if (!(mu > 0.0))
            continue;
        mu_sum += mu;
        pv += mu * glp_get_row_lb(lp, r);
        int len = glp_get_mat_row(lp, r, m->ind, m->val);
        double rest = 1.0;
        for (int k = 1; k <= len; k++)
            if (m->ind[k] > 1) {
                m->x[m->colnode[m->ind[k]]] += mu * m->val[k]; /* val = P_k(u) */
                rest -= m->val[k];
            }
        m->x[0] += mu * rest;
    }
    if (!(mu_sum > 0.0)) {
        *value = *residual = NAN;
        return;
    }
    for (size_t i = 0; i < N; i++)
        m->x[i] /= mu_sum;
    for (size_t l = 1; l <= D + 1; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t z = g->noff[l] + u;
            double rz = m->crow[z] ? glp_get_row_dual(lp, m->crow[z]) : 0.0;
            worst = fmax(worst, -rz);
            m->r[z] = fmax(rz, 0.0);
            m->x[g->noff[l - 1] + u / V] -= g->Q[l][u] * m->r[z];
        }
    for (size_t i = 0; i < N; i++)
        worst = fmax(worst, fabs(m->x[i]));
    /* leaf path rows: Σ_{l=1}^{D+1} r(o^l) = 1 for q(o) > 0 */
    size_t nl = g->noff[D + 2] - g->noff[D + 1];
    for (size_t o = 0; o < nl; o++) {
        if (!(g->Q[D + 1][o] > 0.0))
            continue;
        double s = 0.0;
        size_t w = o;
        for (size_t l = D + 1; l >= 1; l--) {
            s += m->r[g->noff[l] + w];
            w /= V;
        }
        worst = fmax(worst, fabs(s - 1.0));
    }
    *value = pv / mu_sum;
    *residual = worst;
}

/* --- column generation ---------------------------------------------------------- */

/* The restricted master over stop rules.  Eliminating the emission r:
 * with s(z) = 1 - Σ_{w ⪯ z, |w| >= 1} r(w) (the share of the target paths
 * through z not yet emitted; s(root) = 1, s = 0 at depth D+1) the node
 * rows read x_u = q(u) s(u) - Σ_y q(u y) s(u y), so s(u) = X(u)/q(u),
 * X(u) = Σ_{w ⪰ u} x_w the stop mass in u's subtree, and r(u y) = s(u) -
 * s(u y) >= 0: a stop law x (of the drafted trees' nodes) can be completed
 * to a point of tree-valid's LP iff X(z)/q(z) <= X(parent(z))/q(parent(z))
 * for every z (X(root)/q(root) = Σ x = 1).  The master: maximise
 * Σ_k μ_k Σ_u |u| P_k(u) over μ >= 0, Σ μ_k = 1, with those rows for
 * x = Σ_k μ_k P_k, P_k the stop law of the rule "stop at the node of
 * largest |u| - λ_k(u)".  Its duals π_z >= 0 price a rule through
 * λ_w = Σ_{v ⪯ w, v ≠ root} (π_v - Σ_y π_{v y} q(v y)/q(v)) (the rows
 * as written, X(z) - q(z|parent) X(parent) <= 0): the best rule is A's
 * maximiser at λ, and L(λ) = A(λ) + B(λ) bounds the LP from above (at the
 * master's duals, L(λ) - master = the best reduced cost). */
typedef struct S_dw {
    Clp_Simplex *clp;
    int nrows;
    int nart;      /* the box's columns, first: 2 per stop-mass row */
    int *row;      /* [N] row of node z (levels 1..D, q(z) > 0) */
    size_t npol, cap;
    size_t nlive;  /* columns in CLP's model (the rest queued) */
    double *pol;   /* [cap][N] the columns' stop laws */
    int *ind;
    double *val, *X;
    double *cen;   /* [nrows] the box's centre in π (index: row) */
} S_dw;

static void S_dw_free(S_dw *d)
{
    if (d->clp)
        Clp_deleteModel(d->clp);
    free(d->row);
    free(d->cen);
    free(d->pol);
    free(d->ind);
    free(d->val);
    free(d->X);
}

void sd_lp_tree_lagrange_subtree(const sd_lp_tree_lagrange *g, const double *P, double *X)
{
    size_t V = g->V;
    for (size_t l = g->D; l >= 1; l--)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            X[i] = P[i];
            if (l < g->D)
                for (size_t y = 0; y < V; y++)
                    X[i] += X[g->noff[l + 1] + u * V + y];
        }
}

/* Queues the stop law P as a column; S_dw_flush adds the queued ones to
 * CLP's model in one call (each call of Clp_addColumns copies the model's
 * matrix, and the master's columns are dense). */
static int S_dw_column(const sd_lp_tree_lagrange *g, S_dw *d, const double *P)
{
    size_t N = g->N;
    if (d->npol == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 256;
        double *pl = realloc(d->pol, cap * N * sizeof *pl);
        if (!pl)
            return SD_ENOMEM;
        d->pol = pl;
        d->cap = cap;
    }
    memcpy(d->pol + d->npol * N, P, N * sizeof *P);
    d->pol[d->npol * N] = 0.0;
    d->npol++;
    return SD_OK;
}

/* The queued columns into the master: the convexity row 1, the stop-mass
 * rows X(z) - q(z | parent) X(parent) (X the column's subtree sums), cost
 * -Σ_u |u| P(u) (CLP minimises). */
static int S_dw_flush(const sd_lp_tree_lagrange *g, S_dw *d)
{
    size_t N = g->N, V = g->V, n = d->npol - d->nlive, nr = (size_t)d->nrows;
    if (!n)
        return SD_OK;
    CoinBigIndex *st = malloc((n + 1) * sizeof *st);
    int *ri = malloc(n * nr * sizeof *ri);
    double *el = malloc(n * nr * sizeof *el), *lo = calloc(n, sizeof *lo), *up = malloc(n * sizeof *up);
    double *ob = malloc(n * sizeof *ob);
    if (!st || !ri || !el || !lo || !up || !ob) {
        free(st);
        free(ri);
        free(el);
        free(lo);
        free(up);
        free(ob);
        return SD_ENOMEM;
    }
    CoinBigIndex nz = 0;
    for (size_t k = 0; k < n; k++) {
        const double *P = d->pol + (d->nlive + k) * N;
        sd_lp_tree_lagrange_subtree(g, P, d->X);
        st[k] = nz;
        ri[nz] = 0;
        el[nz++] = 1.0;
        double c = 0.0;
        for (size_t l = 1; l <= g->D; l++)
            for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
                size_t i = g->noff[l] + u;
                c += (double)l * P[i];
                if (!d->row[i])
                    continue;
                double mz = d->X[i];
                if (l > 1)
                    mz -= d->X[g->noff[l - 1] + u / V] * (g->Q[l][u] / g->Q[l - 1][u / V]);
                if (mz != 0.0) {
                    ri[nz] = d->row[i] - 1; /* rows 0-based */
                    el[nz++] = mz;
                }
            }
        up[k] = DBL_MAX;
        ob[k] = -c;
    }
    st[n] = nz;
    Clp_addColumns(d->clp, (int)n, lo, up, ob, st, ri, el);
    d->nlive = d->npol;
    free(st);
    free(ri);
    free(el);
    free(lo);
    free(up);
    free(ob);
    return SD_OK;
}

static int S_dw_new(const sd_lp_tree_lagrange *g, S_dw *d)
{
    size_t N = g->N, D = g->D;
    memset(d, 0, sizeof *d);
    d->row = calloc(N, sizeof *d->row);
    d->ind = malloc((N + 2) * sizeof *d->ind);
    d->val = malloc((N + 2) * sizeof *d->val);
    d->X = calloc(N, sizeof *d->X);
    if (!d->row || !d->ind || !d->val || !d->X)
        return SD_ENOMEM;
    int nr = 1;
    for (size_t l = 1; l <= D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++)
            if (g->Q[l][u] > 0.0)
                d->row[g->noff[l] + u] = ++nr;
    double *rl = malloc((size_t)nr * sizeof *rl), *ru = malloc((size_t)nr * sizeof *ru);
    d->clp = Clp_newModel();
    if (!rl || !ru || !d->clp) {
        free(rl);
        free(ru);
        return SD_ENOMEM;
    }
    Clp_setLogLevel(d->clp, 0);
    rl[0] = ru[0] = 1.0;
    for (size_t l = 1; l <= D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            int r = d->row[g->noff[l] + u];
            if (r) {
                rl[r - 1] = -DBL_MAX;
                ru[r - 1] = l == 1 ? g->Q[1][u] : 0.0;
            }
        }
    CoinBigIndex st0 = 0;
    Clp_loadProblem(d->clp, 0, nr, &st0, NULL, NULL, NULL, NULL, NULL, rl, ru);
    /* no scaling: CLP's scale factors are not renewed for columns added
     * after a solve, so its primal simplex warm started then can report
     * optima whose row prices price the new columns wrongly */
    Clp_scaling(d->clp, 0);
    Clp_setPrimalTolerance(d->clp, S_CLP_TOL);
    Clp_setDualTolerance(d->clp, S_CLP_TOL);
    d->nrows = nr;
    free(rl);
    free(ru);
    /* the box's columns: -e_r (π_r <= upper) and +e_r (π_r >= lower) */
    d->cen = calloc((size_t)nr, sizeof *d->cen);
    if (!d->cen)
        return SD_ENOMEM;
    for (int r = 1; r < nr; r++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double lo = 0.0, up = DBL_MAX, obj = 0.0, v = sgn;
            CoinBigIndex st[2] = {0, 1};
            int ix = r;
            Clp_addColumns(d->clp, 1, &lo, &up, &obj, st, &ix, &v);
        }
    d->nart = 2 * (nr - 1);
    return SD_OK;
}

/* λ from the master's duals (the comment above S_dw). */
static void S_dw_lambda(const sd_lp_tree_lagrange *g, const S_dw *d, double *lam)
{
    size_t V = g->V;
    const double *y = Clp_getRowPrice(d->clp);
    lam[0] = 0.0;
    for (size_t l = 1; l <= g->D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            double base = l == 1 ? 0.0 : lam[g->noff[l - 1] + u / V];
            if (!d->row[i]) {
                lam[i] = base;
                continue;
            }
            double pv = -y[d->row[i] - 1];
            if (l < g->D)
                for (size_t c = 0; c < V; c++) {
                    size_t ch = g->noff[l + 1] + u * V + c;
                    if (d->row[ch])
                        pv += y[d->row[ch] - 1] * (g->Q[l + 1][u * V + c] / g->Q[l][u]);
                }
            lam[i] = base + pv;
        }
}

/* Makes a mixture of stop rules meet the stop-mass rows X(z) <= q(z |
 * parent(z)) X(parent(z)) by stopping earlier: where z's subtree holds too
 * much, the rule stops at parent(z) instead of anywhere in z's subtree
 * with probability 1 - c(z), c(z) = min(1, q(z | parent) X(parent) / X(z))
 * (X of the mixture as given).  Stopping at an ancestor is always possible
 * (it is in every drafted tree that holds the node), so the result is
 * still the stop law of a rule, now a point of the LP.  Scaling a subtree
 * and moving the rest to the parent leaves X(parent) and every ratio
 * inside the subtree unchanged, so c(z) needs the given X only and the
 * rows hold after one pass (up to rounding).  x: levels 1..D (the root's
 * share is the rest); X, inh: N doubles of work. */
static void S_repair(const sd_lp_tree_lagrange *g, double *x, double *X, double *inh)
{
    size_t V = g->V, D = g->D;
    sd_lp_tree_lagrange_subtree(g, x, X);
    /* inh(z): the product of c over z and its ancestors below the root */
    for (size_t l = 1; l <= D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t z = g->noff[l] + u, par = g->noff[l - 1] + u / V;
            double up = l == 1 ? 1.0 : inh[par], c = 1.0;
            if (g->Q[l][u] > 0.0) {
                double cap = l == 1 ? g->Q[1][u] : X[par] * (g->Q[l][u] / g->Q[l - 1][u / V]);
                if (X[z] > cap)
                    c = cap / X[z];
            } else if (X[z] > 0.0) {
                c = 0.0;
            }
            inh[z] = up * c;
            double moved = up * (1.0 - c) * X[z];
            x[z] *= inh[z];
            if (l > 1)
                x[par] += moved;
        }
}

/* The stop law x (levels 1..D, a mixture of stop rules; changed) made a
 * point of the LP (S_repair) and completed by r; its value and residual. */
static void S_mix_point(const sd_lp_tree_lagrange *g, double *x, double *r, double *X, double *value,
                        double *residual)
{
    size_t D = g->D, V = g->V;
    double pv = 0.0, worst = 0.0;
    S_repair(g, x, X, r);
    memset(r, 0, g->noff[D + 2] * sizeof *r);
    x[0] = 1.0;
    for (size_t l = 1; l <= D; l++)
        for (size_t i = g->noff[l]; i < g->noff[l + 1]; i++) {
            x[0] -= x[i];
            pv += (double)l * x[i];
        }
    sd_lp_tree_lagrange_subtree(g, x, X);
    /* r(z) at levels 1..D+1 from s = X/q */
    for (size_t l = 1; l <= D + 1; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            if (!(g->Q[l][u] > 0.0))
                continue;
            double sp = l == 1 ? 1.0 : X[g->noff[l - 1] + u / V] / g->Q[l - 1][u / V];
            double sz = l == D + 1 ? 0.0 : X[g->noff[l] + u] / g->Q[l][u];
            r[g->noff[l] + u] = fmax(0.0, sp - sz);
        }
    /* node rows x_u = Σ_y q(u y) r(u y) */
    for (size_t l = 0; l <= D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            double e = x[g->noff[l] + u];
            for (size_t y = 0; y < V; y++)
                e -= g->Q[l + 1][u * V + y] * r[g->noff[l + 1] + u * V + y];
            worst = fmax(worst, fabs(e));
        }
    for (size_t o = 0; o < g->noff[D + 2] - g->noff[D + 1]; o++) {
        if (!(g->Q[D + 1][o] > 0.0))
            continue;
        double sum = 0.0;
        size_t w = o;
        for (size_t l = D + 1; l >= 1; l--) {
            sum += r[g->noff[l] + w];
            w /= V;
        }
        worst = fmax(worst, fabs(sum - 1.0));
    }
    *value = pv;
    *residual = worst;
}

/* The master's primal point completed to tree-valid's LP: x = Σ μ_k P_k /
 * Σ μ_k (the path-set rows exact), made to meet the stop-mass rows by
 * S_repair (the box columns may leave them violated, and CLP's tolerance
 * by up to 1e-11), s = X/q, r(z) = max(0, s(parent) - s(z)) (levels
 * 1..D+1, s = 0 at depth D+1); its value and the largest residual of the
 * node rows and the leaf path rows, recomputed.  So every master solve
 * gives a point of the LP, a lower bound, whether or not the box binds. */
static void S_dw_primal(const sd_lp_tree_lagrange *g, S_dw *d, double *value, double *residual)
{
    size_t N = g->N, D = g->D;
    double *x = calloc(N, sizeof *x), *r = calloc(g->noff[D + 2], sizeof *r);
    if (!x || !r) {
        free(x);
        free(r);
        *value = *residual = NAN;
        return;
    }
    double mus = 0.0;
    const double *sol = Clp_getColSolution(d->clp) + d->nart;
    for (size_t k = 0; k < d->npol; k++) {
        double mu = fmax(0.0, sol[k]);
        if (mu == 0.0)
            continue;
        mus += mu;
        const double *P = d->pol + k * N;
        for (size_t i = 1; i < N; i++)
            x[i] += mu * P[i];
    }
    for (size_t l = 1; l <= D; l++)
        for (size_t i = g->noff[l]; i < g->noff[l + 1]; i++)
            x[i] /= mus;
    S_mix_point(g, x, r, d->X, value, residual);
    free(x);
    free(r);
}

/* Column management: when more than `cap` stop-rule columns are in the
 * master, the non-basic ones at 0 with the largest reduced costs are
 * deleted until `keep` remain (the basis is kept, so the next solve stays
 * warm).  A deleted rule can come back through the pricing; every L(λ)
 * stays a bound and every master point a point of the LP, so only the
 * speed is at stake: the master's simplex iterations price every column,
 * and with dense columns (a stop law reaches most nodes) that is most of
 * a round's time. */
static int S_dw_cmp_dj(const void *x, const void *y)
{
    const double *a = x, *b = y;
    return a[0] > b[0] ? -1 : a[0] < b[0];
}

static void S_dw_prune(const sd_lp_tree_lagrange *g, S_dw *d, size_t cap, size_t keep)
{
    if (d->nlive <= cap)
        return;
    size_t N = g->N, nd = 0, nc = d->nlive, queued = d->npol - d->nlive;
    const double *y = Clp_getRowPrice(d->clp), *ob = Clp_getObjCoefficients(d->clp);
    const double *x = Clp_getColSolution(d->clp);
    const CoinBigIndex *vs = Clp_getVectorStarts(d->clp);
    const int *ri = Clp_getIndices(d->clp), *len = Clp_getVectorLengths(d->clp);
    const double *el = Clp_getElements(d->clp);
    double *cand = malloc(2 * nc * sizeof *cand);
    int *del = malloc(nc * sizeof *del);
    char *gone = calloc(nc, 1);
    if (!cand || !del || !gone) {
        free(cand);
        free(del);
        free(gone);
        return;
    }
    for (size_t k = 0; k < nc; k++) {
        int j = d->nart + (int)k;
        if (Clp_getColumnStatus(d->clp, j) == 1 || x[j] != 0.0)
            continue;
        double dj = ob[j];
        for (CoinBigIndex t = vs[j]; t < vs[j] + len[j]; t++)
            dj -= y[ri[t]] * el[t];
        cand[2 * nd] = dj;
        cand[2 * nd + 1] = (double)k;
        nd++;
    }
    qsort(cand, nd, 2 * sizeof *cand, S_dw_cmp_dj);
    size_t ndel = nc - keep < nd ? nc - keep : nd;
    for (size_t i = 0; i < ndel; i++) {
        size_t k = (size_t)cand[2 * i + 1];
        gone[k] = 1;
    }
    size_t w = 0, m = 0;
    for (size_t k = 0; k < nc; k++) {
        if (gone[k]) {
            del[m++] = d->nart + (int)k;
            continue;
        }
        if (w != k)
            memmove(d->pol + w * N, d->pol + k * N, N * sizeof *d->pol);
        w++;
    }
    if (m)
        Clp_deleteColumns(d->clp, (int)m, del);
    if (queued && w != nc)
        memmove(d->pol + w * N, d->pol + nc * N, queued * N * sizeof *d->pol);
    d->nlive = w;
    d->npol = w + queued;
    free(cand);
    free(del);
    free(gone);
}

/* π from λ (the inverse of S_dw_lambda's map, from the deepest level up:
 * π_u = λ_u - λ_parent(u) + Σ_y π_{u y} q(u y)/q(u)), clipped at 0: the
 * box's first centre. */
static void S_dw_pi(const sd_lp_tree_lagrange *g, const S_dw *d, const double *lam, double *pi)
{
    size_t V = g->V;
    double *full = calloc(g->N, sizeof *full);
    if (!full)
        return;
    for (size_t l = g->D; l >= 1; l--)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            if (!d->row[i])
                continue;
            double v = lam[i] - (l == 1 ? 0.0 : lam[g->noff[l - 1] + u / V]);
            if (l < g->D)
                for (size_t c = 0; c < V; c++) {
                    size_t ch = g->noff[l + 1] + u * V + c;
                    if (d->row[ch])
                        v += full[ch] * (g->Q[l + 1][u * V + c] / g->Q[l][u]);
                }
            full[i] = v;
            pi[d->row[i] - 1] = fmax(0.0, v);
        }
    free(full);
}

/* A first stop rule that is a point of the LP by itself: follow the first
 * child while it is coupled with the target token (the maximal coupling of
 * p(.|u) and q(.|u)), so the path reaches u x with probability R(u x) =
 * R(u) min(p(x|u), q(x|u)) <= R(u) q(x|u), the stop-mass rows hold, and
 * the rule stops at a node of the drafted tree, so the path-set rows hold
 * too (they are not recomputed: S_dw_primal trusts every column to be a
 * rule's stop law).  The first child's token has law p(.|u) with i.i.d.
 * drafts and without replacement, not with top-k (the most likely token):
 * callers use it for iid and wor only.  With it the master starts above
 * "stop at the root" (without it the master sits at 0 until enough argmax
 * rules combine into a feasible mixture). */
static void S_seed_first_child(const sd_lp_tree_lagrange *g, double *R, double *P)
{
    size_t V = g->V;
    memset(R, 0, g->N * sizeof *R);
    R[0] = 1.0;
    for (size_t l = 0; l < g->D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            if (!(R[i] > 0.0) || !(g->Q[l][u] > 0.0))
                continue;
            for (size_t x = 0; x < V; x++)
                R[g->noff[l + 1] + u * V + x] = R[i] * fmin(g->p[i * V + x], g->Q[l + 1][u * V + x] / g->Q[l][u]);
        }
    for (size_t l = 0; l <= g->D; l++)
        for (size_t u = 0; u < g->noff[l + 1] - g->noff[l]; u++) {
            size_t i = g->noff[l] + u;
            P[i] = R[i];
            if (l < g->D)
                for (size_t x = 0; x < V; x++)
                    P[i] -= R[g->noff[l + 1] + u * V + x];
        }
}

/* Column generation: the restricted master (S_dw) on CLP's primal simplex,
 * warm started as columns arrive; each round prices at the master's λ and
 * at points between it and the best λ so far (Wentges 1997's smoothing,
 * several weights at once since a pricing costs far less than a master
 * solve) and adds every rule with a positive reduced cost at the master's
 * λ.  The best L(λ) is the upper bound, the master's value (a point of the
 * LP, residual recomputed) the lower; converged when they are within
 * S_GAP.  The duals are held in a box (sd_lp_clp_box) around the best
 * point's (a master point using a box column is not a point of the LP:
 * S_dw_primal reads the stop-rule columns only and repairs their mixture),
 * moved with it, widened when nothing prices out inside it and dropped
 * past S_DELTA_CG_MAX: without it the master's duals swing between
 * extreme rules (the box step of Marsten, Hogan & Blankenship 1975).  The
 * columns start with "stop at the root" (always
 * feasible), S_seed_first_child's rule, and the rules the subgradient phase met (cols: n rows of N + 1, the
 * negated stop law first).  SD_ENOMEM or SD_EINTERNAL (CLP failed: the
 * caller falls back) before any bound is set in info. */
static int S_colgen(sd_lp_tree_lagrange *g, double *lam, double t0, double seconds, size_t max_iter,
                    const double *cols, size_t n, size_t *nsub, double *grad, sd_lp_tree_lagrange_info *info)
{
    static const double alphas[S_NALPHA] = {0.0, 0.3, 0.6, 0.8, 0.9, 0.1, 0.2, 0.4, 0.5, 0.7};
    size_t N = g->N;
    S_dw d;
    double *P = calloc(N, sizeof *P), *lm = calloc(N, sizeof *lm), *ls = calloc(N, sizeof *ls);
    double *R = calloc(N, sizeof *R);
    int rc = S_dw_new(g, &d);
    double *pim = rc ? NULL : calloc((size_t)d.nrows, sizeof *pim);
    double *pib = rc ? NULL : calloc((size_t)d.nrows, sizeof *pib);
    for (size_t k = 0; !rc && P && k < n; k++) {
        for (size_t i = 0; i < N; i++)
            P[i] = -cols[k * (N + 1) + i];
        rc = S_dw_column(g, &d, P);
    }
    if (!rc && P) {
        memset(P, 0, N * sizeof *P);
        rc = S_dw_column(g, &d, P);
    }
    if (!rc && P && R && (g->draw == SD_DRAW_IID || g->draw == SD_DRAW_WOR)) {
        S_seed_first_child(g, R, P);
        rc = S_dw_column(g, &d, P);
    }
    if (rc || !P || !lm || !ls || !R || !pim || !pib) {
        S_dw_free(&d);
        free(P);
        free(lm);
        free(ls);
        free(R);
        free(pim);
        free(pib);
        return SD_ENOMEM;
    }
    double A0 = S_eval(g, lam, grad, 1), best = A0 + S_eval(g, lam, NULL, 2), low = -INFINITY;
    for (size_t i = 0; i < N; i++)
        P[i] = -grad[i];
    rc = S_dw_column(g, &d, P);
    /* the box around the best point's π (the subgradient phase's λ mapped
     * back, clipped at 0), S_DELTA_CG wide; it widens (and at last goes)
     * when no column prices out inside it */
    S_dw_pi(g, &d, lam, d.cen);
    memcpy(pib, d.cen, (size_t)d.nrows * sizeof *pib);
    double delta = S_DELTA_CG;
    size_t it = 1 + *nsub;
    int solved = 0, rebox = 1, tight = 0;
    while (!rc && sd_lp_now() - t0 < seconds && it < max_iter) {
        if (solved)
            S_dw_prune(g, &d, S_PRUNE(d.nrows), S_PRUNE(d.nrows) / 2);
        if ((rc = S_dw_flush(g, &d)))
            break;
        if (rebox) { /* the box moved or widened: new costs of its columns */
            size_t nc = (size_t)d.nart + d.npol;
            double *ob = malloc(nc * sizeof *ob), *up = malloc(nc * sizeof *up);
            if (!ob || !up) {
                free(ob);
                free(up);
                rc = SD_ENOMEM;
                break;
            }
            sd_lp_clp_box(d.clp, d.nrows, d.cen, delta, ob, up);
            free(ob);
            free(up);
            rebox = 0;
        }
        Clp_setMaximumSeconds(d.clp, fmax(0.01, seconds - (sd_lp_now() - t0)));
        Clp_primal(d.clp, 0);
        int st = Clp_status(d.clp);
        if (st == 0 && !sd_lp_clp_prices_ok(d.clp, d.nrows)) {
            Clp_initialSolve(d.clp);
            st = Clp_status(d.clp);
        }
        if (st == 3)
            break; /* CLP's time limit */
        if (st != 0) {
            rc = solved ? SD_OK : SD_EINTERNAL;
            info->master_failed = 1;
            break;
        }
        solved = 1;
        double pv, pr;
        S_dw_primal(g, &d, &pv, &pr);
        if (pr <= S_RESIDUAL && pv > low) {
            low = pv;
            info->primal = pv;
            info->primal_residual = pr;
        } else if (!(low > -INFINITY) && !(pr >= info->primal_residual)) {
            info->primal = pv;
            info->primal_residual = pr;
        }
        const double *y = Clp_getRowPrice(d.clp);
        double th = -y[0];
        for (int r = 0; r < d.nrows; r++)
            pim[r] = -y[r];
        S_dw_lambda(g, &d, lm);
        int added = 0, moved = 0;
        for (int k = 0; k < S_NALPHA && !rc; k++) {
            for (size_t i = 0; i < N; i++)
                ls[i] = alphas[k] * lam[i] + (1.0 - alphas[k]) * lm[i];
            double A = S_eval(g, ls, grad, 1), L = A + S_eval(g, ls, NULL, 2), red = -th;
            it++;
            for (size_t l = 1; l <= g->D; l++)
                for (size_t i = g->noff[l]; i < g->noff[l + 1]; i++) {
                    P[i] = -grad[i];
                    red += ((double)l - lm[i]) * P[i];
                }
            if (L < best) {
                best = L;
                memcpy(lam, ls, N * sizeof *lam);
                for (int r = 1; r < d.nrows; r++)
                    pib[r] = alphas[k] * pib[r] + (1.0 - alphas[k]) * pim[r];
                moved = 1;
            }
            if (k == 0)
                info->model_gap = red; /* L(λ_master) - master */
            if (red > 1e-12) {
                rc = S_dw_column(g, &d, P);
                added++;
            }
        }
        info->serious++; /* master solves */
        if (best - low <= S_GAP) {
            info->converged = 1;
            break;
        }
        if (moved) { /* a serious step: the box follows the best point */
            memcpy(d.cen, pib, (size_t)d.nrows * sizeof *pib);
            rebox = 1;
        }
        if (!added) {
            /* nothing prices out at the master's duals: without the box
             * (or with no box column in use) the restricted master is the
             * LP's optimum over these columns and L there its bound */
            if (isfinite(delta) && sd_lp_clp_box_used(d.clp, d.nrows) > 0.0) {
                delta = 4.0 * delta > S_DELTA_CG_MAX ? INFINITY : 4.0 * delta;
                rebox = 1;
                continue;
            }
            if (!tight) {
                /* the master's point may miss the 1e-9 residual by a few
                 * 1e-9 at S_CLP_TOL: once more, tighter */
                tight = 1;
                Clp_setPrimalTolerance(d.clp, S_CLP_TIGHT);
                Clp_setDualTolerance(d.clp, S_CLP_TIGHT);
                continue;
            }
            info->flat = 1;
            break;
        }
    }
    if (rc == SD_OK) {
        info->value = best;
        info->center = best;
        info->last = best;
        info->iters = it;
        info->seconds = sd_lp_now() - t0;
        info->delta = delta;
        info->method = "column generation (CLP)";
    }
    S_dw_free(&d);
    free(P);
    free(lm);
    free(ls);
    free(R);
    free(pim);
    free(pib);
    return rc;
}

int sd_lp_tree_lagrange_min(sd_lp_tree_lagrange *g, double *lam, double seconds, size_t max_iter, double lower,
                            sd_lp_tree_lagrange_info *info, sd_error *err)
{
    size_t N = g->N;
    double t0 = sd_lp_now();
    memset(info, 0, sizeof *info);
    info->primal = NAN;
    info->primal_residual = NAN;
    double *grad = malloc(N * sizeof *grad), *cand = malloc(N * sizeof *cand);
    S_master m;
    if (!grad || !cand || S_master_new(g, &m)) {
        free(grad);
        free(cand);
        S_master_free(&m);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the Lagrangian bound");
    }
    for (size_t i = 0; i < N; i++)
        if (!m.act[i])
            lam[i] = 0.0;
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.meth = GLP_DUALP;
    sm.tol_bnd = S_TOL;
    sm.tol_dj = S_TOL;
    /* a first phase of subgradient steps with Polyak's step to a variable
     * target (Brännlund 1995): cheap steps that take λ near the minimum
     * before the cutting planes polish it */
    double sub = N >= S_SUB_MIN_DIM ? S_SUB_SHARE : 0.0;
    size_t nsub = 0, mring = S_RING_COLS < S_RING / (N + 1) ? S_RING_COLS : S_RING / (N + 1), nring = 0;
    double *gB = malloc(N * sizeof *gB);
    double *ring = malloc(mring * (N + 1) * sizeof *ring);
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
            {
                double Ax = S_eval(g, cand, grad, 1);
                if (ring) {
                    size_t slot = nring++ % mring;
                    double *P = ring + slot * (N + 1);
                    P[N] = Ax;
                    for (size_t i = 0; i < N; i++) {
                        P[i] = grad[i];
                        P[N] -= grad[i] * cand[i];
                    }
                }
                Lx = Ax + S_eval(g, cand, NULL, 2);
                S_eval(g, cand, gB, 2);
                for (size_t i = 0; i < N; i++)
                    grad[i] += gB[i];
            }
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
    /* column generation on CLP; GLPK's cutting planes below if CLP fails */
    if (S_colgen(g, lam, t0, seconds, max_iter, ring, nring < mring ? nring : mring, &nsub, grad, info) == SD_OK) {
        free(ring);
        free(gB);
        S_master_free(&m);
        free(grad);
        free(cand);
        return SD_OK;
    }
    free(ring);
    free(gB);
    ring = NULL;
    double delta = S_DELTA0, Ak = S_eval(g, lam, grad, 1);
    double Lc = Ak + S_eval(g, lam, NULL, 2), best = Lc, plow = -INFINITY;
    size_t iter = 1, nnull = 0;
    int rc = SD_OK;
    S_cut(&m, N, Ak, grad, lam);
    for (;;) {
        if (sd_lp_now() - t0 > seconds || iter >= max_iter)
            break;
        /* the master within the trust region around lam */
        for (size_t i = 0; i < N; i++)
            if (m.act[i])
                glp_set_col_bnds(m.lp, m.act[i], GLP_DB, lam[i] - delta, lam[i] + delta);
        double left = seconds - (sd_lp_now() - t0);
        sm.tm_lim = left < 2e6 ? (int)ceil(1000.0 * left) + 1 : INT_MAX;
        int sr = glp_simplex(m.lp, &sm);
        if (sr == GLP_ETMLIM)
            break;
        if (sr != 0 || glp_get_status(m.lp) != GLP_OPT) {
            glp_std_basis(m.lp);
            sr = glp_simplex(m.lp, &sm);
            if (sr == GLP_ETMLIM)
                break;
        }
        if (sr != 0 || glp_get_status(m.lp) != GLP_OPT) {
            info->master_failed = 1;
            break;
        }
        double model = glp_get_obj_val(m.lp), pred = Lc - model;
        info->model_gap = pred;
        int inside = 1;
        for (size_t i = 0; i < N; i++) {
            cand[i] = m.act[i] ? glp_get_col_prim(m.lp, m.act[i]) : 0.0;
            if (m.act[i] && !(fabs(cand[i] - lam[i]) < delta * (1.0 - 1e-9)))
                inside = 0;
        }
        if (inside) {
            /* the box does not bind: the master's dual is a primal point */
            double pv, pr;
            S_primal(g, &m, &pv, &pr);
            if (pr <= S_RESIDUAL && pv > plow) {
                plow = pv;
                info->primal = pv;
                info->primal_residual = pr;
            } else if (!(plow > -INFINITY) && !(pr >= info->primal_residual)) {
                info->primal = pv;
                info->primal_residual = pr;
            }
            if (best - plow <= S_GAP) {
                info->converged = 1;
                break;
            }
        }
        if (pred <= S_GAP) {
            /* the model's minimum in the trust region is within 1e-9 of
             * L(center); strictly inside the region it is the model's global
             * minimum, a lower bound on min L: converged.  On the region's
             * boundary, widen it. */
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
        Ak = S_eval(g, cand, grad, 1);
        double Lk = Ak + S_eval(g, cand, NULL, 2);
        iter++;
        info->last = Lk;
        if (Lk < best)
            best = Lk;
        S_cut(&m, N, Ak, grad, cand);
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
    if (!(plow > -INFINITY) && glp_get_status(m.lp) == GLP_OPT)
        S_primal(g, &m, &info->primal, &info->primal_residual);
    info->method = "cutting planes (GLPK)";
    info->value = Lc < best ? Lc : best;
    info->center = Lc;
    info->iters = iter;
    info->seconds = sd_lp_now() - t0;
    info->delta = delta;
    S_master_free(&m);
    free(grad);
    free(cand);
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
