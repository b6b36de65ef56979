/* test_univer.c — univer (our reading of UniVer, Weng, Hu and Yairi 2026;
 * sims/verifiers/univer.c, the rule SD_TREE_SCALED of sd_tree.c) and its
 * control broken-univer: lossless exactly (check --exact's law) and by
 * check, the control flagged, exact values against Monte-Carlo, its
 * reductions (wor: traversal; a chain: block verification), the ordering
 * exact <= tree-valid <= tree-ot, and the paper's comparison with
 * recursive rejection sampling without replacement and with traversal.
 *
 * Seeds are fixed.  check fails a lossless verifier with probability
 * alpha = 1e-3 per run, so a failure is a finding, never a reason to change
 * a seed.  Monte-Carlo means are compared with exact values within 4
 * standard errors (a false alarm about 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../sims/verifiers/sd_tree.h"
#include "../src/sd_exact_accept.h"
#include "test_util.h"
#include "tu_rules.h"

/* E[accepted path] of the first iteration from (t, a) by enumeration. */
static double S_acc(const sd_chain *c, size_t t, size_t a, const char *algo, const char *tree, const char *draw)
{
    sd_params par = tu_rule_par(tu_rule_vt(algo), tree, draw);
    double ex;
    sd_error err;
    cr_assert_eq(sd_exact_tree_accept(c, t, a, &par, sd_tree_kind_find(algo), &ex, NULL, &err), SD_OK, "%s: %s",
                 algo, err.msg);
    return ex;
}

static const char *const S_shapes[] = {"1", "3", "2,2", "3,1", "1,2,1", "2,1,1"};
#define S_NSHAPES (sizeof S_shapes / sizeof *S_shapes)

/* check --exact: the law of x_1..x_3 by the DP over the iteration laws is
 * the target's to 1e-12 for univer with both drafting rules, on a chain
 * with zeros in p and q and on a plain one; broken-univer is biased
 * (> 1e-9) on one of them wherever a node has two i.i.d. children. */
Test(univer, exact_law_is_the_target_law_and_the_control_is_biased, .timeout = 120)
{
    sd_chain *cs[2] = {tu_zero_chain(3, 4, 2), tu_chain(4, 4, 5)};
    cr_assert(cs[0] && cs[1]);
    const sd_verifier_type *u = tu_rule_vt("univer"), *bk = tu_rule_vt("broken-univer");
    for (size_t s = 0; s < S_NSHAPES; s++) {
        for (int iid = 0; iid < 2; iid++) {
            sd_params par = tu_rule_par(u, S_shapes[s], iid ? "iid" : "wor");
            for (int j = 0; j < 2; j++) {
                double tv;
                sd_error err;
                cr_assert_eq(sd_exact_gen_prefix_tv(u, cs[j], &par, 3, 1u << 20, &tv, &err), SD_OK, "%s", err.msg);
                cr_expect(tv <= 1e-12, "univer --tree %s --draw %s, chain %d: exact TV %.3g", S_shapes[s],
                          iid ? "iid" : "wor", j, tv);
            }
        }
        sd_params par = tu_rule_par(bk, S_shapes[s], NULL);
        double tv[2];
        sd_error err;
        for (int j = 0; j < 2; j++)
            cr_assert_eq(sd_exact_gen_prefix_tv(bk, cs[j], &par, 3, 1u << 20, &tv[j], &err), SD_OK, "%s", err.msg);
        int wide = 0;
        for (size_t l = 0; l < par.tree_depth; l++)
            wide |= par.tree[l] >= 2;
        if (wide)
            cr_expect(tv[0] > 1e-9 || tv[1] > 1e-9, "broken-univer --tree %s: exact TV %.3g, %.3g", S_shapes[s], tv[0],
                      tv[1]);
        else /* one child everywhere: rho = 1 is k-Seq's own value, no bug */
            cr_expect(tv[0] <= 1e-12 && tv[1] <= 1e-12);
    }
    sd_chain_free(cs[0]);
    sd_chain_free(cs[1]);
}

/* The statistical check (what `run` executes) agrees: univer passes, the
 * control is flagged. */
Test(univer, check_passes_univer_and_flags_broken_univer, .timeout = 120)
{
    sd_chain *z = tu_zero_chain(4, 3, 13), *c = tu_chain(4, 3, 5);
    double pv;
    static const char *const shapes[] = {"2,2", "3,1"};
    for (size_t s = 0; s < 2; s++)
        for (int iid = 0; iid < 2; iid++) {
            sd_params par = tu_rule_par(tu_rule_vt("univer"), shapes[s], iid ? "iid" : "wor");
            cr_expect(tu_check(tu_rule_vt("univer"), &par, z, 41 + 2 * s + (size_t)iid, 60000, 3, &pv),
                      "univer --tree %s --draw %s: p-value %.3g", shapes[s], iid ? "iid" : "wor", pv);
        }
    const sd_verifier_type *bk = tu_rule_vt("broken-univer");
    cr_expect(bk->flags & SD_VERIFIER_CONTROL);
    sd_params par = tu_rule_par(bk, "3,1", NULL);
    cr_expect(!tu_check(bk, &par, c, 9, 200000, 2, &pv), "broken-univer not flagged (p-value %.3g)", pv);
    sd_chain_free(z);
    sd_chain_free(c);
}

/* Exact accepted length of the first iteration against the trial engine,
 * and exact whole-generation target calls against `run`. */
Test(univer, exact_values_within_4_se_of_monte_carlo)
{
    sd_chain *c = tu_chain(4, 4, 9);
    sd_model m = sd_model_of_chain(c);
    const sd_verifier_type *vt = tu_rule_vt("univer");
    static const char *const shapes[] = {"2,2", "3,1"};
    for (size_t s = 0; s < 2; s++)
        for (int iid = 0; iid < 2; iid++) {
            sd_params par = tu_rule_par(vt, shapes[s], iid ? "iid" : "wor");
            double ex = S_acc(c, 1, 3, "univer", shapes[s], iid ? "iid" : "wor");
            sd_sim_job job = {vt, &m, &par};
            sd_sim_opts so = {.seed = 31 + s, .trials = 40000, .threads = 1,
                              .stop = {.first_iteration = 1, .fixed_prev = 1, .prev = 3}};
            sd_sim_result res;
            sd_error err;
            cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
            double se = sd_welford_stderr(&res.accepted);
            cr_expect(fabs(res.accepted.mean - ex) < 4 * se, "univer --tree %s --draw %s: MC %.6f +- %.6f, exact %.6f",
                      shapes[s], iid ? "iid" : "wor", res.accepted.mean, se, ex);
            sd_sim_result_free(&res);
            sd_exact_values ev;
            cr_assert_eq(vt->exact(&m, &par, &ev, &err), SD_OK, "%s", err.msg);
            sd_sim_opts so2 = {.seed = 77 + s, .trials = 30000};
            cr_assert_eq(sd_sim_run_job(&job, &so2, &res, &err), SD_OK, "%s", err.msg);
            double sc = sd_welford_stderr(&res.target_calls);
            cr_expect(fabs(res.target_calls.mean - ev.target_calls) < 4 * sc, "calls %.5f +- %.5f vs exact %.5f",
                      res.target_calls.mean, sc, ev.target_calls);
            sd_sim_result_free(&res);
        }
    sd_chain_free(c);
}

/* Reductions, exactly from several contexts: with wor siblings the scaled
 * plan is traversal's; on a chain both rules are block verification (Sun
 * et al. 2025), as UniVer's unification should give. */
Test(univer, wor_is_traversal_and_a_chain_is_block_verification)
{
    sd_chain *c = tu_chain(4, 6, 21);
    static const char *const shapes[] = {"2,2", "3,1", "1,2,1", "2,1,1", "4"};
    for (size_t s = 0; s < 5; s++)
        for (size_t a = 0; a < 4; a++) {
            double u = S_acc(c, 2, a, "univer", shapes[s], "wor"), t = S_acc(c, 2, a, "traversal", shapes[s], "wor");
            cr_expect(fabs(u - t) < 1e-12, "--tree %s from %zu: univer %.15f traversal %.15f", shapes[s], a, u, t);
        }
    static const char *const chains[] = {"1", "1,1", "1,1,1", "1,1,1,1"};
    for (size_t g = 1; g <= 4; g++)
        for (size_t a = 0; a < 4; a++) {
            double e[SD_ACCEPT_NALGO];
            cr_assert_eq(sd_exact_accept_length(c, 2, a, g, e, NULL, NULL), SD_OK);
            for (int iid = 0; iid < 2; iid++) {
                double u = S_acc(c, 2, a, "univer", chains[g - 1], iid ? "iid" : "wor");
                cr_expect(fabs(u - e[SD_ACCEPT_BLOCK]) < 1e-12, "gamma %zu from %zu: univer %.15f block %.15f", g, a, u,
                          e[SD_ACCEPT_BLOCK]);
            }
        }
    sd_chain_free(c);
}

/* The optimum of its class bounds it: exact <= tree-valid (the best lossless
 * verifier of the drafted tree) <= tree-ot (the best coupling). */
Test(univer, exact_at_most_tree_valid_at_most_tree_ot, .timeout = 120)
{
    sd_chain *c = tu_chain(3, 5, 8);
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    static const char *const shapes[] = {"2,2", "3,1", "1,2", "2,1,1"};
    for (size_t s = 0; s < 4; s++)
        for (int draw = SD_DRAW_IID; draw <= SD_DRAW_WOR; draw++) {
            sd_params par = tu_rule_par(tu_rule_vt("univer"), shapes[s], sd_tree_draw_name((sd_tree_draw)draw));
            double ex = S_acc(c, 1, 2, "univer", shapes[s], sd_tree_draw_name((sd_tree_draw)draw));
            sd_lp_result tv, ot;
            sd_error err;
            cr_assert_eq(sd_lp_tree_valid(c, 1, 2, &par, draw, &lo, &tv, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_ot(c, 1, 2, &par, draw, &lo, &ot, &err), SD_OK, "%s", err.msg);
            cr_assert(tv.optimal && ot.optimal);
            cr_expect(ex <= tv.optimum + 1e-9 && tv.optimum <= ot.optimum + 1e-9,
                      "univer --tree %s --draw %s: exact %.9f tree-valid %.9f tree-ot %.9f", shapes[s],
                      sd_tree_draw_name((sd_tree_draw)draw), ex, tv.optimum, ot.optimum);
        }
    sd_chain_free(c);
}

/* The paper's comparison (UniVer: +4.2-8.5% accepted length over recursive
 * rejection sampling without replacement).  On 5 generated chains (V = 4),
 * every context, four shapes: univer --draw wor (= traversal) never loses to
 * tree-rrs-wor, and gains 4.2% or more from some context on every shape
 * with a choice left (largest 5.0%, 5.4%, 10.3%: the paper's range is an
 * average over tasks, not a bound); univer --draw iid never loses to
 * traversal --draw iid or to tree-rrs.  docs/findings.md, item 45, has the numbers. */
Test(univer, against_rrs_wor_and_traversal, .timeout = 120)
{
    static const char *const shapes[] = {"2,2", "3,1", "2,1,1", "4"};
    double best[4] = {0};
    for (unsigned long seed = 1; seed <= 5; seed++) {
        sd_chain *c = tu_chain(4, 4, seed);
        for (size_t s = 0; s < 4; s++)
            for (size_t a = 0; a < 4; a++) {
                double uw = S_acc(c, 1, a, "univer", shapes[s], "wor"), rw = S_acc(c, 1, a, "tree-rrs-wor", shapes[s], NULL);
                double ui = S_acc(c, 1, a, "univer", shapes[s], "iid"), ti = S_acc(c, 1, a, "traversal", shapes[s], "iid");
                double ri = S_acc(c, 1, a, "tree-rrs", shapes[s], NULL);
                cr_expect(uw >= rw - 1e-12, "seed %lu --tree %s from %zu: univer wor %.9f < rrs-wor %.9f", seed,
                          shapes[s], a, uw, rw);
                cr_expect(ui >= ti - 1e-12 && ti >= ri - 1e-12,
                          "seed %lu --tree %s from %zu: univer iid %.9f, traversal iid %.9f, rrs %.9f", seed, shapes[s],
                          a, ui, ti, ri);
                double g = uw / rw - 1.0;
                best[s] = g > best[s] ? g : best[s];
            }
        sd_chain_free(c);
    }
    /* the paper's range is reached from some context on every shape with a
     * choice left (5.0%, 5.4%, 10.3%); --tree 4 at V = 4 drafts the whole
     * vocabulary without replacement and both accept the first token */
    for (size_t s = 0; s < 3; s++)
        cr_expect(best[s] >= 0.042, "--tree %s: largest gain %.4f", shapes[s], best[s]);
    cr_expect(best[3] < 1e-12, "--tree 4: gain %.3g", best[3]);
}
