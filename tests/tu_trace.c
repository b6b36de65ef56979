/* tu_trace.c — the trace tests' fixture (tu_trace.h). */
#include "tu_trace.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

char *tu_fresh_dir(const char *suite, const char *name)
{
    char *p = malloc(256);
    snprintf(p, 256, "/tmp/simdec-test-%s-%d-%s", suite, (int)getpid(), name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", p, p);
    cr_assert_eq(system(cmd), 0);
    return p;
}

json_t *tu_json(const char *args)
{
    char *out = NULL, *err = NULL;
    int st = tu_run(args, &out, &err);
    cr_assert_eq(st, 0, "%s: %d %s", args, st, err);
    json_error_t je;
    json_t *v = json_loads(out, 0, &je);
    cr_assert(v, "%s: not JSON: %s", args, out);
    free(out);
    free(err);
    return v;
}

double tu_num(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    cr_assert(json_is_number(v), "%s.%s", a, b ? b : "");
    return json_number_value(v);
}

void tu_trace_agrees_with_eval(const char *dir, const char *const *pts, size_t n)
{
    char cmd[2048];
    for (size_t i = 0; i < n; i++) {
        snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --draft %s/draft.npy --target %s/target.npy --algo %s "
                                  "--json", dir, dir, dir, pts[i]);
        json_t *t = tu_json(cmd);
        snprintf(cmd, sizeof cmd, "eval generation --model %s/model.json --algo %s --json", dir, pts[i]);
        json_t *e = tu_json(cmd);
        double ex = tu_num(e, "target_calls", NULL), mc = tu_num(t, "target_calls", "mean"),
               se = tu_num(t, "target_calls", "stderr");
        double exr = tu_num(e, "rejections", NULL), mr = tu_num(t, "rejections", "mean"),
               ser = tu_num(t, "rejections", "stderr");
        cr_assert(fabs(mc - ex) < 4 * se && fabs(mr - exr) < 4 * ser,
                  "%s: trace calls %.5f +- %.5f, rejections %.5f +- %.5f; exact %.5f, %.5f", pts[i], mc, se, mr, ser,
                  ex, exr);
        json_decref(t);
        json_decref(e);
    }
}
