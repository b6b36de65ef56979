/* test_backoff_block.c — block verification (Sun et al. 2025, Alg. 2) on
 * sparse backoff rows with a bigram drafter (--arpa T --draft-arpa D
 * --draft-order 2; sims/kernels/kernel_backoff.c, S_block2_trial).
 *
 * Two hand-written ARPA pairs (a draft over the target's words, and a
 * draft with its own vocabulary: a target word it lacks, a word the
 * target lacks) give dense 5 x 5 rows straight from the numbers; the
 * same rows as a stored chain give block verification's exact values
 * (sd_exact_gen over the verifier's iteration law).  The sparse masses
 * m_a(s) = Σ max(0, s q_a - p_a) equal the dense sums (1e-14: the same
 * terms in another order), and so does the left derivative m_a'(1-) that
 * the kernel's convexity bounds use; the kernel's rejections and target calls
 * agree with the exact values within 4 standard errors (fixed seeds;
 * 4 se: a false alarm of 6e-5 per comparison), at γ = 2 and at the
 * horizon; its first iteration's accepted length agrees with the
 * iteration law's; and the control whose residual is [q - p]+ instead of
 * [p_τ q - p]+ (broken-block-residual) is caught by the same comparison. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_arpa.h"
#include "../src/sd_arpa_draft2.h"
#include "../src/sd_backoff.h"
#include "../src/sd_chain.h"
#include "../src/sd_model.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "test_util.h"
#include "tu_lm.h"


/* The fixture: the sparse model with the bigram draft attached (which = 0:
 * tu_lm_draft, 1: tu_lm_draft_own) and the dense rows as a stored chain, x_0 = <s>. */
typedef struct {
    sd_arpa *ta, *da;
    sd_backoff *m;
    sd_chain *c;
    double p[5][5], q[5][5];
} S_fix;

static void S_open(S_fix *f, int which, size_t T)
{
    memset(f, 0, sizeof *f);
    tu_lm_dense_rows(&tu_lm_target, f->q);
    if (which == 0)
        tu_lm_dense_rows(&tu_lm_draft, f->p);
    else
        tu_lm_dense_draft_own(f->p);
    char *tt = tu_lm_arpa_text(&tu_lm_target), *dt = which == 0 ? tu_lm_arpa_text(&tu_lm_draft) : NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(tt, "target.arpa", 0, &f->ta, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_load_string(dt ? dt : tu_lm_draft_own, "draft.arpa", 0, &f->da, &err), SD_OK, "%s", err.msg);
    free(tt), free(dt);
    cr_assert_eq(sd_backoff_from_arpa(f->ta, 2, f->da, T, 0, &f->m, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_draft2_attach(f->m, f->ta, f->da, 0, &err), SD_OK, "%s", err.msg);
    f->c = sd_chain_alloc(5, T, 1, 1, &err);
    cr_assert_not_null(f->c, "%s", err.msg);
    f->c->init[1] = 1.0;
    for (int a = 0; a < 5; a++)
        for (int x = 0; x < 5; x++) {
            f->c->draft[a * 5 + x] = f->p[a][x];
            f->c->target[a * 5 + x] = f->q[a][x];
        }
    cr_assert_eq(sd_chain_validate(f->c, "dense", &err), SD_OK, "%s", err.msg);
}

static void S_close(S_fix *f)
{
    sd_backoff_free(f->m);
    sd_chain_free(f->c);
    sd_arpa_free(f->ta), sd_arpa_free(f->da);
}

Test(backoff_block, bigram_draft_masses_equal_the_dense_sums)
{
    for (int which = 0; which < 2; which++) {
        S_fix f;
        S_open(&f, which, 4);
        for (size_t a = 0; a < 5; a++)
            for (int x = 0; x < 5; x++)
                cr_assert_float_eq(sd_backoff_draft2_p(f.m, a, (size_t)x), f.p[a][x], 1e-14, "p(%d|%zu)", x, a);
        for (size_t a = 0; a < 5; a++) { /* the left derivative at 1: Σ q over {q > p} */
            double d = 0.0;
            for (int x = 0; x < 5; x++)
                d += f.q[a][x] > f.p[a][x] ? f.q[a][x] : 0.0;
            cr_assert_float_eq(sd_backoff_draft2_slope(f.m, a), d, 1e-14, "draft %d: m_%zu'(1-)", which, a);
        }
        for (size_t a = 0; a < 5; a++)
            for (double s = 0.0; s <= 1.0001; s += 0.05) {
                double d = 0.0;
                for (int x = 0; x < 5; x++)
                    d += fmax(0.0, s * f.q[a][x] - f.p[a][x]);
                cr_assert_float_eq(sd_backoff_draft2_mass(f.m, a, s), d, 1e-14, "draft %d: m_%zu(%g) %.17g vs %.17g",
                                   which, a, s, sd_backoff_draft2_mass(f.m, a, s), d);
            }
        S_close(&f);
    }
}

/* The kernel `algo` on the sparse rows against block verification's exact
 * values on the stored chain; returns the larger |z| of rejections and
 * calls, and checks the kernel's name. */
static double S_z(const char *algo, int which, size_t gamma, size_t T, uint64_t seed, size_t trials)
{
    S_fix f;
    S_open(&f, which, T);
    const sd_verifier_type *vt = sd_verifier_find(algo), *vb = sd_verifier_find("block");
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    sd_params pb;
    sd_params_defaults(&pb, vb);
    pb.gamma = gamma;
    sd_model sparse = sd_model_of_backoff(f.m, f.m->V, f.m->T), stored = sd_model_of_chain(f.c);
    sd_exact_values ex;
    sd_error err;
    cr_assert_eq(vb->exact ? vb->exact(&stored, &pb, &ex, &err) : sd_exact_gen_values(vb, &stored, &pb, &ex, &err),
                 SD_OK, "%s", err.msg);
    sd_sim_opts so = {.seed = seed, .trials = trials, .threads = 2};
    sd_sim_result res;
    memset(&res, 0, sizeof res);
    sd_sim_job job = {vt, &sparse, &par};
    cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
    cr_assert(strstr(res.kernel, "block-backoff"), "kernel %s", res.kernel);
    double zr = (res.rejections.mean - ex.rejections) / sd_welford_stderr(&res.rejections);
    double zc = (res.target_calls.mean - ex.target_calls) / sd_welford_stderr(&res.target_calls);
    cr_log_info("%s draft %d gamma %zu T %zu: rejections %.5f vs exact %.5f (z %.2f), calls %.5f vs %.5f (z %.2f)",
                algo, which, gamma, T, res.rejections.mean, ex.rejections, zr, res.target_calls.mean,
                ex.target_calls, zc);
    sd_sim_result_free(&res);
    S_close(&f);
    return fmax(fabs(zr), fabs(zc));
}

Test(backoff_block, kernel_agrees_with_the_stored_chain, .timeout = 120)
{
    for (int which = 0; which < 2; which++) {
        double z2 = S_z("block", which, 2, 9, 11, 40000), zh = S_z("block", which, 0, 6, 12, 40000);
        cr_expect_lt(z2, 4.0, "draft %d, gamma 2, T 9: |z| = %.2f", which, z2);
        cr_expect_lt(zh, 4.0, "draft %d, gamma = horizon 6: |z| = %.2f", which, zh);
    }
}

/* The residual [q - p]+ in place of [p_τ q - p]+ (the control
 * broken-block-residual): rejections and calls barely move, but the
 * output no longer follows the target.  At the output cell (n, x) where
 * the two exact laws differ most (chosen from the laws, not the data),
 * the control's kernel agrees with its own law and is flagged against
 * block's; block's kernel agrees with block's law there. */
Test(backoff_block, broken_residual_is_caught, .timeout = 120)
{
    for (int which = 0; which < 2; which++) {
        S_fix f;
        S_open(&f, which, 6);
        const sd_verifier_type *bad = sd_verifier_find("broken-block-residual"), *good = sd_verifier_find("block");
        cr_assert_not_null(bad);
        sd_params par;
        sd_params_defaults(&par, bad);
        par.gamma = 3;
        sd_model sparse = sd_model_of_backoff(f.m, f.m->V, f.m->T);
        sd_error err;
        size_t TV = f.m->T * f.m->V, at = 0;
        double *mb = malloc(TV * sizeof *mb), *mg = malloc(TV * sizeof *mg);
        cr_assert_eq(sd_exact_gen_marginals(bad, f.c, &par, mb, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_exact_gen_marginals(good, f.c, &par, mg, &err), SD_OK, "%s", err.msg);
        for (size_t i = 0; i < TV; i++)
            if (fabs(mb[i] - mg[i]) > fabs(mb[at] - mg[at]))
                at = i;
        sd_sim_opts so = {.seed = 5, .trials = 200000, .threads = 2, .want_positions = 1};
        sd_sim_result rb, rg;
        memset(&rb, 0, sizeof rb);
        memset(&rg, 0, sizeof rg);
        sd_sim_job jb = {bad, &sparse, &par}, jg = {good, &sparse, &par};
        cr_assert_eq(sd_sim_run_job(&jb, &so, &rb, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_sim_run_job(&jg, &so, &rg, &err), SD_OK, "%s", err.msg);
        cr_assert_str_eq(rb.kernel, "block-backoff-tokenwise");
        cr_assert_str_eq(rg.kernel, "block-backoff");
        double N = (double)rb.trials, fb = rb.pos_counts[at] / N, fg = rg.pos_counts[at] / N;
        double sb = sqrt(mb[at] * (1.0 - mb[at]) / N), sg = sqrt(mg[at] * (1.0 - mg[at]) / N);
        double zbb = (fb - mb[at]) / sb, zbg = (fb - mg[at]) / sg, zgg = (fg - mg[at]) / sg;
        cr_log_info("draft %d, P(x_%zu = %zu): control %.6f (its law %.6f, z %.2f; block's %.6f, z %.2f), block %.6f "
                    "(z %.2f)", which, at / f.m->V + 1, at % f.m->V, fb, mb[at], zbb, mg[at], zbg, fg, zgg);
        cr_expect_lt(fabs(zbb), 4.0, "draft %d: the control's kernel against its own law: z = %.2f", which, zbb);
        cr_expect_gt(fabs(zbg), 4.0, "draft %d: the control's kernel against block's law: z = %.2f (not flagged)",
                     which, zbg);
        cr_expect_lt(fabs(zgg), 4.0, "draft %d: block's kernel against block's law: z = %.2f", which, zgg);
        sd_sim_result_free(&rb), sd_sim_result_free(&rg);
        free(mb), free(mg);
        S_close(&f);
    }
}

/* One iteration from <s> with γ drafts (T = γ + 1, so a full acceptance
 * adds the bonus token): the kernel's mean accepted length against the
 * iteration law's Σ P(o) (emitted(o) - 1). */
Test(backoff_block, first_iteration_matches_the_iteration_law, .timeout = 60)
{
    const sd_verifier_type *vt = sd_verifier_find("block");
    for (int which = 0; which < 2; which++)
        for (size_t G = 2; G <= 3; G++) {
            S_fix f;
            S_open(&f, which, G + 1);
            sd_params par;
            sd_params_defaults(&par, vt);
            par.gamma = G;
            sd_error err;
            sd_iter_law law;
            memset(&law, 0, sizeof law);
            cr_assert_eq(vt->iteration_law(f.c, &par, 1, 1, &law, &err), SD_OK, "%s", err.msg);
            double ex = 0.0;
            for (size_t i = 0; i < law.n; i++)
                if (law.o[i].emitted > 0)
                    ex += law.o[i].prob * (double)(law.o[i].emitted - 1);
            sd_iter_law_free(&law);
            sd_model m = sd_model_of_backoff(f.m, f.m->V, f.m->T);
            sd_sim_job job = {vt, &m, &par};
            sd_sim_opts so = {.seed = 3, .trials = 40000, .stop = {.first_iteration = 1}};
            sd_sim_result res;
            cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
            double se = sd_welford_stderr(&res.accepted), z = (res.accepted.mean - ex) / se;
            cr_assert_eq(res.accepted.n, 40000.0, "one iteration per trial: %g", res.accepted.n);
            cr_expect(fabs(z) < 4.0, "draft %d G=%zu: kernel %.5f +- %.2g vs law %.5f (%.2f se)", which, G,
                      res.accepted.mean, se, ex, z);
            sd_sim_result_free(&res);
            S_close(&f);
        }
}

/* The command line runs it (no longer refused) and prints the kernel. */
Test(backoff_block, command_line_runs_block_with_a_bigram_draft, .timeout = 60)
{
    char *tt = tu_lm_arpa_text(&tu_lm_target), *dt = tu_lm_arpa_text(&tu_lm_draft);
    char *ft = tu_tempfile(tt), *fd = tu_tempfile(dt), args[1024], *out = NULL, *errs = NULL;
    snprintf(args, sizeof args,
             "run --algo block --gamma 2 --arpa %s --draft-arpa %s --draft-order 2 --T 9 --trials 2000 --json", ft, fd);
    cr_assert_eq(tu_run(args, &out, &errs), 0, "%s", errs);
    cr_assert(strstr(out, "block-backoff"), "%s", out);
    free(out), free(errs);
    remove(ft), remove(fd);
    free(ft), free(fd), free(tt), free(dt);
}
