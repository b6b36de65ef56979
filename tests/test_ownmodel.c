/* test_ownmodel.c — traces written from ARPA language models (gen --arpa
 * FILE --trace N, src/sd_ngram.h, src/sd_trace_write.h).
 *
 * Suite ownmodel: the rows of a hand-written trigram model equal a
 * direct computation from its numbers (Katz backoff as ARPA states it), and
 * at order 2 they are sd_backoff's rows bit for bit up to rounding.
 * Suite ownmodel_cli: `simdec trace` on traces written from the bigram agrees
 * with `eval generation` on the same rows stored within 4 standard errors
 * (fixed seeds; 4 se is a two-sided 6e-5 chance per comparison for a
 * correct estimate, so a failure is a disagreement, not noise); --no-rows
 * writes the same tokens and ratios; the trigram's traces carry its rows. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/sd_arpa.h"
#include "../src/sd_backoff.h"
#include "../src/sd_chain.h"
#include "../src/sd_ngram.h"
#include "../src/sd_model.h"
#include "../src/sd_npy.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/exact/sd_exact_gen.h"
#include "test_util.h"
#include "tu_lm.h"
#include "tu_trace.h"

/* Tokens: 0 </s>, 1 <s>, 2 a, 3 b, 4 c; rows do not sum to 1. */
static const char S_lm[] = "\\data\\\n"
                           "ngram 1=5\n"
                           "ngram 2=7\n"
                           "ngram 3=4\n"
                           "\n"
                           TU_LM_UNIGRAMS
                           "\n"
                           "\\2-grams:\n"
                           "-0.3010 <s> a -0.2\n"
                           "-0.6021 <s> b\n"
                           "-0.2218 a b 0.1\n"
                           "-0.4 a </s>\n"
                           "-0.1 b c -0.3\n"
                           "-0.5 c a\n"
                           "-1.5 c <s>\n"
                           "\n"
                           "\\3-grams:\n"
                           "-0.1 <s> a b\n"
                           "-0.7 <s> a c\n"
                           "-0.05 a b c\n"
                           "-0.9 b c </s>\n"
                           "\n"
                           "\\end\\\n";

static const double S_uni[5] = {-0.6990, -INFINITY, -0.5229, -0.6990, -0.5229};
static const double S_ubo[5] = {0.0, -0.30103, -0.1, -0.2, 0.05};
static const struct { int a, x; double lp, bo; } S_bi[] = {
    {1, 2, -0.3010, -0.2}, {1, 3, -0.6021, 0}, {2, 3, -0.2218, 0.1}, {2, 0, -0.4, 0},
    {3, 4, -0.1, -0.3},    {4, 2, -0.5, 0},    {4, 1, -1.5, 0}};
static const struct { int a, b, x; double lp; } S_tri[] = {{1, 2, 3, -0.1}, {1, 2, 4, -0.7}, {2, 3, 4, -0.05}, {3, 4, 0, -0.9}};

/* raw P2(x|y) straight from the numbers */
static double S_p2(int y, int x)
{
    for (size_t i = 0; i < sizeof S_bi / sizeof *S_bi; i++)
        if (S_bi[i].a == y && S_bi[i].x == x)
            return pow(10.0, S_bi[i].lp);
    return pow(10.0, S_ubo[y] + S_uni[x]);
}

/* the normalised row after (x, y) (x < 0: after y alone; y < 0: unigram) */
static void S_dense(int x, int y, double row[5])
{
    double z = 0.0;
    for (int w = 0; w < 5; w++) {
        double v;
        if (y < 0)
            v = pow(10.0, S_uni[w]);
        else if (x < 0)
            v = S_p2(y, w);
        else {
            double bo = 0.0;
            v = NAN;
            for (size_t i = 0; i < sizeof S_bi / sizeof *S_bi; i++)
                if (S_bi[i].a == x && S_bi[i].x == y)
                    bo = S_bi[i].bo;
            for (size_t i = 0; i < sizeof S_tri / sizeof *S_tri; i++)
                if (S_tri[i].a == x && S_tri[i].b == y && S_tri[i].x == w)
                    v = pow(10.0, S_tri[i].lp);
            if (isnan(v))
                v = pow(10.0, bo) * S_p2(y, w);
        }
        z += row[w] = w == 1 ? 0.0 : v;
    }
    for (int w = 0; w < 5; w++)
        row[w] /= z;
}

static sd_arpa *S_load(void)
{
    sd_arpa *a = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(S_lm, "tri.arpa", 0, &a, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(a->n3, 4);
    return a;
}

/* The inverse CDF of a sparse backoff row (what gen --no-rows draws by)
 * is the dense row's: on a grid of uniforms and just beside every CDF
 * boundary, for each context of the bigram and of the unigram, the token
 * is the smallest y with Σ_{x<=y} q_a(x) > v of the dense row (up to 1e-12
 * from a boundary, where either neighbour may come out), and never a token
 * of probability 0 (<s>, the dropped bigram "c <s>"). */
Test(ownmodel, sparse_inverse_cdf_is_the_dense_one)
{
    sd_arpa *a = S_load();
    sd_error err;
    for (size_t order = 1; order <= 2; order++) {
        sd_backoff *m = NULL;
        cr_assert_eq(sd_backoff_from_arpa(a, order, a, 6, 0, &m, &err), SD_OK, "%s", err.msg);
        size_t V = m->V, checked = 0;
        double ucum[6], q[5], cum[6];
        cr_assert_eq(V, 5);
        sd_backoff_ucum(m, ucum);
        for (size_t c = 0; c < V; c++) {
            sd_backoff_rows(m, c, NULL, q);
            cum[0] = 0.0;
            for (size_t x = 0; x < V; x++)
                cum[x + 1] = cum[x] + q[x];
            double vs[2000 + 12];
            size_t nv = 0;
            for (size_t k = 0; k < 2000; k++)
                vs[nv++] = ((double)k + 0.5) / 2000.0;
            for (size_t x = 1; x < V; x++)
                if (cum[x] < 1.0) {
                    vs[nv++] = cum[x] * (1.0 - 1e-13);
                    vs[nv++] = cum[x] * (1.0 + 1e-13);
                }
            for (size_t k = 0; k < nv; k++) {
                double v = vs[k];
                size_t y = sd_backoff_q_inverse(m, ucum, c, v), want = V;
                for (size_t x = 0; x < V && want == V; x++)
                    if (q[x] > 0.0 && cum[x + 1] > v)
                        want = x;
                cr_assert(q[y] > 0.0, "order %zu, context %zu, v %.17g: token %zu of probability 0", order, c, v, y);
                double gap = 1.0;
                for (size_t x = 1; x < V; x++)
                    gap = fabs(cum[x] - v) < gap ? fabs(cum[x] - v) : gap;
                if (gap > 1e-12)
                    cr_assert_eq(y, want, "order %zu, context %zu, v %.17g: sparse %zu, dense %zu", order, c, v, y, want);
                checked++;
            }
        }
        cr_assert(checked > 10000);
        sd_backoff_free(m);
    }
    sd_arpa_free(a);
}

Test(ownmodel, ngram_rows_equal_the_direct_computation)
{
    sd_arpa *a = S_load();
    sd_error err;
    for (size_t order = 1; order <= 3; order++) {
        sd_ngram *g = NULL;
        cr_assert_eq(sd_ngram_open(a, order, NULL, &g, &err), SD_OK, "%s", err.msg);
        for (int x = 0; x < 5; x++)
            for (int y = 0; y < 5; y++) {
                int64_t h[2] = {x, y};
                double row[5], want[5];
                cr_assert_eq(sd_ngram_row(g, h, 2, row, NULL, &err), SD_OK, "%s", err.msg);
                S_dense(order == 3 ? x : -1, order >= 2 ? y : -1, want);
                for (int w = 0; w < 5; w++)
                    cr_assert(fabs(row[w] - want[w]) < 1e-14, "order %zu after (%d %d): row[%d] = %.17g, want %.17g",
                              order, x, y, w, row[w], want[w]);
                /* one word of history: the bigram's row */
                cr_assert_eq(sd_ngram_row(g, h + 1, 1, row, NULL, &err), SD_OK, "%s", err.msg);
                S_dense(-1, order >= 2 ? y : -1, want);
                for (int w = 0; w < 5; w++)
                    cr_assert(fabs(row[w] - want[w]) < 1e-14, "order %zu after (%d): row[%d]", order, y, w);
            }
        sd_ngram_free(g);
    }
    sd_arpa_free(a);
}

Test(ownmodel, ngram_bigram_rows_are_the_backoff_rows)
{
    sd_arpa *a = S_load();
    sd_error err;
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(a, 2, a, 4, 0, &m, &err), SD_OK, "%s", err.msg);
    sd_ngram *g = NULL, *d = NULL;
    cr_assert_eq(sd_ngram_open(a, 2, NULL, &g, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_ngram_open(a, 1, NULL, &d, &err), SD_OK, "%s", err.msg);
    for (int64_t y = 0; y < 5; y++) {
        double p[5], q[5], pn[5], qn[5];
        sd_backoff_rows(m, (size_t)y, p, q);
        cr_assert_eq(sd_ngram_row(g, &y, 1, qn, NULL, &err), SD_OK);
        cr_assert_eq(sd_ngram_row(d, &y, 1, pn, NULL, &err), SD_OK);
        for (int w = 0; w < 5; w++)
            cr_assert(fabs(p[w] - pn[w]) < 1e-15 && fabs(q[w] - qn[w]) < 1e-15, "after %d: token %d", (int)y, w);
    }
    sd_ngram_free(g);
    sd_ngram_free(d);
    sd_backoff_free(m);
    sd_arpa_free(a);
}

Test(ownmodel, trigram_prefix_and_duplicates_are_refused)
{
    sd_arpa *a = NULL;
    sd_error err;
    char *bad = strdup(S_lm);
    char *at = strstr(bad, "-0.9 b c </s>");
    memcpy(at, "-0.9 c b </s>", 13); /* "c b" is not a bigram */
    cr_assert_eq(sd_arpa_load_string(bad, "bad.arpa", 0, &a, &err), SD_EDATA);
    cr_assert(strstr(err.msg, "bad.arpa:26: the trigram 'c b </s>' has no bigram 'c b'"), "%s", err.msg);
    memcpy(at, "-0.9 a b c   ", 13);
    cr_assert_eq(sd_arpa_load_string(bad, "bad.arpa", 0, &a, &err), SD_EDATA);
    cr_assert(strstr(err.msg, "bad.arpa:26: the trigram 'a b c' is listed twice (first at line 25)"), "%s", err.msg);
    free(bad);
}

/* --- through the command line ------------------------------------------------- */

/* Writes the trigram model S_lm to dir/lm.arpa, its path into path. */
static void S_write_lm(const char *dir, char *path, size_t len)
{
    snprintf(path, len, "%s/lm.arpa", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(S_lm, f);
    fclose(f);
}

static void S_run(const char *cmd)
{
    char *err = NULL;
    int st = tu_run(cmd, NULL, &err);
    cr_assert_eq(st, 0, "%s: %d %s", cmd, st, err);
    free(err);
}

Test(ownmodel_cli, arpa_traces_agree_with_eval_generation, .timeout = 120)
{
    char *dir = tu_fresh_dir("ownmodel", "bi"), *dir2 = tu_fresh_dir("ownmodel", "bi-norows");
    char path[600], cmd[2048];
    S_write_lm(dir, path, sizeof path);
    /* the bigram's rows stored, x_0 = <s>: eval generation's exact values */
    sd_arpa *a = S_load();
    sd_error err;
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(a, 2, a, 6, 0, &m, &err), SD_OK, "%s", err.msg);
    sd_chain *c = sd_chain_alloc(5, 6, 1, 1, &err);
    cr_assert_not_null(c);
    c->init[m->start] = 1.0;
    for (size_t y = 0; y < 5; y++)
        sd_backoff_rows(m, y, c->draft + y * 5, c->target + y * 5);
    snprintf(path, sizeof path, "%s/model.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    cr_assert_eq(sd_chain_write(c, f, &err), SD_OK);
    fclose(f);
    sd_chain_free(c);
    sd_backoff_free(m);
    sd_arpa_free(a);
    snprintf(cmd, sizeof cmd, "gen --arpa %s/lm.arpa --T 6 --trace 3000 --seed 5 -o %s", dir, dir);
    S_run(cmd);
    static const char *const pts[] = {"token --gamma 2", "token --gamma 4", "block --gamma 3", "block --gamma 4"};
    tu_trace_agrees_with_eval(dir, pts, sizeof pts / sizeof *pts);
    /* the exact sparse-row values of --arpa itself (token) */
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --ratios %s/ratios.npy --algo token --gamma 3 --json", dir,
             dir);
    json_t *t = tu_json(cmd);
    snprintf(cmd, sizeof cmd, "eval generation --arpa %s/lm.arpa --T 6 --algo token --gamma 3 --json", dir);
    json_t *e = tu_json(cmd);
    double ex = tu_num(e, "target_calls", NULL), mc = tu_num(t, "target_calls", "mean"),
           se = tu_num(t, "target_calls", "stderr");
    cr_assert(fabs(mc - ex) < 4 * se, "--arpa exact %.5f, trace %.5f +- %.5f", ex, mc, se);
    json_decref(t);
    json_decref(e);
    /* --no-rows draws each token from the sparse row by the inverse CDF at the
     * same uniform: the same tokens (the sums' rounding aside: none here), the
     * ratios p(y)/q(y) of the rows stored with them up to that rounding, and
     * no row files; its pooled estimate agrees with the exact value too */
    snprintf(cmd, sizeof cmd, "gen --arpa %s/lm.arpa --T 6 --trace 3000 --seed 5 --no-rows -o %s", dir, dir2);
    S_run(cmd);
    {
        sd_npy tk, r2, pr, qr;
        char p1[700];
        snprintf(p1, sizeof p1, "%s/ratios.npy", dir2);
        cr_assert_eq(sd_npy_open(&r2, p1, &err), SD_OK, "%s", err.msg);
        snprintf(p1, sizeof p1, "%s/tokens.npy", dir2);
        cr_assert_eq(sd_npy_open(&tk, p1, &err), SD_OK, "%s", err.msg);
        snprintf(p1, sizeof p1, "%s/draft.npy", dir);
        cr_assert_eq(sd_npy_open(&pr, p1, &err), SD_OK, "%s", err.msg);
        snprintf(p1, sizeof p1, "%s/target.npy", dir);
        cr_assert_eq(sd_npy_open(&qr, p1, &err), SD_OK, "%s", err.msg);
        double worst = 0.0;
        for (size_t j = 0; j < 3000 * 6; j++) {
            uint64_t y;
            cr_assert_eq(sd_npy_get_index(&tk, j, &y), 0);
            double want = sd_npy_get(&pr, j * 5 + y) / sd_npy_get(&qr, j * 5 + y), got = sd_npy_get(&r2, j);
            double d = fabs(got - want) / want;
            worst = d > worst ? d : worst;
        }
        cr_assert(worst < 1e-12, "--no-rows ratios differ from p/q of the stored rows by %.3g (relative)", worst);
        sd_npy_close(&tk), sd_npy_close(&r2), sd_npy_close(&pr), sd_npy_close(&qr);
    }
    snprintf(cmd, sizeof cmd, "trace --tokens %s/tokens.npy --ratios %s/ratios.npy --algo token --gamma 3 --json", dir2,
             dir2);
    t = tu_json(cmd);
    mc = tu_num(t, "target_calls", "mean"), se = tu_num(t, "target_calls", "stderr");
    cr_assert(fabs(mc - ex) < 4 * se, "--no-rows: --arpa exact %.5f, trace %.5f +- %.5f", ex, mc, se);
    json_decref(t);
    const char *same[] = {"tokens", "prompts"};
    for (int i = 0; i < 2; i++) {
        char p1[700], p2[700];
        snprintf(p1, sizeof p1, "%s/%s.npy", dir, same[i]);
        snprintf(p2, sizeof p2, "%s/%s.npy", dir2, same[i]);
        char *x = tu_slurp(p1), *y = tu_slurp(p2);
        cr_assert(x && y && *x && strcmp(x, y) == 0 && memcmp(x, y, 128) == 0, "%s differs", same[i]);
        FILE *fx = fopen(p1, "rb"), *fy = fopen(p2, "rb");
        int cx, cy;
        do {
            cx = fgetc(fx);
            cy = fgetc(fy);
        } while (cx == cy && cx != EOF);
        cr_assert_eq(cx, cy, "%s: the bytes differ", same[i]);
        fclose(fx);
        fclose(fy);
        free(x);
        free(y);
    }
    snprintf(path, sizeof path, "%s/draft.npy", dir2);
    cr_assert_eq(access(path, F_OK), -1, "--no-rows wrote draft.npy");
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, dir2);
    cr_assert_eq(system(cmd), 0);
    free(dir);
    free(dir2);
}

/* The trigram's traces: each logged row is the trigram's row at the
 * sequence's last two tokens (after <s> at the first position), the draft
 * a bigram drafter's, and each ratio is p(x)/q(x) of those rows. */
Test(ownmodel_cli, trigram_traces_carry_the_trigram_rows, .timeout = 60)
{
    char *dir = tu_fresh_dir("ownmodel", "tri");
    char path[600], cmd[1024];
    S_write_lm(dir, path, sizeof path);
    snprintf(cmd, sizeof cmd, "gen --arpa %s --order 3 --draft-order 2 --T 5 --trace 40 --seed 2 -o %s", path, dir);
    S_run(cmd);
    sd_npy tok, tq, tp, rat, pr;
    sd_error err;
    const char *names[5] = {"tokens", "target", "draft", "ratios", "prompts"};
    sd_npy *arr[5] = {&tok, &tq, &tp, &rat, &pr};
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
        cr_assert_eq(sd_npy_open(arr[i], path, &err), SD_OK, "%s", err.msg);
    }
    for (size_t i = 0; i < 40; i++) {
        int64_t h[6];
        h[0] = (int64_t)sd_npy_get(&pr, i);
        cr_assert_eq(h[0], 1, "x_0 is <s>");
        for (size_t t = 1; t <= 5; t++) {
            double q[5], p[5];
            S_dense(t >= 2 ? (int)h[t - 2] : -1, (int)h[t - 1], q);
            S_dense(-1, (int)h[t - 1], p);
            size_t at = i * 5 + t - 1;
            for (int w = 0; w < 5; w++) {
                cr_assert(fabs(sd_npy_get(&tq, at * 5 + (size_t)w) - q[w]) < 1e-14, "seq %zu t %zu target[%d]", i, t, w);
                cr_assert(fabs(sd_npy_get(&tp, at * 5 + (size_t)w) - p[w]) < 1e-14, "seq %zu t %zu draft[%d]", i, t, w);
            }
            h[t] = (int64_t)sd_npy_get(&tok, at);
            cr_assert(q[h[t]] > 0.0);
            cr_assert(fabs(sd_npy_get(&rat, at) - p[h[t]] / q[h[t]]) < 1e-12);
        }
    }
    for (int i = 0; i < 5; i++)
        sd_npy_close(arr[i]);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

Test(ownmodel_cli, refusals)
{
    tu_expect("gen --arpa build/lm/en-us-phone.arpa -o /tmp/x", 64, "--arpa applies to gen with --trace N");
    tu_expect("gen --no-rows", 64, "--no-rows applies to --trace N");
    tu_expect("run --arpa build/lm/en-us-phone.arpa --order 3", 64, "a trigram target is not a first-order chain");
    tu_expect("run --arpa build/lm/en-us-phone.arpa --draft-order 3", 64, "--draft-order 3: the exact values");
    tu_expect("gen --arpa build/lm/en-us-phone.arpa --order 4 --trace 2 -o /tmp/x", 64, "--order 4");
}

/* --- the speed-ups of the sparse-row kernels keep the numbers ----------------- */

/* The bucket index into the ρ order counts what the plain search counts:
 * F(s) equals Σ max(0, s u - p) summed directly, at every ρ itself (ties),
 * between them, at 0 and far outside. */
Test(ownmodel, rho_buckets_give_the_direct_sums)
{
    size_t V = 3000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    double sp = 0.0, sq = 0.0;
    unsigned long r = 12345;
    for (size_t x = 0; x < V; x++) {
        r = r * 6364136223846793005ul + 1442695040888963407ul;
        double a = (double)(r >> 11) / 9007199254740992.0;
        r = r * 6364136223846793005ul + 1442695040888963407ul;
        double b = (double)(r >> 11) / 9007199254740992.0;
        p[x] = x % 97 == 0 ? 0.0 : a * a * a; /* zeros: ρ = 0 */
        q[x] = x % 89 == 0 ? 0.0 : b;         /* zeros: not in the ρ order */
        if (x % 7 == 0)
            p[x] = q[x]; /* ties at ρ = 1 */
        sp += p[x];
        sq += q[x];
    }
    for (size_t x = 0; x < V; x++) {
        p[x] /= sp;
        q[x] /= sq;
    }
    sd_backoff *m = NULL;
    sd_error err;
    cr_assert_eq(sd_backoff_iid(p, q, V, 4, 0, &m, &err), SD_OK, "%s", err.msg);
    cr_assert_not_null(m->rbk, "the bucket index is built at V = %zu", V);
    for (size_t k = 0; k < m->nr + 40; k++) {
        double s = k < m->nr ? m->rho[k] * (k % 3 == 0 ? 1.0 : k % 3 == 1 ? 1.0 + 1e-9 : 1.0 - 1e-9)
                             : (k - m->nr) * 0.25 + (k % 2 ? 1e-300 : 1e6);
        double want = 0.0;
        for (size_t x = 0; x < V; x++)
            want += fmax(0.0, s * m->u[x] - m->p[x]);
        double got = sd_backoff_F(m, s);
        cr_assert(fabs(got - want) <= 1e-12 * (1.0 + s), "F(%.17g) = %.17g, direct %.17g", s, got, want);
    }
    sd_backoff_free(m);
    free(p);
    free(q);
}

/* m_a(1) and the left slope m_a'(1-) stored per context bound m_a(s) on
 * [0, 1] from both sides (convexity): the bounds block's kernel settles
 * its tests with.  On the fortunes bigram (make lm), every 7th context. */
Test(ownmodel, convexity_bounds_hold_on_the_fortunes_bigram, .timeout = 60)
{
    const char *lm = "build/lm/fortunes-bigram.arpa";
    if (access(lm, R_OK) != 0)
        cr_skip_test("%s absent (make lm)", lm);
    sd_arpa *a = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load(lm, 0, &a, &err), SD_OK, "%s", err.msg);
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(a, 2, a, 8, 0, &m, &err), SD_OK, "%s", err.msg);
    cr_assert_not_null(m->m1);
    for (size_t c = 0; c < m->V; c += 7) {
        double m1 = m->m1[2 * c], d1 = m->m1[2 * c + 1];
        cr_assert_eq(m1, sd_backoff_mass(m, c, 1.0));
        for (int j = 0; j <= 20; j++) {
            double s = j / 20.0, v = sd_backoff_mass(m, c, s);
            double lo = fmax(0.0, m1 + d1 * (s - 1.0)), hi = s * m1;
            cr_assert(v >= lo - 1e-12 && v <= hi + 1e-12, "context %zu ('%s') s %g: m %.17g outside [%.17g, %.17g]",
                      c, a->words[c], s, v, lo, hi);
        }
    }
    sd_backoff_free(m);
    sd_arpa_free(a);
}

/* --- tree-rrs on sparse rows ---------------------------------------------------- */

/* The kernel tree-rrs-backoff against the exact values of tree-rrs on the
 * same rows stored (the hand-written bigram, x_0 = <s>), 4 se as above;
 * trees of depth 1..3 (depth 3 cut at the horizon, T = 5). */
static void S_kernel_check(const char *algo, const char *tree, size_t gamma, size_t k, size_t T);

static void S_tree(const char *tree, size_t T)
{
    S_kernel_check("tree-rrs", tree, 0, 0, T);
}

static void S_kernel_check(const char *algo, const char *tree, size_t gamma, size_t k, size_t T)
{
    sd_arpa *a = S_load();
    sd_error err;
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(a, 2, a, T, 0, &m, &err), SD_OK, "%s", err.msg);
    sd_chain *c = sd_chain_alloc(m->V, m->T, 1, 1, &err);
    cr_assert_not_null(c);
    c->init[m->start] = 1.0;
    for (size_t y = 0; y < m->V; y++)
        sd_backoff_rows(m, y, c->draft + y * m->V, c->target + y * m->V);
    const sd_verifier_type *vt = sd_verifier_find(algo);
    cr_assert_not_null(vt);
    sd_params par;
    sd_params_defaults(&par, vt);
    if (tree)
        cr_assert_eq(sd_params_parse(&par, vt, "tree", tree, &err), SD_OK, "%s", err.msg);
    else {
        par.gamma = gamma;
        par.k = k;
    }
    sd_exact_values ex;
    sd_sim_result res;
    double zr, zc;
    tu_lm_kernel_vs_exact(vt, &par, m, c, 11, &ex, &res, &zr, &zc);
    cr_assert(fabs(zr) < 4.0 && fabs(zc) < 4.0, "%s %s gamma %zu k %zu: rejections %g vs %g (z %g), calls %g vs %g (z %g)",
              algo, tree ? tree : "", gamma, k, res.rejections.mean, ex.rejections, zr, res.target_calls.mean,
              ex.target_calls, zc);
    sd_sim_result_free(&res);
    sd_chain_free(c);
    sd_backoff_free(m);
    sd_arpa_free(a);
}

Test(ownmodel, tree_rrs_kernel_agrees_with_exact, .timeout = 60)
{
    S_tree("3", 6);
    S_tree("2,2", 6);
    S_tree("2,1,1", 5);
}

/* spectr-backoff (k-Seq with ρ* by bisection on sparse sums, the residual
 * by rejection from q) against spectr's exact values on the rows stored. */
Test(ownmodel, spectr_kernel_agrees_with_exact, .timeout = 60)
{
    S_kernel_check("spectr", NULL, 2, 2, 8);
    S_kernel_check("spectr", NULL, 3, 4, 8);
    S_kernel_check("spectr", NULL, 0, 3, 6);
}

/* A draft from another file (words matched by spelling, in another order,
 * one of the target's words missing, one extra): at order 1 its rows are
 * sd_backoff's draft row for the same pair of files; at order 2 a history
 * word the draft lacks shortens the history (the unigram). */
Test(ownmodel, ngram_draft_of_another_file)
{
    static const char dlm[] = "\\data\\\nngram 1=5\nngram 2=2\n\n\\1-grams:\n-1.2 c -0.5\n-99 <s>\n-0.05 a\n"
                              "-2 </s>\n-0.7 zz\n\n\\2-grams:\n-0.2 c a\n-0.9 a c\n\n\\end\\\n";
    sd_arpa *ta = S_load(), *da = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(dlm, "draft.arpa", 0, &da, &err), SD_OK, "%s", err.msg);
    sd_backoff *m = NULL;
    cr_assert_eq(sd_backoff_from_arpa(ta, 2, da, 4, 0, &m, &err), SD_OK, "%s", err.msg);
    sd_ngram *g1 = NULL, *g2 = NULL;
    cr_assert_eq(sd_ngram_open(da, 1, ta, &g1, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_ngram_open(da, 2, ta, &g2, &err), SD_OK, "%s", err.msg);
    int64_t h = 3; /* 'b': not a draft word */
    double row[5], r2[5];
    cr_assert_eq(sd_ngram_row(g1, &h, 1, row, NULL, &err), SD_OK);
    cr_assert_eq(sd_ngram_row(g2, &h, 1, r2, NULL, &err), SD_OK);
    for (int w = 0; w < 5; w++) {
        cr_assert(fabs(row[w] - m->p[w]) < 1e-15, "token %d: %.17g vs %.17g", w, row[w], m->p[w]);
        cr_assert(fabs(r2[w] - m->p[w]) < 1e-15, "unknown history: the unigram (token %d)", w);
    }
    cr_assert_eq(row[3], 0.0, "'b' is not a draft word");
    h = 4; /* 'c': the draft's bigram "c a" */
    cr_assert_eq(sd_ngram_row(g2, &h, 1, r2, NULL, &err), SD_OK);
    double z = pow(10, -0.2) + pow(10, -0.5) * (pow(10, -2) + pow(10, -1.2)); /* a listed; </s>, c backed off */
    cr_assert(fabs(r2[2] - pow(10, -0.2) / z) < 1e-14, "P(a | c) = %.17g", r2[2]);
    sd_ngram_free(g1);
    sd_ngram_free(g2);
    sd_backoff_free(m);
    sd_arpa_free(ta);
    sd_arpa_free(da);
}
