/* tree_ot.c — the full-information bound for a draft token tree (issue
 * 15): over every coupling of the drafted tree T with the target sequence
 * Y = (y_t, ..., y_{t+D-1}) ~ q from the context, maximise the expected
 * depth to which Y's path stays inside the tree,
 *     E[ max{ l : Y^l is a root path of T } ].
 * The tree block analogue of block-level optimal transport (Hu et al.,
 * Def. 1; lp/block_ot.c): any valid verifier's accepted path is a root
 * path of T and a prefix of an output that follows q, so
 * tree-valid <= tree-ot.  T enters through its set of root paths
 * (treelp/tree_valid.c); the LP is the transport between path sets (mass
 * P(S)) and target sequences (mass q(o)) with gain max{l : o^l ∈ S}.  At
 * depth 1 the gain is 1{y ∈ drafts}: OTM-k (Sun et al. 2023, eq. 4).
 *
 * Network form (--method flow, the default), as block-ot's (lp/block_ot.c):
 * a vertex per path set S (supply P(S)), arcs S -> T(u) for u ∈ S and the
 * root (reward |u|), and the target prefix trie T down to the leaves o
 * (demand q(o)).  A path S -> T(u) -> o has u ∈ S ∪ {root} a prefix of o,
 * so its reward |u| <= gain(S, o); routing π(S, o) across at u = o^{gain}
 * gives a flow of reward Σ π gain, and a path decomposition of a flow is a
 * coupling with at least its reward: the optima coincide.  Arcs:
 * Σ_S (|S| + 1) + Σ_{l=1..D} V^l, against S·V^D LP variables. */
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../lp/sd_lp.h"
#include "sd_treelp.h"
#include "../lp/sd_lp_flow.h"

sd_lp_size sd_lp_tree_ot_size(size_t V, const sd_params *par, int draw, size_t nsets)
{
    size_t n = sd_lp_pow(V, par->tree_depth);
    sd_lp_size s = {0};
    s.vars = sd_lp_mul(nsets, n);
    s.rows = sd_lp_add(nsets, n);
    s.nnz = sd_lp_mul(s.vars, 2);
    sd_lp_tree_what("tree-ot", V, par, draw, s.what, sizeof s.what);
    return s;
}

typedef struct S_ot {
    const sd_lp_pathsets *ps;
    size_t V, D;
    const double *qD;
    int *col;
} S_ot;

static int S_has(const size_t *ids, size_t width, size_t id)
{
    for (size_t i = 0; i < width && ids[i] != SIZE_MAX; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

static double S_gain(size_t s, size_t o, const void *ctx)
{
    const S_ot *x = ctx;
    const size_t *ids = x->ps->ids + s * x->ps->width;
    size_t V = x->V, D = x->D, l = 0, base = 0, p = 1, div = 1;
    for (size_t i = 1; i < D; i++)
        div *= V;
    /* o^l has id base(l) + o / V^{D-l} */
    for (size_t k = 1; k <= D; k++) {
        base += p;
        p *= V;
        if (!S_has(ids, x->ps->width, base + o / div))
            break;
        l = k;
        div = div > 1 ? div / V : 1;
    }
    return (double)l;
}

sd_lp_size sd_lp_tree_ot_flow_size(size_t V, const sd_params *par, int draw, size_t nsets)
{
    size_t D = par->tree_depth, trie = sd_lp_trie_id(V, D + 1, 0);
    sd_lp_size s = {0};
    /* a set holds at most the tree's nodes, plus the root */
    s.vars = sd_lp_add(sd_lp_mul(nsets, sd_lp_add(sd_params_tree_nodes(par), 1)), trie);
    s.rows = sd_lp_add(nsets, trie);
    s.nnz = sd_lp_mul(s.vars, 2);
    s.flow = 1;
    sd_lp_tree_what("tree-ot", V, par, draw, s.what, sizeof s.what);
    return s;
}

static int S_flow(const sd_lp_pathsets *ps, double *const *Q, const sd_lp_size *sz, sd_lp_result *res,
                  sd_error *err)
{
    size_t V = ps->V, D = ps->D, n = ps->n;
    sd_lp_net net;
    int rc = sd_lp_net_init(&net, n + sd_lp_trie_id(V, D + 1, 0), sz->vars, sz->what, err);
    if (rc)
        return rc;
    for (size_t s = 0; s < n; s++) {
        if (!(ps->prob[s] > 0))
            continue;
        net.b[s] = ps->prob[s];
        for (size_t k = 0, id, l, u; sd_lp_pathset_next(ps, s, &k, &id, &l, &u);)
            if (Q[l][u] > 0)
                sd_lp_net_arc(&net, s, n + id, -(int)l);
    }
    sd_lp_net_target_trie(&net, n, V, D, Q);
    rc = sd_lp_net_solve_max(&net, res, err);
    sd_lp_net_free(&net);
    return rc;
}

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    S_ot *o = ctx;
    return sd_lp_transport_build(b, o->ps->prob, o->ps->n, o->qD, sd_lp_pow(o->V, o->D), S_gain, o, o->col, err);
}

int sd_lp_tree_ot(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                  const sd_lp_opts *opts, sd_lp_result *res, sd_error *err)
{
    sd_lp_result_reset(res, NULL);
    sd_lp_pathsets *ps = NULL;
    int rc = sd_lp_tree_begin("tree-ot", c, t, a, par, draw, &ps, err);
    if (rc)
        return rc;
    size_t V = c->V, D = par->tree_depth;
    int flow = sd_lp_uses_flow(opts);
    sd_lp_size sz = flow ? sd_lp_tree_ot_flow_size(V, par, draw, ps->n) : sd_lp_tree_ot_size(V, par, draw, ps->n);
    if ((rc = sd_lp_check_size(&sz, opts ? opts->max_vars : 0, err))) {
        sd_lp_pathsets_free(ps);
        return rc;
    }
    double **Q = NULL;
    if ((rc = sd_lp_prefix_laws(c, t, a, D, 1, &Q, err))) {
        sd_lp_pathsets_free(ps);
        return rc;
    }
    if (flow) {
        double t0 = sd_lp_now();
        rc = S_flow(ps, Q, &sz, res, err);
        res->seconds = sd_lp_now() - t0;
        free(Q);
        sd_lp_pathsets_free(ps);
        return rc;
    }
    size_t n = sd_lp_pow(V, D);
    S_ot o = {ps, V, D, Q[D], calloc(ps->n * n, sizeof(int))};
    if (!o.col) {
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", sz.what);
    } else {
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_ADV_BASIS, opts, S_build, NULL, &o, res, err);
    }
    free(o.col);
    free(Q);
    sd_lp_pathsets_free(ps);
    return rc;
}
