/* broken_tree_residual.c — a deliberately broken control: tree-rrs that
 * forgets to renormalise the residual after a rejected sibling.  The next
 * sibling is tested with min(1, [R - p]+(c)/p(c)) on the unnormalised
 * [R - p]+, whose mass TV(R, p) < 1, so later siblings are accepted too
 * rarely and the residual tokens come out too often; the final residual
 * sample is normalised (the sampler divides by the mass), which does not
 * repair the law.  check must flag it. */
#include "../verifiers/sd_tree.h"

static const sd_tree_kind sd_tree_kind_broken_residual = {
    .name = "broken-tree-residual",
    .rule = SD_TREE_TOPDOWN,
    .draws = 1u << SD_DRAW_IID,
    .bugs = SD_TREE_BUG_UNNORMALISED,
    .why_not = "broken-tree-residual drafts children i.i.d.",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_broken_residual)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("3,2"),
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid only"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_broken_tree_residual = {
    .name = "broken-tree-residual",
    .summary = "tree-rrs without renormalising the residual after a rejected sibling",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_broken_residual),
    .flags = SD_VERIFIER_CONTROL,
};
