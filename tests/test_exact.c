/* test_exact.c — batch SD (Yin et al. 2024, Theorem 3, Proposition 1), single-token
 * batch improvement, the Pareto front (Theorems 4, 5) and SPRINTER
 * (Zhong et al. 2025, Theorems 3.1, 3.3, 3.4): suites exact_batch, exact_single. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "test_util.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_exact_batch.h"
#include "../src/sd_exact_single.h"
#include "../src/sd_stats.h"
#include "test_exact_util.h"

extern const sd_verifier_type sd_verifier_token;
extern const sd_verifier_type sd_verifier_batch;
extern const sd_verifier_type sd_verifier_biased;
extern const sd_verifier_type sd_verifier_sprinter;

/* Runs vt on c for `trials` trials (one thread, fixed seed); asserts it ran. */
static void S_sim(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                  uint64_t trials, int positions, sd_sim_result *res)
{
    sd_sim_opts o = {.seed = 11, .trials = trials, .threads = 1, .want_positions = positions};
    sd_error err;
    cr_assert_eq(sd_sim_run(vt, c, par, &o, res, &err), SD_OK, "%s: %s", vt->name, err.msg);
}

/* --- Theorem 3: recursion vs DP ------------------------------------------ */

Test(exact_batch, recursion_equals_dp_to_1e12)
{
    /* Homogeneous and not, with and without zeros (target mass where the
     * draft has none), M = 2, 4, 7 (and 1, 3, 25). */
    static const size_t Ms[] = {1, 2, 3, 4, 7, 25};
    int cases = 0;
    for (unsigned long seed = 1; seed <= 6; seed++)
        for (int hom = 0; hom <= 1; hom++) {
            double zf = (seed % 3) * 0.3; /* 0, 0.3, 0.6 */
            size_t V = 3 + seed % 5, T = 10 + 7 * seed;
            sd_chain *c = tx_random_chain(V, T, hom, zf, 1000 + seed);
            cr_assert_not_null(c);
            for (size_t i = 0; i < sizeof Ms / sizeof *Ms; i++) {
                double rec, dp;
                cr_assert_eq(sd_exact_batch_rejections(c, Ms[i], &rec, NULL), SD_OK);
                cr_assert_eq(sd_exact_batch_rejections_dp(c, Ms[i], &dp, NULL), SD_OK);
                cr_expect(fabs(rec - dp) <= 1e-12, "seed %lu hom %d M %zu: recursion %.17g, DP %.17g",
                          seed, hom, Ms[i], rec, dp);
                cases++;
            }
            sd_chain_free(c);
        }
    cr_assert_eq(cases, 72);
}

Test(exact_batch, m1_is_theorem1_and_decreasing_in_M)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    sd_chain *c = sd_chain_generate(&gp, NULL);
    double t1, prev;
    cr_assert_eq(sd_exact_rejections(c, &t1, NULL), SD_OK);
    cr_assert_eq(sd_exact_batch_rejections(c, 1, &prev, NULL), SD_OK);
    cr_expect(fabs(t1 - prev) < 1e-12, "Theorem 1 %.17g vs Theorem 3 at M=1 %.17g", t1, prev);
    /* More drafts never hurt: R_n(a) falls with M. */
    for (size_t M = 2; M <= 10; M++) {
        double r;
        cr_assert_eq(sd_exact_batch_rejections(c, M, &r, NULL), SD_OK);
        cr_expect(r <= prev + 1e-12, "M=%zu: %.17g > M-1: %.17g", M, r, prev);
        prev = r;
    }
    double inf;
    cr_assert_eq(sd_exact_batch_rejections_inf(c, &inf, NULL), SD_OK);
    cr_expect(inf <= prev + 1e-12 && inf > 0.0, "limit %.17g vs M=10 %.17g", inf, prev);
    sd_chain_free(c);
}

Test(exact_batch, limit_is_reached)
{
    /* When every draft row has a zero where the target has mass q(Z) > 0,
     * each token x with p(x) > 0 loses at least q(Z) p(x) of residual mass
     * per round, so after M >= 1/(q(Z) min p) rounds the residual chain sits
     * at its limit q 1_Z and Theorem 3 equals the limit exactly.  Otherwise
     * (q(Z) = 0) R_M -> 0 only geometrically, and E[N_rej](M) decreases to
     * the limit. */
    for (unsigned long seed = 1; seed <= 4; seed++) {
        sd_chain *c = tx_random_chain(4, 12, seed % 2, 0.0, 77 + seed);
        size_t steps = c->draft_steps, V = c->V;
        double bound = 0.0;
        for (size_t i = 0; i < steps * V; i++) {
            double *p = c->draft + i * V, *q = c->target + i * V;
            p[i % V] = 0.0; /* Z = {i mod V}, and q has full support */
            sd_dist_normalise(p, V);
            for (size_t x = 0; x < V; x++)
                if (p[x] > 0.0 && 1.0 / (q[i % V] * p[x]) > bound)
                    bound = 1.0 / (q[i % V] * p[x]);
        }
        cr_assert(bound < 1e5, "seed %lu: bound %g", seed, bound);
        double big, inf;
        cr_assert_eq(sd_exact_batch_rejections(c, (size_t)bound + 2, &big, NULL), SD_OK);
        cr_assert_eq(sd_exact_batch_rejections_inf(c, &inf, NULL), SD_OK);
        cr_expect(fabs(big - inf) < 1e-12, "seed %lu: M=%zu %.17g vs limit %.17g", seed,
                  (size_t)bound + 2, big, inf);
        sd_chain_free(c);
    }
    for (unsigned long seed = 1; seed <= 3; seed++) {
        sd_chain *c = tx_random_chain(4, 12, 0, 0.3, 177 + seed);
        double prev = HUGE_VAL, inf;
        cr_assert_eq(sd_exact_batch_rejections_inf(c, &inf, NULL), SD_OK);
        for (size_t M = 1; M <= 16384; M *= 4) {
            double e;
            cr_assert_eq(sd_exact_batch_rejections(c, M, &e, NULL), SD_OK);
            cr_expect(e <= prev + 1e-12 && e >= inf - 1e-12, "seed %lu M %zu: %.17g (limit %.17g)",
                      seed, M, e, inf);
            prev = e;
        }
        /* the slowest row decays like (1 - min p)^M; min p >= 8e-4 here */
        cr_expect(prev - inf < 1e-9, "seed %lu: M=16384 %.17g, limit %.17g", seed, prev, inf);
        sd_chain_free(c);
    }
}

Test(exact_batch, proposition1_counterexample)
{
    /* Draft p = (1, 0), target q = (1/2, 1/2): token 1 is never drafted, so
     * a fresh position rejects with probability 1/2 whatever M.  The
     * paper's Proposition 1 (R_M -> 0) would give 0 for one token. */
    double p[2] = {1.0, 0.0}, q[2] = {0.5, 0.5}, u[2];
    for (size_t M = 1; M <= 50; M++)
        cr_expect_eq(sd_exact_batch_row(p, q, 2, M, u), 0.5);
    sd_chain *c = sd_chain_from_pq(p, q, 2, 1, NULL);
    double inf;
    cr_assert_eq(sd_exact_batch_rejections_inf(c, &inf, NULL), SD_OK);
    cr_expect_eq(inf, 0.5);
    sd_chain_free(c);
}

Test(exact_batch, refuses_bad_sizes)
{
    sd_chain *c = tx_random_chain(3, 5, 1, 0.0, 5);
    sd_error err;
    double x;
    cr_expect_eq(sd_exact_batch_rejections(c, 0, &x, &err), SD_EUSAGE);
    cr_expect_eq(sd_exact_batch_rejections_dp(c, (size_t)1 << 40, &x, &err), SD_ETOOBIG);
    cr_expect(strstr(err.msg, "limit") != NULL, "%s", err.msg);
    sd_chain_free(c);
}

/* An independent Monte-Carlo of batch SD (Yin et al. 2024, Alg. 4, the unbiased
 * reading of Yin et al. 2024, Alg. 4) with lookahead to the horizon, drafting lazily
 * (the chosen draft's next token given its prefix is p_n(.|x_{n-1})):
 * returns the rejections of one trial.  qm, nx: V doubles of scratch. */
static size_t S_batch_trial(const sd_chain *c, size_t M, gsl_rng *r, double *qm, double *nx)
{
    size_t V = c->V, prev = sd_dist_sample(c->init, V, 1.0, gsl_rng_uniform(r)), rej = 0;
    int fresh = 1; /* position 1 starts an iteration */
    for (size_t n = 1; n <= c->T; n++) {
        const double *p = sd_chain_p(c, n, prev), *q = sd_chain_q(c, n, prev);
        size_t x = V;
        int rejected = 0;
        if (fresh) {
            memcpy(qm, q, V * sizeof *qm); /* q^1 = q */
            for (size_t m = 1; m <= M && x == V; m++) {
                size_t d = sd_dist_sample(p, V, 1.0, gsl_rng_uniform(r));
                if (gsl_rng_uniform(r) * p[d] < qm[d]) {
                    x = d;
                } else {
                    sd_dist_residual(p, qm, V, nx); /* q^{m+1} = [q^m - p]+ */
                    memcpy(qm, nx, V * sizeof *qm);
                }
            }
            if (x == V) { /* all M first tokens failed: sample q^{M+1} */
                x = sd_dist_sample(qm, V, 1.0, gsl_rng_uniform(r));
                rejected = 1;
            }
        } else {
            size_t d = sd_dist_sample(p, V, 1.0, gsl_rng_uniform(r));
            if (gsl_rng_uniform(r) * p[d] < q[d]) {
                x = d;
            } else {
                x = sd_dist_sample_residual(p, q, V, sd_dist_tv(p, q, V), gsl_rng_uniform(r));
                rejected = 1;
            }
        }
        rej += (size_t)rejected;
        fresh = rejected; /* a residual token ends the iteration */
        prev = x;
    }
    return rej;
}

Test(exact_batch, theorem3_within_4_se_of_monte_carlo)
{
    /* Tolerance 4 standard errors: a false alarm has probability ~6e-5 per
     * comparison (9 comparisons here), while a wrong residual step (e.g.
     * q^{M+2} as in Alg. 4 line 28) or a wrong fresh/continuing rule moves
     * the mean by many SE at 20 000 trials. */
    static const size_t Ms[] = {2, 4, 7};
    for (unsigned long seed = 1; seed <= 3; seed++) {
        sd_chain *c = tx_random_chain(5, 25, seed == 2, seed == 3 ? 0.4 : 0.0, 4242 + seed);
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, 99 + seed);
        double qm[5], nx[5];
        for (size_t i = 0; i < 3; i++) {
            double exact, dp;
            cr_assert_eq(sd_exact_batch_rejections(c, Ms[i], &exact, NULL), SD_OK);
            cr_assert_eq(sd_exact_batch_rejections_dp(c, Ms[i], &dp, NULL), SD_OK);
            sd_welford w;
            sd_welford_init(&w);
            for (int t = 0; t < 20000; t++)
                sd_welford_add(&w, (double)S_batch_trial(c, Ms[i], r, qm, nx));
            double se = sd_welford_stderr(&w);
            cr_expect(fabs(w.mean - exact) < 4 * se,
                      "seed %lu M %zu: MC %.6f ± %.6f, Theorem 3 %.6f (DP %.6f)", seed, Ms[i], w.mean,
                      se, exact, dp);
        }
        gsl_rng_free(r);
        sd_chain_free(c);
    }
}

Test(exact_batch, theorem1_within_4_se_of_token_monte_carlo)
{
    /* sd_sim_run with the token verifier (lookahead to the horizon) on the
     * default generated chain; 4 SE as above. */
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    sd_chain *c = sd_chain_generate(&gp, NULL);
    sd_params par;
    sd_params_defaults(&par, NULL);
    sd_sim_result res;
    S_sim(&sd_verifier_token, c, &par, 20000, 0, &res);
    double exact, b1;
    cr_assert_eq(sd_exact_rejections(c, &exact, NULL), SD_OK);
    cr_assert_eq(sd_exact_batch_rejections(c, 1, &b1, NULL), SD_OK);
    double se = sd_welford_stderr(&res.rejections);
    cr_expect(fabs(res.rejections.mean - exact) < 4 * se, "MC %.6f ± %.6f vs Theorem 1 %.6f",
              res.rejections.mean, se, exact);
    cr_expect(fabs(b1 - exact) < 1e-12);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}

Test(exact_batch, theorem3_within_4_se_of_batch_verifier)
{
    /* The batch verifier of sims/verifiers/batch.c (another implementation of the
     * algorithm), lookahead to the horizon, M = 2, 4, 7; 4 SE as above. */
    static const size_t Ms[] = {2, 4, 7};
    sd_chain *chains[2] = {tx_random_chain(6, 30, 0, 0.0, 515), tx_random_chain(5, 30, 1, 0.35, 516)};
    for (int ci = 0; ci < 2; ci++)
        for (size_t i = 0; i < 3; i++) {
            sd_params par;
            sd_params_defaults(&par, NULL);
            par.k = Ms[i];
            sd_sim_result res;
            S_sim(&sd_verifier_batch, chains[ci], &par, 20000, 0, &res);
            double exact;
            cr_assert_eq(sd_exact_batch_rejections(chains[ci], Ms[i], &exact, NULL), SD_OK);
            double se = sd_welford_stderr(&res.rejections);
            cr_expect(fabs(res.rejections.mean - exact) < 4 * se,
                      "chain %d M %zu: sims/batch %.6f ± %.6f vs Theorem 3 %.6f", ci, Ms[i],
                      res.rejections.mean, se, exact);
            sd_sim_result_free(&res);
        }
    sd_chain_free(chains[0]);
    sd_chain_free(chains[1]);
}

/* --- single-token batch improvement ---------------------------------------- */

Test(exact_single, batch_improvement_uniform_closed_form)
{
    /* p = Unif(V), q = Unif(V') on a subset: BI = (1-1/r) - (1-1/r)^M. */
    enum { V = 12 };
    static const size_t Vs[] = {1, 2, 3, 4, 6, 12};
    for (size_t i = 0; i < 6; i++) {
        double p[V], q[V];
        for (size_t x = 0; x < V; x++) {
            p[x] = 1.0 / V;
            q[x] = x < Vs[i] ? 1.0 / (double)Vs[i] : 0.0;
        }
        double r = (double)V / (double)Vs[i];
        for (size_t M = 1; M <= 10; M++) {
            double bi;
            cr_assert_eq(sd_exact_batch_improvement(p, q, V, M, &bi, NULL), SD_OK);
            double cf = (1 - 1 / r) - pow(1 - 1 / r, (double)M);
            cr_expect(fabs(bi - cf) < 1e-12, "V'=%zu M=%zu: %.17g vs %.17g", Vs[i], M, bi, cf);
        }
        double bi;
        cr_assert_eq(sd_exact_batch_improvement(p, q, V, 0, &bi, NULL), SD_OK);
        cr_expect(fabs(bi - (1 - 1 / r)) < 1e-12, "limit %.17g", bi);
    }
}

Test(exact_single, batch_improvement_bernoulli_closed_form)
{
    /* draft Ber(u), target Ber(v), u >= v: BI = |u-v| (1 - u^{M-1}). */
    for (int i = 0; i <= 10; i++)
        for (int j = 0; j <= i; j++) {
            double u = i / 10.0, v = j / 10.0;
            double p[2] = {1 - u, u}, q[2] = {1 - v, v};
            for (size_t M = 1; M <= 8; M++) {
                double bi;
                cr_assert_eq(sd_exact_batch_improvement(p, q, 2, M, &bi, NULL), SD_OK);
                double cf = fabs(u - v) * (1 - pow(u, (double)M - 1));
                cr_expect(fabs(bi - cf) < 1e-12, "u %g v %g M %zu: %.17g vs %.17g", u, v, M, bi, cf);
            }
        }
}

/* --- Pareto front ------------------------------------------------------------ */

Test(exact_single, pareto_sum_is_tv_and_pstar_attains)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    for (int it = 0; it < 500; it++) {
        size_t V = 1 + gsl_rng_uniform_int(r, 9);
        double p[10], q[10], b[10], ps[10], other[10];
        tx_random_dist(r, p, V, 0.2, 0);
        tx_random_dist(r, q, V, 0.2, 0);
        double eps = it % 5 == 0 ? 0.0 : gsl_rng_uniform(r) * 0.5;
        sd_pareto pr;
        cr_assert_eq(sd_exact_pareto(p, q, V, eps, &pr, ps, NULL), SD_OK);
        /* Theorem 5: the front is the line P(reject) + Loss* = TV */
        cr_expect(fabs(pr.reject_prob + pr.loss_tv - pr.tv) < 1e-12, "it %d: %g + %g vs %g", it,
                  pr.reject_prob, pr.loss_tv, pr.tv);
        cr_expect(fabs(pr.tv - sd_dist_tv(p, q, V)) < 1e-15);
        for (size_t x = 0; x < V; x++)
            b[x] = p[x] <= q[x] + eps ? 1.0 : (q[x] + eps) / p[x];
        if (eps == 0.0) /* plain SD: unbiased, rejects with TV */
            cr_expect(fabs(pr.loss_tv) < 1e-12 && fabs(pr.reject_prob - pr.tv) < 1e-12);
        if (pr.reject_prob > 0.0) {
            /* Theorem 4: P* attains Loss*, any other residual does no better */
            double tvs = sd_exact_output_tv(p, q, b, ps, V);
            cr_expect(fabs(tvs - pr.loss_tv) < 1e-12, "it %d: TV with P* %.17g vs Loss* %.17g", it,
                      tvs, pr.loss_tv);
            tx_random_dist(r, other, V, 0.0, 0);
            cr_expect(sd_exact_output_tv(p, q, b, other, V) >= pr.loss_tv - 1e-12);
            cr_expect(sd_exact_output_tv(p, q, b, q, V) >= pr.loss_tv - 1e-12); /* uno */
            double s = 0.0;
            for (size_t x = 0; x < V; x++)
                s += ps[x];
            cr_expect(fabs(s - 1.0) < 1e-12);
        }
    }
    gsl_rng_free(r);
    double p[2] = {0.5, 0.5}, q[2] = {0.9, 0.1};
    sd_pareto pr;
    cr_expect_eq(sd_exact_pareto(p, q, 2, -0.1, &pr, NULL, NULL), SD_EUSAGE);
    cr_assert_eq(sd_exact_pareto(p, q, 2, 1.0, &pr, NULL, NULL), SD_OK);
    cr_expect(pr.reject_prob == 0.0 && fabs(pr.loss_tv - 0.4) < 1e-15); /* b = 1: all bias */
}

Test(exact_single, pareto_within_4_se_of_biased_verifier)
{
    /* One token (T = 1) of the biased verifier with the opt residual: its
     * rejection rate is P(reject) and its output law b p + P(reject) P*,
     * which is at TV distance Loss*_TV from q (Theorem 4).  Rate within
     * 4 SE; the law by a chi-square test at p > 1e-4. */
    double p[4] = {0.4, 0.3, 0.2, 0.1}, q[4] = {0.1, 0.2, 0.3, 0.4}, eps = 0.05;
    sd_chain *c = sd_chain_from_pq(p, q, 4, 1, NULL);
    sd_params par;
    sd_params_defaults(&par, NULL);
    tu_par(&par, "eps", eps);
    tu_par(&par, "residual", 0);
    sd_sim_result res;
    S_sim(&sd_verifier_biased, c, &par, 40000, 1, &res);
    sd_pareto pr;
    double ps[4], b[4], law[4];
    cr_assert_eq(sd_exact_pareto(p, q, 4, eps, &pr, ps, NULL), SD_OK);
    double se = sd_welford_stderr(&res.rejections);
    cr_expect(fabs(res.rejections.mean - pr.reject_prob) < 4 * se, "MC %.5f ± %.5f vs %.5f",
              res.rejections.mean, se, pr.reject_prob);
    for (size_t x = 0; x < 4; x++) {
        b[x] = p[x] <= q[x] + eps ? 1.0 : (q[x] + eps) / p[x];
        law[x] = b[x] * p[x] + pr.reject_prob * ps[x];
    }
    sd_chisq cs;
    cr_assert_eq(sd_chisq_test(res.pos_counts, law, 4, 5.0, &cs), SD_OK);
    cr_expect(cs.p_value > 1e-4, "output law: chi2 %g, p %g", cs.chi2, cs.p_value);
    double tvl = 0.0;
    for (size_t x = 0; x < 4; x++)
        tvl += 0.5 * fabs(law[x] - q[x]);
    cr_expect(fabs(tvl - pr.loss_tv) < 1e-12);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}

/* --- SPRINTER ---------------------------------------------------------------- */

Test(exact_single, sprinter_matches_paper_forms)
{
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++)
            for (size_t r = 0; r <= 8; r++) {
                double tp = i / 10.0, fp = j / 10.0, en, et;
                cr_assert_eq(sd_exact_sprinter(tp, fp, r, 0.1, &en, &et, NULL), SD_OK);
                double pw = pow(tp, (double)r);
                double paper_n = (tp - pw) / (1 - tp) + pw / (1 - fp);            /* Thm 3.3 */
                double paper_t = (1 - pw) * 0.1 / (1 - tp) + pw * 0.1 / (1 - fp); /* Thm 3.4 */
                cr_expect(fabs(en - paper_n) < 1e-12, "tp %g fp %g r %zu: %.17g vs %.17g", tp, fp, r,
                          en, paper_n);
                cr_expect(fabs(et - paper_t) < 1e-12);
            }
    double en, et;
    cr_assert_eq(sd_exact_sprinter(1.0, 0.0, 5, 1.0, &en, &et, NULL), SD_OK);
    cr_expect(fabs(en - 5.0) < 1e-12 && fabs(et - 6.0) < 1e-12); /* the 0/0 limit */
    cr_assert_eq(sd_exact_sprinter(0.5, 1.0, 3, 1.0, &en, &et, NULL), SD_OK);
    cr_expect(isinf(en) && isinf(et));
    cr_expect_eq(sd_exact_sprinter(1.5, 0.0, 3, 1.0, &en, &et, NULL), SD_EUSAGE);
}

Test(exact_single, sprinter_within_4_se_of_monte_carlo)
{
    /* The model of Zhong et al. 2025, Fig. 4: r acceptable tokens, then unacceptable
     * ones; i.i.d. verifier decisions; N = consecutive yeses.  4 SE as in
     * exact_batch. */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 5);
    static const double tps[] = {0.3, 0.8, 0.95}, fps[] = {0.0, 0.5};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            sd_welford w;
            sd_welford_init(&w);
            for (int t = 0; t < 40000; t++) {
                size_t n = 0;
                while (gsl_rng_uniform(g) < (n < 5 ? tps[i] : fps[j]))
                    n++;
                sd_welford_add(&w, (double)n);
            }
            double en, et;
            cr_assert_eq(sd_exact_sprinter(tps[i], fps[j], 5, 0.1, &en, &et, NULL), SD_OK);
            double se = sd_welford_stderr(&w);
            cr_expect(fabs(w.mean - en) < 4 * se, "tp %g fp %g: MC %.5f ± %.5f vs %.5f", tps[i],
                      fps[j], w.mean, se, en);
            cr_expect(fabs(et - 0.1 * (en + 1)) < 1e-12);
        }
    gsl_rng_free(g);
}

Test(exact_single, sprinter_bias_against_verifier)
{
    /* Zhong et al. 2025, Theorem 3.1 (our letters): one token of SPRINTER has law
     * (1-fp) q + fp p, at TV fp·TV(p,q) from q.  Chi-square at p > 1e-4. */
    double p[3] = {0.5, 0.3, 0.2}, q[3] = {0.2, 0.3, 0.5}, fp = 0.25;
    cr_expect(fabs(sd_exact_sprinter_bias(p, q, 3, fp) - fp * 0.3) < 1e-15);
    sd_chain *c = sd_chain_from_pq(p, q, 3, 1, NULL);
    sd_params par;
    sd_params_defaults(&par, NULL);
    tu_par(&par, "tp", 0.7);
    tu_par(&par, "fp", fp);
    sd_sim_result res;
    S_sim(&sd_verifier_sprinter, c, &par, 40000, 1, &res);
    double law[3], tvl = 0.0;
    for (size_t x = 0; x < 3; x++) {
        law[x] = (1 - fp) * q[x] + fp * p[x];
        tvl += 0.5 * fabs(law[x] - q[x]);
    }
    cr_expect(fabs(tvl - sd_exact_sprinter_bias(p, q, 3, fp)) < 1e-15);
    sd_chisq cs;
    cr_assert_eq(sd_chisq_test(res.pos_counts, law, 3, 5.0, &cs), SD_OK);
    cr_expect(cs.p_value > 1e-4, "output law: chi2 %g, p %g", cs.chi2, cs.p_value);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}
