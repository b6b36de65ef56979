/* test_tree_rules.c — token-tree verifiers written as tree rules
 * (sd_verifier_type.tree_rule, plugin interface 6; sims/verifiers/sd_tree.h,
 * sd_tree_rule_attach): the example plugin examples/tree_rule.c writes
 * top-down recursive rejection sampling from the rule's contract alone, so
 * simdec's enumerator must give it exactly the built-in tree-rrs,
 * tree-rrs-wor and tree-topk values (1e-12: the same arithmetic in another
 * order of calls); check --exact passes it and flags its broken control;
 * its Monte-Carlo meets its exact value; a rule breaking the contract is
 * refused naming what it broke; a version-5 plugin still loads.
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
#include "../sims/exact/sd_exact_tree.h"
#include "../sims/verifiers/sd_tree.h"
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
    cr_assert_eq(sd_plugin_load(S_SO("tree_rule"), &err), SD_OK, "%s (run `make examples`)", err.msg);
}

/* The rule's enumeration equals the built-in verifier's: E[accepted], the
 * joint law of (accepted length, emitted token) at every context of the
 * first two positions, and the whole generation's target calls and
 * rejections; shapes from one node to three levels, drafts i.i.d., without
 * replacement (b >= V exhausts the row: absent nodes) and top-b (b > V:
 * absent nodes), on a chain without zeros and two with exact zeros. */
Test(tree_rules, enumeration_equals_the_builtin_verifiers)
{
    S_load();
    tu_rule_equals_the_builtins(tu_rule_vt("rule-tree-rrs"));
}

/* The exact slot and the iteration law are the enumeration's: run's exact
 * target calls, and Monte-Carlo of the rule (simdec's step: draft, call the
 * rule, sample its outcome) within 4 se of them.  20000 trials, seed 11, on
 * a chain of V = 4, T = 8 with zeros; iid 2,1 and wor 2,2. */
Test(tree_rules, monte_carlo_meets_the_exact_value)
{
    S_load();
    tu_rule_monte_carlo_meets_exact(tu_rule_vt("rule-tree-rrs"));
}

/* check --exact: the exact TV of the law of x_1..x_L to the target's is
 * rounding for the rule, every drafting rule; the broken control (the
 * residual not renormalised) is far from it and its chi-square flags it. */
Test(tree_rules, check_exact_passes_the_rule_and_flags_the_broken_one)
{
    static const char *const ok[] = {"--tree 2,1 --draw iid", "--tree 2,2 --draw wor", "--tree 3,1 --draw topk"};
    for (size_t i = 0; i < 3; i++)
        tu_rule_check_exact(S_SO("tree_rule"), "rule-tree-rrs", ok[i], 1);
    tu_rule_check_exact(S_SO("tree_rule"), "rule-broken-tree", "--tree 2,1", 0);
}

/* eval accept-length: exact by enumeration (equal to the built-in
 * tree-rrs's), Monte-Carlo beside it; beyond the enumeration's limit,
 * Monte-Carlo with its standard error and the reason. */
Test(tree_rules, eval_accept_length_is_exact_where_trees_can_be_enumerated)
{
    char args[512];
    snprintf(args, sizeof args, "eval accept-length --plugin %s --algo rule-tree-rrs --tree 2,2 --V 4 --step 2 "
             "--state 1 --trials 20000 --seed 3 --json", S_SO("tree_rule"));
    json_t *o = tu_json(args);
    json_t *b = tu_json("eval accept-length --algo tree-rrs --tree 2,2 --V 4 --step 2 --state 1 --json");
    double ex = json_real_value(json_object_get(o, "exact")), eb = json_real_value(json_object_get(b, "expected_accepted"));
    cr_expect(tu_contains(json_string_value(json_object_get(o, "method")), "enumeration"), "%s",
              json_string_value(json_object_get(o, "method")));
    cr_expect(fabs(ex - eb) <= 1e-12, "rule %.17g, tree-rrs %.17g", ex, eb);
    json_t *mc = json_object_get(o, "mc");
    double mean = json_real_value(json_object_get(mc, "mean")), se = json_real_value(json_object_get(mc, "stderr"));
    cr_expect(fabs(mean - ex) < 4 * se, "MC %.6f +- %.6f, exact %.6f", mean, se, ex);
    json_decref(o);
    json_decref(b);
    /* 14 nodes at V = 50: 50^14 drafted trees */
    snprintf(args, sizeof args, "eval accept-length --plugin %s --algo rule-tree-rrs --tree 2,2,2 --V 50 "
             "--trials 2000 --json", S_SO("tree_rule"));
    o = tu_json(args);
    cr_expect_str_eq(json_string_value(json_object_get(o, "method")), "Monte-Carlo");
    cr_expect(json_is_null(json_object_get(o, "exact")));
    cr_expect(tu_contains(json_string_value(json_object_get(o, "exact_not_computed")), "drafted trees"), "%s",
              json_string_value(json_object_get(o, "exact_not_computed")));
    cr_expect(json_real_value(json_object_get(json_object_get(o, "mc"), "stderr")) > 0.0);
    json_decref(o);
}

/* --- the contract ------------------------------------------------------------- */

static int S_half(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                  sd_error *err)
{
    (void)par, (void)err;
    pi[0] = 0.5; /* Σ pi = 1/2 */
    memcpy(law, sd_chain_q(c, tree->t, tree->tok[0]), tree->V * sizeof *law);
    return SD_OK;
}

static int S_no_law(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                    sd_error *err)
{
    (void)c, (void)par, (void)tree, (void)law, (void)err;
    pi[0] = 1.0; /* law[0] left all 0 */
    return SD_OK;
}

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule"),
    SD_PARAM_TREE("2"),
    SD_PARAM_END,
};
static sd_verifier_type S_half_vt = {.name = "test-rule-half", .summary = "pi sums to 1/2", .params = S_params,
                                     .tree_rule = S_half};
static sd_verifier_type S_nolaw_vt = {.name = "test-rule-no-law", .summary = "law unset", .params = S_params,
                                      .tree_rule = S_no_law};

Test(tree_rules, a_rule_breaking_the_contract_fails_naming_it)
{
    sd_error err;
    sd_verifier_type *vts[] = {&S_half_vt, &S_nolaw_vt};
    const char *want[] = {"pi sums to 0.5", "law[0] sums to 0"};
    sd_chain *c = tu_chain(3, 4, 2);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(sd_tree_rule_attach(vts[i], NULL, NULL, 0, &err), SD_OK, "%s", err.msg);
        sd_params par = tu_rule_par(vts[i], "2", "iid");
        double ex;
        cr_expect_eq(sd_exact_tree_accept(c, 1, 0, &par, vts[i]->tree, &ex, NULL, &err), SD_EINTERNAL);
        cr_expect(tu_contains(err.msg, vts[i]->name) && tu_contains(err.msg, want[i]), "%s", err.msg);
        sd_sim_opts so;
        memset(&so, 0, sizeof so);
        so.seed = 1;
        so.trials = 10;
        so.threads = 1;
        sd_sim_result r;
        cr_expect_eq(sd_sim_run(vts[i], c, &par, &so, &r, &err), SD_EINTERNAL);
        cr_expect(tu_contains(err.msg, want[i]), "%s", err.msg);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
    /* without tree and draw, and with a step of its own: refused */
    static const sd_param_decl none[] = {SD_PARAM_END};
    sd_verifier_type bare = {.name = "test-rule-bare", .summary = "no tree", .params = none, .tree_rule = S_half};
    cr_expect_eq(sd_tree_rule_attach(&bare, NULL, NULL, 0, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, "needs the parameters tree and draw"), "%s", err.msg);
    sd_error_clear(&err);
    cr_expect_eq(sd_plugin_load(S_SO("rule_and_step"), &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, "simdec supplies") && tu_contains(err.msg, "rule_and_step.so: "), "%s", err.msg);
    cr_expect_null(sd_verifier_find("test-rule-and-step"));
}

/* A version-5 plugin loads; the bytes past version 5's type (here a
 * tree_rule that fails if called) are not read: it runs its own step and
 * is no tree verifier. */
Test(tree_rules, a_version_5_plugin_still_loads)
{
    sd_error err;
    cr_assert_eq(sd_plugin_load(S_SO("abi5"), &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_plugin_load(S_SO("abi5"), &err), SD_OK, "twice: %s", err.msg);
    const sd_verifier_type *vt = tu_rule_vt("test-abi5");
    cr_expect_null(vt->tree);
    cr_expect_null(vt->tree_rule);
    sd_chain *c = tu_chain(3, 4, 2);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_opts so;
    memset(&so, 0, sizeof so);
    so.seed = 1;
    so.trials = 100;
    sd_sim_result r;
    cr_expect_eq(sd_sim_run(vt, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
    sd_sim_result_free(&r);
    sd_chain_free(c);
}
