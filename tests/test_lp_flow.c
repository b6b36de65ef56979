/* test_lp_flow.c — otm as a maximum flow, block-ot and tree-ot as
 * minimum-cost flows (lp/sd_lp_flow.h, lp/otm.c, lp/block_ot.c,
 * treelp/tree_ot.c): suites lp_flow_*.
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
#include "../treelp/sd_treelp.h"
#include "../lp/sd_lp_flow.h"
#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact_accept.h"
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

/* The minimum-cost flow's guard (sd_lp_flow_mincost: GLPK indexes its
 * phase networks, up to nv + 2 vertices and na + nv arcs, with ints) at
 * its boundary: na = INT_MAX / 4 passes it and the next check refuses the
 * NaN balance (before any arc is read); one arc more is refused as too big. */
Test(lp_flow_max, mincost_sizes_at_the_glpk_boundary)
{
    size_t tail[1] = {0}, head[1] = {0}, phases;
    int cost[1] = {0};
    double b[1] = {NAN}, x[1], c, g;
    sd_error err;
    const size_t arcs = (size_t)INT_MAX / 4;
    cr_expect_eq(sd_lp_flow_mincost(1, arcs, tail, head, cost, b, x, &c, &g, &phases, &err), SD_EDATA, "%s", err.msg);
    cr_expect(tu_contains(err.msg, "vertex 0 has balance nan"), "%s", err.msg);
    cr_expect_eq(sd_lp_flow_mincost(1, arcs + 1, tail, head, cost, b, x, &c, &g, &phases, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "GLPK indexes fewer than 2^31"), "%s", err.msg);
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
    cr_expect(tu_contains(errs, "expected flow, simplex or dual"), "%s", errs);
    free(out);
    free(errs);
}

/* ---- block-ot and tree-ot as minimum-cost flows ------------------------------ */

/* A random instance: a nonstationary chain with random rows (it % 3 != 0)
 * or i.i.d. tokens from one random pair (p, q) (it % 3 == 0); zeros in
 * the rows on odd iterations. */
static sd_chain *S_instance(gsl_rng *r, int it, size_t V, size_t T)
{
    double zf = it % 2 ? 0.25 : 0.0;
    if (it % 3 == 0) {
        double p[16], q[16];
        S_dist(r, p, V, zf);
        S_dist(r, q, V, zf);
        return sd_chain_from_pq(p, q, V, T, NULL);
    }
    return tu_random_chain(r, V, T, 0.6, zf);
}

static void S_methods(sd_lp_opts *simplex, sd_lp_opts *flow)
{
    sd_lp_opts_default(simplex);
    sd_lp_opts_default(flow);
    simplex->method = SD_LP_METHOD_SIMPLEX;
    flow->method = SD_LP_METHOD_FLOW;
}

/* The network has the LP's optimum (proof in lp/block_ot.c), which is the
 * full-information value (Sun et al. 2024, Thm 1); both agree to 1e-9
 * (the flow's certified gap is <= 1e-11, the simplex's rounding ~1e-12). */
Test(lp_flow_block, flow_equals_simplex_and_full_information_on_random_instances)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4242);
    sd_lp_opts simplex, flow;
    S_methods(&simplex, &flow);
    for (int it = 0; it < 30; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 4), G = 1 + gsl_rng_uniform_int(r, V <= 3 ? 4 : 2);
        size_t T = G + 2, t = 1 + gsl_rng_uniform_int(r, T - G + 1), a = gsl_rng_uniform_int(r, V);
        sd_chain *c = S_instance(r, it, V, T);
        cr_assert_not_null(c);
        sd_lp_result s, f;
        double e[SD_ACCEPT_NALGO];
        cr_assert_eq(sd_exact_accept_length(c, t, a, G, e, NULL, NULL), SD_OK);
        cr_assert_eq(sd_lp_block_ot(c, t, a, G, &simplex, &s, NULL, NULL), SD_OK);
        cr_assert_eq(sd_lp_block_ot(c, t, a, G, &flow, &f, NULL, NULL), SD_OK);
        cr_assert(s.optimal && f.optimal, "it %d: %s / %s", it, s.status, f.status);
        cr_expect(fabs(s.optimum - f.optimum) < S_TOL, "it %d V %zu G %zu: simplex %.17g flow %.17g", it, V, G,
                  s.optimum, f.optimum);
        cr_expect(fabs(f.optimum - e[SD_ACCEPT_FULL]) < S_TOL, "it %d: flow %.17g full information %.17g", it,
                  f.optimum, e[SD_ACCEPT_FULL]);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}

/* The control: reward |u| + 1 across u adds exactly 1 (every unit of mass
 * crosses once), and the comparison with the simplex flags it. */
Test(lp_flow_block, a_wrong_network_is_caught)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    sd_chain *c = S_instance(r, 1, 3, 4);
    cr_assert_not_null(c);
    double **P = NULL, **Q = NULL;
    cr_assert_eq(sd_lp_prefix_laws(c, 1, 0, 3, 0, &P, NULL), SD_OK);
    cr_assert_eq(sd_lp_prefix_laws(c, 1, 0, 3, 1, &Q, NULL), SD_OK);
    sd_lp_opts simplex, flow;
    S_methods(&simplex, &flow);
    sd_lp_result s, good, bad;
    cr_assert_eq(sd_lp_block_ot(c, 1, 0, 3, &simplex, &s, NULL, NULL), SD_OK);
    cr_assert_eq(sd_lp_block_ot_net(3, 3, P, Q, 0, &good, NULL, NULL), SD_OK);
    cr_assert_eq(sd_lp_block_ot_net(3, 3, P, Q, 1, &bad, NULL, NULL), SD_OK);
    cr_assert(s.optimal && good.optimal && bad.optimal);
    cr_expect(fabs(good.optimum - s.optimum) < S_TOL);
    cr_expect(fabs(bad.optimum - s.optimum) > S_TOL, "the wrong network went unnoticed: %.17g", bad.optimum);
    cr_expect(fabs(bad.optimum - s.optimum - 1.0) < S_TOL, "%.17g vs %.17g + 1", bad.optimum, s.optimum);
    free(P);
    free(Q);
    sd_chain_free(c);
    gsl_rng_free(r);
}

/* The plan read off the flow is a coupling of the block laws whose
 * expected common-prefix length is the optimum. */
Test(lp_flow_block, plan_is_an_optimal_coupling)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    for (int it = 0; it < 6; it++) {
        size_t V = 3, G = 3, n = 27;
        sd_chain *c = S_instance(r, it, V, G);
        cr_assert_not_null(c);
        double **P = NULL, **Q = NULL;
        cr_assert_eq(sd_lp_prefix_laws(c, 1, 0, G, 0, &P, NULL), SD_OK);
        cr_assert_eq(sd_lp_prefix_laws(c, 1, 0, G, 1, &Q, NULL), SD_OK);
        sd_lp_result res;
        sd_lp_plan *pl = NULL;
        cr_assert_eq(sd_lp_block_ot(c, 1, 0, G, NULL, &res, &pl, NULL), SD_OK);
        cr_assert(res.optimal && pl);
        cr_expect_str_eq(pl->header, "draft,target,mass");
        double row[27] = {0}, col[27] = {0}, obj = 0.0;
        for (size_t i = 0; i < pl->rows; i++) {
            const size_t *k = pl->keys + i * pl->nkeys;
            size_t x = (k[0] * V + k[1]) * V + k[2], y = (k[3] * V + k[4]) * V + k[5], beta = 0;
            while (beta < G && k[beta] == k[G + beta])
                beta++;
            row[x] += pl->vals[i];
            col[y] += pl->vals[i];
            obj += (double)beta * pl->vals[i];
        }
        for (size_t u = 0; u < n; u++) {
            cr_expect(fabs(row[u] - P[G][u]) < 1e-10, "it %d draft %zu: %.17g vs %.17g", it, u, row[u], P[G][u]);
            cr_expect(fabs(col[u] - Q[G][u]) < 1e-10, "it %d target %zu: %.17g vs %.17g", it, u, col[u], Q[G][u]);
        }
        cr_expect(fabs(obj - res.optimum) < 1e-10, "it %d: plan %.17g optimum %.17g", it, obj, res.optimum);
        sd_lp_plan_free(pl);
        free(P);
        free(Q);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}

Test(lp_flow_tree, flow_equals_simplex_on_random_instances)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2718);
    sd_lp_opts simplex, flow;
    S_methods(&simplex, &flow);
    static const char *const shapes[] = {"2", "3", "2,1", "1,2", "2,2", "1,1,1", "3,1"};
    static const int draws[] = {SD_DRAW_IID, SD_DRAW_WOR, SD_DRAW_TOPK};
    for (int it = 0; it < 24; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 3);
        const char *shape = shapes[gsl_rng_uniform_int(r, sizeof shapes / sizeof *shapes)];
        int draw = draws[it % 3];
        sd_params par;
        sd_params_defaults(&par, NULL);
        cr_assert_eq(sd_params_parse_decl(&par, &sd_tree_decls[SD_TREE_DECL_SHAPE], shape, NULL), SD_OK);
        size_t T = par.tree_depth + 2;
        sd_chain *c = S_instance(r, it, V, T);
        cr_assert_not_null(c);
        sd_lp_result s, f;
        sd_error err;
        cr_assert_eq(sd_lp_tree_ot(c, 1, 0, &par, draw, &simplex, &s, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_ot(c, 1, 0, &par, draw, &flow, &f, &err), SD_OK, "%s", err.msg);
        cr_assert(s.optimal && f.optimal, "it %d: %s / %s", it, s.status, f.status);
        cr_expect(fabs(s.optimum - f.optimum) < S_TOL, "it %d V %zu tree %s draw %d: simplex %.17g flow %.17g", it,
                  V, shape, draw, s.optimum, f.optimum);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}

/* Potentials far from optimal must still be repaired by the phases: a
 * network whose shortest-distance start is not optimal needs several
 * maximum flows; the certified gap closes and the cost is the LP's. */
Test(lp_flow_mincost, phases_reach_the_lp_optimum)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 99);
    typedef struct { double rhs; } vtx;
    typedef struct { double low, cap, cost; } arcd;
    for (int it = 0; it < 20; it++) {
        /* layered DAG: sources -> middle -> sinks, integer costs in [-3, 3] */
        size_t ns = 3 + gsl_rng_uniform_int(r, 5), nm = 3 + gsl_rng_uniform_int(r, 5), nt = 3 + gsl_rng_uniform_int(r, 5);
        size_t nv = ns + nm + nt, na = 0, tail[200], head[200];
        int cost[200];
        double b[40], x[200], sp[16], dm[16];
        S_dist(r, sp, ns, 0.0);
        S_dist(r, dm, nt, 0.0);
        memset(b, 0, sizeof b);
        for (size_t i = 0; i < ns; i++)
            b[i] = sp[i];
        for (size_t j = 0; j < nt; j++)
            b[ns + nm + j] = -dm[j];
        for (size_t i = 0; i < ns; i++)
            for (size_t m = 0; m < nm; m++)
                if (m == 0 || gsl_rng_uniform(r) < 0.5)
                    tail[na] = i, head[na] = ns + m, cost[na++] = (int)gsl_rng_uniform_int(r, 7) - 3;
        for (size_t m = 0; m < nm; m++)
            for (size_t j = 0; j < nt; j++)
                if (m == 0 || gsl_rng_uniform(r) < 0.5)
                    tail[na] = ns + m, head[na] = ns + nm + j, cost[na++] = (int)gsl_rng_uniform_int(r, 7) - 3;
        double c, gap;
        size_t phases;
        cr_assert_eq(sd_lp_flow_mincost(nv, na, tail, head, cost, b, x, &c, &gap, &phases, NULL), SD_OK);
        cr_expect_leq(gap, SD_LP_MCF_GAP, "it %d: gap %g", it, gap);
        /* the same network as an LP (glp_mincost_lp) on the simplex */
        glp_graph *Gr = glp_create_graph((int)sizeof(vtx), (int)sizeof(arcd));
        glp_add_vertices(Gr, (int)nv);
        for (size_t v = 0; v < nv; v++)
            ((vtx *)Gr->v[v + 1]->data)->rhs = b[v];
        for (size_t a = 0; a < na; a++) {
            arcd *d = glp_add_arc(Gr, (int)tail[a] + 1, (int)head[a] + 1)->data;
            d->low = 0.0;
            d->cap = 10.0;
            d->cost = cost[a];
        }
        glp_prob *lp = glp_create_prob();
        glp_mincost_lp(lp, Gr, GLP_OFF, (int)offsetof(vtx, rhs), (int)offsetof(arcd, low),
                       (int)offsetof(arcd, cap), (int)offsetof(arcd, cost));
        glp_smcp sm;
        glp_init_smcp(&sm);
        sm.msg_lev = GLP_MSG_OFF;
        sm.tol_bnd = 1e-10;
        cr_assert_eq(glp_simplex(lp, &sm), 0);
        cr_expect(fabs(glp_get_obj_val(lp) - c) < S_TOL, "it %d: LP %.17g flow %.17g (%zu phases)", it,
                  glp_get_obj_val(lp), c, phases);
        glp_delete_prob(lp);
        glp_delete_graph(Gr);
    }
    gsl_rng_free(r);
}

Test(lp_flow_cli, block_ot_method_plan_and_json)
{
    char *out, *errs;
    const char *base = "lp block-ot --gamma 3 --V 4 --step 2 --state 1 --json";
    char cmd[256];
    double opt[2];
    for (int m = 0; m < 2; m++) {
        snprintf(cmd, sizeof cmd, "%s%s", base, m ? " --method simplex" : "");
        cr_assert_eq(tu_run(cmd, &out, &errs), 0, "%s", errs);
        json_t *j = json_loads(out, 0, NULL);
        cr_assert_not_null(j, "%s", out);
        cr_expect_str_eq(json_string_value(json_object_get(j, "method")), m ? "simplex" : "flow");
        opt[m] = json_number_value(json_object_get(j, "optimum"));
        cr_expect(fabs(json_number_value(json_object_get(json_object_get(j, "reference"), "difference"))) < S_TOL);
        json_decref(j);
        free(out);
        free(errs);
    }
    cr_expect(fabs(opt[0] - opt[1]) < S_TOL, "%.17g vs %.17g", opt[0], opt[1]);
    /* reach: refused today at 5764801 LP variables, 8401 arcs as a flow */
    cr_assert_eq(tu_run("lp block-ot --gamma 4 --V 7", &out, &errs), 0, "%s", errs);
    cr_expect(tu_contains(out, "8401 arcs"), "%s", out);
    free(out);
    free(errs);
    cr_expect_eq(tu_run("lp block-ot --gamma 4 --V 7 --method simplex", &out, &errs), 65);
    cr_expect(tu_contains(errs, "5764801 LP variables"), "%s", errs);
    free(out);
    free(errs);
}

/* ---- valid-verify and tree-valid: forms and simplex routes ------------------ */

/* The form aggregated over draft prefixes and the per-draft form are the
 * same LP up to a path decomposition (lp/valid_verify.c); primal and dual
 * simplex solve either.  All four agree to 1e-9, and with block
 * verification (Sun et al. 2025, Thm 2). */
Test(lp_methods, valid_verify_forms_and_simplex_routes_agree)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1717);
    for (int it = 0; it < 24; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 3), G = 1 + gsl_rng_uniform_int(r, V == 4 ? 2 : 3);
        size_t T = G + 2, t = 1 + gsl_rng_uniform_int(r, T - G), a = gsl_rng_uniform_int(r, V);
        sd_chain *c = S_instance(r, it, V, T);
        cr_assert_not_null(c);
        double e[SD_ACCEPT_NALGO];
        cr_assert_eq(sd_exact_accept_length(c, t, a, G, e, NULL, NULL), SD_OK);
        double opt[4];
        for (int k = 0; k < 4; k++) {
            sd_lp_opts o;
            sd_lp_opts_default(&o);
            o.per_draft = k / 2;
            o.method = k % 2 ? SD_LP_METHOD_DUAL : SD_LP_METHOD_SIMPLEX;
            sd_lp_result res;
            cr_assert_eq(sd_lp_valid_verify(c, t, a, G, &o, &res, NULL, NULL), SD_OK);
            cr_assert(res.optimal, "it %d route %d: %s", it, k, res.status);
            cr_expect_str_eq(res.method, k % 2 ? "dual" : "simplex");
            opt[k] = res.optimum;
            cr_expect(fabs(opt[k] - opt[0]) < S_TOL, "it %d route %d: %.17g vs %.17g", it, k, opt[k], opt[0]);
        }
        cr_expect(fabs(opt[0] - e[SD_ACCEPT_BLOCK]) < S_TOL, "it %d: %.17g vs block %.17g", it, opt[0],
                  e[SD_ACCEPT_BLOCK]);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}

Test(lp_methods, tree_valid_primal_equals_dual)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 808);
    static const char *const shapes[] = {"2", "2,1", "1,2", "2,2", "1,1,1"};
    for (int it = 0; it < 20; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 3);
        const char *shape = shapes[gsl_rng_uniform_int(r, sizeof shapes / sizeof *shapes)];
        sd_params par;
        sd_params_defaults(&par, NULL);
        cr_assert_eq(sd_params_parse_decl(&par, &sd_tree_decls[SD_TREE_DECL_SHAPE], shape, NULL), SD_OK);
        sd_chain *c = S_instance(r, it, V, par.tree_depth + 2);
        cr_assert_not_null(c);
        sd_lp_opts p, d;
        sd_lp_opts_default(&p);
        sd_lp_opts_default(&d);
        p.method = SD_LP_METHOD_SIMPLEX;
        d.method = SD_LP_METHOD_DUAL;
        sd_lp_result a, b;
        int draw = it % 3;
        cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, draw, &p, &a, NULL), SD_OK);
        cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, draw, &d, &b, NULL), SD_OK);
        cr_assert(a.optimal && b.optimal, "it %d: %s / %s", it, a.status, b.status);
        cr_expect(fabs(a.optimum - b.optimum) < S_TOL, "it %d V %zu tree %s: primal %.17g dual %.17g", it, V, shape,
                  a.optimum, b.optimum);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}

/* The plan read off the aggregated form is a valid verifier (Sun et al.
 * 2025, Def. 1): per draft block the law of (τ, y) sums to 1, the first
 * G+1 output tokens have law q, and E[τ] is the optimum. */
Test(lp_methods, valid_verify_plan_is_a_valid_verifier)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 606);
    for (int it = 0; it < 6; it++) {
        size_t V = 3, G = 2, n = 9, nl = 27;
        sd_chain *c = S_instance(r, it, V, G + 1);
        cr_assert_not_null(c);
        double **P = NULL, **Q = NULL;
        cr_assert_eq(sd_lp_prefix_laws(c, 1, 0, G, 0, &P, NULL), SD_OK);
        cr_assert_eq(sd_lp_prefix_laws(c, 1, 0, G + 1, 1, &Q, NULL), SD_OK);
        sd_lp_result res;
        sd_lp_plan *pl = NULL;
        cr_assert_eq(sd_lp_valid_verify(c, 1, 0, G, NULL, &res, &pl, NULL), SD_OK);
        cr_assert(res.optimal && pl);
        double sum[9] = {0}, out[27] = {0}, etau = 0.0;
        for (size_t i = 0; i < pl->rows; i++) {
            const size_t *k = pl->keys + i * pl->nkeys;
            size_t x = k[0] * V + k[1], tau = k[2], y = k[3];
            double w = pl->vals[i], px = P[G][x];
            sum[x] += w;
            etau += px * w * (double)tau;
            /* output o = x^τ y then q: spread over the leaves below x^τ y */
            size_t pre = tau == 0 ? 0 : tau == 1 ? k[0] : x, u = pre * V + y, span = 1;
            for (size_t l = tau + 1; l < G + 1; l++)
                span *= V;
            for (size_t o = u * span; o < (u + 1) * span; o++)
                if (Q[tau + 1][u] > 0)
                    out[o] += px * w * Q[G + 1][o] / Q[tau + 1][u];
        }
        for (size_t x = 0; x < n; x++)
            if (P[G][x] > 0)
                cr_expect(fabs(sum[x] - 1.0) < 1e-9, "it %d draft %zu: %.17g", it, x, sum[x]);
        for (size_t o = 0; o < nl; o++)
            cr_expect(fabs(out[o] - Q[G + 1][o]) < 1e-9, "it %d output %zu: %.17g vs q %.17g", it, o, out[o],
                      Q[G + 1][o]);
        cr_expect(fabs(etau - res.optimum) < 1e-9, "it %d: %.17g vs %.17g", it, etau, res.optimum);
        sd_lp_plan_free(pl);
        free(P);
        free(Q);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}
