/* spectr.c — SpecTr: multi-draft speculative decoding with k-Seq selection.
 *
 * Sun et al. 2023, Alg. 3 (draft selection on a tree of k i.i.d.
 * draft sequences) with Alg. 2 (k-Seq) as the token-level selection.
 * At a depth with k' surviving drafts X_1..X_k' ~ p, X_i is
 * accepted with probability min(1, q(X_i)/(ρ p(X_i))) for ρ = ρ*(k') of
 * eq. 6 (src/sd_kseq.h: the upper end of Brent's bracket, so the residual
 * of eq. 5 is non-negative); if all fail, Y is drawn from the residual.
 * The drafts equal to Y continue (sd_multidraft_tree_step).  At ρ* the
 * residual vanishes wherever q < ρ* p, i.e. on every token that can be
 * rejected, so (up to the solver's 1e-13) an iteration ends exactly when
 * all survivors fail, and the first-position acceptance is
 * 1 - (1 - β(ρ*))^k.
 *
 * ρ* and β(ρ*) depend on the row (step, x_{t-1}) and on k'; they are
 * cached per thread when steps·V·k <= 2^22, else solved at each use.
 *
 * --plan otm replaces k-Seq by the optimal transport plan of OTM-k'
 * (Sun et al. 2023, §4–5, eq. 4; lp/sd_lp_otm.h): Y is drawn from the plan's
 * conditional law given the multiset of the k' drafts, so P(Y ∈ drafts) is
 * the optimum α_k'.  One LP per row and k', solved when first needed and
 * cached per thread (steps·V·k <= 2^22 plans, each within
 * SD_LP_OTM_PLAN_MAX_VARS variables; refused otherwise at alloc). */
#include <math.h>
#include <stdlib.h>

#include "../../lp/sd_lp_otm.h"
#include "../../src/sd_dist.h"
#include "../../src/sd_kseq.h"
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"
#include "../exact/sd_trace_laws.h"
#include "../kernels/sd_kernel_law.h"

enum { P_PLAN = SD_SPECTR_SLOT_PLAN }; /* slot of the parameter */

#define S_CACHE_MAX ((size_t)1 << 22)

typedef struct {
    size_t V, k, steps;
    double *rho, *beta;  /* [steps][V][k] or NULL: NaN = not solved yet */
    sd_lp_otm_plan **plans; /* --plan otm: [steps][V][k], NULL = not solved yet */
    double *w;           /* V: residual weights */
    size_t *drafts;      /* k */
} S_state;

static void S_free(void *state)
{
    S_state *s = state;
    if (!s)
        return;
    free(s->rho);
    free(s->beta);
    if (s->plans)
        for (size_t i = 0; i < s->steps * s->V * s->k; i++)
            sd_lp_otm_plan_free(s->plans[i]);
    free(s->plans);
    free(s->w);
    free(s->drafts);
    free(s);
}

/* ρ*(k') and β(ρ*) for row (t, prev). */
static int S_solve(S_state *s, const double *p, const double *q, size_t t, size_t prev,
                   size_t k, double *rho, double *beta, sd_error *err)
{
    if (!s->rho)
        return sd_kseq_solve(p, q, s->V, k, rho, beta, err);
    size_t step = s->steps == 1 ? 0 : t - 1;
    size_t i = (step * s->V + prev) * s->k + (k - 1);
    if (isnan(s->rho[i])) {
        int rc = sd_kseq_solve(p, q, s->V, k, &s->rho[i], &s->beta[i], err);
        if (rc)
            return rc;
    }
    *rho = s->rho[i];
    *beta = s->beta[i];
    return SD_OK;
}

/* Sun et al. 2023, Alg. 2 at position t with the k drafts x[]. */
static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x,
                    size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    S_state *s = ctx;
    const double *p = sd_chain_p(c, t, prev), *q = sd_chain_q(c, t, prev);
    double rho, beta;
    int rc = S_solve(s, p, q, t, prev, k, &rho, &beta, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < k; i++) {
        /* accept with probability min(1, q/(ρ p)); p(x) > 0 as x ~ p */
        if (sd_stream_uniform(rng) * rho * p[x[i]] < q[x[i]]) {
            *y = x[i];
            return SD_OK;
        }
    }
    double mass = sd_kseq_residual(p, q, s->V, k, rho, beta, s->w);
    /* mass 0: all drafts fail with probability (1-β)^k = 0 (p = q); the
     * event happened only by rounding, and q is the law to keep */
    *y = mass > 0.0 ? sd_dist_sample(s->w, s->V, mass, sd_stream_uniform(rng))
                    : sd_dist_sample(q, s->V, 1.0, sd_stream_uniform(rng));
    return SD_OK;
}

/* The OTM-k plan (Sun et al. 2023, eq. 4) at position t with the k drafts x[]. */
static int S_select_otm(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x,
                        size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    S_state *s = ctx;
    size_t step = s->steps == 1 ? 0 : t - 1;
    sd_lp_otm_plan **pl = &s->plans[(step * s->V + prev) * s->k + (k - 1)];
    if (!*pl) {
        int rc = sd_lp_otm_plan_solve(sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), s->V, k, 0,
                                      pl, err);
        if (rc) {
            sd_error_prefix(err, "spectr --plan otm, step %zu, row %zu, %zu drafts", t, prev, k);
            return rc;
        }
    }
    *y = sd_lp_otm_plan_sample(*pl, x, sd_stream_uniform(rng));
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    S_state *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k,
                                   s->plans ? S_select_otm : S_select, s, s->drafts, out, it,
                                   err);
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    *state = NULL;
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    if (par->k > ((size_t)1 << 24))
        return sd_error_set(err, SD_ETOOBIG, "--k %zu drafts exceed the limit 2^24", par->k);
    if (sd_param_choice(par, P_PLAN) == SD_PLAN_OTM) {
        /* the largest LP: C(V+k-1, k) multisets times V tokens */
        double vars = (double)c->V;
        for (size_t i = 1; i <= par->k && vars <= (double)SD_LP_OTM_PLAN_MAX_VARS; i++)
            vars *= (double)(c->V + i - 1) / (double)i;
        if (par->k > 64 || vars > (double)SD_LP_OTM_PLAN_MAX_VARS)
            return sd_error_set(err, SD_ETOOBIG,
                                "spectr --plan otm: the OTM LP for k = %zu drafts at V = %zu has "
                                "more than %d variables (limit; k <= 64)",
                                par->k, c->V, SD_LP_OTM_PLAN_MAX_VARS);
    }
    S_state *s = calloc(1, sizeof *s);
    if (!s)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    s->V = c->V;
    s->k = par->k;
    s->steps = c->draft_steps > c->target_steps ? c->draft_steps : c->target_steps;
    s->w = malloc(c->V * sizeof *s->w);
    s->drafts = malloc(par->k * sizeof *s->drafts);
    int cache = s->steps <= S_CACHE_MAX / c->V && s->steps * c->V <= S_CACHE_MAX / par->k;
    if (sd_param_choice(par, P_PLAN) == SD_PLAN_OTM) {
        if (!cache) {
            S_free(s);
            return sd_error_set(err, SD_ETOOBIG,
                                "spectr --plan otm: %zu steps x V = %zu x k = %zu plans exceed "
                                "the limit 2^22",
                                s->steps, c->V, par->k);
        }
        s->plans = calloc(s->steps * c->V * par->k, sizeof *s->plans);
        if (!s->plans) {
            S_free(s);
            return sd_error_set(err, SD_ENOMEM, "out of memory for spectr's OTM plans");
        }
    } else if (cache) {
        size_t cells = s->steps * c->V * par->k;
        s->rho = malloc(cells * sizeof *s->rho);
        s->beta = malloc(cells * sizeof *s->beta);
        if (s->rho)
            for (size_t i = 0; i < cells; i++)
                s->rho[i] = NAN;
    }
    if (!s->w || !s->drafts || (!s->plans && cache && (!s->rho || !s->beta))) {
        S_free(s);
        return sd_error_set(err, SD_ENOMEM, "out of memory for spectr (V = %zu, k = %zu)", c->V,
                            par->k);
    }
    *state = s;
    return SD_OK;
}

static const sd_param_decl S_params[] = {
    SD_PARAM_DRAFTS("k"),
    SD_PARAM_GAMMA,
    {.name = "plan", .kind = SD_PARAM_CHOICE, .slot = P_PLAN, .def = SD_PLAN_KSEQ, .choices = "kseq|otm",
     .help = "k-Seq selection or the OTM LP plan (default kseq)"},
    SD_PARAM_END,
};

/* The exact law of one iteration (sims/exact/sd_iter_laws.h); k-Seq only. */
static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    if (sd_param_choice(par, P_PLAN) == SD_PLAN_OTM)
        return sd_error_set(err, SD_EUSAGE, "spectr --plan otm: no exact law of an iteration "
                                            "(the LP plans are not enumerated)");
    return sd_law_tree(c, sd_draft_len(c, par, n), par->k, 1, n, prev, out, err);
}

/* The kernel (sims/kernels/sd_kernel_law.h), k-Seq only: one alias draw per
 * position over (x, number of drafts equal to x, 0 = a rejection) with the
 * law above (ρ* solved once per row and state when the tables are built),
 * and the bonus from q. */
static int S_pos(const sd_chain *c, const sd_params *par, sd_pos_law *out, sd_error *err)
{
    if (sd_param_choice(par, P_PLAN) != SD_PLAN_KSEQ || par->k < 1)
        return SD_EUSAGE; /* no law of the OTM plans; the step reports a bad count */
    return sd_pos_law_tree(c->V, sd_draft_len_unbounded(par->gamma), par->k, 1, out, err);
}

SD_KERNEL_LAW_DEFINE(S_kernel, "spectr-alias", S_pos, SD_KERNEL_LAW_SUPPORTS);
static const sd_kernel_type *const S_kernels[] = {&S_kernel, &sd_spectr_kernel_backoff, NULL};

/* Its law given a logged output (sims/exact/sd_trace_laws.h): the same selection at
 * the output's context, at the output token's column. */
static int S_trace_plan(void **plan, const struct sd_verifier_type *vt, const sd_params *par, size_t V, size_t *S,
                        size_t *s0, sd_error *err)
{
    (void)vt;
    if (sd_param_choice(par, P_PLAN) != SD_PLAN_KSEQ)
        return sd_error_set(err, SD_EUSAGE, "spectr --plan otm: no law given the output (the LP plans are not "
                                            "enumerated); --plan kseq has one");
    return sd_trace_sel_plan_new(plan, par->k, 1, V, S, s0, err);
}
static const sd_trace_type S_trace = {.needs_rows = 1,
                                      .real_state = 0,
                                      .by_depth = 0,
                                      .plan_new = S_trace_plan,
                                      .plan_free = sd_trace_sel_plan_free,
                                      .draft_len = sd_trace_gamma_len,
                                      .go = sd_trace_sel_go};

const sd_verifier_type sd_verifier_spectr = {
    .name = "spectr",
    .summary = "SpecTr: k-draft tree, k-Seq selection (rho* by Brent) or the OTM LP plan (Sun et al. 2023, Alg. 2, 3)",
    .params = S_params,
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = S_free,
    .begin = NULL,
    .step = S_step,
    .kernels = S_kernels,
    .iteration_law = S_law,
    .trace = &S_trace,
    .iid_pos_law = S_pos,
};
