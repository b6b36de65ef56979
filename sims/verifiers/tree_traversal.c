/* tree_traversal.c — Traversal Verification (Weng et al. 2025,
 * "Traversal Verification for Speculative Tree Decoding", NeurIPS 2025,
 * arXiv 2505.12398).
 *
 * Leaves first, with sequence-level acceptance: every node carries
 * α(c) = min(1, α(v) q_v(c)/p_v(c)) from its parent v (α(root) = 1); the
 * first leaf of the remaining tree in depth-first order is accepted with
 * probability α (the iteration then ends there), else deleted, and its
 * parent v is updated: q_v <- [α(v) q_v - p_v]+ renormalised (mass r),
 * α(v) <- r / (r + 1 - α(v)), and (children drawn without replacement)
 * p_v loses the deleted token and is renormalised; the remaining siblings'
 * α follow from the new values.  An accepted leaf of the drafted tree is
 * followed by a bonus token from q, an accepted node that lost children by
 * a token from its updated q_v (a rejection).  The paper states the rules
 * for children drafted without replacement (--draw wor, the default);
 * with --draw iid p_v stays unchanged after a deletion (our adaptation,
 * which check passes).  The exact order of the updates is in
 * sims/verifiers/sd_tree.c; the paper's two claims (lossless on every tree, equal to
 * block verification on a chain) are tested in tests/test_trees.c.  One
 * target call. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_traversal = {
    .name = "traversal",
    .rule = SD_TREE_TRAVERSAL,
    .draws = (1u << SD_DRAW_WOR) | (1u << SD_DRAW_IID),
    .why_not = "traversal verifies children drafted at random (wor, or iid); a "
               "deterministic top-b tree has no draft law to traverse",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_traversal)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,2"),
    SD_PARAM_DRAW(SD_DRAW_WOR, "drafting rule of the children: wor (default, the paper's) or iid"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_traversal = {
    .name = "traversal",
    .summary = "token tree verified leaves first with sequence-level acceptance (Weng et al. 2025)",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_traversal),
};
