/* test_node_rules.c — token-tree verifiers written as a rule at one node
 * (sd_verifier_type.node_rule, plugin interface 7; sims/verifiers/sd_node_rule.h):
 * the example plugin examples/node_rule.c writes recursive rejection
 * sampling for one node only, simdec composes it from the root down, so
 * the enumerator must give exactly the built-in tree-rrs, tree-rrs-wor and
 * tree-topk values (1e-12: the same arithmetic in another order); check
 * --exact passes it and flags its control without the residual update;
 * its Monte-Carlo meets its exact value; a node rule breaking the contract
 * is refused naming what it broke; a version-6 plugin still loads; a
 * costly rule's exact values are refused past its limit, pointing to
 * Monte-Carlo.
 *
 * Seeds are fixed.  Monte-Carlo means are compared with exact values within
 * 4 standard errors (a false alarm about 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../sims/verifiers/sd_node_rule.h"
#include "test_util.h"
#include "tu_rules.h"
#include "tu_trace.h"

#ifndef SD_EXAMPLES_DIR
#define SD_EXAMPLES_DIR "build/examples"
#endif
#define S_SO(name) SD_EXAMPLES_DIR "/" name ".so"

static void S_load(void)
{
    sd_error err;
    cr_assert_eq(sd_plugin_load(S_SO("node_rule"), &err), SD_OK, "%s (run `make examples`)", err.msg);
}

/* The composed rule's enumeration equals the built-in verifier's:
 * E[accepted], the joint law of (accepted length, emitted token) at every
 * context of the first two positions, and the whole generation's target
 * calls and rejections; shapes from one node to three levels, drafts
 * i.i.d., without replacement (b >= V exhausts the row: absent nodes) and
 * top-b (b > V: absent nodes), on a chain without zeros and two with exact
 * zeros. */
Test(node_rules, enumeration_equals_the_builtin_verifiers)
{
    S_load();
    const sd_verifier_type *rule = tu_rule_vt("node-tree-rrs");
    cr_expect_eq(rule->tree->per_node, 1);
    tu_rule_equals_the_builtins(rule);
}

/* The exact slot is the enumeration's: run's exact target calls and
 * rejections, and Monte-Carlo of the composed rule (draft, call the node
 * rule down the tree, sample the outcome) within 4 se of them.  20000
 * trials, seed 11, on a chain of V = 4, T = 8 with zeros. */
Test(node_rules, monte_carlo_meets_the_exact_value)
{
    S_load();
    tu_rule_monte_carlo_meets_exact(tu_rule_vt("node-tree-rrs"));
}

/* check --exact: the exact TV of the law of x_1..x_L to the target's is
 * rounding for the node rule, every drafting rule; the control that never
 * updates the residual after a rejected child is far from it and its
 * chi-square flags it; eval accept-length's exact value is tree-rrs's. */
Test(node_rules, check_exact_passes_the_rule_and_flags_the_broken_one)
{
    static const char *const ok[] = {"--tree 2,1 --draw iid", "--tree 2,2 --draw wor", "--tree 3,1 --draw topk"};
    for (size_t i = 0; i < 3; i++)
        tu_rule_check_exact(S_SO("node_rule"), "node-tree-rrs", ok[i], 1);
    static const char *const bad[] = {"--tree 2,1 --draw iid", "--tree 3 --draw wor"};
    for (size_t i = 0; i < 2; i++)
        tu_rule_check_exact(S_SO("node_rule"), "node-broken-tree", bad[i], 0);
    char args[512];
    snprintf(args, sizeof args, "eval accept-length --plugin %s --algo node-tree-rrs --tree 2,2 --V 4 --step 2 "
             "--state 1 --trials 20000 --seed 3 --json", S_SO("node_rule"));
    json_t *o = tu_json(args);
    json_t *b = tu_json("eval accept-length --algo tree-rrs --tree 2,2 --V 4 --step 2 --state 1 --json");
    double ex = json_real_value(json_object_get(o, "exact"));
    double eb = json_real_value(json_object_get(b, "expected_accepted"));
    cr_expect(fabs(ex - eb) <= 1e-12, "node rule %.17g, tree-rrs %.17g", ex, eb);
    json_t *mc = json_object_get(o, "mc");
    double mean = json_real_value(json_object_get(mc, "mean")), se = json_real_value(json_object_get(mc, "stderr"));
    cr_expect(fabs(mean - ex) < 4 * se, "MC %.6f +- %.6f, exact %.6f", mean, se, ex);
    json_decref(o);
    json_decref(b);
}

/* The control tests every child against q and stops with [q - p]+: with
 * one child per node it is single-draft speculative sampling, lossless
 * (exact TV rounding on 1,1); with b >= 2 i.i.d. siblings it is biased,
 * the more the more siblings (V = 4, the CLI's default chain: 0.0545,
 * 0.0669, 0.0702 for b = 2, 3, 4). */
Test(node_rules, the_stale_residual_is_biased_only_with_siblings)
{
    static const char *const shapes[] = {"1,1", "2", "3", "4"};
    double tv[4];
    char args[512];
    for (size_t i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "check --exact --plugin %s --algo node-broken-tree --tree %s --V 4 --json",
                 S_SO("node_rule"), shapes[i]);
        json_t *o = tu_json(args);
        tv[i] = json_real_value(json_object_get(o, "exact_tv"));
        json_decref(o);
    }
    cr_expect(tv[0] <= 1e-12, "1,1: exact TV %.3g", tv[0]);
    cr_expect(fabs(tv[1] - 0.0545) < 5e-4 && fabs(tv[2] - 0.0669) < 5e-4 && fabs(tv[3] - 0.0702) < 5e-4,
              "b = 2, 3, 4: exact TV %.4g %.4g %.4g", tv[1], tv[2], tv[3]);
    cr_expect(tv[1] < tv[2] && tv[2] < tv[3]);
}

/* --- the contract ------------------------------------------------------------- */

static int S_too_much(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                      double *residual, sd_error *err)
{
    (void)user, (void)c, (void)par, (void)err;
    for (size_t j = 0; j < node->m; j++)
        go[j] = 0.75; /* Σ go = 1.5 with two children */
    residual[0] = 1.0;
    return SD_OK;
}

static int S_no_residual(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node,
                         double *go, double *residual, sd_error *err)
{
    (void)user, (void)c, (void)par, (void)node, (void)residual, (void)err;
    go[0] = 0.5; /* stops with probability 1/2, residual left all 0 */
    return SD_OK;
}

/* The rows the rule is given are the node's: q and p at the node's context,
 * its path ending with its token, its children's tokens. */
static int S_rows_seen(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                       double *residual, sd_error *err)
{
    (void)user, (void)par;
    size_t x = node->path[node->depth];
    if (node->q != sd_chain_q(c, node->t, x) || node->p != sd_chain_p(c, node->t, x) || node->m != 2)
        return sd_error_set(err, SD_EINTERNAL, "the node's rows or children are not its own");
    go[0] = go[1] = 0.0;
    memcpy(residual, node->q, node->V * sizeof *residual);
    return SD_OK;
}

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule"),
    SD_PARAM_TREE("2"),
    SD_PARAM_END,
};

Test(node_rules, a_node_rule_breaking_the_contract_fails_naming_it)
{
    static sd_verifier_type too = {.name = "test-node-too-much", .summary = "go sums to 1.5", .params = S_params};
    static sd_verifier_type nores = {.name = "test-node-no-residual", .summary = "residual unset", .params = S_params};
    static sd_verifier_type seen = {.name = "test-node-rows", .summary = "checks its view", .params = S_params};
    sd_verifier_type *vts[] = {&too, &nores, &seen};
    sd_node_rule_call calls[] = {S_too_much, S_no_residual, S_rows_seen};
    const char *want[] = {"go sums to 1.5", "residual sums to 0", NULL};
    sd_chain *c = tu_chain(3, 4, 2);
    sd_error err;
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(sd_node_rule_attach(vts[i], calls[i], NULL, 0, &err), SD_OK, "%s", err.msg);
        sd_params par = tu_rule_par(vts[i], "2", "iid");
        double ex;
        int rc = sd_exact_tree_accept(c, 2, 1, &par, vts[i]->tree, &ex, NULL, &err);
        if (!want[i]) {
            cr_expect_eq(rc, SD_OK, "%s", err.msg);
            cr_expect_eq(ex, 0.0);
            continue;
        }
        cr_expect_eq(rc, SD_EINTERNAL);
        cr_expect(tu_contains(err.msg, vts[i]->name) && tu_contains(err.msg, want[i]) &&
                  tu_contains(err.msg, "node 0 (depth 0, position 2)"), "%s", err.msg);
    }
    sd_chain_free(c);
    /* a plugin type giving no node rule, or no tree and draw: refused */
    static sd_verifier_type neither = {.name = "test-node-neither", .summary = "no rule", .params = S_params};
    cr_expect_eq(sd_node_rule_attach(&neither, NULL, NULL, 0, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, "no node rule"), "%s", err.msg);
    static const sd_param_decl none[] = {SD_PARAM_END};
    static sd_verifier_type bare = {.name = "test-node-bare", .summary = "no tree", .params = none};
    cr_expect_eq(sd_node_rule_attach(&bare, S_too_much, NULL, 0, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, "needs the parameters tree and draw"), "%s", err.msg);
}

static int S_tree_half(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                       sd_error *err)
{
    (void)c, (void)par, (void)tree, (void)pi, (void)law, (void)err;
    return SD_OK;
}

static int S_plugin_node(const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                         double *residual, sd_error *err)
{
    return S_too_much(NULL, c, par, node, go, residual, err);
}

Test(node_rules, a_plugin_type_giving_both_rules_is_refused)
{
    static sd_verifier_type both = {.name = "test-node-and-tree", .summary = "both", .params = S_params,
                                    .tree_rule = S_tree_half, .node_rule = S_plugin_node};
    sd_error err;
    cr_expect_eq(sd_node_rule_attach(&both, NULL, NULL, 0, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, "simdec supplies tree_rule"), "%s", err.msg);
}

/* A version-6 plugin loads; the bytes past version 6's type (a node rule
 * that fails if called) are not read: it is the tree rule it gives. */
Test(node_rules, a_version_6_plugin_still_loads)
{
    sd_error err;
    cr_assert_eq(sd_plugin_load(S_SO("abi6"), &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_plugin_load(S_SO("abi6"), &err), SD_OK, "twice: %s", err.msg);
    const sd_verifier_type *vt = tu_rule_vt("test-abi6");
    cr_assert_not_null(vt->tree);
    cr_expect_null(vt->node_rule);
    cr_expect_eq(vt->tree->per_node, 0);
    sd_chain *c = tu_chain(3, 4, 2);
    sd_params par = tu_rule_par(vt, "2", "iid");
    double ex = -1.0;
    cr_expect_eq(sd_exact_tree_accept(c, 1, 0, &par, vt->tree, &ex, NULL, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(ex, 0.0);
    sd_chain_free(c);
}

/* --- the cost of a rule given at run time -------------------------------------- */

static int S_rrs_like(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                      double *residual, sd_error *err)
{
    (void)user, (void)c, (void)par, (void)err;
    for (size_t j = 0; j < node->m; j++)
        go[j] = 0.0;
    memcpy(residual, node->q, node->V * sizeof *residual);
    return SD_OK;
}

/* A rule whose call costs 200 drafted trees (Python's,
 * SD_CALLBACK_CALL_COST), called at each of the 3 inner nodes of a 2,2
 * tree: one context enumerates 4^6 = 4096 trees at V = 4 (2.5e6 weighted,
 * under 4e6) and 5^6 = 15625 at V = 5 (9.4e6 > 4e6: refused, naming the calls
 * and Monte-Carlo); over a generation (T·V contexts) the 2,1 tree at V = 6
 * (216 trees, 2 calls each) passes per context (86400) and is refused over
 * T = 50 (2.6e7 > 1.6e7), both by run's exact values and by check --exact's
 * law of the first tokens.  The same rule at cost 0 (a C plugin's) is
 * under every limit. */
Test(node_rules, a_costly_rule_is_refused_pointing_to_monte_carlo)
{
    static sd_verifier_type vt = {.name = "test-node-costly", .summary = "costly", .params = S_params};
    sd_error err;
    cr_assert_eq(sd_node_rule_attach(&vt, S_rrs_like, NULL, 0, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_node_rule_cost(&vt, 200.0, 1, &err), SD_OK, "%s", err.msg);
    sd_params p22 = tu_rule_par(&vt, "2,2", "iid"), p21 = tu_rule_par(&vt, "2,1", "iid");
    sd_chain *c4 = tu_chain(4, 6, 2), *c5 = tu_chain(5, 6, 2), *c6 = tu_chain(6, 50, 2);
    double ex;
    cr_expect_eq(sd_exact_tree_accept(c4, 1, 0, &p22, vt.tree, &ex, NULL, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(sd_exact_tree_accept(c5, 1, 0, &p22, vt.tree, &ex, NULL, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "test-node-costly: exact values would call its rule 4.69e+04 times") &&
              tu_contains(err.msg, "Monte-Carlo"), "%s", err.msg);
    cr_expect_eq(sd_exact_tree_accept(c6, 1, 0, &p21, vt.tree, &ex, NULL, &err), SD_OK, "%s", err.msg);
    sd_model m6 = sd_model_of_chain(c6);
    sd_exact_values ev;
    cr_expect_eq(vt.exact(&m6, &p21, &ev, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "T·V contexts") && tu_contains(err.msg, "Monte-Carlo"), "%s", err.msg);
    double *marg = calloc(6 * 50, sizeof *marg);
    cr_assert_not_null(marg);
    cr_expect_eq(sd_exact_gen_marginals(&vt, c6, &p21, marg, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "T·V contexts") && tu_contains(err.msg, "Monte-Carlo"), "%s", err.msg);
    cr_assert_eq(sd_node_rule_cost(&vt, 0.0, 1, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(sd_exact_tree_accept(c5, 1, 0, &p22, vt.tree, &ex, NULL, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(vt.exact(&m6, &p21, &ev, &err), SD_OK, "%s", err.msg);
    free(marg);
    sd_chain_free(c4);
    sd_chain_free(c5);
    sd_chain_free(c6);
}

/* lp tree-valid --compare: one LP solve, the node rule and tree-rrs both
 * handed the LP's shape, measured on the same streams: the same mean (the
 * composed outcome is tree-rrs's to rounding, so every trial samples the
 * same node) and both below the optimum. */
Test(node_rules, lp_compare_runs_the_node_rule_on_the_lps_tree)
{
    char args[512];
    snprintf(args, sizeof args, "lp tree-valid --tree 2,1 --V 4 --plugin %s --compare node-tree-rrs,tree-rrs "
             "--trials 20000 --json", S_SO("node_rule"));
    json_t *o = tu_json(args), *cs = json_object_get(o, "comparisons");
    cr_assert_eq(json_array_size(cs), 2);
    json_t *a = json_array_get(cs, 0), *b = json_array_get(cs, 1);
    cr_expect_str_eq(json_string_value(json_object_get(a, "verifier")), "node-tree-rrs");
    cr_expect(json_is_true(json_object_get(a, "reads_tree")));
    double ma = json_real_value(json_object_get(a, "mean")), mb = json_real_value(json_object_get(b, "mean"));
    cr_expect(fabs(ma - mb) <= 1e-12, "node rule %.17g, tree-rrs %.17g", ma, mb);
    cr_expect(json_real_value(json_object_get(a, "gap_in_se")) > 4.0);
    json_decref(o);
}
