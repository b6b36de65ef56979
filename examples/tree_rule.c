/* tree_rule.c — a token-tree verifier written as a tree rule (plugin
 * interface 6, sd_verifier_type.tree_rule; docs/adding-a-verifier.md): the
 * rule says, for one drafted tree, where the iteration ends (pi[v]) and the
 * law of the token emitted after (law[v]); simdec drafts the trees, samples
 * the outcome in `run`, and enumerates every drafted tree for exact values
 * (`eval accept-length`, `check --exact`, run's exact columns).
 *
 * rule-tree-rrs: recursive rejection sampling from the root down
 * (SpecInfer's multi-step speculative sampling, Miao et al. 2024; without
 * replacement, Jeon et al. 2024).  At node v the residual R starts as q_v;
 * its children c_1..c_b are tested in turn, c_j against its own draft law
 * D_j (iid: p_v; wor: p_v without c_1..c_{j-1}, renormalised; topk: the
 * point mass at c_j), accepted with probability min(1, R(c_j)/D_j(c_j));
 * after a rejection R <- [R - D_j]+ / Σ[R - D_j]+.  When every child is
 * rejected the iteration ends at v with a token from R; at a leaf it ends
 * with the bonus token from q_v.  Each step is single-token recursive
 * rejection sampling, whose output law is q_v, so the whole is lossless.
 * It is the built-in tree-rrs (iid), tree-rrs-wor (wor) and tree-topk
 * (topk), written from the contract alone.
 *
 * rule-broken-tree: the same with the residual left unnormalised before the
 * next sibling's test (a control: the emitted law is still a distribution,
 * but not q; check must flag it).
 *
 * Build and run:
 *     cc -std=c11 -O2 -fPIC -shared -I include examples/tree_rule.c -o tree_rule.so -lm
 *     ./simdec eval accept-length --plugin ./tree_rule.so --algo rule-tree-rrs --tree 2,1 --V 4
 *     ./simdec check --exact --plugin ./tree_rule.so --algo rule-tree-rrs --tree 2,1 */
#include <stdlib.h>
#include <string.h>

#include "../include/simdec.h"

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid, wor or topk"),
    SD_PARAM_TREE("2,1"),
    SD_PARAM_END,
};

/* R <- [R - D]+, renormalised unless raw; returns Σ[R - D]+. */
static double S_residual(double *R, const double *D, size_t V, int raw)
{
    double mass = 0.0;
    for (size_t x = 0; x < V; x++) {
        R[x] = R[x] > D[x] ? R[x] - D[x] : 0.0;
        mass += R[x];
    }
    if (mass > 0.0 && !raw)
        for (size_t x = 0; x < V; x++)
            R[x] /= mass;
    return mass;
}

/* w normalised, or q where it has no mass (reached with probability 0). */
static void S_normalise_or(double *w, const double *q, size_t V)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++)
        s += w[x];
    for (size_t x = 0; x < V; x++)
        w[x] = s > 0.0 ? w[x] / s : q[x];
}

/* The top-down rule; raw: the broken residual.  pi[u] holds the
 * probability of reaching u until u is visited (breadth first, so every
 * parent before its children), then that of ending there. */
static int S_topdown(const sd_chain *c, const sd_tree_view *tr, double *pi, double *law, int raw, sd_error *err)
{
    size_t V = tr->V;
    double *pw = malloc(2 * V * sizeof *pw), *Dj = pw ? pw + V : NULL;
    if (!pw)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    pi[0] = 1.0;
    for (size_t v = 0; v < tr->nodes; v++) {
        size_t l = tr->depth[v], x0 = tr->tok[v];
        if (x0 == SD_TREE_ABSENT) {
            pi[v] = 0.0;
            continue;
        }
        if (l == tr->D) { /* a leaf: ends here with the bonus token */
            if (tr->t + l <= c->T)
                memcpy(law + v * V, sd_chain_q(c, tr->t + l, x0), V * sizeof *law);
            continue;
        }
        const double *q = sd_chain_q(c, tr->t + l, x0), *p = sd_chain_p(c, tr->t + l, x0);
        double *R = law + v * V, rem = pi[v];
        memcpy(R, q, V * sizeof *R);
        memcpy(pw, p, V * sizeof *pw);
        size_t first = tr->off[l + 1] + (v - tr->off[l]) * tr->b[l];
        for (size_t j = 0; j < tr->b[l]; j++) {
            size_t u = first + j, x = tr->tok[u];
            if (x == SD_TREE_ABSENT)
                break;
            if (tr->draw == SD_DRAW_TOPK) {
                memset(Dj, 0, V * sizeof *Dj);
                Dj[x] = 1.0;
            } else {
                memcpy(Dj, tr->draw == SD_DRAW_WOR ? pw : p, V * sizeof *Dj);
            }
            double a = Dj[x] > R[x] ? R[x] / Dj[x] : 1.0;
            pi[u] = rem * a;
            rem *= 1.0 - a;
            if (S_residual(R, Dj, V, raw) <= 0.0) { /* R = D_j: the rejection had probability 0 */
                pi[u] += rem;
                rem = 0.0;
                memcpy(R, q, V * sizeof *R);
            }
            if (tr->draw == SD_DRAW_WOR) { /* the next sibling's draft law */
                pw[x] = 0.0;
                S_normalise_or(pw, pw, V);
            }
        }
        pi[v] = rem;
        S_normalise_or(R, q, V);
    }
    free(pw);
    return SD_OK;
}

static int S_rule(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                  sd_error *err)
{
    (void)par;
    return S_topdown(c, tree, pi, law, 0, err);
}

static int S_rule_broken(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi,
                         double *law, sd_error *err)
{
    (void)par;
    return S_topdown(c, tree, pi, law, 1, err);
}

const sd_verifier_type sd_verifier_rule_tree_rrs = {
    .name = "rule-tree-rrs",
    .summary = "example: tree recursive rejection sampling written as a tree rule",
    .params = S_params,
    .tree_rule = S_rule,
};

const sd_verifier_type sd_verifier_rule_broken_tree = {
    .name = "rule-broken-tree",
    .summary = "example control: rule-tree-rrs with the residual not renormalised",
    .params = S_params,
    .flags = SD_VERIFIER_CONTROL,
    .tree_rule = S_rule_broken,
};

SD_PLUGIN(&sd_verifier_rule_tree_rrs, &sd_verifier_rule_broken_tree);
