/* test_multi.c — the multi-draft and lossy verifiers: batch, broken-batch,
 * rrs, spectr (k-Seq, src/sd_kseq.h), biased and sprinter.
 *
 * Monte-Carlo tests use fixed seeds and compare with an exact value within
 * 4 standard errors (a false alarm has probability ~6e-5 per comparison
 * for a correct simulator); unbiasedness is a chi-square test of the joint
 * law of (x_1..x_T) on small chains against sd_chain_target_joint, with
 * p > 1e-4 required of lossless verifiers and p < 1e-9 of the lossy ones
 * and negative controls (their biases are chosen large enough to be found
 * at that level with the trial counts used). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/verifiers/sd_biased.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../sims/engine/sd_check.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact_batch.h"
#include "../src/sd_exact_otm.h"
#include "../src/sd_exact_single.h"
#include "../src/sd_kseq.h"
#include "../src/sd_stats.h"
#include "test_util.h"

/* --- helpers ------------------------------------------------------------ */

static const sd_verifier_type *S_vt(const char *name)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "verifier %s is registered", name);
    return vt;
}

static sd_chain *S_gen(size_t V, size_t T, unsigned long seed, double mix)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = V;
    gp.T = T;
    gp.seed = seed;
    gp.mix = mix;
    sd_error err;
    sd_chain *c = sd_chain_generate(&gp, &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static sd_chain *S_pq(const double *p, const double *q, size_t V, size_t T)
{
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, V, T, &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

/* Runs trials with one thread; *res owned by the caller. */
static void S_run(const sd_verifier_type *vt, const sd_params *par, const sd_chain *c,
                  uint64_t trials, uint64_t seed, int positions, sd_sim_result *res)
{
    sd_sim_opts o = {.seed = seed, .trials = trials, .threads = 1, .want_positions = positions};
    sd_error err;
    int rc = sd_sim_run(vt, c, par, &o, res, &err);
    cr_assert_eq(rc, SD_OK, "%s: %s", vt->name, err.msg);
}

/* Chi-square test of the simulated joint law of (x_1..x_T) against the
 * target's (V^T cells, cells with expected count < 5 pooled): sd_check_run
 * with L = T on one thread. */
static sd_chisq S_joint_test(const sd_verifier_type *vt, const sd_params *par,
                             const sd_chain *c, uint64_t trials, uint64_t seed)
{
    sd_check_opts o;
    sd_check_defaults(&o);
    o.seed = seed;
    o.trials = trials;
    o.L = c->T;
    o.threads = 1;
    sd_check_result res;
    sd_error err;
    cr_assert_eq(sd_check_run(vt, c, par, &o, &res, &err), SD_OK, "%s: %s", vt->name, err.msg);
    sd_chisq r = res.chi;
    sd_check_result_free(&res);
    return r;
}

/* Chi-square test of the law of x_1 on a single-token problem (T = 1)
 * against law[]. */
static sd_chisq S_token_test(const sd_verifier_type *vt, const sd_params *par,
                             const double *p, const double *q, size_t V,
                             const double *law, uint64_t trials, uint64_t seed)
{
    sd_chain *c = S_pq(p, q, V, 1);
    sd_sim_result res;
    S_run(vt, par, c, trials, seed, 1, &res);
    sd_chisq r;
    sd_chisq_test(res.pos_counts, law, V, 5.0, &r);
    sd_sim_result_free(&res);
    sd_chain_free(c);
    return r;
}

/* First-position acceptance on a single-token problem (T = 1: one
 * iteration, accepted = 1 iff the emitted token was a draft's). */
static void S_first_acceptance(const sd_verifier_type *vt, const sd_params *par,
                               const double *p, const double *q, size_t V,
                               uint64_t trials, double *mean, double *se)
{
    sd_chain *c = S_pq(p, q, V, 1);
    sd_sim_result res;
    S_run(vt, par, c, trials, 11, 0, &res);
    *mean = res.accepted.mean;
    *se = sd_welford_stderr(&res.accepted);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}

/* Two asymmetric single-token problems.  On P3/Q3 the residual chain q^m
 * keeps moving (q^{m+1} != q^m), so the extra residual step of
 * broken-batch is visible: with M = 2, R = 0.455 and its first-token law is
 * off by 0.079 in TV.  On P4/Q4 q^3 = δ_3 is already a fixed point, so
 * broken-batch happens to be unbiased there for M >= 2. */
static const double P3[3] = {0.7, 0.2, 0.1}, Q3[3] = {0.05, 0.45, 0.5};
static const double P4[4] = {0.4, 0.3, 0.2, 0.1}, Q4[4] = {0.05, 0.15, 0.3, 0.5};

/* --- k-Seq (src/sd_kseq.h) ---------------------------------------------- */

Test(kseq, uniform_closed_form)
{
    /* p = U(6), q = U(2) (r = 3): β(ρ) = min(1/r, 1/ρ), so
     * ρ* = r (1 - (1-1/r)^k) and the acceptance is 1 - (1-1/r)^k, the OTM
     * optimum α_k(U(d), U(d/r)) (Sun et al. 2023, App. B). */
    double p[6], q[6];
    for (int i = 0; i < 6; i++) {
        p[i] = 1.0 / 6;
        q[i] = i < 2 ? 0.5 : 0.0;
    }
    for (size_t k = 1; k <= 5; k++) {
        double rho, beta, acc, want = 1.0 - pow(2.0 / 3.0, (double)k);
        cr_assert_eq(sd_kseq_solve(p, q, 6, k, &rho, &beta, NULL), SD_OK);
        cr_assert_eq(sd_kseq_acceptance(p, q, 6, k, &acc, NULL), SD_OK);
        cr_assert(fabs(rho - 3.0 * want) < 1e-11, "k=%zu rho %.15g want %.15g", k, rho, 3 * want);
        cr_assert(fabs(acc - want) < 1e-12, "k=%zu acceptance %.15g want %.15g", k, acc, want);
    }
}

Test(kseq, root_is_valid_and_smallest)
{
    /* On random rows: f(ρ) = 1-(1-β)^k - ρβ is <= 0 at the returned ρ
     * (residual of eq. 5 non-negative) and > 0 slightly below it (ρ is the
     * smallest valid factor, within the solver tolerance); acceptance plus
     * residual reproduce q exactly: min(p, q/ρ) p_acc/β + w = q. */
    sd_chain *c = S_gen(9, 4, 77, 0.9);
    for (size_t t = 1; t <= 4; t++)
        for (size_t a = 0; a < 9; a++)
            for (size_t k = 1; k <= 6; k++) {
                const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
                double rho, beta, w[9];
                cr_assert_eq(sd_kseq_solve(p, q, 9, k, &rho, &beta, NULL), SD_OK);
                cr_assert(rho >= 1.0 && rho <= (double)k);
                double pacc = sd_kseq_pacc(beta, k);
                cr_assert(pacc - rho * beta <= 1e-15, "f(rho) = %g > 0", pacc - rho * beta);
                if (rho > 1.0 + 1e-9) {
                    double lo = rho * (1.0 - 1e-9), bl = sd_kseq_beta(p, q, 9, lo);
                    cr_assert(sd_kseq_pacc(bl, k) - lo * bl > 0.0);
                }
                double mass = sd_kseq_residual(p, q, 9, k, rho, beta, w);
                cr_assert(fabs(mass - (1.0 - pacc)) < 1e-12, "mass %.17g, 1-pacc %.17g", mass,
                          1.0 - pacc);
                for (size_t x = 0; x < 9; x++) {
                    double m = fmin(p[x], q[x] / rho);
                    cr_assert(fabs(m * pacc / beta + w[x] - q[x]) < 1e-12);
                }
            }
    sd_chain_free(c);
}

Test(kseq, special_cases_and_errors)
{
    double p[3] = {0.2, 0.3, 0.5}, q[3] = {0.5, 0.5, 0.0}, d[3] = {0.0, 0.0, 1.0};
    double rho, beta, acc;
    /* k = 1: ρ = 1 and the acceptance is 1 - TV */
    cr_assert_eq(sd_kseq_solve(p, q, 3, 1, &rho, &beta, NULL), SD_OK);
    cr_assert_eq(rho, 1.0);
    cr_assert(fabs(beta - (1.0 - sd_dist_tv(p, q, 3))) < 1e-15);
    /* p = q: everything accepted */
    cr_assert_eq(sd_kseq_acceptance(p, p, 3, 4, &acc, NULL), SD_OK);
    cr_assert(fabs(acc - 1.0) < 1e-15);
    /* disjoint supports: acceptance 0, residual q */
    cr_assert_eq(sd_kseq_solve(d, q, 3, 3, &rho, &beta, NULL), SD_OK);
    cr_assert_eq(beta, 0.0);
    double w[3];
    cr_assert(fabs(sd_kseq_residual(d, q, 3, 3, rho, beta, w) - 1.0) < 1e-15);
    sd_error err;
    cr_assert_eq(sd_kseq_solve(p, q, 3, 0, &rho, &beta, &err), SD_EUSAGE);
    cr_assert(tu_contains(err.msg, "k = 0"), "%s", err.msg);
    cr_assert_eq(sd_kseq_solve(p, q, 0, 2, &rho, &beta, &err), SD_EUSAGE);
}

/* --- batch: Theorem 3 ---------------------------------------------------- */

static void S_batch_vs_theorem3(sd_chain *c, size_t M, uint64_t trials)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = M;
    double exact;
    sd_error err;
    cr_assert_eq(sd_exact_batch_rejections(c, M, &exact, &err), SD_OK, "%s", err.msg);
    sd_sim_result res;
    S_run(S_vt("batch"), &par, c, trials, 5, 0, &res);
    double mean = res.rejections.mean, se = sd_welford_stderr(&res.rejections);
    cr_assert(fabs(mean - exact) < 4.0 * se, "M=%zu: MC %.5f ± %.5f, Theorem 3 %.5f (z = %.2f)",
              M, mean, se, exact, (mean - exact) / se);
    sd_sim_result_free(&res);
}

Test(batch, rejections_match_theorem3_default_chain)
{
    /* The default chain of Yin et al. 2024, App. F style (V = 7, T = 50). */
    sd_chain *c = S_gen(7, 50, 10, 0.5);
    S_batch_vs_theorem3(c, 2, 100000);
    S_batch_vs_theorem3(c, 4, 100000);
    sd_chain_free(c);
}

Test(batch, rejections_match_theorem3_second_chain)
{
    /* A rougher chain: V = 5, T = 30, target far from the draft. */
    sd_chain *c = S_gen(5, 30, 3, 0.9);
    S_batch_vs_theorem3(c, 2, 100000);
    S_batch_vs_theorem3(c, 4, 100000);
    sd_chain_free(c);
}

Test(batch, finite_gamma_is_lossless)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = 3;
    par.gamma = 2;
    sd_chain *c = S_gen(3, 4, 21, 0.8);
    sd_chisq r = S_joint_test(S_vt("batch"), &par, c, 100000, 3);
    cr_assert(r.p_value > 1e-4 && r.zero_hits == 0, "chi2 %.2f dof %.0f p %.3g", r.chi2, r.dof,
              r.p_value);
    sd_chain_free(c);
}

/* --- unbiasedness (the in-library counterpart of `simdec check`) -------- */

Test(lossless, joint_law_is_target)
{
    /* Every lossless configuration reproduces the joint target law of
     * (x_1, x_2, x_3) on a chain with V = 3 (27 cells). */
    sd_chain *c = S_gen(3, 3, 8, 0.9);
    struct {
        const char *name;
        size_t M, k, gamma;
        double eps, tp, fp;
        int plan; /* 0 kseq, 1 otm */
    } cases[] = {
        {"batch", 2, 2, 0, 0.0, 0.5, 0.0, 0},
        {"batch", 5, 2, 0, 0.0, 0.5, 0.0, 0},
        {"rrs", 2, 3, 0, 0.0, 0.5, 0.0, 0},
        {"rrs", 2, 2, 2, 0.0, 0.5, 0.0, 0},
        {"spectr", 2, 3, 0, 0.0, 0.5, 0.0, 0},
        {"spectr", 2, 2, 2, 0.0, 0.5, 0.0, 0},
        {"spectr", 2, 3, 0, 0.0, 0.5, 0.0, 1},
        {"biased", 2, 2, 0, 0.0, 0.5, 0.0, 0},
        {"sprinter", 2, 2, 0, 0.0, 0.7, 0.0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sd_verifier_type *vt = S_vt(cases[i].name);
        sd_params par;
        sd_params_defaults(&par, vt);
        /* M (batch) and k (rrs, spectr) are one field, the number of drafts */
        par.k = sd_params_decl(vt, "M", NULL) ? cases[i].M : cases[i].k;
        par.gamma = cases[i].gamma;
        tu_vpar(&par, vt, "eps", cases[i].eps);
        tu_vpar(&par, vt, "tp", cases[i].tp);
        tu_vpar(&par, vt, "fp", cases[i].fp);
        tu_vpar(&par, vt, "plan", cases[i].plan);
        cr_assert(!vt->claims_lossless || vt->claims_lossless(&par));
        sd_chisq r = S_joint_test(vt, &par, c, 200000, 100 + i);
        cr_assert(r.p_value > 1e-4 && r.zero_hits == 0, "%s case %zu: chi2 %.2f dof %.0f p %.3g",
                  cases[i].name, i, r.chi2, r.dof, r.p_value);
    }
    sd_chain_free(c);
}

Test(lossless, lossy_and_broken_are_flagged)
{
    /* broken-batch (extra residual step), biased with ε > 0, biased uno
     * even at ε = 0 (its residual is q, not [q-p]+) and sprinter with
     * η_FP > 0 all miss the target law by >= 0.05 in TV per token on P3/Q3
     * (two i.i.d. tokens, 9 cells). */
    sd_chain *c = S_pq(P3, Q3, 3, 2);
    struct {
        const char *name;
        double eps, fp;
        sd_residual_kind residual;
    } cases[] = {{"broken-batch", 0.0, 0.0, SD_RESIDUAL_OPT},
                 {"biased", 0.2, 0.0, SD_RESIDUAL_OPT},
                 {"biased", 0.0, 0.0, SD_RESIDUAL_UNO},
                 {"sprinter", 0.0, 0.5, SD_RESIDUAL_OPT}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sd_verifier_type *vt = S_vt(cases[i].name);
        sd_params par;
        sd_params_defaults(&par, vt);
        tu_vpar(&par, vt, "eps", cases[i].eps);
        tu_vpar(&par, vt, "fp", cases[i].fp);
        tu_vpar(&par, vt, "residual", cases[i].residual);
        if (strcmp(cases[i].name, "broken-batch") != 0)
            cr_assert(!vt->claims_lossless(&par), "%s must not claim losslessness", vt->name);
        sd_chisq r = S_joint_test(vt, &par, c, 60000, 200 + i);
        cr_assert(r.p_value < 1e-9, "%s: chi2 %.2f dof %.0f p %.3g", cases[i].name, r.chi2, r.dof,
                  r.p_value);
    }
    sd_chain_free(c);
}

Test(lossless, broken_batch_first_token_law)
{
    /* Its first-token law is Σ_m (Π_{j<m} r_j) min(p, q^m) + R q^{M+2}:
     * the law of the unbiased batch with the last residual stepped once
     * more.  Built from sd_exact_batch_row: u_{M+1} = R q^{M+1}, and
     * u_{M+2} / R_{M+1} = q^{M+2}. */
    size_t M = 2, V = 3;
    double uM1[3], uM2[3], law[3];
    double R = sd_exact_batch_row(P3, Q3, V, M, uM1);
    double R2 = sd_exact_batch_row(P3, Q3, V, M + 1, uM2);
    cr_assert(R > 0.1 && R2 > 0.0);
    for (size_t x = 0; x < V; x++)
        law[x] = Q3[x] - uM1[x] + R * uM2[x] / R2;
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = M;
    sd_chisq r = S_token_test(S_vt("broken-batch"), &par, P3, Q3, V, law, 100000, 9);
    cr_assert(r.p_value > 1e-4, "chi2 %.2f dof %.0f p %.3g", r.chi2, r.dof, r.p_value);
    r = S_token_test(S_vt("broken-batch"), &par, P3, Q3, V, Q3, 100000, 9);
    cr_assert(r.p_value < 1e-9, "broken-batch must be biased: p %.3g", r.p_value);
}

/* --- first-position acceptance vs closed forms ------------------------- */

/* MC first-position acceptance of verifier `name` (k = 2, 4 drafts) on
 * P3/Q3 and P4/Q4 against exact(p, q, V, k), within 4 standard errors. */
static void S_acceptance_grid(const char *name,
                              int (*exact)(const double *, const double *, size_t, size_t,
                                           double *, sd_error *))
{
    const double *ps[2] = {P3, P4}, *qs[2] = {Q3, Q4};
    size_t Vs[2] = {3, 4};
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 2; k <= 4; k += 2) {
            double want, mean, se;
            cr_assert_eq(exact(ps[i], qs[i], Vs[i], k, &want, NULL), SD_OK);
            sd_params par;
            sd_params_defaults(&par, NULL);
            par.k = k;
            S_first_acceptance(S_vt(name), &par, ps[i], qs[i], Vs[i], 200000, &mean, &se);
            cr_assert(fabs(mean - want) < 4.0 * se,
                      "%s problem %zu k=%zu: MC %.5f ± %.5f, exact %.5f", name, i, k, mean, se,
                      want);
        }
}

Test(multidraft_accept, rrs_matches_product_of_tv)
{
    /* RRS acceptance 1 - Π_{m=1..k} TV(q^m, p). */
    S_acceptance_grid("rrs", sd_exact_rrs_acceptance);
}

Test(multidraft_accept, spectr_matches_kseq)
{
    /* k-Seq acceptance 1 - (1 - β(ρ*))^k (Sun et al. 2023, Theorem 1). */
    S_acceptance_grid("spectr", sd_kseq_acceptance);
}

Test(multidraft_accept, spectr_otm_matches_optimum)
{
    /* With --plan otm the first-position acceptance is the OTM-k optimum
     * α_k = 1 - max_B [p(B)^k - q(B)] (Sun et al. 2023, §5; src/sd_exact_otm.h), which
     * is at least the k-Seq and RRS acceptances. */
    for (size_t k = 2; k <= 3; k++) {
        double want, kseq, rrs;
        cr_assert_eq(sd_exact_otm_acceptance(P4, Q4, 4, k, &want, NULL, NULL), SD_OK);
        cr_assert_eq(sd_kseq_acceptance(P4, Q4, 4, k, &kseq, NULL), SD_OK);
        cr_assert_eq(sd_exact_rrs_acceptance(P4, Q4, 4, k, &rrs, NULL), SD_OK);
        cr_assert(want >= kseq - 1e-12 && want >= rrs - 1e-12);
        sd_params par;
        sd_params_defaults(&par, NULL);
        par.k = k;
        tu_par(&par, "plan", 1); /* otm */
        double mean, se;
        S_first_acceptance(S_vt("spectr"), &par, P4, Q4, 4, 100000, &mean, &se);
        cr_assert(fabs(mean - want) < 4.0 * se, "k=%zu: MC %.5f ± %.5f, OTM optimum %.5f", k,
                  mean, se, want);
    }
}

Test(multidraft_accept, batch_first_token_is_rrs)
{
    /* Batch's first position is RRS with M drafts: same acceptance. */
    double u[4];
    double want = 1.0 - sd_exact_batch_row(P4, Q4, 4, 3, u);
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.k = 3;
    double mean, se;
    S_first_acceptance(S_vt("batch"), &par, P4, Q4, 4, 200000, &mean, &se);
    cr_assert(fabs(mean - want) < 4.0 * se, "MC %.5f ± %.5f, exact %.5f", mean, se, want);
}

/* --- biased --------------------------------------------------------------- */

Test(biased, token_law_matches_exact)
{
    double eps[2] = {0.1, 0.3};
    for (int e = 0; e < 2; e++)
        for (int kind = 0; kind < 2; kind++) {
            sd_params par;
            sd_params_defaults(&par, NULL);
            tu_par(&par, "eps", eps[e]);
            tu_par(&par, "residual", kind ? SD_RESIDUAL_UNO : SD_RESIDUAL_OPT);
            double law[4];
            sd_biased_token_law(P4, Q4, 4, eps[e], kind ? SD_RESIDUAL_UNO : SD_RESIDUAL_OPT, law);
            sd_chisq r = S_token_test(S_vt("biased"), &par, P4, Q4, 4, law, 60000, 30 + e);
            cr_assert(r.p_value > 1e-4, "eps %g %s: chi2 %.2f p %.3g", eps[e],
                      kind ? "uno" : "opt", r.chi2, r.p_value);
        }
}

Test(biased, opt_attains_theorem4_loss)
{
    /* TV(P_opt, q) = Loss*_TV(b) = ½Σ|q - min(p,q+ε)| - ½R (Yin et al. 2024, Theorem 4),
     * P(reject) + Loss* = TV(p,q) (Theorem 5), uno is no better, and ε = 0
     * gives q exactly. */
    double eps[4] = {0.0, 0.05, 0.2, 1.0};
    for (int e = 0; e < 4; e++) {
        double opt[4], uno[4], loss = 0.0, R = 0.0;
        sd_biased_token_law(P4, Q4, 4, eps[e], SD_RESIDUAL_OPT, opt);
        sd_biased_token_law(P4, Q4, 4, eps[e], SD_RESIDUAL_UNO, uno);
        for (size_t x = 0; x < 4; x++) {
            double m = fmin(P4[x], Q4[x] + eps[e]);
            loss += 0.5 * fabs(Q4[x] - m);
            R += P4[x] - m;
        }
        loss -= 0.5 * R;
        double tv_opt = 0.5 * (fabs(opt[0] - Q4[0]) + fabs(opt[1] - Q4[1]) +
                               fabs(opt[2] - Q4[2]) + fabs(opt[3] - Q4[3]));
        double tv_uno = 0.5 * (fabs(uno[0] - Q4[0]) + fabs(uno[1] - Q4[1]) +
                               fabs(uno[2] - Q4[2]) + fabs(uno[3] - Q4[3]));
        cr_assert(fabs(tv_opt - loss) < 1e-15, "eps %g: TV %.17g, Loss* %.17g", eps[e], tv_opt,
                  loss);
        cr_assert(fabs(R + loss - sd_dist_tv(P4, Q4, 4)) < 1e-15);
        cr_assert(tv_uno >= tv_opt - 1e-15);
        if (eps[e] == 0.0)
            cr_assert(tv_opt < 1e-15 && tv_uno > 0.0);
    }
}

/* --- sprinter ------------------------------------------------------------- */

Test(sprinter, token_law_matches_theorem_3_1)
{
    /* (1 - η_FP) q + η_FP p per token (Zhong et al. 2025, Thm 3.1 in our letters). */
    double fps[2] = {0.3, 0.8};
    for (int i = 0; i < 2; i++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        tu_par(&par, "tp", 0.6);
        tu_par(&par, "fp", fps[i]);
        double law[4];
        for (size_t x = 0; x < 4; x++)
            law[x] = (1.0 - tu_par_get(&par, "fp")) * Q4[x] + tu_par_get(&par, "fp") * P4[x];
        sd_chisq r = S_token_test(S_vt("sprinter"), &par, P4, Q4, 4, law, 60000, 40 + i);
        cr_assert(r.p_value > 1e-4, "fp %g: chi2 %.2f p %.3g", tu_par_get(&par, "fp"), r.chi2, r.p_value);
    }
}

Test(sprinter, expected_run_matches_theorem_3_3)
{
    /* Zhong et al. 2025, Thm 3.3: with r acceptable tokens followed by unacceptable ones,
     * the number N of cheap-verifier yeses before the first no has
     * E[N] = (η_TP - η_TP^r)/(1 - η_TP) + η_TP^r/(1 - η_FP).  Chain: V = 2;
     * steps 1..r have p = q (every token acceptable), later steps p = δ_0,
     * q = δ_1 (token 0 drafted and unacceptable).  N = emitted - 1 of the
     * first iteration; the horizon r + 40 truncates with probability
     * η_FP^40 < 1e-12. */
    size_t r = 3, T = r + 40;
    sd_error err;
    sd_chain *c = sd_chain_alloc(2, T, T, T, &err);
    cr_assert_not_null(c);
    c->init[0] = c->init[1] = 0.5;
    for (size_t t = 1; t <= T; t++)
        for (size_t a = 0; a < 2; a++) {
            double *p = c->draft + ((t - 1) * 2 + a) * 2, *q = c->target + ((t - 1) * 2 + a) * 2;
            if (t <= r) {
                p[0] = q[0] = 0.3;
                p[1] = q[1] = 0.7;
            } else {
                p[0] = q[1] = 1.0;
                p[1] = q[0] = 0.0;
            }
        }
    cr_assert_eq(sd_chain_validate(c, "test", &err), SD_OK, "%s", err.msg);
    const sd_verifier_type *vt = S_vt("sprinter");
    double tps[2] = {0.5, 0.9}, fp = 0.5;
    for (int i = 0; i < 2; i++) {
        sd_params par;
        sd_params_defaults(&par, NULL);
        tu_par(&par, "tp", tps[i]);
        tu_par(&par, "fp", fp);
        double tr = pow(tu_par_get(&par, "tp"), (double)r), lib, stop;
        double want = (tu_par_get(&par, "tp") - tr) / (1.0 - tu_par_get(&par, "tp")) + tr / (1.0 - fp);
        cr_assert_eq(sd_exact_sprinter(tu_par_get(&par, "tp"), fp, r, 0.1, &lib, &stop, NULL), SD_OK);
        cr_assert(fabs(lib - want) < 1e-12, "sd_exact_sprinter %.15g, formula %.15g", lib, want);
        size_t *out = malloc(T * sizeof *out);
        sd_welford w;
        sd_welford_init(&w);
        for (uint64_t t = 0; t < 40000; t++) {
            sd_stream s;
            sd_stream_init(&s, 12, t);
            sd_iter it = {0, 0, 0, 1, NAN};
            cr_assert_eq(vt->step(NULL, c, &par, &s, 1, 0, out, &it, &err), SD_OK);
            cr_assert_eq(it.target_calls, 1u);
            sd_welford_add(&w, (double)(it.emitted - 1));
        }
        double se = sd_welford_stderr(&w);
        cr_assert(fabs(w.mean - want) < 4.0 * se, "tp %g: MC %.5f ± %.5f, Thm 3.3 %.5f", tu_par_get(&par, "tp"),
                  w.mean, se, want);
        free(out);
    }
    sd_chain_free(c);
}

/* --- parameter errors ------------------------------------------------------ */

Test(params, bad_parameters_are_usage_errors)
{
    sd_chain *c = S_gen(3, 4, 1, 0.5);
    sd_params par;
    sd_error err;
    void *state;
    sd_params_defaults(&par, NULL);
    par.k = 0;
    cr_assert_eq(S_vt("batch")->alloc(&state, c, &par, &err), SD_EUSAGE);
    cr_assert(tu_contains(err.msg, "--M 0"), "%s", err.msg);
    sd_params_defaults(&par, NULL);
    par.k = 0;
    cr_assert_eq(S_vt("rrs")->alloc(&state, c, &par, &err), SD_EUSAGE);
    cr_assert_eq(S_vt("spectr")->alloc(&state, c, &par, &err), SD_EUSAGE);
    cr_assert(tu_contains(err.msg, "--k 0"), "%s", err.msg);
    sd_params_defaults(&par, NULL);
    tu_par(&par, "eps", -0.1);
    cr_assert_eq(S_vt("biased")->alloc(&state, c, &par, &err), SD_EUSAGE);
    sd_params_defaults(&par, NULL);
    tu_par(&par, "tp", 1.5);
    cr_assert_eq(S_vt("sprinter")->alloc(&state, c, &par, &err), SD_EUSAGE);
    cr_assert(tu_contains(err.msg, "--tp"), "%s", err.msg);
    sd_chain_free(c);
}

/* --- the CLI `check` command ------------------------------------------------ */

/* Runs `check` on a verifier and returns 1 when it reported "unbiased":
 * true, 0 for false; skips the test while `check` is a placeholder.  The
 * JSON keys are those documented for the command: unbiased, p_value, chi2,
 * dof. */
static int S_check(const char *args)
{
    char cmd[512], *out = NULL, *errs = NULL;
    snprintf(cmd, sizeof cmd, "check %s --trials 40000 --json", args);
    int rc = tu_run(cmd, &out, &errs);
    if (tu_contains(errs, "not implemented yet")) {
        free(out);
        free(errs);
        cr_skip_test("`simdec check` is not implemented yet");
    }
    cr_assert(tu_contains(out, "\"p_value\"") && tu_contains(out, "\"chi2\"") &&
                  tu_contains(out, "\"dof\""),
              "check %s (exit %d): %s %s", args, rc, out ? out : "", errs ? errs : "");
    int unbiased = tu_contains(out, "\"unbiased\": true") || tu_contains(out, "\"unbiased\":true");
    int biased = tu_contains(out, "\"unbiased\": false") || tu_contains(out, "\"unbiased\":false");
    cr_assert(unbiased != biased, "check %s: no unbiased key in %s", args, out);
    free(out);
    free(errs);
    return unbiased;
}

Test(multidraft_check, cli_passes_lossless_and_flags_lossy)
{
    cr_assert(S_check("--algo batch --M 3"));
    cr_assert(S_check("--algo rrs --k 3"));
    cr_assert(S_check("--algo spectr --k 3"));
    cr_assert(S_check("--algo biased --eps 0"));
    cr_assert(S_check("--algo sprinter --tp 0.7 --fp 0"));
    cr_assert(!S_check("--algo broken-batch --M 2 --p 0.7,0.2,0.1 --q 0.05,0.45,0.5 --T 2"));
    cr_assert(!S_check("--algo biased --eps 0.2 --p 0.7,0.2,0.1 --q 0.05,0.45,0.5 --T 2"));
    cr_assert(!S_check("--algo biased --residual uno --p 0.7,0.2,0.1 --q 0.05,0.45,0.5 --T 2"));
    cr_assert(!S_check("--algo sprinter --fp 0.5 --p 0.7,0.2,0.1 --q 0.05,0.45,0.5 --T 2"));
}
