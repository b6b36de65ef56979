/* test_kernel_tables.c — the table-driven kernels of the other verifiers
 * (sims/kernels/sd_kernel_law.h: biased, sprinter, batch, rrs, spectr; the control
 * broken-rrs-kernel): suite kernel_tables.
 *
 * Statistical comparisons use fixed seeds and a tolerance of 4 standard
 * errors: a correct kernel fails one with probability ~6e-5 (normal
 * approximation of a mean over 40 000 trials), so a failure is a finding. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_check.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/kernels/sd_kernel_law.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "test_util.h"

/* A time-homogeneous chain (one table set for every step) with Dirichlet(1)
 * rows, a tenth of the entries zeroed. */
static sd_chain *S_homogeneous(size_t V, size_t T, unsigned long seed)
{
    sd_chain *c = sd_chain_alloc(V, T, 1, 1, NULL);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert(c && r);
    gsl_rng_set(r, seed);
    tu_dist(r, c->init, V, 1.0, 0.0);
    for (size_t a = 0; a < V; a++) {
        tu_dist(r, c->draft + a * V, V, 1.0, 0.1);
        tu_dist(r, c->target + a * V, V, 1.0, 0.1);
    }
    gsl_rng_free(r);
    return c;
}

/* Every kernel of sd_kernel_law.h, at several parameters: lossy and
 * lossless, finite draft lengths (bonus tables) and the horizon, one to
 * three drafts. */
static const tu_conf S_confs[] = {
    {"biased", {NULL, NULL}, {0, 0}, "biased-alias"},
    {"biased", {"eps", "gamma"}, {0.05, 3}, "biased-alias"},
    {"biased", {"residual", "gamma"}, {1, 1}, "biased-alias"},
    {"biased", {"eps", "residual"}, {0.1, 1}, "biased-alias"},
    {"sprinter", {NULL, NULL}, {0, 0}, "sprinter-alias"},
    {"sprinter", {"tp", "fp"}, {0.6, 0.3}, "sprinter-alias"},
    {"batch", {"M", NULL}, {3, 0}, "batch-alias"},
    {"batch", {"M", "gamma"}, {2, 3}, "batch-alias"},
    {"batch", {"M", "gamma"}, {1, 1}, "batch-alias"},
    {"rrs", {"k", "gamma"}, {2, 3}, "rrs-alias"},
    {"rrs", {"k", NULL}, {3, 0}, "rrs-alias"},
    {"spectr", {"k", "gamma"}, {2, 2}, "spectr-alias"},
    {"spectr", {"k", "gamma"}, {3, 4}, "spectr-alias"},
    {"broken-rrs-kernel", {"k", "gamma"}, {2, 2}, "rrs-alias-broken"},
};

#define S_NCONF (sizeof S_confs / sizeof *S_confs)

/* Exact E[accepted drafts per iteration] as the engine pools it: E[Σ
 * accepted] / E[iterations] over a generation, by the DP over (position,
 * x_{n-1}) of the verifier's iteration law (sd_exact_gen.h).  An outcome's
 * accepted drafts are its tokens minus the residual token (rejected) minus
 * the bonus (e = draft length + 1); a kept ending (SPRINTER) and the horizon
 * count every token. */
static double S_exact_accepted(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par)
{
    const size_t V = c->V, T = c->T;
    double *D = calloc((T + 2) * V, sizeof *D), acc = 0.0, its = 0.0;
    cr_assert_not_null(D);
    memcpy(D + V, c->init, V * sizeof *D);
    sd_iter_law law = {0};
    sd_error err;
    for (size_t n = 1; n <= T; n++)
        for (size_t a = 0; a < V; a++) {
            if (!(D[n * V + a] > 0.0))
                continue;
            sd_iter_law_clear(&law);
            cr_assert_eq(vt->iteration_law(c, par, n, a, &law, &err), SD_OK, "%s", err.msg);
            for (size_t i = 0; i < law.n; i++) {
                const sd_iter_outcome *o = &law.o[i];
                double w = D[n * V + a] * o->prob;
                size_t bonus = !o->rejected && o->emitted == sd_draft_len(c, par, n) + 1;
                its += w;
                acc += w * (double)(o->emitted - (size_t)o->rejected - bonus);
                if (n + o->emitted <= T)
                    D[(n + o->emitted) * V + o->last] += w;
            }
        }
    sd_iter_law_free(&law);
    free(D);
    return acc / its;
}

static void S_near(double mean, double se, double exact, const char *what, const char *run, size_t i,
                   const char *chain)
{
    cr_expect(fabs(mean - exact) < 4.0 * se + 1e-12, "conf %zu (%s, %s) on %s: %s %.6f vs exact %.6f (se %.2g)",
              i, S_confs[i].algo, run, chain, what, mean, exact, se);
}

/* Kernel and mechanistic step against the exact values (sd_verifier_exact,
 * the DP over the verifier's iteration law): mean rejections and target
 * calls within 4 se, for the kernel and for the generic step — the latter
 * holds the law the tables are built from to the step.  Accepted drafts per
 * iteration (pooled over the iterations of all trials, a ratio of
 * expectations) against S_exact_accepted within 4 se, the engine's se
 * (iterations taken as independent; those of one trial are only weakly
 * dependent, through their contexts).  biased's Rao-Blackwellised
 * rejections against the exact value too.  The control's law is its
 * kernel's, not its (correct) step's: only its kernel is compared. */
static void S_agree(const sd_chain *c, const char *chain, uint64_t seed)
{
    for (size_t i = 0; i < S_NCONF; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &S_confs[i]);
        sd_model m = sd_model_of_chain(c);
        sd_exact_values ex;
        sd_error err;
        cr_assert_eq(sd_verifier_exact(vt, &m, &par, &ex, &err), SD_OK, "%s: %s", vt->name, err.msg);
        double acc = S_exact_accepted(vt, c, &par);
        sd_sim_result r;
        int control = (vt->flags & SD_VERIFIER_CONTROL) != 0;
        for (int generic = 0; generic <= !control; generic++) {
            sd_sim_opts o = {.seed = seed + 10 * i + (uint64_t)generic, .trials = 40000, .want_rb = 1,
                             .generic = generic};
            sd_sim_job job = {vt, &m, &par};
            cr_assert_eq(sd_sim_run_job(&job, &o, &r, &err), SD_OK, "%s", err.msg);
            const char *run = generic ? "generic" : "kernel";
            cr_assert_str_eq(r.kernel, generic ? "generic" : S_confs[i].kernel, "conf %zu", i);
            S_near(r.rejections.mean, sd_welford_stderr(&r.rejections), ex.rejections,
                   "rejections", run, i, chain);
            S_near(r.target_calls.mean, sd_welford_stderr(&r.target_calls), ex.target_calls,
                   "target calls", run, i, chain);
            S_near(r.accepted.mean, sd_welford_stderr(&r.accepted), acc,
                   "accepted per iteration", run, i, chain);
            /* rb where the verifier has it (biased), absent where it has not */
            cr_expect_eq(sd_sim_has_rb(&r), strcmp(vt->name, "biased") == 0, "conf %zu %s", i, run);
            if (sd_sim_has_rb(&r))
                S_near(r.rejections_rb.mean, sd_welford_stderr(&r.rejections_rb),
                       ex.rejections, "rb rejections", run, i, chain);
            sd_sim_result_free(&r);
        }
    }
}

Test(kernel_tables, means_match_the_exact_values_on_a_generated_chain)
{
    sd_chain *c = tu_chain(7, 30, 3);
    cr_assert_not_null(c);
    S_agree(c, "the generated chain", 1000);
    sd_chain_free(c);
}

Test(kernel_tables, means_match_the_exact_values_with_zeros)
{
    sd_chain *c = tu_zero_chain(4, 10, 7);
    cr_assert_not_null(c);
    S_agree(c, "the chain with zeros", 2000);
    sd_chain_free(c);
}

Test(kernel_tables, means_match_the_exact_values_on_a_homogeneous_chain)
{
    sd_chain *c = S_homogeneous(5, 12, 11);
    S_agree(c, "the time-homogeneous chain", 3000);
    sd_chain_free(c);
}

/* The law of x_1..x_L that `check` tabulates comes from the kernel (it runs
 * what run runs): the lossless verifiers pass, the control whose tables draw
 * q after all drafts fail is flagged by the same test, and so is biased
 * with eps > 0 (lossy by design). */
Test(kernel_tables, check_passes_the_kernels_and_flags_the_broken_tables)
{
    sd_chain *c1 = tu_chain(3, 4, 1), *c2 = tu_chain(4, 5, 2), *cz = tu_zero_chain(3, 4, 5);
    cr_assert(c1 && c2 && cz);
    const sd_chain *cs[] = {c1, c2, cz};
    const tu_conf *confs[] = {&S_confs[0], &S_confs[4], &S_confs[6], &S_confs[7], &S_confs[9],
                             &S_confs[10], &S_confs[11], &S_confs[12], &S_confs[13], &S_confs[3], &S_confs[5]};
    for (size_t j = 0; j < sizeof confs / sizeof *confs; j++)
        for (size_t i = 0; i < 3; i++) {
            sd_params par;
            const sd_verifier_type *vt = tu_setup(&par, confs[j]);
            int lossless = sd_verifier_claims_lossless(vt, &par) && !(vt->flags & SD_VERIFIER_CONTROL);
            sd_check_opts o;
            sd_check_defaults(&o);
            o.seed = 400 + 3 * j + i;
            o.trials = 40000;
            o.L = 3;
            sd_check_result r;
            sd_error err;
            cr_assert_eq(sd_check_run(vt, cs[i], &par, &o, &r, &err), SD_OK, "%s", err.msg);
            cr_expect_str_eq(r.kernel, confs[j]->kernel);
            cr_expect_eq(r.unbiased, lossless, "%s (%s) on chain %zu: p-value %.3g (chi2 %.1f, dof %.0f)",
                         vt->name, confs[j]->kernel, i, r.chi.p_value, r.chi.chi2, r.chi.dof);
            sd_check_result_free(&r);
        }
    sd_chain_free(c1);
    sd_chain_free(c2);
    sd_chain_free(cz);
}

static void S_same_welford(const sd_welford *a, const sd_welford *b, const char *what, size_t i, unsigned th)
{
    cr_expect(a->n == b->n && memcmp(&a->mean, &b->mean, sizeof a->mean) == 0 &&
                  memcmp(&a->m2, &b->m2, sizeof a->m2) == 0,
              "conf %zu, %u threads: %s differs from one thread's", i, th, what);
}

/* The same bits for any thread count: each trial's stream is (seed, trial)
 * and the statistics are merged per block in block order. */
Test(kernel_tables, bit_identical_across_thread_counts)
{
    sd_chain *c = tu_chain(5, 20, 4);
    cr_assert_not_null(c);
    for (size_t i = 0; i < S_NCONF; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &S_confs[i]);
        sd_sim_result r1, r;
        sd_sim_opts o = {.seed = 5, .trials = 9000, .threads = 1, .want_rb = 1, .want_positions = 1};
        cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r1, NULL), SD_OK);
        cr_assert_str_eq(r1.kernel, S_confs[i].kernel);
        for (unsigned th = 2; th <= 3; th++) {
            o.threads = th;
            cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, NULL), SD_OK);
            S_same_welford(&r1.rejections, &r.rejections, "rejections", i, th);
            S_same_welford(&r1.target_calls, &r.target_calls, "target calls", i, th);
            S_same_welford(&r1.accepted, &r.accepted, "accepted", i, th);
            if (sd_sim_has_rb(&r1))
                S_same_welford(&r1.rejections_rb, &r.rejections_rb, "rb rejections", i, th);
            cr_expect(memcmp(r1.accept_hist, r.accept_hist, (c->T + 1) * sizeof *r.accept_hist) == 0,
                      "conf %zu, %u threads: histogram", i, th);
            cr_expect(memcmp(r1.pos_counts, r.pos_counts, c->T * c->V * sizeof *r.pos_counts) == 0,
                      "conf %zu, %u threads: positions", i, th);
            sd_sim_result_free(&r);
        }
        sd_sim_result_free(&r1);
    }
    sd_chain_free(c);
}

/* Tables over the memory bound are refused before allocating and the run
 * falls back to the step, saying so; the bytes are counted from V, T and
 * the law's states. */
Test(kernel_tables, tables_over_the_limit_fall_back_to_the_step)
{
    sd_chain *c = tu_chain(7, 10, 2);
    cr_assert_not_null(c);
    /* rrs, k = 2: 4 slots per row of 2^⌈log2(4·8)⌉ = 32 entries, 70 rows */
    cr_expect_eq(sd_kernel_law_bytes(c, 2), 70 * 4 * (32 * 8 + 8 + 4));
    const sd_verifier_type *vt = sd_verifier_find("rrs");
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_opts o = {.seed = 1, .trials = 100, .kernel_max_bytes = 1000};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, NULL), SD_OK);
    cr_expect_str_eq(r.kernel, SD_SIM_KERNEL_TOO_BIG);
    sd_sim_result_free(&r);
    sd_model m = sd_model_of_chain(c);
    void *plan = NULL;
    sd_error err;
    cr_expect_eq(vt->kernels[0]->plan_new(&plan, &m, &par, 1000, 1, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "limit 1000"), "%s", err.msg);
    cr_expect_null(plan);
    sd_chain_free(c);
}
