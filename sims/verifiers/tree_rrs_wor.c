/* tree_rrs_wor.c — token trees verified top-down by recursive rejection
 * sampling without replacement (Jeon et al. 2024, "Recursive Speculative
 * Decoding: Accelerating LLM Inference via Sampling Without Replacement").
 *
 * The children of a node are drafted without replacement: c_j from
 * p_j = p(.|node) with c_1..c_{j-1} removed and renormalised.  They are
 * tested in turn against R (R = q(.|node) first): c_j accepted with
 * probability min(1, R(c_j)/p_j(c_j)); a rejection sets R <- [R - p_j]+
 * renormalised (the draft law is renormalised after each drafted child,
 * the residual after each rejected one).  The iteration ends as in
 * tree-rrs.  When p's support has fewer tokens than b, the node has fewer
 * children.  One target call. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_rrs_wor = {
    .name = "tree-rrs-wor",
    .rule = SD_TREE_TOPDOWN,
    .draws = 1u << SD_DRAW_WOR,
    .why_not = "tree-rrs-wor drafts children without replacement (use tree-rrs or tree-topk)",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_rrs_wor)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,2"),
    SD_PARAM_DRAW(SD_DRAW_WOR, "drafting rule of the children: wor only"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_tree_rrs_wor = {
    .name = "tree-rrs-wor",
    .summary = "token tree, children without replacement, recursive rejection sampling (Jeon et al. 2024)",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_rrs_wor),
};
