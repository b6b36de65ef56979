/* sd_exact_tree.c — exact values of the tree verifiers (sd_exact_tree.h). */
#include "sd_exact_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/sd_params.h"

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

typedef struct S_enum {
    const sd_chain *c;
    const sd_tree_kind *k;
    sd_tree_draw draw;
    sd_tree *tr;
    double *w;      /* [nodes][V]: each node's draft law */
    double expected;
    double *joint;  /* [(d+1)][V] or NULL */
} S_enum;

/* Drafts node u onwards in every way, with probability `prob` so far. */
static void S_visit(S_enum *e, size_t u, double prob)
{
    sd_tree *tr = e->tr;
    size_t V = tr->V;
    if (u == tr->nodes) {
        sd_tree_outcome(tr, e->c, e->k, e->draw);
        for (size_t v = 0; v < tr->nodes; v++) {
            double pv = prob * tr->pi[v];
            if (!(pv > 0.0))
                continue;
            size_t l = sd_tree_depth_of(tr, v);
            e->expected += pv * (double)l;
            if (!e->joint)
                continue;
            if (tr->t + l > e->c->T) {
                e->joint[l * V] += pv; /* the horizon: no token follows */
                continue;
            }
            const double *law = tr->law + v * V;
            for (size_t y = 0; y < V; y++)
                e->joint[l * V + y] += pv * law[y];
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

/* The enumeration with an allocated tree. */
static void S_context(S_enum *e, size_t t, size_t a, double *expected)
{
    size_t rest = e->c->T - t + 1, D = e->tr->d < rest ? e->tr->d : rest;
    sd_tree_cut(e->tr, D, t, a);
    e->expected = 0.0;
    S_visit(e, 1, 1.0);
    *expected = e->expected;
}

static int S_open(S_enum *e, const sd_chain *c, const sd_params *par, const sd_tree_kind *k, double limit,
                  double contexts, sd_error *err)
{
    memset(e, 0, sizeof *e);
    e->c = c;
    e->k = k;
    e->draw = sd_tree_draw_of(par);
    int rc = sd_tree_check_draw(k, e->draw, k->name, err);
    if (rc)
        return rc;
    if (par->tree_depth < 1)
        return sd_error_set(err, SD_EUSAGE, "--tree: expected a tree shape b1,b2,...,bd");
    double n = sd_exact_tree_count(c->V, par, e->draw) * contexts;
    if (!(n <= limit))
        return sd_error_set(err, SD_ETOOBIG, "the exact value of %s would enumerate %.3g drafted trees "
                            "(%zu nodes at V = %zu%s), beyond the limit %.0f", k->name, n,
                            sd_params_tree_nodes(par), c->V, contexts > 1 ? ", times T·V contexts" : "", limit);
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
    e.joint = joint;
    S_context(&e, t, a, expected);
    S_close(&e);
    return SD_OK;
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
    for (size_t n = 1; n <= T; n++)
        for (size_t b = 0; b < V; b++) {
            double r = reach[n * V + b];
            if (!(r > 0.0))
                continue;
            ncalls += r;
            memset(joint, 0, (d + 1) * V * sizeof *joint);
            e.joint = joint;
            S_context(&e, n, b, &ex);
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
    return SD_OK;
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
