/* test_lp_flow.c — otm as a maximum flow (lp/sd_lp_flow.h, lp/otm.c):
 * suites lp_flow_*.
 *
 * The flow method and GLPK's simplex solve the same LP (the equivalence
 * is proved in lp/otm.c), so their optima must agree to the simplex's
 * rounding: 1e-9 (the flow's certified gap is <= 1e-13, the simplex's
 * ~1e-12).  Instances are random (fixed seeds), with zeros in p and q.
 * The real-capacity rounds of sd_lp_flow_max are checked on their own
 * from a zero start, against the max-flow LP (glp_maxflow_lp + simplex),
 * on random networks where one round of integer augmenting paths cannot
 * be exact. */
#include <criterion/criterion.h>
#include <glpk.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../lp/sd_lp_flow.h"
#include "../src/sd_dist.h"
#include "test_util.h"

#define S_TOL 1e-9

/* A random distribution on V tokens: Dirichlet(0.6) weights with each
 * entry zeroed with probability zf (tu_dist). */
static void S_dist(gsl_rng *r, double *x, size_t V, double zf)
{
    tu_dist(r, x, V, 0.6, zf);
}

Test(lp_flow_otm, flow_equals_simplex_on_random_instances)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1414);
    sd_lp_opts simplex, flow;
    sd_lp_opts_default(&simplex);
    sd_lp_opts_default(&flow);
    simplex.method = SD_LP_METHOD_SIMPLEX;
    flow.method = SD_LP_METHOD_FLOW;
    for (int it = 0; it < 40; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 9), k = 1 + gsl_rng_uniform_int(r, 4);
        int ordered = it % 5 == 4 && V <= 6;
        double p[16], q[16];
        S_dist(r, p, V, it % 3 ? 0.2 : 0.0);
        S_dist(r, q, V, it % 2 ? 0.2 : 0.0);
        sd_lp_result a, b;
        cr_assert_eq(sd_lp_otm(p, q, V, k, ordered, &simplex, &a, NULL, NULL), SD_OK);
        cr_assert_eq(sd_lp_otm(p, q, V, k, ordered, &flow, &b, NULL, NULL), SD_OK);
        cr_assert(a.optimal && b.optimal, "it %d: %s / %s", it, a.status, b.status);
        cr_expect(fabs(a.optimum - b.optimum) < S_TOL, "it %d V %zu k %zu: simplex %.17g flow %.17g", it, V, k,
                  a.optimum, b.optimum);
    }
    gsl_rng_free(r);
}

/* The flow's completed plan is a coupling of P (multisets) and q whose
 * membership mass is the optimum. */
Test(lp_flow_otm, completed_plan_is_an_optimal_coupling)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    size_t V = 6, k = 3;
    double p[16], q[16];
    S_dist(r, p, V, 0.0);
    S_dist(r, q, V, 0.3);
    sd_lp_result res;
    sd_lp_plan *pl = NULL;
    cr_assert_eq(sd_lp_otm(p, q, V, k, 1, NULL, &res, &pl, NULL), SD_OK); /* ordered: P = Π p */
    cr_assert(res.optimal && pl);
    double row[216] = {0}, col[16] = {0}, hit = 0.0;
    for (size_t i = 0; i < pl->rows; i++) {
        const size_t *key = pl->keys + i * pl->nkeys;
        double m = pl->vals[i];
        size_t u = (key[0] * V + key[1]) * V + key[2];
        row[u] += m;
        col[key[3]] += m;
        if (key[3] == key[0] || key[3] == key[1] || key[3] == key[2])
            hit += m;
    }
    for (size_t u = 0; u < V * V * V; u++)
        cr_expect(fabs(row[u] - p[u / 36] * p[u / 6 % 6] * p[u % 6]) < 1e-11, "row %zu", u);
    for (size_t y = 0; y < V; y++)
        cr_expect(fabs(col[y] - q[y]) < 1e-11, "column %zu: %.17g vs %.17g", y, col[y], q[y]);
    cr_expect(fabs(hit - res.optimum) < 1e-11, "%.17g vs %.17g", hit, res.optimum);
    sd_lp_plan_free(pl);
    gsl_rng_free(r);
}

/* Random layered networks s -> A -> B -> t with irrational-looking
 * capacities, solved from x = 0: the rounds must reach the LP's maximum. */
Test(lp_flow_max, rounds_reach_the_lp_maximum_from_zero)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    typedef struct { double cap; } arcd;
    for (int it = 0; it < 20; it++) {
        size_t na_ = 6 + gsl_rng_uniform_int(r, 10), nb = 6 + gsl_rng_uniform_int(r, 10);
        size_t nv = na_ + nb + 2, s = 0, t = nv - 1, m = 0;
        size_t tail[400], head[400];
        double cap[400], x[400];
        for (size_t i = 0; i < na_; i++)
            tail[m] = s, head[m] = 1 + i, cap[m++] = gsl_rng_uniform(r);
        for (size_t i = 0; i < na_; i++)
            for (size_t j = 0; j < nb; j++)
                if (gsl_rng_uniform(r) < 0.4)
                    tail[m] = 1 + i, head[m] = 1 + na_ + j, cap[m++] = gsl_rng_uniform(r) * 0.5;
        for (size_t j = 0; j < nb; j++)
            tail[m] = 1 + na_ + j, head[m] = t, cap[m++] = gsl_rng_uniform(r);
        memset(x, 0, sizeof x);
        double value, gap;
        cr_assert_eq(sd_lp_flow_max(nv, m, tail, head, cap, s, t, x, &value, &gap, NULL), SD_OK);
        cr_expect_leq(gap, SD_LP_FLOW_GAP);
        /* feasibility and conservation */
        double *bal = calloc(nv, sizeof *bal);
        for (size_t a = 0; a < m; a++) {
            cr_expect(x[a] >= 0.0 && x[a] <= cap[a], "arc %zu", a);
            bal[tail[a]] -= x[a];
            bal[head[a]] += x[a];
        }
        for (size_t v = 1; v + 1 < nv; v++)
            cr_expect(fabs(bal[v]) < 1e-14, "vertex %zu: %g", v, bal[v]);
        free(bal);
        /* the same network as an LP */
        glp_graph *G = glp_create_graph(0, (int)sizeof(arcd));
        glp_add_vertices(G, (int)nv);
        for (size_t a = 0; a < m; a++)
            ((arcd *)glp_add_arc(G, (int)tail[a] + 1, (int)head[a] + 1)->data)->cap = cap[a];
        glp_prob *lp = glp_create_prob();
        glp_maxflow_lp(lp, G, GLP_OFF, (int)s + 1, (int)t + 1, (int)offsetof(arcd, cap));
        glp_smcp sm;
        glp_init_smcp(&sm);
        sm.msg_lev = GLP_MSG_OFF;
        cr_assert_eq(glp_simplex(lp, &sm), 0);
        cr_expect(fabs(glp_get_obj_val(lp) - value) < S_TOL, "it %d: LP %.17g flow %.17g", it,
                  glp_get_obj_val(lp), value);
        glp_delete_prob(lp);
        glp_delete_graph(G);
    }
    gsl_rng_free(r);
}

Test(lp_flow_max, refuses_bad_capacity)
{
    size_t tail[1] = {0}, head[1] = {1};
    double cap[1] = {-1.0}, x[1] = {0.0}, v, g;
    sd_error err;
    cr_expect_eq(sd_lp_flow_max(2, 1, tail, head, cap, 0, 1, x, &v, &g, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, "arc 0 has capacity -1"), "%s", err.msg);
}

/* GLPK indexes vertices and arcs (two per arc with the residual ones) by
 * int: sizes past that are refused before any capacity is read; one less
 * goes on to the capacities (here the first is bad). */
Test(lp_flow_max, sizes_glpk_cannot_index_are_refused_first)
{
    size_t tail[1] = {0}, head[1] = {1};
    double cap[1] = {-1.0}, x[1] = {0.0}, v, g;
    sd_error err;
    const size_t arcs = (size_t)INT_MAX / 2, verts = (size_t)INT_MAX;
    cr_expect_eq(sd_lp_flow_max(2, arcs, tail, head, cap, 0, 1, x, &v, &g, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "arcs; GLPK indexes fewer than 2^31"), "%s", err.msg);
    cr_expect_eq(sd_lp_flow_max(2, arcs - 1, tail, head, cap, 0, 1, x, &v, &g, &err), SD_EDATA, "%s", err.msg);
    cr_expect_eq(sd_lp_flow_max(verts, 1, tail, head, cap, 0, 1, x, &v, &g, &err), SD_ETOOBIG);
    cr_expect_eq(sd_lp_flow_max(verts - 1, 1, tail, head, cap, 0, 1, x, &v, &g, &err), SD_EDATA, "%s", err.msg);
    cr_expect_eq(sd_lp_flow_max(1, 1, tail, head, cap, 0, 1, x, &v, &g, &err), SD_ETOOBIG);
}

Test(lp_flow_cli, method_is_echoed_and_both_agree)
{
    char *out, *errs;
    cr_assert_eq(tu_run("lp otm --k 2 --V 9 --json", &out, &errs), 0, "%s", errs);
    json_t *a = json_loads(out, 0, NULL);
    cr_assert_not_null(a);
    free(out);
    free(errs);
    cr_assert_eq(tu_run("lp otm --k 2 --V 9 --json --method simplex", &out, &errs), 0, "%s", errs);
    json_t *b = json_loads(out, 0, NULL);
    cr_assert_not_null(b);
    free(out);
    free(errs);
    cr_expect_str_eq(json_string_value(json_object_get(a, "method")), "flow");
    cr_expect_str_eq(json_string_value(json_object_get(b, "method")), "simplex");
    cr_expect(fabs(json_number_value(json_object_get(a, "optimum")) -
                   json_number_value(json_object_get(b, "optimum"))) < S_TOL);
    json_decref(a);
    json_decref(b);
    cr_expect_eq(tu_run("lp otm --k 2 --V 9 --method flow --exact", &out, &errs), 64);
    free(out);
    free(errs);
    cr_expect_eq(tu_run("lp otm --k 2 --V 9 --method network", &out, &errs), 64);
    cr_expect(tu_contains(errs, "expected flow or simplex"), "%s", errs);
    free(out);
    free(errs);
}
