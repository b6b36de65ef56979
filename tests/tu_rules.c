/* tu_rules.c — the fixture the tree-rule and node-rule suites share
 * (tu_rules.h). */
#include "tu_rules.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_exact_tree.h"
#include "../sims/verifiers/sd_tree.h"
#include "test_util.h"
#include "tu_trace.h"

sd_params tu_rule_par(const sd_verifier_type *vt, const char *tree, const char *draw)
{
    sd_params par;
    sd_error err;
    sd_params_defaults(&par, vt);
    cr_assert_eq(sd_params_parse(&par, vt, "tree", tree, &err), SD_OK, "%s", err.msg);
    if (draw)
        cr_assert_eq(sd_params_parse(&par, vt, "draw", draw, &err), SD_OK, "%s", err.msg);
    return par;
}

sd_params tu_tree_par(const char *tree, const char *draw)
{
    const sd_verifier_type *vt = sd_verifier_find("tree-rrs");
    cr_assert_not_null(vt);
    return tu_rule_par(vt, tree, draw);
}

const sd_verifier_type *tu_rule_vt(const char *name)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s", name);
    return vt;
}

void tu_rule_equals_the_builtins(const sd_verifier_type *rule)
{
    cr_assert_not_null(rule->tree);
    cr_expect_eq(rule->tree->rule, SD_TREE_CALLBACK);
    static const char *const draws[] = {"iid", "wor", "topk"};
    static const char *const builtin[] = {"tree-rrs", "tree-rrs-wor", "tree-topk"};
    static const char *const shapes[] = {"1", "2", "3", "4", "1,1", "2,1", "1,2", "2,2", "3,1", "1,1,1"};
    sd_chain *chains[] = {tu_chain(4, 6, 3), tu_zero_chain(4, 6, 5), tu_zero_chain(3, 5, 7)};
    size_t compared = 0;
    double worst = 0.0;
    for (size_t ci = 0; ci < 3; ci++) {
        sd_chain *c = chains[ci];
        cr_assert_not_null(c);
        size_t V = c->V;
        for (size_t di = 0; di < 3; di++)
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
                const sd_verifier_type *bt = tu_rule_vt(builtin[di]);
                sd_params pr = tu_rule_par(rule, shapes[si], draws[di]), pb = tu_rule_par(bt, shapes[si], draws[di]);
                if (sd_exact_tree_count(V, &pr, sd_tree_draw_of(&pr)) * (double)(c->T * V) >
                    4.0 * SD_EXACT_TREE_MAX_TREES)
                    continue;
                size_t d = pr.tree_depth;
                double *jr = malloc((d + 1) * V * sizeof *jr), *jb = malloc((d + 1) * V * sizeof *jb);
                cr_assert(jr && jb);
                sd_error err;
                for (size_t t = 1; t <= 2; t++)
                    for (size_t a = 0; a < V; a++) {
                        double er, eb;
                        cr_assert_eq(sd_exact_tree_accept(c, t, a, &pr, rule->tree, &er, jr, &err), SD_OK, "%s",
                                     err.msg);
                        cr_assert_eq(sd_exact_tree_accept(c, t, a, &pb, bt->tree, &eb, jb, &err), SD_OK, "%s",
                                     err.msg);
                        worst = fmax(worst, fabs(er - eb));
                        cr_expect(fabs(er - eb) <= 1e-12, "chain %zu %s %s (t %zu, a %zu): %s %.17g, %s %.17g",
                                  ci, shapes[si], draws[di], t, a, rule->name, er, builtin[di], eb);
                        for (size_t i = 0; i < (d + 1) * V; i++)
                            cr_expect(fabs(jr[i] - jb[i]) <= 1e-12, "chain %zu %s %s joint[%zu]: %.17g vs %.17g", ci,
                                      shapes[si], draws[di], i, jr[i], jb[i]);
                    }
                double cr_, rr, cb, rb;
                cr_assert_eq(sd_exact_tree_calls(c, &pr, rule->tree, &cr_, &rr, &err), SD_OK, "%s", err.msg);
                cr_assert_eq(sd_exact_tree_calls(c, &pb, bt->tree, &cb, &rb, &err), SD_OK, "%s", err.msg);
                cr_expect(fabs(cr_ - cb) <= 1e-12 && fabs(rr - rb) <= 1e-12,
                          "chain %zu %s %s: calls %.17g vs %.17g, rejections %.17g vs %.17g", ci, shapes[si],
                          draws[di], cr_, cb, rr, rb);
                compared++;
                free(jr);
                free(jb);
            }
    }
    cr_expect_geq(compared, 60, "only %zu cases compared", compared);
    cr_log_info("%s: %zu cases, largest |E[accepted] - built-in| %.3g", rule->name, compared, worst);
    for (size_t ci = 0; ci < 3; ci++)
        sd_chain_free(chains[ci]);
}

void tu_rule_monte_carlo_meets_exact(const sd_verifier_type *rule)
{
    sd_chain *c = tu_zero_chain(4, 8, 9);
    cr_assert_not_null(c);
    static const char *const cases[][2] = {{"2,1", "iid"}, {"2,2", "wor"}, {"3", "topk"}};
    for (size_t i = 0; i < 3; i++) {
        sd_params par = tu_rule_par(rule, cases[i][0], cases[i][1]);
        sd_model m = sd_model_of_chain(c);
        sd_exact_values ev;
        sd_error err;
        cr_assert_eq(rule->exact(&m, &par, &ev, &err), SD_OK, "%s", err.msg);
        sd_sim_opts so;
        memset(&so, 0, sizeof so);
        so.seed = 11;
        so.trials = 20000;
        so.threads = 2;
        sd_sim_result r;
        cr_assert_eq(sd_sim_run(rule, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
        double se = sd_welford_stderr(&r.target_calls), sr = sd_welford_stderr(&r.rejections);
        cr_expect(fabs(r.target_calls.mean - ev.target_calls) < 4 * se, "%s %s: calls MC %.6f +- %.6f, exact %.6f",
                  cases[i][0], cases[i][1], r.target_calls.mean, se, ev.target_calls);
        cr_expect(fabs(r.rejections.mean - ev.rejections) < 4 * sr, "%s %s: rejections MC %.6f +- %.6f, exact %.6f",
                  cases[i][0], cases[i][1], r.rejections.mean, sr, ev.rejections);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

void tu_rule_check_exact(const char *so, const char *algo, const char *args, int lossless)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "check --exact --plugin %s --algo %s %s --V 4 --T 6 --json", so, algo, args);
    json_t *o = tu_json(cmd);
    double tv = json_real_value(json_object_get(o, "exact_tv"));
    if (lossless) {
        cr_expect(tv <= 1e-12, "%s %s: exact TV %.3g", algo, args, tv);
        cr_expect(json_is_true(json_object_get(o, "unbiased")), "%s %s", algo, args);
    } else {
        cr_expect(tv > 0.01, "%s %s: the control's exact TV %.3g", algo, args, tv);
        cr_expect(json_is_false(json_object_get(o, "unbiased")), "%s %s", algo, args);
    }
    json_decref(o);
}
