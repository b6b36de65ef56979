/* sprinter.c — SPRINTER: a cheap sequential verifier in front of the target.
 *
 * Zhong et al. 2025, Alg. 1–2 (§3, App. A.5), letters reversed there
 * (their M_q / q is our draft p, their M_p / p our target q).  Tokens are
 * drafted one by one from p.  A draft token x is "acceptable" when
 * p(x) <= q(x) (their q(x)/p(x) <= 1).  The cheap verifier, i.i.d. across
 * tokens, says yes with probability η_TP (--tp) for an acceptable token and
 * η_FP (--fp) for an unacceptable one; a yes keeps x without calling the
 * target and drafting goes on.  At the first no the target is called once
 * and x gets the standard test: kept with probability min(1, q(x)/p(x)),
 * else replaced by a draw from [q-p]+ (a rejection).  No bonus token
 * (Alg. 2 returns Prefix + t).
 *
 * One iteration here = one run of cheap-verifier yeses ended by the token
 * the target decides: target_calls = 1, accepted = tokens kept (the yeses,
 * plus the last one if the target kept it), emitted = yeses + 1.  Theorem
 * 3.3's N_SPRINTER (the yeses) is therefore emitted - 1.  A run that
 * reaches the horizon on yeses alone makes no target call (target_calls =
 * 0).  Drafting has no fixed length: the run goes on to the horizon.
 *
 * Law of each token given its predecessor (their Thm 3.1 in our letters):
 * (1 - η_FP) q + η_FP p, at TV distance η_FP TV(p,q) from q; η_TP does not
 * enter.  Lossless only at η_FP = 0.
 *
 * Without a horizon, the yeses before the first no number N with E[N] =
 * Σ_{i=1..r} η_TP^i + η_TP^r η_FP/(1-η_FP) (Theorem 3.3, r acceptable tokens
 * first): at η_FP = 1 infinite when η_TP^r > 0, but finite (0) at η_TP = 0
 * and r >= 1 (`eval sprinter`); here the horizon bounds every run. */
#include <math.h>

#include "../../src/sd_dist.h"
#include "../engine/sd_verifier.h"
#include "../exact/sd_iter_laws.h"
#include "../kernels/sd_kernel_law.h"

enum { P_TP, P_FP }; /* slots of the parameters */

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    size_t V = c->V, G = sd_draft_len_at(0, c->T, n); /* drafts to the horizon */
    it->rejected = 0;
    for (size_t i = 0; i < G; i++) {
        size_t t = n + i;
        const double *p = sd_chain_p(c, t, prev), *q = sd_chain_q(c, t, prev);
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        double yes = p[x] <= q[x] ? sd_param_real(par, P_TP) : sd_param_real(par, P_FP);
        if (sd_stream_uniform(rng) < yes) { /* the cheap verifier keeps x */
            out[i] = x;
            prev = x;
            continue;
        }
        /* the target is called and x gets the standard test */
        it->target_calls = 1;
        it->emitted = i + 1;
        double mass;
        if (sd_stream_uniform(rng) * p[x] < q[x] || !((mass = sd_dist_tv(p, q, V)) > 0.0)) {
            /* kept (a zero residual mass means q = p up to rounding) */
            out[i] = x;
            it->accepted = i + 1;
        } else {
            out[i] = sd_dist_sample_residual(p, q, V, mass, sd_stream_uniform(rng));
            it->accepted = i;
            it->rejected = 1;
        }
        return SD_OK;
    }
    it->target_calls = 0; /* the horizon was reached on the cheap verifier alone */
    it->accepted = G;
    it->emitted = G;
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c;
    *state = NULL;
    if (!(sd_param_real(par, P_TP) >= 0.0 && sd_param_real(par, P_TP) <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "--tp %g: expected a rate in [0, 1]", sd_param_real(par, P_TP));
    if (!(sd_param_real(par, P_FP) >= 0.0 && sd_param_real(par, P_FP) <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "--fp %g: expected a rate in [0, 1]", sd_param_real(par, P_FP));
    return SD_OK;
}

static int S_lossless(const sd_params *par)
{
    return sd_param_real(par, P_FP) == 0.0;
}

static const sd_param_decl S_params[] = {
    {.name = "tp", .kind = SD_PARAM_REAL, .slot = P_TP, .def = 0.5, .min = 0.0, .max = 1.0,
     .help = "the cheap verifier's true-positive rate (default 0.5)"},
    {.name = "fp", .kind = SD_PARAM_REAL, .slot = P_FP, .def = 0.0, .min = 0.0, .max = 1.0,
     .help = "the cheap verifier's false-positive rate (default 0; lossy when > 0)"},
    SD_PARAM_END,
};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h). */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_law_sprinter(c, sd_param_real(par, P_TP), sd_param_real(par, P_FP), n, prev, out, err);
}

/* The kernel (sims/kernels/sd_kernel_law.h): one alias draw per position over
 * (x, yes / the target keeps x / the target rejects it) with the weights of
 * the law above: p·η, (1-η)·min(p, q), (1-η_FP)·[q-p]+. */
static int S_pos(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err)
{
    if (S_alloc(&(void *){NULL}, c, par, NULL))
        return SD_EUSAGE; /* the step reports the bad parameter */
    return sd_pos_law_sprinter(sd_param_real(par, P_TP), sd_param_real(par, P_FP), sd_draft_len_unbounded(0), out, err);
}

SD_KERNEL_LAW_DEFINE(S_kernel, "sprinter-alias", S_pos, SD_KERNEL_LAW_SUPPORTS);
static const sd_kernel_type *const S_kernels[] = {&S_kernel, NULL};

const sd_verifier_type sd_verifier_sprinter = {
    .name = "sprinter",
    .summary = "SPRINTER: cheap verifier (rates tp, fp) calls the target only on a no (Zhong et al. 2025, Alg. 1-2)",
    .params = S_params,
    .claims_lossless = S_lossless,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
    .kernels = S_kernels,
    .iteration_law = S_law,
};
