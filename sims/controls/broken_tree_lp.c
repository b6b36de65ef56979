/* broken_tree_lp.c — a deliberately broken control: tree-lp that plays
 * the plan's stops but draws the token after the stop at path u from
 * q(.|u) instead of the plan's law z(u .)/z(u).  The LP chose the emitted
 * token's law to correct for where it stops (the validity rows), so the
 * output is biased.  check must flag it. */
#include "../verifiers/sd_tree.h"

static const sd_tree_kind sd_tree_kind_broken_lp = {
    .name = "broken-tree-lp",
    .rule = SD_TREE_PLAN,
    .draws = (1u << SD_DRAW_IID) | (1u << SD_DRAW_WOR) | (1u << SD_DRAW_TOPK),
    .bugs = SD_TREE_BUG_PLAN_Q,
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_broken_lp)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,1"),
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid, wor or topk"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_broken_tree_lp = {
    .name = "broken-tree-lp",
    .summary = "tree-lp emitting from q(.|path) after the plan's stop instead of the plan's law",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_broken_lp),
    .flags = SD_VERIFIER_CONTROL,
};
