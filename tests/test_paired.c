/* test_paired.c — the output-first path of `run --paired` (sims/engine/sd_paired.h):
 * the laws of token-level SD and block verification given their output,
 * against their exact per-iteration laws; each verifier's law on the path
 * (rejections, target calls, the Rao-Blackwellised estimates and the
 * accepted-length histogram) against exact values; a deliberately broken
 * coupling that reuses a spent uniform, caught by the same test;
 * bit-identical results across thread counts; and the CLI's paired
 * output, with the gain the issue asks for on the default chain.
 *
 * Tolerances are 4 standard errors: with a fixed seed a correct path fails
 * one comparison with probability ~6e-5. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_paired.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "test_util.h"

static const sd_verifier_type *S_vt(const char *name)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert(vt, "no verifier %s", name);
    return vt;
}

static sd_params S_par(const sd_verifier_type *vt, size_t gamma)
{
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = gamma;
    return par;
}

/* Drafts accepted by an outcome of an iteration with G drafts: a rejection
 * or a bonus token is its last token; otherwise it ended at the horizon. */
static size_t S_accepted(const sd_iter_outcome *o, size_t G)
{
    return o->rejected ? o->emitted - 1 : (o->emitted > G ? G : o->emitted);
}

/* Enumerates every output z of the iteration at (n, prev), continued by the
 * target up to the window of L = min(G+1, T-n+1) tokens, and returns the
 * largest |P(τ >= l | z) - Π_{j<=l} rule(s, r_j)| over z and l <= G; also
 * the largest deviation of z's law from the target's (lossless). */
static double S_given_output_error(const sd_verifier_type *vt, sd_given_output_fn rule, const sd_chain *c,
                                   const sd_params *par, size_t n, size_t prev, double *law_err)
{
    const size_t V = c->V, G = sd_draft_len(c, par, n), L = G + 1 < c->T - n + 2 ? G + 1 : c->T - n + 1;
    size_t cells = 1;
    for (size_t i = 0; i < L; i++)
        cells *= V;
    double *joint = calloc(cells * (G + 1), sizeof *joint);
    cr_assert(joint);
    sd_iter_law law = {0};
    law.keep = L;
    sd_error err;
    cr_assert_eq(vt->iteration_law(c, par, n, prev, &law, &err), SD_OK, "%s", err.msg);
    size_t z[16];
    for (size_t k = 0; k < law.n; k++) {
        const sd_iter_outcome *o = &law.o[k];
        size_t e = o->emitted, acc = S_accepted(o, G);
        /* every continuation of the outcome's tokens by the target */
        for (size_t cont = 0, ncont = cells; cont < ncont; cont++) {
            size_t idx = cont, ok = 1;
            for (size_t i = L; i-- > 0;) {
                z[i] = idx % V;
                idx /= V;
            }
            double pr = o->prob;
            for (size_t i = 0; i < L && ok; i++) {
                if (i < e) {
                    ok = z[i] == law.tokens[o->tok + i];
                } else {
                    pr *= sd_chain_q(c, n + i, i ? z[i - 1] : prev)[z[i]];
                }
            }
            if (ok)
                joint[cont * (G + 1) + acc] += pr;
        }
    }
    double worst = 0.0, lw = 0.0;
    for (size_t cell = 0; cell < cells; cell++) {
        size_t idx = cell;
        for (size_t i = L; i-- > 0;) {
            z[i] = idx % V;
            idx /= V;
        }
        double marg = 0.0, qz = 1.0;
        for (size_t a = 0; a <= G; a++)
            marg += joint[cell * (G + 1) + a];
        for (size_t i = 0; i < L; i++)
            qz *= sd_chain_q(c, n + i, i ? z[i - 1] : prev)[z[i]];
        lw = fmax(lw, fabs(marg - qz));
        if (!(qz > 0.0))
            continue;
        double s = 1.0, surv = 1.0;
        for (size_t l = 1; l <= G && l <= L; l++) {
            size_t a0 = l == 1 ? prev : z[l - 2], t = n + l - 1;
            surv *= rule(&s, sd_chain_p(c, t, a0)[z[l - 1]] / sd_chain_q(c, t, a0)[z[l - 1]]);
            double post = 0.0;
            for (size_t a = l; a <= G; a++)
                post += joint[cell * (G + 1) + a];
            worst = fmax(worst, fabs(post / marg - surv));
        }
    }
    sd_iter_law_free(&law);
    free(joint);
    *law_err = lw;
    return worst;
}

/* Over every context of a small chain (with and without exact zeros) and
 * draft lengths 1, 2, 3 and the rest of the horizon. */
static double S_given_output_worst(const char *name, sd_given_output_fn rule)
{
    const sd_verifier_type *vt = S_vt(name);
    double worst = 0.0;
    for (int zeros = 0; zeros < 2; zeros++) {
        sd_chain *c = zeros ? tu_zero_chain(3, 4, 5) : tu_chain(3, 4, 5);
        cr_assert(c);
        for (size_t gamma = 0; gamma <= 3; gamma++) {
            sd_params par = S_par(vt, gamma);
            for (size_t n = 1; n <= c->T; n++)
                for (size_t a = 0; a < c->V; a++) {
                    double lw;
                    worst = fmax(worst, S_given_output_error(vt, rule, c, &par, n, a, &lw));
                    cr_expect(lw < 1e-12, "%s: the output of (n %zu, prev %zu) is not the target's (%g)", name,
                              n, a, lw);
                }
        }
        sd_chain_free(c);
    }
    return worst;
}

Test(paired, block_given_output_is_the_min_of_prefix_ratios)
{
    double e = S_given_output_worst("block", S_vt("block")->given_output);
    cr_expect(e < 1e-12, "block: P(tau >= l | output) differs from M_l by %g", e);
    /* the enumeration tells the rules apart: token's rule is not block's law */
    cr_expect(S_given_output_worst("block", sd_paired_token_rule) > 1e-3);
}

Test(paired, token_given_output_is_the_product_of_min_ratios)
{
    double e = S_given_output_worst("token", S_vt("token")->given_output);
    cr_expect(e < 1e-12, "token: P(tau >= l | output) differs from the product by %g", e);
    cr_expect(S_given_output_worst("token", sd_paired_block_rule) > 1e-3);
}

/* --- each verifier's law on the path ------------------------------------------ */

/* Exact E[iterations accepting j drafts] for j = 0..T, by the DP over the
 * contexts where iterations start (sims/exact/sd_exact_gen.h). */
static void S_exact_hist(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, double *hist)
{
    const size_t V = c->V, T = c->T;
    double *D = calloc((T + 2) * V, sizeof *D);
    cr_assert(D);
    memcpy(D + V, c->init, V * sizeof *D);
    memset(hist, 0, (T + 1) * sizeof *hist);
    sd_iter_law law = {0};
    sd_error err;
    for (size_t n = 1; n <= T; n++)
        for (size_t a = 0; a < V; a++) {
            double d = D[n * V + a];
            if (!(d > 0.0))
                continue;
            sd_iter_law_clear(&law);
            cr_assert_eq(vt->iteration_law(c, par, n, a, &law, &err), SD_OK, "%s", err.msg);
            for (size_t k = 0; k < law.n; k++) {
                const sd_iter_outcome *o = &law.o[k];
                hist[S_accepted(o, sd_draft_len(c, par, n))] += d * o->prob;
                if (n + o->emitted <= T)
                    D[(n + o->emitted) * V + o->last] += d * o->prob;
            }
        }
    sd_iter_law_free(&law);
    free(D);
}

/* Runs the path trial by trial (the kernel the engine runs) and returns the
 * largest |mean - exact| / se over rejections, target calls, their
 * Rao-Blackwellised estimates and the accepted-length histogram's bins. */
static double S_law_z(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, unsigned bugs,
                      uint64_t trials)
{
    const size_t T = c->T;
    sd_model m = sd_model_of_chain(c);
    sd_exact_values ex;
    sd_error err;
    cr_assert_eq(sd_verifier_exact(vt, &m, par, &ex, &err), SD_OK, "%s", err.msg);
    double *eh = malloc((T + 1) * sizeof *eh), *h = malloc((T + 1) * sizeof *h);
    sd_welford *wh = malloc((T + 1) * sizeof *wh);
    cr_assert(eh && h && wh);
    S_exact_hist(vt, c, par, eh);
    void *plan, *work;
    cr_assert_eq(sd_paired_plan_new(&plan, vt, &m, par, bugs, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_paired_kernel.work_new(plan, &work, &err), SD_OK);
    sd_welford w[4]; /* rejections, calls, rb rejections, rb calls */
    for (int i = 0; i < 4; i++)
        sd_welford_init(&w[i]);
    for (size_t j = 0; j <= T; j++)
        sd_welford_init(&wh[j]);
    for (uint64_t t = 0; t < trials; t++) {
        sd_trial tr;
        memset(h, 0, (T + 1) * sizeof *h);
        sd_observe obs = {.hist = h, .per_trial = &tr};
        sd_paired_kernel.run(plan, work, 11, t, t + 1, &obs);
        sd_welford_add(&w[0], (double)tr.rejections);
        sd_welford_add(&w[1], (double)tr.target_calls);
        sd_welford_add(&w[2], tr.rb_rejections);
        sd_welford_add(&w[3], tr.rb_target_calls);
        for (size_t j = 0; j <= T; j++)
            sd_welford_add(&wh[j], h[j]);
    }
    double want[4] = {ex.rejections, ex.target_calls, ex.rejections, ex.target_calls}, worst = 0.0;
    for (int i = 0; i < 4; i++) {
        double se = sd_welford_stderr(&w[i]);
        cr_assert(isfinite(want[i]) && se > 0.0);
        worst = fmax(worst, fabs(w[i].mean - want[i]) / se);
    }
    for (size_t j = 0; j <= T; j++) {
        double se = sd_welford_stderr(&wh[j]);
        if (se > 0.0)
            worst = fmax(worst, fabs(wh[j].mean - eh[j]) / se);
        else /* never observed: then never possible (to rounding) */
            worst = fmax(worst, eh[j] > 1e-12 ? INFINITY : 0.0);
    }
    sd_paired_kernel.work_free(work);
    sd_paired_kernel.plan_free(plan);
    free(eh);
    free(h);
    free(wh);
    return worst;
}

Test(paired, each_verifier_keeps_its_law)
{
    static const char *const names[] = {"token", "block"};
    for (int zeros = 0; zeros < 2; zeros++) {
        sd_chain *c = zeros ? tu_zero_chain(4, 8, 3) : tu_chain(4, 8, 3);
        cr_assert(c);
        for (int v = 0; v < 2; v++)
            for (size_t gamma = 0; gamma <= 3; gamma++) {
                sd_params par = S_par(S_vt(names[v]), gamma);
                double z = S_law_z(S_vt(names[v]), c, &par, 0, 20000);
                cr_expect(z < 4.0, "%s gamma %zu%s: %.2f se from the exact law", names[v], gamma,
                          zeros ? " (zeros)" : "", z);
            }
        sd_chain_free(c);
    }
}

/* The count's uniform must be fresh: taking the one that drew x_T (spent:
 * given x_T it lies in x_T's interval of the CDF) biases the count, and
 * the same test catches it for both verifiers. */
Test(paired, reusing_a_spent_uniform_is_caught)
{
    static const char *const names[] = {"token", "block"};
    sd_chain *c = tu_chain(4, 8, 3);
    cr_assert(c);
    for (int v = 0; v < 2; v++) {
        sd_params par = S_par(S_vt(names[v]), 0);
        double z = S_law_z(S_vt(names[v]), c, &par, SD_PAIRED_BUG_REUSE_DRAW, 20000);
        cr_expect(z > 4.0, "%s: the broken coupling is only %.2f se from the exact law", names[v], z);
    }
    sd_chain_free(c);
}

Test(paired, only_lossless_verifiers_with_a_law_given_output)
{
    sd_chain *c = tu_chain(3, 4, 1);
    cr_assert(c);
    sd_model m = sd_model_of_chain(c);
    static const char *const refused[] = {"batch", "rrs", "greedy-block", "broken-token-kernel"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        sd_params par = S_par(S_vt(refused[i]), 0);
        void *plan = NULL;
        sd_error err;
        cr_expect_eq(sd_paired_plan_new(&plan, S_vt(refused[i]), &m, &par, 0, &err), SD_EUSAGE, "%s",
                     refused[i]);
        cr_expect_null(plan);
    }
    sd_chain_free(c);
}

/* --- the engine --------------------------------------------------------------- */

static sd_sim_result S_engine(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                              uint64_t trials, unsigned threads)
{
    sd_sim_opts o = {.seed = 3, .trials = trials, .threads = threads, .want_per_trial = 1, .want_rb = 1,
                     .coupled = 1};
    sd_sim_result r;
    sd_error err;
    cr_assert_eq(sd_sim_run(vt, c, par, &o, &r, &err), SD_OK, "%s", err.msg);
    return r;
}

Test(paired, engine_runs_the_path_and_bits_do_not_depend_on_threads)
{
    sd_chain *c = tu_chain(5, 12, 2);
    cr_assert(c);
    static const char *const names[] = {"token", "block"};
    uint64_t trials = 2 * SD_SIM_BLOCK + 77;
    for (int v = 0; v < 2; v++) {
        sd_params par = S_par(S_vt(names[v]), 3);
        sd_sim_result a = S_engine(S_vt(names[v]), c, &par, trials, 1),
                      b = S_engine(S_vt(names[v]), c, &par, trials, 3);
        cr_expect_str_eq(a.kernel, SD_PAIRED_KERNEL_NAME);
        cr_expect_eq(memcmp(a.per_trial, b.per_trial, trials * sizeof *a.per_trial), 0, "%s", names[v]);
        cr_expect_eq(memcmp(&a.rejections, &b.rejections, sizeof a.rejections), 0);
        cr_expect_eq(memcmp(&a.target_calls, &b.target_calls, sizeof a.target_calls), 0);
        cr_expect_eq(memcmp(&a.accepted, &b.accepted, sizeof a.accepted), 0);
        cr_expect_eq(memcmp(&a.rejections_rb, &b.rejections_rb, sizeof a.rejections_rb), 0);
        cr_expect_eq(memcmp(a.accept_hist, b.accept_hist, (c->T + 1) * sizeof *a.accept_hist), 0);
        sd_sim_result_free(&a);
        sd_sim_result_free(&b);
    }
    /* given x, block's rejections are stochastically fewer than token's
     * (with a shared coin per position block accepts wherever token does),
     * so with comonotone counts it never rejects more in the same trial */
    sd_params pt = S_par(S_vt("token"), 0), pb = S_par(S_vt("block"), 0);
    sd_sim_result t = S_engine(S_vt("token"), c, &pt, 5000, 2), k = S_engine(S_vt("block"), c, &pb, 5000, 2);
    for (uint64_t i = 0; i < 5000; i++)
        cr_expect(k.per_trial[i].rejections <= t.per_trial[i].rejections, "trial %llu", (unsigned long long)i);
    /* a trial runs to the horizon: its iterations emit x_1..x_T, T tokens,
     * and each iteration makes one target call */
    for (uint64_t i = 0; i < 5000; i++) {
        cr_expect_eq(t.per_trial[i].emitted, c->T, "token trial %llu", (unsigned long long)i);
        cr_expect_eq(k.per_trial[i].emitted, c->T, "block trial %llu", (unsigned long long)i);
        cr_expect_eq(k.per_trial[i].iterations, k.per_trial[i].target_calls, "block trial %llu",
                     (unsigned long long)i);
    }
    sd_sim_result_free(&t);
    sd_sim_result_free(&k);
    sd_chain_free(c);
}

/* The output-first path's rows of tokens (want_tokens) are the trials'
 * outputs: tabulated by position they are the engine's per-position counts
 * (both are integers: equal exactly).  300 trials in one block: the rows of
 * trials after the first of a chunk must land in their own slots. */
Test(paired, token_rows_tabulate_to_the_position_counts)
{
    sd_chain *c = tu_chain(3, 6, 4);
    cr_assert(c);
    static const char *const names[] = {"token", "block"};
    for (int v = 0; v < 2; v++) {
        const sd_verifier_type *vt = S_vt(names[v]);
        sd_params par = S_par(vt, 2);
        sd_sim_opts o = {.seed = 5, .trials = 300, .threads = 1, .want_tokens = 6, .want_positions = 1,
                         .coupled = 1};
        sd_sim_result r;
        sd_error err;
        cr_assert_eq(sd_sim_run(vt, c, &par, &o, &r, &err), SD_OK, "%s", err.msg);
        cr_expect_str_eq(r.kernel, SD_PAIRED_KERNEL_NAME);
        double pos[6 * 3] = {0};
        for (uint64_t i = 0; i < r.trials; i++)
            for (size_t n = 1; n <= 6; n++) {
                uint32_t x = r.tokens[i * 6 + n - 1];
                cr_assert_lt(x, 3u, "%s trial %llu x_%zu", names[v], (unsigned long long)i, n);
                pos[(n - 1) * 3 + x] += 1.0;
            }
        for (size_t k = 0; k < 6 * 3; k++)
            cr_expect_eq(pos[k], r.pos_counts[k], "%s position cell %zu", names[v], k);
        sd_sim_result_free(&r);
    }
    sd_chain_free(c);
}

/* --- the CLI -------------------------------------------------------------------- */

static json_t *S_json(const char *args)
{
    char *out;
    cr_assert_eq(tu_run(args, &out, NULL), 0, "%s", args);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(json_is_array(j), "%s", out);
    free(out);
    return j;
}

static double S_num(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    return json_real_value(b ? json_object_get(x, b) : x);
}

/* The printed differences against the exact ones, and the ratio the
 * issue asks for: the default chain (V 7, T 50, model-seed 10), token vs
 * block at full lookahead, 20000 trials, seed 1 (measured 3.61x and 3.54x
 * for rejections and target calls, 3.52x and 3.51x Rao-Blackwellised;
 * docs/findings.md). */
Test(paired, cli_differences_match_exact_and_the_gain_on_the_default_chain)
{
    static const char *const q[] = {"rejections", "target_calls", "rejections_rb", "target_calls_rb"};
    json_t *j = S_json("run --algo token,block --gamma 4 --paired --trials 20000 --json");
    json_t *a = json_array_get(j, 0), *b = json_array_get(j, 1), *pd = json_object_get(b, "paired");
    cr_assert_str_eq(json_string_value(json_object_get(pd, "coupling")), "output-first");
    for (int i = 0; i < 4; i++) {
        const char *ek = i % 2 ? "exact_target_calls" : "exact_rejections";
        double want = S_num(b, ek, NULL) - S_num(a, ek, NULL);
        double d = S_num(pd, q[i], "difference"), se = S_num(pd, q[i], "stderr");
        cr_expect(fabs(d - want) < 4.0 * se, "%s: %.6f exact %.6f se %.2e", q[i], d, want, se);
        cr_expect(fabs(S_num(pd, q[i], "stderr_ratio") - S_num(pd, q[i], "unpaired_stderr") / se) < 1e-12);
    }
    json_decref(j);

    j = S_json("run --algo token,block --paired --trials 20000 --json");
    pd = json_object_get(json_array_get(j, 1), "paired");
    cr_expect(S_num(pd, "rejections_rb", "stderr_ratio") >= 3.0);
    cr_expect(S_num(pd, "target_calls_rb", "stderr_ratio") >= 3.0);
    cr_expect(S_num(pd, "rejections", "stderr_ratio") >= 3.0);
    cr_expect(S_num(pd, "target_calls", "stderr_ratio") >= 3.0);
    json_decref(j);

    /* a verifier without the path pairs by the common seed only */
    j = S_json("run --algo token,batch --gamma 2 --paired --trials 500 --json");
    pd = json_object_get(json_array_get(j, 1), "paired");
    cr_expect_str_eq(json_string_value(json_object_get(pd, "coupling")), "common-seed");
    cr_expect(json_is_null(json_object_get(pd, "target_calls_rb")));
    json_decref(j);
}

Test(paired, cli_table_and_csv_print_the_ratio)
{
    char *out;
    cr_assert_eq(tu_run("run --algo token,block --paired --trials 1000", &out, NULL), 0);
    cr_expect(tu_contains(out, "output-first"), "%s", out);
    cr_expect(tu_contains(out, "rejections (RB)"), "%s", out);
    cr_expect(tu_contains(out, "x\n"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --algo token,block --paired --trials 1000 --csv", &out, NULL), 0);
    cr_expect(tu_contains(out, ",paired_coupling,diff_rejections_se_ratio,diff_target_calls_se_ratio,"), "%s",
              out);
    cr_expect(tu_contains(out, ",output-first,"), "%s", out);
    free(out);
}
