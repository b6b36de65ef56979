/* test_draft2_dp.c — the finite-γ token DP with a bigram drafter from
 * sparse sums (src/sd_draft2_dp.h) against the dense DP over the same rows
 * stored as a chain (src/sd_exact.h, sd_exact_token_dp: O(T V² γ), no
 * sorting, no backoff algebra), and against token verification's kernel
 * with the bigram drafter (sims/kernels/kernel_backoff.c); the kernels of
 * rrs, spectr and tree-rrs with the bigram drafter against the same
 * verifier on the stored rows (exact, or its step where exact enumeration
 * is out of reach: z of the difference of two independent means).
 *
 * Models: the hand-written pairs of tu_lm.h (dense rows straight from the
 * numbers), and generated ARPA pairs over 40 words with random bigrams,
 * backoff weights and a draft that lacks some target words and has words
 * of its own (dense rows from the point lookups sd_backoff_q and
 * sd_backoff_draft2_p, which the realv tests check against the numbers).
 * Exact against exact: 1e-12 (the same sums in another order).
 * Monte-Carlo against exact: 4 standard errors, fixed seeds (a false alarm
 * of 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_arpa.h"
#include "../src/sd_arpa_draft2.h"
#include "../src/sd_backoff.h"
#include "../src/sd_chain.h"
#include "../src/sd_draft2_dp.h"
#include "../src/sd_exact.h"
#include "../src/sd_model.h"
#include "../src/sd_rng.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_sim.h"
#include "test_util.h"
#include "tu_lm.h"

typedef struct {
    sd_arpa *ta, *da;
    sd_backoff *m;
    sd_chain *c;
} S_fix;

/* Dense chain of the sparse model's rows (point lookups), x_0 = its start. */
static void S_dense(S_fix *f, size_t T)
{
    sd_error err;
    size_t V = f->m->V;
    f->c = sd_chain_alloc(V, T, 1, 1, &err);
    cr_assert_not_null(f->c, "%s", err.msg);
    f->c->init[f->m->start] = 1.0;
    for (size_t a = 0; a < V; a++)
        for (size_t x = 0; x < V; x++) {
            f->c->draft[a * V + x] = sd_backoff_draft2_p(f->m, a, x);
            f->c->target[a * V + x] = sd_backoff_q(f->m, a, x);
        }
    cr_assert_eq(sd_chain_validate(f->c, "dense", &err), SD_OK, "%s", err.msg);
}

static void S_load(S_fix *f, const char *tt, const char *dt, size_t T)
{
    memset(f, 0, sizeof *f);
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(tt, "target.arpa", 0, &f->ta, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_load_string(dt, "draft.arpa", 0, &f->da, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_backoff_from_arpa(f->ta, 2, f->da, T, 0, &f->m, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_draft2_attach(f->m, f->ta, f->da, 0, &err), SD_OK, "%s", err.msg);
}

/* which = 0: tu_lm_draft; 1: tu_lm_draft_own; rows checked against the numbers. */
static void S_open_tu(S_fix *f, int which, size_t T)
{
    char *tt = tu_lm_arpa_text(&tu_lm_target), *dt = which == 0 ? tu_lm_arpa_text(&tu_lm_draft) : NULL;
    S_load(f, tt, dt ? dt : tu_lm_draft_own, T);
    free(tt), free(dt);
    S_dense(f, T);
    double p[5][5], q[5][5];
    tu_lm_dense_rows(&tu_lm_target, q);
    if (which == 0)
        tu_lm_dense_rows(&tu_lm_draft, p);
    else
        tu_lm_dense_draft_own(p);
    for (int a = 0; a < 5; a++)
        for (int x = 0; x < 5; x++) {
            cr_assert_float_eq(f->c->draft[a * 5 + x], p[a][x], 1e-14, "p(%d|%d)", x, a);
            cr_assert_float_eq(f->c->target[a * 5 + x], q[a][x], 1e-14, "q(%d|%d)", x, a);
        }
}

/* A generated ARPA bigram over words w0..w{n-1} plus </s>, <s>: random
 * unigrams and backoff weights, each context with a random set of bigrams
 * (some contexts none, one context most of the vocabulary).  `shift` drops
 * the first `shift` words and adds as many of its own (x0, x1, ...). */
static char *S_gen_arpa(uint64_t seed, size_t n, size_t shift)
{
    sd_stream r;
    sd_stream_init(&r, seed, 0);
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    char (*w)[16] = malloc((n + 2) * sizeof *w);
    snprintf(w[0], 16, "</s>");
    snprintf(w[1], 16, "<s>");
    for (size_t i = 0; i < n; i++)
        snprintf(w[i + 2], 16, i < shift ? "x%zu" : "w%zu", i);
    size_t V = n + 2, nb = 0;
    char *bi = malloc(cap), *b = bi;
    for (size_t a = 0; a < V; a++) {
        if (a == 0)
            continue; /* </s> has no bigrams */
        double frac = a == 2 ? 0.9 : a % 5 == 3 ? 0.0 : 0.2 * sd_stream_uniform(&r);
        for (size_t x = 0; x < V; x++)
            if (x != 1 && sd_stream_uniform(&r) < frac) {
                b += sprintf(b, "%.4f %s %s\n", -0.05 - 2.0 * sd_stream_uniform(&r), w[a], w[x]);
                nb++;
            }
    }
    len += (size_t)sprintf(s + len, "\n\\data\\\nngram 1=%zu\nngram 2=%zu\n\n\\1-grams:\n", V, nb);
    for (size_t x = 0; x < V; x++)
        len += (size_t)sprintf(s + len, "%.4f\t%s\t%.4f\n", x == 1 ? -99.0 : -0.3 - 2.0 * sd_stream_uniform(&r), w[x],
                               -0.6 + 0.8 * sd_stream_uniform(&r));
    len += (size_t)sprintf(s + len, "\n\\2-grams:\n%s\n\\end\\\n", bi);
    free(bi), free(w);
    return s;
}

static void S_open_gen(S_fix *f, uint64_t seed, size_t T)
{
    char *tt = S_gen_arpa(seed, 38, 0), *dt = S_gen_arpa(seed + 100, 38, 3);
    S_load(f, tt, dt, T);
    free(tt), free(dt);
    S_dense(f, T);
}

static void S_close(S_fix *f)
{
    sd_backoff_free(f->m);
    sd_chain_free(f->c);
    sd_arpa_free(f->ta), sd_arpa_free(f->da);
}

static void S_compare(S_fix *f, const char *what)
{
    sd_error err;
    size_t V = f->m->V;
    double *tv = malloc(V * sizeof *tv), *tvs = malloc(V * sizeof *tvs);
    cr_assert_eq(sd_draft2dp_tv(f->m, tv, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_backoff_draft2_tv(f->m, tvs, &err), SD_OK, "%s", err.msg);
    for (size_t a = 0; a < V; a++) {
        double d = 0.0;
        for (size_t x = 0; x < V; x++)
            d += fmax(0.0, f->c->target[a * V + x] - f->c->draft[a * V + x]);
        cr_assert_float_eq(tv[a], d, 1e-13, "%s: TV at context %zu: %.17g vs dense %.17g", what, a, tv[a], d);
        cr_assert_float_eq(tvs[a], d, 1e-13, "%s: sd_backoff_draft2_tv at %zu", what, a);
    }
    free(tv), free(tvs);
    size_t gammas[] = {1, 2, 3, 5, 0};
    for (size_t i = 0; i < sizeof gammas / sizeof *gammas; i++) {
        size_t G = gammas[i];
        double rs, cs, rd, cd;
        cr_assert_eq(sd_draft2dp_token(f->m, G, &rs, &cs, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_exact_token_dp(f->c, G, &rd, &cd, &err), SD_OK, "%s", err.msg);
        cr_log_info("%s gamma %zu: V %zu, %zu bigrams, rejections %.12f, calls %.12f", what, G, V, f->m->nnz, rs, cs);
        cr_assert_float_eq(rs, rd, 1e-12, "%s gamma %zu: rejections %.17g vs dense %.17g", what, G, rs, rd);
        cr_assert_float_eq(cs, cd, 1e-12, "%s gamma %zu: calls %.17g vs dense %.17g", what, G, cs, cd);
        /* the token verifier's exact values go through sd_backoff_exact_token */
        double rb, cb;
        cr_assert_eq(sd_backoff_exact_token(f->m, G, &rb, &cb, &err), SD_OK, "%s", err.msg);
        cr_assert_float_eq(rb, rd, 1e-12, "%s gamma %zu: sd_backoff_exact_token", what, G);
        cr_assert_float_eq(cb, cd, 1e-12, "%s gamma %zu: sd_backoff_exact_token calls", what, G);
    }
}

Test(draft2_dp, equals_the_dense_dp_on_the_hand_written_models)
{
    for (int which = 0; which < 2; which++)
        for (size_t T = 6; T <= 9; T += 3) {
            S_fix f;
            S_open_tu(&f, which, T);
            char what[64];
            snprintf(what, sizeof what, "tu draft %d T %zu", which, T);
            S_compare(&f, what);
            S_close(&f);
        }
}

Test(draft2_dp, equals_the_dense_dp_on_generated_models, .timeout = 60)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        S_fix f;
        S_open_gen(&f, seed, 12);
        char what[64];
        snprintf(what, sizeof what, "generated seed %llu", (unsigned long long)seed);
        S_compare(&f, what);
        S_close(&f);
    }
}

/* Token verification's kernel with the bigram drafter against the DP. */
Test(draft2_dp, token_kernel_agrees_with_the_dp, .timeout = 120)
{
    const sd_verifier_type *vt = sd_verifier_find("token");
    for (int k = 0; k < 3; k++) {
        S_fix f;
        if (k < 2)
            S_open_tu(&f, k, 9);
        else
            S_open_gen(&f, 7, 12);
        for (size_t G = 2; G <= 3; G++) {
            double rej, calls;
            sd_error err;
            cr_assert_eq(sd_draft2dp_token(f.m, G, &rej, &calls, &err), SD_OK, "%s", err.msg);
            sd_params par;
            sd_params_defaults(&par, vt);
            par.gamma = G;
            sd_model sparse = sd_model_of_backoff(f.m, f.m->V, f.m->T);
            sd_sim_opts so = {.seed = 20 + (uint64_t)k, .trials = 40000, .threads = 2};
            sd_sim_result res;
            memset(&res, 0, sizeof res);
            sd_sim_job job = {vt, &sparse, &par};
            cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
            cr_assert(strstr(res.kernel, "token-backoff"), "kernel %s", res.kernel);
            double zr = (res.rejections.mean - rej) / sd_welford_stderr(&res.rejections);
            double zc = (res.target_calls.mean - calls) / sd_welford_stderr(&res.target_calls);
            cr_log_info("model %d gamma %zu: rejections %.5f vs %.5f (z %.2f), calls %.5f vs %.5f (z %.2f)", k, G,
                        res.rejections.mean, rej, zr, res.target_calls.mean, calls, zc);
            cr_expect_lt(fabs(zr), 4.0, "model %d gamma %zu: rejections z = %.2f", k, G, zr);
            cr_expect_lt(fabs(zc), 4.0, "model %d gamma %zu: calls z = %.2f", k, G, zc);
            sd_sim_result_free(&res);
        }
        S_close(&f);
    }
}

/* Refused before allocating under a small budget, naming the sizes. */
Test(draft2_dp, refused_over_the_budget)
{
    S_fix f;
    S_open_tu(&f, 0, 9);
    f.m->max_bytes = sd_draft2dp_bytes(f.m, 3) - 1;
    double r;
    sd_error err;
    cr_assert_eq(sd_draft2dp_token(f.m, 3, &r, NULL, &err), SD_ETOOBIG);
    cr_assert(strstr(err.msg, "gamma = 3") && strstr(err.msg, "memory budget"), "%s", err.msg);
    f.m->max_bytes = 0;
    S_close(&f);
}

/* --- multi-draft kernels with the bigram drafter --------------------------
 * rrs, spectr (k-Seq) and tree-rrs on the sparse rows (kernel_backoff.c,
 * the multi-draft walks) against the same verifier's exact values on the
 * stored rows (its iteration law or tree enumeration over the dense chain):
 * within 4 se, fixed seeds. */
static double S_md_z(const char *algo, const char *opt, const char *val, int model, size_t T, uint64_t seed)
{
    S_fix f;
    if (model < 2)
        S_open_tu(&f, model, T);
    else
        S_open_gen(&f, 7, T);
    const sd_verifier_type *vt = sd_verifier_find(algo);
    cr_assert_not_null(vt, "%s", algo);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_error err;
    /* opt "k gamma" with val "2 3": two parameters; else one */
    char name[32], value[32];
    snprintf(name, sizeof name, "%s", opt);
    snprintf(value, sizeof value, "%s", val);
    char *sp = strchr(name, ' '), *vs = strchr(value, ' ');
    if (sp && vs) {
        *sp = *vs = '\0';
        cr_assert_eq(sd_params_parse(&par, vt, sp + 1, vs + 1, &err), SD_OK, "%s", err.msg);
    }
    cr_assert_eq(sd_params_parse(&par, vt, name, value, &err), SD_OK, "%s", err.msg);
    sd_model sparse = sd_model_of_backoff(f.m, f.m->V, f.m->T), stored = sd_model_of_chain(f.c);
    sd_exact_values ex;
    sd_sim_opts so = {.seed = seed, .trials = 40000, .threads = 2};
    sd_sim_result res, ref;
    memset(&res, 0, sizeof res);
    memset(&ref, 0, sizeof ref);
    double ser = 0.0, sec = 0.0; /* the reference's standard errors (0: exact) */
    int rc = sd_verifier_exact(vt, &stored, &par, &ex, &err);
    if (rc == SD_ETOOBIG) { /* beyond exact enumeration: the verifier's own step on the stored rows */
        sd_sim_job rj = {vt, &stored, &par};
        sd_sim_opts ro = so;
        ro.seed = seed + 1000;
        cr_assert_eq(sd_sim_run_job(&rj, &ro, &ref, &err), SD_OK, "%s", err.msg);
        cr_assert(!strstr(ref.kernel, "backoff"), "%s: reference kernel %s", algo, ref.kernel);
        ex.rejections = ref.rejections.mean, ex.target_calls = ref.target_calls.mean;
        ser = sd_welford_stderr(&ref.rejections), sec = sd_welford_stderr(&ref.target_calls);
        sd_sim_result_free(&ref);
    } else
        cr_assert_eq(rc, SD_OK, "%s %s: %s", algo, val, err.msg);
    sd_sim_job job = {vt, &sparse, &par};
    cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
    cr_assert(strstr(res.kernel, "backoff"), "%s: kernel %s", algo, res.kernel);
    double sr = sd_welford_stderr(&res.rejections), sc = sd_welford_stderr(&res.target_calls);
    double zr = (res.rejections.mean - ex.rejections) / sqrt(sr * sr + ser * ser);
    double zc = (res.target_calls.mean - ex.target_calls) / sqrt(sc * sc + sec * sec);
    cr_log_info("%s %s model %d T %zu: rejections %.5f vs %s %.5f (z %.2f), calls %.5f vs %.5f (z %.2f) [%s]",
                algo, val, model, T, res.rejections.mean, ser > 0.0 ? "the stored rows' step" : "exact",
                ex.rejections, zr, res.target_calls.mean, ex.target_calls, zc, res.kernel);
    sd_sim_result_free(&res);
    S_close(&f);
    return fmax(fabs(zr), fabs(zc));
}

Test(draft2_dp, rrs_kernel_agrees_with_the_stored_chain, .timeout = 120)
{
    for (int model = 0; model < 3; model++) {
        double z2 = S_md_z("rrs", "k gamma", "2 2", model, 8, 31), z3 = S_md_z("rrs", "k gamma", "3 3", model, 8, 32);
        cr_expect_lt(z2, 4.0, "rrs k 2 gamma 2, model %d: |z| = %.2f", model, z2);
        cr_expect_lt(z3, 4.0, "rrs k 3 gamma 3, model %d: |z| = %.2f", model, z3);
    }
}

Test(draft2_dp, spectr_kernel_agrees_with_the_stored_chain, .timeout = 120)
{
    for (int model = 0; model < 3; model++) {
        double z2 = S_md_z("spectr", "k gamma", "2 2", model, 8, 41);
        double z3 = S_md_z("spectr", "k gamma", "3 3", model, 8, 42);
        cr_expect_lt(z2, 4.0, "spectr k 2 gamma 2, model %d: |z| = %.2f", model, z2);
        cr_expect_lt(z3, 4.0, "spectr k 3 gamma 3, model %d: |z| = %.2f", model, z3);
    }
}

Test(draft2_dp, tree_rrs_kernel_agrees_with_the_stored_chain, .timeout = 120)
{
    for (int model = 0; model < 3; model++) {
        double z = S_md_z("tree-rrs", "tree", model < 2 ? "2,1" : "2,2,1", model, 7, 51);
        cr_expect_lt(z, 4.0, "tree-rrs, model %d: |z| = %.2f", model, z);
    }
}

/* --- the fortunes word bigram (make lm) with a pruned bigram drafter -------
 * The draft is the same file with every other bigram line dropped (a pruned
 * model: those words back off after their context).  On the real vocabulary
 * (V = 32 151): the merge's TV equals the per-context searches of
 * sd_backoff_draft2_tv (1e-12), the DP at the horizon equals Theorem 1 from
 * those TVs (1e-10: sums over 50 positions of 32 151 terms), and at γ = 4
 * token's kernel, and rrs and spectr with one draft (token verification in
 * law: one round of recursive rejection sampling; k-Seq's ρ*(1) = 1), agree
 * with the DP within 4 se (fixed seeds). */
static char *S_pruned(const char *text)
{
    size_t n = strlen(text), len = 0, nb = 0, kept = 0;
    char *out = malloc(n + 64);
    cr_assert_not_null(out);
    int in2 = 0;
    for (const char *l = text; *l;) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) + 1 : strlen(l);
        int drop = 0;
        if (!strncmp(l, "\\2-grams:", 9))
            in2 = 1;
        else if (!strncmp(l, "\\end\\", 5))
            in2 = 0;
        else if (in2 && ll > 1)
            drop = nb++ % 2 == 1, kept += !drop;
        if (!drop) {
            memcpy(out + len, l, ll);
            len += ll;
        }
        l += ll;
    }
    out[len] = '\0';
    /* the header's bigram count */
    char *h = strstr(out, "ngram  2=");
    cr_assert_not_null(h, "fortunes-bigram.arpa: no 'ngram  2=' line");
    char *eol = strchr(h, '\n');
    char num[32];
    int w = snprintf(num, sizeof num, "ngram 2=%zu", kept);
    cr_assert_leq((size_t)w, (size_t)(eol - h));
    memset(h, ' ', (size_t)(eol - h));
    memcpy(h, num, (size_t)w);
    return out;
}

Test(draft2_dp, fortunes_bigram_with_a_pruned_drafter, .timeout = 300)
{
    const char *path = "build/lm/fortunes-bigram.arpa";
    char *tt = tu_slurp(path);
    cr_assert_not_null(tt, "%s: missing (make lm)", path);
    char *dt = S_pruned(tt);
    S_fix f;
    S_load(&f, tt, dt, 20);
    free(tt), free(dt);
    size_t V = f.m->V;
    sd_error err;
    double *tv = malloc(V * sizeof *tv), *tvs = malloc(V * sizeof *tvs);
    cr_assert_eq(sd_draft2dp_tv(f.m, tv, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_backoff_draft2_tv(f.m, tvs, &err), SD_OK, "%s", err.msg);
    for (size_t a = 0; a < V; a++)
        cr_assert_float_eq(tv[a], tvs[a], 1e-12, "TV at '%s': %.17g vs %.17g", f.m->words[a], tv[a], tvs[a]);
    double r0, c0, rt, ct;
    cr_assert_eq(sd_draft2dp_token(f.m, 0, &r0, &c0, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_backoff_theorem1_tv(f.m, tvs, &rt, &ct, NULL, &err), SD_OK, "%s", err.msg);
    cr_assert_float_eq(r0, rt, 1e-10, "horizon: %.15g vs Theorem 1 %.15g", r0, rt);
    cr_assert_float_eq(c0, ct, 1e-10);
    free(tv), free(tvs);
    double rej, calls;
    cr_assert_eq(sd_draft2dp_token(f.m, 4, &rej, &calls, &err), SD_OK, "%s", err.msg);
    cr_log_info("fortunes, pruned bigram drafter, T 20: horizon %.6f rejections; gamma 4: %.6f rejections, %.6f calls",
                r0, rej, calls);
    cr_assert(rej < r0 && calls > c0, "a cut draft rejects less and calls more than the horizon's");
    /* the power of the comparison: the same file's unigram as the draft (what a walk that ignored the
     * context would draw from) is far from the bigram drafter's value */
    double ru;
    sd_backoff *d2 = f.m->draft2;
    f.m->draft2 = NULL;
    cr_assert_eq(sd_backoff_exact_token(f.m, 4, &ru, NULL, &err), SD_OK, "%s", err.msg);
    f.m->draft2 = d2;
    cr_log_info("the unigram drafter at gamma 4: %.6f rejections", ru);
    const char *algo[3] = {"token", "rrs", "spectr"};
    sd_model sparse = sd_model_of_backoff(f.m, f.m->V, f.m->T);
    for (int i = 0; i < 3; i++) {
        const sd_verifier_type *vt = sd_verifier_find(algo[i]);
        sd_params par;
        sd_params_defaults(&par, vt);
        if (i)
            cr_assert_eq(sd_params_parse(&par, vt, "k", "1", &err), SD_OK, "%s", err.msg);
        par.gamma = 4;
        sd_sim_opts so = {.seed = 60 + (uint64_t)i, .trials = 20000, .threads = 2};
        sd_sim_result res;
        memset(&res, 0, sizeof res);
        sd_sim_job job = {vt, &sparse, &par};
        cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
        cr_assert(strstr(res.kernel, "backoff"), "%s: kernel %s", algo[i], res.kernel);
        double zr = (res.rejections.mean - rej) / sd_welford_stderr(&res.rejections);
        double zc = (res.target_calls.mean - calls) / sd_welford_stderr(&res.target_calls);
        cr_log_info("%s (k 1), gamma 4: rejections %.5f (z %.2f), calls %.5f (z %.2f)", algo[i], res.rejections.mean,
                    zr, res.target_calls.mean, zc);
        cr_expect_lt(fabs(zr), 4.0, "%s: rejections z = %.2f", algo[i], zr);
        cr_expect_lt(fabs(zc), 4.0, "%s: calls z = %.2f", algo[i], zc);
        double zu = (res.rejections.mean - ru) / sd_welford_stderr(&res.rejections);
        cr_expect_gt(fabs(zu), 4.0, "%s: the unigram drafter's value %.5f is not flagged (z = %.2f)", algo[i], ru, zu);
        sd_sim_result_free(&res);
    }
    sd_backoff_free(f.m);
    sd_arpa_free(f.ta), sd_arpa_free(f.da);
}
