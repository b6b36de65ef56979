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
 * (= 1 - max_S [p(S)^2 - q(S)], `eval acceptance --algo otm --k 2`).  The
 * weights here are the fixed importance weights q/p (the reading chosen:
 * no LP per row); tests/test_md_exact.c measures the gap to the closed form.
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

#include "../../src/sd_dist.h"
#include "sd_khisti.h"
#include "sd_multidraft.h"
#include "../exact/sd_iter_laws.h"

typedef struct {
    size_t V, k;
    size_t *drafts; /* k */
    size_t *cnt;    /* V: the enumeration's multiset */
    double *pI, *w; /* V each */
} S_state;

void sd_khisti_free(void *state)
{
    S_state *s = state;
    if (!s)
        return;
    free(s->drafts);
    free(s->cnt);
    free(s->pI);
    free(s->w);
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

int sd_khisti_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    *state = NULL;
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    if (!S_fits(c->V, par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --k %zu at V = %zu: the selection's law "
                                             "enumerates more than 2^20 multisets of drafts", par->k, c->V);
    S_state *s = calloc(1, sizeof *s);
    if (s) {
        s->V = c->V;
        s->k = par->k;
        s->drafts = malloc(par->k * sizeof *s->drafts);
        s->cnt = malloc(c->V * sizeof *s->cnt);
        s->pI = malloc(c->V * sizeof *s->pI);
        s->w = malloc(c->V * sizeof *s->w);
    }
    if (!s || !s->drafts || !s->cnt || !s->pI || !s->w) {
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
 * next in order; 0 after the last. */
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

/* The selection's total weight of a multiset (uniform when it is 0). */
static double S_tot(const double *p, const double *q, const size_t *cnt, size_t V)
{
    double tot = 0.0;
    for (size_t i = 0; i < V; i++)
        tot += (double)cnt[i] * S_w(p, q, i);
    return tot;
}

/* P(Z = z | multiset) */
static double S_sel(const double *p, const double *q, const size_t *cnt, size_t a, double tot, size_t z)
{
    return tot > 0.0 ? (double)cnt[z] * S_w(p, q, z) / tot : (double)cnt[z] / (double)a;
}

/* p_I by enumerating the multisets. */
static void S_pI(const double *p, const double *q, size_t V, size_t a, size_t *cnt, double *pI)
{
    memset(pI, 0, V * sizeof *pI);
    S_first(cnt, V, a);
    do {
        double pm = S_pm(p, cnt, V, a);
        if (!(pm > 0.0))
            continue;
        double tot = S_tot(p, q, cnt, V);
        for (size_t z = 0; z < V; z++)
            if (cnt[z])
                pI[z] += pm * S_sel(p, q, cnt, a, tot, z);
    } while (S_next(cnt, V));
}

static int S_select(S_state *s, const double *p, const double *q, const size_t *x, size_t a,
                    int bug, sd_stream *rng, size_t *y, sd_error *err)
{
    (void)err;
    size_t V = s->V;
    double tot = 0.0;
    for (size_t l = 0; l < a; l++)
        tot += S_w(p, q, x[l]);
    double u = sd_stream_uniform(rng) * (tot > 0.0 ? tot : (double)a), acc = 0.0;
    size_t z = x[a - 1];
    for (size_t l = 0; l < a; l++) {
        acc += tot > 0.0 ? S_w(p, q, x[l]) : 1.0;
        if (u < acc) {
            z = x[l];
            break;
        }
    }
    if (bug == SD_KHISTI_BUG_NO_SD) {
        *y = z;
        return SD_OK;
    }
    S_pI(p, q, V, a, s->cnt, s->pI);
    if (sd_stream_uniform(rng) * s->pI[z] < q[z]) {
        *y = z;
        return SD_OK;
    }
    double m = 0.0;
    for (size_t v = 0; v < V; v++) {
        s->w[v] = q[v] > s->pI[v] ? q[v] - s->pI[v] : 0.0;
        m += s->w[v];
    }
    *y = m > 0.0 ? sd_dist_sample(s->w, V, m, sd_stream_uniform(rng))
                 : sd_dist_sample(q, V, 1.0, sd_stream_uniform(rng));
    return SD_OK;
}

typedef struct {
    S_state *s;
    int bug;
} S_ctx;

static int S_select_fn(void *ctx, const sd_chain *c, size_t t, size_t prev, const size_t *x,
                       size_t k, sd_stream *rng, size_t *y, sd_error *err)
{
    S_ctx *cx = ctx;
    return S_select(cx->s, sd_chain_p(c, t, prev), sd_chain_q(c, t, prev), x, k, cx->bug, rng, y, err);
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
    int bug;
} S_lawctx;

static int S_joint(void *ctx, const double *p, const double *q, size_t V, size_t a, double *J,
                   sd_error *err)
{
    const S_lawctx *L = ctx;
    if (!S_fits(V, a))
        return sd_error_set(err, SD_ETOOBIG, "khisti: the multisets of %zu drafts at V = %zu exceed 2^20", a, V);
    size_t *cnt = malloc(V * sizeof *cnt);
    double *pI = malloc(V * sizeof *pI), *r = malloc(V * sizeof *r);
    int rc = SD_OK;
    if (!cnt || !pI || !r) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        goto done;
    }
    S_pI(p, q, V, a, cnt, pI);
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
        double tot = S_tot(p, q, cnt, V), rho = 0.0;
        for (size_t z = 0; z < V; z++) {
            if (!cnt[z])
                continue;
            double sel = S_sel(p, q, cnt, a, tot, z);
            double keep = L->bug == SD_KHISTI_BUG_NO_SD ? 1.0 : (q[z] < pI[z] ? q[z] / pI[z] : 1.0);
            J[cnt[z] * V + z] += pm * sel * keep;
            rho += sel * (1.0 - keep);
        }
        if (rho > 0.0)
            for (size_t y = 0; y < V; y++)
                if (r[y] > 0.0)
                    J[cnt[y] * V + y] += pm * rho * r[y];
    } while (S_next(cnt, V));
done:
    free(cnt);
    free(pI);
    free(r);
    return rc;
}

int sd_khisti_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                       struct sd_iter_law *out, int bug, sd_error *err)
{
    if (par->k < 1 || !S_fits(c->V, par->k))
        return sd_error_set(err, SD_ETOOBIG, "khisti --k %zu at V = %zu: the law enumerates more than "
                                             "2^20 multisets of drafts", par->k, c->V);
    S_lawctx L = {bug};
    double sets = 1.0;
    for (size_t i = 1; i <= par->k; i++)
        sets = sets * (double)(c->V - 1 + i) / (double)i;
    /* per token: 2 passes over the multisets / V, each about 6V steps */
    double work = 2.0 * sets / (double)c->V * 6.0 * (double)c->V;
    sd_pos_law pl = {0};
    int rc = sd_pos_law_select(c->V, sd_draft_len(c, par, n), par->k, S_joint, &L, work, &pl, err);
    return sd_pos_law_iteration(rc, &pl, c, n, prev, out, err);
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_khisti_law_mode(c, par, n, prev, out, SD_KHISTI_CORRECT, err);
}

const sd_param_decl sd_khisti_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_khisti = {
    .name = "khisti",
    .summary = "k drafts: importance-sampling selection (weights q/p) then single-draft SD against its law "
               "(Khisti et al. 2025)",
    .params = sd_khisti_params,
    .alloc = sd_khisti_alloc,
    .free = sd_khisti_free,
    .step = S_step,
    .iteration_law = S_law,
};
