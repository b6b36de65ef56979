/* broken_gumbel.c — deliberately broken control of gumbel
 * (docs/controls.md): when the draft differs from the race's winner Y the
 * position emits a token from [q - p]+ normalised (standard speculative
 * sampling's correction) instead of Y.  The accepted mass follows the race,
 * whose acceptance is below sum min(p, q), so the correction cannot make up
 * q: the output law is J(y) + (1 - sum J) [q - p]+(y)/TV, not q.  Its exact
 * law (sd_gumbel_law with the bug flag) is wired so that `check --exact`
 * measures the bias. */
#include "../verifiers/sd_gumbel.h"
#include "../verifiers/sd_multidraft.h"
#include "../exact/sd_iter_laws.h"

static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x,
                    size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    (void)err;
    sd_multidraft_scratch *s = ctx;
    *y = sd_gumbel_select(sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), c->V, x, k, 1, rng, s->w);
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    sd_multidraft_scratch *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, 1, S_select, s, s->drafts, out, it, err);
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)par;
    return sd_multidraft_scratch_alloc((sd_multidraft_scratch **)state, c->V, 1, "k", err);
}

static int S_bug = 1;

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_pos_law pl = {0};
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), 1, sd_gumbel_law, &S_bug,
                               sd_gumbel_law_work(c->V, 1) + 6.0, &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_broken_gumbel = {
    .name = "broken-gumbel",
    .summary = "control: gumbel emitting the [q-p]+ correction instead of the race's winner on a mismatch",
    .params = S_params,
    .alloc = S_alloc,
    .free = sd_multidraft_scratch_free,
    .step = S_step,
    .iteration_law = S_law,
    .flags = SD_VERIFIER_CONTROL,
};
