/* tu_trace.h — the fixture the trace tests share (test_trace.c,
 * test_ownmodel.c): a fresh directory, a command's JSON and its numbers,
 * and `simdec trace` on a trace directory against `eval generation` on the
 * model file beside it. */
#ifndef TU_TRACE_H
#define TU_TRACE_H

#include <jansson.h>
#include <stddef.h>

/* /tmp/simdec-test-SUITE-PID-NAME, emptied and made (malloc'd; the caller
 * frees it). */
char *tu_fresh_dir(const char *suite, const char *name);

/* The JSON `simdec ARGS` prints; the test fails unless it exits 0 with
 * JSON.  The caller decrefs it. */
json_t *tu_json(const char *args);

/* o[a] (o[a][b] with b), which must be a number. */
double tu_num(json_t *o, const char *a, const char *b);

/* For each point pts[i] ("ALGO --param X ..."): the target calls and
 * rejections that `simdec trace` estimates from dir/tokens.npy,
 * dir/draft.npy and dir/target.npy agree with the exact values of `eval
 * generation --model dir/model.json` within 4 standard errors each (a
 * two-sided 6e-5 chance per comparison for a correct estimate). */
void tu_trace_agrees_with_eval(const char *dir, const char *const *pts, size_t n);

#endif
