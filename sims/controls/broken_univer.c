/* broken_univer.c — a deliberately broken control: univer --draw iid (and
 * so spectr-gbv, on the tree (k, 1, ..., 1)) without k-Seq's ρ*.  Every
 * i.i.d. sibling under v is accepted with min(1, α(v) q_v(x)/p_v(x)), the
 * single-draft block-verification weight, as if the siblings did not
 * compete for the same target mass: with b >= 2 children the k-Seq
 * residual α(v) q_v - p_v a f(β) goes negative where q_v > p_v, is clipped,
 * and the output over-weights those tokens.  check must flag it. */
#include "../verifiers/sd_tree.h"

static const sd_tree_kind sd_tree_kind_broken_univer = {
    .name = "broken-univer",
    .rule = SD_TREE_SCALED,
    .draws = 1u << SD_DRAW_IID,
    .bugs = SD_TREE_BUG_NO_RHO,
    .why_not = "broken-univer drafts children i.i.d. (its bug is in the k-Seq plan)",
};

SD_TREE_VERIFIER_FUNCTIONS(sd_tree_kind_broken_univer)

static const sd_param_decl S_params[] = {
    SD_PARAM_TREE("2,1"),
    SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid only (the k-Seq plan it breaks)"),
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_broken_univer = {
    .name = "broken-univer",
    .summary = "univer --draw iid with rho = 1: siblings accepted with min(1, alpha q/p) as if alone",
    .params = S_params,
    SD_TREE_VERIFIER_SLOTS(sd_tree_kind_broken_univer),
    .flags = SD_VERIFIER_CONTROL,
};
