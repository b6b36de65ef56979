/* test_eval_accept_any.c — `eval accept-length --algo NAME` for verifiers
 * without an enumerator in eval (multi-draft, plugins, stateful): exact from
 * the verifier's iteration law where it has one, Monte-Carlo with its
 * standard error always, and the two agree; refusals. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

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

/* The law's value against independent ones: rrs at gamma 1 is the k-draft
 * acceptance of recursive rejection sampling (eval acceptance --algo rrs);
 * and the Monte-Carlo within 4 se of the law (false alarm 6e-5). */
Test(eval_accept_any, the_law_meets_the_closed_form_and_the_monte_carlo)
{
    json_t *j = S_json("eval accept-length --algo rrs --gamma 1 --k 3 --p 0.5,0.3,0.2 --q 0.2,0.3,0.5 "
                       "--trials 50000 --json");
    json_t *ref = S_json("eval acceptance --algo rrs --k 3 --p 0.5,0.3,0.2 --q 0.2,0.3,0.5 --json");
    double ex = json_real_value(json_object_get(j, "exact"));
    cr_expect(fabs(ex - json_real_value(json_object_get(ref, "acceptance"))) < 1e-12, "%.15g", ex);
    json_t *mc = json_object_get(j, "mc");
    double z = json_real_value(json_object_get(mc, "exact_minus_mean_in_se"));
    cr_expect(fabs(z) < 4, "z %g", z);
    json_decref(j);
    json_decref(ref);
    j = S_json("eval accept-length --algo spectr --gamma 2 --k 2 --V 4 --step 2 --state 1 --trials 50000 --json");
    cr_expect(isfinite(json_real_value(json_object_get(j, "exact"))));
    z = json_real_value(json_object_get(json_object_get(j, "mc"), "exact_minus_mean_in_se"));
    cr_expect(fabs(z) < 4, "spectr: z %g", z);
    json_decref(j);
}

/* A plugin (examples/typical.c, no iteration law) and a stateful verifier
 * get the Monte-Carlo estimate with its standard error. */
Test(eval_accept_any, plugins_and_stateful_verifiers_get_monte_carlo)
{
    json_t *j = S_json("eval accept-length --plugin build/examples/typical.so --algo typical --gamma 2 --V 4 "
                       "--trials 5000 --json");
    cr_expect_str_eq(json_string_value(json_object_get(j, "method")), "Monte-Carlo");
    cr_expect(json_is_null(json_object_get(j, "exact")));
    json_t *mc = json_object_get(j, "mc");
    cr_expect(json_real_value(json_object_get(mc, "stderr")) > 0);
    cr_expect_eq(json_integer_value(json_object_get(mc, "trials")), 5000);
    json_decref(j);
    j = S_json("eval accept-length --algo greedy-block --gamma 3 --V 5 --step 7 --state 1 --trials 5000 --json");
    cr_expect(tu_contains(json_string_value(json_object_get(j, "exact_not_computed")), "greedy-block"));
    json_decref(j);
}

Test(eval_accept_any, refusals)
{
    tu_expect("eval accept-length --algo spectr --V 4", 64, "--gamma G is required for spectr");
    tu_expect("eval accept-length --algo sprinter --V 4", 64, "sprinter reads neither gamma nor tree");
    tu_expect("eval accept-length --algo spectre --gamma 2", 64, "did you mean 'spectr'");
    tu_expect("eval accept-length --algo spectr --gamma 60 --V 4", 64, "runs past the horizon");
    /* a stray argument, even one alone, as every eval subcommand refuses it */
    tu_expect("eval accept-length --algo spectr --gamma 2 --V 4 foo", 64, "unexpected argument 'foo'");
}
