/* test_md_exact.c — the exact iteration laws of the multi-draft verifiers
 * of engines and of 2024–25 papers (onehot, strict, gumbel, gumbel-list,
 * khisti, hu-greedy) and of their controls:
 *   - lossless exactly: the TV of the law of x_1..x_3 to the target's is
 *     below 1e-12 (`check --exact`), on a dense chain and on a chain with
 *     zeros; each control's is above 1e-3;
 *   - Monte-Carlo (fixed seeds, what `run` executes) agrees with the exact
 *     DP's rejections and target calls within 4 standard errors (a correct
 *     pair fails with probability 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <math.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../src/sd_exact_otm.h"
#include "../sims/verifiers/sd_gumbel.h"
#include <stdlib.h>
#include "test_util.h"

static const tu_conf S_lossless[] = {
    {"onehot", {"k", "gamma"}, {1, 2}, NULL},
    {"onehot", {"k", "gamma"}, {3, 2}, NULL},
    {"strict", {"k", "gamma"}, {1, 2}, NULL},
    {"strict", {"k", "gamma"}, {3, 2}, NULL},
    {"hu-greedy", {"k", "gamma"}, {1, 2}, NULL},
    {"hu-greedy", {"k", "gamma"}, {2, 2}, NULL},
    {"hu-greedy", {"k", "gamma"}, {3, 3}, NULL},
    {"gumbel", {"gamma", NULL}, {2, 0}, NULL},
    {"gumbel-list", {"k", "gamma"}, {2, 2}, NULL},
    {"gumbel-list", {"k", "gamma"}, {3, 3}, NULL},
    {"khisti", {"k", "gamma"}, {1, 2}, NULL},
    {"khisti", {"k", "gamma"}, {2, 2}, NULL},
    {"khisti", {"k", "gamma"}, {3, 3}, NULL},
    {"khisti", {"k", "weights"}, {2, 1}, NULL}, /* --weights optimal */
    {"khisti", {"k", "weights"}, {3, 1}, NULL},
};
#define S_NLOSSLESS (sizeof S_lossless / sizeof *S_lossless)

static const tu_conf S_broken[] = {
    {"broken-onehot", {"k", "gamma"}, {1, 2}, NULL},
    {"broken-onehot", {"k", "gamma"}, {3, 2}, NULL},
    {"broken-hu-greedy", {"k", "gamma"}, {2, 2}, NULL},
    {"broken-hu-greedy", {"k", "gamma"}, {3, 2}, NULL},
    {"broken-gumbel", {"gamma", NULL}, {2, 0}, NULL},
    {"broken-khisti", {"k", "gamma"}, {2, 2}, NULL},
};
#define S_NBROKEN (sizeof S_broken / sizeof *S_broken)

static double S_tv(const tu_conf *cf, const sd_chain *c)
{
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, cf);
    double tv = NAN;
    sd_error err;
    cr_assert_eq(sd_exact_gen_prefix_tv(vt, c, &par, 3, 1u << 20, &tv, &err), SD_OK, "%s: %s",
                 cf->algo, err.msg);
    return tv;
}

Test(md_exact, lossless_to_1e_12)
{
    sd_chain *cs[2] = {tu_chain(5, 4, 31), tu_zero_chain(4, 4, 7)};
    for (size_t j = 0; j < 2; j++) {
        cr_assert_not_null(cs[j]);
        for (size_t i = 0; i < S_NLOSSLESS; i++) {
            double tv = S_tv(&S_lossless[i], cs[j]);
            cr_expect(tv <= 1e-12, "%s %s=%g %s=%g on chain %zu: exact TV %.3g", S_lossless[i].algo,
                      S_lossless[i].name[0], S_lossless[i].value[0], S_lossless[i].name[1],
                      S_lossless[i].value[1], j, tv);
        }
        for (size_t i = 0; i < S_NBROKEN; i++) {
            double tv = S_tv(&S_broken[i], cs[j]);
            cr_expect(tv > 1e-3, "control %s on chain %zu: exact TV %.3g", S_broken[i].algo, j, tv);
        }
        sd_chain_free(cs[j]);
    }
}

static void S_agree(const tu_conf *cf, const sd_chain *c, unsigned long seed)
{
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, cf);
    double rej, calls;
    sd_error err;
    cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s: %s", vt->name, err.msg);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {0};
    o.seed = seed;
    o.trials = 20000; /* 21 configurations: the suite stays a few seconds */
    o.threads = 1;
    sd_sim_result res = {0};
    cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    double se_r = sd_welford_stderr(&res.rejections), se_c = sd_welford_stderr(&res.target_calls);
    cr_expect(fabs(res.rejections.mean - rej) < 4 * se_r + 1e-12,
              "%s %s=%g: rejections %.6f vs exact %.6f (se %.2g)", vt->name, cf->name[0],
              cf->value[0], res.rejections.mean, rej, se_r);
    cr_expect(fabs(res.target_calls.mean - calls) < 4 * se_c + 1e-12,
              "%s %s=%g: target calls %.6f vs exact %.6f (se %.2g)", vt->name, cf->name[0],
              cf->value[0], res.target_calls.mean, calls, se_c);
    sd_sim_result_free(&res);
}

Test(md_exact, monte_carlo_agrees_with_the_exact_law)
{
    sd_chain *c = tu_chain(6, 12, 41);
    cr_assert_not_null(c);
    for (size_t i = 0; i < S_NLOSSLESS; i++)
        S_agree(&S_lossless[i], c, 900 + i);
    for (size_t i = 0; i < S_NBROKEN; i++)
        S_agree(&S_broken[i], c, 950 + i);
    sd_chain_free(c);
}

/* P(the first drafted position is accepted) of vt at k drafts, exactly:
 * one iteration of one draft token on a horizon-1 chain, 1 - E[N_rej]. */
static double S_first_accept(const char *algo, double k, const sd_chain *c)
{
    tu_conf cf = {algo, {"k", "gamma"}, {k, 1}, NULL};
    if (k == 0) /* a verifier without k */
        cf = (tu_conf){algo, {"gamma", NULL}, {1, 0}, NULL};
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, &cf);
    double rej, calls;
    sd_error err;
    cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s: %s", algo, err.msg);
    return 1.0 - rej;
}

/* The optimal acceptance of k i.i.d. drafts (Sun et al. 2023, section 5;
 * `eval acceptance --algo otm`), averaged over x_0 ~ init as above. */
static double S_otm(const sd_chain *c, size_t k)
{
    double a = 0.0;
    for (size_t x0 = 0; x0 < c->V; x0++) {
        double al;
        sd_error err;
        cr_assert_eq(sd_exact_otm_acceptance(sd_chain_p(c, 1, x0), sd_chain_q(c, 1, x0), c->V, k, &al,
                                             NULL, &err),
                     SD_OK, "%s", err.msg);
        a += c->init[x0] * al;
    }
    return a;
}

/* Hu et al. 2025: greedy drafts (T = the k-1 most probable tokens, the
 * last from p off T) accept at most q(T) + sum_{x not in T} min(p'(x),
 * q(x)) under any lossless verifier; hu-greedy's exact acceptance equals it
 * (to 1e-12) on random rows. */
Test(md_exact, hu_greedy_reaches_its_bound)
{
    for (unsigned long seed = 1; seed <= 20; seed++) {
        sd_chain *c = tu_chain(6, 1, 500 + seed);
        cr_assert_not_null(c);
        for (size_t k = 1; k <= 4; k++) {
            double bound = 0.0;
            for (size_t x0 = 0; x0 < c->V; x0++) {
                const double *p = sd_chain_p(c, 1, x0), *q = sd_chain_q(c, 1, x0);
                unsigned char inT[6] = {0};
                for (size_t r = 0; r + 1 < k; r++) {
                    size_t best = 6;
                    for (size_t y = 0; y < 6; y++)
                        if (!inT[y] && (best == 6 || p[y] > p[best]))
                            best = y;
                    inT[best] = 1;
                }
                double mass = 0.0, b = 0.0;
                for (size_t y = 0; y < 6; y++)
                    mass += inT[y] ? 0.0 : p[y];
                for (size_t y = 0; y < 6; y++)
                    b += inT[y] ? q[y] : fmin(p[y] / mass, q[y]);
                bound += c->init[x0] * b;
            }
            double acc = S_first_accept("hu-greedy", (double)k, c);
            cr_expect(fabs(acc - bound) < 1e-12, "seed %lu k=%zu: hu-greedy accepts %.15f, its bound %.15f",
                      seed, k, acc, bound);
        }
        sd_chain_free(c);
    }
}

/* Against the optimum of k i.i.d. drafts: onehot and strict (i.i.d.
 * drafts, lossless) never exceed it.  Greedy drafts are not i.i.d. and
 * are chosen from p alone: on these 10 chains x k = 2, 3 hu-greedy's
 * exact acceptance is above the i.i.d. optimum on some rows and below it on
 * others (neither dominates; docs/findings.md, item 43). */
Test(md_exact, against_the_iid_optimum)
{
    size_t above = 0, below = 0;
    for (unsigned long seed = 1; seed <= 10; seed++) {
        sd_chain *c = tu_chain(6, 1, 700 + seed);
        cr_assert_not_null(c);
        for (size_t k = 1; k <= 3; k++) {
            double opt = S_otm(c, k);
            cr_expect(S_first_accept("onehot", (double)k, c) <= opt + 1e-12, "onehot above alpha_k");
            cr_expect(S_first_accept("strict", (double)k, c) <= opt + 1e-12, "strict above alpha_k");
            double hu = S_first_accept("hu-greedy", (double)k, c);
            if (k == 1)
                cr_expect(fabs(hu - opt) < 1e-12, "hu-greedy at k = 1 is token-level SD (alpha_1)");
            else {
                above += hu > opt + 1e-12;
                below += hu < opt - 1e-12;
            }
        }
        sd_chain_free(c);
    }
    cr_expect(above > 0 && below > 0, "hu-greedy above the iid optimum %zu times, below %zu", above, below);
}

/* P(one of a lists equals Y) of the exponential race at the row (p, q). */
static double S_race_accept(const double *p, const double *q, size_t V, size_t a)
{
    double *J = calloc((a + 1) * V, sizeof *J);
    cr_assert_not_null(J);
    sd_error err;
    cr_assert_eq(sd_gumbel_law(NULL, p, q, V, a, J, &err), SD_OK, "%s", err.msg);
    double acc = 0.0, tot = 0.0;
    for (size_t j = 0; j <= a; j++)
        for (size_t y = 0; y < V; y++) {
            tot += J[j * V + y];
            acc += j ? J[j * V + y] : 0.0;
        }
    cr_expect(fabs(tot - 1.0) < 1e-12, "the race's joint law sums to %.15f", tot);
    free(J);
    return acc;
}

/* Daliri, Musco and Suresh: Gumbel sampling accepts with
 * sum_y 1/sum_i max(q(i)/q(y), p(i)/p(y)) >= (1 - TV)/(1 + TV), on every
 * row of 20 dense chains and 10 chains with zeros (V = 6); the exact law
 * (sd_gumbel_law at one list) gives that sum; at a = 1 the verifier's
 * exact first-position acceptance is its average over x_0. */
Test(md_exact, gumbel_meets_its_bound)
{
    for (unsigned long seed = 1; seed <= 30; seed++) {
        sd_chain *c = seed <= 20 ? tu_chain(6, 1, 800 + seed) : tu_zero_chain(6, 1, 800 + seed);
        cr_assert_not_null(c);
        double avg = 0.0;
        for (size_t x0 = 0; x0 < c->V; x0++) {
            const double *p = sd_chain_p(c, 1, x0), *q = sd_chain_q(c, 1, x0);
            double tv = 0.0, closed = 0.0;
            for (size_t y = 0; y < c->V; y++) {
                tv += 0.5 * fabs(p[y] - q[y]);
                if (p[y] > 0.0 && q[y] > 0.0) {
                    double d = 0.0;
                    for (size_t i = 0; i < c->V; i++)
                        d += fmax(q[i] / q[y], p[i] / p[y]);
                    closed += 1.0 / d;
                }
            }
            double acc = S_race_accept(p, q, c->V, 1);
            cr_expect(fabs(acc - closed) < 1e-12, "race %.15f vs closed form %.15f", acc, closed);
            cr_expect(acc >= (1.0 - tv) / (1.0 + tv) - 1e-12, "seed %lu row %zu: %.6f below (1-TV)/(1+TV) = %.6f",
                      seed, x0, acc, (1.0 - tv) / (1.0 + tv));
            cr_expect(acc <= 1.0 - tv + 1e-12, "seed %lu row %zu: %.6f above 1 - TV", seed, x0, acc);
            avg += c->init[x0] * acc;
        }
        cr_expect(fabs(S_first_accept("gumbel", 0, c) - avg) < 1e-12, "gumbel's exact acceptance");
        sd_chain_free(c);
    }
}

/* Gumbel-max list sampling with a = 1..4 i.i.d. lists: the acceptance
 * grows with a and stays below the optimum alpha_a of a i.i.d. drafts. */
Test(md_exact, gumbel_list_below_the_iid_optimum)
{
    for (unsigned long seed = 1; seed <= 10; seed++) {
        sd_chain *c = tu_chain(6, 1, 900 + seed);
        cr_assert_not_null(c);
        for (size_t x0 = 0; x0 < c->V; x0++) {
            const double *p = sd_chain_p(c, 1, x0), *q = sd_chain_q(c, 1, x0);
            double last = 0.0;
            for (size_t a = 1; a <= 4; a++) {
                double acc = S_race_accept(p, q, c->V, a), al;
                sd_error err;
                cr_assert_eq(sd_exact_otm_acceptance(p, q, c->V, a, &al, NULL, &err), SD_OK);
                cr_expect(acc >= last - 1e-12, "seed %lu a=%zu: %.6f below a-1 lists' %.6f", seed, a, acc, last);
                cr_expect(acc <= al + 1e-12, "seed %lu a=%zu: %.6f above alpha_a %.6f", seed, a, acc, al);
                last = acc;
            }
        }
        sd_chain_free(c);
    }
}

/* Khisti et al. 2025, two identical drafts: the optimal acceptance is
 * min_S [q(S) + p(S^c)^2 + 2 p(S) p(S^c)] (here by brute force over the 2^V
 * subsets), which is simdec's alpha_2 (`eval acceptance --algo otm --k 2`)
 * to 1e-12; khisti's importance weights q/p reach at most that, and at
 * least single-draft SD's sum min(p, q), on every row of 20 chains; with
 * --weights optimal (the canonical decomposition of the OTM plan) it
 * reaches the closed form within the LP's 1e-9 tolerance. */
Test(md_exact, khisti_two_drafts_closed_form)
{
    double gap_max = 0.0;
    for (unsigned long seed = 1; seed <= 20; seed++) {
        sd_chain *c = tu_chain(6, 1, 1000 + seed);
        cr_assert_not_null(c);
        double avg_closed = 0.0;
        for (size_t x0 = 0; x0 < c->V; x0++) {
            const double *p = sd_chain_p(c, 1, x0), *q = sd_chain_q(c, 1, x0);
            double closed = INFINITY;
            for (unsigned S = 0; S < (1u << c->V); S++) {
                double qS = 0.0, pS = 0.0;
                for (size_t i = 0; i < c->V; i++)
                    if (S >> i & 1) {
                        qS += q[i];
                        pS += p[i];
                    }
                double v = qS + (1.0 - pS) * (1.0 - pS) + 2.0 * pS * (1.0 - pS);
                closed = fmin(closed, v);
            }
            double al;
            sd_error err;
            cr_assert_eq(sd_exact_otm_acceptance(p, q, c->V, 2, &al, NULL, &err), SD_OK);
            cr_expect(fabs(closed - al) < 1e-12, "closed form %.15f vs alpha_2 %.15f", closed, al);
            avg_closed += c->init[x0] * closed;
        }
        double acc = S_first_accept("khisti", 2, c), one = S_first_accept("khisti", 1, c);
        cr_expect(acc <= avg_closed + 1e-12, "seed %lu: khisti %.6f above the closed form %.6f", seed, acc,
                  avg_closed);
        cr_expect(acc >= one - 1e-12, "seed %lu: khisti at 2 drafts %.6f below one draft's %.6f", seed, acc, one);
        gap_max = fmax(gap_max, avg_closed - acc);
        tu_conf cf = {"khisti", {"k", "weights"}, {2, 1}, NULL};
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &cf);
        tu_par(&par, "gamma", 1);
        double rej, calls;
        sd_error err;
        cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
        cr_expect(fabs(1.0 - rej - avg_closed) < 1e-9, "seed %lu: khisti --weights optimal %.12f vs closed form %.12f",
                  seed, 1.0 - rej, avg_closed);
        sd_chain_free(c);
    }
    cr_log_info("khisti (weights q/p) below the two-draft optimum by at most %.4f", gap_max);
}

/* Rowan, Phan & Khisti's list matching lemma, in the conditional form read
 * here (the Poisson matching lemma at one list): given Y = y, one of K
 * lists matches with probability at least (1 + q(y)/(K p(y)))^{-1}; by
 * the exact joint law, on every token of 20 dense chains and 10 with zeros
 * (V = 6), K = 1..5. */
Test(md_exact, gumbel_list_matching_lemma)
{
    double J[6 * 6];
    for (unsigned long seed = 1; seed <= 30; seed++) {
        sd_chain *c = seed <= 20 ? tu_chain(6, 1, 1100 + seed) : tu_zero_chain(6, 1, 1100 + seed);
        cr_assert_not_null(c);
        for (size_t x0 = 0; x0 < c->V; x0++) {
            const double *p = sd_chain_p(c, 1, x0), *q = sd_chain_q(c, 1, x0);
            for (size_t K = 1; K <= 5; K++) {
                for (size_t i = 0; i < (K + 1) * 6; i++)
                    J[i] = 0.0;
                sd_error err;
                cr_assert_eq(sd_gumbel_law(NULL, p, q, 6, K, J, &err), SD_OK, "%s", err.msg);
                for (size_t y = 0; y < 6; y++) {
                    if (!(q[y] > 0.0))
                        continue;
                    double acc = 0.0;
                    for (size_t j = 1; j <= K; j++)
                        acc += J[j * 6 + y];
                    double bound = (double)K * p[y] / ((double)K * p[y] + q[y]);
                    cr_expect(acc / q[y] >= bound - 1e-12, "seed %lu row %zu K=%zu y=%zu: %.6f below %.6f", seed, x0,
                              K, y, acc / q[y], bound);
                }
            }
        }
        sd_chain_free(c);
    }
}
