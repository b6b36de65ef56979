/* test_trace.c — `simdec trace`: the laws given a logged output
 * (sims/exact/sd_trace_laws.h) against the verifiers' exact iteration
 * laws, pooled trace estimates against the exact values of a generation,
 * ratios against rows, the broken control, and the .npy reader. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_trace.h"
#include "../sims/exact/sd_trace_laws.h"
#include "../sims/verifiers/sd_tree.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_model.h"
#include "../src/sd_npy.h"
#include "test_util.h"
#include "tu_trace.h"

extern const sd_verifier_type sd_verifier_broken_block_trace;

/* A verifier at gamma, k (0: default) and tree shape (NULL: default). */
static sd_trace_point S_point(const char *algo, size_t gamma, size_t k, const char *tree)
{
    sd_trace_point pt = {0};
    pt.vt = strcmp(algo, "broken-block-trace") ? sd_verifier_find(algo) : &sd_verifier_broken_block_trace;
    cr_assert(pt.vt, "%s", algo);
    sd_params_defaults(&pt.par, pt.vt);
    sd_error err = {0};
    char buf[32];
    if (gamma) {
        snprintf(buf, sizeof buf, "%zu", gamma);
        cr_assert_eq(sd_params_parse(&pt.par, pt.vt, "gamma", buf, &err), SD_OK, "%s", err.msg);
    }
    if (k) {
        snprintf(buf, sizeof buf, "%zu", k);
        const char *name = sd_params_decl(pt.vt, "k", NULL) ? "k" : "M";
        cr_assert_eq(sd_params_parse(&pt.par, pt.vt, name, buf, &err), SD_OK, "%s", err.msg);
    }
    if (tree)
        cr_assert_eq(sd_params_parse(&pt.par, pt.vt, "tree", tree, &err), SD_OK, "%s", err.msg);
    return pt;
}

/* --- the law given the output, by enumeration -------------------------------------- */

typedef struct {
    const sd_trace_point *pt;
    const sd_chain *c;
    double *P, *R, *C; /* by path x_0..x_T */
    size_t path[16];
} S_enum;

static size_t S_code(const S_enum *e)
{
    size_t idx = 0;
    for (size_t t = 0; t <= e->c->T; t++)
        idx = idx * e->c->V + e->path[t];
    return idx;
}

/* Every sequence of iterations from position n on (x_0..x_{n-1} in path). */
static void S_walk(S_enum *e, size_t n, double prob, double rej, double calls)
{
    const sd_chain *c = e->c;
    if (n > c->T) {
        size_t i = S_code(e);
        e->P[i] += prob;
        e->R[i] += prob * rej;
        e->C[i] += prob * calls;
        return;
    }
    sd_iter_law law = {.keep = c->T - n + 1};
    sd_error err = {0};
    cr_assert_eq(e->pt->vt->iteration_law(c, &e->pt->par, n, e->path[n - 1], &law, &err), SD_OK, "%s", err.msg);
    for (size_t j = 0; j < law.n; j++) {
        const sd_iter_outcome *o = &law.o[j];
        if (!(o->prob > 0.0))
            continue;
        for (size_t l = 0; l < o->emitted; l++)
            e->path[n + l] = law.tokens[o->tok + l];
        S_walk(e, n + o->emitted, prob * o->prob, rej + o->rejected, calls + o->target_calls);
    }
    sd_iter_law_free(&law);
}

/* For every output path: P(path) is the target's, and E[N_rej | path],
 * E[calls | path] of the trace law equal those of the iteration law. */
static void S_check_given_output(const sd_chain *c, const sd_trace_point *pt)
{
    size_t V = c->V, T = c->T, cells = 1;
    for (size_t t = 0; t <= T; t++)
        cells *= V;
    S_enum e = {.pt = pt, .c = c};
    e.P = calloc(3 * cells, sizeof(double));
    e.R = e.P + cells;
    e.C = e.R + cells;
    for (size_t a = 0; a < V; a++) {
        if (!(c->init[a] > 0.0))
            continue;
        e.path[0] = a;
        S_walk(&e, 1, c->init[a], 0.0, 0.0);
    }
    double *p = malloc(2 * T * V * sizeof(double)), *q = p + T * V;
    size_t x[16], checked = 0;
    for (size_t idx = 0; idx < cells; idx++) {
        size_t rest = idx, path[16];
        for (size_t t = T + 1; t-- > 0;) {
            path[t] = rest % V;
            rest /= V;
        }
        double target = c->init[path[0]];
        for (size_t t = 1; t <= T; t++)
            target *= sd_chain_q(c, t, path[t - 1])[path[t]];
        cr_assert(fabs(e.P[idx] - target) < 1e-12, "%s: P(path %zu) = %.17g, the target's %.17g", pt->vt->name, idx,
                  e.P[idx], target);
        if (!(target > 0.0))
            continue;
        for (size_t t = 1; t <= T; t++) {
            memcpy(p + (t - 1) * V, sd_chain_p(c, t, path[t - 1]), V * sizeof(double));
            memcpy(q + (t - 1) * V, sd_chain_q(c, t, path[t - 1]), V * sizeof(double));
            x[t - 1] = path[t];
        }
        double R, C;
        sd_error err = {0};
        cr_assert_eq(sd_trace_sequence(pt, T, V, x, p, q, NULL, &R, &C, NULL, NULL, &err), SD_OK, "%s: %s",
                     pt->vt->name, err.msg);
        double R0 = e.R[idx] / e.P[idx], C0 = e.C[idx] / e.P[idx];
        cr_assert(fabs(R - R0) < 1e-9 && fabs(C - C0) < 1e-9,
                  "%s (gamma %zu, k %zu): path %zu: trace gives E[rej|x] = %.15g, E[calls|x] = %.15g; the "
                  "iteration law %.15g, %.15g", pt->vt->name, pt->par.gamma, pt->par.k, idx, R, C, R0, C0);
        checked++;
    }
    cr_assert(checked > 10);
    free(p);
    free(e.P);
}

static const struct {
    const char *algo;
    size_t gamma, k;
    const char *tree;
} S_cases[] = {
    {"token", 1, 0, NULL},   {"token", 2, 0, NULL},    {"token", 0, 0, NULL},    {"block", 1, 0, NULL},
    {"block", 2, 0, NULL},   {"block", 3, 0, NULL},    {"block", 0, 0, NULL},    {"rrs", 1, 2, NULL},
    {"rrs", 2, 2, NULL},     {"rrs", 3, 3, NULL},      {"spectr", 1, 2, NULL},   {"spectr", 2, 3, NULL},
    {"spectr", 0, 2, NULL},  {"batch", 2, 2, NULL},    {"batch", 3, 3, NULL},    {"tree-rrs", 0, 0, "2,2"},
    {"tree-rrs", 0, 0, "3,1,2"}, {"tree-rrs-wor", 0, 0, "2,2"}, {"tree-rrs-wor", 0, 0, "3,1"},
    {"tree-rrs-wor", 0, 0, "4"}, {"tree-topk", 0, 0, "2,1"},
};

Test(trace, law_given_output_equals_the_iteration_law_by_enumeration, .timeout = 120)
{
    sd_chain *cz = tu_zero_chain(3, 4, 5);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    sd_chain *cr = tu_random_chain(r, 3, 4, 1.0, 0.3);
    cr_assert(cz && cr);
    for (size_t i = 0; i < sizeof S_cases / sizeof *S_cases; i++) {
        sd_trace_point pt = S_point(S_cases[i].algo, S_cases[i].gamma, S_cases[i].k, S_cases[i].tree);
        S_check_given_output(cz, &pt);
        S_check_given_output(cr, &pt);
    }
    sd_chain_free(cz);
    sd_chain_free(cr);
    gsl_rng_free(r);
}

/* The broken control's law given the output is not block's. */
Test(trace, broken_block_trace_is_caught_by_enumeration)
{
    sd_chain *c = tu_zero_chain(3, 4, 5);
    sd_trace_point pt = S_point("broken-block-trace", 3, 0, NULL);
    size_t V = 3, T = 4, cells = 243;
    S_enum e = {.pt = &pt, .c = c};
    e.P = calloc(3 * cells, sizeof(double));
    e.R = e.P + cells;
    e.C = e.R + cells;
    for (size_t a = 0; a < V; a++) {
        e.path[0] = a;
        S_walk(&e, 1, c->init[a], 0.0, 0.0);
    }
    double worst = 0.0, p[12], q[12];
    for (size_t idx = 0; idx < cells; idx++) {
        if (!(e.P[idx] > 0.0))
            continue;
        size_t path[5], x[4], rest = idx;
        for (size_t t = T + 1; t-- > 0;) {
            path[t] = rest % V;
            rest /= V;
        }
        for (size_t t = 1; t <= T; t++) {
            memcpy(p + (t - 1) * V, sd_chain_p(c, t, path[t - 1]), V * sizeof(double));
            memcpy(q + (t - 1) * V, sd_chain_q(c, t, path[t - 1]), V * sizeof(double));
            x[t - 1] = path[t];
        }
        double R, C;
        cr_assert_eq(sd_trace_sequence(&pt, T, V, x, p, q, NULL, &R, &C, NULL, NULL, NULL), SD_OK);
        double d = fabs(R - e.R[idx] / e.P[idx]);
        worst = d > worst ? d : worst;
    }
    cr_assert(worst > 1e-3, "broken-block-trace agrees with block's law given the output (%g)", worst);
    free(e.P);
    sd_chain_free(c);
}

/* --- recursive rejection sampling without replacement, given the output ------------- */

typedef struct {
    sd_tree *tr;
    const sd_chain *view;
    const sd_tree_kind *k;
    size_t V;
    double *w;  /* [nodes][V] draft laws */
    double *acc; /* [V]: Σ P(children) Σ_{j: c_j = y} pi(j), by y */
} S_wor_enum;

/* Every way of drafting the children u.. of the one-level tree, as the
 * verifier drafts them (sd_tree_draft_law), verified by sd_tree_outcome. */
static void S_wor_visit(S_wor_enum *e, size_t u, double prob)
{
    sd_tree *tr = e->tr;
    if (u == tr->nodes) {
        sd_tree_outcome(tr, e->view, e->k, SD_DRAW_WOR);
        for (size_t v = 1; v < tr->nodes; v++)
            if (tr->tok[v] != SD_TREE_NONE)
                e->acc[tr->tok[v]] += prob * tr->pi[v];
        return;
    }
    double *w = e->w + u * e->V;
    if (sd_tree_draft_law(tr, e->view, u, SD_DRAW_WOR, w) <= 0.0) {
        tr->tok[u] = SD_TREE_NONE;
        S_wor_visit(e, u + 1, prob);
        return;
    }
    for (size_t x = 0; x < e->V; x++)
        if (w[x] > 0.0) {
            tr->tok[u] = x;
            S_wor_visit(e, u + 1, prob * w[x]);
        }
}

/* A row on V tokens with about a fraction zf of zeros (never all zero). */
static void S_row(gsl_rng *r, double *row, size_t V, double zf)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++) {
        row[x] = gsl_rng_uniform(r) < zf ? 0.0 : -log(gsl_rng_uniform_pos(r));
        s += row[x];
    }
    if (!(s > 0.0)) {
        row[gsl_rng_uniform_int(r, V)] = 1.0;
        s = 1.0;
    }
    for (size_t x = 0; x < V; x++)
        row[x] /= s;
}

/* The closed form against the enumeration of the V^b ordered children,
 * for every output token, on rows with zeros (p's support smaller than
 * b, q = p, disjoint supports among them) and with tied draft
 * probabilities (the grouping of the first children at b = 3). */
/* Row pair `rep` of the wor checks: 0, 1 without zeros; 3 q = p (every
 * child accepted when drafted); 5 p on one token; 6, 7 tied draft
 * probabilities (weights 0, 1, 2), as an n-gram model's; the others with
 * zeros. */
static void S_wor_case(gsl_rng *r, double *p, double *q, size_t V, int rep)
{
    double zf = rep < 2 ? 0.0 : 0.4;
    S_row(r, p, V, zf);
    if (rep == 3)
        memcpy(q, p, V * sizeof *p);
    else
        S_row(r, q, V, zf);
    if (rep == 5) {
        memset(p, 0, V * sizeof *p);
        p[gsl_rng_uniform_int(r, V)] = 1.0;
    }
    if (rep >= 6) {
        double t = 0.0;
        for (size_t x = 0; x < V; x++)
            t += p[x] = (double)gsl_rng_uniform_int(r, rep == 6 ? 2 : 3);
        if (!(t > 0.0))
            t += p[0] = 1.0;
        for (size_t x = 0; x < V; x++)
            p[x] /= t;
    }
}

/* acc[y] = Σ_children P(children) P(y accepted as a child) at one node of b
 * children (V <= 8, b <= 4), by enumerating the drafted children. */
static void S_wor_exact(const sd_verifier_type *vt, double *p, double *q, size_t V, size_t b, double *acc)
{
    double w[8 * 5];
    sd_params par;
    sd_params_defaults(&par, vt);
    par.tree[0] = b;
    par.tree_depth = 1;
    sd_tree *tr;
    sd_error err = {0};
    cr_assert_eq(sd_tree_new(&tr, V, &par, &err), SD_OK, "%s", err.msg);
    sd_tree_cut(tr, 1, 1, 0);
    sd_chain view = {.V = V, .T = 1, .draft_steps = 1, .target_steps = 1, .draft = p, .target = q};
    memset(acc, 0, V * sizeof *acc);
    S_wor_enum e = {tr, &view, vt->tree, V, w, acc};
    S_wor_visit(&e, 1, 1.0);
    sd_tree_free(tr);
}

Test(trace, wor_closed_form_equals_the_enumeration_of_the_children, .timeout = 120)
{
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs-wor");
    cr_assert(vt && vt->tree);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 61);
    size_t checked = 0, nonzero = 0;
    double worst = 0.0;
    for (size_t V = 2; V <= 8; V++)
        for (size_t b = 1; b <= (V <= 6 ? 4u : 3u); b++)
            for (int rep = 0; rep < 8; rep++) {
                double p[8], q[8], scratch[8 * 8], acc[8] = {0};
                S_wor_case(r, p, q, V, rep);
                cr_assert(sd_trace_wor_scratch(V, b) <= sizeof scratch);
                sd_error err = {0};
                S_wor_exact(vt, p, q, V, b, acc);
                for (size_t y = 0; y < V; y++) {
                    double a;
                    cr_assert_eq(sd_trace_wor_accept(p, q, V, b, y, scratch, &a, &err), SD_OK, "%s", err.msg);
                    double d = fabs(a - acc[y]);
                    worst = d > worst ? d : worst;
                    cr_assert(d <= 1e-12, "V %zu, b %zu, rep %d, y %zu: closed form %.17g, enumeration %.17g", V, b,
                              rep, y, a, acc[y]);
                    checked++;
                    nonzero += acc[y] > 1e-3 && b > 1;
                }
            }
    cr_assert(checked > 500 && nonzero > 200, "%zu checked, %zu nonzero", checked, nonzero);
    cr_log_info("wor closed form: %zu outputs checked, worst difference %.3g", checked, worst);
    gsl_rng_free(r);
}

/* The Rao-Blackwellised estimate against the enumeration: for 2, 3 and 4
 * children at V <= 8 on the rows above, the mean of N = 20 000 estimates
 * (one forced history each, a fixed stream) of P(y accepted as a child)
 * is within 4 se of the exact value for every output token y (604
 * comparisons: at 4 se, expected false alarms 0.04), every estimate lies
 * in [0, q(y)] (the telescoped output identity), and where the estimate
 * has no spread (se = 0) it equals the exact value.  The estimate with the
 * weight of the forced rejections not carried is caught. */
static size_t S_wor_rb_check(unsigned bugs, size_t *compared)
{
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs-wor");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 64);
    sd_stream st;
    sd_stream_init(&st, 64, 0);
    size_t N = 20000, off = 0, n = 0;
    for (size_t V = 2; V <= 8; V++)
        for (size_t b = 2; b <= 4; b++)
            for (int rep = 0; rep < 8; rep++) {
                double p[8], q[8], acc[8], scratch[8 * 8];
                S_wor_case(r, p, q, V, rep);
                S_wor_exact(vt, p, q, V, b, acc);
                cr_assert(sd_trace_wor_scratch(V, 2) <= sizeof scratch);
                for (size_t y = 0; y < V; y++) {
                    if (!(q[y] > 0.0))
                        continue; /* never an output */
                    double m = 0.0, m2 = 0.0;
                    for (size_t k = 0; k < N; k++) {
                        double a;
                        sd_trace_wor_estimate(p, q, V, b, y, &st, scratch, bugs, &a);
                        if (!bugs)
                            cr_assert(a >= 0.0 && a <= q[y] * (1.0 + 1e-12), "V %zu b %zu rep %d y %zu: %.17g > q %.17g",
                                      V, b, rep, y, a, q[y]);
                        a /= q[y];
                        m += a;
                        m2 += a * a;
                    }
                    m /= (double)N;
                    double var = m2 / (double)N - m * m, se = sqrt((var > 0.0 ? var : 0.0) / (double)(N - 1));
                    double ex = acc[y] / q[y], d = fabs(m - ex);
                    int bad = se > 1e-9 ? d > 4.0 * se : d > 1e-9;
                    if (bad && !bugs)
                        cr_assert(0, "V %zu b %zu rep %d y %zu: mean of estimates %.9f (se %.3g), exact %.9f", V, b,
                                  rep, y, m, se, ex);
                    off += bad;
                    n++;
                }
            }
    gsl_rng_free(r);
    *compared = n;
    return off;
}

Test(trace, wor_estimate_is_unbiased_for_the_enumeration, .timeout = 120)
{
    size_t n, off = S_wor_rb_check(0, &n);
    cr_assert(n > 500 && off == 0, "%zu of %zu off", off, n);
    size_t nb, offb = S_wor_rb_check(SD_TRACE_WOR_BUG_NO_WEIGHT, &nb);
    cr_assert(offb > nb / 10, "the weight not carried: only %zu of %zu comparisons off", offb, nb);
    cr_log_info("wor estimate: %zu comparisons within 4 se; weight not carried: %zu of %zu off", n, offb, nb);
}

/* Past the limit the exact law is refused with the counts (3 children on
 * rows with V distinct draft probabilities, V = 10 000: about V/2 · V
 * terms) and the trace estimates it instead: 3 children there, 4 children
 * at V = 400 (400·399·398 terms); 3 children on tied rows at the same V
 * answer exactly. */
Test(trace, wor_exact_refuses_past_the_limit_and_the_trace_estimates)
{
    size_t V = 10000;
    double *p = malloc(2 * V * sizeof(double)), *q = p + V, acc;
    void *scratch = malloc(sd_trace_wor_scratch(V, 3));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    S_row(r, p, V, 0.0);
    S_row(r, q, V, 0.0);
    sd_error err = {0};
    cr_assert_eq(sd_trace_wor_accept(p, q, V, 3, 0, scratch, &acc, &err), SD_ETOOBIG);
    cr_assert(strstr(err.msg, "3 children") && strstr(err.msg, "distinct draft probabilities") &&
              strstr(err.msg, "the limit is 40000000"), "%s", err.msg);
    for (size_t x = 0; x < V; x++) /* 50 values: an n-gram model's counts */
        p[x] = (double)(1 + x % 50) / (25.5 * (double)V);
    err.msg[0] = 0;
    cr_assert_eq(sd_trace_wor_accept(p, q, V, 3, 7, scratch, &acc, &err), SD_OK, "%s", err.msg);
    cr_assert(acc > 0.0 && acc <= q[7] * (1.0 + 1e-12), "%.17g vs q %.17g", acc, q[7]);
    free(scratch);
    sd_trace_point pt = S_point("tree-rrs-wor", 0, 0, "3");
    size_t x[2] = {0, 7}, est, W = 400;
    double R, C;
    S_row(r, p, V, 0.0);
    double *pp = malloc(4 * V * sizeof(double)), *qq = pp + 2 * V;
    memcpy(pp, p, V * sizeof(double)), memcpy(pp + V, p, V * sizeof(double));
    memcpy(qq, q, V * sizeof(double)), memcpy(qq + V, q, V * sizeof(double));
    int rc = sd_trace_sequence_est(&pt, 2, V, x, pp, qq, NULL, &R, &C, &est, &err);
    cr_assert_eq(rc, SD_OK, "%s", err.msg);
    cr_assert(est == 1 && C >= 1.0 && C <= 2.0 && R >= 0.0 && R <= 1.0, "estimated %zu, calls %g, rejections %g",
              est, C, R);
    free(pp);
    pt = S_point("tree-rrs-wor", 0, 0, "4");
    double *rows = calloc(W, sizeof(double));
    for (size_t i = 0; i < W; i++)
        rows[i] = 1.0 / (double)W;
    rc = sd_trace_sequence_est(&pt, 1, W, x, rows, rows, NULL, &R, &C, &est, &err);
    cr_assert_eq(rc, SD_OK, "%s", err.msg);
    cr_assert(est == 1 && fabs(C - 1.0) < 1e-12 && fabs(R) < 1e-12, "estimated %zu, calls %g, rejections %g", est,
              C, R);
    free(rows);
    free(p);
    gsl_rng_free(r);
}

/* --- pooled estimates against the exact values --------------------------------------- */

/* n target paths of chain c (x_0 ~ init), their rows and ratios. */
typedef struct {
    size_t n, T, V;
    size_t *x;        /* [n][T] */
    double *p, *q, *r; /* [n][T][V], [n][T][V], [n][T] */
} S_traces;

static S_traces S_sample(const sd_chain *c, size_t n, unsigned long seed)
{
    size_t T = c->T, V = c->V;
    S_traces s = {n, T, V, malloc(n * T * sizeof(size_t)), malloc(n * T * V * sizeof(double)),
                  malloc(n * T * V * sizeof(double)), malloc(n * T * sizeof(double))};
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, seed);
    for (size_t i = 0; i < n; i++) {
        size_t a = sd_dist_sample(c->init, V, 1.0, gsl_rng_uniform(g));
        for (size_t t = 1; t <= T; t++) {
            const double *pr = sd_chain_p(c, t, a), *qr = sd_chain_q(c, t, a);
            size_t y = sd_dist_sample(qr, V, 1.0, gsl_rng_uniform(g));
            while (!(qr[y] > 0.0)) /* the CDF's edge: never a token of probability 0 */
                y = sd_dist_sample(qr, V, 1.0, gsl_rng_uniform(g));
            memcpy(s.p + (i * T + t - 1) * V, pr, V * sizeof(double));
            memcpy(s.q + (i * T + t - 1) * V, qr, V * sizeof(double));
            s.x[i * T + t - 1] = y;
            s.r[i * T + t - 1] = pr[y] / qr[y];
            a = y;
        }
    }
    gsl_rng_free(g);
    return s;
}

static void S_traces_free(S_traces *s)
{
    free(s->x);
    free(s->p);
    free(s->q);
    free(s->r);
}

static void S_pool(const S_traces *s, const sd_trace_point *pt, int ratios, sd_welford *rej, sd_welford *calls)
{
    sd_welford_init(rej);
    sd_welford_init(calls);
    size_t T = s->T, V = s->V;
    for (size_t i = 0; i < s->n; i++) {
        double R, C;
        sd_error err = {0};
        int rc = ratios ? sd_trace_sequence(pt, T, V, s->x + i * T, NULL, NULL, s->r + i * T, &R, &C, NULL, NULL, &err)
                        : sd_trace_sequence(pt, T, V, s->x + i * T, s->p + i * T * V, s->q + i * T * V, NULL, &R, &C,
                                            NULL, NULL, &err);
        cr_assert_eq(rc, SD_OK, "%s: %s", pt->vt->name, err.msg);
        sd_welford_add(rej, R);
        sd_welford_add(calls, C);
    }
}

/* 4 standard errors: a two-sided normal tail of 6e-5 per comparison, over
 * the 2 x 20 comparisons below well under 1% of a false alarm. */
Test(trace, pooled_estimates_agree_with_the_exact_values, .timeout = 240)
{
    sd_chain *c = tu_zero_chain(5, 8, 21);
    cr_assert(c);
    S_traces s = S_sample(c, 4000, 7);
    sd_model m = sd_model_of_chain(c);
    for (size_t i = 0; i < sizeof S_cases / sizeof *S_cases; i++) {
        sd_trace_point pt = S_point(S_cases[i].algo, S_cases[i].gamma, S_cases[i].k, S_cases[i].tree);
        if (!strcmp(S_cases[i].algo, "tree-rrs") && !strcmp(S_cases[i].tree, "3,1,2"))
            continue; /* its exact enumeration over 5^9 trees per context is slow */
        sd_exact_values ev;
        sd_error err = {0};
        cr_assert_eq(sd_verifier_exact(pt.vt, &m, &pt.par, &ev, &err), SD_OK, "%s: %s", pt.vt->name, err.msg);
        sd_welford rej, calls;
        S_pool(&s, &pt, 0, &rej, &calls);
        double zr = (rej.mean - ev.rejections) / sd_welford_stderr(&rej);
        double zc = (calls.mean - ev.target_calls) / sd_welford_stderr(&calls);
        cr_assert(fabs(zr) < 4.0 && fabs(zc) < 4.0,
                  "%s gamma %zu k %zu: trace rejections %.6f +- %.6f vs exact %.6f (z %.2f); calls %.6f +- %.6f vs "
                  "%.6f (z %.2f)", pt.vt->name, pt.par.gamma, pt.par.k, rej.mean, sd_welford_stderr(&rej),
                  ev.rejections, zr, calls.mean, sd_welford_stderr(&calls), ev.target_calls, zc);
    }
    S_traces_free(&s);
    sd_chain_free(c);
}

/* The control's pooled estimate misses block's exact value by far more
 * than 4 standard errors (it estimates token verification's). */
Test(trace, broken_block_trace_is_caught_by_the_pooled_check, .timeout = 60)
{
    sd_chain *c = tu_zero_chain(5, 8, 21);
    S_traces s = S_sample(c, 4000, 7);
    sd_model m = sd_model_of_chain(c);
    sd_trace_point pt = S_point("broken-block-trace", 4, 0, NULL);
    sd_exact_values ev;
    cr_assert_eq(sd_verifier_exact(pt.vt, &m, &pt.par, &ev, NULL), SD_OK);
    sd_welford rej, calls;
    S_pool(&s, &pt, 0, &rej, &calls);
    double zc = (calls.mean - ev.target_calls) / sd_welford_stderr(&calls);
    cr_assert(fabs(zc) > 4.0, "broken-block-trace: calls %.6f +- %.6f vs block's exact %.6f (z %.2f): not caught",
              calls.mean, sd_welford_stderr(&calls), ev.target_calls, zc);
    S_traces_free(&s);
    sd_chain_free(c);
}

Test(trace, ratios_give_the_numbers_of_full_rows)
{
    sd_chain *c = tu_zero_chain(4, 10, 3);
    S_traces s = S_sample(c, 300, 9);
    const char *algos[] = {"token", "block"};
    size_t gammas[] = {1, 3, 0};
    for (size_t a = 0; a < 2; a++)
        for (size_t g = 0; g < 3; g++) {
            sd_trace_point pt = S_point(algos[a], gammas[g], 0, NULL);
            sd_welford r1, c1, r2, c2;
            S_pool(&s, &pt, 0, &r1, &c1);
            S_pool(&s, &pt, 1, &r2, &c2);
            cr_assert(r1.mean == r2.mean && c1.mean == c2.mean && r1.m2 == r2.m2,
                      "%s gamma %zu: rows %.17g, ratios %.17g", algos[a], gammas[g], r1.mean, r2.mean);
        }
    S_traces_free(&s);
    sd_chain_free(c);
}

Test(trace, unsupported_verifiers_are_refused_with_the_reason)
{
    const char *no[] = {"greedy-block", "traversal", "sprinter"};
    for (size_t i = 0; i < 3; i++) {
        const sd_verifier_type *vt = sd_verifier_find(no[i]);
        cr_assert(vt, "%s", no[i]);
        sd_trace_point pt = {0};
        pt.vt = vt;
        sd_params_defaults(&pt.par, vt);
        sd_error err = {0};
        size_t x[2] = {0, 1};
        double p[4] = {0.5, 0.5, 0.5, 0.5}, R, C;
        int rc = sd_trace_sequence(&pt, 2, 2, x, p, p, NULL, &R, &C, NULL, NULL, &err);
        cr_assert_eq(rc, SD_EUSAGE, "%s: %d", no[i], rc);
        cr_assert(strstr(err.msg, vt->name) && strlen(err.msg) > 40, "%s: '%s'", no[i], err.msg);
    }
    sd_trace_point pt = S_point("rrs", 2, 2, NULL);
    sd_error err = {0};
    size_t x[2] = {0, 1};
    double r[2] = {1.0, 1.0}, R, C;
    cr_assert_eq(sd_trace_sequence(&pt, 2, 2, x, NULL, NULL, r, &R, &C, NULL, NULL, &err), SD_EUSAGE);
    cr_assert(strstr(err.msg, "--ratios"), "%s", err.msg);
}

/* --- the .npy reader ---------------------------------------------------------------- */

static char *S_tmp(const char *name)
{
    char *path = malloc(256);
    snprintf(path, 256, "/tmp/simdec-test-trace-%d-%s", (int)getpid(), name);
    return path;
}

Test(trace, npy_round_trip_and_dtypes)
{
    char *path = S_tmp("a.npy");
    size_t shape[3] = {2, 3, 4};
    double d[24];
    for (int i = 0; i < 24; i++)
        d[i] = i / 7.0;
    cr_assert_eq(sd_npy_write_f8(path, 3, shape, d, NULL), SD_OK);
    sd_npy a;
    sd_error err = {0};
    cr_assert_eq(sd_npy_open(&a, path, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(a.ndim, 3);
    cr_assert_eq(a.shape[2], 4);
    for (int i = 0; i < 24; i++)
        cr_assert_eq(sd_npy_get(&a, (size_t)i), d[i]);
    sd_npy_close(&a);
    /* float16 and int16 through the wrapper */
    uint16_t h[3] = {0x3c00, 0x3800, 0x0001}; /* 1, 0.5, the smallest subnormal */
    size_t s1[1] = {3};
    cr_assert_eq(sd_npy_wrap(&a, h, "<f2", 1, s1, NULL), SD_OK);
    cr_assert_eq(sd_npy_get(&a, 0), 1.0);
    cr_assert_eq(sd_npy_get(&a, 1), 0.5);
    cr_assert_eq(sd_npy_get(&a, 2), ldexp(1.0, -24));
    int16_t iv[2] = {5, -3};
    size_t s2[1] = {2};
    uint64_t v;
    cr_assert_eq(sd_npy_wrap(&a, iv, "<i2", 1, s2, NULL), SD_OK);
    cr_assert_eq(sd_npy_get_index(&a, 0, &v), 0);
    cr_assert_eq(v, 5);
    cr_assert_eq(sd_npy_get_index(&a, 1, &v), -1);
    cr_assert_eq(sd_npy_wrap(&a, iv, ">i2", 1, s2, &err), SD_EUSAGE);
    cr_assert_eq(sd_npy_wrap(&a, iv, "<c8", 1, s2, &err), SD_EUSAGE);
    unlink(path);
    free(path);
}

static void S_bad(const char *name, const void *bytes, size_t len, int code, const char *fragment)
{
    char *path = S_tmp(name);
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, len, f);
    fclose(f);
    sd_npy a;
    sd_error err = {0};
    int rc = sd_npy_open(&a, path, &err);
    cr_assert_eq(rc, code, "%s: %d (%s)", name, rc, err.msg);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, fragment), "%s: '%s'", name, err.msg);
    unlink(path);
    free(path);
}

/* A version-1 file with the given dict and data. */
static size_t S_npy(unsigned char *buf, const char *dict, const void *data, size_t dlen)
{
    size_t n = strlen(dict), hl = n + 1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hl & 255);
    buf[9] = (unsigned char)(hl >> 8);
    memcpy(buf + 10, dict, n);
    buf[10 + n] = '\n';
    memcpy(buf + 11 + n, data, dlen);
    return 11 + n + dlen;
}

/* 1 if the process maps the file `path` (a line of /proc/self/maps). */
static int S_mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        found |= strstr(line, path) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* sd_npy_open maps the file (O(1) memory whatever its size) and
 * sd_npy_close unmaps it: a reader that kept the mapping would hold every
 * file a long-lived process (the Python binding) opened. */
Test(trace, npy_close_unmaps_the_file)
{
    char *path = S_tmp("m.npy");
    size_t shape[1] = {4};
    double d[4] = {0.5, 0.25, 0.125, 0.125};
    cr_assert_eq(sd_npy_write_f8(path, 1, shape, d, NULL), SD_OK);
    sd_npy a;
    sd_error err = {0};
    cr_assert_eq(sd_npy_open(&a, path, &err), SD_OK, "%s", err.msg);
    cr_expect(S_mapped(path), "%s is not mapped while open", path);
    cr_expect_eq(sd_npy_get(&a, 1), 0.25);
    sd_npy_close(&a);
    cr_expect(!S_mapped(path), "%s is still mapped after sd_npy_close", path);
    unlink(path);
    free(path);
}

Test(trace, npy_malformed_files_are_refused)
{
    unsigned char buf[512];
    double d[4] = {0};
    S_bad("text.npy", "hello world, not numpy", 22, SD_EDATA, "not a .npy file");
    S_bad("short.npy", "\x93NUM", 4, SD_EDATA, "not a .npy file");
    size_t n = S_npy(buf, "{'descr': '>f8', 'fortran_order': False, 'shape': (4,), }", d, 32);
    S_bad("big.npy", buf, n, SD_EDATA, "big-endian");
    n = S_npy(buf, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", d, 32);
    S_bad("fortran.npy", buf, n, SD_EDATA, "Fortran");
    n = S_npy(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", d, 32);
    S_bad("truncated.npy", buf, n, SD_EDATA, "needs 40 data bytes");
    n = S_npy(buf, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", d, 12);
    S_bad("unicode.npy", buf, n, SD_EDATA, "not supported");
    n = S_npy(buf, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", d, 8);
    S_bad("struct.npy", buf, n, SD_EDATA, "descr");
    sd_npy a;
    sd_error err = {0};
    cr_assert_eq(sd_npy_open(&a, "/nonexistent/simdec.npy", &err), SD_EIO);
}

/* --- the command line ---------------------------------------------------------------- */

/* A directory of traces of a chain with zeros (tu_zero_chain), its model
 * file beside them. */
static char *S_trace_dir(size_t V, size_t T, unsigned long seed, size_t n)
{
    char *dir = tu_fresh_dir("trace", "dir");
    char cmd[1024], path[600];
    sd_chain *c = tu_zero_chain(V, T, seed);
    snprintf(path, sizeof path, "%s/model.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f && c);
    cr_assert_eq(sd_chain_write(c, f, NULL), SD_OK);
    fclose(f);
    sd_chain_free(c);
    snprintf(cmd, sizeof cmd, "gen --model %s/model.json --trace %zu --seed 5 -o %s", dir, n, dir);
    char *out = NULL, *err = NULL;
    int st = tu_run(cmd, &out, &err);
    cr_assert_eq(st, 0, "%s: %s", cmd, err);
    free(out);
    free(err);
    return dir;
}

/* gen --trace then trace, against eval generation on the same model file
 * (4 se: as above). */
Test(trace_cli, gen_trace_agrees_with_eval_generation, .timeout = 240)
{
    char *dir = S_trace_dir(4, 8, 13, 3000);
    static const char *const pts[] = {"token --gamma 2",          "block --gamma 3",   "rrs --k 2 --gamma 2",
                                      "spectr --k 3 --gamma 2",   "tree-rrs --tree 2,2", "tree-rrs-wor --tree 2,1",
                                      "tree-rrs-wor --tree 3,2", "tree-rrs-wor --tree 4", "block"};
    tu_trace_agrees_with_eval(dir, pts, sizeof pts / sizeof *pts);
    char cmd[1024];
    /* --ratios: the same numbers as the rows for token and block */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --draft %s/draft.npy --target %s/target.npy "
                              "--algo token,block --gamma 1..3 --json", dir, dir, dir);
    json_t *a = tu_json(cmd);
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --ratios %s/ratios.npy --algo token,block --gamma 1..3 --json",
             dir, dir);
    json_t *b = tu_json(cmd);
    cr_assert_eq(json_array_size(a), 6);
    for (size_t i = 0; i < 6; i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        /* the same up to the rounding of the ratio (rows are renormalised by their
         * sum, which may differ from 1 in the last bit) */
        double c1 = tu_num(x, "target_calls", "mean"), c2 = tu_num(y, "target_calls", "mean");
        double r1 = tu_num(x, "rejections", "mean"), r2 = tu_num(y, "rejections", "mean");
        double e1 = tu_num(x, "target_calls", "stderr"), e2 = tu_num(y, "target_calls", "stderr");
        cr_assert(fabs(c1 - c2) < 1e-12 * c1 && fabs(r1 - r2) < 1e-12 * r1 && fabs(e1 - e2) < 1e-9 * e1,
                  "point %zu: rows %.17g %.17g, ratios %.17g %.17g", i, c1, r1, c2, r2);
    }
    json_decref(a);
    json_decref(b);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* trace with the Rao-Blackwellised law (--estimate: even where the exact
 * law fits, at V small enough for eval generation) against the exact
 * value, within 4 se (the se over sequences includes the estimate's
 * noise); the output says the law was estimated and echoes the seed. */
static void S_estimated_agrees(const char *dir, const char *pt)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --draft %s/draft.npy --target %s/target.npy --algo %s "
                              "--estimate --seed 3 --json", dir, dir, dir, pt);
    json_t *t = tu_json(cmd);
    snprintf(cmd, sizeof cmd, "eval generation --model %s/model.json --algo %s --json", dir, pt);
    json_t *e = tu_json(cmd);
    double ex = tu_num(e, "target_calls", NULL), mc = tu_num(t, "target_calls", "mean"),
           se = tu_num(t, "target_calls", "stderr");
    double exr = tu_num(e, "rejections", NULL), mr = tu_num(t, "rejections", "mean"),
           ser = tu_num(t, "rejections", "stderr");
    cr_assert(fabs(mc - ex) < 4 * se && fabs(mr - exr) < 4 * ser,
              "%s: trace calls %.5f +- %.5f, rejections %.5f +- %.5f; exact %.5f, %.5f", pt, mc, se, mr, ser, ex, exr);
    const char *method = json_string_value(json_object_get(t, "method"));
    cr_assert(method && !strncmp(method, "rao-blackwellised", 17), "%s", method ? method : "(none)");
    cr_assert(json_integer_value(json_object_get(t, "laws_estimated")) > 0);
    cr_assert_eq(json_integer_value(json_object_get(t, "seed")), 3);
    cr_log_info("%s: trace (estimated) %.5f +- %.5f, exact %.5f", pt, mc, se, ex);
    json_decref(t);
    json_decref(e);
}

Test(trace_cli, estimated_wor_agrees_with_eval_generation, .timeout = 240)
{
    char *dir = S_trace_dir(6, 6, 17, 3000);
    S_estimated_agrees(dir, "tree-rrs-wor --tree 4");
    S_estimated_agrees(dir, "tree-rrs-wor --tree 3");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
    dir = S_trace_dir(4, 8, 13, 3000);
    S_estimated_agrees(dir, "tree-rrs-wor --tree 4,2");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* Writes a tokens/rows set with one defect into dir. */
static void S_write_case(const char *dir, const int64_t *tok, size_t n, size_t T, const double *rows, size_t V)
{
    char path[600];
    size_t s2[2] = {n, T}, s3[3] = {n, T, V};
    snprintf(path, sizeof path, "%s/t.npy", dir);
    cr_assert_eq(sd_npy_write_i8(path, 2, s2, tok, NULL), SD_OK);
    snprintf(path, sizeof path, "%s/p.npy", dir);
    cr_assert_eq(sd_npy_write_f8(path, 3, s3, rows, NULL), SD_OK);
}

Test(trace_cli, malformed_inputs_are_refused_with_no_output, .timeout = 60)
{
    char *dir = S_tmp("bad");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
    int64_t tok[4] = {0, 1, 0, 0};
    double good[8] = {0.5, 0.5, 0.25, 0.75, 1.0, 0.0, 0.5, 0.5};
    S_write_case(dir, tok, 2, 2, good, 2);
    char base[1400];
    snprintf(base, sizeof base, "trace --tokens %s/t.npy --draft %s/p.npy --target %s/p.npy --algo block --gamma 2",
             dir, dir, dir);
    tu_expect(base, 0, NULL);
    /* a missing file: 66 */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/none.npy --ratios %s/p.npy --algo token", dir, dir);
    tu_expect(cmd, 66, "none.npy");
    /* not .npy: 65 */
    snprintf(cmd, sizeof cmd, "echo hello > %s/text.npy", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "trace --tokens %s/text.npy --draft %s/p.npy --target %s/p.npy --algo token", dir, dir, dir);
    tu_expect(cmd, 65, "not a .npy file");
    /* float tokens, rows as tokens: 65 */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/p.npy --draft %s/p.npy --target %s/p.npy --algo token", dir, dir, dir);
    tu_expect(cmd, 65, "expected integer tokens");
    /* rows of the wrong shape: tokens as rows */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --draft %s/t.npy --target %s/p.npy --algo token", dir, dir, dir);
    tu_expect(cmd, 65, "expected float16, float32 or float64 rows");
    /* ratios of the wrong shape */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --ratios %s/p.npy --algo token", dir, dir);
    tu_expect(cmd, 65, "expected (2, 2)");
    /* a negative entry, a NaN, a row sum off, a token >= V, a token of target probability 0 */
    double neg[8] = {0.5, 0.5, 1.25, -0.25, 1.0, 0.0, 0.5, 0.5};
    S_write_case(dir, tok, 2, 2, neg, 2);
    tu_expect(base, 65, "sequence 0, position 2, token 1: -0.25");
    double nan_[8] = {0.5, 0.5, 0.25, 0.75, NAN, 0.0, 0.5, 0.5};
    S_write_case(dir, tok, 2, 2, nan_, 2);
    tu_expect(base, 65, "sequence 1, position 1, token 0: nan");
    double off[8] = {0.5, 0.5, 0.25, 0.75, 1.0, 0.01, 0.5, 0.5};
    S_write_case(dir, tok, 2, 2, off, 2);
    tu_expect(base, 65, "the row sums to 1.01");
    int64_t big[4] = {0, 1, 2, 0};
    S_write_case(dir, big, 2, 2, good, 2);
    tu_expect(base, 65, "token 2; expected 0..1");
    int64_t zero[4] = {0, 1, 1, 0}; /* sequence 1, position 1: token 1 where q = (1, 0) */
    S_write_case(dir, zero, 2, 2, good, 2);
    tu_expect(base, 65, "target probability 0");
    int64_t negt[4] = {0, -1, 0, 0};
    S_write_case(dir, negt, 2, 2, good, 2);
    tu_expect(base, 65, "a negative token");
    /* usage: both forms, neither, an unsupported verifier, rows needed */
    S_write_case(dir, tok, 2, 2, good, 2);
    snprintf(cmd, sizeof cmd, "%s --ratios %s/p.npy", base, dir);
    tu_expect(cmd, 64, "not both");
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --algo token", dir);
    tu_expect(cmd, 64, "--ratios");
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --draft %s/p.npy --target %s/p.npy --algo greedy-block", dir,
             dir, dir);
    tu_expect(cmd, 64, "greedy-block has no law given a logged output");
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --draft %s/p.npy --target %s/p.npy --algo traversal", dir, dir,
             dir);
    tu_expect(cmd, 64, "rows off the logged path");
    /* --max-memory: refused before allocating (one position of V = 2^17: 2 MB of rows) */
    {
        size_t Vb = (size_t)1 << 17, s3[3] = {1, 1, Vb}, s2[2] = {1, 1};
        double *rb = calloc(Vb, sizeof *rb);
        rb[0] = 1.0;
        int64_t t0[1] = {0};
        char path[600];
        snprintf(path, sizeof path, "%s/bt.npy", dir);
        cr_assert_eq(sd_npy_write_i8(path, 2, s2, t0, NULL), SD_OK);
        snprintf(path, sizeof path, "%s/bp.npy", dir);
        cr_assert_eq(sd_npy_write_f8(path, 3, s3, rb, NULL), SD_OK);
        free(rb);
        snprintf(cmd, sizeof cmd, "trace --tokens %s/bt.npy --draft %s/bp.npy --target %s/bp.npy --algo rrs --k 2 "
                                  "--max-memory 1M", dir, dir, dir);
        tu_expect(cmd, 65, "--max-memory");
        snprintf(cmd, sizeof cmd, "trace --tokens %s/bt.npy --draft %s/bp.npy --target %s/bp.npy --algo rrs --k 2 "
                                  "--max-memory 64M", dir, dir, dir);
        tu_expect(cmd, 0, NULL);
    }
    snprintf(cmd, sizeof cmd, "%s --gamma best", base);
    tu_expect(cmd, 64, "--c");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* float32 rows (sums off by ~1e-7) are admitted and the deviation reported. */
Test(trace_cli, float32_rows_are_renormalised_and_the_deviation_reported)
{
    char *dir = S_tmp("f32");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
    /* a hand-made float32 file: 1 sequence, 1 position, V = 3 */
    float row[3] = {0.1f, 0.2f, 0.7f};
    unsigned char buf[256];
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 3), }";
    size_t n = S_npy(buf, dict, row, sizeof row);
    snprintf(cmd, sizeof cmd, "%s/r.npy", dir);
    FILE *f = fopen(cmd, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
    int64_t tok[1] = {2};
    size_t s2[2] = {1, 1};
    snprintf(cmd, sizeof cmd, "%s/t.npy", dir);
    cr_assert_eq(sd_npy_write_i8(cmd, 2, s2, tok, NULL), SD_OK);
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --draft %s/r.npy --target %s/r.npy --algo token --json", dir, dir,
             dir);
    json_t *v = tu_json(cmd);
    double dev = tu_num(v, "max_row_deviation", NULL);
    cr_assert(dev > 0.0 && dev < 1e-6, "%g", dev);
    cr_assert_eq(tu_num(v, "row_tolerance", NULL), 1e-3);
    json_decref(v);
    snprintf(cmd, sizeof cmd, "trace --tokens %s/t.npy --draft %s/r.npy --target %s/r.npy --algo token --tol 1e-12", dir,
             dir, dir);
    tu_expect(cmd, 65, "--tol");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

Test(trace_cli, help_sweep_best_csv_and_schedule, .timeout = 60)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(tu_run("trace --help", &out, &err), 0);
    cr_assert(tu_contains(out, "--tokens X.npy") && tu_contains(out, "--draft-cost"));
    free(out);
    free(err);
    cr_assert_eq(tu_run("--help", &out, &err), 0);
    cr_assert(tu_contains(out, "trace"));
    free(out);
    free(err);
    char *dir = S_trace_dir(4, 6, 2, 300);
    char cmd[1024];
    /* --gamma best: one object per verifier, the best of gamma_tried */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --ratios %s/ratios.npy --algo token,block --gamma best "
                              "--gamma-max 4 --c 0.1 --schedule --json", dir, dir);
    json_t *v = tu_json(cmd);
    cr_assert(json_is_array(v) && json_array_size(v) == 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *o = json_array_get(v, i), *tried = json_object_get(o, "gamma_tried");
        cr_assert_eq(json_array_size(tried), 4);
        double best = tu_num(o, "speedup", "mean");
        for (size_t j = 0; j < 4; j++)
            cr_assert(json_number_value(json_object_get(json_array_get(tried, j), "speedup")) <= best);
        size_t g = (size_t)json_integer_value(json_object_get(json_object_get(o, "params"), "gamma"));
        cr_assert_eq(json_array_size(json_object_get(o, "schedule")), g);
    }
    json_decref(v);
    /* CSV: a header and a row per point, the schedule in one field */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --ratios %s/ratios.npy --algo block --gamma 1,3 --c 0.1 "
                              "--draft-cost step --schedule --csv", dir, dir);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    size_t lines = 0;
    for (const char *s = out; *s; s++)
        lines += *s == '\n';
    cr_assert_eq(lines, 3, "%s", out);
    cr_assert(tu_contains(out, "algo,params,sequences") && tu_contains(out, "block,gamma 3,300,6,0,") &&
                  tu_contains(out, ",step,"), "%s", out);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}
