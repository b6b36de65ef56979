/* test_exact_gen.c — whole-generation exact values of every verifier from
 * its per-iteration law (sims/exact/sd_exact_gen.h): Monte-Carlo agrees with
 * them, they agree with the closed forms where those exist, and the exact
 * law of the first L tokens is the target's for the lossless verifiers and
 * not for the controls. */
#include <criterion/criterion.h>
#include <math.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_exact.h"
#include "../src/sd_exact_batch.h"
#include "test_util.h"

/* Every built-in verifier with a per-iteration law, at parameters where
 * the law is small enough to enumerate (block: V^gamma blocks). */
static const tu_conf S_confs[] = {
    {"token", {NULL, NULL}, {0, 0}, NULL},
    {"token", {"gamma", NULL}, {3, 0}, NULL},
    {"block", {"gamma", NULL}, {2, 0}, NULL},
    {"broken-block-residual", {"gamma", NULL}, {2, 0}, NULL},
    {"broken-block-kernel", {"gamma", NULL}, {2, 0}, NULL}, /* the law of its kernel */
    {"batch", {"M", NULL}, {3, 0}, NULL},
    {"batch", {"M", "gamma"}, {2, 3}, NULL},
    {"broken-batch", {"M", NULL}, {1, 0}, NULL},
    {"rrs", {"k", "gamma"}, {2, 3}, NULL},
    {"rrs", {"k", NULL}, {3, 0}, NULL},
    {"spectr", {"k", "gamma"}, {2, 2}, NULL},
    {"biased", {"eps", "residual"}, {0.05, 1}, NULL},
    {"biased", {"eps", "gamma"}, {0.1, 2}, NULL},
    {"sprinter", {"tp", "fp"}, {0.6, 0.3}, NULL},
    {"broken-coin", {NULL, NULL}, {0, 0}, NULL},
    {"broken-token-kernel", {"gamma", NULL}, {3, 0}, NULL},
};
#define S_NCONF (sizeof S_confs / sizeof *S_confs)

/* Monte-Carlo (what run executes, kernels included) against the DP:
 * |mean - exact| < 4 standard errors for rejections and target calls; at
 * 4 se a correct pair fails with probability 6e-5 per comparison. */
static void S_agree(const sd_chain *c, const char *what)
{
    for (size_t i = 0; i < S_NCONF; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &S_confs[i]);
        double rej, calls;
        sd_error err;
        cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s: %s", vt->name, err.msg);
        sd_model m = sd_model_of_chain(c);
        sd_sim_job job = {vt, &m, &par};
        sd_sim_opts o = {0};
        o.seed = 7;
        o.trials = 40000;
        sd_sim_result res = {0};
        cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
        double se_r = sd_welford_stderr(&res.rejections), se_c = sd_welford_stderr(&res.target_calls);
        cr_expect(fabs(res.rejections.mean - rej) < 4 * se_r + 1e-12,
                  "%s (conf %zu) on %s: rejections %.6f vs exact %.6f (se %.2g)", vt->name, i, what,
                  res.rejections.mean, rej, se_r);
        cr_expect(fabs(res.target_calls.mean - calls) < 4 * se_c + 1e-12,
                  "%s (conf %zu) on %s: target calls %.6f vs exact %.6f (se %.2g)", vt->name, i, what,
                  res.target_calls.mean, calls, se_c);
        sd_sim_result_free(&res);
    }
}

Test(exact_gen, monte_carlo_agrees_on_the_default_chain)
{
    sd_chain *c = tu_chain(7, 50, 10);
    S_agree(c, "the default chain");
    sd_chain_free(c);
}

Test(exact_gen, monte_carlo_agrees_with_zeros_in_p_and_q)
{
    sd_chain *c = tu_zero_chain(4, 8, 3);
    /* zeros in the draft too: the first token of every draft row */
    for (size_t r = 0; r < c->draft_steps * c->V; r++) {
        double *p = c->draft + r * c->V;
        p[0] = 0.0;
        double s = 0.0;
        for (size_t x = 0; x < c->V; x++)
            s += p[x];
        for (size_t x = 0; x < c->V; x++)
            p[x] /= s;
    }
    S_agree(c, "the chain with zeros");
    sd_chain_free(c);
}

/* The DP against the closed forms (Theorem 1, the token DP, Theorem 3):
 * the same sums in another order, so agreement to 1e-12. */
Test(exact_gen, dp_equals_the_closed_forms)
{
    sd_chain *c = tu_chain(7, 50, 10);
    sd_error err;
    sd_params par;
    const sd_verifier_type *tok = sd_verifier_find("token"), *bat = sd_verifier_find("batch");
    for (size_t g = 0; g <= 4; g++) {
        sd_params_defaults(&par, tok);
        par.gamma = g;
        double rej, calls, r2, c2;
        cr_assert_eq(sd_exact_gen(tok, c, &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_exact_token(c, g, &r2, &c2, &err), SD_OK, "%s", err.msg);
        cr_expect(fabs(rej - r2) < 1e-12 && fabs(calls - c2) < 1e-12, "token gamma %zu: %.17g %.17g vs %.17g %.17g",
                  g, rej, calls, r2, c2);
    }
    for (size_t M = 1; M <= 4; M++) {
        sd_params_defaults(&par, bat);
        par.k = M;
        double rej, calls, r2;
        cr_assert_eq(sd_exact_gen(bat, c, &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_exact_batch_rejections(c, M, &r2, &err), SD_OK, "%s", err.msg);
        cr_expect(fabs(rej - r2) < 1e-12, "batch M %zu: %.17g vs Theorem 3 %.17g", M, rej, r2);
    }
    sd_chain_free(c);
}

/* SPRINTER's cheap verifier treats a token with p(x) = q(x) as acceptable
 * (rate tp; sims/verifiers/sprinter.c, "acceptable when p(x) <= q(x)").  One position
 * (T = 1), p = (1/2, 3/10, 1/5), q = (1/2, 1/10, 2/5), tp = 1/2, fp = 0:
 * the target is called on a no, P = Σ p(x)(1 - yes(x)) = 1/2·1/2 + 3/10
 * + 1/5·1/2 = 0.65 (0.9 if the tie took fp), and rejects only token 1:
 * 3/10·(1 - 1/3) = 0.2. */
Test(exact_gen, sprinter_counts_a_tie_as_acceptable)
{
    const double p[3] = {0.5, 0.3, 0.2}, q[3] = {0.5, 0.1, 0.4};
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, 3, 1, &err);
    cr_assert_not_null(c, "%s", err.msg);
    const sd_verifier_type *vt = sd_verifier_find("sprinter");
    sd_params par;
    sd_params_defaults(&par, vt);
    cr_assert_eq(sd_params_parse(&par, vt, "tp", "0.5", &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_params_parse(&par, vt, "fp", "0", &err), SD_OK, "%s", err.msg);
    double rej, calls;
    cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
    cr_expect(fabs(calls - 0.65) < 1e-12, "%.17g", calls);
    cr_expect(fabs(rej - 0.2) < 1e-12, "%.17g", rej);
    sd_chain_free(c);
}

/* Where the draft is the target (p = q, binary fractions so that
 * β = Σ min(p, q) is exactly 1 and 1 - β exactly 0 in SpecTr's k-Seq),
 * every draft is accepted: no rejection, and the target calls of token
 * verification at the same draft length (sd_exact_token's DP). */
Test(exact_gen, multi_draft_laws_at_p_equal_q)
{
    static const double pq[2][3] = {{0.5, 0.5, 0.0}, {0.25, 0.25, 0.5}};
    static const char *const names[] = {"spectr", "rrs"};
    for (size_t v = 0; v < 2; v++) {
        size_t V = 2 + v;
        sd_error err;
        sd_chain *c = sd_chain_from_pq(pq[v], pq[v], V, 4, &err);
        cr_assert_not_null(c, "%s", err.msg);
        double r0, c0;
        cr_assert_eq(sd_exact_token(c, 2, &r0, &c0, &err), SD_OK, "%s", err.msg);
        for (size_t n = 0; n < 2; n++)
            for (size_t k = 2; k <= 3; k++) {
                const sd_verifier_type *vt = sd_verifier_find(names[n]);
                sd_params par;
                sd_params_defaults(&par, vt);
                par.gamma = 2;
                par.k = k;
                double rej, calls;
                cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
                cr_expect(fabs(rej) < 1e-12 && fabs(calls - c0) < 1e-12,
                          "%s k %zu V %zu: rejections %.17g, calls %.17g (token: %.17g)", names[n], k, V, rej,
                          calls, c0);
            }
        sd_chain_free(c);
    }
}

/* The exact law of the first L tokens: the target's (to 1e-12) for every
 * verifier that claims losslessness, not for the controls and the lossy
 * settings. */
Test(exact_gen, prefix_law_is_the_target_law_exactly_when_lossless)
{
    /* Two chains: a control's bias can vanish on one (broken-batch's
     * q^{M+2} equals q^{M+1} when q^{M+1} sits on one token, as at V = 3
     * with a zero in q), never on both here. */
    sd_chain *cs[2] = {tu_zero_chain(3, 4, 2), tu_chain(4, 3, 5)};
    for (size_t i = 0; i < S_NCONF; i++) {
        sd_params par;
        const sd_verifier_type *vt = tu_setup(&par, &S_confs[i]);
        double tv[2];
        sd_error err;
        for (int j = 0; j < 2; j++)
            cr_assert_eq(sd_exact_gen_prefix_tv(vt, cs[j], &par, 3, 1u << 20, &tv[j], &err), SD_OK,
                         "%s", err.msg);
        int lossless = sd_verifier_claims_lossless(vt, &par) && !(vt->flags & SD_VERIFIER_CONTROL);
        if (lossless)
            cr_expect(tv[0] <= 1e-12 && tv[1] <= 1e-12, "%s (conf %zu): exact TV %.3g, %.3g",
                      vt->name, i, tv[0], tv[1]);
        else
            cr_expect(tv[0] > 1e-9 || tv[1] > 1e-9, "%s (conf %zu): exact TV %.3g, %.3g, expected a bias",
                      vt->name, i, tv[0], tv[1]);
    }
    sd_chain_free(cs[0]);
    sd_chain_free(cs[1]);
}

Test(exact_gen, refusals_name_the_reason)
{
    sd_chain *c = tu_chain(7, 50, 10);
    sd_params par;
    sd_error err;
    double r, k;
    const sd_verifier_type *gb = sd_verifier_find("greedy-block"), *bl = sd_verifier_find("block");
    sd_params_defaults(&par, gb);
    par.gamma = 2;
    cr_expect_eq(sd_exact_gen(gb, c, &par, &r, &k, &err), SD_EUSAGE);
    cr_expect(tu_contains(err.msg, "carries state"), "%s", err.msg);
    sd_params_defaults(&par, bl);
    cr_expect_eq(sd_exact_gen(bl, c, &par, &r, &k, &err), SD_ETOOBIG);
    cr_expect(tu_contains(err.msg, "--gamma"), "%s", err.msg);
    /* The tree laws take 1..4096 drafts (sd_pos_law_tree); a caller of the
     * library that sets k = 0 (the CLI cannot: --k starts at 1) or 4097 is
     * refused, not given the law of an empty tree. */
    const sd_verifier_type *rrs = sd_verifier_find("rrs");
    sd_params_defaults(&par, rrs);
    par.gamma = 2;
    for (size_t k0 = 0; k0 <= 4097; k0 += 4097) {
        par.k = k0;
        cr_expect_neq(sd_exact_gen(rrs, c, &par, &r, &k, &err), SD_OK, "k = %zu", k0);
        cr_expect(tu_contains(err.msg, "1..4096 drafts"), "k = %zu: %s", k0, err.msg);
    }
    sd_chain_free(c);
}

/* Every control is flagged where its exact bias is below 2e-3, with the
 * trials `check --detect` chooses for that bias (power 0.9 against any
 * bias of that TV, src/sd_power.h).  The configurations were found with
 * `check --exact`; the test asserts their exact bias as well. */
Test(exact_gen, controls_are_flagged_at_small_exact_bias_with_detect_trials, .timeout = 600)
{
    static const char *const confs[] = {
        "--algo broken-block-residual --V 3 --T 3 --model-seed 2 --L 3 --detect 1.1e-3",
        "--algo broken-coin --V 3 --T 3 --model-seed 2 --mix 0.1 --L 3 --detect 8.5e-4",
        "--algo broken-batch --M 1 --V 3 --T 3 --model-seed 2 --mix 0.5 --L 3 --detect 1.9e-3",
        "--algo broken-token-kernel --V 3 --T 3 --model-seed 2 --mix 0.002 --L 3 --detect 1.7e-3",
        "--algo broken-rrs-kernel --V 3 --T 3 --model-seed 2 --mix 0.002 --L 3 --detect 1.6e-3",
        /* the kernel (block-sorted-broken): 9.7e6 trials, about 1 s */
        "--algo broken-block-kernel --V 3 --T 3 --model-seed 2 --L 3 --detect 1.1e-3",
        /* no kernel: the generic step, 4.2e6 and 2.3e6 trials, about 2.5 and 2 s of CPU */
        "--algo broken-tree-residual --tree 2,2 --V 3 --T 3 --model-seed 2 --mix 0.003 --L 2 --detect 1.4e-3",
        "--algo broken-tree-wor --tree 3,2 --V 3 --T 3 --model-seed 2 --mix 0.05 --L 2 --detect 1.9e-3",
        /* the kernel (greedy-sorted-broken, Alg. 4 without eq. 31): 4.6e6 trials, about 1 s */
        "--algo broken-greedy-kernel --V 3 --T 3 --model-seed 2 --mix 0.01 --L 3 --detect 1.6e-3",
    };
    for (size_t i = 0; i < sizeof confs / sizeof *confs; i++) {
        char args[512], *out = NULL, *err = NULL;
        snprintf(args, sizeof args, "check %s --exact --json", confs[i]);
        cr_assert_eq(tu_run(args, &out, &err), 0, "%s: %s", args, err);
        json_error_t je;
        json_t *o = json_loads(out, 0, &je);
        cr_assert_not_null(o, "%s", out);
        double tv = json_real_value(json_object_get(o, "exact_tv"));
        cr_expect(tv > 0.0 && tv < 2e-3, "%s: exact bias %.3g", args, tv);
        cr_expect(json_is_false(json_object_get(o, "unbiased")), "%s: not flagged (p = %g)", args,
                  json_real_value(json_object_get(o, "p_value")));
        cr_expect(json_real_value(json_object_get(o, "detectable_tv")) <= tv, "%s", args);
        json_decref(o);
        free(out);
        free(err);
    }
}
