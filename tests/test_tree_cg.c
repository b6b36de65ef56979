/* test_tree_cg.c — tree-valid by the Lagrangian's column generation
 * (treelp/tree_lagrange.c): from its start (stop at the root, the
 * first-child coupling rule, the duals boxed around the best point) it
 * reaches the enumerating LP's optimum (treelp/tree_valid.c) within 1e-9
 * on small shapes at V = 4-5, with a primal point and a dual bound that
 * meet within 1e-9 (the bounds' `exact`); beyond the enumeration, `lp
 * tree-valid` reports such an answer as status optimal, method
 * lagrangian-cg, with its certificate in table, JSON and CSV. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/engine/sd_verifier.h"
#include "test_util.h"
#include "tu_rules.h"

/* Shapes the enumerating LP solves in well under a second each; depth 2
 * and 3, iid and wor.  The column generation gets 10 s each (it needs
 * about 0.1 s idle); not converging is a failure. */
Test(tree_cg, column_generation_meets_the_enumerating_lp)
{
    static const struct {
        size_t V;
        const char *tree, *draw;
        unsigned long seed;
    } cases[] = {{4, "2,2", "iid", 1}, {5, "2,2", "iid", 2}, {4, "3,1", "iid", 3}, {4, "2,1,1", "iid", 4},
                 {4, "2,2", "wor", 5}, {5, "2,1", "wor", 6}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sd_chain *c = tu_chain(cases[i].V, 6, cases[i].seed + 90);
        sd_params par = tu_tree_par(cases[i].tree, cases[i].draw);
        int d = (int)sd_tree_draw_of(&par);
        sd_error err;
        sd_lp_result rv;
        sd_lp_opts lo;
        sd_lp_opts_default(&lo);
        lo.method = SD_LP_METHOD_CLP; /* the enumerating LP, never the tree-ot shortcut */
        cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, d, &lo, &rv, &err), SD_OK, "%s", err.msg);
        cr_assert(rv.optimal, "V %zu --tree %s: the enumerating LP ended '%s'", cases[i].V, cases[i].tree,
                  rv.status);
        sd_lp_tree_bounds_opts bo;
        sd_lp_tree_bounds_opts_default(&bo);
        bo.lagrange_seconds = 60.0; /* a guard: about 0.5 s a case idle */
        sd_lp_tree_bounds b;
        cr_assert_eq(sd_lp_tree_valid_bounds_opts(c, 1, 0, &par, d, &bo, &b, &err), SD_OK, "%s", err.msg);
        cr_expect(b.exact, "V %zu --tree %s --draw %s: not certified (lower %.12f by %s, upper %.12f by %s, %s)",
                  cases[i].V, cases[i].tree, cases[i].draw, b.lower, b.lower_by, b.upper, b.upper_by,
                  b.lagrange.converged ? "converged" : "not converged");
        cr_expect(fabs(b.lagrange.primal - rv.optimum) <= 1e-9 && fabs(b.lagrange.value - rv.optimum) <= 1e-9,
                  "V %zu --tree %s --draw %s: primal %.12f, dual bound %.12f, enumerating LP %.12f", cases[i].V,
                  cases[i].tree, cases[i].draw, b.lagrange.primal, b.lagrange.value, rv.optimum);
        cr_expect(b.lagrange.primal_residual <= 1e-9, "residual %.1e", b.lagrange.primal_residual);
        cr_log_info("V %zu --tree %s --draw %s: LP %.12f, column generation [%.12f, %.12f] in %.2f s", cases[i].V,
                    cases[i].tree, cases[i].draw, rv.optimum, b.lagrange.primal, b.lagrange.value,
                    b.lagrange.seconds);
        sd_chain_free(c);
    }
}

/* Beyond the enumeration (V = 8 --tree 4,2: 1.3e8... drafted trees), the
 * certified answer is status optimal with method lagrangian-cg, in every
 * output format; optimum = the primal point, within 1e-9 of dual_bound. */
Test(tree_cg, lp_reports_optimal_with_its_certificate, .timeout = 120)
{
    char *out = NULL;
    cr_assert_eq(tu_run("lp tree-valid --tree 4,2 --V 8 --json", &out, NULL), 0);
    cr_expect(tu_contains(out, "\"status\": \"optimal\""), "%s", out);
    cr_expect(tu_contains(out, "\"method\": \"lagrangian-cg\""), "%s", out);
    const char *db = strstr(out, "\"dual_bound\": "), *op = strstr(out, "\"optimum\": ");
    cr_assert(db && op, "%s", out);
    double dual = strtod(db + strlen("\"dual_bound\": "), NULL), opt = strtod(op + strlen("\"optimum\": "), NULL);
    cr_expect(fabs(dual - opt) <= 1e-9 && opt > 1.0, "optimum %.15f dual bound %.15f", opt, dual);
    free(out);
    out = NULL;
    cr_assert_eq(tu_run("lp tree-valid --tree 4,2 --V 8 --csv", &out, NULL), 0);
    cr_expect(tu_contains(out, "status,method,optimum,dual_bound,primal_residual"), "%s", out);
    cr_expect(tu_contains(out, ",optimal,lagrangian-cg,"), "%s", out);
    free(out);
    out = NULL;
    cr_assert_eq(tu_run("lp tree-valid --tree 4,2 --V 8", &out, NULL), 0);
    cr_expect(tu_contains(out, "status       optimal"), "%s", out);
    cr_expect(tu_contains(out, "certificate  primal "), "%s", out);
    free(out);
}

/* Not converged within --time-limit: the bounds stay (status bounds); the
 * table's optimum line points to them instead of printing nan. */
Test(tree_cg, bounds_when_the_time_runs_out, .timeout = 120)
{
    char *out = NULL;
    cr_assert_eq(tu_run("lp tree-valid --tree 2,2,2 --V 8 --time-limit 0.5 --csv", &out, NULL), 0);
    cr_expect(tu_contains(out, ",bounds,bounds,"), "%s", out);
    free(out);
    out = NULL;
    cr_assert_eq(tu_run("lp tree-valid --tree 2,2,2 --V 8 --time-limit 0.5", &out, NULL), 0);
    cr_expect(tu_contains(out, "status       bounds"), "%s", out);
    cr_expect(tu_contains(out, "optimum      within [lower, upper] above"), "%s", out);
    cr_expect(!tu_contains(out, "nan"), "%s", out);
    free(out);
}

/* Stopped early (a few master solves, the duals still held in the box), the
 * master's mixture of stop rules is made a point of the LP by stopping
 * earlier where a subtree holds too much stop mass: its residual is at most
 * 1e-9 at every stop and its value at most the enumerating LP's optimum
 * (a point of the LP cannot exceed it), so it is a lower bound however
 * early the column generation ends; and at least the first-child coupling
 * rule's value is reached as the rounds go on (never below the previous
 * round's). */
Test(tree_cg, the_master_point_is_a_point_of_the_lp_at_every_stop)
{
    static const struct {
        size_t V;
        const char *tree, *draw;
        unsigned long seed;
    } cases[] = {{4, "2,2", "iid", 1}, {5, "2,2", "iid", 2}, {4, "2,1,1", "iid", 4}, {4, "2,2", "wor", 5},
                 {5, "2,1", "wor", 6}, {3, "1,2,2", "iid", 7}};
    static const size_t stops[] = {12, 22, 42, 82};
    size_t early = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sd_chain *c = tu_chain(cases[i].V, 6, cases[i].seed + 90);
        sd_params par = tu_tree_par(cases[i].tree, cases[i].draw);
        int d = (int)sd_tree_draw_of(&par);
        sd_error err;
        sd_lp_result rv;
        sd_lp_opts lo;
        sd_lp_opts_default(&lo);
        lo.method = SD_LP_METHOD_CLP;
        cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, d, &lo, &rv, &err), SD_OK, "%s", err.msg);
        cr_assert(rv.optimal);
        sd_lp_tree_lagrange *g = NULL;
        cr_assert_eq(sd_lp_tree_lagrange_new(c, 1, 0, &par, d, &g, &err), SD_OK, "%s", err.msg);
        size_t N = sd_lp_tree_lagrange_dim(g);
        double *lam = calloc(N, sizeof *lam), prev = -INFINITY;
        cr_assert_not_null(lam);
        for (size_t s = 0; s < sizeof stops / sizeof *stops; s++) {
            memset(lam, 0, N * sizeof *lam);
            sd_lp_tree_lagrange_info info;
            cr_assert_eq(sd_lp_tree_lagrange_min(g, lam, 30.0, stops[s], NAN, &info, &err), SD_OK, "%s", err.msg);
            early += !info.converged;
            cr_expect(info.primal_residual <= 1e-9, "V %zu --tree %s --draw %s, %zu evaluations: residual %.1e",
                      cases[i].V, cases[i].tree, cases[i].draw, stops[s], info.primal_residual);
            cr_expect(info.primal <= rv.optimum + 1e-9 && info.primal <= info.value + 1e-9,
                      "V %zu --tree %s --draw %s, %zu evaluations: primal %.12f above the LP %.12f or L %.12f",
                      cases[i].V, cases[i].tree, cases[i].draw, stops[s], info.primal, rv.optimum, info.value);
            cr_expect(info.primal >= prev - 1e-12, "V %zu --tree %s: primal %.12f after %zu evaluations, %.12f before",
                      cases[i].V, cases[i].tree, info.primal, stops[s], prev);
            prev = info.primal;
        }
        cr_log_info("V %zu --tree %s --draw %s: LP %.12f, primal after %zu evaluations %.12f", cases[i].V,
                    cases[i].tree, cases[i].draw, rv.optimum, stops[3], prev);
        free(lam);
        sd_lp_tree_lagrange_free(g);
        sd_chain_free(c);
    }
    cr_expect(early >= 12, "only %zu of 24 runs stopped before converging", early);
}
