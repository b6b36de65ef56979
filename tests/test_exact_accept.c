/* test_exact_accept.c — expected accepted length in one iteration
 * (Sun et al. 2025, eq. 9, Lemma 3; Sun et al. 2024, Theorem 1): suite exact_accept. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "../sims/engine/sd_params.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_stats.h"
#include "test_exact_util.h"

extern const sd_verifier_type sd_verifier_token;
extern const sd_verifier_type sd_verifier_block;
extern const sd_verifier_type sd_verifier_greedy_block;

/* An independent brute force: for every full block x^γ (odometer order),
 * E[τ | x^γ] = Σ_i P(τ >= i | x^i) with the token rule Π min(1, q/p), the
 * block rule p_i of Sun et al. 2025, eq. 9, and for the full-information rule
 * min(1, q(x^i)/p(x^i)) (Σ over blocks of p(x^γ) min(1, q(x^i)/p(x^i)) is
 * Σ_{x^i} min(p(x^i), q(x^i))). */
static void S_brute(const sd_chain *c, size_t t, size_t a, size_t G, double out[3])
{
    size_t V = c->V, nb = 1;
    for (size_t i = 0; i < G; i++)
        nb *= V;
    size_t x[16];
    out[0] = out[1] = out[2] = 0.0;
    for (size_t code = 0; code < nb; code++) {
        size_t rest = code;
        for (size_t i = G; i-- > 0;) {
            x[i] = rest % V;
            rest /= V;
        }
        double w = 1.0; /* p(x^γ) */
        for (size_t i = 0; i < G; i++)
            w *= sd_chain_p(c, t + i, i ? x[i - 1] : a)[x[i]];
        if (w == 0.0)
            continue;
        double pp = 1.0, pq = 1.0, tok = 1.0, blk = 1.0;
        for (size_t i = 0; i < G; i++) {
            size_t prev = i ? x[i - 1] : a;
            double pd = sd_chain_p(c, t + i, prev)[x[i]], qd = sd_chain_q(c, t + i, prev)[x[i]];
            pp *= pd;
            pq *= qd;
            tok *= fmin(1.0, qd / pd);
            blk = fmin(1.0, blk * qd / pd);
            out[0] += w * tok;
            out[1] += w * blk;
            out[2] += w * fmin(1.0, pq / pp);
        }
    }
}

Test(exact_accept, toy_model_gamma2_and_gamma3)
{
    /* Sun et al. 2025, §2: 10/9, 11/9, 12/9 at γ = 2; at γ = 3 token
     * 2/3 + 4/9 + 8/27 = 38/27, block 5/3, full 50/27. */
    sd_chain *c = tx_toy_chain(3);
    double e[3];
    cr_assert_eq(sd_exact_accept_length(c, 1, 0, 2, e, NULL, NULL), SD_OK);
    cr_expect(fabs(e[SD_ACCEPT_TOKEN] - 10.0 / 9) < 1e-12, "%.17g", e[0]);
    cr_expect(fabs(e[SD_ACCEPT_BLOCK] - 11.0 / 9) < 1e-12, "%.17g", e[1]);
    cr_expect(fabs(e[SD_ACCEPT_FULL] - 12.0 / 9) < 1e-12, "%.17g", e[2]);
    double cc[9];
    cr_assert_eq(sd_exact_accept_length(c, 1, 1, 3, e, cc, NULL), SD_OK);
    cr_expect(fabs(e[SD_ACCEPT_TOKEN] - 38.0 / 27) < 1e-12, "%.17g", e[0]);
    cr_expect(fabs(e[SD_ACCEPT_BLOCK] - 5.0 / 3) < 1e-12, "%.17g", e[1]);
    cr_expect(fabs(e[SD_ACCEPT_FULL] - 50.0 / 27) < 1e-12, "%.17g", e[2]);
    /* the tails: P(τ >= 1) is the overlap 2/3 for token and block alike */
    cr_expect(fabs(cc[0] - 2.0 / 3) < 1e-15 && fabs(cc[3] - 2.0 / 3) < 1e-15);
    for (int alg = 0; alg < 3; alg++)
        cr_expect(fabs(cc[alg * 3] + cc[alg * 3 + 1] + cc[alg * 3 + 2] - e[alg]) < 1e-15);
    sd_chain_free(c);
}

Test(exact_accept, gamma5_against_brute_force)
{
    /* The toy model, and contexts of random chains with zeros (V = 3, 4). */
    sd_chain *toy = tx_toy_chain(5);
    double e[3], b[3];
    cr_assert_eq(sd_exact_accept_length(toy, 1, 0, 5, e, NULL, NULL), SD_OK);
    S_brute(toy, 1, 0, 5, b);
    for (int i = 0; i < 3; i++)
        cr_expect(fabs(e[i] - b[i]) < 1e-12, "toy %d: %.17g vs %.17g", i, e[i], b[i]);
    cr_expect(e[0] <= e[1] + 1e-12 && e[1] <= e[2] + 1e-12); /* token <= block <= full */
    sd_chain_free(toy);
    for (unsigned long seed = 1; seed <= 8; seed++) {
        size_t V = 3 + seed % 2, T = 9;
        sd_chain *c = tx_random_chain(V, T, seed % 3 == 0, seed % 2 ? 0.3 : 0.0, 900 + seed);
        size_t t = 1 + seed % 5, a = seed % V;
        cr_assert_eq(sd_exact_accept_length(c, t, a, 5, e, NULL, NULL), SD_OK);
        S_brute(c, t, a, 5, b);
        for (int i = 0; i < 3; i++)
            cr_expect(fabs(e[i] - b[i]) < 1e-12, "seed %lu algo %d: %.17g vs %.17g", seed, i, e[i],
                      b[i]);
        cr_expect(e[0] <= e[1] + 1e-12 && e[1] <= e[2] + 1e-12, "seed %lu: %g %g %g", seed, e[0],
                  e[1], e[2]);
        sd_chain_free(c);
    }
}

Test(exact_accept, refusals)
{
    sd_chain *c = tx_random_chain(10, 20, 0, 0.0, 3);
    double e[3];
    sd_error err;
    cr_expect_eq(sd_exact_accept_length(c, 18, 0, 4, e, NULL, &err), SD_EUSAGE);
    cr_expect(strstr(err.msg, "horizon") != NULL, "%s", err.msg);
    cr_expect_eq(sd_exact_accept_length(c, 17, 0, 4, e, NULL, &err), SD_OK); /* 17..20 fits */
    cr_expect_eq(sd_exact_accept_length(c, 1, 0, 8, e, NULL, &err), SD_ETOOBIG);
    cr_expect(strstr(err.msg, "limit") != NULL, "%s", err.msg);
    cr_expect_eq(sd_exact_accept_length(c, 1, 10, 2, e, NULL, &err), SD_EUSAGE);
    cr_expect_eq(sd_exact_accept_length(c, 0, 0, 2, e, NULL, &err), SD_EUSAGE);
    cr_expect_eq(sd_exact_accept_length(c, 1, 0, 0, e, NULL, &err), SD_EUSAGE);
    sd_chain_free(c);
}

/* Mean accepted draft tokens of one iteration of vt at position t after
 * x_{t-1} = a with γ = G, over `trials` calls of its step. */
static void S_mc(const sd_verifier_type *vt, const sd_chain *c, size_t t, size_t a, size_t G,
                 uint64_t trials, sd_welford *w)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = G;
    void *st = NULL;
    sd_error err;
    cr_assert_eq(vt->alloc(&st, c, &par, &err), SD_OK, "%s", err.msg);
    size_t *out = malloc((c->T + 1) * sizeof *out);
    sd_welford_init(w);
    for (uint64_t i = 0; i < trials; i++) {
        sd_stream s;
        sd_stream_init(&s, 2024, i);
        sd_iter it;
        if (vt->begin)
            vt->begin(st);
        cr_assert_eq(vt->step(st, c, &par, &s, t, a, out, &it, &err), SD_OK, "%s", err.msg);
        sd_welford_add(w, (double)it.accepted);
    }
    free(out);
    if (vt->free)
        vt->free(st);
}

Test(exact_accept, within_4_se_of_token_and_block_verifiers)
{
    /* One iteration of sims/verifiers/token.c, sims/verifiers/block.c and sims/greedy-block
     * (the full-information rule) from the same contexts; tolerance 4 SE
     * (false alarm ~6e-5 per comparison). */
    const sd_verifier_type *vts[3] = {&sd_verifier_token, &sd_verifier_block,
                                      &sd_verifier_greedy_block};
    sd_chain *toy = tx_toy_chain(6), *rc = tx_random_chain(4, 12, 0, 0.2, 4711);
    struct { sd_chain *c; size_t t, a, G; } ctx[3] = {{toy, 1, 0, 5}, {rc, 3, 2, 4}, {rc, 8, 1, 5}};
    for (int k = 0; k < 3; k++) {
        double e[3];
        cr_assert_eq(sd_exact_accept_length(ctx[k].c, ctx[k].t, ctx[k].a, ctx[k].G, e, NULL, NULL), SD_OK);
        for (int alg = 0; alg < 3; alg++) {
            sd_welford w;
            S_mc(vts[alg], ctx[k].c, ctx[k].t, ctx[k].a, ctx[k].G, 30000, &w);
            double se = sd_welford_stderr(&w);
            cr_expect(fabs(w.mean - e[alg]) < 4 * se, "context %d %s: MC %.5f ± %.5f vs exact %.5f", k,
                      vts[alg]->name, w.mean, se, e[alg]);
        }
    }
    sd_chain_free(toy);
    sd_chain_free(rc);
}
