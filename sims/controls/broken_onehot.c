/* broken_onehot.c — deliberately broken control of onehot (docs/controls.md):
 * after a rejection the residual keeps the rejected draft token (samples q,
 * not q without x), so a draft token is emitted with probability
 * q(x) + (1 - q(x)) q(x) at one draft: biased towards the drafts.
 *
 * Its exact iteration law, so that `check --exact` measures the bias: each
 * of the a drafts is tried with an independent coin of success q(x_i);
 * with s = sum_x p(x) q(x), the first success is draft i with token y with
 * probability (1-s)^(i-1) p(y) q(y); the drafts before it failed and equal
 * y each with pi(y) = p(y)(1 - q(y))/(1 - s), those after it with p(y):
 * j - 1 ~ Bin(i-1, pi(y)) + Bin(a-i, p(y)).  All fail with (1-s)^a, and y
 * ~ q with j ~ Bin(a, pi(y)), j = 0 ending rejected. */
#include <stdlib.h>

#include "../verifiers/sd_multidraft.h"
#include "../verifiers/sd_onehot.h"
#include "../exact/sd_iter_laws.h"

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_onehot_step_mode(state, c, par, rng, n, prev, out, it, SD_ONEHOT_BUG_KEEP_X, err);
}

/* J[(base + j1 + j2)·V + y] += mass P(Bin(n1, p1) = j1) P(Bin(n2, p2) = j2). */
static void S_spread(double *J, size_t V, size_t y, double mass, size_t base, size_t n1, double p1,
                     size_t n2, double p2, double *b1, double *b2)
{
    sd_law_binomial(n1, p1, b1);
    sd_law_binomial(n2, p2, b2);
    for (size_t j1 = 0; j1 <= n1; j1++)
        for (size_t j2 = 0; j2 <= n2; j2++)
            J[(base + j1 + j2) * V + y] += mass * b1[j1] * b2[j2];
}

static int S_joint(void *ctx, const double *p, const double *q, size_t V, size_t a, double *J,
                   sd_error *err)
{
    (void)ctx;
    double *b = malloc(2 * (a + 1) * sizeof *b);
    if (!b)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    double s = 0.0;
    for (size_t y = 0; y < V; y++)
        s += p[y] * q[y];
    double f = 1.0 - s, reach = 1.0;
    for (size_t i = 1; i <= a; i++) {
        for (size_t y = 0; y < V; y++) {
            double pi = f > 0.0 ? p[y] * (1.0 - q[y]) / f : 0.0;
            if (reach * p[y] * q[y] > 0.0)
                S_spread(J, V, y, reach * p[y] * q[y], 1, i - 1, pi, a - i, p[y], b, b + a + 1);
        }
        reach *= f;
    }
    for (size_t y = 0; y < V; y++) {
        double pi = f > 0.0 ? p[y] * (1.0 - q[y]) / f : 0.0;
        if (reach * q[y] > 0.0)
            S_spread(J, V, y, reach * q[y], 0, a, pi, 0, 0.0, b, b + a + 1);
    }
    free(b);
    return SD_OK;
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    sd_pos_law pl = {0};
    double a = (double)par->k + 1.0;
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), par->k, S_joint, NULL,
                               a * (a * SD_WORK_PDF + a * a + 4.0), &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

const sd_verifier_type sd_verifier_broken_onehot = {
    .name = "broken-onehot",
    .summary = "control: onehot whose residual keeps the rejected draft token",
    .params = sd_onehot_params,
    .alloc = sd_onehot_alloc,
    .free = sd_multidraft_scratch_free,
    .step = S_step,
    .iteration_law = S_law,
    .flags = SD_VERIFIER_CONTROL,
};
