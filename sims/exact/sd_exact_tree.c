/* sd_exact_tree.c — exact values of the tree verifiers (sd_exact_tree.h). */
#include "sd_exact_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sd_exact_gen.h"
#include "../engine/sd_params.h"

double sd_exact_tree_count(size_t V, const sd_params *par, sd_tree_draw draw)
{
    if (draw == SD_DRAW_TOPK)
        return 1.0;
    if (draw == SD_DRAW_IID)
        return pow((double)V, (double)sd_params_tree_nodes(par));
    /* wor: each node's children are an ordered choice of min(b, V) distinct
     * tokens, V (V-1) ... (V-b+1) ways */
    double n = 1.0, parents = 1.0;
    for (size_t l = 0; l < par->tree_depth; l++) {
        double f = 1.0;
        for (size_t j = 0; j < par->tree[l] && j < V; j++)
            f *= (double)(V - j);
        n *= pow(f, parents);
        parents *= (double)par->tree[l];
    }
    return n;
}

/* What one drafted tree of kind k costs the enumerator, in drafted trees
 * of a built-in rule: 1, or for a rule given at run time its call cost
 * (sd_tree_kind.call_cost) times its calls per tree (one, or one per inner
 * node: the root and every node above the last level). */
static double S_weight(const sd_tree_kind *k, const sd_params *par)
{
    if (k->rule != SD_TREE_CALLBACK || !(k->call_cost > 0.0))
        return 1.0;
    double calls = 1.0;
    if (k->per_node) {
        double level = 1.0;
        for (size_t l = 0; l + 1 < par->tree_depth; l++) {
            level *= (double)par->tree[l];
            calls += level;
        }
    }
    double w = k->call_cost * calls;
    return w > 1.0 ? w : 1.0;
}

/* SD_ETOOBIG for `trees` drafted trees of kind k (over `contexts`
 * contexts) past `limit` trees, counted at their cost (S_weight); the
 * message of a costly rule given at run time says so and points to
 * Monte-Carlo. */
static int S_guard(const sd_tree_kind *k, const sd_params *par, size_t V, double trees, double contexts,
                   double limit, sd_error *err)
{
    double w = S_weight(k, par), n = trees * contexts;
    if (n * w <= limit)
        return SD_OK;
    if (w > 1.0)
        return sd_error_set(err, SD_ETOOBIG, "%s: exact values would call its rule %.3g times (%.3g trees at V = "
                            "%zu%s, x %.3g), over its limit %.3g (a call costs %.3g trees); use Monte-Carlo (check "
                            "without --exact, run, eval's estimate)", k->name, n * w / k->call_cost, n, V,
                            contexts > 1 ? " over T·V contexts" : "", w / k->call_cost, limit / k->call_cost,
                            k->call_cost);
    return sd_error_set(err, SD_ETOOBIG, "the exact value of %s would enumerate %.3g drafted trees "
                        "(%zu nodes at V = %zu%s), beyond the limit %.0f", k->name, n, sd_params_tree_nodes(par), V,
                        contexts > 1 ? ", times T·V contexts" : "", limit);
}

/* The law of one iteration from the context being enumerated, as a dense
 * table over its outcomes (the accepted path length l, the path's first
 * min(l, keep) tokens x_1..x_k, the token y emitted after it):
 *     tab[off[l] + (x_1 V^{k-1} + ... + x_k) V + y],
 * off[l] = Σ_{j<l} V^{min(j,keep)+1}.  At the horizon (t + l > T) no token
 * follows and y is the path's last token x_l.  With keep = 0 this is
 * sd_exact_tree_accept's joint (off[l] = l V).  Outcomes that agree on l,
 * the kept tokens and y are merged: P(l, x_1..x_k, y) sums over the drafted
 * trees and over the nodes of depth l whose paths start with x_1..x_k. */
typedef struct S_enum {
    const sd_chain *c;
    const sd_tree_kind *k;
    sd_tree_draw draw;
    sd_tree *tr;
    double *w;      /* [nodes][V]: each node's draft law */
    double expected;
    double *tab;    /* the table above, or NULL */
    size_t keep;
    size_t off[SD_TREE_MAX_DEPTH + 2];
    double *emit;   /* [(T-t+1)][V] or NULL: += P(x_{t+j} = y) at j·V + y */
    size_t path[SD_TREE_MAX_DEPTH];
    int rc;         /* a rule given at run time failed (sd_tree_outcome_checked) */
    sd_error *err;
} S_enum;

/* Node v (depth l) ends the iteration with probability pv: its outcomes
 * into the table and the per-depth token law. */
static void S_record(S_enum *e, size_t v, size_t l, double pv)
{
    sd_tree *tr = e->tr;
    size_t V = tr->V, k = l < e->keep ? l : e->keep, cell = 0;
    for (size_t u = v, i = l; i > 0; i--, u = sd_tree_parent(tr, u))
        e->path[i - 1] = tr->tok[u];
    for (size_t j = 0; j < k; j++)
        cell = cell * V + e->path[j];
    double *row = e->tab ? e->tab + e->off[l] + cell * V : NULL;
    for (size_t j = 0; e->emit && j < l; j++)
        e->emit[j * V + e->path[j]] += pv;
    if (tr->t + l > e->c->T) { /* the horizon (l = D >= 1): no token follows */
        if (row)
            row[e->path[l - 1]] += pv;
        return;
    }
    const double *law = tr->law + v * V;
    for (size_t y = 0; y < V; y++) {
        if (row)
            row[y] += pv * law[y];
        if (e->emit)
            e->emit[l * V + y] += pv * law[y];
    }
}

/* Drafts node u onwards in every way, with probability `prob` so far. */
static void S_visit(S_enum *e, size_t u, double prob)
{
    sd_tree *tr = e->tr;
    size_t V = tr->V;
    if (e->rc)
        return;
    if (u == tr->nodes) {
        if ((e->rc = sd_tree_outcome_checked(tr, e->c, e->k, e->draw, e->err)) != SD_OK)
            return;
        for (size_t v = 0; v < tr->nodes; v++) {
            double pv = prob * tr->pi[v];
            if (!(pv > 0.0))
                continue;
            size_t l = sd_tree_depth_of(tr, v);
            e->expected += pv * (double)l;
            if (e->tab || e->emit)
                S_record(e, v, l, pv);
        }
        return;
    }
    double *w = e->w + u * V;
    if (sd_tree_draft_law(tr, e->c, u, e->draw, w) <= 0.0) {
        tr->tok[u] = SD_TREE_NONE;
        S_visit(e, u + 1, prob);
        return;
    }
    for (size_t x = 0; x < V; x++)
        if (w[x] > 0.0) {
            tr->tok[u] = x;
            S_visit(e, u + 1, prob * w[x]);
        }
}

/* Depth of the tree cut at position t. */
static size_t S_depth(const S_enum *e, size_t t)
{
    size_t rest = e->c->T - t + 1;
    return e->tr->d < rest ? e->tr->d : rest;
}

/* The table's offsets off[0..D+1] for depth D and e->keep; returns its
 * size off[D+1] as a double (the caller guards it before allocating). */
static double S_offsets(S_enum *e, size_t D)
{
    double V = (double)e->c->V, cells = 0.0, row = V;
    for (size_t l = 0; l <= D; l++) {
        e->off[l] = (size_t)cells;
        cells += row;
        if (l < e->keep)
            row *= V;
    }
    e->off[D + 1] = (size_t)cells;
    return cells;
}

/* The enumeration from position t after token a with an allocated tree
 * (and the table's offsets set by S_offsets when e->tab is used); the
 * status of a rule given at run time. */
static int S_context(S_enum *e, size_t t, size_t a, double *expected)
{
    sd_tree_cut(e->tr, S_depth(e, t), t, a);
    e->expected = 0.0;
    S_visit(e, 1, 1.0);
    *expected = e->expected;
    return e->rc;
}

static int S_open(S_enum *e, const sd_chain *c, const sd_params *par, const sd_tree_kind *k, double limit,
                  double contexts, sd_error *err)
{
    memset(e, 0, sizeof *e);
    e->err = err;
    e->c = c;
    e->k = k;
    e->draw = sd_tree_draw_of(par);
    int rc = sd_tree_check_draw(k, e->draw, k->name, err);
    if (rc)
        return rc;
    if (par->tree_depth < 1)
        return sd_error_set(err, SD_EUSAGE, "--tree: expected a tree shape b1,b2,...,bd");
    rc = S_guard(k, par, c->V, sd_exact_tree_count(c->V, par, e->draw), contexts, limit, err);
    if (rc)
        return rc;
    rc = sd_tree_new(&e->tr, c->V, par, err);
    if (rc)
        return rc;
    e->w = malloc(e->tr->nodes * c->V * sizeof *e->w);
    if (!e->w) {
        sd_tree_free(e->tr);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tree enumeration");
    }
    return SD_OK;
}

static void S_close(S_enum *e)
{
    sd_tree_free(e->tr);
    free(e->w);
}

int sd_exact_tree_accept(const sd_chain *c, size_t t, size_t a, const sd_params *par,
                         const sd_tree_kind *k, double *expected, double *joint, sd_error *err)
{
    if (t < 1 || t > c->T || a >= c->V)
        return sd_error_set(err, SD_EUSAGE, "--step %zu --state %zu: expected 1 <= step <= %zu, state < %zu", t,
                            a, c->T, c->V);
    S_enum e;
    int rc = S_open(&e, c, par, k, SD_EXACT_TREE_MAX_TREES, 1.0, err);
    if (rc)
        return rc;
    if (joint)
        memset(joint, 0, (par->tree_depth + 1) * c->V * sizeof *joint);
    e.tab = joint;
    S_offsets(&e, S_depth(&e, t));
    rc = S_context(&e, t, a, expected);
    S_close(&e);
    return rc;
}

int sd_exact_tree_calls(const sd_chain *c, const sd_params *par, const sd_tree_kind *k,
                        double *calls, double *rejections, sd_error *err)
{
    size_t V = c->V, T = c->T, d = par->tree_depth;
    S_enum e;
    int rc = S_open(&e, c, par, k, 4.0 * SD_EXACT_TREE_MAX_TREES, (double)T * (double)V, err);
    if (rc)
        return rc;
    double *reach = calloc((T + 2) * V, sizeof *reach), *joint = malloc((d + 1) * V * sizeof *joint);
    if (!reach || !joint) {
        free(reach);
        free(joint);
        S_close(&e);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the tree recursion");
    }
    /* reach[n*V + b]: P(an iteration starts at position n after x_{n-1} = b) */
    memcpy(reach + V, c->init, V * sizeof *reach);
    double ncalls = 0.0, nrej = 0.0, ex;
    for (size_t n = 1; n <= T && !rc; n++)
        for (size_t b = 0; b < V && !rc; b++) {
            double r = reach[n * V + b];
            if (!(r > 0.0))
                continue;
            ncalls += r;
            memset(joint, 0, (d + 1) * V * sizeof *joint);
            e.tab = joint;
            S_offsets(&e, S_depth(&e, n));
            if ((rc = S_context(&e, n, b, &ex)) != SD_OK)
                break;
            size_t D = e.tr->D;
            for (size_t l = 0; l <= D; l++) {
                double row = 0.0;
                for (size_t y = 0; y < V; y++)
                    row += joint[l * V + y];
                if (l < D)
                    nrej += r * row; /* ended at an inner node: a residual token */
                if (n + l + 1 <= T)
                    for (size_t y = 0; y < V; y++)
                        reach[(n + l + 1) * V + y] += r * joint[l * V + y];
            }
        }
    *calls = ncalls;
    *rejections = nrej;
    free(reach);
    free(joint);
    S_close(&e);
    return rc;
}

int sd_tree_verifier_exact(const sd_model *m, const sd_params *par, const sd_tree_kind *k,
                           sd_exact_values *out, sd_error *err)
{
    return sd_exact_tree_values(m, par, k, out, err);
}

int sd_exact_tree_values(const sd_model *m, const sd_params *par, const sd_tree_kind *k,
                         sd_exact_values *out, sd_error *err)
{
    if (!m->chain)
        return sd_error_set(err, SD_EUSAGE, "%s: exact values need a stored chain", k->name);
    sd_params def;
    par = sd_tree_params(k, par, &def);
    int rc = sd_exact_tree_calls(m->chain, par, k, &out->target_calls, &out->rejections, err);
    out->method = "enumeration of every drafted tree per context, forward recursion over positions";
    return rc;
}

/* The law of one iteration (sd_tree.h): the table of S_enum for the
 * context (n, prev), its cells listed as outcomes.  Outcome (l, x_1..x_k,
 * y) emits l+1 tokens (the path, then y), or l at the horizon; it is a
 * rejection when l < D (the iteration ended at an inner node with a
 * residual token, as sd_tree_verifier_step reports); one target call. */
int sd_tree_verifier_law(const sd_chain *c, const sd_params *par, const sd_tree_kind *k, size_t n,
                         size_t prev, struct sd_iter_law *law, sd_error *err)
{
    if (n < 1 || n > c->T || prev >= c->V)
        return sd_error_set(err, SD_EUSAGE, "%s: context n = %zu, x_{n-1} = %zu: expected 1 <= n <= %zu, "
                            "x_{n-1} < %zu", k->name, n, prev, c->T, c->V);
    sd_params def;
    par = sd_tree_params(k, par, &def);
    S_enum e;
    int rc = S_open(&e, c, par, k, SD_EXACT_TREE_MAX_TREES, 1.0, err);
    if (rc)
        return rc;
    size_t V = c->V, D = S_depth(&e, n), buf[SD_TREE_MAX_DEPTH + 1];
    e.keep = law->emit ? 0 : law->keep; /* a law giving emit keeps no token */
    e.emit = law->emit;
    double cells = S_offsets(&e, D), ex;
    if (!(cells <= (double)SD_ITER_LAW_MAX)) {
        S_close(&e);
        return sd_error_set(err, SD_ETOOBIG, "%s: the law of one iteration keeping %zu tokens has %.3g "
                            "outcomes, over the limit %zu (use a smaller --L or V)", k->name, e.keep, cells,
                            SD_ITER_LAW_MAX);
    }
    if (law->work_query) {
        /* S_visit drafts at most `trees` trees (its inner steps, a draft
         * law each, are fewer than the trees and cost about 4V); each tree
         * costs sd_tree_outcome (per node 4V of copies, per edge about 7V:
         * copy, residual, drop, normalise) and S_record (per node 3V and
         * its path): at most (16·nodes + 4)·V; then one outcome per cell. */
        double trees = sd_exact_tree_count(V, par, e.draw), nodes = (double)sd_params_tree_nodes(par);
        law->work = trees * S_weight(k, par) * (16.0 * nodes + 4.0) * (double)V + cells * SD_WORK_OUTCOME;
        /* a costly rule: the whole generation's laws, T·V contexts, under
         * the limit of sd_exact_tree_calls, counted at the rule's cost */
        if (S_weight(k, par) > 1.0)
            rc = S_guard(k, par, V, trees, (double)c->T * (double)V, 4.0 * SD_EXACT_TREE_MAX_TREES, err);
        S_close(&e);
        return rc;
    }
    e.tab = calloc(e.off[D + 1], sizeof *e.tab);
    if (!e.tab) {
        S_close(&e);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the law of one iteration of %s", k->name);
    }
    rc = S_context(&e, n, prev, &ex);
    for (size_t l = 0; l <= D && !rc; l++) {
        int horizon = n + l > c->T;
        size_t kept = l < e.keep ? l : e.keep;
        for (size_t i = e.off[l]; i < e.off[l + 1] && !rc; i++) {
            size_t cell = (i - e.off[l]) / V, y = (i - e.off[l]) % V;
            for (size_t j = kept; j > 0; j--, cell /= V)
                buf[j - 1] = cell % V;
            buf[l] = y; /* kept when keep > l (read only then) */
            rc = sd_iter_law_add(law, e.tab[i], buf, horizon ? l : l + 1, y, l < D, 1, err);
        }
    }
    law->emit_filled = law->emit != NULL;
    free(e.tab);
    S_close(&e);
    return rc;
}
