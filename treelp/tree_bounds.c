/* tree_bounds.c — certified bounds on tree-valid where its LP is out of
 * reach (the drafted trees too many to enumerate, or the LP past the
 * memory limit).
 *
 * Lower bound: the value of a valid verifier.  Every built-in tree
 * verifier (sims/verifiers/, not a control) that supports the drafting
 * rule is lossless, so its expected accepted length is at most tree-valid.
 * Where the drafted trees can be enumerated, each one's exact value
 * (sims/exact/sd_exact_tree.h) is taken; elsewhere the top-down rules
 * (recursive rejection sampling from the root down, SpecInfer, Miao et al.
 * 2024; with drafts without replacement, Jeon et al. 2024) are evaluated
 * by a recursion over the target prefixes instead: at a node with path u
 * the rule looks at u's children only, accepts a child with token x with
 * probability A_u(x), and the accepted child's subtree, drafted from x
 * alone, is verified in the same way, so
 *     E(u) = Σ_x A_u(x) (1 + E(u x)),   E(u) = 0 at depth D,
 * with A_u computed by enumerating u's children (V^b of them) and running
 * the verifier's own outcome (sd_tree_outcome) on the one-level tree.  The
 * value is E(root), exact (tests/test_tree_bounds.c checks it against the
 * enumeration).  Traversal verification (leaves first) and the scaled
 * rules do not decompose so: beyond enumeration they get a Monte-Carlo
 * value on the trial engine (first iterations from the context), reported
 * beside the bounds but never taken as the lower bound, and flagged when
 * not 4 standard errors below it.  The recursive transport verifier and
 * the Lagrangian's primal mixture (tree_lagrange.c, taken when its
 * node-row residual is at most 1e-9) are lower bounds too.
 *
 * Upper bound: tree-ot where its trees can be enumerated (tree-valid <=
 * tree-ot, the full-information relaxation); elsewhere the relaxation of
 * tree-ot by its path marginals: for any coupling of T and Y,
 *     E[depth] = Σ_{l=1}^D P(Y^l ∈ T) = Σ_l Σ_{x ∈ V^l} P(Y^l = x, x ∈ T)
 *             <= Σ_l Σ_x min(q(x), P(x ∈ T)),
 * with P(x ∈ T) by the branching structure: with i.i.d. drafts the number
 * N_l of nodes with path x^l has the generating function
 * G_l(s) = G_{l-1}((1 - p_l + p_l s)^{b_l}), G_0(s) = s (each of the
 * N_{l-1}·b_l children is x_l with probability p_l = p(x_l | x^{l-1})), so
 * P(x ∈ T) = 1 - G_l(0); without replacement or top-k a path occurs at
 * most once and P(x^l ∈ T) = P(x^{l-1} ∈ T)·P(x_l among the children of
 * x^{l-1}), the latter by enumerating one node's children.  The bound is
 * at least tree-ot (it equals it on a chain: Sun et al. 2024, Thm 1).
 * Where the trees cannot be enumerated tree-ot itself comes from column
 * generation over stop rules (tree_ot_cg.c), certified between two ends;
 * its upper end is a candidate, and the upper bound is shown to be at most
 * tree-ot when it is at most the lower end (+1e-9).  The Lagrangian bound
 * (tree_lagrange.c) relaxes tree-valid itself and needs no enumeration;
 * the upper bound is the least of these. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_stats.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../lp/sd_lp.h"
#include "sd_treelp.h"

/* The largest node-row residual of the Lagrangian's primal mixture taken
 * as the lower bound (the CLP route's certificate standard). */
#define S_PRIMAL_RESIDUAL 1e-9
/* The gap at which the bounds are the optimum (the exact route's standard). */
#define S_GAP_EXACT 1e-9

/* Largest Σ_{l<D} V^l · (children sequences of a node) the recursion visits. */
#define S_MAX_VISITS 5e7

/* --- one node's children ---------------------------------------------------- */

typedef struct S_node {
    const sd_chain *c;
    sd_tree *tr;      /* a one-level tree */
    sd_tree_draw draw;
    const sd_tree_kind *k; /* NULL: inclusion probabilities only */
    double *w;        /* [nodes][V] */
    double *acc;      /* [V]: P(a child with token x is accepted) */
    double *incl;     /* [V]: P(x among the children) */
    uint64_t *mask;   /* the children's token sets (V <= 64), when not NULL */
    double *mprob;
    size_t nmask, capmask;
    int oom;
} S_node;

static void S_children(S_node *e, size_t v, double prob)
{
    sd_tree *tr = e->tr;
    size_t V = tr->V;
    if (v == tr->nodes) {
        if (e->k) {
            sd_tree_outcome(tr, e->c, e->k, e->draw);
            for (size_t u = 1; u < tr->nodes; u++)
                if (tr->tok[u] != SD_TREE_NONE)
                    e->acc[tr->tok[u]] += prob * tr->pi[u];
        } else if (e->mask) {
            uint64_t m = 0;
            for (size_t u = 1; u < tr->nodes; u++)
                if (tr->tok[u] != SD_TREE_NONE)
                    m |= (uint64_t)1 << tr->tok[u];
            if (e->nmask == e->capmask) {
                size_t cap = e->capmask ? 2 * e->capmask : 256;
                uint64_t *mk = realloc(e->mask, cap * sizeof *mk);
                if (mk)
                    e->mask = mk;
                double *mp = mk ? realloc(e->mprob, cap * sizeof *mp) : NULL;
                if (mp)
                    e->mprob = mp;
                if (!mk || !mp) {
                    e->oom = 1;
                    return;
                }
                e->capmask = cap;
            }
            e->mask[e->nmask] = m;
            e->mprob[e->nmask++] = prob;
        } else {
            for (size_t u = 1; u < tr->nodes; u++) {
                size_t x = tr->tok[u], seen = 0;
                for (size_t j = 1; j < u && x != SD_TREE_NONE; j++)
                    seen |= tr->tok[j] == x;
                if (x != SD_TREE_NONE && !seen)
                    e->incl[x] += prob;
            }
        }
        return;
    }
    double *w = e->w + v * V;
    if (sd_tree_draft_law(tr, e->c, v, e->draw, w) <= 0.0) {
        tr->tok[v] = SD_TREE_NONE;
        S_children(e, v + 1, prob);
        return;
    }
    for (size_t x = 0; x < V; x++)
        if (w[x] > 0.0) {
            tr->tok[v] = x;
            S_children(e, v + 1, prob * w[x]);
        }
}

/* The children of the node with path u (u ∈ V^l, l < D) of par's tree from
 * the context (t, a): acc (when k) or incl over V tokens. */
static int S_node_laws(S_node *e, const sd_params *par, size_t t, size_t a, size_t l, size_t u, sd_error *err)
{
    sd_params p1 = *par;
    p1.tree_depth = 1;
    p1.tree[0] = par->tree[l];
    int rc = sd_tree_new(&e->tr, e->c->V, &p1, err);
    if (rc)
        return rc;
    sd_tree_cut(e->tr, 1, t + l, l == 0 ? a : u % e->c->V);
    e->w = malloc(e->tr->nodes * e->c->V * sizeof *e->w);
    if (!e->w) {
        sd_tree_free(e->tr);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
    }
    if (e->k)
        memset(e->acc, 0, e->c->V * sizeof *e->acc);
    else if (e->mask)
        e->nmask = 0;
    else
        memset(e->incl, 0, e->c->V * sizeof *e->incl);
    S_children(e, 1, 1.0);
    sd_tree_free(e->tr);
    free(e->w);
    e->tr = NULL;
    e->w = NULL;
    return SD_OK;
}

/* Σ_{l<D} V^l · (sequences of one node's children at depth l). */
static double S_visits(size_t V, const sd_params *par, sd_tree_draw draw)
{
    double n = 0.0, nodes = 1.0;
    for (size_t l = 0; l < par->tree_depth; l++) {
        double f = 1.0;
        for (size_t j = 0; j < par->tree[l]; j++)
            f *= draw == SD_DRAW_TOPK ? 1.0 : draw == SD_DRAW_WOR ? (double)(j < V ? V - j : 1) : (double)V;
        n += nodes * f;
        nodes *= (double)V;
    }
    return n;
}

/* --- the lower bound -------------------------------------------------------- */

int sd_lp_tree_topdown_value(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                             const sd_tree_kind *k, double *value, sd_error *err)
{
    size_t V = c->V, D = par->tree_depth;
    int rc = sd_lp_tree_context("tree-valid", c, t, a, par, err);
    if (rc)
        return rc;
    if (k->rule != SD_TREE_TOPDOWN)
        return sd_error_set(err, SD_EUSAGE, "%s does not verify from the root down", k->name);
    if (S_visits(V, par, (sd_tree_draw)draw) > S_MAX_VISITS)
        return sd_error_set(err, SD_ETOOBIG, "%s's recursion would visit %.3g children sequences; the limit is %.0f",
                            k->name, S_visits(V, par, (sd_tree_draw)draw), S_MAX_VISITS);
    double *E = calloc(sd_lp_pow(V, D), sizeof *E), *En = calloc(sd_lp_pow(V, D), sizeof *En);
    double *acc = malloc(V * sizeof *acc);
    if (!E || !En || !acc) {
        free(E);
        free(En);
        free(acc);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
    }
    S_node e = {.c = c, .draw = (sd_tree_draw)draw, .k = k, .acc = acc};
    /* En holds E at depth l+1 (zero at depth D) while E at depth l is built */
    for (size_t l = D; l-- > 0 && !rc;) {
        size_t n = sd_lp_pow(V, l);
        for (size_t u = 0; u < n && !rc; u++) {
            rc = S_node_laws(&e, par, t, a, l, u, err);
            double s = 0.0;
            for (size_t x = 0; x < V && !rc; x++)
                s += acc[x] * (1.0 + En[u * V + x]);
            E[u] = s;
        }
        double *sw = E;
        E = En;
        En = sw;
    }
    if (!rc)
        *value = En[0];
    free(E);
    free(En);
    free(acc);
    return rc;
}

/* --- a better lower bound: the recursive transport verifier ------------------ */

/* At a node u, couple the target token Y ~ q(.|u) with u's children (their
 * token set C) to maximise Σ_x P(Y = x, x ∈ C) w(x), w(x) = 1 + E(u x);
 * follow the child Y when it is one, else stop and emit Y.  Y has law
 * q(.|u) and the stop depends on (C, Y) only, the future being drawn
 * afresh: lossless.  The coupling is the LP
 *   max Σ_{C, x ∈ C} w(x) π(C, x),  Σ_x π(C, x) <= P(C),  Σ_C π(C, x) <= q(x),
 * (a sub-coupling; the rest is paired without following).  Recursive
 * rejection sampling is one such coupling at every node, so this verifier
 * is at least tree-rrs (tree-rrs-wor, tree-topk); at depth 1 it is OTM-k. */
typedef struct S_rt {
    const uint64_t *mask;
    const double *prob, *q, *w;
    size_t n, V;
} S_rt;

static int S_rt_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    (void)err;
    S_rt *r = ctx;
    int qrow[64];
    for (size_t x = 0; x < r->V; x++)
        qrow[x] = sd_lp_row_lower(b, -r->q[x]); /* -Σ_C π(C, x) >= -q(x) */
    for (size_t i = 0; i < r->n; i++) {
        int row = sd_lp_row_lower(b, -r->prob[i]);
        for (size_t x = 0; x < r->V; x++)
            if ((r->mask[i] >> x) & 1u) {
                int j = sd_lp_col(b, 0.0, HUGE_VAL, r->w[x]);
                sd_lp_entry(b, row, j, -1.0);
                sd_lp_entry(b, qrow[x], j, -1.0);
            }
    }
    return SD_OK;
}

static int S_cmp_mask(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

int sd_lp_tree_transport_value(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                               double *value, sd_error *err)
{
    size_t V = c->V, D = par->tree_depth;
    int rc = sd_lp_tree_context("tree-valid", c, t, a, par, err);
    if (rc)
        return rc;
    if (V > 64 || S_visits(V, par, (sd_tree_draw)draw) > S_MAX_VISITS / 10)
        return sd_error_set(err, SD_ETOOBIG, "the recursive transport verifier needs V <= 64 and at most %.0f "
                            "children sequences", S_MAX_VISITS / 10);
    double *E = calloc(sd_lp_pow(V, D), sizeof *E), *En = calloc(sd_lp_pow(V, D), sizeof *En);
    double *w = malloc(V * sizeof *w);
    uint64_t *key = NULL;
    S_node e = {.c = c, .draw = (sd_tree_draw)draw};
    e.mask = malloc(256 * sizeof *e.mask);
    e.mprob = malloc(256 * sizeof *e.mprob);
    e.capmask = 256;
    if (!E || !En || !w || !e.mask || !e.mprob)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
    for (size_t l = D; l-- > 0 && !rc;) {
        size_t n = sd_lp_pow(V, l);
        for (size_t u = 0; u < n && !rc; u++) {
            rc = S_node_laws(&e, par, t, a, l, u, err);
            if (!rc && e.oom)
                rc = sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
            if (rc)
                break;
            /* merge equal sets: sort (mask, index) pairs */
            free(key);
            key = malloc(2 * e.nmask * sizeof *key + 1);
            if (!key) {
                rc = sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
                break;
            }
            for (size_t i = 0; i < e.nmask; i++) {
                key[2 * i] = e.mask[i];
                key[2 * i + 1] = i;
            }
            qsort(key, e.nmask, 2 * sizeof *key, S_cmp_mask);
            size_t m = 0;
            double *pr = malloc((e.nmask + 1) * sizeof *pr);
            uint64_t *mk = malloc((e.nmask + 1) * sizeof *mk);
            if (!pr || !mk) {
                free(pr);
                free(mk);
                rc = sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
                break;
            }
            for (size_t i = 0; i < e.nmask; i++) {
                double pi = e.mprob[key[2 * i + 1]];
                if (m && mk[m - 1] == key[2 * i])
                    pr[m - 1] += pi;
                else {
                    mk[m] = key[2 * i];
                    pr[m++] = pi;
                }
            }
            for (size_t x = 0; x < V; x++)
                w[x] = 1.0 + En[u * V + x];
            const double *q = sd_chain_q(c, t + l, l == 0 ? a : u % V);
            S_rt r = {mk, pr, q, w, m, V};
            sd_lp_size sz = {0};
            sz.vars = m * V + 1;
            sz.rows = m + V + 1;
            sz.nnz = 2 * m * V + 1;
            snprintf(sz.what, sizeof sz.what, "the recursive transport coupling");
            sd_lp_opts o;
            sd_lp_opts_default(&o);
            o.method = SD_LP_METHOD_SIMPLEX;
            o.max_vars = sz.vars;
            sd_lp_result res;
            rc = sd_lp_solve(&sz, SD_LP_MAXIMISE, &o, S_rt_build, NULL, &r, &res, err);
            if (!rc && !res.optimal)
                rc = sd_error_set(err, SD_ESOLVER, "the recursive transport coupling ended with '%s'", res.status);
            if (!rc)
                E[u] = res.optimum;
            free(pr);
            free(mk);
        }
        double *sw = E;
        E = En;
        En = sw;
    }
    if (!rc)
        *value = En[0];
    free(key);
    free(E);
    free(En);
    free(w);
    free(e.mask);
    free(e.mprob);
    return rc;
}

/* --- the upper bound -------------------------------------------------------- */

int sd_lp_tree_marginal_bound(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                              double *value, sd_error *err)
{
    size_t V = c->V, D = par->tree_depth;
    int rc = sd_lp_tree_context("tree-ot", c, t, a, par, err);
    if (rc)
        return rc;
    if (draw != SD_DRAW_IID && S_visits(V, par, (sd_tree_draw)draw) > S_MAX_VISITS)
        return sd_error_set(err, SD_ETOOBIG, "the path marginals would visit %.3g children sequences; the limit is "
                            "%.0f", S_visits(V, par, (sd_tree_draw)draw), S_MAX_VISITS);
    double **Q = NULL;
    if ((rc = sd_lp_prefix_laws(c, t, a, D, 1, &Q, err)))
        return rc;
    double *P = calloc(sd_lp_pow(V, D), sizeof *P), *Pn = calloc(sd_lp_pow(V, D), sizeof *Pn);
    double *incl = malloc(V * sizeof *incl);
    if (!P || !Pn || !incl) {
        free(Q);
        free(P);
        free(Pn);
        free(incl);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tree bounds");
    }
    S_node e = {.c = c, .draw = (sd_tree_draw)draw, .incl = incl};
    size_t path[SD_TREE_MAX_DEPTH + 1];
    double sum = 0.0;
    P[0] = 1.0; /* the root */
    for (size_t l = 1; l <= D && !rc; l++) {
        size_t n = sd_lp_pow(V, l);
        if (draw == SD_DRAW_IID) {
            for (size_t x = 0; x < n; x++) {
                size_t r = x;
                for (size_t j = l; j >= 1; j--) {
                    path[j] = r % V;
                    r /= V;
                }
                double s = 0.0; /* G_l(0), innermost level first */
                for (size_t j = l; j >= 1; j--) {
                    double pj = sd_chain_p(c, t + j - 1, j == 1 ? a : path[j - 1])[path[j]];
                    s = pow(1.0 - pj + pj * s, (double)par->tree[j - 1]);
                }
                Pn[x] = 1.0 - s;
            }
        } else {
            for (size_t u = 0; u < n / V && !rc; u++) {
                if (!(P[u] > 0.0)) {
                    for (size_t y = 0; y < V; y++)
                        Pn[u * V + y] = 0.0;
                    continue;
                }
                rc = S_node_laws(&e, par, t, a, l - 1, u, err);
                for (size_t y = 0; y < V && !rc; y++)
                    Pn[u * V + y] = P[u] * fmin(1.0, incl[y]);
            }
        }
        for (size_t x = 0; x < n && !rc; x++)
            sum += fmin(Q[l][x], Pn[x]);
        double *sw = P;
        P = Pn;
        Pn = sw;
    }
    if (!rc)
        *value = sum;
    free(Q);
    free(P);
    free(Pn);
    free(incl);
    return rc;
}

/* --- Monte-Carlo of a verifier ------------------------------------------------ */

/* The mean accepted draft tokens of vt's first iteration from the context
 * (t, a), trials i = 0..n-1 on the trial engine's streams (seed, i), on
 * the chain restricted to positions t..t+D with x_0 = a. */
static int S_monte_carlo(const sd_verifier_type *vt, const sd_chain *c, size_t t, size_t a, const sd_params *par,
                         int draw, uint64_t trials, uint64_t seed, sd_welford *acc, sd_error *err)
{
    size_t V = c->V, D = par->tree_depth, h = D + 1;
    sd_params vp;
    sd_params_defaults(&vp, vt);
    char shape[SD_TREE_MAX_DEPTH * 24 + 1] = "";
    for (size_t l = 0, used = 0; l < D && used < sizeof shape; l++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%zu", l ? "," : "", par->tree[l]);
    int rc = sd_params_parse(&vp, vt, "tree", shape, err);
    if (!rc)
        rc = sd_params_parse(&vp, vt, "draw", sd_tree_draw_name((sd_tree_draw)draw), err);
    if (rc)
        return rc;
    sd_chain *s = sd_chain_alloc(V, h, h, h, err);
    if (!s)
        return err ? (int)err->code : SD_ENOMEM;
    s->init[a] = 1.0;
    for (size_t i = 0; i < h; i++)
        for (size_t r = 0; r < V; r++) {
            memcpy(s->draft + (i * V + r) * V, sd_chain_p(c, t + i, r), V * sizeof(double));
            memcpy(s->target + (i * V + r) * V, sd_chain_q(c, t + i, r), V * sizeof(double));
        }
    sd_sim_opts so;
    memset(&so, 0, sizeof so);
    so.seed = seed;
    so.trials = trials;
    so.stop.first_iteration = 1;
    sd_sim_result res;
    memset(&res, 0, sizeof res);
    rc = sd_sim_run(vt, s, &vp, &so, &res, err);
    if (!rc)
        *acc = res.accepted;
    sd_sim_result_free(&res);
    sd_chain_free(s);
    return rc;
}

/* --- both ------------------------------------------------------------------- */

void sd_lp_tree_bounds_opts_default(sd_lp_tree_bounds_opts *o)
{
    memset(o, 0, sizeof *o);
    o->lagrange_seconds = 20.0;
    o->ot_seconds = 20.0;
    o->trials = 0;
    o->seed = 1;
}

int sd_lp_tree_valid_bounds(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                            sd_lp_tree_bounds *b, sd_error *err)
{
    sd_lp_tree_bounds_opts o;
    sd_lp_tree_bounds_opts_default(&o);
    return sd_lp_tree_valid_bounds_opts(c, t, a, par, draw, &o, b, err);
}

static sd_lp_tree_bound_verifier *S_entry(sd_lp_tree_bounds *b, const char *name, const char *method)
{
    if (b->nverifiers == SD_LP_TREE_BOUNDS_MAX_VERIFIERS)
        return NULL;
    sd_lp_tree_bound_verifier *v = &b->verifiers[b->nverifiers++];
    snprintf(v->name, sizeof v->name, "%s", name);
    snprintf(v->method, sizeof v->method, "%s", method);
    v->value = NAN;
    v->stderr_ = NAN;
    return v;
}

int sd_lp_tree_valid_bounds_opts(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                                 const sd_lp_tree_bounds_opts *o, sd_lp_tree_bounds *b, sd_error *err)
{
    memset(b, 0, sizeof *b);
    b->lower = 0.0; /* the verifier that rejects at the root */
    snprintf(b->lower_by, sizeof b->lower_by, "reject at the root");
    b->upper = b->marginals = b->tree_ot = b->lagrangian = b->tree_ot_lower = b->tree_ot_upper = NAN;
    b->seed = o->seed;
    double t0 = sd_lp_now();
    int rc = sd_lp_tree_context("tree-valid", c, t, a, par, err);
    if (rc)
        return rc;
    int enumerable = sd_exact_tree_count(c->V, par, (sd_tree_draw)draw) <= SD_EXACT_TREE_MAX_TREES;
    /* the exact values first (they make the lower bound), then Monte-Carlo */
    const sd_verifier_type *mc[SD_LP_TREE_BOUNDS_MAX_VERIFIERS];
    sd_lp_tree_bound_verifier *mcv[SD_LP_TREE_BOUNDS_MAX_VERIFIERS];
    size_t nmc = 0;
    for (size_t i = 0; sd_verifiers[i]; i++) {
        const sd_verifier_type *vt = sd_verifiers[i];
        const sd_tree_kind *k = vt->tree;
        if (!k || (vt->flags & SD_VERIFIER_CONTROL) || k->bugs || !(k->draws & (1u << draw)) ||
            k->rule == SD_TREE_PLAN) /* tree-lp plays the LP this bounds */
            continue;
        double v = NAN;
        sd_error e2;
        int r2;
        const char *how;
        if (enumerable) {
            r2 = sd_exact_tree_accept(c, t, a, par, k, &v, NULL, &e2);
            how = "enumerated";
        } else if (k->rule == SD_TREE_TOPDOWN) {
            r2 = sd_lp_tree_topdown_value(c, t, a, par, draw, k, &v, &e2);
            how = "recursion";
        } else {
            r2 = SD_ETOOBIG;
            how = NULL;
        }
        if (r2 == SD_ENOMEM)
            return sd_error_set(err, SD_ENOMEM, "%s", e2.msg);
        sd_lp_tree_bound_verifier *en = S_entry(b, k->name, r2 ? "not measured" : how);
        if (!r2) {
            if (en)
                en->value = v;
            if (v > b->lower) {
                b->lower = v;
                snprintf(b->lower_by, sizeof b->lower_by, "%s (%s)", k->name, how);
            }
        } else if (en && o->trials > 0) {
            mc[nmc] = vt;
            mcv[nmc++] = en;
        }
    }
    {
        double v = NAN;
        sd_error e2;
        int r2 = sd_lp_tree_transport_value(c, t, a, par, draw, &v, &e2);
        if (r2 == SD_ENOMEM)
            return sd_error_set(err, SD_ENOMEM, "%s", e2.msg);
        if (!r2) {
            sd_lp_tree_bound_verifier *en = S_entry(b, "recursive-transport", "restricted LP");
            if (en)
                en->value = v;
        }
        if (!r2 && v > b->lower) {
            b->lower = v;
            snprintf(b->lower_by, sizeof b->lower_by, "recursive transport (a restricted LP)");
        }
    }
    for (size_t j = 0; j < nmc; j++) {
        sd_welford w;
        sd_error e2;
        int r2 = S_monte_carlo(mc[j], c, t, a, par, draw, o->trials, o->seed, &w, &e2);
        if (r2 == SD_ENOMEM)
            return sd_error_set(err, SD_ENOMEM, "%s", e2.msg);
        if (r2)
            continue;
        mcv[j]->value = w.mean;
        mcv[j]->stderr_ = sd_welford_stderr(&w);
        mcv[j]->trials = o->trials;
        snprintf(mcv[j]->method, sizeof mcv[j]->method, "monte-carlo");
    }
    double m = NAN;
    sd_error em;
    rc = sd_lp_tree_marginal_bound(c, t, a, par, draw, &m, &em);
    if (rc && rc != SD_ETOOBIG)
        return sd_error_set(err, rc, "%s", em.msg);
    if (!rc) {
        b->upper = b->marginals = m;
        snprintf(b->upper_by, sizeof b->upper_by, "path marginals");
    }
    rc = SD_OK;
    if (enumerable) {
        sd_lp_opts fo;
        sd_lp_opts_default(&fo);
        fo.method = SD_LP_METHOD_FLOW;
        sd_lp_result r;
        sd_error e2;
        if (!sd_lp_tree_ot(c, t, a, par, draw, &fo, &r, &e2) && r.optimal) {
            b->tree_ot = b->tree_ot_lower = b->tree_ot_upper = r.optimum;
            snprintf(b->tree_ot_method, sizeof b->tree_ot_method, "network flow");
            if (!(r.optimum >= b->upper)) {
                b->upper = r.optimum;
                snprintf(b->upper_by, sizeof b->upper_by, "tree-ot");
            }
        }
    } else if (o->ot_seconds > 0.0) {
        sd_error e2;
        int r2 = sd_lp_tree_ot_cg(c, t, a, par, draw, o->ot_seconds, SD_LP_TREE_OT_ROWS_OT, &b->ot_cg, &e2);
        if (r2 == SD_ENOMEM)
            return sd_error_set(err, SD_ENOMEM, "%s", e2.msg);
        if (!r2) {
            b->tree_ot_lower = b->ot_cg.lower;
            /* the path marginals bound tree-ot too */
            b->tree_ot_upper = b->ot_cg.upper <= b->marginals ? b->ot_cg.upper : isnan(b->marginals)
                               ? b->ot_cg.upper : b->marginals;
            if (b->ot_cg.optimal)
                b->tree_ot = b->ot_cg.upper;
            snprintf(b->tree_ot_method, sizeof b->tree_ot_method, "column generation");
            if (!(b->ot_cg.upper >= b->upper)) {
                b->upper = b->ot_cg.upper;
                snprintf(b->upper_by, sizeof b->upper_by, "tree-ot");
            }
        }
    }
    if (o->lagrange_seconds > 0.0) {
        sd_error e2;
        int r2 = sd_lp_tree_lagrange_bound(c, t, a, par, draw, o->lagrange_seconds, b->lower, &b->lagrange, &e2);
        if (r2 == SD_ENOMEM)
            return sd_error_set(err, SD_ENOMEM, "%s", e2.msg);
        if (!r2 && b->lagrange.primal_residual <= S_PRIMAL_RESIDUAL && b->lagrange.primal > b->lower &&
            b->lagrange.primal <= b->lagrange.value + S_PRIMAL_RESIDUAL) {
            /* the cutting planes' primal mixture: a point of tree-valid's LP
             * with node-row residual at most 1e-9, the exact route's standard */
            b->lower = b->lagrange.primal;
            b->lower_primal = 1;
            snprintf(b->lower_by, sizeof b->lower_by, "lagrangian primal (node-row residual %.0e)",
                     b->lagrange.primal_residual);
        }
        if (!r2) {
            b->lagrangian = b->lagrange.value;
            if (!(b->lagrangian >= b->upper)) {
                b->upper = b->lagrangian;
                snprintf(b->upper_by, sizeof b->upper_by, "lagrangian");
            }
        }
    }
    if (isnan(b->upper))
        return sd_error_set(err, SD_ETOOBIG, "no bound is within reach either: %s", em.msg);
    /* against the final lower bound (the Lagrangian's primal point may
     * have raised it after the Monte-Carlo runs) */
    for (size_t j = 0; j < nmc; j++)
        if (mcv[j]->trials) {
            mcv[j]->above_lower = mcv[j]->value + 4.0 * mcv[j]->stderr_ > b->lower;
            b->mc_above_lower |= mcv[j]->above_lower;
        }
    b->gap = b->upper - b->lower;
    b->upper_below_tree_ot = b->upper <= b->tree_ot_lower + S_GAP_EXACT;
    b->exact = b->lower_primal && b->lagrange.converged && b->gap <= S_GAP_EXACT;
    b->seconds = sd_lp_now() - t0;
    return SD_OK;
}
