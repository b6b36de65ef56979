/* node_rule.c — a token-tree verifier written as a rule at one node (plugin
 * interface 7, sd_verifier_type.node_rule; docs/adding-a-verifier.md): the
 * rule says only what happens at one node of a drafted tree — given the
 * target row q and the draft row p there and the children's tokens in
 * drafting order, the probability of descending into each child and the
 * law of the residual token emitted when it stops — and simdec composes it
 * from the root down into a tree rule, drafts the trees, samples in `run`
 * and enumerates every drafted tree for exact values (`eval
 * accept-length`, `check --exact`, run's exact columns, `lp tree-valid
 * --compare`).
 *
 * node-tree-rrs: recursive rejection sampling at each node (SpecInfer's
 * multi-step speculative sampling, Miao et al. 2024; without replacement,
 * Jeon et al. 2024).  The
 * residual R starts as q; the children c_1..c_m are tested in turn, c_j
 * against its own draft law D_j (iid: p; wor: p without c_1..c_{j-1},
 * renormalised; topk: the point mass at c_j), and the walk descends into
 * c_j with probability (what is left) · min(1, R(c_j)/D_j(c_j)); after a
 * rejection R <- [R - D_j]+ / Σ[R - D_j]+.  What is left after the last
 * child stops at the node with a token from R.  Each test is single-token
 * rejection sampling of R against D_j, whose output law is R, so the token
 * leaving the node follows q: lossless.  It is the built-in tree-rrs (iid),
 * tree-rrs-wor (wor) and tree-topk (topk), and examples/tree_rule.c's rule
 * with the walk over the tree left to simdec.
 *
 * node-broken-tree: the same without the residual update after a rejected
 * child (every child is tested against q; the single-draft residual
 * [q - p]+ at the end) — a control: with two children or more the emitted
 * law is not q, and check must flag it.
 *
 * Build and run:
 *     cc -std=c11 -O2 -fPIC -shared -I include examples/node_rule.c -o node_rule.so -lm
 *     ./simdec eval accept-length --plugin ./node_rule.so --algo node-tree-rrs --tree 2,1 --V 4
 *     ./simdec check --exact --plugin ./node_rule.so --algo node-tree-rrs --tree 2,1 */
#include <stdlib.h>
#include <string.h>

#include "../include/simdec.h"

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid, wor or topk"),
    SD_PARAM_TREE("2,1"),
    SD_PARAM_END,
};

/* w normalised, or q where it has no mass. */
static void S_normalise_or(double *w, const double *q, size_t V)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++)
        s += w[x];
    for (size_t x = 0; x < V; x++)
        w[x] = s > 0.0 ? w[x] / s : q[x];
}

/* go and the residual R (simdec's arrays) at one node; stale: R is never
 * updated after a rejection (the broken control). */
static int S_node(const sd_node_view *nd, double *go, double *R, int stale, sd_error *err)
{
    size_t V = nd->V;
    double *pw = malloc(2 * V * sizeof *pw), *Dj = pw ? pw + V : NULL;
    if (!pw)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    memcpy(R, nd->q, V * sizeof *R);
    memcpy(pw, nd->p, V * sizeof *pw);
    double rem = 1.0; /* P(every child so far rejected) */
    for (size_t j = 0; j < nd->m; j++) {
        size_t x = nd->kids[j];
        if (nd->draw == SD_DRAW_TOPK) {
            memset(Dj, 0, V * sizeof *Dj);
            Dj[x] = 1.0;
        } else {
            memcpy(Dj, nd->draw == SD_DRAW_WOR ? pw : nd->p, V * sizeof *Dj);
        }
        double a = Dj[x] > R[x] ? R[x] / Dj[x] : 1.0;
        go[j] = rem * a;
        rem *= 1.0 - a;
        if (!stale) {
            double mass = 0.0;
            for (size_t y = 0; y < V; y++) {
                R[y] = R[y] > Dj[y] ? R[y] - Dj[y] : 0.0;
                mass += R[y];
            }
            if (mass > 0.0) {
                for (size_t y = 0; y < V; y++)
                    R[y] /= mass;
            } else { /* R = D_j: the rejection had probability 0 */
                go[j] += rem;
                rem = 0.0;
                memcpy(R, nd->q, V * sizeof *R);
            }
        }
        if (nd->draw == SD_DRAW_WOR) { /* the next sibling's draft law */
            pw[x] = 0.0;
            S_normalise_or(pw, pw, V);
        }
    }
    if (stale) /* the single-draft residual [q - p]+ */
        for (size_t y = 0; y < V; y++)
            R[y] = nd->q[y] > nd->p[y] ? nd->q[y] - nd->p[y] : 0.0;
    S_normalise_or(R, nd->q, V);
    free(pw);
    return SD_OK;
}

static int S_rule(const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go, double *residual,
                  sd_error *err)
{
    (void)c, (void)par;
    return S_node(node, go, residual, 0, err);
}

static int S_rule_broken(const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                         double *residual, sd_error *err)
{
    (void)c, (void)par;
    return S_node(node, go, residual, 1, err);
}

const sd_verifier_type sd_verifier_node_tree_rrs = {
    .name = "node-tree-rrs",
    .summary = "example: tree recursive rejection sampling written as a node rule",
    .params = S_params,
    .node_rule = S_rule,
};

const sd_verifier_type sd_verifier_node_broken_tree = {
    .name = "node-broken-tree",
    .summary = "example control: node-tree-rrs without the residual update after a rejected child",
    .params = S_params,
    .flags = SD_VERIFIER_CONTROL,
    .node_rule = S_rule_broken,
};

SD_PLUGIN(&sd_verifier_node_tree_rrs, &sd_verifier_node_broken_tree);
