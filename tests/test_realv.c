/* test_realv.c — the i.i.d. problem (--p/--q) at real vocabulary sizes:
 * accepted length without enumerating draft blocks (src/sd_accept_iid.h)
 * equals the enumeration of sd_exact_accept.h where both apply (1e-12:
 * the same sums in another order), its Monte-Carlo terms agree with the
 * enumeration within 4 standard errors (fixed seed; 4 se: a false alarm of
 * 6e-5 per comparison), and at V = 32000 every path either answers in a
 * 1 GiB address space or refuses with exit 65 before allocating (a
 * command that allocated the 16 GB chain of V x V rows first would die
 * with exit 71 under that limit). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../src/sd_accept_iid.h"
#include "../src/sd_chain.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_backoff.h"
#include "../src/sd_model.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_iid_gen.h"
#include "../sims/exact/sd_speedup.h"
#include "test_util.h"
#include "tu_lm.h"

/* Two random rows of V entries with zeros (every 7th in p, every 5th in q
 * when V > 2). */
static void S_rows(size_t V, unsigned seed, double *p, double *q)
{
    srand(seed);
    double sp = 0.0, sq = 0.0;
    for (size_t i = 0; i < V; i++) {
        sp += p[i] = V > 2 && i % 7 == 3 ? 0.0 : 1.0 + rand() % 1000;
        sq += q[i] = V > 2 && i % 5 == 1 ? 0.0 : 1.0 + rand() % 1000;
    }
    for (size_t i = 0; i < V; i++) {
        p[i] /= sp;
        q[i] /= sq;
    }
}

static void S_enumerate(const double *p, const double *q, size_t V, size_t g, double ex[3], double *cc)
{
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, V, g, &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(sd_exact_accept_length(c, 1, 0, g, ex, cc, &err), SD_OK, "%s", err.msg);
    sd_chain_free(c);
}

Test(realv, exact_up_to_gamma_2_equals_the_enumeration)
{
    static const size_t Vs[] = {1, 2, 3, 5, 8, 13};
    double p[13], q[13], ex[3], cc[6], cc2[6];
    for (size_t iv = 0; iv < sizeof Vs / sizeof *Vs; iv++)
        for (unsigned seed = 1; seed <= 3; seed++)
            for (size_t g = 1; g <= 2; g++) {
                size_t V = Vs[iv];
                S_rows(V, seed, p, q);
                S_enumerate(p, q, V, g, ex, cc);
                sd_accept_iid r;
                sd_error err;
                cr_assert_eq(sd_accept_iid_eval(p, q, V, g, 0, 1, 0, &r, cc2, &err), SD_OK, "%s", err.msg);
                cr_assert_eq(r.trials, 0u, "no Monte-Carlo at gamma <= 2");
                for (int a = 0; a < 3; a++) {
                    cr_assert(r.exact[a] && r.stderr_[a] == 0.0);
                    cr_assert_float_eq(r.expected[a], ex[a], 1e-12, "V=%zu seed %u gamma %zu %s: %.17g vs %.17g",
                                       V, seed, g, sd_accept_algo_name(a), r.expected[a], ex[a]);
                    for (size_t l = 0; l < g; l++)
                        cr_assert_float_eq(cc2[a * g + l], cc[a * g + l], 1e-12);
                }
            }
}

/* Sun et al. 2025, section 2: p(A) = 2/3, q(A) = 1/3 at gamma 2 gives
 * 10/9, 11/9, 12/9 (token, block, full). */
Test(realv, toy_model_of_sun_2025)
{
    double p[2] = {2.0 / 3.0, 1.0 / 3.0}, q[2] = {1.0 / 3.0, 2.0 / 3.0};
    sd_accept_iid r;
    sd_error err;
    cr_assert_eq(sd_accept_iid_eval(p, q, 2, 2, 0, 1, 0, &r, NULL, &err), SD_OK, "%s", err.msg);
    cr_assert_float_eq(r.expected[SD_ACCEPT_TOKEN], 10.0 / 9.0, 1e-14);
    cr_assert_float_eq(r.expected[SD_ACCEPT_BLOCK], 11.0 / 9.0, 1e-14);
    cr_assert_float_eq(r.expected[SD_ACCEPT_FULL], 12.0 / 9.0, 1e-14);
}

Test(realv, monte_carlo_terms_agree_with_the_enumeration)
{
    double p[6], q[6], ex[3], cc[3 * 5], cc2[3 * 5];
    const size_t V = 6, g = 5;
    S_rows(V, 11, p, q);
    S_enumerate(p, q, V, g, ex, cc);
    sd_accept_iid r;
    sd_error err;
    cr_assert_eq(sd_accept_iid_eval(p, q, V, g, 20000, 7, 0, &r, cc2, &err), SD_OK, "%s", err.msg);
    cr_assert(r.exact[SD_ACCEPT_TOKEN] && !r.exact[SD_ACCEPT_BLOCK] && !r.exact[SD_ACCEPT_FULL]);
    cr_assert_eq(r.trials, 20000u);
    cr_assert_float_eq(r.expected[SD_ACCEPT_TOKEN], ex[SD_ACCEPT_TOKEN], 1e-12);
    for (int a = SD_ACCEPT_BLOCK; a <= SD_ACCEPT_FULL; a++) {
        double z = (r.expected[a] - ex[a]) / r.stderr_[a];
        cr_assert(r.stderr_[a] > 0.0 && fabs(z) < 4.0, "%s: %.6f +- %.2g vs exact %.6f (%.2f se)",
                  sd_accept_algo_name(a), r.expected[a], r.stderr_[a], ex[a], z);
        for (size_t l = 0; l < 2; l++) /* the exact terms */
            cr_assert_float_eq(cc2[a * g + l], cc[a * g + l], 1e-12);
    }
    /* refused before allocating over a budget */
    cr_assert_eq(sd_accept_iid_eval(p, q, V, g, 20000, 7, 10, &r, NULL, &err), SD_ETOOBIG);
    cr_assert_eq(sd_accept_iid_eval(p, q, V, g, 1, 7, 0, &r, NULL, &err), SD_EUSAGE);
}

/* --- V = 32000 under a 1 GiB address space --------------------------------------- */

static char *S_list_file(size_t V, unsigned seed, int which)
{
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    char *text = malloc(V * 26 + 1), *w = text;
    cr_assert(p && q && text);
    S_rows(V, seed, p, q);
    for (size_t i = 0; i < V; i++)
        w += sprintf(w, i ? ",%.17g" : "%.17g", which ? q[i] : p[i]);
    char *path = tu_tempfile(text);
    free(p), free(q), free(text);
    return path;
}

/* Runs each command on the V = 32000 rows with the CLI's address space
 * limited to 1 GiB (set here, inherited by the child; criterion runs each
 * test in its own process) and --max-memory 200M: want[i] the exit status
 * expected, fragment[i] (if not NULL) a piece of its message. */
static void S_under_1gib_at(size_t V, const char *budget, const char *const *cmds, const int *want,
                            const char *const *fragment, size_t n)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)V, (void)budget, (void)cmds, (void)want, (void)fragment, (void)n;
    cr_skip_test("an address-space limit and AddressSanitizer do not mix");
#else
    char *fp = S_list_file(V, 5, 0), *fq = S_list_file(V, 5, 1);
    struct rlimit rl = {(rlim_t)1 << 30, (rlim_t)1 << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    for (size_t i = 0; i < n; i++) {
        char args[1024], *err = NULL;
        snprintf(args, sizeof args, "%s --p @%s --q @%s --max-memory %s", cmds[i], fp, fq, budget);
        int st = tu_run(args, NULL, &err);
        cr_expect(st == want[i] && (!fragment[i] || tu_contains(err, fragment[i])), "'%s': exit %d (want %d)%s: %s",
                  cmds[i], st, want[i], st == 71 ? " (out of memory under a 1 GiB limit)" : "", err);
        free(err);
    }
    remove(fp), remove(fq);
    free(fp), free(fq);
#endif
}

static void S_under_1gib(const char *const *cmds, const int *want, const char *const *fragment, size_t n)
{
    S_under_1gib_at(32000, "200M", cmds, want, fragment, n);
}

Test(realv, refusals_before_allocating_at_V_32000, .timeout = 60)
{
    static const char *const cmds[] = {
        "eval accept-length --algo batch --M 2 --gamma 2",
        "eval accept-length --algo greedy-block --gamma 2",
        "eval accept-length --algo gumbel --gamma 2",
        "eval accept-length --algo tree-topk --tree 2,2",
        "eval accept-length --algo tree-rrs-wor --tree 2,2",
        "check --algo token --gamma 2",
        "lp pareto --reject 0.5 --max-vars 50000",
    };
    static const int want[] = {65, 65, 65, 65, 65, 65, 65};
    static const char *const frag[] = {"GB (--max-memory)", "GB (--max-memory)", "GB (--max-memory)",
                                       "GB (--max-memory)", "GB (--max-memory)", "GB (--max-memory)",
                                       "96000 LP variables; the limit (--max-vars) is 50000"};
    S_under_1gib(cmds, want, frag, sizeof cmds / sizeof *cmds);
}

Test(realv, answers_in_little_memory_at_V_32000, .timeout = 60)
{
    static const char *const cmds[] = {
        "eval accept-length --algo block --gamma 1",
        "eval accept-length --algo block --gamma 2",
        "eval accept-length --algo full --gamma 4 --trials 2000",
        "eval rejections --M 2",
        "run --algo rrs --k 2 --gamma 2 --trials 200",
        "eval accept-length --algo rrs --k 2 --gamma 3 --trials 2000",
        "eval accept-length --algo spectr --k 2 --gamma 2 --trials 2000",
        "eval accept-length --algo tree-rrs --tree 2,2 --trials 2000",
    };
    static const int want[] = {0, 0, 0, 0, 0, 0, 0, 0};
    static const char *const frag[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    S_under_1gib(cmds, want, frag, sizeof cmds / sizeof *cmds);
}

/* --- the sparse kernels' first iteration (eval accept-length on --p/--q at large V) --- */

/* The verifier `name` at its defaults with the parameters kv[0]=kv[1],
 * kv[2]=kv[3], ... (nkv strings); the test fails on an unknown name or a
 * refused value. */
static const sd_verifier_type *S_verifier(const char *name, const char *const *kv, size_t nkv, sd_params *par)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s", name);
    sd_error err;
    sd_params_defaults(par, vt);
    for (size_t i = 0; i < nkv; i += 2)
        cr_assert_eq(sd_params_parse(par, vt, kv[i], kv[i + 1], &err), SD_OK, "%s", err.msg);
    return vt;
}

/* E[accepted] of the first iteration from the verifier's iteration law on
 * the stored chain of identical rows, against its kernel on the same rows
 * kept as one pair (sd_backoff_iid, horizon G + 1) with the first-iteration
 * stop rule: within 4 standard errors (fixed seed). */
static void S_first_iteration(const char *name, const char *const *kv, size_t nkv, size_t G)
{
    sd_params par;
    const sd_verifier_type *vt = S_verifier(name, kv, nkv, &par);
    sd_error err;
    const size_t V = 6;
    double p[6], q[6];
    S_rows(V, 17, p, q);
    sd_chain *c = sd_chain_from_pq(p, q, V, G + 1, &err);
    cr_assert_not_null(c, "%s", err.msg);
    sd_iter_law law;
    memset(&law, 0, sizeof law);
    cr_assert_eq(vt->iteration_law(c, &par, 1, 0, &law, &err), SD_OK, "%s", err.msg);
    double ex = 0.0;
    for (size_t i = 0; i < law.n; i++)
        if (law.o[i].emitted > 0)
            ex += law.o[i].prob * (double)(law.o[i].emitted - 1);
    sd_iter_law_free(&law);
    sd_chain_free(c);
    sd_backoff *bm = NULL;
    cr_assert_eq(sd_backoff_iid(p, q, V, G + 1, 0, &bm, &err), SD_OK, "%s", err.msg);
    sd_model m = sd_model_of_backoff(bm, bm->V, bm->T);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts so = {.seed = 3, .trials = 40000, .stop = {.first_iteration = 1}};
    sd_sim_result res;
    cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
    double se = sd_welford_stderr(&res.accepted), z = (res.accepted.mean - ex) / se;
    cr_assert_eq(res.accepted.n, 40000.0, "one iteration per trial: %g", res.accepted.n);
    cr_expect(fabs(z) < 4.0, "%s G=%zu: kernel %.5f +- %.2g vs law %.5f (%.2f se)", name, G, res.accepted.mean, se,
              ex, z);
    sd_sim_result_free(&res);
    sd_backoff_free(bm);
}

Test(realv, sparse_kernels_first_iteration_match_the_iteration_laws)
{
    static const char *const g2[] = {"gamma", "2"}, *const g3[] = {"gamma", "3"};
    static const char *const k2g2[] = {"k", "2", "gamma", "2"}, *const k3g3[] = {"k", "3", "gamma", "3"};
    S_first_iteration("token", g3, 2, 3);
    S_first_iteration("block", g2, 2, 2);
    S_first_iteration("block", g3, 2, 3);
    S_first_iteration("rrs", k2g2, 4, 2);
    S_first_iteration("rrs", k3g3, 4, 3);
    S_first_iteration("spectr", k2g2, 4, 2);
    S_first_iteration("spectr", k3g3, 4, 3);
    static const char *const t22[] = {"tree", "2,2"}, *const t211[] = {"tree", "2,1,1"};
    S_first_iteration("tree-rrs", t22, 2, 2);
    S_first_iteration("tree-rrs", t211, 2, 3);
}

/* At gamma = 2 on i.i.d. rows, block verification is exactly the midpoint
 * of token verification and the full-information optimum (docs/findings.md):
 * pairing the ordered pairs (x, y) and (y, x) with m = min(p, q),
 *   2 Σ min(p_x p_y, m_x q_y) = Σ m_x m_y + Σ min(p_x p_y, q_x q_y).
 * At gamma = 3 it is not an identity (the enumeration: both signs). */
Test(realv, block_is_the_midpoint_at_gamma_2_only)
{
    double p[13], q[13];
    sd_error err;
    sd_accept_iid r;
    for (unsigned seed = 1; seed <= 5; seed++) {
        size_t V = 2 + seed * 2;
        S_rows(V, seed, p, q);
        cr_assert_eq(sd_accept_iid_eval(p, q, V, 2, 0, 1, 0, &r, NULL, &err), SD_OK, "%s", err.msg);
        double mid = 0.5 * (r.expected[SD_ACCEPT_TOKEN] + r.expected[SD_ACCEPT_FULL]);
        cr_assert_float_eq(r.expected[SD_ACCEPT_BLOCK], mid, 1e-13, "V=%zu: %.17g vs %.17g", V,
                           r.expected[SD_ACCEPT_BLOCK], mid);
    }
    double ex[3], cc[9];
    double p1[4] = {0.5, 0.3, 0.2, 0.0}, q1[4] = {0.1, 0.2, 0.3, 0.4};
    S_enumerate(p1, q1, 4, 3, ex, cc);
    cr_assert_float_eq(0.5 * (ex[0] + ex[2]) - ex[1], -0.006, 1e-12);
    double p2[3] = {0.6, 0.3, 0.1}, q2[3] = {0.2, 0.2, 0.6};
    S_enumerate(p2, q2, 3, 3, ex, cc);
    cr_assert_float_eq(0.5 * (ex[0] + ex[2]) - ex[1], 0.004, 1e-12);
}

/* --- a bigram drafter for a bigram target (--arpa --draft-arpa --draft-order 2) ---- */

#include "../src/sd_arpa.h"
#include "../src/sd_arpa_draft2.h"
#include "../src/sd_dist.h"
#include "../src/sd_ngram.h"


Test(realv, bigram_draft_theorem1_equals_the_direct_computation)
{
    const size_t T = 9;
    double q[5][5], p[5][5];
    tu_lm_dense_rows(&tu_lm_target, q);
    tu_lm_dense_rows(&tu_lm_draft, p);
    double Q[5] = {0, 1, 0, 0, 0}, direct = 0.0;
    for (size_t n = 1; n <= T; n++) { /* Theorem 1 of Yin et al. 2024 on the dense rows, x_0 = <s> */
        double N[5] = {0};
        for (int a = 0; a < 5; a++) {
            direct += Q[a] * sd_dist_tv(p[a], q[a], 5);
            for (int x = 0; x < 5; x++)
                N[x] += Q[a] * q[a][x];
        }
        memcpy(Q, N, sizeof Q);
    }
    char *tt = tu_lm_arpa_text(&tu_lm_target), *dt = tu_lm_arpa_text(&tu_lm_draft);
    sd_arpa *ta = NULL, *da = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(tt, "target.arpa", 0, &ta, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_load_string(dt, "draft.arpa", 0, &da, &err), SD_OK, "%s", err.msg);
    sd_backoff *m = NULL;
    sd_ngram *gt = NULL, *gd = NULL;
    cr_assert_eq(sd_backoff_from_arpa(ta, 2, da, T, 0, &m, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_ngram_open(ta, 2, NULL, &gt, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_ngram_open(da, 2, ta, &gd, &err), SD_OK, "%s", err.msg);
    double tv[5], dev, rej, calls;
    long ctx;
    cr_assert_eq(sd_arpa_draft2_tv(gd, gt, tv, &dev, &ctx, &err), SD_OK, "%s", err.msg);
    for (int a = 0; a < 5; a++)
        cr_assert_float_eq(tv[a], sd_dist_tv(p[a], q[a], 5), 1e-13, "TV at context %d", a);
    cr_assert_gt(dev, 0.01, "the hand-written draft rows do not sum to 1");
    cr_assert_eq(sd_backoff_theorem1_tv(m, tv, &rej, &calls, NULL, &err), SD_OK, "%s", err.msg);
    cr_assert_float_eq(rej, direct, 1e-13, "Theorem 1: %.17g, direct %.17g", rej, direct);
    /* the sparse sums: the union of the seen sets plus one lookup for the rest */
    double tvs[5];
    cr_assert_eq(sd_arpa_draft2_attach(m, ta, da, 0, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_backoff_draft2_tv(m, tvs, &err), SD_OK, "%s", err.msg);
    for (int a = 0; a < 5; a++)
        cr_assert_float_eq(tvs[a], tv[a], 1e-13, "sparse TV at context %d: %.17g vs %.17g", a, tvs[a], tv[a]);
    /* the target as its own draft, through the same path: no rejection (the rows agree) */
    sd_ngram *gs = NULL;
    cr_assert_eq(sd_ngram_open(ta, 2, ta, &gs, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_draft2_tv(gs, gt, tv, NULL, NULL, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_backoff_theorem1_tv(m, tv, &rej, &calls, NULL, &err), SD_OK, "%s", err.msg);
    cr_assert_float_eq(rej, 0.0, 1e-14);
    cr_assert_float_eq(calls, 1.0, 1e-14);
    /* a reachable context without a draft row is refused, naming it */
    tv[2] = NAN;
    long bad;
    cr_assert_eq(sd_backoff_theorem1_tv(m, tv, &rej, &calls, &bad, &err), SD_EDATA);
    cr_assert_eq(bad, 2);
    sd_ngram_free(gs), sd_ngram_free(gt), sd_ngram_free(gd), sd_backoff_free(m);
    sd_arpa_free(ta), sd_arpa_free(da);
    /* the command line: the same number; run takes token, block and rrs, and refuses batch with the reason */
    char *ft = tu_tempfile(tt), *fd = tu_tempfile(dt), args[1024], *out = NULL, *errs = NULL;
    snprintf(args, sizeof args, "eval rejections --arpa %s --draft-arpa %s --draft-order 2 --T 9 --json", ft, fd);
    cr_assert_eq(tu_run(args, &out, &errs), 0, "%s", errs);
    const char *r = strstr(out, "\"rejections\":");
    cr_assert_not_null(r, "%s", out);
    cr_assert_float_eq(strtod(r + 13, NULL), direct, 1e-12, "%s", out);
    free(out), free(errs);
    snprintf(args, sizeof args, "run --algo token --arpa %s --draft-arpa %s --draft-order 2 --T 9 --trials 1000", ft,
             fd);
    cr_assert_eq(tu_run(args, NULL, &errs), 0, "%s", errs);
    free(errs);
    snprintf(args, sizeof args, "run --algo rrs --k 2 --arpa %s --draft-arpa %s --draft-order 2 --T 9 --trials 1000",
             ft, fd);
    cr_assert_eq(tu_run(args, NULL, &errs), 0, "%s", errs);
    free(errs);
    snprintf(args, sizeof args, "run --algo batch --arpa %s --draft-arpa %s --draft-order 2 --T 9", ft, fd);
    tu_expect(args, 64, "verifiers with one: token block rrs spectr tree-rrs)");
    remove(ft), remove(fd);
    free(ft), free(fd), free(tt), free(dt);
}


Test(realv, bigram_draft_kernel_and_theorem1_with_another_vocabulary, .timeout = 60)
{
    const size_t T = 9;
    double q[5][5], p[5][5];
    tu_lm_dense_rows(&tu_lm_target, q);
    tu_lm_dense_draft_own(p);
    char *tt = tu_lm_arpa_text(&tu_lm_target);
    sd_arpa *ta = NULL, *da = NULL;
    sd_error err;
    cr_assert_eq(sd_arpa_load_string(tt, "target.arpa", 0, &ta, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_arpa_load_string(tu_lm_draft_own, "draft.arpa", 0, &da, &err), SD_OK, "%s", err.msg);
    /* the dense rows as a stored chain, x_0 = <s>: every exact value of token verification */
    sd_chain *c = sd_chain_alloc(5, T, 1, 1, &err);
    cr_assert_not_null(c);
    c->init[1] = 1.0;
    for (int a = 0; a < 5; a++)
        for (int x = 0; x < 5; x++) {
            c->draft[a * 5 + x] = p[a][x];
            c->target[a * 5 + x] = q[a][x];
        }
    cr_assert_eq(sd_chain_validate(c, "dense", &err), SD_OK, "%s", err.msg);
    /* Theorem 1 through the sparse path */
    sd_backoff *m = NULL;
    sd_ngram *gt = NULL, *gd = NULL;
    cr_assert_eq(sd_backoff_from_arpa(ta, 2, da, T, 0, &m, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_ngram_open(ta, 2, NULL, &gt, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_ngram_open(da, 2, ta, &gd, &err), SD_OK, "%s", err.msg);
    double tv[5], rej, calls;
    cr_assert_eq(sd_arpa_draft2_tv(gd, gt, tv, NULL, NULL, &err), SD_OK, "%s", err.msg);
    for (int a = 0; a < 5; a++)
        cr_assert_float_eq(tv[a], sd_dist_tv(p[a], q[a], 5), 1e-13, "TV at context %d", a);
    cr_assert_eq(sd_backoff_theorem1_tv(m, tv, &rej, &calls, NULL, &err), SD_OK, "%s", err.msg);
    const sd_verifier_type *vt = sd_verifier_find("token");
    sd_model cm = sd_model_of_chain(c);
    for (size_t g = 0; g <= 2; g += 2) {
        sd_params par;
        sd_params_defaults(&par, vt);
        par.gamma = g;
        sd_exact_values ex;
        cr_assert_eq(sd_verifier_exact(vt, &cm, &par, &ex, &err), SD_OK, "%s", err.msg);
        if (g == 0)
            cr_assert_float_eq(rej, ex.rejections, 1e-13, "Theorem 1 %.17g vs the stored chain %.17g", rej,
                               ex.rejections);
        /* the kernel on the sparse rows with the bigram draft attached */
        cr_assert_eq(sd_arpa_draft2_attach(m, ta, da, 0, &err), SD_OK, "%s", err.msg);
        double tvs[5];
        cr_assert_eq(sd_backoff_draft2_tv(m, tvs, &err), SD_OK, "%s", err.msg);
        for (int a = 0; a < 5; a++)
            cr_assert_float_eq(tvs[a], tv[a], 1e-13, "sparse TV at context %d: %.17g vs %.17g", a, tvs[a], tv[a]);
        for (int a = 0; a < 5; a++)
            for (int x = 0; x < 5; x++)
                cr_assert_float_eq(sd_backoff_draft2_p(m, (size_t)a, (size_t)x), p[a][x], 1e-14, "p(%d|%d)", x, a);
        sd_model sm = sd_model_of_backoff(m, m->V, m->T);
        sd_sim_job job = {vt, &sm, &par};
        sd_sim_opts so = {.seed = 9, .trials = 40000};
        sd_sim_result res;
        cr_assert_eq(sd_sim_run_job(&job, &so, &res, &err), SD_OK, "%s", err.msg);
        double zr = (res.rejections.mean - ex.rejections) / sd_welford_stderr(&res.rejections);
        double zc = (res.target_calls.mean - ex.target_calls) / sd_welford_stderr(&res.target_calls);
        cr_expect(fabs(zr) < 4.0 && fabs(zc) < 4.0, "gamma %zu: rejections %.4f vs %.4f (%.2f se), calls %.4f vs %.4f "
                  "(%.2f se)", g, res.rejections.mean, ex.rejections, zr, res.target_calls.mean, ex.target_calls, zc);
        sd_sim_result_free(&res);
        /* token's exact values on the sparse rows: Theorem 1 at the horizon, the bigram-draft DP
         * (src/sd_draft2_dp.h) at a finite gamma */
        sd_exact_values ev;
        cr_assert_eq(sd_verifier_exact(vt, &sm, &par, &ev, &err), SD_OK, "%s", err.msg);
        cr_assert_float_eq(ev.rejections, ex.rejections, g ? 1e-12 : 1e-13);
        cr_assert_float_eq(ev.target_calls, ex.target_calls, g ? 1e-12 : 1e-13);
        sd_backoff_free(m->draft2);
        free(m->d2map), free(m->d2inv), free(m->d2mass);
        m->draft2 = NULL, m->d2map = m->d2inv = NULL, m->d2mass = NULL;
    }
    sd_ngram_free(gt), sd_ngram_free(gd), sd_backoff_free(m), sd_chain_free(c);
    sd_arpa_free(ta), sd_arpa_free(da);
    free(tt);
}

/* --- eval generation and the T -> infinity rate on one row pair ----------------- */

/* The renewal fed by the law of τ (sims/exact/sd_iid_gen.h) against the
 * exact DP over (position, x_{n-1}) on the stored chain of identical rows
 * (sd_exact_gen): 1e-12 where the law is exact, else within 4 standard
 * errors of the delta method (fixed seed 3; a false alarm of 6e-5 per
 * comparison).  Returns the larger |z| (0 when exact). */
static double S_gen_vs_dense(const char *name, const char *const *kv, size_t nkv, size_t T, uint64_t trials,
                             int want_exact)
{
    sd_params par;
    const sd_verifier_type *vt = S_verifier(name, kv, nkv, &par);
    sd_error err;
    const size_t V = 5;
    double p[5], q[5];
    S_rows(V, 11, p, q);
    sd_chain *c = sd_chain_from_pq(p, q, V, T, &err);
    cr_assert_not_null(c, "%s", err.msg);
    double rej, calls;
    cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
    sd_chain_free(c);
    sd_iid_law law;
    cr_assert_eq(sd_iid_law_eval(vt, &par, p, q, V, trials, 3, 0, &law, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(law.exact, want_exact, "%s: exact %d", name, law.exact);
    double c2, cse, r2, rse;
    cr_assert_eq(sd_iid_gen_values(&law, T, 0, &c2, &cse, &r2, &rse, &err), SD_OK, "%s", err.msg);
    sd_iid_law_free(&law);
    if (want_exact) {
        cr_assert(cse == 0.0 && rse == 0.0);
        cr_assert_float_eq(c2, calls, 1e-12, "%s T=%zu calls %.17g vs DP %.17g", name, T, c2, calls);
        cr_assert_float_eq(r2, rej, 1e-12, "%s T=%zu rejections %.17g vs DP %.17g", name, T, r2, rej);
        return 0.0;
    }
    cr_assert(cse > 0.0 && rse > 0.0);
    double zc = (c2 - calls) / cse, zr = (r2 - rej) / rse;
    cr_expect(fabs(zc) < 4.0 && fabs(zr) < 4.0, "%s T=%zu: calls %.5f +- %.2g vs %.5f (%.2f se); rejections %.5f +- "
              "%.2g vs %.5f (%.2f se)", name, T, c2, cse, calls, zc, r2, rse, rej, zr);
    cr_log_info("%s T=%zu: calls z = %.2f, rejections z = %.2f", name, T, zc, zr);
    return fmax(fabs(zc), fabs(zr));
}

Test(realv, iid_generation_equals_the_dense_dp_where_exact)
{
    static const char *const gs[][2] = {{"gamma", "1"}, {"gamma", "2"}, {"gamma", "3"}, {"gamma", "5"}};
    static const size_t Ts[] = {1, 2, 3, 4, 7, 12};
    for (size_t i = 0; i < sizeof Ts / sizeof *Ts; i++) {
        for (size_t g = 0; g < 4; g++)
            S_gen_vs_dense("token", gs[g], 2, Ts[i], 2, 1);
        for (size_t g = 0; g < 2; g++) /* the horizon cuts block's draft: Lemma 3 of Sun et al. 2025 */
            S_gen_vs_dense("block", gs[g], 2, Ts[i], 2, 1);
    }
    /* the multi-draft trees from their per-position law (sims/exact/sd_iid_pos.h) */
    static const char *const k2g2[] = {"k", "2", "gamma", "2"}, *const k3g3[] = {"k", "3", "gamma", "3"};
    static const char *const *ks[] = {k2g2, k3g3};
    for (size_t i = 0; i < sizeof Ts / sizeof *Ts; i++)
        for (size_t j = 0; j < 2; j++) {
            S_gen_vs_dense("rrs", ks[j], 4, Ts[i], 2, 1);
            S_gen_vs_dense("spectr", ks[j], 4, Ts[i], 2, 1);
        }
}

Test(realv, iid_generation_monte_carlo_within_4_se, .timeout = 120)
{
    static const char *const g3[] = {"gamma", "3"}, *const g4[] = {"gamma", "4"};
    static const char *const t22[] = {"tree", "2,2"};
    S_gen_vs_dense("block", g3, 2, 7, 40000, 0);
    S_gen_vs_dense("block", g4, 2, 9, 40000, 0);
    S_gen_vs_dense("tree-rrs", t22, 2, 5, 40000, 0);
}

/* The T -> infinity rate 1/(E[τ] + 1) against the renewal rate of the exact
 * iteration law on the stored rows (sd_speedup_iid_rate): 1e-12 for block
 * at gamma <= 2 and for rrs and spectr (their per-position law), within
 * 4 se for block at gamma 3. */
Test(realv, iid_rate_equals_the_iteration_law)
{
    const size_t V = 5;
    double p[5], q[5];
    S_rows(V, 11, p, q);
    static const struct { const char *name, *kv[4]; size_t nkv; int exact; } cs[] = {
        {"block", {"gamma", "1"}, 2, 1}, {"block", {"gamma", "2"}, 2, 1}, {"block", {"gamma", "3"}, 2, 0},
        {"rrs", {"k", "2", "gamma", "2"}, 4, 1}, {"spectr", {"k", "3", "gamma", "2"}, 4, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        sd_params par;
        const sd_verifier_type *vt = S_verifier(cs[i].name, cs[i].kv, cs[i].nkv, &par);
        sd_error err;
        double want, rate, se;
        cr_assert_eq(sd_speedup_iid_rate(vt, &par, p, q, V, &want, &err), SD_OK, "%s", err.msg);
        sd_iid_law law;
        cr_assert_eq(sd_iid_law_eval(vt, &par, p, q, V, 40000, 5, 0, &law, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(sd_iid_gen_rate(&law, &rate, &se, &err), SD_OK, "%s", err.msg);
        cr_assert_eq(law.exact, cs[i].exact);
        sd_iid_law_free(&law);
        if (cs[i].exact)
            cr_assert_float_eq(rate, want, 1e-12, "%s: %.17g vs %.17g", cs[i].name, rate, want);
        else
            cr_expect(se > 0.0 && fabs(rate - want) < 4.0 * se, "%s: %.6f +- %.2g vs %.6f", cs[i].name, rate, se,
                      want);
    }
}

Test(realv, generation_and_speedup_answer_at_V_32000, .timeout = 120)
{
    static const char *const cmds[] = {
        "eval generation --algo block --gamma 2 --T 50",
        "eval generation --algo block --gamma 4 --T 50 --trials 2000",
        "eval generation --algo rrs --k 2 --gamma 3 --T 50 --trials 2000",
        "eval generation --algo spectr --k 2 --gamma 2 --T 20 --trials 2000",
        "eval generation --algo tree-rrs --tree 2,2 --T 20 --trials 2000",
        "eval speedup --algo block --gamma best --gamma-max 4 --trials 2000",
        "eval speedup --algo rrs,spectr --k 2,3 --gamma 1..3 --trials 2000",
        "eval speedup --algo block --gamma 2 --json",
        "eval generation --algo gumbel --gamma 2 --T 20",
        "eval speedup --algo batch --M 2 --gamma 2",
    };
    static const int want[] = {0, 0, 0, 0, 0, 0, 0, 0, 65, 64};
    static const char *const frag[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                       "no kernel for sparse rows to estimate the law",
                                       "no kernel for sparse rows to estimate the law"};
    S_under_1gib(cmds, want, frag, sizeof cmds / sizeof *cmds);
}

/* lp pareto is a problem of one position: on --p/--q it reads the two rows,
 * never a chain of V x V rows.  At V = 3000 under --max-memory 20M (the
 * chain would be 0.14 GB) it answers, in a 1 GiB address space. */
Test(realv, lp_pareto_reads_the_rows_alone, .timeout = 60)
{
    static const char *const cmds[] = {"lp pareto --reject 0.5", "lp pareto --reject 0.95 --json"};
    static const int want[] = {0, 0};
    static const char *const frag[] = {NULL, NULL};
    S_under_1gib_at(3000, "20M", cmds, want, frag, 2);
}

/* The three commands agree on one row pair kept as such (V = 3000, the
 * chain of V x V rows over --max-memory 20M): eval speedup --T 30 takes
 * eval generation's target calls, and eval speedup without --T the rate
 * 1/(E[τ] + 1) of eval accept-length's E[τ] (block, gamma 2: all exact). */
static json_t *S_json_of(const char *cmd, const char *fp, const char *fq)
{
    char args[1024], *out = NULL;
    snprintf(args, sizeof args, "%s --json --p @%s --q @%s --max-memory 20M", cmd, fp, fq);
    cr_assert_eq(tu_run(args, &out, NULL), 0, "%s", args);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "%s: %s", args, je.text);
    free(out);
    return o;
}

Test(realv, generation_speedup_and_accept_length_agree_on_one_row_pair, .timeout = 60)
{
    char *fp = S_list_file(3000, 8, 0), *fq = S_list_file(3000, 8, 1);
    json_t *g = S_json_of("eval generation --algo block --gamma 2 --T 30", fp, fq);
    json_t *s = S_json_of("eval speedup --algo block --gamma 2 --T 30", fp, fq);
    json_t *l = S_json_of("eval speedup --algo block --gamma 2", fp, fq);
    json_t *a = S_json_of("eval accept-length --algo block --gamma 2", fp, fq);
    cr_assert_str_eq(json_string_value(json_object_get(g, "method")), "exact");
    double calls = json_real_value(json_object_get(g, "target_calls"));
    json_t *sp = json_array_get(json_object_get(s, "points"), 0), *lp = json_array_get(json_object_get(l, "points"), 0);
    cr_assert(json_is_true(json_object_get(sp, "exact")) && json_is_true(json_object_get(lp, "exact")));
    cr_assert_float_eq(json_real_value(json_object_get(sp, "target_calls")), calls, 1e-12 * calls);
    double tau = json_real_value(json_object_get(a, "expected_accepted"));
    cr_assert(json_is_true(json_object_get(l, "horizon_limit")));
    cr_assert_float_eq(json_real_value(json_object_get(lp, "target_calls")), 1.0 / (tau + 1.0), 1e-12);
    /* a finite horizon costs more calls per token than the limit: the last iteration's cut draft */
    cr_expect_gt(calls / 30.0, 1.0 / (tau + 1.0));
    json_decref(g), json_decref(s), json_decref(l), json_decref(a);
    remove(fp), remove(fq);
    free(fp), free(fq);
}
