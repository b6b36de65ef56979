/* spectr_gbv.c — SpecTr-GBV (Lin, Sheng, Cai and Zhou 2026, "SpecTr-GBV:
 * Multi-Draft Block Verification Accelerating Speculative Decoding", arXiv
 * 2604.25925): multi-draft SpecTr combined with block verification, the
 * verification step cast as optimal transport over draft and target
 * blocks.
 *
 * Only the paper's abstract was available to us: k i.i.d. draft blocks,
 * SpecTr's multi-draft selection (Sun et al. 2023) joined with greedy
 * block verification (Sun et al. 2025), claimed optimal in expected
 * accepted length among i.i.d.-drafting schemes and improving with k.  Our
 * reading, the one `check --exact` proves lossless (docs/findings.md, items 44–46):
 *   - draft k blocks X^(1..k) of length γ i.i.d. from p (the token tree
 *     (k, 1, ..., 1), children i.i.d.);
 *   - block-level selection by k-Seq (Sun et al. 2023, Alg. 2) at the first
 *     token: block j's prefix acceptance starts at
 *       α_1(j) = min(1, q(X_1(j)) / (ρ* p(X_1(j)))),  ρ* = ρ*(k) of eq. 6,
 *   - then block verification along the block (Sun et al. 2025, eqs. 3–5):
 *       α_i = min(1, α_{i-1} q(X_i|X^{i-1}) / p(X_i|X^{i-1})),
 *     tried from the end: X^γ accepted with probability α_γ (a bonus token
 *     from q), else each shorter prefix X^i in turn with probability
 *     h_i = m_i / (m_i + 1 - α_i), m_i = Σ_x [α_i q(x|X^i) - p(x|X^i)]+ (a token
 *     from that residual);
 *   - a block accepting nothing passes to the next one; when all k fail, the
 *     first token comes from k-Seq's residual (eq. 5), a rejection.
 * Given its first token x, block j's verification accepts with probability
 * α_1(j) on average and then emits q's continuation (block verification's
 * invariant), so the blocks are k-Seq's i.i.d. proposals and the output
 * follows q.  This is the prefix-scaled k-Seq rule of sims/verifiers/sd_tree.c
 * (SD_TREE_SCALED, also univer's) on the tree (k, 1, ..., 1).  "Greedy" we
 * read as the block verification of Sun et al. 2025's main text: its greedy
 * variant (their App. C, greedy-block here) modifies the target of the
 * following iterations, which a block-level selection among k drafts would
 * have to carry per draft; we did not find that reading in the abstract.
 * With k = 1 this is block verification.  The broken control of the rule
 * is broken-univer (sims/controls/broken_univer.c), which drops ρ*; on the
 * tree (k, 1, ..., 1) with --draw iid it is spectr-gbv without ρ*. */
#include "sd_tree.h"

static const sd_tree_kind sd_tree_kind_spectr_gbv = {
    .name = "spectr-gbv",
    .rule = SD_TREE_SCALED,
    .draws = 1u << SD_DRAW_IID,
    .why_not = "spectr-gbv drafts its k blocks i.i.d.",
};

/* par with the tree (k, 1, ..., 1) of depth min(γ, T) (T when γ is unset)
 * and i.i.d. drafting, into *buf. */
static int S_par(const sd_params *par, size_t T, sd_params *buf, sd_error *err)
{
    *buf = *par;
    size_t d = par->gamma && par->gamma < T ? par->gamma : T; /* levels past the horizon are cut anyway */
    if (d < 1 || d > SD_TREE_MAX_DEPTH)
        return sd_error_set(err, SD_EUSAGE, "spectr-gbv: a draft length of %zu (--gamma%s) exceeds the limit %d of "
                            "its block tree; give --gamma <= %d", d, par->gamma ? "" : " unset: the horizon T",
                            SD_TREE_MAX_DEPTH, SD_TREE_MAX_DEPTH);
    if (par->k < 1 || par->k * d > SD_TREE_MAX_NODES)
        return sd_error_set(err, SD_EUSAGE, "spectr-gbv: --k %zu blocks of %zu tokens: expected 1 <= k and k*gamma <= %d",
                            par->k, d, SD_TREE_MAX_NODES);
    buf->tree_depth = d;
    buf->tree[0] = par->k;
    for (size_t l = 1; l < d; l++)
        buf->tree[l] = 1;
    buf->v[SD_TREE_SLOT_DRAW] = SD_DRAW_IID;
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    sd_params b;
    *state = NULL;
    int rc = S_par(par, c->T, &b, err);
    return rc ? rc : sd_tree_verifier_alloc(state, c, &b, &sd_tree_kind_spectr_gbv, err);
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n, size_t prev,
                  size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    return sd_tree_verifier_step(state, c, par, &sd_tree_kind_spectr_gbv, rng, n, prev, out, it);
}

static int S_exact(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err)
{
    sd_params b;
    int rc = S_par(par, m->T, &b, err);
    return rc ? rc : sd_tree_verifier_exact(m, &b, &sd_tree_kind_spectr_gbv, out, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev, struct sd_iter_law *out,
                 sd_error *err)
{
    sd_params b;
    int rc = S_par(par, c->T, &b, err);
    return rc ? rc : sd_tree_verifier_law(c, &b, &sd_tree_kind_spectr_gbv, n, prev, out, err);
}

/* gamma defaults to 4 (not the horizon): the block tree holds at most 16
 * levels; a longer gamma is cut at the horizon T first. */
static const sd_param_decl S_params[] = {
    SD_PARAM_DRAFTS("k"),
    {.name = "gamma", .kind = SD_PARAM_COUNT, .slot = SD_SLOT_GAMMA, .def = 4, .min = 1, .max = (double)SD_GAMMA_MAX,
     .help = "tokens per draft block (default 4; min(gamma, T) at most 16)"},
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_spectr_gbv = {
    .name = "spectr-gbv",
    .summary = "k i.i.d. draft blocks, k-Seq block selection, block verification along the block (Lin et al. 2026)",
    .params = S_params,
    .alloc = S_alloc,
    .free = sd_tree_verifier_free,
    .step = S_step,
    .exact = S_exact,
    .iteration_law = S_law,
};
