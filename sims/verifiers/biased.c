/* biased.c — biased speculative decoding, Decoding-OPT / Decoding-UNO.
 *
 * Yin et al. 2024, §4.1–4.2, Theorems 4–5 and App. G.
 * Token-level speculative decoding (as sims/verifiers/token.c) with the
 * acceptance raised to b(x) = min(1, (q(x)+ε)/p(x)) and the rejection
 * distribution P = [q-p]+ (opt: the [A]+ of Theorem 4, see sd_biased.h) or
 * P = q (uno).  Draft length G (default: the rest of the horizon); a bonus
 * token from q after G acceptances.  Every drafted token has law
 * sd_biased_token_law() given its predecessor, so the output is a Markov
 * chain with those transitions: lossless only at ε = 0 with the opt
 * residual (uno is lossy even at ε = 0, see sd_biased.h). */
#include <math.h>

#include "../../src/sd_dist.h"
#include "sd_biased.h"
#include "sd_tokenwise.h"
#include "../exact/sd_iter_laws.h"
#include "../kernels/sd_kernel_law.h"

enum { P_EPS, P_RESIDUAL }; /* slots of the parameters */

void sd_biased_token_law(const double *p, const double *q, size_t V, double eps,
                         sd_residual_kind residual, double *out)
{
    double R = 0.0, tv = sd_dist_tv(p, q, V);
    for (size_t x = 0; x < V; x++) {
        double a = q[x] + eps;
        out[x] = p[x] < a ? p[x] : a;
        R += p[x] - out[x];
    }
    for (size_t x = 0; x < V; x++) {
        double d = q[x] - p[x];
        double P = residual == SD_RESIDUAL_UNO ? q[x] : (tv > 0.0 && d > 0.0 ? d / tv : 0.0);
        out[x] += R * P;
    }
}

/* Accept with probability min(1, (q+ε)/p); p(x) > 0 as x ~ p. */
static int S_accept(const sd_token_rule *rule, double u, double px, double qx)
{
    return u * px < qx + rule->eps;
}

/* A rejection needs p(x) > q(x)+ε >= q(x), so TV > 0 and the opt residual
 * has mass; a zero mass is rounding, and then the draft token is kept. */
static double S_mass(const sd_token_rule *rule, const double *p, const double *q, size_t V)
{
    return rule->residual == SD_RESIDUAL_UNO ? 1.0 : sd_dist_tv(p, q, V);
}

static size_t S_sample(const sd_token_rule *rule, const double *p, const double *q, size_t V,
                       double mass, double u)
{
    return rule->residual == SD_RESIDUAL_UNO ? sd_dist_sample(q, V, 1.0, u)
                                             : sd_dist_sample_residual(p, q, V, mass, u);
}

/* P(reject | tested) = Σ_x p(x)·(1 - min(1, (q(x)+ε)/p(x))) = Σ_x (p - q - ε)+:
 * every failure samples the residual (its mass is > 0, see S_mass). */
static double S_reject_prob(const sd_token_rule *rule, const double *p, const double *q, size_t V)
{
    double r = 0.0;
    for (size_t x = 0; x < V; x++) {
        double d = p[x] - q[x] - rule->eps;
        r += d > 0.0 ? d : 0.0;
    }
    return r;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    const sd_token_rule rule = {S_accept, S_mass, S_sample, sd_param_real(par, P_EPS),
                                (sd_residual_kind)sd_param_choice(par, P_RESIDUAL), S_reject_prob};
    it->target_calls = 1;
    it->rejected = 0;
    it->rb_rejected = 0.0; /* sd_tokenwise_verify adds each position's S_reject_prob */
    sd_tokenwise_verify(&rule, c, rng, n, 0, sd_draft_len(c, par, n), prev, out, it);
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c;
    *state = NULL;
    if (!(isfinite(sd_param_real(par, P_EPS)) && sd_param_real(par, P_EPS) >= 0.0))
        return sd_error_set(err, SD_EUSAGE, "--eps %g: expected a finite number >= 0", sd_param_real(par, P_EPS));
    if ((sd_residual_kind)sd_param_choice(par, P_RESIDUAL) != SD_RESIDUAL_OPT && (sd_residual_kind)sd_param_choice(par, P_RESIDUAL) != SD_RESIDUAL_UNO)
        return sd_error_set(err, SD_EUSAGE, "--residual: expected opt or uno");
    return SD_OK;
}

static int S_lossless(const sd_params *par)
{
    return sd_param_real(par, P_EPS) == 0.0 && (sd_residual_kind)sd_param_choice(par, P_RESIDUAL) == SD_RESIDUAL_OPT;
}

static const sd_param_decl S_params[] = {
    {.name = "eps", .kind = SD_PARAM_REAL, .slot = P_EPS, .def = 0.0, .min = 0.0, .max = 1e300,
     .help = "acceptance b = min(1, (q+eps)/p) (default 0)"},
    {.name = "residual", .kind = SD_PARAM_CHOICE, .slot = P_RESIDUAL, .def = SD_RESIDUAL_OPT,
     .choices = "opt|uno", .help = "residual after a rejection: [q-p]+ (opt) or q (uno) (default opt)"},
    SD_PARAM_GAMMA,
    SD_PARAM_END,
};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_tokenwise((sd_residual_kind)sd_param_choice(par, P_RESIDUAL) == SD_RESIDUAL_UNO ? SD_LAW_BIASED_UNO : SD_LAW_BIASED_OPT,
                            sd_param_real(par, P_EPS), c, sd_draft_len(c, par, n), n, prev, out, err);
}

/* The kernel (sims/kernels/sd_kernel_law.h): one alias draw per position over
 * (x, accepted or rejected) with the weights of the law above, and the
 * bonus from q; its Rao-Blackwellised rejections are the rejected mass
 * Σ (p - q - ε)+ of each drafting position, as the step's. */
static int S_pos(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err)
{
    if (S_alloc(&(void *){NULL}, c, par, NULL))
        return SD_EUSAGE; /* the step reports the bad parameter */
    return sd_pos_law_tokenwise((sd_residual_kind)sd_param_choice(par, P_RESIDUAL) == SD_RESIDUAL_UNO ? SD_LAW_BIASED_UNO : SD_LAW_BIASED_OPT,
                                sd_param_real(par, P_EPS), sd_draft_len_unbounded(par->gamma), out, err);
}

SD_KERNEL_LAW_DEFINE(S_kernel, "biased-alias", S_pos, SD_KERNEL_LAW_SUPPORTS | SD_OBS_RB);
static const sd_kernel_type *const S_kernels[] = {&S_kernel, NULL};

const sd_verifier_type sd_verifier_biased = {
    .name = "biased",
    .summary = "biased SD, b = min(1,(q+eps)/p), residual opt ([q-p]+, Thm 4) or uno (q) (Yin et al. 2024 Sec. 4, App. G)",
    .params = S_params,
    .claims_lossless = S_lossless,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
    .kernels = S_kernels,
    .iteration_law = S_law,
};
