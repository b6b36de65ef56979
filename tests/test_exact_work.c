/* test_exact_work.c — the work guard of the exact DP over (position,
 * x_{n-1}) (sims/exact/sd_exact_gen.h, sd_exact_gen_work): problems whose
 * iteration laws would cost more than SD_EXACT_GEN_MAX_OPS to build are
 * refused before the DP starts, naming the projected work and the limit,
 * and a problem just under the limit still computes, and correctly. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_iter_laws.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_exact.h"
#include "test_util.h"

static double S_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const sd_verifier_type *S_setup(sd_params *par, const char *algo, size_t gamma, size_t k)
{
    const sd_verifier_type *vt = sd_verifier_find(algo);
    cr_assert_not_null(vt, "%s", algo);
    sd_params_defaults(par, vt);
    par->gamma = gamma;
    if (k)
        tu_vpar(par, vt, "k", (double)k);
    return vt;
}

/* V = 100 tokens, p uniform and q leaning to the low tokens (the values do
 * not enter the work bound), horizon T: the chain of `--p @list --q @list`. */
static sd_chain *S_pq_chain(size_t T)
{
    double p[100], q[100], s = 0.0;
    for (size_t x = 0; x < 100; x++) {
        p[x] = 0.01;
        q[x] = 1.0 / (double)(x + 1);
        s += q[x];
    }
    for (size_t x = 0; x < 100; x++)
        q[x] /= s;
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, 100, T, &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

/* sd_exact_gen (marginals = 0) or sd_exact_gen_marginals is refused with
 * SD_ETOOBIG and a message naming the projected work and the limit, at
 * once: the guard sums T work queries and builds no law, so it takes
 * milliseconds; 5 s (not 1 s) leaves room for a loaded machine, while the
 * unguarded DP took 14 s to 213 s on these problems. */
static void S_refused(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, int marginals)
{
    sd_error err = {0};
    double rej, calls, t0 = S_now();
    int rc;
    if (marginals) {
        double *marg = malloc(c->T * c->V * sizeof *marg);
        cr_assert_not_null(marg);
        rc = sd_exact_gen_marginals(vt, c, par, marg, &err);
        free(marg);
    } else {
        rc = sd_exact_gen(vt, c, par, &rej, &calls, &err);
    }
    double dt = S_now() - t0;
    cr_expect_eq(rc, SD_ETOOBIG, "%s T = %zu V = %zu: status %d (%s)", vt->name, c->T, c->V, rc, err.msg);
    cr_expect(strstr(err.msg, "operations") && strstr(err.msg, "beyond the limit 8.59e+09"),
              "%s: the message names the work and the limit: %s", vt->name, err.msg);
    cr_expect(dt < 5.0, "%s T = %zu V = %zu: refused after %.3g s", vt->name, c->T, c->V, dt);
    double work;
    int answered;
    cr_assert_eq(sd_exact_gen_work(vt, c, par, marginals, &work, &answered, &err), SD_OK, "%s", err.msg);
    cr_expect(answered && work > SD_EXACT_GEN_MAX_OPS, "%s: projected work %.3g", vt->name, work);
}

/* The reproducers of finding 54: `run --algo rrs --V 100 --gamma 2` (the
 * default generated model, T = 50), `eval generation --algo rrs --gamma 2`
 * on lists of 100 values at T = 1000, and block at gamma 2, V = 100,
 * T = 1000; and the per-token law (bias, eval marginals) of the second. */
Test(exact_work, the_reproducers_are_refused_at_once)
{
    sd_params par;
    sd_chain *c = tu_chain(100, 50, 10);
    cr_assert_not_null(c);
    S_refused(S_setup(&par, "rrs", 2, 2), c, &par, 0);
    sd_chain_free(c);
    c = S_pq_chain(1000);
    S_refused(S_setup(&par, "rrs", 2, 2), c, &par, 0);
    S_refused(S_setup(&par, "rrs", 2, 2), c, &par, 1);
    S_refused(S_setup(&par, "block", 2, 0), c, &par, 0);
    S_refused(S_setup(&par, "spectr", 2, 2), c, &par, 0);
    S_refused(S_setup(&par, "sprinter", 0, 0), c, &par, 0);
    sd_chain_free(c);
}

/* The projected work grows with the horizon; the largest T it accepts
 * for rrs (k = 2, gamma 2) at V = 100 computes, and its values agree with
 * Monte-Carlo (what run executes, the rrs-alias kernel) within 4 standard
 * errors: a correct pair fails with probability 6e-5 per comparison. */
Test(exact_work, just_under_the_limit_computes, .timeout = 120)
{
    sd_params par;
    const sd_verifier_type *vt = S_setup(&par, "rrs", 2, 2);
    sd_chain *c = tu_chain(100, 50, 10);
    cr_assert_not_null(c);
    sd_error err;
    double prev = 0.0, work;
    int answered;
    size_t T = c->T, Tmax = 0;
    for (size_t t = 1; t <= T; t++) {
        c->T = t;
        cr_assert_eq(sd_exact_gen_work(vt, c, &par, 0, &work, &answered, &err), SD_OK, "%s", err.msg);
        cr_assert(answered && work > prev, "T = %zu: work %.3g after %.3g", t, work, prev);
        prev = work;
        if (work <= SD_EXACT_GEN_MAX_OPS)
            Tmax = t;
    }
    cr_assert(Tmax >= 2 && Tmax < T, "largest horizon under the limit: %zu", Tmax);
    /* the scan read only c->T (the bound does not read the rows) */
    c->T = T;
    sd_chain_free(c);
    double rej, calls;
    c = tu_chain(100, Tmax + 1, 10);
    cr_assert_not_null(c);
    cr_expect_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_ETOOBIG, "T = %zu", Tmax + 1);
    sd_chain_free(c);
    c = tu_chain(100, Tmax, 10);
    cr_assert_not_null(c);
    cr_assert_eq(sd_exact_gen_work(vt, c, &par, 0, &work, &answered, &err), SD_OK, "%s", err.msg);
    cr_expect(work > 0.9 * SD_EXACT_GEN_MAX_OPS, "T = %zu projects %.3g: not just under the limit", Tmax, work);
    cr_assert_eq(sd_exact_gen(vt, c, &par, &rej, &calls, &err), SD_OK, "T = %zu: %s", Tmax, err.msg);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, &par};
    sd_sim_opts o = {0};
    o.seed = 7;
    o.trials = 20000;
    sd_sim_result res = {0};
    cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    double se_r = sd_welford_stderr(&res.rejections), se_c = sd_welford_stderr(&res.target_calls);
    cr_expect(fabs(res.rejections.mean - rej) < 4 * se_r, "rejections %.6f vs exact %.6f (se %.2g)",
              res.rejections.mean, rej, se_r);
    cr_expect(fabs(res.target_calls.mean - calls) < 4 * se_c, "target calls %.6f vs exact %.6f (se %.2g)",
              res.target_calls.mean, calls, se_c);
    sd_sim_result_free(&res);
    sd_chain_free(c);
}

/* A law that does not answer the work query (as a law outside the
 * library might): token-level SD's law, built whatever the query says. */
static int S_unanswering_law(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                             struct sd_iter_law *out, sd_error *err)
{
    int q = out->work_query;
    out->work_query = 0;
    int rc = sd_law_tokenwise(SD_LAW_STANDARD, 0.0, c, sd_draft_len(c, par, n), n, prev, out, err);
    out->work_query = q;
    return rc;
}

/* Without an answer the DP keeps its outcome guard and computes: the
 * values are token-level SD's to the last bits (the same law, the same
 * sums in the same order). */
Test(exact_work, a_law_without_a_bound_still_computes)
{
    const sd_verifier_type unanswering = {.name = "unanswering", .iteration_law = S_unanswering_law};
    sd_params par;
    const sd_verifier_type *tok = S_setup(&par, "token", 3, 0);
    sd_chain *c = tu_chain(7, 50, 10);
    cr_assert_not_null(c);
    sd_error err;
    double work, r1, c1, r2, c2;
    int answered;
    cr_assert_eq(sd_exact_gen_work(&unanswering, c, &par, 0, &work, &answered, &err), SD_OK, "%s", err.msg);
    cr_expect(!answered && work == 0.0, "answered %d, work %g", answered, work);
    cr_assert_eq(sd_exact_gen_work(tok, c, &par, 0, &work, &answered, &err), SD_OK, "%s", err.msg);
    cr_expect(answered && work > 0.0 && work < SD_EXACT_GEN_MAX_OPS, "token: work %g", work);
    cr_assert_eq(sd_exact_gen(&unanswering, c, &par, &r1, &c1, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_exact_gen(tok, c, &par, &r2, &c2, &err), SD_OK, "%s", err.msg);
    cr_expect(r1 == r2 && c1 == c2, "%.17g %.17g vs %.17g %.17g", r1, c1, r2, c2);
    sd_chain_free(c);
}
