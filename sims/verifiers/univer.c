/* univer.c — UniVer (Weng, Hu and Yairi 2026, "UniVer: A Unified
 * Perspective for Multi-step and Multi-draft Speculative Decoding", arXiv
 * 2605.04543): tree verification as conditional optimal transport.
 *
 * The paper's abstract (its full text was not available to us) states the
 * principle: prefix acceptance probabilities scale the choice among
 * siblings, the local optimal transport plans are composed under those
 * prefix constraints, in a top-down mass allocation followed by post-order
 * decisions.  Our reading (SD_TREE_SCALED, stated in full in
 * sims/verifiers/sd_tree.c):
 *   - top-down: every node carries the sequence-level acceptance α
 *     (α(root) = 1); the siblings under v face the sub-probability target
 *     α(v) q_v, and the local plan is SpecTr's k-Seq for it (Sun et al.
 *     2023, Alg. 2): child c holding x gets α(c) = min(1, α(v) q_v(x) /
 *     (ρ_v p_v(x))) with ρ_v the least ρ >= f(β(ρ)), and v keeps the residual
 *     R_v = α(v) q_v - (the mass its children take) and the coin
 *     h_v = Σ R_v / (1-β)^b;
 *   - post-order: children tried in order, leaves accepted with probability
 *     α (a bonus token from q), a node whose children all failed accepted
 *     with probability h_v (a token from R_v), else its parent goes on.
 * Children are drafted i.i.d. (--draw iid) for the k-Seq plan.  With --draw
 * wor (the default: the drafting of the authors' Traversal Verification
 * and of the recursive rejection sampling without replacement the paper
 * compares with) the scaled plan among siblings is sequential recursive
 * rejection sampling without replacement against α(v) q_v, whose
 * conditioning on a failed sibling gives α(v) <- r/(r + 1 - α(v)): that is
 * Traversal Verification (Weng et al. 2025) itself, so univer --draw wor
 * equals traversal (tests/test_univer.c).  Lossless by the invariant in
 * sd_tree.c; check --exact proves it on small trees.  One target call. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_univer = {
    .name = "univer",
    .rule = SD_TREE_SCALED,
    .draws = (1u << SD_DRAW_WOR) | (1u << SD_DRAW_IID),
    .why_not = "univer verifies children drafted at random (wor, or iid for the k-Seq plan); a "
               "deterministic top-b tree has no draft law to transport",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_univer)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,2"),
    SD_PARAM_DRAW(SD_DRAW_WOR, "drafting rule of the children: wor (default; the plan is then traversal's) "
                               "or iid (the prefix-scaled k-Seq plan)"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_univer = {
    .name = "univer",
    .summary = "token tree, prefix-scaled sibling plans, top-down allocation then post-order decisions (Weng et al. 2026)",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_univer),
};
