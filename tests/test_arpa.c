/* test_arpa.c — ARPA language models as chains (src/sd_arpa.h,
 * src/sd_backoff.h, sims/kernels/kernel_backoff.c): on a small hand-written
 * backoff bigram, Theorem 1 (Yin et al. 2024) from sparse TV sums equals a
 * direct dense computation from the file's numbers; the finite-γ token DP
 * equals sd_exact_token on the same rows stored; the token and block
 * kernels and rrs's (k drafts), which sample backoff rows without building them, agree with the
 * exact values within 4 standard errors (fixed seeds: 4 se is a two-sided
 * false-alarm rate of 6e-5 per comparison); malformed files are refused
 * with their line numbers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_arpa.h"
#include "../src/sd_backoff.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_model.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/exact/sd_exact_gen.h"
#include "test_util.h"
#include "tu_lm.h"

/* Tokens: 0 </s>, 1 <s>, 2 a, 3 b, 4 c.  Rows do not sum to 1 (rounded
 * log10 values, as toolkits write them): the model renormalises. */
static const char S_lm[] = "written by hand\n"
                           "\n"
                           "\\data\\\n"
                           "ngram 1=5\n"
                           "ngram 2=7\n"
                           "\n"
                           TU_LM_UNIGRAMS
                           "\n"
                           "\\2-grams:\n"
                           "-0.3010 <s> a\n"
                           "-0.6021 <s> b\n"
                           "-0.2218 a b\n"
                           "-0.4 a </s>\n"
                           "-0.1 b c\n"
                           "-0.5 c a\n"
                           "-1.5 c <s>\n"
                           "\n"
                           "\\end\\\n";

static const double S_uni[5] = {-0.6990, -INFINITY, -0.5229, -0.6990, -0.5229};
static const double S_bo[5] = {0.0, -0.30103, -0.1, -0.2, 0.05};

/* The dense rows straight from the numbers above: P(x|a) = 10^bigram if
 * seen, else 10^bo(a) 10^uni(x); <s> gets 0; each row normalised. */
static void S_dense(double q[5][5], double p[5])
{
    static const struct { int a, x; double lp; } bi[] = {
        {1, 2, -0.3010}, {1, 3, -0.6021}, {2, 3, -0.2218}, {2, 0, -0.4}, {3, 4, -0.1}, {4, 2, -0.5}};
    double s = 0.0;
    for (int x = 0; x < 5; x++)
        s += p[x] = x == 1 ? 0.0 : pow(10.0, S_uni[x]);
    for (int x = 0; x < 5; x++)
        p[x] /= s;
    for (int a = 0; a < 5; a++) {
        double z = 0.0;
        for (int x = 0; x < 5; x++) {
            double v = x == 1 ? 0.0 : pow(10.0, S_bo[a] + S_uni[x]);
            for (size_t i = 0; i < sizeof bi / sizeof bi[0]; i++)
                if (bi[i].a == a && bi[i].x == x)
                    v = pow(10.0, bi[i].lp);
            z += q[a][x] = v;
        }
        for (int x = 0; x < 5; x++)
            q[a][x] /= z;
    }
}

static sd_backoff *S_model(size_t T)
{
    sd_arpa *a = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(S_lm, "hand.arpa", 0, &a, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(a->V, 5);
    cr_assert_eq(a->n2, 7);
    cr_assert_eq(a->bos, 1);
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(a, 2, a, T, 0, &m, &err), SD_OK, "%s", err.msg);
    sd_arpa_free(a);
    return m;
}

/* Theorem 1 (Yin et al. 2024) from the dense rows (S_dense): the expected
 * rejections over T positions, sum over n of E[TV(p, q(. | x_{n-1}))] with
 * x_0 = <s> and x_{n-1} drawn from the target's chain. */
static double S_direct(size_t T)
{
    double q[5][5], p[5];
    S_dense(q, p);
    double Q[5] = {0, 1, 0, 0, 0}, direct = 0.0;
    for (size_t n = 1; n <= T; n++) {
        double N[5] = {0};
        for (int a = 0; a < 5; a++) {
            direct += Q[a] * sd_dist_tv(p, q[a], 5);
            for (int x = 0; x < 5; x++)
                N[x] += Q[a] * q[a][x];
        }
        memcpy(Q, N, sizeof Q);
    }
    return direct;
}

Test(arpa, theorem1_equals_the_direct_computation)
{
    const size_t T = 9;
    double q[5][5], p[5], direct = S_direct(T);
    S_dense(q, p);
    sd_backoff *m = S_model(T);
    for (size_t a = 0; a < 5; a++)
        for (size_t x = 0; x < 5; x++)
            cr_assert_float_eq(sd_backoff_q(m, a, x), q[a][x], 1e-14, "q(%zu|%zu)", x, a);
    cr_assert_gt(m->row_dev, 0.01, "the hand-written rows do not sum to 1");
    double rej, calls;
    sd_error err;
    cr_assert_eq(sd_backoff_exact_token(m, 0, &rej, &calls, &err), SD_OK, "%s", err.msg);
    cr_assert_float_eq(rej, direct, 1e-13, "Theorem 1: sparse %.17g, direct %.17g", rej, direct);
    sd_backoff_free(m);
}

Test(arpa, token_dp_equals_the_stored_chain)
{
    for (size_t T = 1; T <= 12; T += 11) {
        sd_backoff *m = S_model(T);
        sd_chain *c = tu_lm_stored(m);
        sd_error err;
        for (size_t g = 0; g <= 5; g++) {
            double r1, c1, r2, c2;
            cr_assert_eq(sd_backoff_exact_token(m, g, &r1, &c1, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_exact_token(c, g, &r2, &c2, &err), SD_OK, "%s", err.msg);
            cr_assert_float_eq(r1, r2, 1e-12, "T=%zu gamma=%zu rejections %.17g vs %.17g", T, g, r1, r2);
            cr_assert_float_eq(c1, c2, 1e-12, "T=%zu gamma=%zu calls %.17g vs %.17g", T, g, c1, c2);
        }
        sd_chain_free(c);
        sd_backoff_free(m);
    }
}

Test(arpa, residual_masses_equal_dense_sums)
{
    sd_backoff *m = S_model(5);
    double p[5], q[5];
    for (size_t a = 0; a < 5; a++) {
        sd_backoff_rows(m, a, p, q);
        for (double s = 0.05; s <= 1.0; s += 0.19) {
            double d = 0.0;
            for (int x = 0; x < 5; x++)
                d += fmax(0.0, s * q[x] - p[x]);
            cr_assert_float_eq(sd_backoff_mass(m, a, s), d, 1e-14, "m_%zu(%g)", a, s);
        }
    }
    sd_backoff_free(m);
}

static void S_mc_k(const char *algo, size_t gamma, size_t k, size_t T);

static void S_mc(const char *algo, size_t gamma, size_t T)
{
    S_mc_k(algo, gamma, 2, T);
}

static void S_mc_k(const char *algo, size_t gamma, size_t k, size_t T)
{
    sd_backoff *m = S_model(T);
    sd_chain *c = tu_lm_stored(m);
    const sd_verifier_type *vt = sd_verifier_find(algo);
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    par.k = k;
    sd_exact_values ex;
    sd_sim_result res;
    double zr, zc;
    tu_lm_kernel_vs_exact(vt, &par, m, c, 7, &ex, &res, &zr, &zc);
    cr_assert_lt(fabs(zr), 4.0, "%s gamma=%zu: rejections %g vs exact %g (z = %g)", algo, gamma,
                 res.rejections.mean, ex.rejections, zr);
    cr_assert_lt(fabs(zc), 4.0, "%s gamma=%zu: calls %g vs exact %g (z = %g)", algo, gamma,
                 res.target_calls.mean, ex.target_calls, zc);
    sd_sim_result_free(&res);
    sd_chain_free(c);
    sd_backoff_free(m);
}

Test(arpa, token_kernel_agrees_with_exact)
{
    S_mc("token", 0, 10);
    S_mc("token", 3, 10);
}

Test(arpa, block_kernel_agrees_with_exact)
{
    S_mc("block", 2, 10);
    S_mc("block", 4, 10);
}

Test(arpa, rrs_kernel_agrees_with_exact)
{
    S_mc_k("rrs", 2, 2, 8);
    S_mc_k("rrs", 3, 4, 8);
    S_mc_k("rrs", 0, 3, 6);
}

/* A malformed variant of S_lm: line `line` (1-based) replaced by `with`
 * (NULL: deleted); refused with "bad.arpa:WANT:" and `what` in the message. */
static void S_bad(int line, const char *with, int want, const char *what)
{
    char text[2048] = "";
    const char *s = S_lm;
    for (int l = 1; *s; l++) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
        if (l != line)
            strncat(text, s, n);
        else if (with) {
            strcat(text, with);
            strcat(text, "\n");
        }
        s += n;
    }
    sd_arpa *a = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(text, "bad.arpa", 0, &a, &err), SD_EDATA, "line %d '%s' was accepted", line,
                 with ? with : "(deleted)");
    char at[32];
    snprintf(at, sizeof at, "bad.arpa:%d:", want);
    cr_assert(strstr(err.msg, at), "expected '%s' in: %s", at, err.msg);
    cr_assert(strstr(err.msg, what), "expected '%s' in: %s", what, err.msg);
    cr_assert_null(a);
}

Test(arpa, malformed_files_are_refused_with_line_numbers)
{
    S_bad(4, "ngram 1=x", 4, "ngram N=COUNT");
    S_bad(5, "ngram 3=7", 5, "orders 1, 2");
}

Test(arpa, malformed_more)
{
    S_bad(10, "-0.5229\ta\t-0.1\textra", 10, "fields");
    S_bad(10, "0.5\ta", 10, "log10 probability");
    S_bad(10, "nan\ta", 10, "log10 probability");
    S_bad(11, "-0.6990\tb\tx", 11, "backoff");
    S_bad(16, "-0.3010 <s> zz", 16, "not among the unigrams");
    S_bad(16, "-0.3010 <s> a", 16, "listed twice (first at line 15)");
    S_bad(21, NULL, 22, "declared 7");
    S_bad(23, NULL, 22, "without \\end\\");
    S_bad(3, NULL, 22, "no \\data\\");
    S_bad(11, "-0.5229\ta", 11, "listed twice among the unigrams");
    /* a field of 62 characters is shown cut at 60, with "..." */
    char wide[80], shown[128];
    memset(wide, 'x', 62);
    strcpy(wide + 62, "\ta");
    memset(shown, 'x', 60);
    strcpy(shown + 60, "...' is not a log10 probability");
    S_bad(10, wide, 10, shown);
}

/* The command line: --arpa FILE. */
Test(arpa, command_line, .timeout = 60)
{
    char *path = tu_tempfile(S_lm), cmd[512], *out = NULL;
    double direct = S_direct(9);
    snprintf(cmd, sizeof cmd, "eval rejections --arpa %s --T 9 --json", path);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0, "%s", cmd);
    char *at = strstr(out, "\"rejections\": ");
    cr_assert_not_null(at, "%s", out);
    cr_expect_float_eq(strtod(at + 14, NULL), direct, 1e-12, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "run --arpa %s --T 9 --algo token,block,rrs --gamma 2 --trials 2000", path);
    tu_expect(cmd, 0, "rows renormalised");
    snprintf(cmd, sizeof cmd, "eval speedup --arpa %s --T 9 --gamma 1..3", path);
    tu_expect(cmd, 0, NULL);
    snprintf(cmd, sizeof cmd, "run --arpa %s --order 3", path);
    tu_expect(cmd, 64, "--order 3");
    snprintf(cmd, sizeof cmd, "run --arpa %s --algo spectr --plan otm", path); /* k-Seq runs; OTM's LPs do not */
    tu_expect(cmd, 64, "sparse-row model");
    snprintf(cmd, sizeof cmd, "check --arpa %s", path);
    tu_expect(cmd, 64, "stored rows");
    free(path);
    char bad[2048];
    snprintf(bad, sizeof bad, "%s", S_lm);
    char *l = strstr(bad, "-0.1 b c");
    memcpy(l, "-0.1 b z", 8);
    path = tu_tempfile(bad);
    snprintf(cmd, sizeof cmd, "run --arpa %s", path);
    char want[600];
    snprintf(want, sizeof want, "%s:19: 'z' is not among the unigrams", path);
    tu_expect(cmd, 65, want);
    free(path);
    tu_expect("run --arpa /nonexistent/lm.arpa", 66, "cannot open '/nonexistent/lm.arpa'");
}

/* The control broken-block-residual runs on sparse rows through a kernel
 * with the same bug (sd_block_kernel_backoff_tokenwise): its Monte-Carlo
 * agrees with ITS exact law (the token-wise residual, on the same rows
 * stored), and that law is not block's, so the kernels' agreement with the
 * exact values is a check that sees the bug. */
/* A draft unigram far from the target's rows (so that the bug shows). */
static const char S_draft_lm[] = "\\data\\\nngram 1=5\n\n\\1-grams:\n-2 </s>\n-99 <s>\n-0.05 a\n-1.5 b\n"
                                 "-1.2 c\n\n\\end\\\n";

Test(arpa, broken_block_residual_runs_on_sparse_rows, .timeout = 60)
{
    sd_arpa *ta = NULL, *da = NULL;
    sd_error err0;
    cr_assert_eq(sd_arpa_load_string(S_lm, "hand.arpa", 0, &ta, &err0), SD_OK, "%s", err0.msg);
    cr_assert_eq(sd_arpa_load_string(S_draft_lm, "draft.arpa", 0, &da, &err0), SD_OK, "%s", err0.msg);
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(ta, 2, da, 6, 0, &m, &err0), SD_OK, "%s", err0.msg);
    sd_arpa_free(ta);
    sd_arpa_free(da);
    sd_chain *c = tu_lm_stored(m);
    const sd_verifier_type *bad = sd_verifier_find("broken-block-residual"), *good = sd_verifier_find("block");
    cr_assert_not_null(bad);
    sd_params par;
    sd_params_defaults(&par, bad);
    par.gamma = 3;
    sd_model stored = sd_model_of_chain(c), sparse = sd_model_of_backoff(m, m->V, m->T);
    sd_exact_values exb, exg;
    sd_error err;
    cr_assert_eq(sd_exact_gen_values(bad, &stored, &par, &exb, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_exact_gen_values(good, &stored, &par, &exg, &err), SD_OK, "%s", err.msg);
    /* the output token where the two laws differ most (chosen from the exact laws, not the data) */
    size_t TV = m->T * m->V, at = 0;
    double *mb = malloc(TV * sizeof *mb), *mg = malloc(TV * sizeof *mg);
    cr_assert_eq(sd_exact_gen_marginals(bad, c, &par, mb, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_exact_gen_marginals(good, c, &par, mg, &err), SD_OK, "%s", err.msg);
    for (size_t i = 0; i < TV; i++)
        if (fabs(mb[i] - mg[i]) > fabs(mb[at] - mg[at]))
            at = i;
    sd_sim_opts so = {.seed = 3, .trials = 200000, .threads = 2, .want_positions = 1};
    sd_sim_result res;
    memset(&res, 0, sizeof res);
    sd_sim_job job = {bad, &sparse, &par};
    cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
    cr_assert_str_eq(res.kernel, "block-backoff-tokenwise");
    double N = (double)res.trials, f = res.pos_counts[at] / N;
    double zb = (f - mb[at]) / sqrt(mb[at] * (1.0 - mb[at]) / N), zg = (f - mg[at]) / sqrt(mg[at] * (1.0 - mg[at]) / N);
    double zr = (res.rejections.mean - exb.rejections) / sd_welford_stderr(&res.rejections);
    cr_log_info("P(x_%zu = %zu): broken kernel %.6f, its law %.6f (z %.2f), block %.6f (z %.2f)", at / m->V + 1,
                at % m->V, f, mb[at], zb, mg[at], zg);
    cr_expect_lt(fabs(zr), 4.0, "the control's kernel's rejections against its own law: z = %g", zr);
    cr_expect_lt(fabs(zb), 4.0, "the control's kernel against its own law: z = %g", zb);
    cr_expect_gt(fabs(zg), 4.0, "the control's kernel against block's law: z = %g (not flagged)", zg);
    /* and block's kernel on the same cell agrees with block's law */
    sd_sim_result rg;
    memset(&rg, 0, sizeof rg);
    sd_sim_job jg = {good, &sparse, &par};
    cr_assert_eq(sd_sim_run_job(&jg, &so, &rg, &err), SD_OK, "%s", err.msg);
    double fg = rg.pos_counts[at] / N, z2 = (fg - mg[at]) / sqrt(mg[at] * (1.0 - mg[at]) / N);
    cr_expect_lt(fabs(z2), 4.0, "block's kernel against block's law: z = %g", z2);
    sd_sim_result_free(&rg);
    free(mb);
    free(mg);
    sd_sim_result_free(&res);
    sd_chain_free(c);
    sd_backoff_free(m);
}
