/* test_zipf.c — the on-demand large-vocabulary (Zipf) model: reproducible
 * rows, memory per token, the Feistel permutations, the exact formula
 * against Theorem 1, Monte-Carlo at GPT-2 vocabulary; suite zipf. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_zipf.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

/* --- the on-demand model ------------------------------------------------------ */

static sd_zipf *S_lazy(size_t V, size_t T, uint64_t seed)
{
    sd_zipf_params lp = {V, T, seed, SD_ZIPF_DEFAULT_S_DRAFT, SD_ZIPF_DEFAULT_S_TARGET};
    sd_zipf *m = NULL;
    sd_error e;
    cr_assert_eq(sd_zipf_new(&lp, &m, &e), SD_OK, "%s", e.msg);
    return m;
}

Test(zipf, rows_are_reproducible_distributions)
{
    sd_zipf *m = S_lazy(1000, 5, 77), *m2 = S_lazy(1000, 5, 77), *m3 = S_lazy(1000, 5, 78);
    double *p = malloc(1000 * sizeof *p), *q = malloc(1000 * sizeof *q), *p2 = malloc(1000 * sizeof *p2);
    unsigned char *seen = calloc(1000, 1);
    for (size_t t = 1; t <= 5; t++)
        for (size_t a = 0; a < 1000; a += 333) {
            sd_zipf_rows(m, t, a, p, q);
            double sum = 0;
            cr_assert_eq(sd_dist_check(p, 1000, 1e-12, &sum), -1, "p_%zu(.|%zu) sums to %.17g", t, a, sum);
            cr_assert_eq(sd_dist_check(q, 1000, 1e-12, &sum), -1, "q_%zu(.|%zu) sums to %.17g", t, a, sum);
            cr_assert_float_eq(sd_dist_tv(p, q, 1000), m->tv, 1e-12);
            sd_zipf_rows(m2, t, a, p2, NULL);
            cr_assert_eq(memcmp(p, p2, 1000 * sizeof *p), 0, "same seed, same row");
            sd_zipf_rows(m3, t, a, p2, NULL);
            cr_assert_neq(memcmp(p, p2, 1000 * sizeof *p), 0, "another seed, another row");
            memset(seen, 0, 1000);
            for (size_t b = 0; b < 1000; b++) { /* π is a bijection, π⁻¹ its inverse */
                size_t r = sd_zipf_rank(m, t, a, b);
                cr_assert_lt(r, 1000);
                cr_assert_eq(seen[r], 0);
                seen[r] = 1;
                cr_assert_eq(sd_zipf_token(m, t, a, r), b);
            }
        }
    free(p);
    free(q);
    free(p2);
    free(seen);
    sd_zipf_free(m);
    sd_zipf_free(m2);
    sd_zipf_free(m3);
}

/* The model's bytes are SD_ZIPF_BYTES_PER_TOKEN = 64 a token up to
 * V = SIZE_MAX / 128, where 64 V < SIZE_MAX / 2 still fits; beyond, the
 * count saturates at SIZE_MAX (then refused as too big). */
Test(zipf, bytes_per_token_up_to_the_saturation)
{
    const size_t vmax = SIZE_MAX / 128;
    cr_expect_eq(sd_zipf_bytes(1000), 64000u);
    cr_expect_eq(sd_zipf_bytes(vmax), 64 * vmax);
    cr_expect_eq(sd_zipf_bytes(vmax + 1), SIZE_MAX);
}

/* The permutations π_{t,a} are pinned by values computed outside this
 * code: a Python transcription of the construction in sd_zipf.h
 * (splitmix64's finaliser with Steele, Lea & Flood's constants, checked on
 * the published first output of splitmix64 seeded 0, 0xe220a8397b1dcdaf;
 * key = mix(seed ^ mix(t·2^32 ^ a)); 4 Feistel rounds on 2·2 bits with
 * round function mix(key + r·2^56 + half) & 3; cycle walking into
 * 0..V-1) gives at V = 10, seed 77 the ranks of tokens 0..9.  The rank
 * laws alone cannot see a change of the mixer; these can. */
Test(zipf, permutations_are_the_documented_feistel_network)
{
    sd_zipf *m = S_lazy(10, 5, 77);
    static const size_t r10[10] = {8, 6, 2, 3, 9, 1, 5, 7, 0, 4}, r37[10] = {8, 1, 7, 4, 2, 9, 6, 0, 3, 5};
    for (size_t b = 0; b < 10; b++) {
        cr_expect_eq(sd_zipf_rank(m, 1, 0, b), r10[b], "pi_{1,0}(%zu)", b);
        cr_expect_eq(sd_zipf_rank(m, 3, 7, b), r37[b], "pi_{3,7}(%zu)", b);
    }
    sd_zipf_free(m);
    /* V = 1000 (5 bits a half): tokens 0, 1, 500, 999 in context (5, 999) */
    m = S_lazy(1000, 5, 77);
    static const size_t tok[4] = {0, 1, 500, 999}, rk[4] = {69, 774, 766, 552};
    for (size_t i = 0; i < 4; i++)
        cr_expect_eq(sd_zipf_rank(m, 5, 999, tok[i]), rk[i], "pi_{5,999}(%zu)", tok[i]);
    sd_zipf_free(m);
}

Test(zipf, exact_formula_equals_theorem1_on_the_stored_chain)
{
    /* At small V the model is stored as a chain: the collapsed formulas
     * must give Theorem 1 and the finite-gamma DP of sd_exact.h. */
    sd_zipf *m = S_lazy(6, 9, 5);
    sd_chain *c = sd_zipf_to_chain(m, NULL);
    cr_assert_not_null(c);
    const size_t gammas[] = {0, 1, 3};
    for (size_t i = 0; i < 3; i++) {
        double a, ac, b, bc;
        cr_assert_eq(sd_zipf_exact_token(m, gammas[i], &a, &ac, NULL), SD_OK);
        cr_assert_eq(sd_exact_token(c, gammas[i], &b, &bc, NULL), SD_OK);
        cr_assert(fabs(a - b) <= 1e-12 * b, "gamma %zu: %.17g vs %.17g", gammas[i], a, b);
        cr_assert(fabs(ac - bc) <= 1e-12 * bc, "gamma %zu calls: %.17g vs %.17g", gammas[i], ac, bc);
    }
    double t1;
    sd_exact_rejections(c, &t1, NULL);
    cr_assert(fabs(t1 - 9 * m->tv) <= 1e-12 * t1);
    sd_chain_free(c);
    sd_zipf_free(m);
}

Test(zipf, monte_carlo_at_gpt2_vocabulary_matches_exact)
{
    /* V = 50 257, T = 128 in O(V) memory.  Tolerance 4 standard errors
     * (failure probability ~6e-5 per check for a correct simulator). */
    sd_zipf *m = S_lazy(50257, 128, 10);
    const size_t gammas[] = {0, 5};
    for (size_t i = 0; i < 2; i++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.gamma = gammas[i];
        sd_model md = sd_model_of_zipf(m);
        sd_sim_job job = {&sd_verifier_token, &md, &par};
        sd_sim_opts so = {.seed = 3, .trials = 3000};
        sd_sim_result r;
        sd_error e;
        cr_assert_eq(sd_sim_run_job(&job, &so, &r, &e), SD_OK, "%s", e.msg);
        cr_assert_str_eq(r.kernel, "token-zipf");
        double rej, calls;
        cr_assert_eq(sd_zipf_exact_token(m, gammas[i], &rej, &calls, NULL), SD_OK);
        double se = sd_welford_stderr(&r.rejections), sc = sd_welford_stderr(&r.target_calls);
        cr_expect(fabs(r.rejections.mean - rej) < 4 * se, "gamma %zu: %.5f vs exact %.5f (se %.5f)",
                  gammas[i], r.rejections.mean, rej, se);
        cr_expect(fabs(r.target_calls.mean - calls) < 4 * sc, "gamma %zu: calls %.5f vs %.5f (se %.5f)",
                  gammas[i], r.target_calls.mean, calls, sc);
        sd_sim_result_free(&r);
    }
    sd_zipf_free(m);
}

Test(zipf, refuses_what_does_not_fit_and_other_verifiers)
{
    sd_zipf_params lp = {(size_t)1 << 26, 10, 1, 1.0, 1.2};
    sd_zipf *m = NULL;
    sd_error e;
    cr_assert_eq(sd_zipf_new(&lp, &m, &e), SD_ETOOBIG);
    cr_assert(strstr(e.msg, "limit") != NULL, "%s", e.msg);
    cr_assert_null(m);
    lp.V = 1;
    cr_assert_eq(sd_zipf_new(&lp, &m, &e), SD_EUSAGE);
    m = S_lazy(100, 4, 1);
    sd_params par;
    sd_params_defaults(&par, NULL);
    const sd_verifier_type *blk = sd_verifier_find("block");
    if (blk) {
        sd_model md = sd_model_of_zipf(m);
        sd_sim_job job = {blk, &md, &par};
        sd_sim_opts so = {.seed = 1, .trials = 10};
        sd_sim_result r;
        cr_assert_eq(sd_sim_run_job(&job, &so, &r, &e), SD_EUSAGE);
        cr_assert(strstr(e.msg, "token") != NULL, "%s", e.msg);
    }
    sd_zipf_free(m);
}
