/* test_iid_large.c — the i.i.d. problem (one draft row p and one target
 * row q at every position) as a sparse-row model without contexts
 * (src/sd_backoff.h) at V = 32000, where a stored chain would take
 * 2·V² doubles per step (16 GB): memory O(V), checked against the budget
 * before allocating; token-level SD's exact values equal the closed forms
 * (Theorem 1 of Yin et al. 2024: T·TV(p, q); the finite-γ DP's renewal
 * rate (1 - α)/(1 - α^{γ+1}) of Leviathan et al. 2023 as T grows); and
 * the token and block kernels agree with the exact values (token) and with
 * block's exact value on the same rows at small V, within 4 standard
 * errors (fixed seeds; 4 se: a false-alarm rate of 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_backoff.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_model.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"

/* Two random rows of V entries (every 7th zero in p, every 11th in q). */
static void S_rows(size_t V, unsigned seed, double *p, double *q)
{
    srand(seed);
    double sp = 0.0, sq = 0.0;
    for (size_t i = 0; i < V; i++) {
        sp += p[i] = i % 7 == 3 ? 0.0 : 1.0 + rand() % 1000;
        sq += q[i] = i % 11 == 5 ? 0.0 : 1.0 + rand() % 1000;
    }
    for (size_t i = 0; i < V; i++) {
        p[i] /= sp;
        q[i] /= sq;
    }
}

Test(iid_large, exact_token_equals_the_closed_forms)
{
    const size_t V = 32000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    S_rows(V, 3, p, q);
    double tv = sd_dist_tv(p, q, V), alpha = 1.0 - tv;
    sd_backoff *m = NULL;
    sd_error err;
    cr_assert_eq(sd_backoff_iid(p, q, V, 20000, 0, &m, &err), SD_OK, "%s", err.msg);
    cr_assert_lt(sd_backoff_bytes(V, 0, 1), (size_t)4 << 20, "O(V): under 4 MB at V = 32000");
    cr_assert_float_eq(m->tv[0], tv, 1e-12, "TV from the rho order %.17g vs the direct sum %.17g", m->tv[0], tv);
    double rej, calls;
    cr_assert_eq(sd_backoff_exact_token(m, 0, &rej, &calls, &err), SD_OK, "%s", err.msg);
    cr_assert_float_eq(rej, 20000.0 * tv, 1e-8);
    for (size_t g = 1; g <= 8; g *= 2) {
        cr_assert_eq(sd_backoff_exact_token(m, g, &rej, &calls, &err), SD_OK, "%s", err.msg);
        double rate = (1.0 - alpha) / (1.0 - pow(alpha, (double)g + 1.0));
        /* E[C](T)/T -> rate with an O(1/T) boundary term */
        cr_assert_float_eq(calls / 20000.0, rate, 2e-4, "gamma=%zu: %.10g vs %.10g", g, calls / 20000.0, rate);
    }
    sd_backoff_free(m);
    free(p);
    free(q);
}

Test(iid_large, refused_over_the_budget_before_allocating)
{
    const size_t V = 32000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    S_rows(V, 4, p, q);
    sd_backoff *m = NULL;
    sd_error err;
    cr_assert_eq(sd_backoff_iid(p, q, V, 1, 1u << 20, &m, &err), SD_ETOOBIG);
    cr_assert_null(m);
    cr_assert(strstr(err.msg, "memory budget"), "%s", err.msg);
    free(p);
    free(q);
}

/* Monte-Carlo on the sparse model against the exact value on the stored
 * chain with the same rows (small V), and at V = 32000 against token's DP. */
static void S_mc(const char *algo, size_t V, size_t T, size_t gamma, int stored)
{
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    S_rows(V, 5, p, q);
    sd_backoff *m = NULL;
    sd_error err;
    cr_assert_eq(sd_backoff_iid(p, q, V, T, 0, &m, &err), SD_OK, "%s", err.msg);
    const sd_verifier_type *vt = sd_verifier_find(algo);
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    sd_exact_values ex;
    sd_chain *c = NULL;
    if (stored) {
        c = sd_chain_from_pq(p, q, V, T, &err);
        cr_assert_not_null(c, "%s", err.msg);
        memset(c->init, 0, V * sizeof *c->init); /* x_0 = 0 as in the sparse model (irrelevant for i.i.d. rows) */
        c->init[0] = 1.0;
        sd_model sm = sd_model_of_chain(c);
        cr_assert_eq(vt->exact ? vt->exact(&sm, &par, &ex, &err) : sd_exact_gen_values(vt, &sm, &par, &ex, &err),
                     SD_OK, "%s", err.msg);
    } else {
        cr_assert_eq(sd_backoff_exact_token(m, gamma, &ex.rejections, &ex.target_calls, &err), SD_OK);
    }
    sd_model sparse = sd_model_of_backoff(m, V, T);
    sd_sim_opts so = {.seed = 11, .trials = 20000, .threads = 2};
    sd_sim_result res;
    memset(&res, 0, sizeof res);
    sd_sim_job job = {vt, &sparse, &par};
    cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
    double zr = (res.rejections.mean - ex.rejections) / sd_welford_stderr(&res.rejections);
    double zc = (res.target_calls.mean - ex.target_calls) / sd_welford_stderr(&res.target_calls);
    cr_assert_lt(fabs(zr), 4.0, "%s V=%zu gamma=%zu: rejections %g vs %g (z %g)", algo, V, gamma,
                 res.rejections.mean, ex.rejections, zr);
    cr_assert_lt(fabs(zc), 4.0, "%s V=%zu gamma=%zu: calls %g vs %g (z %g)", algo, V, gamma, res.target_calls.mean,
                 ex.target_calls, zc);
    sd_sim_result_free(&res);
    sd_chain_free(c);
    sd_backoff_free(m);
    free(p);
    free(q);
}

Test(iid_large, kernels_agree_with_exact)
{
    S_mc("token", 6, 12, 3, 1);
    S_mc("block", 6, 12, 3, 1);
    S_mc("rrs", 6, 12, 3, 1);
    S_mc("token", 32000, 40, 4, 0);
}

/* --- the command line ------------------------------------------------------ */

#include "test_util.h"

/* Two lists of V = 32000 entries as @FILE arguments "--p @A --q @B". */
static void S_pq_args(char *buf, size_t len, size_t V, double scale_p)
{
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    S_rows(V, 9, p, q);
    char *tp = malloc(V * 26 + 2), *tq = malloc(V * 26 + 2);
    size_t lp = 0, lq = 0;
    for (size_t i = 0; i < V; i++) {
        lp += (size_t)sprintf(tp + lp, "%s%.17g", i ? "," : "", p[i] * scale_p);
        lq += (size_t)sprintf(tq + lq, "%s%.17g", i ? "," : "", q[i]);
    }
    char *fp = tu_tempfile(tp), *fq = tu_tempfile(tq);
    snprintf(buf, len, "--p @%s --q @%s", fp, fq);
    free(fp);
    free(fq);
    free(tp);
    free(tq);
    free(p);
    free(q);
}

/* Every evaluator on --p/--q at V = 32000 under a 64 MB budget (a stored
 * chain of identical rows would take 16 GB): each answers; and under a
 * 1 MB budget those that build a model refuse with the budget named,
 * before allocating (exit 65), never an out-of-memory kill. */
Test(iid_large, every_evaluator_in_o_v_memory, .timeout = 120)
{
    char pq[512], cmd[1024];
    S_pq_args(pq, sizeof pq, 32000, 1.0);
    const char *ok[] = {"eval rejections", "eval rejections --T 50", "eval acceptance --k 4",
                        "eval speedup --gamma best", "eval speedup --algo block --gamma 2 --T 10 --trials 200",
                        "eval accept-length --algo token --gamma 4", "eval generation --T 30 --gamma 3",
                        "run --algo token --T 30 --trials 200", "run --algo block --gamma 3 --T 30 --trials 200",
                        "run --algo rrs --k 3 --gamma 3 --T 30 --trials 200"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        snprintf(cmd, sizeof cmd, "%s %s --max-memory 64M", ok[i], pq);
        char *err = NULL;
        int st = tu_run(cmd, NULL, &err);
        cr_expect_eq(st, 0, "%s: exit %d: %s", ok[i], st, err ? err : "");
        free(err);
    }
    const char *refused[] = {"eval speedup --gamma 2", "eval generation --T 5", "run --algo token --T 5",
                             "eval rejections --M 2 --T 3"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        snprintf(cmd, sizeof cmd, "%s %s --max-memory 1M", refused[i], pq);
        tu_expect(cmd, 65, "memory budget");
    }
}

/* --tol applies to lists: float32 rows (sums off by ~2e-8) are refused
 * at the default 1e-9 with a hint, and accepted with --tol 1e-6. */
Test(iid_large, tol_applies_to_lists, .timeout = 60)
{
    char pq[512], cmd[1024];
    S_pq_args(pq, sizeof pq, 32000, 1.0 - 2.3e-8);
    const char *cmds[] = {"eval rejections", "eval speedup --gamma 2", "eval generation --T 5",
                          "run --algo token --T 5 --trials 100"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", cmds[i], pq);
        tu_expect(cmd, 65, "--tol admits more");
        snprintf(cmd, sizeof cmd, "%s %s --tol 1e-6", cmds[i], pq);
        tu_expect(cmd, 0, "");
    }
}

/* eval speedup sweeps like run: --gamma lists and ranges within a table,
 * --algo and --k lists as points (JSON: an array); without --T an i.i.d.
 * problem is evaluated at T -> infinity and --gamma best picks the
 * limit's best (Leviathan et al. 2023 for token). */
Test(iid_large, speedup_lists_and_the_limit, .timeout = 60)
{
    char *out = NULL;
    cr_assert_eq(tu_run("eval speedup --p 0.6,0.4 --q 0.2,0.8 --algo token,block,rrs --k 2,3 --gamma 1..3 --json",
                        &out, NULL), 0);
    /* token, block (no k: once), rrs k 2, rrs k 3 */
    size_t n = 0;
    for (const char *p = strstr(out, "\"best_gamma\""); p; p = strstr(p + 1, "\"best_gamma\""))
        n++;
    cr_expect_eq(n, 4, "%s", out);
    cr_expect(tu_contains(out, "\"horizon_limit\": true"), "%.300s", out);
    free(out);
    out = NULL;
    cr_assert_eq(tu_run("eval speedup --p 0.6,0.4 --q 0.2,0.8 --gamma best --gamma-max 8", &out, NULL), 0);
    cr_expect(tu_contains(out, "T -> infinity"), "%s", out);
    /* alpha = 0.6: (1 - 0.6^{G+1}) / (0.4 (1 + 0.05 G)) is largest at G = 4 */
    const char *b = strstr(out, "<- best");
    cr_assert_not_null(b, "%s", out);
    while (b > out && b[-1] != '\n')
        b--;
    cr_expect_eq(strncmp(b, "      4 ", 8), 0, "best line: %.80s", b);
    free(out);
    tu_expect("eval speedup --p 0.6,0.4 --q 0.2,0.8 --k 2,x --algo rrs --gamma 2", 64, "--k 'x'");
}

/* The speed-up of a tree verifier: it drafts the tree's N nodes (c N per
 * iteration; c D, its depth, with --draft-cost step), and its T -> infinity
 * limit is the renewal rate 1/(E[tau] + 1) with E[tau] from its exact
 * iteration law (the same as eval accept-length's, exact); on rows kept
 * as one pair (a budget under the chain's size) the limit comes from the
 * Monte-Carlo law of tau of its kernel for sparse rows and agrees with
 * the exact one within 4 standard errors (fixed seed; 6e-5 false alarms). */
static json_t *S_json(const char *cmd)
{
    char *out = NULL, *err = NULL;
    int st = tu_run(cmd, &out, &err);
    cr_assert_eq(st, 0, "%s: exit %d: %s", cmd, st, err ? err : "");
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "%s: %s", cmd, je.text);
    free(out);
    free(err);
    return o;
}

Test(iid_large, tree_verifier_speedup, .timeout = 60)
{
    char pq[512], cmd[1024];
    S_pq_args(pq, sizeof pq, 30, 1.0);
    snprintf(cmd, sizeof cmd, "eval accept-length --algo tree-rrs --tree 2,1 %s --json", pq);
    json_t *al = S_json(cmd);
    double tau = json_real_value(json_object_get(al, "expected_accepted"));
    json_decref(al);
    snprintf(cmd, sizeof cmd, "eval speedup --algo tree-rrs --tree 2,1 --c 0.1 %s --json", pq);
    json_t *ex = S_json(cmd);
    json_t *pt = json_array_get(json_object_get(ex, "points"), 0);
    cr_expect(json_is_true(json_object_get(ex, "horizon_limit")));
    cr_expect_eq(json_integer_value(json_object_get(pt, "gamma")), 2, "the draft length of a tree is its depth");
    cr_expect_float_eq(json_real_value(json_object_get(pt, "draft_tokens")), 4.0, 0.0, "2 + 2*1 nodes");
    double rate = json_real_value(json_object_get(pt, "target_calls"));
    cr_expect(json_is_true(json_object_get(pt, "exact")));
    cr_expect_float_eq(rate, 1.0 / (tau + 1.0), 1e-12, "rate %.15g vs 1/(E[tau] + 1) = %.15g", rate, 1 / (tau + 1));
    cr_expect_float_eq(json_real_value(json_object_get(pt, "speedup")), 1.0 / (rate * 1.4), 1e-12);
    json_decref(ex);
    snprintf(cmd, sizeof cmd, "eval speedup --algo tree-rrs --tree 2,1 --c 0.1 --draft-cost step %s --json", pq);
    json_t *st = S_json(cmd);
    pt = json_array_get(json_object_get(st, "points"), 0);
    cr_expect_float_eq(json_real_value(json_object_get(pt, "speedup")), 1.0 / (rate * 1.2), 1e-12, "c D, D = 2");
    json_decref(st);
    /* the row pair kept: the chain at V = 30 exceeds an 8 KB budget */
    snprintf(cmd, sizeof cmd, "eval speedup --algo tree-rrs --tree 2,1 --c 0.1 %s --max-memory 8K --trials 20000 "
             "--json", pq);
    json_t *mc = S_json(cmd);
    pt = json_array_get(json_object_get(mc, "points"), 0);
    cr_expect(json_is_false(json_object_get(pt, "exact")));
    double r = json_real_value(json_object_get(pt, "target_calls"));
    double se = json_real_value(json_object_get(pt, "iid_limit_calls_per_token_stderr"));
    cr_assert_gt(se, 0.0);
    cr_expect_lt(fabs(r - rate) / se, 4.0, "Monte-Carlo %.6g vs exact %.6g (se %.3g)", r, rate, se);
    json_decref(mc);
    snprintf(cmd, sizeof cmd, "eval speedup --algo tree-rrs --tree 2,1 --gamma best %s", pq);
    tu_expect(cmd, 64, "--gamma best: --algo tree-rrs drafts the tree --tree");
    snprintf(cmd, sizeof cmd, "eval speedup --algo tree-rrs --tree 2,1 --gamma 1..3 %s", pq);
    tu_expect(cmd, 64, "--gamma 1..3: --algo tree-rrs drafts the tree --tree"); /* the value given, not LIST */
    /* the default tree 2,2 at V = 30: 7e8 drafted trees, beyond the iteration
     * law's enumeration: the limit by the kernel's law of tau */
    snprintf(cmd, sizeof cmd, "eval speedup --algo tree-rrs %s --trials 2000", pq);
    tu_expect(cmd, 0, "");
}
