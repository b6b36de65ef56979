/* test_trees.c — token trees: the --tree and --draw parameters,
 * the tree verifiers' losslessness (check) and controls, their exact
 * values against Monte-Carlo, traversal's two published claims, and the
 * LPs tree-valid and tree-ot (their reductions and the ordering
 * exact <= tree-valid <= tree-ot).
 *
 * Seeds are fixed.  A lossless verifier fails a check with probability
 * alpha = 1e-3 per run, so a failure here is a finding, never a reason to
 * change a seed.  Monte-Carlo means are compared with exact values within
 * 4 standard errors (a false alarm about 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_tree.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_exact_otm.h"
#include "../sims/exact/sd_exact_tree.h"
#include "test_util.h"
#include "tu_rules.h"

static const char *const S_verifiers[] = {"tree-rrs", "tree-rrs-wor", "tree-topk", "traversal"};

/* --- the parameters ----------------------------------------------------------- */

Test(trees, tree_shape_parsed_echoed_and_refused_in_one_line)
{
    const sd_verifier_type *vt = tu_rule_vt("traversal");
    sd_params par = tu_rule_par(vt, "3,2,1", NULL);
    cr_expect_eq(par.tree_depth, 3);
    cr_expect(par.tree[0] == 3 && par.tree[1] == 2 && par.tree[2] == 1);
    cr_expect_eq(sd_params_tree_nodes(&par), 3 + 6 + 6);
    char buf[256];
    sd_params_format(&par, vt, buf, sizeof buf);
    cr_expect_str_eq(buf, ", tree 3,2,1, draw wor");
    static const char *const bad[] = {"0", "2,,1", ",2", "2,", "1.5", "-1", "", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
                                      "100,100", "2,0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sd_error err;
        sd_params p = par;
        cr_expect_eq(sd_params_parse(&p, vt, "tree", bad[i], &err), SD_EUSAGE, "'%s' accepted", bad[i]);
        cr_expect(tu_contains(err.msg, "--tree") && !strchr(err.msg, '\n'), "%s", err.msg);
        cr_expect_eq(p.tree_depth, 3, "a refused shape must leave the old one");
    }
    /* a drafting rule the verifier does not support: one line, a reason */
    sd_params p = tu_rule_par(vt, "2", "topk");
    sd_chain *c = tu_chain(3, 3, 1);
    void *st = NULL;
    sd_error err;
    cr_expect_eq(vt->alloc(&st, c, &p, &err), SD_EUSAGE);
    cr_expect(tu_contains(err.msg, "--draw topk does not apply to --algo traversal"), "%s", err.msg);
    sd_chain_free(c);
}

/* --- losslessness ------------------------------------------------------------------ */

/* check on V = 4, T = D+1, L = D+1 (the tree, then the token after it, and
 * for trees cut short by the horizon the next iteration). */
Test(trees, every_tree_verifier_passes_check_up_to_six_nodes, .timeout = 300)
{
    static const char *const shapes[] = {"6", "3,1", "1,2", "2,2", "1,2,1", "1,1,1,1,1,1"};
    static const char *const rules[][2] = {{"tree-rrs", NULL}, {"tree-rrs-wor", NULL}, {"tree-topk", NULL},
                                           {"traversal", "wor"}, {"traversal", "iid"}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        size_t D = 1;
        for (const char *x = shapes[s]; *x; x++)
            D += *x == ',';
        sd_chain *c = tu_zero_chain(4, D + 1, 11 + s); /* zeros: a token of q = 0 is a certain failure */
        cr_assert_not_null(c);
        for (size_t v = 0; v < sizeof rules / sizeof *rules; v++) {
            const sd_verifier_type *vt = tu_rule_vt(rules[v][0]);
            sd_params par = tu_rule_par(vt, shapes[s], rules[v][1]);
            double pv;
            cr_expect(tu_check(vt, &par, c, 100 + 10 * s + v, 60000, D + 1, &pv), "%s --tree %s --draw %s: p-value %.3g",
                      vt->name, shapes[s], sd_tree_draw_name(sd_tree_draw_of(&par)), pv);
        }
        sd_chain_free(c);
    }
}

Test(trees, check_flags_both_controls)
{
    static const char *const controls[] = {"broken-tree-residual", "broken-tree-wor"};
    static const char *const shapes[] = {"3,2", "2,2", "3"};
    sd_chain *c = tu_chain(4, 3, 5);
    for (size_t i = 0; i < 2; i++)
        for (size_t s = 0; s < 3; s++) {
            const sd_verifier_type *vt = tu_rule_vt(controls[i]);
            cr_expect(vt->flags & SD_VERIFIER_CONTROL);
            sd_params par = tu_rule_par(vt, shapes[s], NULL);
            double pv;
            cr_expect(!tu_check(vt, &par, c, 7 + s, 200000, 2, &pv), "%s --tree %s not flagged (p-value %.3g)",
                      vt->name, shapes[s], pv);
        }
    sd_chain_free(c);
}

/* --- exact values ----------------------------------------------------------------- */

/* The mean accepted path length of the first iteration from x_0 = a (the
 * trial engine, fixed start), against the exact enumeration. */
Test(trees, exact_accept_length_within_4_se_of_monte_carlo)
{
    static const char *const shapes[] = {"2,2", "3,1", "1,1,2"};
    sd_chain *c = tu_chain(4, 4, 9);
    for (size_t s = 0; s < 3; s++)
        for (size_t v = 0; v < 4; v++) {
            const sd_verifier_type *vt = tu_rule_vt(S_verifiers[v]);
            sd_params par = tu_rule_par(vt, shapes[s], NULL);
            for (size_t a = 0; a < 4; a += 3) {
                double ex;
                sd_error err;
                cr_assert_eq(sd_exact_tree_accept(c, 1, a, &par, sd_tree_kind_find(vt->name), &ex, NULL, &err),
                             SD_OK, "%s", err.msg);
                sd_model m = sd_model_of_chain(c);
                sd_sim_job job = {vt, &m, &par};
                sd_sim_opts so = {.seed = 31 + a, .trials = 40000, .threads = 1,
                                  .stop = {.first_iteration = 1, .fixed_prev = 1, .prev = a}};
                sd_sim_result res;
                cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
                double se = sd_welford_stderr(&res.accepted);
                cr_expect(fabs(res.accepted.mean - ex) < 4 * se, "%s --tree %s from %zu: MC %.6f +- %.6f, exact %.6f",
                          vt->name, shapes[s], a, res.accepted.mean, se, ex);
                sd_sim_result_free(&res);
            }
        }
    sd_chain_free(c);
}

Test(trees, exact_target_calls_within_4_se_of_run)
{
    sd_chain *c = tu_chain(3, 7, 4);
    sd_model m = sd_model_of_chain(c);
    for (size_t v = 0; v < 4; v++) {
        const sd_verifier_type *vt = tu_rule_vt(S_verifiers[v]);
        sd_params par = tu_rule_par(vt, "2,1", NULL);
        sd_exact_values ev;
        sd_error err;
        cr_assert_eq(vt->exact(&m, &par, &ev, &err), SD_OK, "%s", err.msg);
        sd_sim_job job = {vt, &m, &par};
        sd_sim_opts so = {.seed = 77, .trials = 40000};
        sd_sim_result res;
        cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
        double sc = sd_welford_stderr(&res.target_calls), sr = sd_welford_stderr(&res.rejections);
        cr_expect(fabs(res.target_calls.mean - ev.target_calls) < 4 * sc, "%s calls: %.5f +- %.5f vs %.5f",
                  vt->name, res.target_calls.mean, sc, ev.target_calls);
        cr_expect(fabs(res.rejections.mean - ev.rejections) < 4 * sr, "%s rejections: %.5f +- %.5f vs %.5f",
                  vt->name, res.rejections.mean, sr, ev.rejections);
        sd_sim_result_free(&res);
    }
    sd_chain_free(c);
}

/* Traversal's second claim (Weng et al. 2025): on a chain it is block
 * verification; and every tree verifier at depth 1 with one child is
 * token-level verification.  Exactly, from several contexts. */
Test(trees, traversal_on_a_chain_is_block_verification)
{
    sd_chain *c = tu_chain(4, 6, 21);
    const sd_verifier_type *vt = tu_rule_vt("traversal");
    static const char *const chains[] = {"1", "1,1", "1,1,1", "1,1,1,1"};
    for (size_t g = 1; g <= 4; g++)
        for (size_t a = 0; a < 4; a++)
            for (int iid = 0; iid < 2; iid++) {
                sd_params par = tu_rule_par(vt, chains[g - 1], iid ? "iid" : "wor");
                double ex, e[SD_ACCEPT_NALGO];
                cr_assert_eq(sd_exact_tree_accept(c, 2, a, &par, sd_tree_kind_find("traversal"), &ex, NULL, NULL),
                             SD_OK);
                cr_assert_eq(sd_exact_accept_length(c, 2, a, g, e, NULL, NULL), SD_OK);
                cr_expect(fabs(ex - e[SD_ACCEPT_BLOCK]) < 1e-12, "gamma %zu from %zu: traversal %.15f block %.15f", g,
                          a, ex, e[SD_ACCEPT_BLOCK]);
            }
    sd_chain_free(c);
}

/* --- the LPs ---------------------------------------------------------------------- */

Test(trees, tree_valid_reduces_to_valid_verify_and_otm)
{
    sd_chain *c = tu_chain(3, 5, 3);
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    const sd_verifier_type *vt = tu_rule_vt("tree-rrs");
    sd_error err;
    static const char *const chains[] = {"1", "1,1", "1,1,1"};
    for (size_t g = 1; g <= 3; g++) {
        sd_params par = tu_rule_par(vt, chains[g - 1], NULL);
        sd_lp_result tv, vv, ot;
        cr_assert_eq(sd_lp_tree_valid(c, 2, 1, &par, SD_DRAW_IID, &lo, &tv, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_valid_verify(c, 2, 1, g, &lo, &vv, NULL, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_ot(c, 2, 1, &par, SD_DRAW_IID, &lo, &ot, &err), SD_OK, "%s", err.msg);
        double e[SD_ACCEPT_NALGO];
        cr_assert_eq(sd_exact_accept_length(c, 2, 1, g, e, NULL, NULL), SD_OK);
        cr_expect(fabs(tv.optimum - vv.optimum) < 1e-9, "chain %zu: tree-valid %.12f valid-verify %.12f", g,
                  tv.optimum, vv.optimum);
        cr_expect(fabs(tv.optimum - e[SD_ACCEPT_BLOCK]) < 1e-9);
        cr_expect(fabs(ot.optimum - e[SD_ACCEPT_FULL]) < 1e-9, "chain %zu: tree-ot %.12f full %.12f", g, ot.optimum,
                  e[SD_ACCEPT_FULL]);
    }
    for (size_t k = 1; k <= 4; k++) {
        char shape[8];
        snprintf(shape, sizeof shape, "%zu", k);
        sd_params par = tu_rule_par(vt, shape, NULL);
        sd_lp_result tv, ot;
        cr_assert_eq(sd_lp_tree_valid(c, 2, 1, &par, SD_DRAW_IID, &lo, &tv, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_ot(c, 2, 1, &par, SD_DRAW_IID, &lo, &ot, &err), SD_OK, "%s", err.msg);
        double alpha;
        cr_assert_eq(sd_exact_otm_acceptance(sd_chain_p(c, 2, 1), sd_chain_q(c, 2, 1), 3, k, &alpha, NULL, NULL),
                     SD_OK);
        cr_expect(fabs(tv.optimum - alpha) < 1e-9, "k %zu: tree-valid %.12f otm %.12f", k, tv.optimum, alpha);
        cr_expect(fabs(ot.optimum - alpha) < 1e-9, "k %zu: tree-ot %.12f otm %.12f", k, ot.optimum, alpha);
    }
    sd_chain_free(c);
}

Test(trees, exact_at_most_tree_valid_at_most_tree_ot, .timeout = 120)
{
    sd_chain *c = tu_chain(3, 5, 8);
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    static const char *const shapes[] = {"2,2", "3,1", "1,2", "2,1,1"};
    for (size_t s = 0; s < 4; s++)
        for (size_t v = 0; v < 4; v++) {
            const sd_verifier_type *vt = tu_rule_vt(S_verifiers[v]);
            sd_params par = tu_rule_par(vt, shapes[s], NULL);
            int draw = (int)sd_tree_draw_of(&par);
            double ex;
            sd_error err;
            sd_lp_result tv, ot;
            cr_assert_eq(sd_exact_tree_accept(c, 1, 2, &par, sd_tree_kind_find(vt->name), &ex, NULL, &err), SD_OK);
            cr_assert_eq(sd_lp_tree_valid(c, 1, 2, &par, draw, &lo, &tv, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_lp_tree_ot(c, 1, 2, &par, draw, &lo, &ot, &err), SD_OK, "%s", err.msg);
            cr_assert(tv.optimal && ot.optimal);
            cr_expect(ex <= tv.optimum + 1e-9 && tv.optimum <= ot.optimum + 1e-9,
                      "%s --tree %s: exact %.9f tree-valid %.9f tree-ot %.9f", vt->name, shapes[s], ex, tv.optimum,
                      ot.optimum);
        }
    sd_chain_free(c);
}

/* The joint law of (accepted length l, emitted token y) that
 * sd_exact_tree_accept writes into the caller's buffer (and
 * `eval accept-length` prints summed over y) is a distribution whose mean
 * length is the expected accepted length: Σ joint = 1 and
 * Σ l·P(l) = E[accepted], both sums exact up to rounding (1e-12).  The
 * buffer starts as NaNs: every one of its (d+1)·V entries must be written. */
Test(trees, joint_accept_law_fills_its_buffer_and_has_the_expected_mean)
{
    sd_chain *c = tu_chain(3, 5, 8);
    for (size_t v = 0; v < 4; v++) {
        const sd_verifier_type *vt = tu_rule_vt(S_verifiers[v]);
        sd_params par = tu_rule_par(vt, "2,2", NULL);
        double joint[3 * 3], ex, mass = 0.0, mean = 0.0;
        for (size_t i = 0; i < 9; i++)
            joint[i] = NAN;
        sd_error err;
        cr_assert_eq(sd_exact_tree_accept(c, 1, 2, &par, sd_tree_kind_find(vt->name), &ex, joint, &err), SD_OK,
                     "%s", err.msg);
        for (size_t l = 0; l <= 2; l++)
            for (size_t y = 0; y < 3; y++) {
                mass += joint[l * 3 + y];
                mean += (double)l * joint[l * 3 + y];
            }
        cr_expect(fabs(mass - 1.0) < 1e-12, "%s: mass %.17g", vt->name, mass);
        cr_expect(fabs(mean - ex) < 1e-12, "%s: mean %.17g, E[accepted] %.17g", vt->name, mean, ex);
    }
    sd_chain_free(c);
    /* the command prints that law: P(l) sums to 1 with mean E[accepted] */
    char *out = NULL, *errs = NULL;
    cr_assert_eq(tu_run("eval accept-length --algo tree-rrs --V 3 --json", &out, &errs), 0, "%s", errs);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s", out);
    json_t *law = json_object_get(j, "accept_law");
    cr_assert_eq(json_array_size(law), 3u);
    double mass = 0.0, mean = 0.0;
    for (size_t l = 0; l < 3; l++) {
        mass += json_number_value(json_array_get(law, l));
        mean += (double)l * json_number_value(json_array_get(law, l));
    }
    cr_expect(fabs(mass - 1.0) < 1e-12, "%.17g", mass);
    cr_expect(fabs(mean - json_number_value(json_object_get(j, "expected_accepted"))) < 1e-12, "%.17g", mean);
    json_decref(j);
    free(out);
    free(errs);
}

/* Drafting without replacement, a node after the vocabulary is used up
 * drafts nothing (sd_tree_draft_law <= 0) and the enumerations go on to
 * the next node.  At V = 2 with --tree 3 both tokens are always among the
 * three children, so whatever the target draws is a draft and is accepted:
 * E[accepted] = P(l = 1) = 1, and no valid verifier or coupling does
 * better (tree-valid = tree-ot = 1). */
Test(trees, nodes_past_the_vocabulary_draft_nothing)
{
    sd_chain *c = tu_chain(2, 5, 8);
    const sd_verifier_type *vt = tu_rule_vt("tree-rrs-wor");
    sd_params par = tu_rule_par(vt, "3", "wor");
    double ex, joint[2 * 2];
    sd_error err;
    for (size_t a = 0; a < 2; a++) {
        cr_assert_eq(sd_exact_tree_accept(c, 1, a, &par, sd_tree_kind_find(vt->name), &ex, joint, &err), SD_OK,
                     "%s", err.msg);
        cr_expect(fabs(ex - 1.0) < 1e-12, "state %zu: E[accepted] %.17g", a, ex);
        cr_expect(fabs(joint[2] + joint[3] - 1.0) < 1e-12, "state %zu: P(l = 1) %.17g", a, joint[2] + joint[3]);
        sd_lp_opts lo;
        sd_lp_opts_default(&lo);
        sd_lp_result tv, ot;
        cr_assert_eq(sd_lp_tree_valid(c, 1, a, &par, SD_DRAW_WOR, &lo, &tv, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_lp_tree_ot(c, 1, a, &par, SD_DRAW_WOR, &lo, &ot, &err), SD_OK, "%s", err.msg);
        cr_expect(tv.optimal && fabs(tv.optimum - 1.0) < 1e-7, "state %zu: tree-valid %.17g", a, tv.optimum);
        cr_expect(ot.optimal && fabs(ot.optimum - 1.0) < 1e-7, "state %zu: tree-ot %.17g", a, ot.optimum);
    }
    sd_chain_free(c);
}

/* A tree verifier's parameters without a shape (tree_depth 0, which the
 * CLI never produces) are refused by the enumeration, not enumerated. */
Test(trees, exact_enumeration_refuses_a_missing_shape)
{
    sd_chain *c = tu_chain(2, 5, 8);
    const sd_verifier_type *vt = tu_rule_vt("tree-rrs");
    sd_params par = tu_rule_par(vt, "2", NULL);
    par.tree_depth = 0;
    double ex, calls, rej;
    sd_error err;
    cr_expect_eq(sd_exact_tree_accept(c, 1, 0, &par, sd_tree_kind_find(vt->name), &ex, NULL, &err), SD_EUSAGE);
    cr_expect(tu_contains(err.msg, "--tree: expected a tree shape"), "%s", err.msg);
    cr_expect_eq(sd_exact_tree_calls(c, &par, sd_tree_kind_find(vt->name), &calls, &rej, &err), SD_EUSAGE);
    sd_chain_free(c);
}

/* Relabelling the tokens does not change tree-valid's LP: with a uniform
 * draft, q = (1/2, 1/2, 0) and q = (0, 1/2, 1/2) are the same problem up to
 * a permutation of the tokens, so the same sizes and optimum (one validity
 * row is dropped in both, whichever output of positive mass comes last). */
Test(trees, tree_valid_lp_does_not_depend_on_the_token_labels)
{
    static const char *const qs[2] = {"0.5,0.5,0", "0,0.5,0.5"};
    json_int_t sizes[2][3];
    double opt[2];
    for (int k = 0; k < 2; k++) {
        char args[256], *out = NULL, *errs = NULL;
        snprintf(args, sizeof args,
                 "lp tree-valid --tree 2 --p 0.3333333333333333,0.3333333333333333,0.3333333333333334 --q %s --json",
                 qs[k]);
        cr_assert_eq(tu_run(args, &out, &errs), 0, "%s", errs);
        json_t *j = json_loads(out, 0, NULL);
        cr_assert_not_null(j, "%s", out);
        sizes[k][0] = json_integer_value(json_object_get(j, "variables"));
        sizes[k][1] = json_integer_value(json_object_get(j, "constraints"));
        sizes[k][2] = json_integer_value(json_object_get(j, "nonzeros"));
        opt[k] = json_number_value(json_object_get(j, "optimum"));
        json_decref(j);
        free(out);
        free(errs);
    }
    for (int i = 0; i < 3; i++)
        cr_expect_eq(sizes[0][i], sizes[1][i], "size %d: %lld vs %lld", i, (long long)sizes[0][i],
                     (long long)sizes[1][i]);
    cr_expect(fabs(opt[0] - opt[1]) < 1e-7, "%.17g %.17g", opt[0], opt[1]);
}

Test(trees, lp_refuses_too_large_trees_in_one_line)
{
    sd_chain *c = tu_chain(4, 5, 3);
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    lo.max_vars = 1000;
    const sd_verifier_type *vt = tu_rule_vt("tree-rrs");
    sd_params par = tu_rule_par(vt, "2,2", NULL);
    sd_lp_result r;
    sd_error err;
    cr_expect_eq(sd_lp_tree_valid(c, 1, 0, &par, SD_DRAW_IID, &lo, &r, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "--max-vars") && !strchr(err.msg, '\n'), "%s", err.msg);
    par = tu_rule_par(vt, "4,4,4", NULL);
    cr_expect_eq(sd_lp_tree_ot(c, 1, 0, &par, SD_DRAW_IID, &lo, &r, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "drafted trees"), "%s", err.msg);
    sd_chain_free(c);
}

/* Sharing the verifier's law among drafted trees with the same root paths:
 * at V = 4 (every p row positive), --tree 2,2 with i.i.d. drafts has
 * 4^6 = 4096 drafted trees and 660 distinct path sets (the root's children
 * are 1 or 2 distinct tokens; under each, the union of the grandchildren's
 * tokens), whose probabilities sum to 1. */
Test(trees, path_sets_of_a_2_2_tree)
{
    sd_chain *c = tu_chain(4, 4, 3);
    for (size_t x = 0; x < 4; x++)
        for (size_t t = 1; t <= 4; t++)
            for (size_t y = 0; y < 4; y++)
                cr_assert(sd_chain_p(c, t, x)[y] > 0, "the count needs rows without zeros");
    const sd_verifier_type *vt = tu_rule_vt("tree-rrs");
    sd_params par = tu_rule_par(vt, "2,2", NULL);
    sd_lp_pathsets *ps;
    sd_error err;
    cr_assert_eq(sd_lp_tree_pathsets(c, 1, 0, &par, SD_DRAW_IID, &ps, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(ps->n, 660);
    double total = 0.0;
    for (size_t i = 0; i < ps->n; i++)
        total += ps->prob[i];
    cr_expect(fabs(total - 1.0) < 1e-12, "total %.17g", total);
    sd_lp_pathsets_free(ps);
    sd_chain_free(c);
}

/* Two readings of traversal's parent update that look like the paper's
 * and are biased (docs/findings.md): the rejected token removed from p
 * before the residual is taken, and the residual taken against q instead
 * of α q.  check must flag both where they differ from the kept reading
 * (the first on every tree, the second below the root only). */
static const sd_tree_kind S_remove_first = {.name = "traversal-remove-first", .rule = SD_TREE_TRAVERSAL,
                                            .draws = 1u << SD_DRAW_WOR, .bugs = SD_TREE_BUG_REMOVE_FIRST};
static const sd_tree_kind S_unscaled = {.name = "traversal-unscaled", .rule = SD_TREE_TRAVERSAL,
                                        .draws = 1u << SD_DRAW_WOR, .bugs = SD_TREE_BUG_UNSCALED};

/* A verifier type around one of them, for check (one at a time). */
static const sd_tree_kind *S_reading;
static int S_reading_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    return sd_tree_verifier_alloc(state, c, par, S_reading, err);
}
static int S_reading_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                          size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    (void)err;
    return sd_tree_verifier_step(state, c, par, S_reading, rng, n, prev, out, it);
}

Test(trees, other_readings_of_traversal_are_biased)
{
    const sd_tree_kind *kinds[2] = {&S_remove_first, &S_unscaled};
    const sd_verifier_type *trav = tu_rule_vt("traversal");
    sd_verifier_type vt = *trav;
    vt.alloc = S_reading_alloc;
    vt.step = S_reading_step;
    vt.exact = NULL;
    vt.iteration_law = NULL; /* traversal's law is not this reading's */
    sd_chain *c = tu_chain(4, 4, 5);
    for (size_t i = 0; i < 2; i++) {
        S_reading = kinds[i];
        vt.name = kinds[i]->name;
        sd_params par = tu_rule_par(trav, "2,2", "wor");
        double pv;
        cr_expect(!tu_check(&vt, &par, c, 500 + i, 200000, 3, &pv), "%s not flagged (p-value %.3g)", vt.name, pv);
    }
    sd_chain_free(c);
}
