/* rrs.c — multi-draft speculative decoding with recursive rejection
 * sampling (SpecInfer's multi-round sampling; Sun et al. 2023
 * B.3 and Alg. 3).
 *
 * k i.i.d. draft sequences of length G (default: the rest of the horizon)
 * form a tree; Sun et al. 2023, Alg. 3 walks it with recursive rejection sampling as
 * the token-level selection: at each depth the surviving drafts' tokens
 * are tried in turn against q^1 = q, q^{m+1} = [q^m - p]+, and if all fail
 * the token is drawn from q^{k'+1} (k' = survivors).  The drafts that
 * continue are those whose token equals the selected one (see
 * sd_multidraft_tree_step for the exact rule).  A residual draw never
 * equals a rejected draft token (q^{m+1}(x) = 0 once x has been rejected
 * against q^m, since that needs q^m(x) < p(x)), so an iteration ends
 * exactly when all survivors fail: first-position acceptance is
 * 1 - Π_{m=1..k} TV(q^m, p).  One target call per iteration. */
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"
#include "../kernels/sd_kernel_law.h"

static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev,
                    const size_t *x, size_t k, sd_stream *rng, size_t *y,
                    sd_error *err)
{
    (void)err;
    sd_multidraft_scratch *s = ctx;
    size_t acc;
    *y = sd_multidraft_rrs(sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), c->V, x, k, 0,
                           rng, s->w, &acc);
    return SD_OK;
}

int sd_multidraft_rrs_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    sd_multidraft_scratch *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k, S_select, s, s->drafts,
                                   out, it, err);
}

int sd_multidraft_rrs_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, par->k, "k", err);
}

static const sd_param_decl S_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

/* The kernel (sims/kernels/sd_kernel_law.h): one alias draw per position over
 * (x, number of surviving drafts equal to x, 0 = a rejection), the law
 * above in each state (surviving drafts), and the bonus from q. */
static int S_pos(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err)
{
    if (par->k < 1)
        return SD_EUSAGE; /* the step reports the bad count */
    return sd_pos_law_tree(c->V, sd_draft_len_unbounded(par->gamma), par->k, 0, out, err);
}

SD_KERNEL_LAW_DEFINE(S_kernel, "rrs-alias", S_pos, SD_KERNEL_LAW_SUPPORTS);
static const sd_kernel_type *const S_kernels[] = {&S_kernel, &sd_rrs_kernel_backoff, NULL};

/* Its law given a logged output (sims/exact/sd_trace_laws.h): the same selection at
 * the output's context, at the output token's column. */
static int S_trace_plan(void **plan, const struct sd_verifier_type *vt, const sd_params *par, size_t V, size_t *S,
                        size_t *s0, sd_error *err)
{
    (void)vt;
    return sd_trace_sel_plan_new(plan, par->k, 0, V, S, s0, err);
}
static const sd_trace_type S_trace = {.needs_rows = 1,
                                      .real_state = 0,
                                      .by_depth = 0,
                                      .plan_new = S_trace_plan,
                                      .plan_free = sd_trace_sel_plan_free,
                                      .draft_len = sd_trace_gamma_len,
                                      .go = sd_trace_sel_go};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_tree(c, sd_draft_len(c, par, n), par->k, 0, n, prev, out, err);
}

const sd_verifier_type sd_verifier_rrs = {
    .name = "rrs",
    .summary = "k-draft tree, recursive rejection sampling per position (Sun et al. 2023, Alg. 3 + B.3, SpecInfer)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = sd_multidraft_rrs_alloc,
    .free = sd_multidraft_scratch_free,
    .begin = NULL,
    .step = sd_multidraft_rrs_step,
    .kernels = S_kernels,
    .iteration_law = S_law,
    .trace = &S_trace,
    .iid_pos_law = S_pos,
};
