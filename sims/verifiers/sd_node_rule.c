/* sd_node_rule.c — tree verifiers written as a rule at one node
 * (sd_node_rule.h): the top-down composition of a node rule into a tree
 * rule.
 *
 * Why the composition is the algorithm's law.  A top-down verifier (the
 * multi-step speculative sampling of SpecInfer, Miao et al. 2024; without
 * replacement, Jeon et al. 2024)
 * walks from the root: at node v it either moves into one of v's children
 * or stops and emits a residual token, and that decision is a coin whose
 * probabilities depend on the rows at v and on v's children's tokens only.
 * Given the drafted tree, the probability of ending at v is the product of
 * the moves along v's path times v's stop probability, which is what is
 * computed here, node by node in breadth-first order (a parent before its
 * children). */
#include "sd_node_rule.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct S_node {
    sd_node_rule_call call;
    void *user;
    const sd_verifier_type *vt;
} S_node;
static S_node S_nodes[SD_TREE_RULE_MAX];
static size_t S_nnodes;

/* Per-thread scratch of the composition, grown as needed: reach[nodes],
 * go, kid and kidtok [widest level], path[depth + 1]. */
static _Thread_local double *S_reach, *S_go;
static _Thread_local size_t *S_kid, *S_kidtok, *S_path;
static _Thread_local size_t S_cap_nodes, S_cap_b;

static int S_scratch(size_t nodes, size_t b, sd_error *err)
{
    if (nodes > S_cap_nodes) {
        double *r = realloc(S_reach, nodes * sizeof *r);
        size_t *p = realloc(S_path, (nodes + 1) * sizeof *p);
        if (r)
            S_reach = r;
        if (p)
            S_path = p;
        if (!r || !p)
            return sd_error_set(err, SD_ENOMEM, "out of memory for a node rule's tree of %zu nodes", nodes);
        S_cap_nodes = nodes;
    }
    if (b > S_cap_b) {
        double *g = realloc(S_go, b * sizeof *g);
        size_t *k = realloc(S_kid, b * sizeof *k), *kt = realloc(S_kidtok, b * sizeof *kt);
        if (g)
            S_go = g;
        if (k)
            S_kid = k;
        if (kt)
            S_kidtok = kt;
        if (!g || !k || !kt)
            return sd_error_set(err, SD_ENOMEM, "out of memory for a node rule's %zu children", b);
        S_cap_b = b;
    }
    return SD_OK;
}

/* The tree rule (sd_tree_rule_call) composed of the node rule `user`. */
static int S_compose(void *user, const sd_chain *c, const sd_params *par, const sd_tree_view *tr, double *pi,
                     double *law, sd_error *err)
{
    const S_node *nr = user;
    const char *name = nr->vt->name;
    size_t V = tr->V, n = tr->nodes, bmax = 1;
    for (size_t l = 0; l < tr->D; l++)
        if (tr->b[l] > bmax)
            bmax = tr->b[l];
    int rc = S_scratch(n, bmax, err);
    if (rc)
        return rc;
    double *reach = S_reach, *go = S_go;
    memset(reach, 0, n * sizeof *reach);
    reach[0] = 1.0;
    for (size_t v = 0; v < n; v++) {
        double r = reach[v];
        if (tr->tok[v] == SD_TREE_ABSENT || !(r > 0.0))
            continue;
        size_t l = tr->depth[v], m = 0, pos = tr->t + l;
        if (l < tr->D) {
            size_t first = tr->off[l + 1] + (v - tr->off[l]) * tr->b[l];
            for (size_t j = 0; j < tr->b[l]; j++)
                if (tr->tok[first + j] != SD_TREE_ABSENT) {
                    S_kid[m] = first + j;
                    S_kidtok[m++] = tr->tok[first + j];
                }
        }
        double *res = law + v * V;
        if (m == 0) { /* a leaf: the bonus token from q (none past the horizon) */
            pi[v] = r;
            if (pos <= c->T)
                memcpy(res, sd_chain_q(c, pos, tr->tok[v]), V * sizeof *res);
            continue;
        }
        for (size_t u = v, i = l + 1; i > 0; i--, u = tr->parent[u] == SD_TREE_ABSENT ? 0 : tr->parent[u])
            S_path[i - 1] = tr->tok[u];
        memset(go, 0, m * sizeof *go);
        memset(res, 0, V * sizeof *res);
        sd_node_view view = {.V = V, .t = pos, .depth = l, .draw = tr->draw, .path = S_path,
                             .q = sd_chain_q(c, pos, tr->tok[v]), .p = sd_chain_p(c, pos, tr->tok[v]), .m = m,
                             .kids = S_kidtok};
        if ((rc = nr->call(nr->user, c, par, &view, go, res, err)) != SD_OK)
            return err && err->msg[0] ? rc
                                      : sd_error_set(err, rc, "verifier %s: its node rule failed at node %zu "
                                                     "(depth %zu, position %zu)", name, v, l, pos);
        double sum = 0.0;
        for (size_t j = 0; j < m; j++) {
            if (go[j] < 0.0 && go[j] >= -1e-12)
                go[j] = 0.0;
            if (!(go[j] >= 0.0 && go[j] <= 1.0 + 1e-9))
                return sd_error_set(err, SD_EINTERNAL, "verifier %s: its node rule gave go[%zu] = %.17g at node "
                                    "%zu (depth %zu, position %zu); expected a probability", name, j, go[j], v, l,
                                    pos);
            sum += go[j];
        }
        if (!(sum <= 1.0 + 1e-9))
            return sd_error_set(err, SD_EINTERNAL, "verifier %s: its node rule's go sums to %.17g at node %zu "
                                "(depth %zu, position %zu); expected at most 1 (within 1e-9)", name, sum, v, l, pos);
        double stop = 1.0 - sum;
        if (stop <= 1e-12) {
            stop = 0.0;
            memset(res, 0, V * sizeof *res);
        } else {
            double mass = 0.0;
            for (size_t y = 0; y < V; y++) {
                if (!(res[y] >= 0.0 && res[y] <= 1.0 + 1e-9))
                    return sd_error_set(err, SD_EINTERNAL, "verifier %s: its node rule gave residual[%zu] = "
                                        "%.17g at node %zu (depth %zu, position %zu); expected a probability",
                                        name, y, res[y], v, l, pos);
                mass += res[y];
            }
            if (!(fabs(mass - 1.0) <= 1e-9))
                return sd_error_set(err, SD_EINTERNAL, "verifier %s: its node rule's residual sums to %.17g at "
                                    "node %zu (depth %zu, position %zu), where it stops with probability %.3g; "
                                    "expected 1 (within 1e-9)", name, mass, v, l, pos, stop);
        }
        pi[v] = r * stop;
        for (size_t j = 0; j < m; j++)
            reach[S_kid[j]] = r * go[j];
    }
    return SD_OK;
}

/* A plugin's node rule: the sd_verifier_type.node_rule of user. */
static int S_plugin_node(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                         double *residual, sd_error *err)
{
    const sd_verifier_type *vt = user;
    return vt->node_rule(c, par, node, go, residual, err);
}

int sd_node_rule_attach(sd_verifier_type *vt, sd_node_rule_call call, void *user, unsigned draws, sd_error *err)
{
    size_t i;
    for (i = 0; i < S_nnodes && S_nodes[i].vt != vt; i++)
        ;
    int again = i < S_nnodes;
    if (!call && !again) {
        /* a plugin's type: the slots simdec fills must be empty */
        static const char *const own[] = {"alloc",        "free",       "step", "exact", "kernels",
                                          "iteration_law", "prefix_law", "given_output", "tree",
                                          "trace",        "tree_rule"};
        const int set[] = {vt->alloc != NULL,        vt->free != NULL,       vt->step != NULL,
                           vt->exact != NULL,        vt->kernels != NULL,    vt->iteration_law != NULL,
                           vt->prefix_law != NULL,   vt->given_output != NULL, vt->tree != NULL,
                           vt->trace != NULL,        vt->tree_rule != NULL};
        for (size_t j = 0; j < sizeof own / sizeof *own; j++)
            if (set[j])
                return sd_error_set(err, SD_EDATA, "verifier '%s': a node rule is given, so simdec supplies %s; "
                                    "expected it NULL", vt->name, own[j]);
        if (!vt->node_rule)
            return sd_error_set(err, SD_EDATA, "verifier '%s': no node rule", vt->name);
    }
    if (!again && S_nnodes == SD_TREE_RULE_MAX)
        return sd_error_set(err, SD_ETOOBIG, "verifier '%s': more than %d verifiers given as node rules", vt->name,
                            SD_TREE_RULE_MAX);
    S_node old = S_nodes[i];
    S_nodes[i] = (S_node){.call = call ? call : S_plugin_node, .user = call ? user : (void *)vt, .vt = vt};
    int rc = sd_tree_rule_attach(vt, S_compose, &S_nodes[i], draws, err);
    if (rc) {
        S_nodes[i] = old;
        return rc;
    }
    if (!again)
        S_nnodes++;
    return sd_node_rule_cost(vt, 0.0, 1, err);
}

int sd_node_rule_cost(const sd_verifier_type *vt, double call_cost, int per_node, sd_error *err)
{
    if (!vt->tree || vt->tree->rule != SD_TREE_CALLBACK)
        return sd_error_set(err, SD_EUSAGE, "verifier '%s' is not given as a tree or node rule", vt->name);
    /* the kind is sd_tree_rule.c's, not const (the type only points to it as const) */
    sd_tree_kind *k = (sd_tree_kind *)(uintptr_t)vt->tree;
    k->call_cost = call_cost;
    k->per_node = per_node;
    return SD_OK;
}
