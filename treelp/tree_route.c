/* tree_route.c — tree-valid's route: the equality theorem or the LP.
 *
 * Theorem (docs/findings.md, item 19).  tree-valid, the best lossless
 * verifier of a drafted token tree, equals tree-ot, the best coupling of
 * the drafted tree T and the target sequence Y_1..Y_D scoring the depth of
 * the target path inside T, whenever all levels of the tree but at most
 * one are complete (every node of the level has all V tokens as children).
 * A verifier stops only where the target path leaves the tree, and after a
 * stop the next token is drawn afresh; at a complete level the path never
 * leaves, so a coupling's score depends on (T, Y_{<=m}) only, m the one
 * incomplete level.  The verifier that draws Y_{<=m} from an optimal
 * coupling given T and Y_{>m} from the target's conditional law has the
 * target's joint law, its stop event is a function of (T, Y_{<=m}) and so
 * independent of Y_{>m} given Y_{<=m}: lossless, with the coupling's
 * value.  Depth 1 (no other level) is the k-draft transport result of
 * Sun et al. 2023 (SpecTr: Fast Speculative Decoding via Optimal
 * Transport).  There tree-ot's minimum-cost flow gives tree-valid.
 *
 * Depth 1 with i.i.d. drafts needs no enumeration: tree-ot is then OTM-k,
 * the largest probability that Y ~ q is among k i.i.d. drafts from p,
 * whose max-flow/min-cut value 1 - max_B [p(B)^k - q(B)] is attained on a
 * prefix of the tokens sorted by q/p (Sun et al. 2023, §5; the proof in
 * docs/otm-prefix.md, src/sd_exact_otm.h): O(V log V) for any k, where
 * the drafted sets number C(V+k-1, k) (1.5·10^19 at k = 8, V = 1000). */
#include <math.h>
#include <string.h>
#include <time.h>

#include "../src/sd_exact_otm.h"

#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../lp/sd_lp.h"
#include "sd_treelp.h"

int sd_lp_tree_valid_is_ot(size_t V, const sd_params *par, int draw)
{
    size_t incomplete = 0;
    for (size_t j = 0; j < par->tree_depth; j++)
        if (!((draw == SD_DRAW_WOR || draw == SD_DRAW_TOPK) && par->tree[j] >= V))
            incomplete++;
    return incomplete <= 1;
}

/* Depth 1, i.i.d. drafts: OTM-k by the sorted prefix. */
static int S_depth1_iid(const sd_chain *c, size_t t, size_t a, const sd_params *par, sd_lp_result *res,
                        sd_error *err)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sd_lp_result_reset(res, NULL);
    int rc = sd_lp_tree_context("tree-valid", c, t, a, par, err);
    double v = NAN;
    if (!rc)
        rc = sd_exact_otm_acceptance(sd_chain_p(c, t, a), sd_chain_q(c, t, a), c->V, par->tree[0], &v, NULL, err);
    if (rc)
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->optimum = v;
    res->optimal = 1;
    res->dual_bound = v;
    res->primal_residual = 0.0;
    snprintf(res->status, sizeof res->status, "optimal");
    snprintf(res->method, sizeof res->method, "otm-prefix");
    res->variables = res->constraints = res->nonzeros = 0;
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return SD_OK;
}

int sd_lp_tree_valid(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw,
                     const sd_lp_opts *opts, sd_lp_result *res, sd_error *err)
{
    /* where the theorem applies, tree-ot's minimum-cost flow solves it,
     * unless the simplex is asked for (--method simplex|dual, --exact:
     * the LP stays as the cross-check) */
    if (par->tree_depth >= 1 && sd_lp_tree_valid_is_ot(c->V, par, draw)
        && (!opts || ((opts->method == SD_LP_METHOD_AUTO || opts->method == SD_LP_METHOD_FLOW) && !opts->exact))) {
        sd_lp_opts fo;
        if (opts)
            fo = *opts;
        else
            sd_lp_opts_default(&fo);
        fo.method = SD_LP_METHOD_FLOW;
        if (par->tree_depth == 1 && draw == SD_DRAW_IID)
            return S_depth1_iid(c, t, a, par, res, err);
        return sd_lp_tree_ot(c, t, a, par, draw, &fo, res, err);
    }
    /* elsewhere the LP: on COIN-OR CLP by default (measured faster than
     * GLPK's simplex on every tree-valid LP tried, docs/lp.md), GLPK's
     * primal simplex when CLP's answer is not certified within 1e-9 */
    if (!opts || (opts->method == SD_LP_METHOD_AUTO && !opts->exact)) {
        sd_lp_opts co;
        if (opts)
            co = *opts;
        else
            sd_lp_opts_default(&co);
        co.method = SD_LP_METHOD_CLP;
        int rc = sd_lp_tree_valid_lp(c, t, a, par, draw, &co, res, err);
        if (rc || res->optimal || strcmp(res->status, "uncertified"))
            return rc;
        co.method = SD_LP_METHOD_SIMPLEX;
        return sd_lp_tree_valid_lp(c, t, a, par, draw, &co, res, err);
    }
    return sd_lp_tree_valid_lp(c, t, a, par, draw, opts, res, err);
}
