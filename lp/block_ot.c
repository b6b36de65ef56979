/* block_ot.c — block-level optimal transport (Sun et al. 2024
 * Def. 1; Sun et al. 2025, App. C.3, eqs. 40–42).
 *
 *   max Σ_{x,y} π(x,y) β(x,y)
 *   s.t. Σ_y π(x,y) = p(x^γ),  Σ_x π(x,y) = q(y^γ),  π >= 0,
 * over draft blocks x and target blocks y in V^γ, where
 * β(x,y) = max{l : x^l = y^l} is the common-prefix length and p, q are the
 * γ-block laws of the chain from position t after state a.  Sun et al. 2024, Thm 1
 * (Sun et al. 2025, Lemma 10 and Theorem 3): the optimum is the full-information value
 * Σ_{l=1..γ} Σ_{x^l} min(p(x^l), q(x^l)).
 *
 * Blocks of probability 0 are left out; the last target balance row is
 * dropped (the rows are linearly dependent).
 *
 * The same optimum on a network of O(V^γ) arcs (--method flow).  Vertices:
 * the draft prefix trie D(u) and the target prefix trie T(u), u ∈ V^l,
 * l = 0..γ.  Arcs: up D(u y) -> D(u) (cost 0), across D(u) -> T(u) (reward
 * |u|, i.e. cost -|u|), down T(u) -> T(u y) (cost 0); supply p(x) at the
 * draft leaves, demand q(y) at the target leaves; pieces of probability 0
 * are left out.  Every path from D(x) to T(y) goes up to an ancestor u of
 * x, across, and down from T(u), so u is also a prefix of y: its reward
 * |u| <= β(x,y).
 *   LP <= flow: route π(x,y) up from x to u = x^{β(x,y)} = y^{β(x,y)},
 *   across and down to y; the flow's reward is Σ π β.
 *   flow <= LP: a flow on this DAG decomposes into paths x -> u -> y, each
 *   with reward |u| <= β(x,y); summing the path masses by (x,y) gives a
 *   coupling π of p and q (supplies and demands are the marginals) with
 *   Σ π β >= the flow's reward.
 * So the optima coincide, and the plan of an optimal flow is read off a
 * path decomposition (S_flow_plan): north-west corner at every vertex,
 * O(arcs) rows instead of V^{2γ}. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sd_lp.h"
#include "sd_lp_flow.h"

sd_lp_size sd_lp_block_ot_size(size_t V, size_t gamma)
{
    size_t n = sd_lp_pow(V, gamma);
    sd_lp_size s = {0};
    s.vars = sd_lp_mul(n, n);
    s.rows = sd_lp_mul(n, 2);
    s.nnz = sd_lp_mul(s.vars, 2);
    snprintf(s.what, sizeof s.what, "block-ot --gamma %zu at V = %zu", gamma, V);
    return s;
}

sd_lp_size sd_lp_block_ot_flow_size(size_t V, size_t gamma)
{
    size_t n = 0;
    for (size_t l = 0; l <= gamma; l++)
        n = sd_lp_add(n, sd_lp_pow(V, l));
    sd_lp_size s = {0};
    s.vars = sd_lp_mul(n, 3); /* up and down: n - 1 each; across: n */
    s.rows = sd_lp_mul(n, 2);
    s.nnz = sd_lp_mul(s.vars, 2);
    s.flow = 1;
    snprintf(s.what, sizeof s.what, "block-ot --gamma %zu at V = %zu", gamma, V);
    return s;
}

typedef struct S_bot {
    size_t V, G, n;
    const double *p, *q; /* block laws, n entries each */
    int *col;            /* [n][n] */
    double *pi;          /* [n][n] after read */
} S_bot;

/* β(x,y): the number of leading base-V digits (of G; n = V^G) on which
 * the block indices x and y agree. */
static size_t S_common_prefix(size_t x, size_t y, size_t V, size_t G, size_t n)
{
    size_t div = n;
    for (size_t l = 0; l < G; l++) {
        div /= V; /* x / V^{G-l-1} is the prefix of length l+1 */
        if (x / div != y / div)
            return l;
    }
    return G;
}

static double S_gain(size_t x, size_t y, const void *ctx)
{
    const S_bot *o = ctx;
    return (double)S_common_prefix(x, y, o->V, o->G, o->n);
}

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    S_bot *o = ctx;
    return sd_lp_transport_build(b, o->p, o->n, o->q, o->n, S_gain, o, o->col, err);
}

static int S_read(glp_prob *lp, void *ctx, sd_error *err)
{
    (void)err;
    S_bot *o = ctx;
    sd_lp_read_cols(lp, o->col, o->n * o->n, o->pi);
    return SD_OK;
}

/* ---- the network form ------------------------------------------------------ */

/* Plan rows by key x n + y: (x, y) order. */
static int S_cmp_key(const void *a, const void *b)
{
    size_t r = ((const sd_lp_chunk *)a)->x, t = ((const sd_lp_chunk *)b)->x;
    return r < t ? -1 : r > t;
}

/* The plan of the flow (block_ot.c's header: a path decomposition).  Draft
 * side, leaves to root: each D(w) receives chunks (x, mass) from its
 * children in order (its leaf's own chunk at depth γ), sends the first
 * flow(across w) of them across (splitting one chunk at the boundary)
 * and the rest up; the root sends everything across, which completes the
 * at most SD_LP_FLOW_GAP of supply the flow left unrouted.  Target side,
 * root to leaves: T(w) receives the chunks from its parent, then those
 * across w, and hands them out in order to its children, child c getting
 * q(c) minus what crosses inside c's subtree (the completed flow's arc
 * into c); the last child takes the rest.  Every chunk of x that crosses
 * at w ends at a leaf y below T(w): reward |w| <= β(x,y), and the masses
 * at each leaf and of each draft are q(y) and p(x): a coupling whose
 * objective is at least the flow's.  At most one split per vertex and
 * child: O(arcs) rows, merged by (x, y). */
static int S_flow_plan(size_t V, size_t G, double *const *P, double *const *Q, const size_t *across,
                       const double *flow, sd_lp_plan **out)
{
    size_t N = sd_lp_trie_id(V, G + 1, 0), n = sd_lp_pow(V, G);
    sd_lp_chunks *cross = calloc(G + 1, sizeof *cross), cur = {0}, up = {0};
    size_t **cst = calloc(G + 1, sizeof *cst);
    size_t *start = malloc((n + 1) * sizeof *start), *ust = malloc((n + 1) * sizeof *ust);
    double *sub = calloc(N, sizeof *sub);
    sd_lp_chunks rows = {0}; /* key x n + y */
    int rc = (!cross || !cst || !start || !ust || !sub) ? SD_ENOMEM : SD_OK;
    for (size_t l = 0; !rc && l <= G; l++)
        if (!(cst[l] = malloc((sd_lp_pow(V, l) + 1) * sizeof **cst)))
            rc = SD_ENOMEM;
    /* draft side */
    for (size_t x = 0; !rc && x < n; x++) {
        start[x] = cur.n;
        rc = sd_lp_chunks_put(&cur, x, P[G][x]);
    }
    start[n] = cur.n;
    for (size_t l = G + 1; !rc && l-- > 0;) {
        size_t nl = sd_lp_pow(V, l);
        up.n = 0;
        for (size_t w = 0; !rc && w < nl; w++) {
            size_t id = sd_lp_trie_id(V, l, w);
            double need = l == 0 ? HUGE_VAL : across[id] == SIZE_MAX ? 0.0 : flow[across[id]];
            if (l > 0 && w % V == 0)
                ust[w / V] = up.n;
            cst[l][w] = cross[l].n;
            for (size_t k = start[w]; !rc && k < start[w + 1]; k++) {
                sd_lp_chunk ch = cur.c[k];
                double take = fmin(ch.m, need);
                need -= take;
                sub[id] += take;
                rc = sd_lp_chunks_put(&cross[l], ch.x, take);
                if (!rc && l > 0)
                    rc = sd_lp_chunks_put(&up, ch.x, ch.m - take);
            }
        }
        cst[l][nl] = cross[l].n;
        if (l > 0) {
            ust[nl / V] = up.n;
            sd_lp_chunks t = cur;
            cur = up;
            up = t;
            memcpy(start, ust, (nl / V + 1) * sizeof *start);
        }
    }
    /* mass crossing inside each subtree */
    for (size_t l = G; l > 0; l--)
        for (size_t w = 0; w < sd_lp_pow(V, l); w++)
            sub[sd_lp_trie_id(V, l - 1, w / V)] += sub[sd_lp_trie_id(V, l, w)];
    /* target side: cur holds the chunks handed down to level l, by node */
    cur.n = 0;
    start[0] = start[1] = 0;
    for (size_t l = 0; !rc && l <= G; l++) {
        size_t nl = sd_lp_pow(V, l);
        up.n = 0;
        for (size_t w = 0; !rc && w < nl; w++) {
            /* the arriving chunks: from the parent, then across w */
            size_t k = start[w], kend = start[w + 1], j = cst[l][w], jend = cst[l][w + 1];
            if (l == G) {
                while (!rc && (k < kend || j < jend)) {
                    sd_lp_chunk ch = k < kend ? cur.c[k++] : cross[l].c[j++];
                    rc = sd_lp_chunks_put(&rows, ch.x * n + w, ch.m);
                }
                continue;
            }
            size_t lastc = V;
            for (size_t y = 0; y < V; y++)
                if (Q[l + 1][w * V + y] > 0)
                    lastc = y;
            sd_lp_chunk ch = {0, 0.0};
            for (size_t y = 0; !rc && y < V; y++) {
                size_t c = w * V + y;
                ust[c] = up.n;
                double want = y == lastc ? HUGE_VAL
                            : fmax(0.0, Q[l + 1][c] - sub[sd_lp_trie_id(V, l + 1, c)]);
                if (y > lastc)
                    want = 0.0;
                while (!rc && want > 0.0) {
                    if (!(ch.m > 0.0)) {
                        if (k < kend)
                            ch = cur.c[k++];
                        else if (j < jend)
                            ch = cross[l].c[j++];
                        else
                            break;
                    }
                    double take = fmin(ch.m, want);
                    rc = sd_lp_chunks_put(&up, ch.x, take);
                    ch.m -= take;
                    want -= take;
                }
            }
        }
        if (l < G) {
            ust[nl * V] = up.n;
            sd_lp_chunks t = cur;
            cur = up;
            up = t;
            memcpy(start, ust, (nl * V + 1) * sizeof *start);
        }
    }
    sd_lp_plan *pl = NULL;
    if (!rc) {
        qsort(rows.c, rows.n, sizeof *rows.c, S_cmp_key);
        size_t groups[2] = {G, G}, *keys = malloc(2 * G * sizeof *keys);
        pl = sd_lp_plan_new("draft,target,mass", 2, groups, 1, 64);
        rc = (!pl || !keys) ? SD_ENOMEM : SD_OK;
        for (size_t i = 0; !rc && i < rows.n;) {
            size_t e = i;
            double m = 0.0;
            while (e < rows.n && rows.c[e].x == rows.c[i].x)
                m += rows.c[e++].m;
            if (m > 1e-12) {
                sd_lp_digits(rows.c[i].x / n, V, G, keys);
                sd_lp_digits(rows.c[i].x % n, V, G, keys + G);
                rc = sd_lp_plan_add(pl, keys, &m);
            }
            i = e;
        }
        free(keys);
        if (rc) {
            sd_lp_plan_free(pl);
            pl = NULL;
        }
    }
    *out = pl;
    for (size_t l = 0; cross && l <= G; l++)
        free(cross[l].c);
    for (size_t l = 0; cst && l <= G; l++)
        free(cst[l]);
    free(cross);
    free(cst);
    free(cur.c);
    free(up.c);
    free(start);
    free(ust);
    free(sub);
    free(rows.c);
    return rc;
}

int sd_lp_block_ot_net(size_t V, size_t G, double *const *P, double *const *Q, int extra,
                       sd_lp_result *res, sd_lp_plan **plan, sd_error *err)
{
    sd_lp_size szv = sd_lp_block_ot_flow_size(V, G), *sz = &szv;
    size_t N = sd_lp_trie_id(V, G + 1, 0);
    sd_lp_net net;
    size_t *across = malloc(N * sizeof *across);
    int rc = across ? sd_lp_net_init(&net, 2 * N, sz->vars, sz->what, err)
                    : sd_error_set(err, SD_ENOMEM, "%s: out of memory", sz->what);
    if (rc) {
        free(across);
        return rc;
    }
    for (size_t l = 0, m = 1; l <= G; l++, m *= V)
        for (size_t u = 0; u < m; u++) {
            size_t id = sd_lp_trie_id(V, l, u);
            across[id] = SIZE_MAX;
            if (!(P[l][u] > 0))
                continue;
            if (l > 0)
                sd_lp_net_arc(&net, id, sd_lp_trie_id(V, l - 1, u / V), 0);
            if (Q[l][u] > 0)
                across[id] = sd_lp_net_arc(&net, id, N + id, -(int)l - extra);
            if (l == G)
                net.b[id] = P[G][u];
        }
    sd_lp_net_target_trie(&net, N, V, G, Q);
    rc = sd_lp_net_solve_max(&net, res, err);
    if (!rc && res->optimal && plan && S_flow_plan(V, G, P, Q, across, net.x, plan))
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", sz->what);
    sd_lp_net_free(&net);
    free(across);
    return rc;
}

int sd_lp_block_ot(const sd_chain *c, size_t t, size_t a, size_t gamma,
                   const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
                   sd_error *err)
{
    sd_lp_result_reset(res, plan);
    size_t V = c->V;
    if (gamma < 1)
        return sd_error_set(err, SD_EUSAGE, "block-ot: --gamma must be >= 1");
    if (t < 1 || t > c->T || gamma > c->T - t + 1)
        return sd_error_set(err, SD_EUSAGE,
                            "block-ot: --step %zu --gamma %zu needs positions %zu..%zu; the model's horizon is %zu",
                            t, gamma, t, t + gamma - 1, c->T);
    if (a >= V)
        return sd_error_set(err, SD_EUSAGE, "block-ot: --state %zu is not a token; expected 0 to %zu", a, V - 1);
    int flow = sd_lp_uses_flow(opts);
    sd_lp_size sz = flow ? sd_lp_block_ot_flow_size(V, gamma) : sd_lp_block_ot_size(V, gamma);
    const char *what = sz.what;
    int rc = sd_lp_check_size(&sz, opts ? opts->max_vars : 0, err);
    if (rc)
        return rc;
    /* the flow's plan has at most one row per draft leaf and two per arc
     * (S_flow_plan); refuse a plan that large before solving */
    size_t plan_rows = sd_lp_add(sd_lp_pow(V, gamma), sd_lp_mul(sz.vars, 2));
    if (flow && plan && plan_rows > SD_LP_MAX_NNZ)
        return sd_error_set(err, SD_ETOOBIG, "%s: the plan (--plan) could have %zu rows; the limit is %zu", what,
                            plan_rows, SD_LP_MAX_NNZ);
    double **lp_ = NULL, **lq = NULL;
    if ((rc = sd_lp_prefix_laws(c, t, a, gamma, 0, &lp_, err)) ||
        (rc = sd_lp_prefix_laws(c, t, a, gamma, 1, &lq, err))) {
        free(lp_);
        return rc;
    }
    if (flow) {
        double t0 = sd_lp_now();
        rc = sd_lp_block_ot_net(V, gamma, lp_, lq, 0, res, plan, err);
        res->seconds = sd_lp_now() - t0;
        free(lp_);
        free(lq);
        return rc;
    }
    S_bot o = {V, gamma, sd_lp_pow(V, gamma), lp_[gamma], lq[gamma], NULL, NULL};
    o.col = calloc(sz.vars, sizeof *o.col);
    o.pi = calloc(sz.vars, sizeof *o.pi);
    if (!o.col || !o.pi)
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", what);
    else
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_CPX_BASIS, opts, S_build, S_read, &o, res, err);
    if (!rc && plan && res->optimal) {
        size_t groups[2] = {gamma, gamma};
        sd_lp_plan *pl = sd_lp_plan_new("draft,target,mass", 2, groups, 1, 64);
        size_t *keys = malloc(2 * gamma * sizeof *keys);
        int bad = !pl || !keys;
        for (size_t i = 0; !bad && i < o.n * o.n; i++) {
            double m = o.pi[i];
            if (!(m > 1e-12))
                continue;
            sd_lp_digits(i / o.n, V, gamma, keys);
            sd_lp_digits(i % o.n, V, gamma, keys + gamma);
            bad = sd_lp_plan_add(pl, keys, &m) != SD_OK;
        }
        free(keys);
        if (bad) {
            sd_lp_plan_free(pl);
            pl = NULL;
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", what);
        }
        *plan = pl;
    }
    free(o.col);
    free(o.pi);
    free(lp_);
    free(lq);
    return rc;
}
