/* test_tree_lp.c — tree-lp, the verifier that plays the optimal plan of
 * tree-valid's LP (sims/verifiers/tree_lp.c, treelp/tree_valid.c):
 * lossless by the exact law of the first L output tokens (TV <= 1e-12, the
 * LP's validity rows at work) and by check's chi-square; its exact value
 * from a context is the LP's optimum (1e-9), and its Monte-Carlo mean
 * meets the optimum within 4 standard errors (a two-sided 6e-5
 * false-alarm rate; fixed seeds).  broken-tree-lp (emits from q after the
 * plan's stop) is flagged by both. */
#include <criterion/criterion.h>
#include <math.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_exact_tree.h"
#include "test_util.h"
#include "tu_rules.h"

static const struct {
    size_t V, T;
    const char *tree, *draw;
} S_cases[] = {{3, 5, "2,1", "iid"}, {3, 5, "2,2", "wor"}, {2, 5, "1,2", "iid"}, {4, 4, "2,1", "topk"}};

Test(tree_lp, exact_law_is_the_target_and_value_is_the_optimum)
{
    sd_treelp_install();
    const sd_verifier_type *vt = sd_verifier_find("tree-lp");
    cr_assert_not_null(vt);
    for (size_t i = 0; i < sizeof S_cases / sizeof *S_cases; i++) {
        sd_chain *c = tu_chain(S_cases[i].V, S_cases[i].T, 7 + i);
        sd_params par = tu_rule_par(vt, S_cases[i].tree, S_cases[i].draw);
        sd_error err;
        double tv = NAN;
        cr_assert_eq(sd_exact_gen_prefix_tv(vt, c, &par, 3, 1u << 16, &tv, &err), SD_OK, "%s", err.msg);
        cr_expect(tv <= 1e-12, "--tree %s --draw %s: exact TV %.3g", S_cases[i].tree, S_cases[i].draw, tv);
        double ex = NAN;
        sd_lp_result r;
        sd_lp_opts o;
        sd_lp_opts_default(&o);
        o.method = SD_LP_METHOD_SIMPLEX;
        int d = (int)sd_tree_draw_of(&par);
        cr_assert_eq(sd_exact_tree_accept(c, 1, 0, &par, vt->tree, &ex, NULL, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_valid_lp(c, 1, 0, &par, d, &o, &r, &err), SD_OK, "%s", err.msg);
        cr_expect(r.optimal && fabs(ex - r.optimum) < 1e-9, "--tree %s --draw %s: tree-lp %.12f, LP %.12f",
                  S_cases[i].tree, S_cases[i].draw, ex, r.optimum);
        sd_chain_free(c);
    }
}

Test(tree_lp, broken_control_is_flagged_exactly)
{
    sd_treelp_install();
    const sd_verifier_type *vt = sd_verifier_find("broken-tree-lp");
    cr_assert_not_null(vt);
    sd_chain *c = tu_chain(3, 5, 7);
    sd_params par = tu_rule_par(vt, "2,1", "iid");
    sd_error err;
    double tv = NAN;
    cr_assert_eq(sd_exact_gen_prefix_tv(vt, c, &par, 3, 1u << 16, &tv, &err), SD_OK, "%s", err.msg);
    cr_expect(tv > 1e-3, "broken-tree-lp: exact TV %.3g", tv);
    sd_chain_free(c);
}

static int S_chi_unbiased(const char *name, unsigned long seed)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    sd_chain *c = tu_chain(3, 5, 7);
    sd_params par = tu_rule_par(vt, "2,1", "iid");
    sd_check_opts o;
    sd_check_defaults(&o);
    o.seed = seed;
    o.trials = 100000;
    o.L = 3;
    sd_check_result r;
    sd_error err;
    cr_assert_eq(sd_check_run(vt, c, &par, &o, &r, &err), SD_OK, "%s: %s", name, err.msg);
    int u = r.unbiased;
    sd_check_result_free(&r);
    sd_chain_free(c);
    return u;
}

Test(tree_lp, check_says_lossless_and_flags_the_control)
{
    sd_treelp_install();
    cr_expect(S_chi_unbiased("tree-lp", 31), "tree-lp flagged by check");
    cr_expect(!S_chi_unbiased("broken-tree-lp", 32), "broken-tree-lp passed check");
}

/* Monte-Carlo: the mean accepted length of the first iteration (x_0 ~
 * init, position 1) against the LP's optimum averaged over x_0. */
Test(tree_lp, monte_carlo_meets_the_optimum)
{
    sd_treelp_install();
    const sd_verifier_type *vt = sd_verifier_find("tree-lp");
    for (size_t i = 0; i < sizeof S_cases / sizeof *S_cases; i++) {
        sd_params par = tu_rule_par(vt, S_cases[i].tree, S_cases[i].draw);
        sd_chain *c = tu_chain(S_cases[i].V, par.tree_depth + 1, 11 + i);
        sd_error err;
        /* the optimum averaged over the first context x_0 ~ init */
        double want = 0.0;
        for (size_t a = 0; a < c->V; a++) {
            sd_lp_result r;
            cr_assert_eq(sd_lp_tree_valid(c, 1, a, &par, (int)sd_tree_draw_of(&par), NULL, &r, &err), SD_OK, "%s",
                         err.msg);
            cr_assert(r.optimal);
            want += c->init[a] * r.optimum;
        }
        sd_sim_opts o = {.seed = 41 + i, .trials = 100000, .threads = 1, .stop = {.first_iteration = 1}};
        sd_sim_result sr;
        cr_assert_eq(sd_sim_run(vt, c, &par, &o, &sr, &err), SD_OK, "%s", err.msg);
        double se = sqrt(sr.accepted.m2 / (sr.accepted.n - 1) / sr.accepted.n);
        /* se = 0 when every trial accepts the whole tree (then the optimum
         * is the depth itself, met exactly) */
        cr_expect(se > 0 ? fabs(sr.accepted.mean - want) < 4 * se : fabs(sr.accepted.mean - want) < 1e-12, "--tree %s --draw %s: %.6f +- %.6f, optimum %.6f",
                  S_cases[i].tree, S_cases[i].draw, sr.accepted.mean, se, want);
        sd_sim_result_free(&sr);
        sd_chain_free(c);
    }
}
