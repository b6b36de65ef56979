/* tree_rrs.c — token trees verified top-down by recursive rejection
 * sampling at every node, children drafted i.i.d. with replacement
 * (SpecInfer's multi-step speculative sampling; Miao et al. 2024).
 *
 * At each node reached, its children c_1..c_b ~ p(.|node) i.i.d. are
 * tested in turn against R (R = q(.|node) first), c_j accepted with
 * probability min(1, R(c_j)/p(c_j)); a rejection sets R <- [R - p]+
 * renormalised; an acceptance moves to c_j.  The iteration ends at a node
 * whose children all fail (a token from R: a rejection) or at a leaf (a
 * bonus token from q).  One target call; sims/verifiers/sd_tree.c computes the law
 * of the outcome given the drafted tree. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_rrs = {
    .name = "tree-rrs",
    .rule = SD_TREE_TOPDOWN,
    .draws = 1u << SD_DRAW_IID,
    .why_not = "tree-rrs drafts children i.i.d. (use tree-rrs-wor or tree-topk)",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_rrs)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,2"),
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid only"),
    SD_PARAM_END,
};

static const sd_kernel_type *const S_kernels[] = {&sd_tree_rrs_kernel_backoff, NULL};

const sd_verifier_type sd_verifier_tree_rrs = {
    .name = "tree-rrs",
    .summary = "token tree, i.i.d. children, recursive rejection sampling per node (SpecInfer, Miao et al. 2024)",
    .params = S_params,
    .kernels = S_kernels,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_rrs),
};
