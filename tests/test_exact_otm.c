/* test_exact_otm.c — optimal k-draft acceptance by the sorted prefix,
 * recursive rejection sampling, k-Seq (Sun et al. 2023, §5, App. B):
 * suite exact_otm. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "../lp/sd_lp_otm.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact_otm.h"
#include "../src/sd_kseq.h"
#include "test_exact_util.h"

extern const sd_verifier_type sd_verifier_rrs;
extern const sd_verifier_type sd_verifier_spectr;

Test(exact_otm, prefix_equals_brute_force_over_all_subsets)
{
    /* 6000 random instances, V = 1..11, k = 1..8, with zeros in p and q
     * and (every third instance) integer weights so that q/p ties occur. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2718);
    double p[11], q[11];
    for (int it = 0; it < 6000; it++) {
        size_t V = 1 + gsl_rng_uniform_int(r, 11), k = 1 + gsl_rng_uniform_int(r, 8);
        unsigned levels = it % 3 == 0 ? 3 : 0;
        double zf = (it % 4) * 0.15;
        tx_random_dist(r, p, V, zf, levels);
        tx_random_dist(r, q, V, zf, levels);
        double fast, brute;
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &fast, NULL, NULL), SD_OK);
        cr_assert_eq(sd_exact_otm_acceptance_brute(p, q, V, k, &brute, NULL), SD_OK);
        cr_expect(fabs(fast - brute) < 1e-12, "it %d V %zu k %zu: prefix %.17g, brute %.17g", it, V,
                  k, fast, brute);
        if (k == 1) /* α_1 = 1 - TV */
            cr_expect(fabs(fast - (1 - sd_dist_tv(p, q, V))) < 1e-12);
    }
    gsl_rng_free(r);
}

Test(exact_otm, prefix_equals_lp_optimum)
{
    /* The LP of lp/otm.c (the referee): 40 random instances,
     * V <= 5, k <= 3; GLPK's optimum is accurate to ~1e-9. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1618);
    double p[5], q[5];
    for (int it = 0; it < 40; it++) {
        size_t V = 2 + gsl_rng_uniform_int(r, 4), k = 1 + gsl_rng_uniform_int(r, 3);
        tx_random_dist(r, p, V, it % 2 ? 0.25 : 0.0, 0);
        tx_random_dist(r, q, V, it % 2 ? 0.25 : 0.0, 0);
        double a;
        sd_lp_otm_plan *plan;
        sd_error err;
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &a, NULL, NULL), SD_OK);
        cr_assert_eq(sd_lp_otm_plan_solve(p, q, V, k, 0, &plan, &err), SD_OK, "%s", err.msg);
        cr_expect(fabs(plan->alpha - a) < 1e-8, "it %d V %zu k %zu: LP %.12f, prefix %.12f", it, V,
                  k, plan->alpha, a);
        sd_lp_otm_plan_free(plan);
    }
    gsl_rng_free(r);
}

Test(exact_otm, bernoulli_and_uniform_closed_forms)
{
    /* draft Ber(a), target Ber(b) (Sun et al. 2023, App. B) */
    for (int i = 0; i <= 20; i++)
        for (int j = 0; j <= 20; j++)
            for (size_t k = 1; k <= 10; k++) {
                double a = i / 20.0, b = j / 20.0, p[2] = {1 - a, a}, q[2] = {1 - b, b}, x;
                cr_assert_eq(sd_exact_otm_acceptance(p, q, 2, k, &x, NULL, NULL), SD_OK);
                double cf = sd_exact_otm_bernoulli(a, b, k);
                cr_expect(fabs(x - cf) < 1e-12, "a %g b %g k %zu: %.17g vs %.17g", a, b, k, x, cf);
            }
    /* draft U(120), target U(120/r) (Sun et al. 2023, Fig. 5) */
    enum { D = 120 };
    static const size_t dq[] = {1, 2, 3, 5, 8, 10, 24, 60, 120};
    double p[D], q[D];
    for (size_t i = 0; i < sizeof dq / sizeof *dq; i++) {
        for (size_t x = 0; x < D; x++) {
            p[x] = 1.0 / D;
            q[x] = x < dq[i] ? 1.0 / (double)dq[i] : 0.0;
        }
        for (size_t k = 1; k <= 40; k += 3) {
            double x;
            cr_assert_eq(sd_exact_otm_acceptance(p, q, D, k, &x, NULL, NULL), SD_OK);
            double cf = sd_exact_otm_uniform((double)D / (double)dq[i], k);
            cr_expect(fabs(x - cf) < 1e-12, "d_q %zu k %zu: %.17g vs %.17g", dq[i], k, x, cf);
        }
    }
}

static int S_cmp(const void *u, const void *v)
{
    double a = *(const double *)u, b = *(const double *)v;
    return (a > b) - (a < b);
}

Test(exact_otm, large_vocabulary_prefix_is_locally_optimal)
{
    /* V = 50 000: no single token added to or removed from the maximising
     * prefix improves p(B)^k - q(B) (a necessary condition the brute force
     * cannot reach at this size).  Timing of V = 10^6 reported, not
     * asserted. */
    enum { V = 50000 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 99);
    double *p = malloc(1000000 * sizeof *p), *q = malloc(1000000 * sizeof *q);
    char *in = calloc(V, 1);
    static const size_t ks[] = {2, 5, 40};
    for (int rep = 0; rep < 3; rep++) {
        tx_random_dist(r, p, V, 0.1, 0);
        for (size_t x = 0; x < V; x++) /* q: p tilted, so that k matters */
            q[x] = p[x] * (x % 7 == 0 ? 6.0 : 0.5) * (1.0 + 0.1 * gsl_rng_uniform(r)) +
                   (x % 13 == 0 ? 1e-6 : 0.0); /* continuous: no ties in q/p */
        sd_dist_normalise(q, V);
        double a;
        size_t len;
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, ks[rep], &a, &len, NULL), SD_OK);
        /* rebuild B: the first len tokens in q/p order = those with ratio
         * at most the len-th smallest (no ties, see q) */
        double *key = malloc(V * sizeof *key);
        for (size_t x = 0; x < V; x++)
            key[x] = p[x] > 0 ? q[x] / p[x] : HUGE_VAL;
        double *sorted = malloc(V * sizeof *sorted);
        for (size_t x = 0; x < V; x++)
            sorted[x] = key[x];
        qsort(sorted, V, sizeof *sorted, S_cmp);
        double thr = len ? sorted[len - 1] : -1.0;
        double pB = 0, qB = 0;
        for (size_t x = 0; x < V; x++) {
            in[x] = key[x] <= thr;
            if (in[x]) {
                pB += p[x];
                qB += q[x];
            }
        }
        double kd = (double)ks[rep], f = pow(pB, kd) - qB;
        cr_expect(fabs((1 - f) - a) < 1e-9, "rep %d: rebuilt %.17g vs %.17g", rep, 1 - f, a);
        cr_expect(len > 0 && len < V, "rep %d: trivial prefix %zu", rep, len);
        for (size_t x = 0; x < V; x++) {
            double g = in[x] ? pow(pB - p[x], kd) - (qB - q[x]) : pow(pB + p[x], kd) - (qB + q[x]);
            cr_expect(g <= f + 1e-12, "rep %d token %zu (%s): %.17g > %.17g", rep, x,
                      in[x] ? "removed" : "added", g, f);
            if (g > f + 1e-12)
                break;
        }
        free(key);
        free(sorted);
    }
    tx_random_dist(r, p, 1000000, 0.0, 0);
    tx_random_dist(r, q, 1000000, 0.0, 0);
    clock_t t0 = clock();
    double a;
    cr_assert_eq(sd_exact_otm_acceptance(p, q, 1000000, 7, &a, NULL, NULL), SD_OK);
    cr_log_info("alpha_7 at V = 10^6: %.12f in %.3f s CPU", a,
                (double)(clock() - t0) / CLOCKS_PER_SEC);
    cr_expect(a > 0.0 && a <= 1.0);
    free(p);
    free(q);
    free(in);
    gsl_rng_free(r);
}

Test(exact_otm, rrs_and_kseq_below_optimum)
{
    /* OTM-k is the optimum over valid k-draft verifiers, so RRS and k-Seq
     * never exceed it; RRS's closed forms: uniform 1 - (1-1/r)^k (equal to
     * OTM there), Bernoulli (draft Ber(u), target Ber(v), u >= v)
     * 1 - (u-v) u^{k-1}. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    double p[12], q[12];
    for (int it = 0; it < 2000; it++) {
        size_t V = 1 + gsl_rng_uniform_int(r, 12), k = 1 + gsl_rng_uniform_int(r, 6);
        tx_random_dist(r, p, V, 0.2, 0);
        tx_random_dist(r, q, V, 0.2, 0);
        double o, rr, ks;
        cr_assert_eq(sd_exact_otm_acceptance(p, q, V, k, &o, NULL, NULL), SD_OK);
        cr_assert_eq(sd_exact_rrs_acceptance(p, q, V, k, &rr, NULL), SD_OK);
        cr_assert_eq(sd_kseq_acceptance(p, q, V, k, &ks, NULL), SD_OK);
        cr_expect(rr <= o + 1e-12 && ks <= o + 1e-12, "it %d: otm %.17g rrs %.17g kseq %.17g", it, o,
                  rr, ks);
    }
    gsl_rng_free(r);
    for (int i = 0; i <= 10; i++)
        for (int j = 0; j <= i; j++)
            for (size_t k = 1; k <= 6; k++) {
                double u = i / 10.0, v = j / 10.0, p2[2] = {1 - u, u}, q2[2] = {1 - v, v}, x;
                cr_assert_eq(sd_exact_rrs_acceptance(p2, q2, 2, k, &x, NULL), SD_OK);
                cr_expect(fabs(x - (1 - (u - v) * pow(u, (double)k - 1))) < 1e-12);
            }
}

/* Acceptance rate of one position of vt (k drafts, T = 1 chain): the
 * fraction of iterations that accepted a draft token. */
static void S_mc_accept(const sd_verifier_type *vt, const double *p, const double *q, size_t V,
                        size_t k, double *mean, double *se)
{
    sd_chain *c = sd_chain_from_pq(p, q, V, 1, NULL);
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = k;
    sd_sim_opts o = {.seed = 3, .trials = 40000, .threads = 1};
    sd_sim_result res;
    sd_error err;
    cr_assert_eq(sd_sim_run(vt, c, &par, &o, &res, &err), SD_OK, "%s", err.msg);
    *mean = res.accepted.mean;
    *se = sd_welford_stderr(&res.accepted);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}

Test(exact_otm, rrs_and_kseq_within_4_se_of_verifiers)
{
    /* sims/verifiers/rrs.c and sims/verifiers/spectr.c (k-Seq plan) at one position; tolerance
     * 4 SE (false alarm ~6e-5 per comparison). */
    double p[5] = {0.35, 0.25, 0.2, 0.15, 0.05}, q[5] = {0.05, 0.1, 0.2, 0.3, 0.35};
    for (size_t k = 2; k <= 5; k += 3) {
        double ex, m, se;
        cr_assert_eq(sd_exact_rrs_acceptance(p, q, 5, k, &ex, NULL), SD_OK);
        S_mc_accept(&sd_verifier_rrs, p, q, 5, k, &m, &se);
        cr_expect(fabs(m - ex) < 4 * se, "rrs k %zu: MC %.5f ± %.5f vs %.5f", k, m, se, ex);
        cr_assert_eq(sd_kseq_acceptance(p, q, 5, k, &ex, NULL), SD_OK);
        S_mc_accept(&sd_verifier_spectr, p, q, 5, k, &m, &se);
        cr_expect(fabs(m - ex) < 4 * se, "kseq k %zu: MC %.5f ± %.5f vs %.5f", k, m, se, ex);
    }
}
