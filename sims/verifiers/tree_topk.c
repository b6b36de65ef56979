/* tree_topk.c — token trees of the deterministic top-b children of p (as
 * EAGLE and Medusa draft; Li et al. 2024, Cai et al. 2024), verified
 * top-down with the one-hot draft law.
 *
 * A child c_j is "drafted" from δ_{c_j}: it is accepted with probability
 * min(1, R(c_j)/1) = R(c_j), and a rejection sets R <- [R - δ_{c_j}]+
 * renormalised, i.e. R with c_j removed (recursive rejection sampling with
 * point-mass drafts: the output law is R's).  R = q(.|node) first; the
 * iteration ends as in tree-rrs.  Ties in p go to the smaller token; a
 * node has min(b, V) children.  One target call. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_topk = {
    .name = "tree-topk",
    .rule = SD_TREE_TOPDOWN,
    .draws = 1u << SD_DRAW_TOPK,
    .why_not = "tree-topk drafts the top-b tokens of p (use tree-rrs or tree-rrs-wor)",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_topk)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,2"),
    SD_PARAM_DRAW(SD_DRAW_TOPK, "drafting rule of the children: topk only"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_tree_topk = {
    .name = "tree-topk",
    .summary = "token tree of the top-b tokens of p, one-hot draft law, residual per node (EAGLE/Medusa)",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_topk),
};
