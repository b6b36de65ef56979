/* optimal_md.c — optimal-md: the optimal verifier for k i.i.d. drafts
 * (Thomas & Pal 2025, "Global Resolution: optimal multi-draft speculative
 * sampling via convex minimization"; the transport problem of Sun et al.
 * 2023, eq. 4).
 *
 * Rule.  k draft sequences are drawn i.i.d. from p (a draft tree as in
 * SpecTr, Sun et al. 2023, Alg. 3).  At a depth with a surviving drafts
 * X_1..X_a ~ p_t(.|x_{t-1}) i.i.d. the output Y is drawn from an optimal
 * transport plan π(y | multiset of the drafts) between p^{⊗a} and q with
 * cost 1{y ∉ drafts}: its column sums are q, so Y ~ q whatever happens, and
 * P(Y ∈ drafts) is the optimum α_a = 1 - max_B [p(B)^a - q(B)] (the value
 * Thomas & Pal reduce to a convex problem in V variables; simdec computes
 * it four ways, `eval acceptance --method`).  The drafts equal to Y go on
 * (sd_multidraft_tree_step); Y outside the drafts is a rejection.
 *
 * The plan.  Thomas & Pal resolve the plan itself at real V from the
 * convex problem's solution; simdec plays the plan of GLPK's transport
 * problem on multisets (lp/sd_lp_otm.h, the same plan as `spectr --plan
 * otm`), one per row and number of surviving drafts, so optimal-md runs
 * where that LP fits (C(V+k-1, k)·V <= SD_LP_OTM_PLAN_MAX_VARS variables;
 * refused at alloc otherwise).  Any optimal plan gives the same law of
 * accepted lengths at the first depth; deeper, different optimal plans may
 * differ in how many drafts survive, so the exact law is taken of this
 * plan: GLPK's answer is a deterministic function of (p, q, a).
 *
 * Exact law (sd_optimal_md_law_mode).  At a depth with a survivors the
 * multisets m of size a are enumerated with their multinomial
 * probabilities; the plan's mass P(m) π(y | m) goes on with mult_m(y)
 * survivors when y ∈ m, else to a rejection at y.  After G depths a bonus
 * from q.  The law solves its own plans (the same deterministic LP), once
 * per row and survivor count of the iteration (cached in its context), so
 * it shares no state with the step.
 *
 * Parameters k (drafts, >= 1), gamma.  One target call per iteration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../lp/sd_lp_otm.h"
#include "../../src/sd_dist.h"
#include "../exact/sd_exact_gen.h"
#include "../exact/sd_iter_laws.h"
#include "sd_multidraft.h"
#include "sd_optimal_md.h"

#define S_CACHE_MAX ((size_t)1 << 22)
#define S_MAX_K 64

typedef struct {
    size_t V, k, steps;
    int bug;
    sd_lp_otm_plan **plans; /* [steps][V][k], NULL = not solved yet */
    size_t *drafts;         /* k */
} S_state;

void sd_optimal_md_free(void *state)
{
    S_state *s = state;
    if (!s)
        return;
    if (s->plans)
        for (size_t i = 0; i < s->steps * s->V * s->k; i++)
            sd_lp_otm_plan_free(s->plans[i]);
    free(s->plans);
    free(s->drafts);
    free(s);
}

/* Variables of the largest plan (a = k drafts): C(V+k-1, k)·V, or +inf. */
static double S_vars(size_t V, size_t k)
{
    double vars = (double)V;
    for (size_t i = 1; i <= k && vars <= (double)SD_LP_OTM_PLAN_MAX_VARS; i++)
        vars *= (double)(V + i - 1) / (double)i;
    return vars;
}

int sd_optimal_md_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    *state = NULL;
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    if (par->k > S_MAX_K || S_vars(c->V, par->k) > (double)SD_LP_OTM_PLAN_MAX_VARS)
        return sd_error_set(err, SD_ETOOBIG,
                            "optimal-md: the transport plan for k = %zu drafts at V = %zu has more "
                            "than %d variables (limit; k <= %d)",
                            par->k, c->V, SD_LP_OTM_PLAN_MAX_VARS, S_MAX_K);
    S_state *s = calloc(1, sizeof *s);
    if (!s)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    s->V = c->V;
    s->k = par->k;
    s->steps = c->draft_steps > c->target_steps ? c->draft_steps : c->target_steps;
    if (!(s->steps <= S_CACHE_MAX / c->V && s->steps * c->V <= S_CACHE_MAX / par->k)) {
        free(s);
        return sd_error_set(err, SD_ETOOBIG,
                            "optimal-md: %zu steps x V = %zu x k = %zu plans exceed the limit 2^22",
                            c->draft_steps > c->target_steps ? c->draft_steps : c->target_steps, c->V,
                            par->k);
    }
    s->plans = calloc(s->steps * c->V * par->k, sizeof *s->plans);
    s->drafts = malloc(par->k * sizeof *s->drafts);
    if (!s->plans || !s->drafts) {
        sd_optimal_md_free(s);
        return sd_error_set(err, SD_ENOMEM, "out of memory for optimal-md's plans");
    }
    *state = s;
    return SD_OK;
}

static int S_plan(const sd_chain *c, size_t t, size_t prev, size_t a, sd_lp_otm_plan **pl, sd_error *err)
{
    int rc = sd_lp_otm_plan_solve(sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), c->V, a, 0, pl, err);
    if (rc)
        sd_error_prefix(err, "optimal-md, step %zu, row %zu, %zu drafts", t, prev, a);
    return rc;
}

static int S_in(const size_t *x, size_t k, size_t y)
{
    for (size_t i = 0; i < k; i++)
        if (x[i] == y)
            return 1;
    return 0;
}

static int S_select(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x, size_t k,
                    sd_stream *rng, size_t *y, sd_error *err)
{
    S_state *s = ctx;
    size_t step = s->steps == 1 ? 0 : t - 1;
    sd_lp_otm_plan **pl = &s->plans[(step * s->V + prev) * s->k + (k - 1)];
    if (!*pl) {
        int rc = S_plan(c, t, prev, k, pl, err);
        if (rc)
            return rc;
    }
    *y = sd_lp_otm_plan_sample(*pl, x, sd_stream_uniform(rng));
    if (s->bug == SD_OPTIMAL_MD_BUG_FRESH_Q && !S_in(x, k, *y))
        *y = sd_dist_sample(sd_chain_q(c, t, prev), c->V, 1.0, sd_stream_uniform(rng));
    return SD_OK;
}

int sd_optimal_md_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                            size_t n, size_t prev, size_t *out, sd_iter *it, int bug, sd_error *err)
{
    S_state *s = state;
    s->bug = bug;
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k, S_select, s, s->drafts, out, it, err);
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_optimal_md_step_mode(state, c, par, rng, n, prev, out, it, SD_OPTIMAL_MD_CORRECT, err);
}

/* --- the exact law ---------------------------------------------------------- */

typedef struct {
    size_t G, k, V, steps;
    int bug;
    sd_lp_otm_plan **plans; /* [steps][V][k], solved when first needed */
} S_lawctx;

static void S_lawctx_free(void *ctx)
{
    S_lawctx *L = ctx;
    if (!L)
        return;
    if (L->plans)
        for (size_t i = 0; i < L->steps * L->V * L->k; i++)
            sd_lp_otm_plan_free(L->plans[i]);
    free(L->plans);
    free(L);
}

static int S_law_fn(void *ctx, const sd_chain *c, size_t t, size_t a0, size_t i, size_t s,
                    double *cont, double *ok, double *rej, sd_error *err)
{
    S_lawctx *L = ctx;
    size_t V = c->V;
    const double *p = sd_chain_p(c, t, a0), *q = sd_chain_q(c, t, a0);
    if (i == L->G) {
        for (size_t y = 0; y < V; y++)
            ok[y] = q[y];
        return SD_OK;
    }
    size_t a = s + 1, x[S_MAX_K];
    size_t step = L->steps == 1 ? 0 : t - 1;
    sd_lp_otm_plan **slot = &L->plans[(step * V + a0) * L->k + (a - 1)];
    if (!*slot) {
        int rc = S_plan(c, t, a0, a, slot, err);
        if (rc)
            return rc;
    }
    const sd_lp_otm_plan *pl = *slot;
    memset(x, 0, sizeof x);
    for (;;) {
        /* P(multiset) = a!/Π mult! Π p(x_i), over runs of equal tokens */
        double m = 1.0;
        size_t left = a;
        for (size_t u = 0; u < a && m > 0.0;) {
            size_t v = u;
            while (v < a && x[v] == x[u])
                v++;
            double cnk = 1.0;
            for (size_t j = 1; j <= v - u; j++)
                cnk = cnk * (double)(left - (v - u) + j) / (double)j;
            m *= cnk * pow(p[x[u]], (double)(v - u));
            left -= v - u;
            u = v;
        }
        if (m > 0.0) {
            const double *row = sd_lp_otm_plan_row(pl, x);
            double miss = 0.0;
            for (size_t y = 0; y < V; y++) {
                double w = m * row[y];
                if (!(w > 0.0))
                    continue;
                size_t agree = 0;
                for (size_t j = 0; j < a; j++)
                    agree += x[j] == y;
                if (agree)
                    cont[(agree - 1) * V + y] += w;
                else if (L->bug == SD_OPTIMAL_MD_BUG_FRESH_Q)
                    miss += w;
                else
                    rej[y] += w;
            }
            /* the control: a rejection's token is a fresh draw from q, which
             * goes on with the drafts equal to it (drafts continue by value) */
            for (size_t y = 0; miss > 0.0 && y < V; y++) {
                double w = miss * q[y];
                if (!(w > 0.0))
                    continue;
                size_t agree = 0;
                for (size_t j = 0; j < a; j++)
                    agree += x[j] == y;
                if (agree)
                    cont[(agree - 1) * V + y] += w;
                else
                    rej[y] += w;
            }
        }
        size_t u = a;
        while (u > 0 && x[u - 1] == V - 1)
            u--;
        if (u == 0)
            break;
        x[u - 1]++;
        for (size_t j = u; j < a; j++)
            x[j] = x[u - 1];
    }
    return SD_OK;
}

int sd_optimal_md_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                           struct sd_iter_law *out, int bug, sd_error *err)
{
    if (par->k < 1 || par->k > S_MAX_K || S_vars(c->V, par->k) > (double)SD_LP_OTM_PLAN_MAX_VARS)
        return sd_error_set(err, SD_ETOOBIG, "optimal-md: no exact law beyond the plan's limit (k = %zu, V = %zu)",
                            par->k, c->V);
    size_t steps = c->draft_steps > c->target_steps ? c->draft_steps : c->target_steps;
    if (!(steps <= S_CACHE_MAX / c->V && steps * c->V <= S_CACHE_MAX / par->k))
        return sd_error_set(err, SD_ETOOBIG, "optimal-md: %zu steps x V = %zu x k = %zu plans exceed the limit 2^22",
                            steps, c->V, par->k);
    S_lawctx *L = malloc(sizeof *L);
    sd_lp_otm_plan **plans = calloc(steps * c->V * par->k, sizeof *plans);
    if (!L || !plans) {
        free(L);
        free(plans);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    size_t G = sd_draft_len(c, par, n);
    *L = (S_lawctx){G, par->k, c->V, steps, bug, plans};
    /* per call: one LP (bounded by its variables) and C(V+k-1, k) multisets
     * of V + k operations; per token of the vocabulary */
    double work = S_vars(c->V, par->k) * (double)(par->k + 2) / (double)c->V + 1e3;
    sd_pos_law pl = {S_law_fn, L, par->k, par->k - 1, G, 1, work, S_lawctx_free};
    return sd_pos_law_iteration(SD_OK, &pl, c, n, prev, out, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev, struct sd_iter_law *out,
                 sd_error *err)
{
    return sd_optimal_md_law_mode(c, par, n, prev, out, SD_OPTIMAL_MD_CORRECT, err);
}

const sd_param_decl sd_optimal_md_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_optimal_md = {
    .name = "optimal-md",
    .summary = "k i.i.d. drafts, Y from the optimal transport plan: acceptance = the k-draft optimum "
               "(Thomas & Pal 2025; GLPK plan)",
    .params = sd_optimal_md_params,
    .claims_lossless = NULL,
    .alloc = sd_optimal_md_alloc,
    .free = sd_optimal_md_free,
    .begin = NULL,
    .step = S_step,
    .iteration_law = S_law,
};
