/* abi6.c — a plugin built for plugin interface version 6, which had no
 * node_rule: its tree rule ends every iteration at the root with a token
 * from q, and the field past version 6's end is set here to what a
 * version-7 plugin would set (a node rule that fails if called); loading
 * must not read it (tests/test_node_rules.c: it loads as a tree rule). */
#include "../../include/simdec.h"

#include <string.h>

static int S_root(const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi, double *law,
                  sd_error *err)
{
    (void)par, (void)err;
    pi[0] = 1.0;
    memcpy(law, sd_chain_q(c, tree->t, tree->tok[0]), tree->V * sizeof *law);
    return SD_OK;
}

static int S_node(const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go, double *residual,
                  sd_error *err)
{
    (void)c, (void)par, (void)node, (void)go, (void)residual;
    return sd_error_set(err, SD_EINTERNAL, "a version-6 plugin's bytes past its type were read");
}

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule"),
    SD_PARAM_TREE("2"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_test_abi6 = {
    .name = "test-abi6",
    .summary = "test plugin: interface version 6, a tree rule",
    .params = S_params,
    .tree_rule = S_root,
    .node_rule = S_node,
};

SD_PLUGIN_EXPORT const sd_plugin simdec_plugin = {6u, (const sd_verifier_type *const[]){&sd_verifier_test_abi6, NULL}};
