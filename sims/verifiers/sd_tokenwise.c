/* sd_tokenwise.c — see sd_tokenwise.h. */
#include "sd_tokenwise.h"

#include <math.h>

#include "../../src/sd_dist.h"

static int S_accept(const sd_token_rule *rule, double u, double px, double qx)
{
    (void)rule;
    return u * px < qx; /* P = min(1, q/p) exactly; `<`, see sd_rng.h */
}

static double S_mass(const sd_token_rule *rule, const double *p, const double *q, size_t V)
{
    (void)rule;
    return sd_dist_tv(p, q, V);
}

static size_t S_sample(const sd_token_rule *rule, const double *p, const double *q, size_t V,
                       double mass, double u)
{
    (void)rule;
    return sd_dist_sample_residual(p, q, V, mass, u);
}

/* P(u·p(x) >= q(x)) for x ~ p is Σ_x (p(x) - q(x))+ = TV(p, q) (Σ p = Σ q). */
static double S_reject_prob(const sd_token_rule *rule, const double *p, const double *q, size_t V)
{
    (void)rule;
    return sd_dist_tv(p, q, V);
}

const sd_token_rule sd_token_rule_standard = {S_accept, S_mass, S_sample, 0.0, SD_RESIDUAL_OPT,
                                              S_reject_prob};

void sd_tokenwise_verify(const sd_token_rule *rule, const sd_chain *c, sd_stream *rng, size_t n,
                         size_t from, size_t G, size_t prev, size_t *out, sd_iter *it)
{
    size_t V = c->V;
    for (size_t i = from; i < G; i++) {
        const double *p = sd_chain_p(c, n + i, prev), *q = sd_chain_q(c, n + i, prev);
        /* Rao-Blackwell (sd_verifier.h): E[this position rejects | it is tested, past]. */
        it->rb_rejected += rule->reject_prob ? rule->reject_prob(rule, p, q, V) : NAN;
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        if (!rule->accept(rule, sd_stream_uniform(rng), p[x], q[x])) {
            double mass = rule->mass(rule, p, q, V);
            if (mass > 0.0) {
                out[i] = rule->sample(rule, p, q, V, mass, sd_stream_uniform(rng));
                it->accepted = i;
                it->emitted = i + 1;
                it->rejected = 1;
                return;
            }
        }
        out[i] = x;
        prev = x;
    }
    it->accepted = G;
    it->emitted = G;
    if (n + G <= c->T) { /* bonus token from q */
        out[G] = sd_dist_sample(sd_chain_q(c, n + G, prev), V, 1.0, sd_stream_uniform(rng));
        it->emitted = G + 1;
    }
}
