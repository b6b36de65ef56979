/* broken_draft_peek.c — a deliberately broken control: token-level
 * speculative decoding whose draft-length rule peeks at the verification
 * coin (the hook peek of sd_token_policy_step / sd_token_policy_law,
 * sims/verifiers/sd_token.h): after the first draft token, a token that
 * would be rejected is not drafted and the iteration ends with the bonus
 * from q instead of the residual.  A draft length must be a stopping time
 * of the drafted tokens (src/sd_draft.h); this one reads a coin, and the
 * law of the position becomes min(p,q) + TV(p,q)·q ≠ q.  It takes token's
 * parameters, --draft-policy included. */
#include "../exact/sd_iter_laws.h"
#include "../verifiers/sd_token.h"

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_DRAFT_POLICY(SD_TOKEN_SLOT_POLICY),
                                         SD_PARAM_END};

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c, (void)par, (void)err;
    *state = NULL;
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n, size_t prev,
                  size_t *out, sd_iter *it, sd_error *err)
{
    (void)state, (void)err;
    return sd_token_policy_step(c, par, 1, rng, n, prev, out, it);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev, struct sd_iter_law *out,
                 sd_error *err)
{
    return sd_token_policy_law(c, par, 1, n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_draft_peek = {
    .name = "broken-draft-peek",
    .summary = "token-level SD whose draft-length rule peeks at the verification coin (not a stopping time)",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
    .flags = SD_VERIFIER_CONTROL,
    .iteration_law = S_law,
};
