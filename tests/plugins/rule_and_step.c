/* rule_and_step.c — a tree rule that also gives a step (simdec supplies
 * the step of a tree rule: loading refuses it, tests/test_tree_rules.c). */
#include "common.h"

static int S_rule(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                  sd_error *err)
{
    (void)c, (void)par, (void)tree, (void)law, (void)err;
    pi[0] = 1.0;
    return SD_OK;
}

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule"),
    SD_PARAM_TREE("2"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_test_rule_and_step = {
    .name = "test-rule-and-step",
    .summary = "test plugin: a tree rule and a step",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
    .tree_rule = S_rule,
};

SD_PLUGIN(&sd_verifier_test_rule_and_step);
