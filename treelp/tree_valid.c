/* tree_valid.c — the best valid verifier for a draft token tree:
 * the valid-verify LP (Sun et al. 2025, Def. 1 / Lemma 2; lp/valid_verify.c)
 * with the draft block replaced by a drafted tree.
 *
 * From the context (position t after x_{t-1} = a) a tree T of shape
 * b_1..b_D is drafted by the rule --draw (sims/verifiers/sd_tree.h).  A verifier sees
 * T and outputs a root path u of T (accepted length l = |u|) and a token
 * y; the later tokens are drawn from q.  Its law is w(T, u, y).  It is
 * valid when the output's first D+1 tokens o follow q:
 *   Σ_T P(T) Σ_l w(T, o^l, o_{l+1}) 1{o^l ∈ T} q(o_{l+2..D+1} | o^{l+1}) = q(o).
 * Maximise E[l].  As in valid_verify.c the law of T enters only through
 * z_l(u y) = Σ_T P(T) w(T, u, y) 1{u ∈ T}, and with r_l = z_l / q the
 * validity rows read Σ_l r_l(o^{l+1}) = 1.
 *
 * Sharing.  Two trees with the same set of root paths (iid siblings can
 * repeat a token; the order of siblings does not matter) offer the same
 * choices, so averaging an optimal verifier over each class keeps it valid
 * and optimal: the LP has one block of variables per path set S, with mass
 * P(S) = Σ_{T: paths(T) = S} P(T).  Variables v(S, u, y) = P(S) w(S, u, y):
 *   Σ_{u ∈ S ∪ {root}, y} v(S, u, y) = P(S)                 for every S,
 *   q(u y) r_l(u y) - Σ_S v(S, u, y) = 0                    for q(u y) > 0,
 *   Σ_l r_l(o^{l+1}) = 1                                    for q(o) > 0 (one dropped),
 * maximise Σ l v.  On a chain (1,...,1) it is valid-verify; at depth 1 with
 * i.i.d. drafts it is OTM-k (the coupling of k drafts with one target
 * token, Sun et al. 2023, eq. 4): tests/test_trees.c checks both to 1e-9. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../lp/sd_lp.h"
#include "sd_treelp.h"
#include "../lp/sd_lp_flow.h"

/* --- path sets ---------------------------------------------------------------- */

/* The id of the path u ∈ V^l: sd_lp_trie_id(V, l, u) (the root: 0). */

typedef struct S_enum {
    const sd_chain *c;
    sd_tree_draw draw;
    sd_tree *tr;
    double *w;
    size_t *pid, *key; /* [nodes]: path index per node; the sorted ids */
    size_t width;      /* nodes - 1 */
    size_t n, cap;
    size_t *ids;       /* [cap][width] */
    double *prob;
    int oom;
} S_enum;

static int S_cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

static _Thread_local size_t S_sort_width;
static int S_cmp_set(const void *x, const void *y)
{
    const size_t *a = x, *b = y;
    for (size_t i = 0; i < S_sort_width; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Merges the rows with the same path set (summing their probabilities):
 * sorts (ids, row) records, then keeps one row per set. */
static void S_compact(S_enum *e)
{
    size_t rw = e->width + 1, n = e->n, m = 0;
    size_t *rows = malloc((n ? n : 1) * rw * sizeof *rows);
    double *prob = malloc((n ? n : 1) * sizeof *prob);
    if (!rows || !prob) {
        free(rows);
        free(prob);
        e->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(rows + i * rw, e->ids + i * e->width, e->width * sizeof *rows);
        rows[i * rw + e->width] = i;
    }
    S_sort_width = e->width;
    qsort(rows, n, rw * sizeof *rows, S_cmp_set);
    for (size_t i = 0; i < n; i++) {
        const size_t *r = rows + i * rw;
        if (m > 0 && memcmp(e->ids + (m - 1) * e->width, r, e->width * sizeof *r) == 0) {
            prob[m - 1] += e->prob[r[e->width]];
            continue;
        }
        prob[m] = e->prob[r[e->width]];
        memcpy(e->ids + m * e->width, r, e->width * sizeof *r);
        m++;
    }
    memcpy(e->prob, prob, m * sizeof *prob);
    e->n = m;
    free(rows);
    free(prob);
}

static void S_leaf(S_enum *e, double prob)
{
    sd_tree *tr = e->tr;
    size_t V = tr->V, k = 0;
    e->pid[0] = 0;
    for (size_t v = 1; v < tr->nodes; v++) {
        size_t w = sd_tree_parent(tr, v), l = sd_tree_depth_of(tr, v);
        if (tr->tok[v] == SD_TREE_NONE)
            continue;
        e->pid[v] = e->pid[w] * V + tr->tok[v];
        e->key[k++] = sd_lp_trie_id(V, l, e->pid[v]);
    }
    qsort(e->key, k, sizeof *e->key, S_cmp_size);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || e->key[m - 1] != e->key[i])
            e->key[m++] = e->key[i];
    for (; m < e->width; m++)
        e->key[m] = SIZE_MAX;
    int compacted = 0;
    if (e->n == e->cap && e->cap >= 65536) {
        S_compact(e);
        compacted = 1;
    }
    if (e->oom)
        return;
    if (e->n == e->cap || (compacted && e->n > e->cap / 2)) { /* grow */
        size_t cap = e->cap ? 2 * e->cap : 1024;
        size_t *ids = realloc(e->ids, cap * e->width * sizeof *ids);
        if (ids)
            e->ids = ids;
        double *pr = ids ? realloc(e->prob, cap * sizeof *pr) : NULL;
        if (pr)
            e->prob = pr;
        if (!ids || !pr) {
            e->oom = 1;
            return;
        }
        e->cap = cap;
    }
    memcpy(e->ids + e->n * e->width, e->key, e->width * sizeof *e->key);
    e->prob[e->n++] = prob;
}

static void S_visit(S_enum *e, size_t u, double prob)
{
    sd_tree *tr = e->tr;
    if (e->oom)
        return;
    if (u == tr->nodes) {
        S_leaf(e, prob);
        return;
    }
    double *w = e->w + u * tr->V;
    if (sd_tree_draft_law(tr, e->c, u, e->draw, w) <= 0.0) {
        tr->tok[u] = SD_TREE_NONE;
        S_visit(e, u + 1, prob);
        return;
    }
    for (size_t x = 0; x < tr->V; x++)
        if (w[x] > 0.0) {
            tr->tok[u] = x;
            S_visit(e, u + 1, prob * w[x]);
        }
}

void sd_lp_pathsets_free(sd_lp_pathsets *ps)
{
    if (ps) {
        free(ps->ids);
        free(ps->prob);
        free(ps);
    }
}

int sd_lp_tree_pathsets(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                        sd_lp_pathsets **out, sd_error *err)
{
    *out = NULL;
    S_enum e;
    memset(&e, 0, sizeof e);
    e.c = c;
    e.draw = (sd_tree_draw)draw;
    int rc = sd_tree_new(&e.tr, c->V, par, err);
    if (rc)
        return rc;
    sd_tree_cut(e.tr, par->tree_depth, t, a);
    size_t nodes = e.tr->nodes, V = c->V;
    e.width = nodes - 1;
    e.w = malloc(nodes * V * sizeof *e.w);
    e.pid = malloc(nodes * sizeof *e.pid);
    e.key = malloc(nodes * sizeof *e.key);
    sd_lp_pathsets *ps = calloc(1, sizeof *ps);
    if (e.w && e.pid && e.key && ps)
        S_visit(&e, 1, 1.0);
    if (!e.w || !e.pid || !e.key || !ps || e.oom) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory enumerating the drafted trees");
    } else {
        S_compact(&e);
        if (e.oom) {
            rc = sd_error_set(err, SD_ENOMEM, "out of memory merging the drafted trees");
        } else {
            ps->V = V;
            ps->D = par->tree_depth;
            ps->width = e.width;
            ps->n = e.n;
            ps->ids = e.ids;
            ps->prob = e.prob;
            e.ids = NULL;
            e.prob = NULL;
        }
    }
    if (rc)
        sd_lp_pathsets_free(ps);
    else
        *out = ps;
    sd_tree_free(e.tr);
    free(e.w);
    free(e.pid);
    free(e.key);
    free(e.ids);
    free(e.prob);
    return rc;
}

int sd_lp_path_of(size_t V, size_t id, size_t *l, size_t *u)
{
    size_t len = 0, p = 1;
    while (id >= p) {
        id -= p;
        p *= V;
        len++;
    }
    *l = len;
    *u = id;
    return SD_OK;
}

int sd_lp_pathset_next(const sd_lp_pathsets *ps, size_t s, size_t *k, size_t *id, size_t *l, size_t *u)
{
    if (*k > ps->width)
        return 0;
    size_t i = *k == 0 ? 0 : ps->ids[s * ps->width + *k - 1];
    if (i == SIZE_MAX)
        return 0;
    ++*k;
    *id = i;
    return sd_lp_path_of(ps->V, i, l, u) == SD_OK;
}

/* --- sizes ---------------------------------------------------------------------- */

void sd_lp_tree_what(const char *problem, size_t V, const sd_params *par, int draw, char *buf, size_t len)
{
    char shape[64] = "";
    for (size_t i = 0, used = 0; i < par->tree_depth && used < sizeof shape; i++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%zu", i ? "," : "", par->tree[i]);
    snprintf(buf, len, "%s --tree %s --draw %s at V = %zu", problem, shape, sd_tree_draw_name((sd_tree_draw)draw), V);
}

int sd_lp_tree_enum_check(const char *problem, size_t V, const sd_params *par, int draw, sd_error *err)
{
    double n = sd_exact_tree_count(V, par, (sd_tree_draw)draw);
    if (n <= SD_EXACT_TREE_MAX_TREES)
        return SD_OK;
    char what[96];
    sd_lp_tree_what(problem, V, par, draw, what, sizeof what);
    return sd_error_set(err, SD_ETOOBIG, "%s would enumerate %.3g drafted trees; the limit is %.0f", what, n,
                        SD_EXACT_TREE_MAX_TREES);
}

sd_lp_size sd_lp_tree_valid_size(size_t V, const sd_params *par, int draw, size_t nsets, int per_output)
{
    size_t D = par->tree_depth, nodes = sd_params_tree_nodes(par), nz = 0, nn = 0;
    for (size_t l = 0; l <= D; l++) {
        nz = sd_lp_add(nz, sd_lp_pow(V, l + 1));
        nn = sd_lp_add(nn, sd_lp_pow(V, l));
    }
    size_t nv = sd_lp_mul(nsets, nodes + 1), nleaf = sd_lp_pow(V, D + 1);
    if (per_output)
        nv = sd_lp_mul(nv, V);
    sd_lp_size s = {0};
    s.vars = sd_lp_add(nv, nz);
    s.rows = sd_lp_add(sd_lp_add(nsets, per_output ? nz : nn), nleaf);
    s.nnz = sd_lp_add(sd_lp_add(sd_lp_mul(nv, 2), nz), sd_lp_mul(nleaf, D + 1));
    sd_lp_tree_what("tree-valid", V, par, draw, s.what, sizeof s.what);
    return s;
}

double sd_lp_tree_valid_bytes(const sd_lp_size *sz)
{
    return 1200.0 * (double)sz->vars + 80.0 * (double)sz->nnz;
}

/* --- the LP ----------------------------------------------------------------------- */

typedef struct S_tv {
    const sd_lp_pathsets *ps;
    size_t V, D;
    double **Q;       /* target prefix laws, l <= D+1 */
    size_t *zoff;     /* [D+2] */
    int *zcol, *zrow;
    int per_output;   /* 1: the per-output form v(S, u, y) */
    size_t *noff;     /* [D+2]: node slots, node u ∈ V^l at noff[l] + u */
    int *nrow;        /* the node rows of the aggregated form (0: q(u) = 0) */
    int *fcol;        /* [n][width+1]: f(S, k-th path) columns, when a plan is read */
    sd_tree_plan *plan; /* the plan read (S_read) */
} S_tv;

/* The validity rows Σ_l r_l(o^{l+1}) = 1, q(o) > 0, one dropped. */
static void S_leaf_rows(sd_lp_builder *b, const S_tv *o)
{
    size_t V = o->V, D = o->D;
    size_t nleaf = sd_lp_pow(V, D + 1), last = nleaf;
    for (size_t out = 0; out < nleaf; out++)
        if (o->Q[D + 1][out] > 0)
            last = out;
    for (size_t out = 0; out < nleaf; out++) {
        if (!(o->Q[D + 1][out] > 0) || out == last)
            continue;
        int row = sd_lp_row_fixed(b, 1.0);
        size_t div = nleaf / V;
        for (size_t l = 0; l <= D; l++) {
            sd_lp_entry(b, row, o->zcol[o->zoff[l] + out / div], 1.0);
            div /= V;
        }
    }
}

/* The per-output form (the first one written; kept as the cross-check):
 * v(S, u, y), rows q(u y) r_l(u y) = Σ_S v(S, u, y). */
static int S_build_per_output(sd_lp_builder *b, S_tv *o)
{
    size_t V = o->V, D = o->D;
    for (size_t l = 0; l <= D; l++)
        for (size_t u = 0; u < o->zoff[l + 1] - o->zoff[l]; u++) {
            if (!(o->Q[l + 1][u] > 0))
                continue;
            size_t i = o->zoff[l] + u;
            o->zcol[i] = sd_lp_col(b, 0.0, 1.0, 0.0);
            o->zrow[i] = sd_lp_row_fixed(b, 0.0);
            sd_lp_entry(b, o->zrow[i], o->zcol[i], o->Q[l + 1][u]);
        }
    const sd_lp_pathsets *ps = o->ps;
    for (size_t s = 0; s < ps->n; s++) {
        if (!(ps->prob[s] > 0))
            continue;
        int row = sd_lp_row_fixed(b, ps->prob[s]);
        for (size_t k = 0, id, l, u; sd_lp_pathset_next(ps, s, &k, &id, &l, &u);) {
            for (size_t y = 0; y < V; y++) {
                size_t i = o->zoff[l] + u * V + y;
                if (!o->zcol[i])
                    continue;
                int j = sd_lp_col(b, 0.0, HUGE_VAL, (double)l);
                sd_lp_entry(b, row, j, 1.0);
                sd_lp_entry(b, o->zrow[i], j, -1.0);
            }
        }
    }
    S_leaf_rows(b, o);
    return SD_OK;
}

/* The aggregated form (the default).  A verifier's choice splits into
 * where it stops, u ∈ S ∪ {root}, and what it emits after u; only the
 * stop depends on S.  With f(S, u) = Σ_y v(S, u, y) the rows become
 *   Σ_{u ∈ S ∪ {root}} f(S, u) = P(S)                       for every S,
 *   Σ_y q(u y) r_l(u y) = Σ_S f(S, u)                       for every node u, q(u) > 0,
 *   Σ_l r_l(o^{l+1}) = 1                                    for q(o) > 0 (one dropped),
 * maximise Σ l f.  Equivalent: a feasible v gives f by summing over y;
 * conversely from (f, r) the verifier v(S, u, y) = f(S, u) z(u y) / z(u),
 * z(u y) = q(u y) r_l(u y), z(u) = Σ_y z(u y) (= Σ_S f(S, u)), has
 * Σ_S v(S, u, y) = z(u y) and the same objective: the emitted token is
 * drawn from z(u ·)/z(u) whatever the tree.  S·(nodes+1) + Σ_l V^{l+1}
 * variables instead of S·(nodes+1)·V + Σ_l V^{l+1}. */
static int S_build_aggregated(sd_lp_builder *b, S_tv *o)
{
    size_t V = o->V, D = o->D;
    for (size_t l = 0; l <= D; l++)
        for (size_t u = 0; u < o->noff[l + 1] - o->noff[l]; u++) {
            if (!(o->Q[l][u] > 0))
                continue;
            int row = sd_lp_row_fixed(b, 0.0);
            o->nrow[o->noff[l] + u] = row;
            for (size_t y = 0; y < V; y++) {
                size_t i = o->zoff[l] + u * V + y;
                if (!(o->Q[l + 1][u * V + y] > 0))
                    continue;
                o->zcol[i] = sd_lp_col(b, 0.0, 1.0, 0.0);
                sd_lp_entry(b, row, o->zcol[i], o->Q[l + 1][u * V + y]);
            }
        }
    const sd_lp_pathsets *ps = o->ps;
    for (size_t s = 0; s < ps->n; s++) {
        if (!(ps->prob[s] > 0))
            continue;
        int row = sd_lp_row_fixed(b, ps->prob[s]);
        for (size_t k = 0, id, l, u; sd_lp_pathset_next(ps, s, &k, &id, &l, &u);) {
            int nr = o->nrow[o->noff[l] + u];
            if (!nr)
                continue;
            int j = sd_lp_col(b, 0.0, HUGE_VAL, (double)l);
            sd_lp_entry(b, row, j, 1.0);
            sd_lp_entry(b, nr, j, -1.0);
            if (o->fcol)
                o->fcol[s * (ps->width + 1) + k - 1] = j;
        }
    }
    S_leaf_rows(b, o);
    return SD_OK;
}

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    (void)err;
    S_tv *o = ctx;
    return o->per_output ? S_build_per_output(b, o) : S_build_aggregated(b, o);
}

int sd_lp_tree_context(const char *problem, const sd_chain *c, size_t t, size_t a, const sd_params *par,
                       sd_error *err)
{
    size_t D = par->tree_depth;
    if (D < 1)
        return sd_error_set(err, SD_EUSAGE, "%s: --tree is required", problem);
    if (t < 1 || t > c->T || D > c->T - t)
        return sd_error_set(err, SD_EUSAGE, "%s: --step %zu with a tree of depth %zu needs positions %zu..%zu "
                            "(the tree and the token after it); the model's horizon is %zu", problem, t, D, t,
                            t + D, c->T);
    if (a >= c->V)
        return sd_error_set(err, SD_EUSAGE, "%s: --state %zu is not a token; expected 0 to %zu", problem, a,
                            c->V - 1);
    return SD_OK;
}

int sd_lp_tree_begin(const char *problem, const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                     sd_lp_pathsets **ps, sd_error *err)
{
    *ps = NULL;
    int rc = sd_lp_tree_context(problem, c, t, a, par, err);
    if (!rc)
        rc = sd_lp_tree_enum_check(problem, c->V, par, draw, err);
    return rc ? rc : sd_lp_tree_pathsets(c, t, a, par, draw, ps, err);
}

/* The plan of the optimal (f, r) (aggregated form): stop[s][k] =
 * f(S, k-th path)/P(S), renormalised; emit[u] = z(u .)/z(u) with
 * z(u y) = q(u y) r(u y) (q(.|u) where z(u) = 0: never stopped at). */
static int S_read(glp_prob *lp, void *ctx, sd_error *err)
{
    S_tv *o = ctx;
    const sd_lp_pathsets *ps = o->ps;
    size_t V = o->V, D = o->D, w1 = ps->width + 1;
    sd_tree_plan *pl = calloc(1, sizeof *pl);
    if (pl) {
        pl->ids = malloc((ps->n * ps->width + 1) * sizeof *pl->ids);
        pl->stop = calloc(ps->n * w1, sizeof *pl->stop);
        pl->emit = calloc(o->noff[D + 1] * V, sizeof *pl->emit);
    }
    if (!pl || !pl->ids || !pl->stop || !pl->emit) {
        sd_tree_plan_free(pl);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tree-valid plan");
    }
    pl->V = V;
    pl->D = D;
    pl->n = ps->n;
    pl->width = ps->width;
    memcpy(pl->ids, ps->ids, ps->n * ps->width * sizeof *pl->ids);
    for (size_t s = 0; s < ps->n; s++) {
        double *st = pl->stop + s * w1, sum = 0.0;
        for (size_t k = 0; k < w1; k++) {
            int j = o->fcol[s * w1 + k];
            st[k] = j ? fmax(0.0, glp_get_col_prim(lp, j)) : 0.0;
            sum += st[k];
        }
        if (sum > 0.0)
            for (size_t k = 0; k < w1; k++)
                st[k] /= sum;
        else
            st[0] = 1.0;
    }
    for (size_t l = 0; l <= D; l++)
        for (size_t u = 0; u < o->noff[l + 1] - o->noff[l]; u++) {
            double *e = pl->emit + (o->noff[l] + u) * V, sum = 0.0;
            for (size_t y = 0; y < V; y++) {
                int j = o->zcol[o->zoff[l] + u * V + y];
                e[y] = j ? fmax(0.0, o->Q[l + 1][u * V + y] * glp_get_col_prim(lp, j)) : 0.0;
                sum += e[y];
            }
            if (!(sum > 0.0))
                for (size_t y = 0; y < V; y++)
                    sum += e[y] = o->Q[l + 1][u * V + y];
            for (size_t y = 0; y < V && sum > 0.0; y++)
                e[y] /= sum;
        }
    o->plan = pl;
    return SD_OK;
}

static int S_valid_lp(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                      const sd_lp_opts *opts, sd_lp_result *res, sd_tree_plan **plan, sd_error *err);

int sd_lp_tree_valid_lp(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                        const sd_lp_opts *opts, sd_lp_result *res, sd_error *err)
{
    return S_valid_lp(c, t, a, par, draw, opts, res, NULL, err);
}

int sd_lp_tree_valid_plan(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                          sd_tree_plan **plan, sd_error *err)
{
    sd_lp_opts o;
    sd_lp_opts_default(&o);
    o.method = SD_LP_METHOD_SIMPLEX;
    sd_lp_result res;
    *plan = NULL;
    int rc = S_valid_lp(c, t, a, par, draw, &o, &res, plan, err);
    if (!rc && !*plan)
        rc = sd_error_set(err, SD_ESOLVER, "tree-valid's LP ended with status '%s'; no plan", res.status);
    return rc;
}

void sd_treelp_install(void)
{
    sd_tree_plan_provider(sd_lp_tree_valid_plan);
}

static int S_valid_lp(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                      const sd_lp_opts *opts, sd_lp_result *res, sd_tree_plan **plan, sd_error *err)
{
    sd_lp_result_reset(res, NULL);
    sd_lp_pathsets *ps = NULL;
    int rc = sd_lp_tree_begin("tree-valid", c, t, a, par, draw, &ps, err);
    if (rc)
        return rc;
    size_t V = c->V, D = par->tree_depth, maxv = opts && opts->max_vars ? opts->max_vars : SD_LP_DEFAULT_MAX_VARS;
    S_tv o;
    memset(&o, 0, sizeof o);
    o.V = V;
    o.D = D;
    o.ps = ps;
    /* the LP to build: one block per path set; refused before building */
    o.per_output = opts && opts->per_draft && !plan;
    sd_lp_size sz = sd_lp_tree_valid_size(V, par, draw, ps->n, o.per_output);
    sd_lp_opts mo;
    if (opts)
        mo = *opts;
    else
        sd_lp_opts_default(&mo);
    if (!mo.max_vars) {
        /* no --max-vars: the limit is the memory estimate */
        double bytes = sd_lp_tree_valid_bytes(&sz);
        if (bytes > SD_LP_TREE_MAX_BYTES) {
            rc = sd_error_set(err, SD_ETOOBIG, "%s needs %zu LP variables and %zu nonzeros, about %.1f GB; the "
                              "limit is %.0f GB (--max-vars N sets a limit on variables instead)", sz.what, sz.vars,
                              sz.nnz, bytes / 1e9, SD_LP_TREE_MAX_BYTES / 1e9);
            sd_lp_pathsets_free(ps);
            return rc;
        }
        maxv = mo.max_vars = sz.vars ? sz.vars : 1;
    }
    opts = &mo;
    if ((rc = sd_lp_check_size(&sz, maxv, err))) {
        sd_lp_pathsets_free(ps);
        return rc;
    }
    if ((rc = sd_lp_prefix_laws(c, t, a, D + 1, 1, &o.Q, err))) {
        sd_lp_pathsets_free(ps);
        return rc;
    }
    sd_lp_out_slots(V, D, &o.zoff, &o.zcol, &o.zrow);
    o.noff = malloc((D + 2) * sizeof *o.noff);
    if (o.noff) {
        o.noff[0] = 0;
        for (size_t l = 0; l <= D; l++)
            o.noff[l + 1] = o.noff[l] + sd_lp_pow(V, l);
        o.nrow = calloc(o.noff[D + 1], sizeof *o.nrow);
    }
    if (plan)
        o.fcol = calloc(ps->n * (ps->width + 1) + 1, sizeof *o.fcol);
    if (!o.zoff || !o.zcol || !o.zrow || !o.noff || !o.nrow || (plan && !o.fcol)) {
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", sz.what);
    } else {
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_ADV_BASIS, opts, S_build, plan ? S_read : NULL, &o, res, err);
        if (plan)
            *plan = o.plan;
        else
            sd_tree_plan_free(o.plan);
    }
    free(o.fcol);
    sd_lp_pathsets_free(ps);
    free(o.Q);
    free(o.zoff);
    free(o.zcol);
    free(o.zrow);
    free(o.noff);
    free(o.nrow);
    return rc;
}
