/* tree_lp.c — the optimal lossless tree verifier: plays the optimal plan
 * of the tree-valid LP (treelp/tree_valid.c; `simdec lp tree-valid`), as
 * `spectr --plan otm` plays the OTM plan at depth 1.
 *
 * The LP (the valid-verify LP of Sun et al. 2025, Def. 1 / Lemma 2, with
 * the draft block replaced by a drafted tree) is solved per context
 * (position, previous token) in its aggregated form: given the drafted
 * tree's set of root paths S, stop at path u with probability
 * f(S, u)/P(S), then emit y with probability z(u y)/z(u).  Its validity
 * rows make the output follow q, so the verifier is lossless; its mean
 * accepted length from a context is the LP's optimum.  The plan lives above
 * this floor and reaches the verifier through the provider of sd_tree.h
 * (installed by the program: treelp's sd_treelp_install); without one,
 * and where the tree reaches the horizon's end (no token after it to
 * validate), an iteration is verified top-down as tree-rrs does, which is
 * lossless too.  One target call per iteration. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_lp = {
    .name = "tree-lp",
    .rule = SD_TREE_PLAN,
    .draws = (1u << SD_DRAW_IID) | (1u << SD_DRAW_WOR) | (1u << SD_DRAW_TOPK),
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_lp)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,1"),
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid, wor or topk"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_tree_lp = {
    .name = "tree-lp",
    .summary = "the optimal lossless tree verifier: plays the plan of lp tree-valid (solved per context)",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_lp),
};
