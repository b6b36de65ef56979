/* test_optimal_md.c — the verifier optimal-md (Thomas & Pal 2025) and its
 * control broken-optimal-md: suite optimal_md.
 *   - its exact iteration law at one draft position accepts the k-draft
 *     optimum α_k (src/sd_exact_otm.h) within 1e-9 (GLPK's plan is feasible
 *     to ~1e-9), on random single-token problems;
 *   - `check --exact` proves it lossless (exact TV <= 1e-12) and flags the
 *     control; the Monte-Carlo `check` agrees (fixed seed, alpha 0.001);
 *   - `run` measures the optimum within 4 standard errors. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../src/sd_chain.h"
#include "../src/sd_exact_otm.h"
#include "test_exact_util.h"
#include "test_util.h"

static double S_law_accepted(const sd_chain *c, size_t k, size_t gamma)
{
    const sd_verifier_type *vt = sd_verifier_find("optimal-md");
    cr_assert_not_null(vt);
    sd_params par;
    sd_error err;
    sd_params_defaults(&par, vt);
    char ks[32], gs[32];
    snprintf(ks, sizeof ks, "%zu", k);
    snprintf(gs, sizeof gs, "%zu", gamma);
    cr_assert_eq(sd_params_parse(&par, vt, "k", ks, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_params_parse(&par, vt, "gamma", gs, &err), SD_OK, "%s", err.msg);
    sd_iter_law law = {0};
    cr_assert_eq(vt->iteration_law(c, &par, 1, 0, &law, &err), SD_OK, "%s", err.msg);
    double acc = 0.0, tot = 0.0;
    for (size_t i = 0; i < law.n; i++) {
        const sd_iter_outcome *o = &law.o[i];
        size_t a = o->rejected ? o->emitted - 1 : (o->emitted > gamma ? gamma : o->emitted);
        acc += o->prob * (double)a;
        tot += o->prob;
    }
    sd_iter_law_free(&law);
    cr_expect(fabs(tot - 1.0) < 1e-12, "law sums to %.17g", tot);
    return acc;
}

Test(optimal_md, exact_acceptance_is_the_k_draft_optimum)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 15898);
    double p[6], q[6];
    for (int it = 0; it < 24; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 5), k = 1 + gsl_rng_uniform_int(r, 3);
        tx_random_dist(r, p, V, it % 2 ? 0.25 : 0.0, it % 3 == 0 ? 3 : 0);
        tx_random_dist(r, q, V, it % 2 ? 0.25 : 0.0, it % 3 == 0 ? 3 : 0);
        sd_chain *c = sd_chain_from_pq(p, q, V, 3, NULL);
        cr_assert_not_null(c);
        double a, opt;
        a = S_law_accepted(c, k, 1);
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &opt, NULL, NULL), SD_OK);
        cr_expect(fabs(a - opt) < 1e-9, "it %d V %zu k %zu: optimal-md accepts %.17g, optimum %.17g", it, V, k,
                  a, opt);
        sd_chain_free(c);
    }
    gsl_rng_free(r);
}

/* `simdec ARGS` (JSON on stdout) parsed; the caller frees it. */
static json_t *S_json(const char *args)
{
    char *out = NULL;
    cr_assert_eq(tu_run(args, &out, NULL), 0, "simdec %s", args);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "simdec %s: not JSON", args);
    free(out);
    return o;
}

Test(optimal_md, check_exact_lossless_and_control_flagged)
{
    /* default chain, k = 2 (L = 2) and k = 3 (L = 1: its LPs are larger);
     * the Monte-Carlo check at its default alpha 0.001 with seed 1 */
    const char *ks[] = {"2 --L 2", "3 --L 1"};
    for (size_t i = 0; i < 2; i++) {
        char args[256];
        snprintf(args, sizeof args, "check --algo optimal-md --k %s --exact --trials 40000 --threads 2 --json",
                 ks[i]);
        json_t *o = S_json(args);
        double tv = json_number_value(json_object_get(o, "exact_tv"));
        cr_expect(tv <= 1e-12, "optimal-md --k %s: exact TV %.3g", ks[i], tv);
        cr_expect(json_is_true(json_object_get(o, "unbiased")), "optimal-md --k %s: check flags it", ks[i]);
        json_decref(o);
        snprintf(args, sizeof args,
                 "check --algo broken-optimal-md --k %s --exact --trials 40000 --threads 2 --json", ks[i]);
        o = S_json(args);
        tv = json_number_value(json_object_get(o, "exact_tv"));
        cr_expect(tv > 0.01, "broken-optimal-md --k %s: exact TV only %.3g", ks[i], tv);
        cr_expect(json_is_false(json_object_get(o, "unbiased")), "broken-optimal-md --k %s passes check", ks[i]);
        json_decref(o);
    }
}

Test(optimal_md, run_measures_the_optimum_within_4_se)
{
    /* one draft position (gamma 1) on a single-token problem: accepted
     * drafts per iteration is the acceptance; 4 se with a fixed seed (a
     * two-sided z beyond 4 has probability 6e-5) */
    double p[4] = {0.5, 0.3, 0.15, 0.05}, q[4] = {0.1, 0.2, 0.3, 0.4}, opt;
    cr_assert_eq(sd_exact_otm_acceptance(p, q, 4, 3, &opt, NULL, NULL), SD_OK);
    json_t *o = S_json("run --algo optimal-md --k 3 --gamma 1 --p 0.5,0.3,0.15,0.05 --q 0.1,0.2,0.3,0.4 --T 20 "
                       "--trials 20000 --seed 7 --threads 2 --json");
    json_t *a = json_object_get(o, "accepted_per_iteration");
    double mean = json_number_value(json_object_get(a, "mean")), se = json_number_value(json_object_get(a, "stderr"));
    cr_expect(se > 0 && fabs(mean - opt) < 4 * se, "measured %.6f +- %.6f, optimum %.6f", mean, se, opt);
    json_decref(o);
}
