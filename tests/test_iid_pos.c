/* test_iid_pos.c — the exact law of τ on i.i.d. rows from a position law
 * (sims/exact/sd_iid_pos.h) for the k-draft trees, recursive rejection
 * sampling (rrs) and k-Seq (spectr): E[τ] = Σ_{l<=G} P(τ >= l) equals the
 * dense engine's exact value (`eval accept-length --p/--q` at small V: the
 * iteration law on a stored chain of identical rows) to 1e-12 for k = 1..4
 * and G = 1..4 (every term P(τ >= l), since the law of τ ∧ l does not
 * depend on G >= l), on rows with zeros in p and q; at V = 20 000, where
 * the command line keeps one row pair and answers from the same law, it
 * lies within 4 of the sparse-row kernels' standard errors (100 000
 * trials, seed 1; a false alarm about 6e-5 per comparison). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/exact/sd_iid_pos.h"
#include "../sims/exact/sd_iter_laws.h"
#include "test_util.h"

static json_t *S_json(const char *args)
{
    char *out = NULL, *err = NULL;
    int st = tu_run(args, &out, &err);
    cr_assert_eq(st, 0, "'%.200s': exit %d: %s", args, st, err);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "not JSON: %s", out);
    free(out);
    free(err);
    return o;
}

/* Σ_{l<=G} P(τ >= l) of the k-draft tree (kseq: k-Seq, else rrs). */
static double S_exact(const double *p, const double *q, size_t V, size_t k, size_t G, int kseq)
{
    sd_pos_law pl;
    sd_error err;
    cr_assert_eq(sd_pos_law_tree(V, G, k, kseq, &pl, &err), SD_OK, "%s", err.msg);
    double *ccdf = malloc(G * sizeof *ccdf);
    cr_assert_not_null(ccdf);
    cr_assert_eq(sd_iid_pos_ccdf(&pl, p, q, V, 0, ccdf, &err), SD_OK, "%s", err.msg);
    double e = 0.0;
    for (size_t l = 0; l < G; l++) {
        cr_expect(ccdf[l] >= 0.0 && ccdf[l] <= 1.0 && (l == 0 || ccdf[l] <= ccdf[l - 1] + 1e-15), "ccdf[%zu] %.17g",
                  l, ccdf[l]);
        e += ccdf[l];
    }
    free(ccdf);
    sd_pos_law_free(&pl);
    return e;
}

static void S_list(char *buf, size_t len, const double *x, size_t V)
{
    size_t n = 0;
    for (size_t i = 0; i < V && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%.17g", i ? "," : "", x[i]);
}

Test(iid_pos, equals_the_dense_engine)
{
    /* rows with zeros: p never proposes the last token, q never wants the first */
    static const double p3[] = {0.5, 0.5, 0.0}, q3[] = {0.0, 0.3, 0.7};
    static const double p5[] = {0.4, 0.25, 0.2, 0.15, 0.0}, q5[] = {0.0, 0.1, 0.3, 0.2, 0.4};
    const double *ps[] = {p3, p5}, *qs[] = {q3, q5};
    size_t Vs[] = {3, 5}, compared = 0;
    double worst = 0.0;
    char pl[256], ql[256], args[1024];
    for (size_t r = 0; r < 2; r++) {
        S_list(pl, sizeof pl, ps[r], Vs[r]);
        S_list(ql, sizeof ql, qs[r], Vs[r]);
        for (int kseq = 0; kseq <= 1; kseq++)
            for (size_t k = 1; k <= 4; k++)
                for (size_t G = 1; G <= 4; G++) {
                    snprintf(args, sizeof args, "eval accept-length --algo %s --k %zu --gamma %zu --p %s --q %s "
                             "--trials 10 --json", kseq ? "spectr" : "rrs", k, G, pl, ql);
                    json_t *o = S_json(args);
                    double dense = json_real_value(json_object_get(o, "exact"));
                    json_decref(o);
                    double got = S_exact(ps[r], qs[r], Vs[r], k, G, kseq);
                    worst = fmax(worst, fabs(got - dense));
                    cr_expect(fabs(got - dense) <= 1e-12, "V %zu %s k %zu G %zu: %.17g, dense %.17g", Vs[r],
                              kseq ? "spectr" : "rrs", k, G, got, dense);
                    compared++;
                }
    }
    cr_expect_eq(compared, 64);
    cr_log_info("iid_pos: %zu cases, largest difference from the dense engine %.3g", compared, worst);
}

Test(iid_pos, meets_the_sparse_kernels_at_v_20000)
{
    size_t V = 20000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q), sp = 0.0, sq = 0.0;
    cr_assert(p && q);
    /* a fixed pseudo-random pair: p flat-ish, q peaked */
    unsigned long s = 12345;
    for (size_t i = 0; i < V; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double u = (double)(s >> 11) / 9007199254740992.0;
        p[i] = 0.5 + u;
        q[i] = u * u * u;
        sp += p[i];
        sq += q[i];
    }
    char *pf = malloc(V * 26 + 2), *qf = malloc(V * 26 + 2);
    cr_assert(pf && qf);
    for (size_t i = 0; i < V; i++) {
        p[i] /= sp;
        q[i] /= sq;
    }
    S_list(pf, V * 26 + 2, p, V);
    S_list(qf, V * 26 + 2, q, V);
    char *fp = tu_tempfile(pf), *fq = tu_tempfile(qf), args[1024];
    for (int kseq = 0; kseq <= 1; kseq++) {
        snprintf(args, sizeof args, "eval accept-length --algo %s --k 3 --gamma 3 --p @%s --q @%s --max-memory 200M "
                 "--trials 100000 --seed 1 --json", kseq ? "spectr" : "rrs", fp, fq);
        json_t *o = S_json(args);
        json_t *mc = json_object_get(o, "mc");
        double mean = json_real_value(json_object_get(mc, "mean")), se = json_real_value(json_object_get(mc, "stderr"));
        double cli = json_real_value(json_object_get(o, "exact"));
        json_decref(o);
        double got = S_exact(p, q, V, 3, 3, kseq);
        cr_expect(fabs(cli - got) <= 1e-12, "%s: the CLI's exact value %.17g, the law's %.17g", kseq ? "spectr" : "rrs",
                  cli, got);
        cr_expect(fabs(got - mean) < 4 * se, "%s: exact %.6f, Monte-Carlo %.6f +- %.6f", kseq ? "spectr" : "rrs", got,
                  mean, se);
        cr_log_info("iid_pos V = 20000 %s k 3 G 3: exact %.9f, Monte-Carlo %.6f +- %.6f", kseq ? "spectr" : "rrs",
                    got, mean, se);
    }
    free(fp);
    free(fq);
    free(pf);
    free(qf);
    free(p);
    free(q);
}
