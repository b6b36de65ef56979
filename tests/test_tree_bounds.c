/* test_tree_bounds.c — tree-valid's certified bounds beyond exact reach
 * (treelp/tree_bounds.c): the top-down recursion reproduces the
 * enumerated value of every top-down tree verifier (1e-12); on shapes the
 * LP solves, lower <= tree-valid <= tree-ot <= the path-marginal bound
 * (1e-9); at V = 8 the three shapes of the issue answer with bounds. */
#include <criterion/criterion.h>
#include <math.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/exact/sd_exact_tree.h"
#include "test_util.h"

static sd_params S_par(const char *tree, const char *draw)
{
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs");
    sd_params par;
    sd_error err;
    sd_params_defaults(&par, vt);
    cr_assert_eq(sd_params_parse(&par, vt, "tree", tree, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_params_parse(&par, vt, "draw", draw, &err), SD_OK, "%s", err.msg);
    return par;
}

Test(tree_bounds, topdown_recursion_equals_the_enumeration)
{
    static const struct {
        size_t V;
        const char *tree, *draw, *algo;
    } cases[] = {{3, "2,2", "iid", "tree-rrs"}, {4, "2,1,2", "iid", "tree-rrs"}, {3, "3,1", "wor", "tree-rrs-wor"},
                 {4, "2,2", "wor", "tree-rrs-wor"}, {4, "2,2", "topk", "tree-topk"}, {2, "1,2,1", "iid", "tree-rrs"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (unsigned long seed = 1; seed <= 3; seed++) {
            sd_chain *c = tu_chain(cases[i].V, 6, seed);
            sd_params par = S_par(cases[i].tree, cases[i].draw);
            const sd_tree_kind *k = sd_tree_kind_find(cases[i].algo);
            cr_assert_not_null(k);
            sd_error err;
            double rec = NAN, en = NAN;
            int d = (int)sd_tree_draw_of(&par);
            cr_assert_eq(sd_lp_tree_topdown_value(c, 2, 1, &par, d, k, &rec, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_exact_tree_accept(c, 2, 1, &par, k, &en, NULL, &err), SD_OK, "%s", err.msg);
            cr_expect(fabs(rec - en) < 1e-12, "%s V %zu --tree %s seed %lu: recursion %.15f enumeration %.15f",
                      cases[i].algo, cases[i].V, cases[i].tree, seed, rec, en);
            sd_chain_free(c);
        }
}

Test(tree_bounds, bounds_sandwich_the_optimum)
{
    static const struct {
        size_t V;
        const char *tree, *draw;
    } cases[] = {{3, "2,2", "iid"}, {4, "2,1", "iid"}, {3, "1,1,1", "iid"}, {3, "2,1", "wor"}, {4, "2,2", "wor"},
                 {2, "2,1,2", "iid"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (unsigned long seed = 1; seed <= 3; seed++) {
            sd_chain *c = tu_chain(cases[i].V, 6, seed + 40);
            sd_params par = S_par(cases[i].tree, cases[i].draw);
            int d = (int)sd_tree_draw_of(&par);
            sd_error err;
            sd_lp_result rv, ro;
            sd_lp_opts fo;
            sd_lp_opts_default(&fo);
            fo.method = SD_LP_METHOD_FLOW;
            cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, d, NULL, &rv, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_ot(c, 1, 0, &par, d, &fo, &ro, &err), SD_OK, "%s", err.msg);
            sd_lp_tree_bounds b;
            double m = NAN;
            cr_assert_eq(sd_lp_tree_valid_bounds(c, 1, 0, &par, d, &b, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_marginal_bound(c, 1, 0, &par, d, &m, &err), SD_OK, "%s", err.msg);
            cr_assert(rv.optimal && ro.optimal);
            cr_expect(b.lower <= rv.optimum + 1e-9 && rv.optimum <= ro.optimum + 1e-9 && ro.optimum <= m + 1e-9,
                      "V %zu --tree %s --draw %s seed %lu: lower %.12f (%s) tree-valid %.12f tree-ot %.12f "
                      "marginals %.12f", cases[i].V, cases[i].tree, cases[i].draw, seed + 40, b.lower, b.lower_by,
                      rv.optimum, ro.optimum, m);
            cr_expect(fabs(b.upper - ro.optimum) < 1e-9, "enumerable: the upper bound is tree-ot (%s)", b.upper_by);
            sd_chain_free(c);
        }
}

/* On a chain the path-marginal bound is the full-information optimum
 * (Sun et al. 2024, Thm 1), which tree-ot equals. */
Test(tree_bounds, marginals_equal_tree_ot_on_a_chain)
{
    for (unsigned long seed = 1; seed <= 4; seed++) {
        sd_chain *c = tu_chain(4, 6, seed);
        sd_params par = S_par("1,1,1", "iid");
        sd_error err;
        sd_lp_result ro;
        double m = NAN;
        cr_assert_eq(sd_lp_tree_ot(c, 1, 0, &par, SD_DRAW_IID, NULL, &ro, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_marginal_bound(c, 1, 0, &par, SD_DRAW_IID, &m, &err), SD_OK, "%s", err.msg);
        cr_expect(fabs(m - ro.optimum) < 1e-9, "%.12f vs %.12f", m, ro.optimum);
        sd_chain_free(c);
    }
}

/* The recursive transport verifier (a restricted LP, lossless): at least
 * every top-down tree verifier, at most tree-valid (1e-9); at depth 1 with
 * i.i.d. drafts it is OTM-k, tree-valid itself. */
Test(tree_bounds, recursive_transport_between_topdown_and_the_optimum)
{
    static const struct {
        size_t V;
        const char *tree, *draw, *algo;
    } cases[] = {{3, "2,2", "iid", "tree-rrs"}, {4, "2,1", "iid", "tree-rrs"}, {3, "2,1", "wor", "tree-rrs-wor"},
                 {4, "2,2", "wor", "tree-rrs-wor"}, {4, "2,2", "topk", "tree-topk"}, {4, "3", "iid", "tree-rrs"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (unsigned long seed = 1; seed <= 3; seed++) {
            sd_chain *c = tu_chain(cases[i].V, 6, seed + 60);
            sd_params par = S_par(cases[i].tree, cases[i].draw);
            int d = (int)sd_tree_draw_of(&par);
            sd_error err;
            double rt = NAN, td = NAN;
            sd_lp_result rv;
            cr_assert_eq(sd_lp_tree_transport_value(c, 1, 0, &par, d, &rt, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_topdown_value(c, 1, 0, &par, d, sd_tree_kind_find(cases[i].algo), &td, &err),
                         SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, d, NULL, &rv, &err), SD_OK, "%s", err.msg);
            cr_assert(rv.optimal);
            cr_expect(td <= rt + 1e-9 && rt <= rv.optimum + 1e-9, "V %zu --tree %s --draw %s seed %lu: %s %.12f, "
                      "transport %.12f, tree-valid %.12f", cases[i].V, cases[i].tree, cases[i].draw, seed + 60,
                      cases[i].algo, td, rt, rv.optimum);
            if (par.tree_depth == 1 && d == SD_DRAW_IID)
                cr_expect(fabs(rt - rv.optimum) < 1e-9, "depth 1: %.12f vs %.12f", rt, rv.optimum);
            sd_chain_free(c);
        }
}

/* V = 8, --tree 2,2,2 / 3,2 / 4,2 (10^8 to 10^12 drafted trees): bounds,
 * lower from the recursive transport verifier, upper from the marginals,
 * at once. */
Test(tree_bounds, beyond_reach_at_v8)
{
    static const char *const shapes[] = {"2,2,2", "3,2", "4,2"};
    sd_chain *c = tu_chain(8, 6, 5);
    for (size_t i = 0; i < 3; i++) {
        sd_params par = S_par(shapes[i], "iid");
        sd_error err;
        sd_lp_result r;
        cr_expect_eq(sd_lp_tree_valid(c, 1, 0, &par, SD_DRAW_IID, NULL, &r, &err), SD_ETOOBIG, "--tree %s",
                     shapes[i]);
        sd_lp_tree_bounds b;
        cr_assert_eq(sd_lp_tree_valid_bounds(c, 1, 0, &par, SD_DRAW_IID, &b, &err), SD_OK, "%s", err.msg);
        cr_expect(b.lower > 0 && b.lower <= b.upper && b.upper <= par.tree_depth, "%s: %.12f %.12f", shapes[i],
                  b.lower, b.upper);
        cr_expect_str_eq(b.lower_by, "recursive transport (a restricted LP)");
        cr_expect_str_eq(b.upper_by, "path marginals");
        cr_expect(b.seconds < 10.0);
    }
    sd_chain_free(c);
}

/* The CLI answers beyond exact reach with bounds: exit 0, status
 * "bounds", lower <= upper, gap = upper - lower, optimum null. */
#include <jansson.h>

Test(tree_bounds, cli_reports_bounds_as_json)
{
    char *out = NULL;
    cr_assert_eq(tu_run("lp tree-valid --tree 3,2 --V 8 --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s", out);
    cr_expect_str_eq(json_string_value(json_object_get(j, "status")), "bounds");
    double lo = json_number_value(json_object_get(j, "lower")), up = json_number_value(json_object_get(j, "upper"));
    cr_expect(lo > 0 && lo <= up, "%s", out);
    cr_expect(fabs(json_number_value(json_object_get(j, "gap")) - (up - lo)) < 1e-12);
    cr_expect(json_is_null(json_object_get(j, "optimum")));
    json_decref(j);
    free(out);
}
