/* khisti.c — multi-draft speculative sampling as importance-sampling
 * selection followed by single-draft speculative sampling (Khisti,
 * Ebrahimi, Dbouk, Behboodi, Memisevic and Louizos 2025, "Multi-draft
 * speculative sampling: canonical decomposition and theoretical limits",
 * ICLR 2025, arXiv:2410.18234).
 *
 * With a drafts x_1..x_a i.i.d. from p at a position (rows p, q): step 1
 * selects draft i with the self-normalised importance weight
 *     beta_i = w(x_i) / sum_l w(x_l),   w = q/p
 * (uniformly when every draft has q = 0), giving the intermediate token Z
 * of law
 *     p_I(z) = a p(z) w(z) E[1 / (w(z) + sum_{l=2..a} w(X_l))];
 * step 2 is single-draft speculative sampling of Z against q with draft law
 * p_I: Y = Z with probability min(1, q(Z)/p_I(Z)), else Y ~ [q - p_I]+
 * normalised.  Y ~ q (Leviathan et al. 2023), so it is lossless for any
 * selection weights; the drafts equal to Y continue in the k-draft tree
 * (sd_multidraft_tree_step), also when Y came from the residual and
 * equals an unselected draft.
 *
 * The paper's canonical decomposition: the optimal k-draft scheme is of
 * this form with weights from a linear program; for two identical drafts
 * its optimum has the closed form
 *     P*(acc) = min_S [ q(S) + p(S^c)^2 + 2 p(S) p(S^c) ]
 * (= 1 - max_S [p(S)^2 - q(S)], `eval acceptance --algo otm --k 2`).
 * --weights is (default) uses the fixed importance weights q/p (no LP);
 * --weights optimal takes them from the optimal transport plan pi(y | m)
 * of k i.i.d. drafts (Sun et al. 2023, eq. 4; lp/sd_lp_otm.h, one LP per
 * row and draft count): draft token z of the multiset m is selected with
 *     beta(z | m) = pi(z | m) + (1 - sum_{y in m} pi(y | m)) m(z)/a,
 * so p_I(z) >= a(z) = sum_m P(m) pi(z | m) 1{z in m}, a(z) <= q(z), and the
 * second step accepts sum min(p_I, q) >= sum a = alpha_a: the optimum, as the
 * canonical decomposition says (tests/test_md_exact.c checks the closed
 * form both ways).
 *
 * Exact law (sd_khisti_law_mode): enumerating the C(V+a-1, a) multisets m
 * of the drafts (refused beyond SD_KHISTI_MAX_MULTISETS), P(Y = y, j drafts
 * equal y) sums P(m) [P(Z = y | m) min(1, q(y)/p_I(y)) + rho(m) r(y)] over
 * the multisets with j copies of y, rho(m) the rejection probability given
 * m and r the normalised residual; p_I by the same enumeration (also in the
 * simulator, per position).  Parameters k and gamma; one target call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../lp/sd_lp_otm.h"
#include "../../src/sd_dist.h"
#include "sd_khisti.h"
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"

enum { P_WEIGHTS }; /* slot of the parameter */
enum { S_W_IS = 0, S_W_OPTIMAL = 1 };

#define S_CACHE_MAX ((size_t)1 << 22)

/* The selection rule: importance weights (plan NULL) or the OTM plan's. */
typedef struct {
    const sd_lp_otm_plan *plan;
    size_t *tup; /* a: the multiset as sorted tokens, for the plan's row */
} S_rule;

typedef struct {
    size_t V, k, steps;
    int optimal;
    sd_lp_otm_plan **plans; /* --weights optimal: [steps][V][k], NULL = not solved */
    size_t *drafts;         /* k */
    size_t *tup;            /* k */
    size_t *cnt, *cnt2;     /* V each */
    double *pI, *w, *beta;  /* V each */
    double *pIc;            /* [steps][V][k][V] p_I per row and draft count (NaN: not yet), or NULL */
} S_state;

void sd_khisti_free(void *state)
{
    S_state *s = state;
    if (!s)
        return;
    if (s->plans)
        for (size_t i = 0; i < s->steps * s->V * s->k; i++)
            sd_lp_otm_plan_free(s->plans[i]);
    free(s->plans);
    free(s->drafts);
    free(s->tup);
    free(s->cnt);
    free(s->cnt2);
    free(s->pI);
    free(s->w);
    free(s->beta);
    free(s->pIc);
    free(s);
}

/* C(V+a-1, a) multisets of a drafts fit in SD_KHISTI_MAX_MULTISETS. */
static int S_fits(size_t V, size_t a)
{
    double n = 1.0;
    for (size_t i = 1; i <= a; i++) {
        n = n * (double)(V - 1 + i) / (double)i;
        if (n > (double)SD_KHISTI_MAX_MULTISETS)
            return 0;
    }
    return 1;
}

static int S_plan_fits(size_t V, size_t a)
{
    double vars = (double)V;
    for (size_t i = 1; i <= a; i++)
        vars = vars * (double)(V - 1 + i) / (double)i;
    return a <= 64 && vars <= (double)SD_LP_OTM_PLAN_MAX_VARS;
}

int sd_khisti_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    *state = NULL;
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    if (!S_fits(c->V, par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --k %zu at V = %zu: the selection's law "
                                             "enumerates more than 2^20 multisets of drafts", par->k, c->V);
    int optimal = sd_param_choice(par, P_WEIGHTS) == S_W_OPTIMAL;
    size_t steps = c->draft_steps > c->target_steps ? c->draft_steps : c->target_steps;
    if (optimal && !S_plan_fits(c->V, par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --weights optimal: the OTM LP for k = %zu drafts at "
                                             "V = %zu has more than %d variables (limit)",
                            par->k, c->V, SD_LP_OTM_PLAN_MAX_VARS);
    if (optimal && (steps > S_CACHE_MAX / c->V || steps * c->V > S_CACHE_MAX / par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --weights optimal: %zu steps x V = %zu x k = %zu "
                                             "plans exceed the limit 2^22", steps, c->V, par->k);
    S_state *s = calloc(1, sizeof *s);
    if (s) {
        s->V = c->V;
        s->k = par->k;
        s->steps = steps;
        s->optimal = optimal;
        s->drafts = malloc(par->k * sizeof *s->drafts);
        s->tup = malloc(par->k * sizeof *s->tup);
        s->cnt = calloc(c->V, sizeof *s->cnt);
        s->cnt2 = calloc(c->V, sizeof *s->cnt2);
        s->pI = malloc(c->V * sizeof *s->pI);
        s->w = malloc(c->V * sizeof *s->w);
        s->beta = malloc(c->V * sizeof *s->beta);
        if (optimal)
            s->plans = calloc(steps * c->V * par->k, sizeof *s->plans);
        /* p_I cached per row and draft count when that fits in 2^22 doubles */
        if (steps <= S_CACHE_MAX / c->V && steps * c->V <= S_CACHE_MAX / par->k &&
            steps * c->V * par->k <= S_CACHE_MAX / c->V) {
            size_t cells = steps * c->V * par->k * c->V;
            s->pIc = malloc(cells * sizeof *s->pIc);
            if (s->pIc)
                for (size_t i = 0; i < cells; i += c->V)
                    s->pIc[i] = NAN;
        }
    }
    if (!s || !s->drafts || !s->tup || !s->cnt || !s->cnt2 || !s->pI || !s->w || !s->beta ||
        (optimal && !s->plans)) {
        sd_khisti_free(s);
        return sd_error_set(err, SD_ENOMEM, "out of memory for khisti (V = %zu)", c->V);
    }
    *state = s;
    return SD_OK;
}

/* The importance weight of token x: q/p (0 where p = 0: never drafted). */
static double S_w(const double *p, const double *q, size_t x)
{
    return p[x] > 0.0 ? q[x] / p[x] : 0.0;
}

/* The multisets of a drafts as counts cnt[0..V-1]: the first, then the
 * next; 0 after the last. */
static void S_first(size_t *cnt, size_t V, size_t a)
{
    memset(cnt, 0, V * sizeof *cnt);
    cnt[V - 1] = a;
}
static int S_next(size_t *cnt, size_t V)
{
    /* one unit of the rightmost nonzero count at an index j >= 1 moves to
     * j-1, the rest of count j goes back to V-1 (each multiset once) */
    size_t j = V;
    for (size_t i = V; i-- > 1;)
        if (cnt[i] > 0) {
            j = i;
            break;
        }
    if (j == V)
        return 0; /* every draft on token 0: the last */
    size_t rest = cnt[j] - 1;
    cnt[j] = 0;
    cnt[j - 1]++;
    cnt[V - 1] += rest;
    return 1;
}

/* P(the a i.i.d. drafts form the multiset cnt), 0 when a token has p = 0. */
static double S_pm(const double *p, const size_t *cnt, size_t V, size_t a)
{
    double lg = lgamma((double)a + 1.0);
    for (size_t i = 0; i < V; i++)
        if (cnt[i]) {
            if (!(p[i] > 0.0))
                return 0.0;
            lg += (double)cnt[i] * log(p[i]) - lgamma((double)cnt[i] + 1.0);
        }
    return exp(lg);
}

/* beta[z] = P(Z = z | the multiset cnt) for the tokens of the multiset (the
 * others are left alone). */
static void S_beta(const S_rule *r, const double *p, const double *q, const size_t *cnt, size_t V,
                   size_t a, double *beta)
{
    if (r->plan) {
        size_t n = 0;
        for (size_t z = 0; z < V; z++)
            for (size_t i = 0; i < cnt[z]; i++)
                r->tup[n++] = z;
        const double *row = sd_lp_otm_plan_row(r->plan, r->tup);
        double in = 0.0;
        for (size_t z = 0; z < V; z++)
            if (cnt[z])
                in += row[z];
        double left = in < 1.0 ? 1.0 - in : 0.0;
        for (size_t z = 0; z < V; z++)
            if (cnt[z])
                beta[z] = row[z] + left * (double)cnt[z] / (double)a;
        return;
    }
    double tot = 0.0;
    for (size_t z = 0; z < V; z++)
        tot += (double)cnt[z] * S_w(p, q, z);
    for (size_t z = 0; z < V; z++)
        if (cnt[z])
            beta[z] = tot > 0.0 ? (double)cnt[z] * S_w(p, q, z) / tot : (double)cnt[z] / (double)a;
}

/* p_I by enumerating the multisets (cnt, beta: V scratch each). */
static void S_pI(const S_rule *r, const double *p, const double *q, size_t V, size_t a, size_t *cnt,
                 double *beta, double *pI)
{
    memset(pI, 0, V * sizeof *pI);
    S_first(cnt, V, a);
    do {
        double pm = S_pm(p, cnt, V, a);
        if (!(pm > 0.0))
            continue;
        S_beta(r, p, q, cnt, V, a, beta);
        for (size_t z = 0; z < V; z++)
            if (cnt[z])
                pI[z] += pm * beta[z];
    } while (S_next(cnt, V));
}

/* The plan of row (t, prev) for a drafts, solved when first needed. */
static int S_plan(S_state *s, const sd_chain *c, size_t t, size_t prev, size_t a,
                  const sd_lp_otm_plan **out, sd_error *err)
{
    *out = NULL;
    if (!s->optimal)
        return SD_OK;
    size_t step = s->steps == 1 ? 0 : t - 1;
    sd_lp_otm_plan **pl = &s->plans[(step * s->V + prev) * s->k + (a - 1)];
    if (!*pl) {
        int rc = sd_lp_otm_plan_solve(sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), s->V, a, 0, pl, err);
        if (rc) {
            sd_error_prefix(err, "khisti --weights optimal, step %zu, row %zu, %zu drafts", t, prev, a);
            return rc;
        }
    }
    *out = *pl;
    return SD_OK;
}

typedef struct {
    S_state *s;
    int bug;
} S_ctx;

static int S_select_fn(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x,
                       size_t a, sd_stream *rng, size_t *y, sd_error *err)
{
    S_ctx *cx = ctx;
    S_state *s = cx->s;
    size_t V = s->V;
    const double *p = sd_chain_p(c, t, prev), *q = sd_chain_q(c, t, prev);
    S_rule r = {NULL, s->tup};
    int rc = S_plan(s, c, t, prev, a, &r.plan, err);
    if (rc)
        return rc;
    for (size_t l = 0; l < a; l++)
        s->cnt[x[l]]++;
    S_beta(&r, p, q, s->cnt, V, a, s->beta);
    /* Z: the drafts' distinct tokens by beta, in the order drafted */
    double u = sd_stream_uniform(rng), acc = 0.0;
    size_t z = x[a - 1];
    for (size_t l = 0; l < a; l++) {
        if (s->cnt[x[l]] == 0)
            continue; /* counted already */
        acc += s->beta[x[l]];
        s->cnt[x[l]] = 0;
        if (u < acc) {
            z = x[l];
            break;
        }
    }
    for (size_t l = 0; l < a; l++)
        s->cnt[x[l]] = 0;
    if (cx->bug == SD_KHISTI_BUG_NO_SD) {
        *y = z;
        return SD_OK;
    }
    double *pI = s->pI;
    if (s->pIc) {
        size_t step = s->steps == 1 ? 0 : t - 1;
        pI = s->pIc + ((step * V + prev) * s->k + (a - 1)) * V;
        if (isnan(pI[0]))
            S_pI(&r, p, q, V, a, s->cnt2, s->beta, pI);
    } else {
        S_pI(&r, p, q, V, a, s->cnt2, s->beta, pI);
    }
    if (sd_stream_uniform(rng) * pI[z] < q[z]) {
        *y = z;
        return SD_OK;
    }
    double m = 0.0;
    for (size_t v = 0; v < V; v++) {
        s->w[v] = q[v] > pI[v] ? q[v] - pI[v] : 0.0;
        m += s->w[v];
    }
    *y = m > 0.0 ? sd_dist_sample(s->w, V, m, sd_stream_uniform(rng))
                 : sd_dist_sample(q, V, 1.0, sd_stream_uniform(rng));
    return SD_OK;
}

int sd_khisti_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                        size_t n, size_t prev, size_t *out, sd_iter *it, int bug, sd_error *err)
{
    S_state *s = state;
    S_ctx cx = {s, bug};
    return sd_multidraft_tree_step(c, par, rng, n, prev, par->k, S_select_fn, &cx, s->drafts, out,
                                   it, err);
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_khisti_step_mode(state, c, par, rng, n, prev, out, it, SD_KHISTI_CORRECT, err);
}

/* --- the exact law ------------------------------------------------------------ */

typedef struct {
    int bug, optimal;
} S_lawctx;

static int S_joint(void *ctx, const double *p, const double *q, size_t V, size_t a, double *J,
                   sd_error *err)
{
    const S_lawctx *L = ctx;
    if (!S_fits(V, a))
        return sd_error_set(err, SD_ETOOBIG, "khisti: the multisets of %zu drafts at V = %zu exceed 2^20", a, V);
    size_t *cnt = malloc(V * sizeof *cnt), *tup = malloc(a * sizeof *tup);
    double *pI = malloc(V * sizeof *pI), *r = malloc(V * sizeof *r), *beta = malloc(V * sizeof *beta);
    sd_lp_otm_plan *plan = NULL;
    int rc = SD_OK;
    if (!cnt || !tup || !pI || !r || !beta) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        goto done;
    }
    if (L->optimal && (rc = sd_lp_otm_plan_solve(p, q, V, a, 0, &plan, err)) != SD_OK)
        goto done;
    S_rule rule = {plan, tup};
    S_pI(&rule, p, q, V, a, cnt, beta, pI);
    double rm = 0.0;
    for (size_t v = 0; v < V; v++) {
        r[v] = q[v] > pI[v] ? q[v] - pI[v] : 0.0;
        rm += r[v];
    }
    for (size_t v = 0; v < V; v++)
        r[v] = rm > 0.0 ? r[v] / rm : q[v];
    S_first(cnt, V, a);
    do {
        double pm = S_pm(p, cnt, V, a);
        if (!(pm > 0.0))
            continue;
        S_beta(&rule, p, q, cnt, V, a, beta);
        double rho = 0.0;
        for (size_t z = 0; z < V; z++) {
            if (!cnt[z])
                continue;
            double keep = L->bug == SD_KHISTI_BUG_NO_SD ? 1.0 : (q[z] < pI[z] ? q[z] / pI[z] : 1.0);
            J[cnt[z] * V + z] += pm * beta[z] * keep;
            rho += beta[z] * (1.0 - keep);
        }
        if (rho > 0.0)
            for (size_t y = 0; y < V; y++)
                if (r[y] > 0.0)
                    J[cnt[y] * V + y] += pm * rho * r[y];
    } while (S_next(cnt, V));
done:
    sd_lp_otm_plan_free(plan);
    free(cnt);
    free(tup);
    free(pI);
    free(r);
    free(beta);
    return rc;
}

int sd_khisti_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                       struct sd_iter_law *out, int bug, sd_error *err)
{
    if (par->k < 1 || !S_fits(c->V, par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --k %zu at V = %zu: the law enumerates more than "
                                             "2^20 multisets of drafts", par->k, c->V);
    S_lawctx L = {bug, sd_param_choice(par, P_WEIGHTS) == S_W_OPTIMAL};
    if (L.optimal && !S_plan_fits(c->V, par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --weights optimal: the OTM LP for k = %zu drafts at "
                                             "V = %zu has more than %d variables (limit)",
                            par->k, c->V, SD_LP_OTM_PLAN_MAX_VARS);
    double sets = 1.0;
    for (size_t i = 1; i <= par->k; i++)
        sets = sets * (double)(c->V - 1 + i) / (double)i;
    /* per token: 2 passes over the multisets / V, each about 6V steps; an
     * LP (optimal) counted as 64 passes over its variables */
    double work = 2.0 * sets / (double)c->V * 6.0 * (double)c->V + (L.optimal ? 64.0 * sets : 0.0);
    sd_pos_law pl = {0};
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), par->k, S_joint, &L, work, &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_khisti_law_mode(c, par, n, prev, out, SD_KHISTI_CORRECT, err);
}

const sd_param_decl sd_khisti_params[] = {
    SD_PARAM_DRAFTS("k"),
    SD_PARAM_GAMMA,
    {.name = "weights", .kind = SD_PARAM_CHOICE, .slot = P_WEIGHTS, .def = S_W_IS, .choices = "is|optimal",
     .help = "selection weights: importance weights q/p or the OTM plan's (an LP per row) (default is)"},
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_khisti = {
    .name = "khisti",
    .summary = "k drafts: importance-sampling selection (q/p or LP-optimal weights) then single-draft SD "
               "against its law (Khisti et al. 2025)",
    .params = sd_khisti_params,
    .alloc = sd_khisti_alloc,
    .free = sd_khisti_free,
    .step = S_step,
    .iteration_law = S_law,
};
