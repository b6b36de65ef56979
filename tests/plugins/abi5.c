/* abi5.c — a plugin built for plugin interface version 5, which had no
 * tree_rule: the fields past version 5's end are set here to what a
 * version-6 plugin would set, and loading must not read them
 * (tests/test_tree_rules.c: it loads, runs its step, and is no tree rule). */
#include "common.h"

static int S_rule(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                  sd_error *err)
{
    (void)c, (void)par, (void)tree, (void)pi, (void)law;
    return sd_error_set(err, SD_EINTERNAL, "a version-5 plugin's bytes past its type were read");
}

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule"),
    SD_PARAM_TREE("2"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_test_abi5 = {
    .name = "test-abi5",
    .summary = "test plugin: interface version 5",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
    .tree_rule = S_rule,
};

SD_PLUGIN_EXPORT const sd_plugin simdec_plugin = {5u, (const sd_verifier_type *const[]){&sd_verifier_test_abi5, NULL}};
