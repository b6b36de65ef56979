/* broken_tree_wor.c — a deliberately broken control: tree-rrs-wor that
 * keeps the draft law unchanged after sampling without replacement.
 * Children are drafted without replacement but child j is tested with
 * min(1, R(c_j)/p(c_j)) and the residual taken as [R - p]+, as if the
 * siblings were i.i.d.: the test no longer matches c_j's law (p without
 * c_1..c_{j-1}), and the output is biased.  check must flag it. */
#include "../verifiers/sd_tree.h"

static const sd_tree_kind sd_tree_kind_broken_wor = {
    .name = "broken-tree-wor",
    .rule = SD_TREE_TOPDOWN,
    .draws = 1u << SD_DRAW_WOR,
    .bugs = SD_TREE_BUG_STALE_DRAFT,
    .why_not = "broken-tree-wor drafts children without replacement",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_broken_wor)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("3,2"),
    SD_PARAM_DRAW(SD_DRAW_WOR, "drafting rule of the children: wor only"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_broken_tree_wor = {
    .name = "broken-tree-wor",
    .summary = "tree-rrs-wor testing children against the unchanged draft law p",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_broken_wor),
    .flags = SD_VERIFIER_CONTROL,
};
