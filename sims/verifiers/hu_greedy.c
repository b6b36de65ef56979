/* hu_greedy.c — greedy draft sampling with the verifier that reaches its
 * bound (Hu, Zheng, Viswanathan, Chen, Rossi, Wu, Manocha and Huang 2025,
 * "Towards optimal multi-draft speculative decoding", ICLR 2025).
 *
 * Drafts at the first position of an iteration (p = p_n(.|prev), q =
 * q_n(.|prev)): the k-1 most probable tokens of p, the set T (fixed, ties to
 * the lower index), and one token X drawn from p off T,
 *     p'(x) = p(x) 1{x not in T} / p(T^c).
 * Any verifier with output Y ~ q accepts with
 *     P(Y in T u {X}) <= q(T) + P(Y = X, X not in T)
 *                     <= q(T) + sum_{x not in T} min(p'(x), q(x)),
 * and single-draft speculative sampling of X against q with draft law p'
 * (accept with min(1, q(X)/p'(X)), else Y ~ [q - p']+ normalised) reaches
 * it: the residual holds all of q on T (p' = 0 there), where every token
 * is a draft, and off T it never returns the rejected X.  Its output law
 * is q.  When p(T^c) = 0 (k-1 >= the support of p) the k-th draft is the
 * k-th most probable token and Y ~ q is accepted on those k tokens (on
 * every token when k > V: the greedy drafts are distinct).
 *
 * Readings where the text leaves a choice (docs/findings.md, item 43): the
 * last draft is drawn without replacement (off T; drawn from p itself the
 * bound is q(T) + sum_{x not in T} min(p, q), never larger); the draft
 * sequence that starts with the accepted token continues as one draft
 * sequence sampled from p, verified token by token (Leviathan et al.
 * 2023) — greedy drafting branches at the first position only.  One
 * target call per iteration; parameters k (drafts) and gamma.
 *
 * Exact iteration law (sims/exact/sd_iter_laws.h): at the first position
 * x = y goes on with q(y) on T and min(p', q)(y) off T, and is rejected
 * with [q - p']+(y) off T; later positions are token-level. */
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_dist.h"
#include "sd_hu_greedy.h"
#include "sd_tokenwise.h"
#include "../exact/sd_iter_laws.h"

typedef struct {
    size_t V;
    double *w;          /* V: p' then the residual */
    unsigned char *inT; /* V: 1 on the k-1 fixed drafts (2 on the k-th when p(T^c) = 0) */
} S_state;

void sd_hu_greedy_free(void *state)
{
    S_state *s = state;
    if (!s)
        return;
    free(s->w);
    free(s->inT);
    free(s);
}

int sd_hu_greedy_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    *state = NULL;
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    S_state *s = calloc(1, sizeof *s);
    if (s) {
        s->V = c->V;
        s->w = malloc(c->V * sizeof *s->w);
        s->inT = malloc(c->V);
    }
    if (!s || !s->w || !s->inT) {
        sd_hu_greedy_free(s);
        return sd_error_set(err, SD_ENOMEM, "out of memory for hu-greedy (V = %zu)", c->V);
    }
    *state = s;
    return SD_OK;
}

/* Marks the k-1 most probable tokens of p in inT (ties to the lower
 * index), fills w with p off them and returns p(T^c).  When that is 0,
 * the k-th most probable token is marked 2. */
static double S_greedy(const double *p, size_t V, size_t k, unsigned char *inT, double *w)
{
    memset(inT, 0, V);
    for (size_t r = 0; r + 1 < k; r++) {
        size_t best = V;
        for (size_t y = 0; y < V; y++)
            if (!inT[y] && (best == V || p[y] > p[best]))
                best = y;
        if (best == V)
            break; /* k - 1 >= V: every token is a fixed draft */
        inT[best] = 1;
    }
    double mass = 0.0;
    for (size_t y = 0; y < V; y++) {
        w[y] = inT[y] ? 0.0 : p[y];
        mass += w[y];
    }
    if (!(mass > 0.0)) {
        size_t best = V;
        for (size_t y = 0; y < V; y++)
            if (!inT[y] && (best == V || p[y] > p[best]))
                best = y;
        if (best < V)
            inT[best] = 2;
    }
    return mass;
}

int sd_hu_greedy_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                           size_t n, size_t prev, size_t *out, sd_iter *it, int bug,
                           sd_error *err)
{
    (void)err;
    S_state *s = state;
    size_t V = c->V, G = sd_draft_len(c, par, n), y;
    const double *p = sd_chain_p(c, n, prev), *q = sd_chain_q(c, n, prev);
    it->target_calls = 1;
    it->rejected = 0;
    double mass = S_greedy(p, V, par->k, s->inT, s->w);
    int hit;
    if (!(mass > 0.0)) { /* the k most probable tokens are the drafts */
        y = sd_dist_sample(q, V, 1.0, sd_stream_uniform(rng));
        hit = s->inT[y] != 0;
    } else {
        size_t x = sd_dist_sample(s->w, V, mass, sd_stream_uniform(rng));
        /* the draft law the test uses: p' (correct) or p (the bug) */
        double px = bug == SD_HU_GREEDY_BUG_P ? p[x] : p[x] / mass;
        if (sd_stream_uniform(rng) * px < q[x]) {
            y = x;
        } else {
            double r = 0.0;
            for (size_t v = 0; v < V; v++) {
                double dv = bug == SD_HU_GREEDY_BUG_P ? p[v] : (s->inT[v] ? 0.0 : p[v] / mass);
                s->w[v] = q[v] > dv ? q[v] - dv : 0.0;
                r += s->w[v];
            }
            y = r > 0.0 ? sd_dist_sample(s->w, V, r, sd_stream_uniform(rng))
                        : sd_dist_sample(q, V, 1.0, sd_stream_uniform(rng));
        }
        hit = y == x || s->inT[y];
    }
    out[0] = y;
    if (!hit) {
        it->accepted = 0;
        it->emitted = 1;
        it->rejected = 1;
        return SD_OK;
    }
    /* the draft sequence that starts with y goes on alone, from p */
    sd_tokenwise_verify(&sd_token_rule_standard, c, rng, n, 1, G, y, out, it);
    return SD_OK;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    return sd_hu_greedy_step_mode(state, c, par, rng, n, prev, out, it, SD_HU_GREEDY_CORRECT, err);
}

/* --- the exact law ------------------------------------------------------------ */

typedef struct {
    sd_pos_law tok; /* token-level positions after the first, and the bonus */
    size_t k;
    int bug;
    double *w;
    unsigned char *inT;
} S_law_ctx;

static int S_pos_fn(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t st,
                    double *cont, double *ok, double *rej, sd_error *err)
{
    S_law_ctx *L = ctx;
    if (i != 0 || i == L->tok.G)
        return L->tok.fn(L->tok.ctx, c, t, a, i, st, cont, ok, rej, err);
    size_t V = c->V;
    const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
    double mass = S_greedy(p, V, L->k, L->inT, L->w);
    if (!(mass > 0.0)) {
        for (size_t y = 0; y < V; y++)
            (L->inT[y] ? cont : rej)[y] += q[y];
        return SD_OK;
    }
    if (L->bug != SD_HU_GREEDY_BUG_P) {
        for (size_t y = 0; y < V; y++) {
            double pp = L->w[y] / mass;
            if (L->inT[y])
                cont[y] += q[y];
            else {
                cont[y] += pp < q[y] ? pp : q[y];
                rej[y] += q[y] > pp ? q[y] - pp : 0.0;
            }
        }
        return SD_OK;
    }
    /* the bug: accepted with p'(y) min(1, q/p), rejected mass R drawn from [q - p]+ */
    double R = 1.0, tv = 0.0;
    for (size_t y = 0; y < V; y++) {
        double acc = L->w[y] > 0.0 ? L->w[y] / mass * (q[y] < p[y] ? q[y] / p[y] : 1.0) : 0.0;
        cont[y] += acc;
        R -= acc;
        tv += q[y] > p[y] ? q[y] - p[y] : 0.0;
    }
    for (size_t y = 0; y < V; y++) {
        double r = tv > 0.0 ? (q[y] > p[y] ? q[y] - p[y] : 0.0) / tv : q[y];
        (L->inT[y] ? cont : rej)[y] += R * r;
    }
    return SD_OK;
}

int sd_hu_greedy_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                          struct sd_iter_law *out, int bug, sd_error *err)
{
    size_t V = c->V, G = sd_draft_len(c, par, n);
    if (par->k < 1)
        return sd_error_set(err, SD_EUSAGE, "--k %zu: expected at least 1 draft", par->k);
    S_law_ctx L = {.k = par->k, .bug = bug};
    int rc = sd_pos_law_tokenwise(SD_LAW_STANDARD, 0.0, G, &L.tok, err);
    if (rc)
        return rc;
    L.w = malloc(V * sizeof *L.w);
    L.inT = malloc(V);
    if (!L.w || !L.inT)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
    if (!rc) {
        /* the first position: k selection passes and four passes over V */
        sd_pos_law pl = {.fn = S_pos_fn, .ctx = &L, .S = 1, .s0 = 0, .G = G, .horizon_calls = 1,
                         .call_work = (double)par->k + 8.0};
        rc = sd_iter_law_markov(&pl, c, n, prev, out, err);
    }
    free(L.w);
    free(L.inT);
    sd_pos_law_free(&L.tok);
    return rc;
}

static int S_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                 struct sd_iter_law *out, sd_error *err)
{
    return sd_hu_greedy_law_mode(c, par, n, prev, out, SD_HU_GREEDY_CORRECT, err);
}

const sd_param_decl sd_hu_greedy_params[] = {SD_PARAM_DRAFTS("k"), SD_PARAM_GAMMA, SD_PARAM_END};

const sd_verifier_type sd_verifier_hu_greedy = {
    .name = "hu-greedy",
    .summary = "greedy drafts (k-1 most probable fixed, the last sampled off them) and the verifier reaching "
               "their bound (Hu et al. 2025)",
    .params = sd_hu_greedy_params,
    .alloc = sd_hu_greedy_alloc,
    .free = sd_hu_greedy_free,
    .step = S_step,
    .iteration_law = S_law,
    .flags = SD_VERIFIER_OWN_DRAFTS, /* the k-1 most probable tokens are drafted, not sampled */
};
