/* test_lp_compare.c — `simdec lp`'s problems as one table (each problem's
 * own --help, "did you mean"), and --compare A,B,C: one LP solve, several
 * verifiers measured, and the refusal of a verifier that does not read the
 * LP's draft length or tree shape (its gap would compare two problems). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* `lp PROBLEM --help` shows that problem's options only; `lp --help` every
 * problem. */
Test(lp_compare, each_problem_has_its_own_help)
{
    static const struct {
        const char *args, *has, *lacks;
    } cases[] = {
        {"lp tree-valid --help", "--tree b1,..,bd", "--reject RHO"},
        {"lp tree-valid --help", "--compare A[,B,...]", "--ordered"},
        {"lp tree-valid --help", "--draw iid|wor|topk", "--plan FILE"},
        {"lp otm --help", "--k K", "--tree"},
        {"lp otm --help", "--ordered", "--compare"},
        {"lp pareto --help", "--reject RHO", "--gamma G"},
        {"lp valid-verify --help", "--gamma G", "--draw"},
        {"lp --tree 2 --help tree-ot", "Usage: simdec lp tree-ot", "--reject"},
        {"lp --plan otm --help", "Problems:", "Usage: simdec lp otm"}, /* a value, not a problem */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL;
        cr_assert_eq(tu_run(cases[i].args, &out, NULL), 0, "%s", cases[i].args);
        cr_expect(tu_contains(out, cases[i].has), "%s: lacks '%s'", cases[i].args, cases[i].has);
        cr_expect(!tu_contains(out, cases[i].lacks), "%s: has '%s'", cases[i].args, cases[i].lacks);
        free(out);
    }
    char *out = NULL;
    cr_assert_eq(tu_run("lp --help", &out, NULL), 0);
    const char *names[] = {"otm", "block-ot", "valid-verify", "pareto", "tree-valid", "tree-ot"};
    for (size_t i = 0; i < 6; i++)
        cr_expect(tu_contains(out, names[i]), "lp --help lacks %s", names[i]);
    free(out);
}

Test(lp_compare, a_misspelt_problem_gets_did_you_mean)
{
    tu_expect("lp tree-vaild --tree 2 --p 0.5,0.5 --q 0.3,0.7", 64, "did you mean 'tree-valid'");
    tu_expect("lp blok-ot --gamma 2", 64, "did you mean 'block-ot'");
}

static json_t *S_json(const char *args)
{
    char *out = NULL;
    cr_assert_eq(tu_run(args, &out, NULL), 0, "%s", args);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s: %s", args, out);
    free(out);
    return j;
}

/* One solve, three verifiers: each measurement is the one --compare NAME
 * alone gives (same seed: the same bits), and block verification meets
 * the optimum of valid-verify within 4 se (Sun et al. 2025, Thm 2; a false
 * alarm has probability 6e-5) while token verification falls short by
 * more. */
Test(lp_compare, one_solve_compares_several_verifiers)
{
    const char *ctx = "lp valid-verify --gamma 3 --V 5 --step 7 --state 1 --trials 20000 --json";
    char args[256];
    snprintf(args, sizeof args, "%s --compare block,token,greedy-block", ctx);
    json_t *j = S_json(args), *all = json_object_get(j, "comparisons");
    cr_assert(json_is_array(all) && json_array_size(all) == 3);
    const char *names[] = {"block", "token", "greedy-block"};
    for (size_t i = 0; i < 3; i++) {
        json_t *m = json_array_get(all, i);
        cr_expect_str_eq(json_string_value(json_object_get(m, "verifier")), names[i]);
        snprintf(args, sizeof args, "%s --compare %s", ctx, names[i]);
        json_t *one = S_json(args), *c1 = json_object_get(one, "compare");
        cr_expect_eq(json_real_value(json_object_get(m, "mean")), json_real_value(json_object_get(c1, "mean")),
                     "%s", names[i]);
        json_decref(one);
    }
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "compare"), "verifier")), "block");
    json_t *b = json_array_get(all, 0), *t = json_array_get(all, 1);
    double gb = json_real_value(json_object_get(b, "gap")), sb = json_real_value(json_object_get(b, "stderr"));
    double gt = json_real_value(json_object_get(t, "gap")), st = json_real_value(json_object_get(t, "stderr"));
    cr_expect(sb > 0 && fabs(gb) < 4 * sb, "block: gap %g, se %g", gb, sb);
    cr_expect(gt > 4 * st, "token: gap %g, se %g", gt, st);
    json_decref(j);
}

/* Tree verifiers compared on the tree LP in one solve; each at most the
 * optimum within 4 se. */
Test(lp_compare, tree_verifiers_in_one_solve)
{
    json_t *j = S_json("lp tree-valid --tree 2,1 --p 0.5,0.3,0.2 --q 0.3,0.3,0.4 --compare tree-rrs,traversal "
                       "--trials 20000 --json");
    json_t *all = json_object_get(j, "comparisons");
    cr_assert_eq(json_array_size(all), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *m = json_array_get(all, i);
        cr_expect(json_is_true(json_object_get(m, "reads_tree")));
        cr_expect(json_real_value(json_object_get(m, "gap")) > -4 * json_real_value(json_object_get(m, "stderr")));
    }
    json_decref(j);
}

/* A verifier that does not read what the LP fixes is refused, not ranked. */
Test(lp_compare, a_verifier_that_ignores_the_shape_is_refused)
{
    tu_expect("lp tree-valid --tree 2 --p 0.5,0.5 --q 0.3,0.7 --compare tree-rrs,block", 64,
              "block does not read the tree shape");
    tu_expect("lp valid-verify --gamma 2 --V 3 --compare tree-rrs", 64, "tree-rrs does not read gamma");
    tu_expect("lp block-ot --gamma 2 --V 4 --compare block,spectr", 64, "spectr drafts k = 2 sequences");
    tu_expect("lp valid-verify --gamma 2 --V 3 --compare block,,token", 64, "separated by commas");
    tu_expect("lp valid-verify --gamma 2 --V 3 --compare block,tokn", 64, "did you mean 'token'");
    /* a chain tree takes a single-draft chain verifier (it reads gamma) */
    char *out = NULL;
    cr_expect_eq(tu_run("lp tree-valid --tree 1,1 --p 0.5,0.5 --q 0.3,0.7 --compare block --trials 100", &out, NULL), 0);
    cr_expect(tu_contains(out, "compare      block"), "%s", out);
    free(out);
}
