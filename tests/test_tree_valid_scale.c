/* test_tree_valid_scale.c — tree-valid on COIN-OR CLP (--method clp,
 * lp/sd_lp_clp.h) against GLPK's primal simplex: the same optimum within
 * 1e-9 on random small shapes, and CLP's certificate (the weak-duality
 * bound recomputed from its duals, the primal residual) within 1e-9. */
#include <criterion/criterion.h>
#include <math.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "test_util.h"

Test(tree_valid_scale, clp_equals_glpk_with_its_certificate)
{
    static const struct {
        size_t V;
        const char *tree, *draw;
    } cases[] = {{3, "2,2", "iid"}, {4, "2,1", "iid"}, {3, "1,1,1", "iid"}, {3, "2,1", "wor"}, {4, "1,2", "wor"},
                 {3, "3,2", "iid"}};
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs");
    cr_assert_not_null(vt);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (unsigned long seed = 1; seed <= 3; seed++) {
            sd_chain *c = tu_chain(cases[i].V, 6, seed);
            sd_params par;
            sd_error err;
            sd_params_defaults(&par, vt);
            cr_assert_eq(sd_params_parse(&par, vt, "tree", cases[i].tree, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_params_parse(&par, vt, "draw", cases[i].draw, &err), SD_OK, "%s", err.msg);
            int d = (int)sd_tree_draw_of(&par);
            sd_lp_opts g, k;
            sd_lp_opts_default(&g);
            sd_lp_opts_default(&k);
            g.method = SD_LP_METHOD_SIMPLEX;
            k.method = SD_LP_METHOD_CLP;
            sd_lp_result rg, rk;
            cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, d, &g, &rg, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, d, &k, &rk, &err), SD_OK, "%s", err.msg);
            cr_expect(rg.optimal && rk.optimal, "V %zu --tree %s: %s / %s", cases[i].V, cases[i].tree, rg.status,
                      rk.status);
            cr_expect_str_eq(rk.method, "clp");
            cr_expect(fabs(rg.optimum - rk.optimum) < 1e-9, "V %zu --tree %s --draw %s seed %lu: glpk %.12f clp %.12f",
                      cases[i].V, cases[i].tree, cases[i].draw, seed, rg.optimum, rk.optimum);
            cr_expect(fabs(rk.dual_bound - rk.optimum) <= 1e-9 && rk.primal_residual <= 1e-9,
                      "dual bound %.12f primal %.12f residual %.2e", rk.dual_bound, rk.optimum, rk.primal_residual);
            cr_expect(isnan(rg.dual_bound), "GLPK's result carries no CLP certificate");
            sd_chain_free(c);
        }
}

/* The aggregated form (one variable per path set and stop node; the
 * default) against the per-output form (one per path set, stop node and
 * emitted token; opts.per_draft), both on GLPK's primal simplex: the same
 * optimum within 1e-9 on random chains, shapes to depth 3, iid and wor. */
Test(tree_valid_scale, aggregated_form_equals_per_output_form)
{
    static const struct {
        size_t V;
        const char *tree, *draw;
    } cases[] = {{3, "2,2", "iid"}, {4, "2,1", "iid"}, {3, "1,1,1", "iid"}, {3, "2,1", "wor"},
                 {4, "1,2", "wor"}, {3, "3,2", "iid"}, {2, "2,1,2", "iid"}, {3, "2,2", "wor"}};
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (unsigned long seed = 1; seed <= 3; seed++) {
            sd_chain *c = tu_chain(cases[i].V, 6, seed + 20);
            sd_params par;
            sd_error err;
            sd_params_defaults(&par, vt);
            cr_assert_eq(sd_params_parse(&par, vt, "tree", cases[i].tree, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_params_parse(&par, vt, "draw", cases[i].draw, &err), SD_OK, "%s", err.msg);
            int d = (int)sd_tree_draw_of(&par);
            sd_lp_opts ag, po;
            sd_lp_opts_default(&ag);
            sd_lp_opts_default(&po);
            ag.method = po.method = SD_LP_METHOD_SIMPLEX;
            po.per_draft = 1;
            sd_lp_result ra, rp;
            cr_assert_eq(sd_lp_tree_valid_lp(c, 1, 0, &par, d, &ag, &ra, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_valid_lp(c, 1, 0, &par, d, &po, &rp, &err), SD_OK, "%s", err.msg);
            cr_expect(ra.optimal && rp.optimal, "%s / %s", ra.status, rp.status);
            cr_expect(ra.variables < rp.variables, "aggregated %zu variables, per-output %zu", ra.variables,
                      rp.variables);
            cr_expect(fabs(ra.optimum - rp.optimum) < 1e-9, "V %zu --tree %s --draw %s seed %lu: %.12f vs %.12f",
                      cases[i].V, cases[i].tree, cases[i].draw, seed + 20, ra.optimum, rp.optimum);
            sd_chain_free(c);
        }
}

/* Depth 1 with i.i.d. drafts is routed to OTM-k's sorted prefix (no
 * enumeration): equal to the LP at small V within 1e-9, and answered at
 * k = 8, V = 1000 (1.5e19 drafted sets). */
Test(tree_valid_scale, depth_one_iid_needs_no_enumeration)
{
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs");
    sd_error err;
    for (unsigned long seed = 1; seed <= 4; seed++) {
        sd_chain *c = tu_chain(5, 4, seed);
        sd_params par;
        sd_params_defaults(&par, vt);
        cr_assert_eq(sd_params_parse(&par, vt, "tree", "3", &err), SD_OK, "%s", err.msg);
        sd_lp_opts lp;
        sd_lp_opts_default(&lp);
        lp.method = SD_LP_METHOD_SIMPLEX;
        sd_lp_result rr, rl;
        cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, SD_DRAW_IID, NULL, &rr, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, SD_DRAW_IID, &lp, &rl, &err), SD_OK, "%s", err.msg);
        cr_expect_str_eq(rr.method, "otm-prefix");
        cr_expect(rr.optimal && rl.optimal && fabs(rr.optimum - rl.optimum) < 1e-9, "%.12f vs LP %.12f", rr.optimum,
                  rl.optimum);
        sd_chain_free(c);
    }
    sd_chain *c = tu_chain(1000, 2, 3);
    sd_params par;
    sd_params_defaults(&par, vt);
    cr_assert_eq(sd_params_parse(&par, vt, "tree", "8", &err), SD_OK, "%s", err.msg);
    sd_lp_result r;
    cr_assert_eq(sd_lp_tree_valid(c, 1, 0, &par, SD_DRAW_IID, NULL, &r, &err), SD_OK, "%s", err.msg);
    cr_expect(r.optimal && r.optimum > 0 && r.optimum <= 1, "%s %.12f", r.status, r.optimum);
    sd_chain_free(c);
}
