/* sd_iter_laws.c — see sd_iter_laws.h.  Each position law states the
 * probability of the events of its verifier's step() in the same order of
 * random numbers; where the step guards a zero-mass residual (rounding),
 * the law follows the guard. */
#include "sd_iter_laws.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_dist.h"
#include "../../src/sd_exact_batch.h"
#include "../../src/sd_kseq.h"

static double S_min(double a, double b)
{
    return a < b ? a : b;
}

/* --- token by token --------------------------------------------------------- */

typedef struct {
    sd_law_rule rule;
    double eps;
} S_tok;

/* P(accept x) · p(x) for the rule. */
static double S_go_on(const S_tok *r, double px, double qx)
{
    switch (r->rule) {
    case SD_LAW_BIASED_OPT:
    case SD_LAW_BIASED_UNO:
        return S_min(px, qx + r->eps);
    case SD_LAW_COIN10: {
        if (!(px > 0.0))
            return 0.0;
        /* coins j/1024, j = 0..1023, accepted iff (j/1024)·px <= qx */
        double j = floor(1024.0 * qx / px);
        j = j > 1023.0 ? 1023.0 : j;
        while (j < 1023.0 && ((j + 1.0) / 1024.0) * px <= qx)
            j += 1.0;
        while (j >= 0.0 && !((j / 1024.0) * px <= qx))
            j -= 1.0;
        return px * (j + 1.0) / 1024.0;
    }
    default:
        return S_min(px, qx);
    }
}

static int S_tok_pos(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t s,
                     double *cont, double *ok, double *rej, sd_error *err)
{
    (void)i, (void)s, (void)err;
    const S_tok *r = ctx;
    size_t V = c->V;
    const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
    double tv = sd_dist_tv(p, q, V);
    double R = 0.0;
    for (size_t x = 0; x < V; x++) {
        cont[x] = S_go_on(r, p[x], q[x]);
        R += p[x] - cont[x];
    }
    R = R > 0.0 ? R : 0.0;
    /* the residual the rule samples, and its mass (0: the draft is kept) */
    double mass;
    switch (r->rule) {
    case SD_LAW_BIASED_UNO:
        mass = 1.0;
        break;
    case SD_LAW_COIN10:
        mass = 1.0;
        break;
    default:
        mass = tv;
    }
    if (!(mass > 0.0)) {
        for (size_t x = 0; x < V; x++)
            cont[x] = p[x];
        return SD_OK;
    }
    for (size_t y = 0; y < V; y++) {
        double d = q[y] > p[y] ? q[y] - p[y] : 0.0;
        switch (r->rule) {
        case SD_LAW_BIASED_UNO:
            rej[y] = R * q[y];
            break;
        case SD_LAW_COIN10:
            rej[y] = R * (tv > 0.0 ? d / tv : q[y]);
            break;
        case SD_LAW_KERNEL_Q:
            rej[y] = tv * q[y];
            break;
        default:
            rej[y] = R * d / tv;
        }
    }
    (void)ok;
    return SD_OK;
}

/* Bonus tokens: q, or for the broken kernel min(p,q) + TV·q. */
static void S_bonus_q(const sd_chain *c, size_t t, size_t a, int broken, double *ok)
{
    const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
    double tv = broken ? sd_dist_tv(p, q, c->V) : 0.0;
    for (size_t y = 0; y < c->V; y++)
        ok[y] = broken ? S_min(p[y], q[y]) + tv * q[y] : q[y];
}

typedef struct {
    S_tok tok;
    size_t G;
} S_tokctx;

static int S_tok_fn(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t s,
                    double *cont, double *ok, double *rej, sd_error *err)
{
    S_tokctx *x = ctx;
    if (i == x->G) {
        S_bonus_q(c, t, a, x->tok.rule == SD_LAW_KERNEL_Q, ok);
        return SD_OK;
    }
    return S_tok_pos(&x->tok, c, t, a, i, s, cont, ok, rej, err);
}

int sd_pos_law_tokenwise(sd_law_rule rule, double eps, size_t G, sd_pos_law *out, sd_error *err)
{
    S_tokctx *x = malloc(sizeof *x);
    if (!x)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    *x = (S_tokctx){{rule, eps}, G};
    /* S_tok_pos: TV (V), the go-on weights (V; the 10-bit coin's search a
     * few steps more) and the residual (V); the bonus reads q (V) */
    *out = (sd_pos_law){S_tok_fn, x, 1, 0, G, 1, rule == SD_LAW_COIN10 ? 8.0 : 5.0, NULL};
    return SD_OK;
}

int sd_pos_law_iteration(int rc, sd_pos_law *pl, const sd_chain *c, size_t n, size_t prev,
                         sd_iter_law *law, sd_error *err)
{
    if (!rc)
        rc = sd_iter_law_markov(pl, c, n, prev, law, err);
    sd_pos_law_free(pl);
    return rc;
}

int sd_law_tokenwise(sd_law_rule rule, double eps, const sd_chain *c, size_t G, size_t n,
                     size_t prev, sd_iter_law *law, sd_error *err)
{
    sd_pos_law pl = {0};
    return sd_pos_law_iteration(sd_pos_law_tokenwise(rule, eps, G, &pl, err), &pl, c, n, prev, law, err);
}

/* --- batch ------------------------------------------------------------------- */

typedef struct {
    S_tokctx std;
    size_t M;
    int extra;
    double *u;
} S_batch;

static int S_batch_fn(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t s,
                      double *cont, double *ok, double *rej, sd_error *err)
{
    S_batch *b = ctx;
    if (i != 0 || i == b->std.G)
        return S_tok_fn(&b->std, c, t, a, i, s, cont, ok, rej, err);
    size_t V = c->V;
    const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
    double R = sd_exact_batch_row(p, q, V, b->M, b->u);
    for (size_t y = 0; y < V; y++) {
        double d = q[y] - b->u[y];
        cont[y] = d > 0.0 ? d : 0.0;
    }
    double mass = 0.0;
    if (b->extra && R > 0.0)
        for (size_t y = 0; y < V; y++) {
            double d = b->u[y] / R - p[y];
            mass += d > 0.0 ? d : 0.0;
        }
    for (size_t y = 0; y < V; y++) {
        double d = R > 0.0 ? b->u[y] / R - p[y] : 0.0;
        rej[y] = mass > 0.0 ? R * (d > 0.0 ? d : 0.0) / mass : b->u[y];
    }
    return SD_OK;
}

int sd_pos_law_batch(size_t V, size_t G, size_t M, int extra_step, sd_pos_law *out, sd_error *err)
{
    /* the context and its scratch u[V] in one allocation (sd_pos_law_free) */
    S_batch *b = malloc(sizeof *b + V * sizeof(double));
    if (!b)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    *b = (S_batch){{{SD_LAW_STANDARD, 0.0}, G}, M, extra_step, (double *)(void *)(b + 1)};
    /* the first position: sd_exact_batch_row (copy V, M rounds of V) and
     * three passes over V; later ones token-level (5V) */
    *out = (sd_pos_law){S_batch_fn, b, 1, 0, G, 1, (double)M + 5.0, NULL};
    return SD_OK;
}

int sd_law_batch(const sd_chain *c, size_t G, size_t M, int extra_step, size_t n, size_t prev,
                 sd_iter_law *law, sd_error *err)
{
    sd_pos_law pl = {0};
    return sd_pos_law_iteration(sd_pos_law_batch(c->V, G, M, extra_step, &pl, err), &pl, c, n, prev, law, err);
}

/* --- SPRINTER ------------------------------------------------------------------ */

typedef struct {
    double tp, fp;
} S_spr;

static int S_spr_fn(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t s,
                    double *cont, double *ok, double *rej, sd_error *err)
{
    (void)i, (void)s, (void)err;
    const S_spr *r = ctx;
    size_t V = c->V;
    const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
    double tv = sd_dist_tv(p, q, V), R = 0.0;
    for (size_t x = 0; x < V; x++) {
        double yes = p[x] <= q[x] ? r->tp : r->fp, no = p[x] * (1.0 - yes);
        double keep = tv > 0.0 ? S_min(no, (1.0 - yes) * q[x]) : no;
        cont[x] = p[x] * yes;
        ok[x] = keep;
        R += no - keep;
    }
    for (size_t y = 0; y < V && tv > 0.0; y++)
        rej[y] = q[y] > p[y] ? R * (q[y] - p[y]) / tv : 0.0;
    return SD_OK;
}

int sd_pos_law_sprinter(double tp, double fp, size_t G, sd_pos_law *out, sd_error *err)
{
    S_spr *r = malloc(sizeof *r);
    if (!r)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    *r = (S_spr){tp, fp};
    /* TV and two passes over V */
    *out = (sd_pos_law){S_spr_fn, r, 1, 0, G, 0, 4.0, NULL};
    return SD_OK;
}

int sd_law_sprinter(const sd_chain *c, double tp, double fp, size_t n, size_t prev,
                    sd_iter_law *law, sd_error *err)
{
    sd_pos_law pl = {0};
    return sd_pos_law_iteration(sd_pos_law_sprinter(tp, fp, sd_draft_len_at(0, c->T, n), &pl, err), &pl, c, n, prev, law, err);
}

/* --- the draft tree (rrs, SpecTr) -------------------------------------------------
 *
 * With a surviving drafts X_1..X_a ~ p i.i.d. tried in turn, the selection
 * returns y accepted at round m with probability P(m, y), or, all failing,
 * y from a residual.  The drafts that go on are those equal to y: the
 * accepted one, the untried ones equal to y (Bin(a-m, p(y))) and, for
 * k-Seq, the rejected ones equal to y (Bin(m-1, π_y), π_y the law of a
 * rejected draft at y); for RRS a rejected draft never equals a later
 * accepted or residual y (q^{m+1}(y) = 0 once y was rejected against q^m).
 *   RRS:   P(m, y) = min(s_m p(y), u_m(y)),  u_m = s_m q^m, s_m = Π_{j<m} r_j;
 *   k-Seq: P(m, y) = (1-β)^{m-1} min(p(y), q(y)/ρ), ρ = ρ*(a) (eq. 6). */

typedef struct {
    size_t G, k;
    int kseq;
    double *w, *b1, *b2; /* [V], [k+1], [k+1] */
} S_tree;

static void S_binom(size_t nn, double pr, double *out)
{
    for (size_t j = 0; j <= nn; j++)
        out[j] = gsl_ran_binomial_pdf((unsigned)j, pr < 0.0 ? 0.0 : (pr > 1.0 ? 1.0 : pr), (unsigned)nn);
}

/* cont[(agree-1)·V + y] += mass · P(agree - 1 = B1 + B2), B1 ~ Bin(n1, p1),
 * B2 ~ Bin(n2, p2); agree = 0 (only when base = 0) goes to rej. */
static void S_spread(S_tree *tr, size_t V, size_t y, double mass, size_t base, size_t n1, double p1,
                     size_t n2, double p2, double *cont, double *rej)
{
    S_binom(n1, p1, tr->b1);
    S_binom(n2, p2, tr->b2);
    for (size_t j1 = 0; j1 <= n1; j1++)
        for (size_t j2 = 0; j2 <= n2; j2++) {
            double x = mass * tr->b1[j1] * tr->b2[j2];
            size_t agree = base + j1 + j2;
            if (agree == 0)
                rej[y] += x;
            else
                cont[(agree - 1) * V + y] += x;
        }
}

static int S_tree_fn(void *ctx, const sd_chain *c, size_t t, size_t a0, size_t i, size_t s,
                     double *cont, double *ok, double *rej, sd_error *err)
{
    S_tree *tr = ctx;
    if (i == tr->G) {
        S_bonus_q(c, t, a0, 0, ok);
        return SD_OK;
    }
    size_t V = c->V, a = s + 1;
    const double *p = sd_chain_p(c, t, a0), *q = sd_chain_q(c, t, a0);
    if (!tr->kseq) {
        double sm = 1.0;
        memcpy(tr->w, q, V * sizeof *tr->w);
        for (size_t m = 1; m <= a; m++) {
            for (size_t y = 0; y < V; y++) {
                double x = sm * S_min(p[y], tr->w[y]);
                if (x > 0.0)
                    S_spread(tr, V, y, x, 1, 0, 0.0, a - m, p[y], cont, rej);
            }
            double r = sd_dist_residual(p, tr->w, V, tr->w);
            if (!(r > 0.0))
                return SD_OK; /* rejections have probability 0 */
            sm *= r;
        }
        for (size_t y = 0; y < V; y++)
            rej[y] += sm * tr->w[y];
        return SD_OK;
    }
    double rho, beta;
    int rc = sd_kseq_solve(p, q, V, a, &rho, &beta, err);
    if (rc)
        return rc;
    double f = 1.0 - beta, reach = 1.0;
    for (size_t m = 1; m <= a; m++) {
        for (size_t y = 0; y < V; y++) {
            double acc = S_min(p[y], q[y] / rho);
            double pi = f > 0.0 ? (p[y] - acc) / f : 0.0;
            if (reach * acc > 0.0)
                S_spread(tr, V, y, reach * acc, 1, m - 1, pi, a - m, p[y], cont, rej);
        }
        reach *= f;
    }
    if (!(reach > 0.0))
        return SD_OK;
    double mass = sd_kseq_residual(p, q, V, a, rho, beta, tr->w);
    for (size_t y = 0; y < V; y++) {
        double r = mass > 0.0 ? tr->w[y] / mass : q[y];
        double acc = S_min(p[y], q[y] / rho);
        double pi = f > 0.0 ? (p[y] - acc) / f : 0.0;
        if (reach * r > 0.0)
            S_spread(tr, V, y, reach * r, 0, a, pi, 0, 0.0, cont, rej);
    }
    return SD_OK;
}

int sd_pos_law_tree(size_t V, size_t G, size_t k, int kseq, sd_pos_law *out, sd_error *err)
{
    if (k < 1 || k > ((size_t)1 << 12))
        return sd_error_set(err, SD_ETOOBIG, "the exact law of a %zu-draft tree is limited to "
                                             "1..4096 drafts", k);
    /* the context and its scratch w[V], b1[k+1], b2[k+1] in one allocation */
    S_tree *tr = malloc(sizeof *tr + (V + 2 * (k + 1)) * sizeof(double));
    if (!tr)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    double *w = (double *)(void *)(tr + 1);
    *tr = (S_tree){G, k, kseq, w, w + V, w + V + k + 1};
    /* S_tree_fn with a <= k surviving drafts, per token:
     *   RRS:   the copy of q, then per round m <= k a spread (1 + a-m+1 <=
     *          k+1 binomial pdfs and as many terms, 4 more steps) and the
     *          residual: k·((k+1)·PDF + k + 5) + 2;
     *   k-Seq: Brent's method for rho* (at most 202 evaluations of beta,
     *          2 steps per token, and beta(1)), then k rounds and the
     *          residual, each a spread of a+1 <= k+1 pdfs and at most
     *          (k+1)² terms: 406 + (k+1)·((k+1)·PDF + (k+1)² + 8). */
    double kk = (double)k;
    double call = kseq ? 406.0 + (kk + 1.0) * ((kk + 1.0) * SD_WORK_PDF + (kk + 1.0) * (kk + 1.0) + 8.0)
                       : kk * ((kk + 1.0) * SD_WORK_PDF + kk + 5.0) + 2.0;
    *out = (sd_pos_law){S_tree_fn, tr, k, k - 1, G, 1, call, NULL};
    return SD_OK;
}

int sd_law_tree(const sd_chain *c, size_t G, size_t k, int kseq, size_t n, size_t prev,
                sd_iter_law *law, sd_error *err)
{
    sd_pos_law pl = {0};
    return sd_pos_law_iteration(sd_pos_law_tree(c->V, G, k, kseq, &pl, err), &pl, c, n, prev, law, err);
}

/* --- a draft tree by its selection's joint law (sd_pos_law_select) ------------- */

typedef struct {
    size_t G, k;
    sd_select_law_fn fn;
    void *ctx;
    double *J; /* [(k+1)·V] */
} S_sel;

static int S_sel_fn(void *ctx, const sd_chain *c, size_t t, size_t a0, size_t i, size_t s,
                    double *cont, double *ok, double *rej, sd_error *err)
{
    S_sel *sl = ctx;
    if (i == sl->G) {
        S_bonus_q(c, t, a0, 0, ok);
        return SD_OK;
    }
    size_t V = c->V, a = s + 1;
    memset(sl->J, 0, (a + 1) * V * sizeof *sl->J);
    int rc = sl->fn(sl->ctx, sd_chain_p(c, t, a0), sd_chain_q(c, t, a0), V, a, sl->J, err);
    if (rc)
        return rc;
    for (size_t y = 0; y < V; y++)
        rej[y] += sl->J[y];
    for (size_t j = 1; j <= a; j++)
        for (size_t y = 0; y < V; y++)
            cont[(j - 1) * V + y] += sl->J[j * V + y];
    return SD_OK;
}

int sd_pos_law_select(size_t V, size_t G, size_t k, sd_select_law_fn fn, void *ctx,
                      double call_work, sd_pos_law *out, sd_error *err)
{
    if (k < 1 || k > ((size_t)1 << 12))
        return sd_error_set(err, SD_ETOOBIG, "the exact law of a %zu-draft tree is limited to "
                                             "1..4096 drafts", k);
    S_sel *sl = malloc(sizeof *sl + (k + 1) * V * sizeof(double));
    if (!sl)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    *sl = (S_sel){G, k, fn, ctx, (double *)(void *)(sl + 1)};
    /* fn, then (k+1) passes over V to clear and to spread J */
    *out = (sd_pos_law){.fn = S_sel_fn, .ctx = sl, .S = k, .s0 = k - 1, .G = G, .horizon_calls = 1,
                        .call_work = call_work + 2.0 * ((double)k + 1.0)};
    return SD_OK;
}

int sd_select_law_independent(void *ctx, const double *p, const double *q, size_t V, size_t a,
                              double *J, sd_error *err)
{
    (void)ctx, (void)err;
    for (size_t y = 0; y < V; y++) {
        if (!(q[y] > 0.0))
            continue;
        double pr = p[y] < 0.0 ? 0.0 : (p[y] > 1.0 ? 1.0 : p[y]);
        for (size_t j = 0; j <= a; j++)
            J[j * V + y] += q[y] * gsl_ran_binomial_pdf((unsigned)j, pr, (unsigned)a);
    }
    return SD_OK;
}

void sd_law_binomial(size_t n, double pr, double *out)
{
    S_binom(n, pr, out);
}

/* --- block verification ------------------------------------------------------------
 *
 * With h_i the acceptance of position i of the block (sims/verifiers/block.c) and
 * independent coins, τ = max{i : η_i < h_i}, so
 *   P(τ = i, X^i = x^i) = p(x^i) h_i(x^i) S(x^i),   P(τ = 0) = S(∅),
 *   S(x^i) = E[Π_{j>i} (1 - h_j) | X^i = x^i]
 *          = Σ_x p(x|x^i) (1 - h_{i+1}(x^i x)) S(x^i x),   S(x^G) = 1,
 * and S = 1 below a node where p_i = 0 (nothing later is accepted). */

typedef struct {
    const sd_chain *c;
    size_t n, G, V;
    sd_block_residual kind;
    sd_iter_law *law;
    size_t *buf;
    double *w; /* [G+1][V] residual scratch per depth */
    const sd_draft_policy *pol; /* the draft-length policy: a node where it stops is a leaf */
} S_blk;

/* The rejection at depth i (after x^i, last token a, p_i = pi), mass x. */
static int S_blk_reject(S_blk *b, size_t i, size_t a, double pi, double x, sd_error *err)
{
    size_t V = b->V, t = b->n + i;
    const double *p = sd_chain_p(b->c, t, a), *q = sd_chain_q(b->c, t, a);
    double *w = b->w + i * V, m = 0.0;
    double f = b->kind == SD_BLOCK_RESIDUAL_TOKENWISE ? 1.0 : pi;
    for (size_t y = 0; y < V; y++) {
        double d = f * q[y] - p[y];
        w[y] = d > 0.0 ? d : 0.0;
        m += w[y];
    }
    int rc = SD_OK;
    for (size_t y = 0; y < V && !rc; y++) {
        b->buf[i] = y;
        rc = sd_iter_law_add(b->law, x * (m > 0.0 ? w[y] / m : q[y]), b->buf, i + 1, y, 1, 1, err);
    }
    return rc;
}

/* Node x^i (last token a = x_i, or prev at the root i = 0; p_i = pi; its
 * probability px): emits the outcomes with τ = i and, recursively, τ > i
 * in its subtree, and returns h_i and S(x^i). */
static int S_blk_node(S_blk *b, size_t i, size_t a, double pi, double A, double px, double *h_out,
                      double *S_out, sd_error *err)
{
    size_t V = b->V, G = b->G;
    double h = 0.0, Sx = 1.0;
    int rc = SD_OK;
    /* the draft ends here: the cap, or (after a first token) the policy,
     * read with the acceptance product A = Π min(1, q/p) of x^i */
    if (i > 0 && i < G && !sd_draft_policy_continue(b->pol, A, sd_chain_p(b->c, b->n + i, a), V))
        G = i;
    if (i == G) {
        h = pi;
    } else if (pi > 0.0) {
        size_t t = b->n + i; /* the next position */
        const double *p = sd_chain_p(b->c, t, a), *q = sd_chain_q(b->c, t, a);
        if (i > 0) {
            double m = 0.0;
            for (size_t x = 0; x < V; x++) {
                double d = pi * q[x] - p[x];
                m += d > 0.0 ? d : 0.0;
            }
            h = m > 0.0 ? m / (m + (1.0 - pi)) : 0.0; /* eq. 5 */
        }
        Sx = 0.0;
        for (size_t x = 0; x < V && !rc; x++) {
            if (!(p[x] > 0.0))
                continue;
            double num = pi * q[x], pi2 = num >= p[x] ? 1.0 : num / p[x], hc = 0.0, Sc = 1.0;
            b->buf[i] = x;
            rc = S_blk_node(b, i + 1, x, pi2, A * sd_draft_accept_prob(p[x], q[x]), px * p[x], &hc, &Sc, err);
            Sx += p[x] * (1.0 - hc) * Sc;
        }
    }
    if (rc)
        return rc;
    *h_out = h;
    *S_out = Sx;
    if (i == 0)
        return S_blk_reject(b, 0, a, 1.0, Sx, err);
    double x = px * h * Sx;
    if (!(x > 0.0))
        return SD_OK;
    if (i < G)
        return S_blk_reject(b, i, a, pi, x, err);
    if (b->n + G > b->c->T)
        return sd_iter_law_add(b->law, x, b->buf, G, a, 0, 1, err);
    const double *q = sd_chain_q(b->c, b->n + G, a);
    for (size_t y = 0; y < V && !rc; y++) {
        b->buf[G] = y;
        rc = sd_iter_law_add(b->law, x * q[y], b->buf, G + 1, y, 0, 1, err);
    }
    return rc;
}

int sd_law_block(const sd_chain *c, size_t G, sd_block_residual kind, size_t n, size_t prev,
                 sd_iter_law *law, sd_error *err)
{
    sd_draft_policy fixed = {SD_DRAFT_FIXED, 0.0};
    return sd_law_block_policy(c, G, &fixed, kind, n, prev, law, err);
}

int sd_law_block_policy(const sd_chain *c, size_t G, const sd_draft_policy *pol, sd_block_residual kind,
                        size_t n, size_t prev, sd_iter_law *law, sd_error *err)
{
    double blocks = pow((double)c->V, (double)G);
    if (blocks > (double)SD_ITER_LAW_MAX)
        return sd_error_set(err, SD_ETOOBIG,
                            "block verification: the exact law of one iteration enumerates V^gamma "
                            "= %zu^%zu draft blocks, over the limit %zu (give a smaller --gamma)",
                            c->V, G, SD_ITER_LAW_MAX);
    if (law->work_query) {
        /* S_blk_node visits at most Σ_{i<=G} V^i nodes; each does at most
         * 4V steps (eq. 5's mass, its children, the residual's two passes)
         * and adds V outcomes (its rejections, or the bonus at depth G). */
        double v = (double)c->V, nodes = 0.0, level = 1.0;
        for (size_t i = 0; i <= G; i++, level *= v)
            nodes += level;
        law->work = nodes * v * (4.0 + SD_WORK_OUTCOME);
        return SD_OK;
    }
    S_blk b = {c, n, G, c->V, kind, law, malloc((G + 1) * sizeof(size_t)),
               malloc((G + 1) * c->V * sizeof(double)), pol};
    int rc;
    double h, S;
    if (!b.buf || !b.w)
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
    else
        rc = S_blk_node(&b, 0, prev, 1.0, 1.0, 1.0, &h, &S, err);
    free(b.buf);
    free(b.w);
    return rc;
}

/* --- the broken kernels' tables ----------------------------------------------------
 *
 * The inner position law with every rejection's token redrawn from the
 * target: end_rej(y) = R·q_t(y|a), R = Σ_y of the inner end_rej (the
 * rejection probability is kept, the residual replaced by q).  A token then
 * has law Σ accepted + R·q ≠ q wherever R > 0 and the residual is not q. */

typedef struct {
    sd_pos_law inner;
} S_broken;

static int S_broken_fn(void *ctx, const sd_chain *c, size_t t, size_t a, size_t i, size_t s,
                       double *cont, double *ok, double *rej, sd_error *err)
{
    const S_broken *b = ctx;
    int rc = b->inner.fn(b->inner.ctx, c, t, a, i, s, cont, ok, rej, err);
    if (rc)
        return rc;
    const double *q = sd_chain_q(c, t, a);
    double R = 0.0;
    for (size_t y = 0; y < c->V; y++)
        R += rej[y];
    for (size_t y = 0; y < c->V; y++)
        rej[y] = R * q[y];
    return SD_OK;
}

int sd_pos_law_broken_q(sd_pos_law *pl, sd_error *err)
{
    S_broken *b = malloc(sizeof *b);
    if (!b) {
        sd_pos_law_free(pl);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    b->inner = *pl;
    pl->fn = S_broken_fn;
    pl->ctx = b;
    /* the inner call, then R and the redrawn residual (2V) */
    pl->call_work = (pl->call_work > 0.0 ? pl->call_work : 4.0) + 2.0;
    return SD_OK;
}

void sd_pos_law_free(sd_pos_law *pl)
{
    if (!pl)
        return;
    if (pl->fn == S_broken_fn && pl->ctx)
        sd_pos_law_free(&((S_broken *)pl->ctx)->inner);
    if (pl->free_ctx)
        pl->free_ctx(pl->ctx);
    else
        free(pl->ctx);
    pl->ctx = NULL;
}
