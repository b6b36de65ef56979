/* test_plugin_tree.c — a token-tree verifier written as a plugin
 * (tests/plugins/tree_rrs.c, recursive rejection sampling on i.i.d. drafts)
 * declares tree and draw like the built-in ones: `lp tree-valid --compare`
 * hands it the LP's shape in the same solve as tree-rrs, `check` finds it
 * lossless, and `eval accept-length` measures it against tree-rrs's exact
 * enumeration (one law). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#ifndef SD_EXAMPLES_DIR
#define SD_EXAMPLES_DIR "build/examples"
#endif
#define S_PLUGIN "--plugin " SD_EXAMPLES_DIR "/tree_rrs.so"

static json_t *S_json(const char *args)
{
    char *out = NULL, *err = NULL;
    int st = tu_run(args, &out, &err);
    cr_assert_eq(st, 0, "%s: %d %s", args, st, err);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert_not_null(j, "%s: %s", args, out);
    free(out);
    free(err);
    return j;
}

/* The two RRS implementations have one law: their means within 4 se of the
 * difference (independent runs treated as such), neither above the optimum
 * by 4 se (false alarm 3e-5 each). */
Test(plugin_tree, lp_hands_the_plugin_its_shape)
{
    json_t *j = S_json("lp tree-valid --tree 2,1 --V 4 --step 2 --state 1 " S_PLUGIN
                       " --compare tree-rrs,test-tree-rrs --trials 20000 --seed 3 --json");
    json_t *all = json_object_get(j, "comparisons"), *a = json_array_get(all, 0), *b = json_array_get(all, 1);
    cr_assert_eq(json_array_size(all), 2);
    json_t *tree = json_object_get(json_object_get(b, "params"), "tree");
    cr_expect(json_array_size(tree) == 2 && json_integer_value(json_array_get(tree, 0)) == 2 &&
              json_integer_value(json_array_get(tree, 1)) == 1, "the LP's shape, not the plugin's default");
    cr_expect(json_is_true(json_object_get(b, "reads_tree")));
    double ma = json_real_value(json_object_get(a, "mean")), sa = json_real_value(json_object_get(a, "stderr"));
    double mb = json_real_value(json_object_get(b, "mean")), sb = json_real_value(json_object_get(b, "stderr"));
    cr_expect(fabs(ma - mb) < 4 * hypot(sa, sb), "tree-rrs %g +- %g, plugin %g +- %g", ma, sa, mb, sb);
    cr_expect(json_real_value(json_object_get(b, "gap")) > -4 * sb);
    json_decref(j);
}

Test(plugin_tree, accept_length_and_check)
{
    json_t *j = S_json("eval accept-length " S_PLUGIN " --algo test-tree-rrs --tree 2,1 --V 4 --step 2 --state 1 "
                       "--trials 20000 --seed 5 --json");
    json_t *ex = S_json("eval accept-length --algo tree-rrs --tree 2,1 --V 4 --step 2 --state 1 --json");
    json_t *mc = json_object_get(j, "mc");
    double m = json_real_value(json_object_get(mc, "mean")), se = json_real_value(json_object_get(mc, "stderr"));
    double e = json_real_value(json_object_get(ex, "expected_accepted"));
    cr_expect(fabs(m - e) < 4 * se, "plugin %g +- %g, tree-rrs exact %g", m, se, e);
    cr_expect_eq(json_integer_value(json_object_get(j, "draft_length")), 2);
    json_decref(j);
    json_decref(ex);
    j = S_json("check " S_PLUGIN " --algo test-tree-rrs --V 4 --T 6 --trials 20000 --seed 2 --json");
    cr_expect(json_is_true(json_object_get(j, "unbiased")));
    json_decref(j);
    tu_expect("lp tree-valid --tree 2 --V 4 " S_PLUGIN " --compare test-tree-rrs --draw wor", 64,
              "test-tree-rrs drafts i.i.d. only");
}
