/* broken_coin.c — a deliberately broken control: token verification with
 * the low-precision coin of sglang issue 35771 (through the accept-rule
 * hook sd_token_rule of sd_tokenwise.h).
 *
 * Token verification (sims/verifiers/token.c) whose accept test is `coin <= q/p`
 * instead of `u < q/p`.  With a 53-bit uniform the bug accepts a draft
 * token of target probability 0 with probability 2^-53, invisible to any
 * simulation; production code draws the coin at lower precision.  Here the
 * coin is drawn on a 10-bit grid, as a half-precision uniform in [0,1)
 * would be:
 *     coin = floor(u * 1024) / 1024,
 * so coin = 0 has probability 2^-10 and a draft token with q = 0 is then
 * accepted.  (The coarse grid also rounds every acceptance probability
 * min(1, q/p) up to the next multiple of 2^-10 plus one step, a second,
 * smaller bias.)  On a chain whose target has exact zeros where the draft
 * has mass, the output then contains probability-0 sequences, which
 * sd_chisq_test reports with p-value 0. */
#include <math.h>

#include "../../src/sd_dist.h"
#include "../verifiers/sd_tokenwise.h"
#include "../exact/sd_iter_laws.h"

#define S_COIN_GRID 1024.0 /* 2^10 coin values */

static int S_accept(const sd_token_rule *rule, double u, double px, double qx)
{
    (void)rule;
    double coin = floor(u * S_COIN_GRID) / S_COIN_GRID;
    return coin * px <= qx; /* the bug: <=, so coin = 0 accepts q = 0 */
}

/* The residual [q-p]+, or q itself when it has no mass. */
static double S_mass(const sd_token_rule *rule, const double *p, const double *q, size_t V)
{
    (void)rule, (void)p, (void)q, (void)V;
    return 1.0;
}

static size_t S_sample(const sd_token_rule *rule, const double *p, const double *q, size_t V,
                       double mass, double u)
{
    (void)rule, (void)mass;
    double tv = sd_dist_tv(p, q, V);
    return tv > 0.0 ? sd_dist_sample_residual(p, q, V, tv, u) : sd_dist_sample(q, V, 1.0, u);
}

static const sd_token_rule S_rule = {S_accept, S_mass, S_sample, 0.0, SD_RESIDUAL_OPT, NULL};

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    sd_tokenwise_verify(&S_rule, c, rng, n, 0, sd_draft_len(c, par, n), prev, out, it);
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c;
    (void)par;
    (void)err;
    *state = NULL;
    return SD_OK;
}

static const sd_param_decl S_params[] = {SD_PARAM_GAMMA, SD_PARAM_END};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_tokenwise(SD_LAW_COIN10, 0.0, c, sd_draft_len(c, par, n), n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_coin = {
    .name = "broken-coin",
    .flags = SD_VERIFIER_CONTROL,
    .summary = "token verification accepting when coin <= q/p, 10-bit coin (sglang 35771)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
};
