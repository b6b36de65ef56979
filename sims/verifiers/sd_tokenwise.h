/* sd_tokenwise.h — token-by-token verification of a draft continuation,
 * the loop that token-level speculative decoding (Yin et al. 2024, Alg. 1) shares with
 * its variants: biased acceptance (Yin et al. 2024, §4), the broken-coin control, and
 * the continuation of the chosen draft in batch SD (Yin et al. 2024, Alg. 4 lines
 * 13–21).  Internal to sims/; verifiers are reached through sd_verifier.h.
 *
 * Positions n+from .. n+G-1 are drafted one at a time after prev: x ~ p,
 * then the rule's accept test on a fresh uniform; at the first failure the
 * rule's residual gives the last token (a rejection).  When all G pass and
 * the horizon allows, one bonus token comes from q.  Uniforms are drawn in
 * the order draft, coin, [residual], exactly as sims/verifiers/token.c does. */
#ifndef SD_TOKENWISE_H
#define SD_TOKENWISE_H

#include "../engine/sd_verifier.h"

/* The residual after a rejection: [q-p]+ (speculative decoding; Yin et al.
 * 2024, Theorem 4) or q itself (their Decoding-UNO). */
typedef enum { SD_RESIDUAL_OPT = 0, SD_RESIDUAL_UNO = 1 } sd_residual_kind;

typedef struct sd_token_rule {
    /* 1 to accept draft token x, given the coin u in [0,1) and
     * px = p(x) > 0, qx = q(x). */
    int (*accept)(const struct sd_token_rule *rule, double u, double px, double qx);
    /* After a rejection at a position with rows p, q: the residual's
     * total mass (0 means "nothing to sample": the draft token is kept, as
     * the rejection had probability 0 up to rounding), and a sampler for
     * it given a uniform. */
    double (*mass)(const struct sd_token_rule *rule, const double *p, const double *q, size_t V);
    size_t (*sample)(const struct sd_token_rule *rule, const double *p, const double *q, size_t V,
                     double mass, double u);
    double eps;               /* biased: ε */
    sd_residual_kind residual; /* biased: opt or uno */
    /* The probability that a position with rows p, q ends in a rejection,
     * given it is tested: Σ_x p(x)·P(accept fails | x), counting only
     * failures that sample the residual.  NULL: not known (the iteration
     * then gives no Rao-Blackwellised estimate, sd_iter.rb_rejected). */
    double (*reject_prob)(const struct sd_token_rule *rule, const double *p, const double *q, size_t V);
} sd_token_rule;

/* The standard rule: accept with probability min(1, q/p) (u·p < q), then
 * the residual [q-p]+ (sd_dist_tv / sd_dist_sample_residual). */
extern const sd_token_rule sd_token_rule_standard;

/* Verifies positions n+from .. n+G-1 (out[0..from-1] already hold the
 * iteration's accepted tokens, the last of them or the context being prev)
 * and fills out[from..] and *it (accepted, emitted, rejected).  Adds each
 * tested position's rule->reject_prob to it->rb_rejected (NaN without
 * one): a caller that starts it at 0 gets the Rao-Blackwellised estimate
 * of the positions verified here, one that leaves the engine's NaN none. */
void sd_tokenwise_verify(const sd_token_rule *rule, const sd_chain *c, sd_stream *rng, size_t n,
                         size_t from, size_t G, size_t prev, size_t *out, sd_iter *it);

#endif
