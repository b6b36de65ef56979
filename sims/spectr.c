/* spectr.c — SpecTr: multi-draft speculative decoding with k-Seq selection.
 *
 * 002_2250ceed65bbc463.txt Alg. 3 (draft selection on a tree of k i.i.d.
 * draft sequences) with Alg. 2 (k-Seq) as the token-level selection; SPEC
 * §2 "spectr".  At a depth with k' surviving drafts X_1..X_k' ~ p, X_i is
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
 * --plan otm (the OTM LP plan of lp/sd_lp_otm.h in place of k-Seq) is
 * refused until the LP's implementation is linked into the library. */
#include <math.h>
#include <stdlib.h>

#include "../src/sd_dist.h"
#include "../src/sd_kseq.h"
#include "sd_multidraft.h"

#define S_CACHE_MAX ((size_t)1 << 22)

typedef struct {
    size_t V, k, steps;
    double *rho, *beta;  /* [steps][V][k] or NULL: NaN = not solved yet */
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

/* 002_… Alg. 2 at position t with the k drafts x[]. */
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

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    S_state *s = state;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k, S_select, s, s->drafts, out,
                                   it, err);
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    *state = NULL;
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    if (par->k > ((size_t)1 << 24))
        return sd_error_set(err, SD_ETOOBIG, "--k %zu drafts exceed the limit 2^24", par->k);
    if (par->plan == SD_PLAN_OTM)
        return sd_error_set(err, SD_EUSAGE,
                            "spectr --plan otm is not available yet (the OTM LP plan of "
                            "lp/sd_lp_otm.h is not implemented); use --plan kseq");
    S_state *s = calloc(1, sizeof *s);
    if (!s)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    s->V = c->V;
    s->k = par->k;
    s->steps = c->draft_steps > c->target_steps ? c->draft_steps : c->target_steps;
    s->w = malloc(c->V * sizeof *s->w);
    s->drafts = malloc(par->k * sizeof *s->drafts);
    int cache = s->steps <= S_CACHE_MAX / c->V && s->steps * c->V <= S_CACHE_MAX / par->k;
    if (cache) {
        size_t cells = s->steps * c->V * par->k;
        s->rho = malloc(cells * sizeof *s->rho);
        s->beta = malloc(cells * sizeof *s->beta);
        if (s->rho)
            for (size_t i = 0; i < cells; i++)
                s->rho[i] = NAN;
    }
    if (!s->w || !s->drafts || (cache && (!s->rho || !s->beta))) {
        S_free(s);
        return sd_error_set(err, SD_ENOMEM, "out of memory for spectr (V = %zu, k = %zu)", c->V,
                            par->k);
    }
    *state = s;
    return SD_OK;
}

const sd_verifier_type sd_verifier_spectr = {
    .name = "spectr",
    .summary = "SpecTr: k-draft tree with k-Seq selection, rho* by Brent (002_ Alg. 2, 3)",
    .params = "k gamma plan",
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = S_free,
    .begin = NULL,
    .step = S_step,
};
