/* test_kernel_block_draws.c — the random-number contract of block
 * verification's fast kernel (sims/kernels/kernel_block.c, the layout at its top):
 * suite kernel_block_draws.
 *
 * The references below rebuild a trial's tokens from sd_stream words and
 * sd_token_alias_build tables alone, without the kernel's code: on a chain
 * with p = q every draft is accepted (p_i = 1, m_i = 0: h_G = 1), so a
 * trial's tokens are its drafts and bonus tokens, each a fixed function of
 * the uniforms the layout assigns it. */
#include <criterion/criterion.h>
#include <string.h>

#include "../sims/verifiers/sd_block.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_chain.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

extern const sd_verifier_type sd_verifier_block;

/* Word r (0..3) of Philox block blk of sd_stream(seed, t). */
static uint32_t S_word(uint64_t seed, uint64_t t, uint64_t blk, unsigned r)
{
    sd_stream st;
    sd_stream_init(&st, seed, t);
    st.ctr.v[0] = (uint32_t)blk;
    st.ctr.v[1] = (uint32_t)(blk >> 32);
    uint32_t w = 0;
    for (unsigned k = 0; k <= r; k++)
        w = sd_stream_u32(&st);
    return w;
}

/* The even 53-bit uniform of block blk (uniform 2·blk of the stream), as
 * an integer. */
static uint64_t S_u53(uint64_t seed, uint64_t t, uint64_t blk)
{
    return ((uint64_t)(S_word(seed, t, blk, 0) >> 5) << 26) | (S_word(seed, t, blk, 1) >> 6);
}

/* Draft i (1-based) of iteration k: U = w·2^21 + L, w = word (i-1) mod 4 of
 * block b_k + (i-1)/4, L = the top 21 bits of the same word of block
 * SD_TOKEN_LOW_BLOCK + b_k + (i-1)/4. */
static uint64_t S_draft_u(uint64_t seed, uint64_t t, uint64_t bk, size_t i)
{
    const uint64_t blk = bk + (i - 1) / 4;
    const unsigned r = (unsigned)((i - 1) % 4);
    return ((uint64_t)S_word(seed, t, blk, r) << 21) | (S_word(seed, t, SD_TOKEN_LOW_BLOCK + blk, r) >> 11);
}

static unsigned S_lgK(size_t V)
{
    unsigned lgK = 1;
    while (((size_t)1 << lgK) < V)
        lgK++;
    return lgK;
}

static size_t S_draw(const double *w, size_t V, uint64_t U)
{
    uint64_t tab[64];
    const unsigned lgK = S_lgK(V);
    cr_assert_leq((size_t)1 << lgK, 64);
    cr_assert_eq(sd_token_alias_build(w, V, lgK, tab, NULL), SD_OK);
    return sd_token_alias_draw(tab, lgK, U);
}

/* x_1..x_T of trial t on a chain with p = q (above) into x[1..T]. */
static void S_reference(const sd_chain *c, size_t gamma, uint64_t seed, uint64_t t, size_t *x)
{
    const size_t T = c->T, V = c->V, gmax = gamma && gamma < T ? gamma : T, H = (gmax + 3) / 4;
    x[0] = S_draw(c->init, V, S_u53(seed, t, 0));
    for (size_t n = 1, k = 0; n <= T; k++) {
        const size_t rest = T - n + 1, G = gamma && gamma < rest ? gamma : rest;
        const uint64_t bk = 1 + k * (H + 1);
        for (size_t i = 1; i <= G; i++)
            x[n + i - 1] = S_draw(sd_chain_p(c, n + i - 1, x[n + i - 2]), V, S_draft_u(seed, t, bk, i));
        if (n + G <= T) /* the bonus, from q */
            x[n + G] = S_draw(sd_chain_q(c, n + G, x[n + G - 1]), V, S_u53(seed, t, bk + H));
        n += G + 1;
    }
}

/* p := q in every row. */
static void S_equal_rows(sd_chain *c)
{
    cr_assert_eq(c->draft_steps, c->target_steps);
    memcpy(c->draft, c->target, c->draft_steps * c->V * c->V * sizeof *c->draft);
}

/* Every token of every trial is the reference's, on the vector and the
 * scalar paths, for a draft length of 3 (one block of draft words per
 * iteration, one left unused), 4, 6 (two blocks) and the horizon (T = 13:
 * four blocks). */
Test(kernel_block_draws, tokens_follow_the_layout)
{
    sd_chain *c = tu_chain(5, 13, 41);
    cr_assert_not_null(c);
    S_equal_rows(c);
    const size_t gammas[] = {3, 4, 6, 0}, S = 37, T = c->T;
    size_t x[14];
    for (int isa = 2; isa >= 0; isa -= 2) {
        sd_rngbuf_cap_isa(isa);
        for (size_t g = 0; g < sizeof gammas / sizeof gammas[0]; g++) {
            sd_params par;
            sd_params_defaults(&par, &sd_verifier_block);
            par.gamma = gammas[g];
            sd_sim_opts so = {.seed = 500 + g, .trials = S, .threads = 1, .want_tokens = T};
            sd_sim_result r;
            cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &r, NULL), SD_OK);
            cr_assert_str_eq(r.kernel, "block-sorted");
            for (size_t t = 0; t < S; t++) {
                S_reference(c, gammas[g], so.seed, t, x);
                for (size_t n = 1; n <= T; n++)
                    cr_assert_eq(r.tokens[t * T + n - 1], x[n], "isa %d gamma %zu trial %zu x_%zu", isa, gammas[g],
                                 t, n);
            }
            sd_sim_result_free(&r);
        }
    }
    sd_rngbuf_cap_isa(-1);
    sd_chain_free(c);
}

/* The kernel draws a draft from the 32 high bits w of its uniform and
 * computes the 21 low bits L only where w leaves the alias test open, which
 * random uniforms do with probability <= 2^-(32-lgK): too rarely to be
 * seen in a run.  Here the chain is made to leave it open: for seed s,
 * trial 0's first draft has w from the stream; the rows of step 1 (V = 2,
 * p = q) give its column k the mass f_w + 2^20 (f_w = w·2^21 mod 2^52, so
 * thr = f_w + 2^20 exactly: the masses are exact multiples of 2^-53), so
 * that x_1 = k iff L < 2^20.  Both outcomes must occur, and each must be
 * the whole uniform's, on both paths (L replaced by 0 would always give k). */
Test(kernel_block_draws, low_bits_decide_open_drafts_exactly)
{
    size_t by_low[2] = {0, 0};
    for (int isa = 2; isa >= 0; isa -= 2) {
        sd_rngbuf_cap_isa(isa);
        for (uint64_t seed = 1; seed <= 40; seed++) {
            sd_chain *c = tu_chain(2, 3, 7);
            cr_assert_not_null(c);
            const uint32_t w = S_word(seed, 0, 1, 0); /* iteration 0 starts at block 1 */
            const uint64_t fw = ((uint64_t)w << 21) & (((uint64_t)1 << 52) - 1);
            const size_t k = w >> 31; /* lgK = 1: the top bit */
            const double pk = (double)(fw + ((uint64_t)1 << 20)) * 0x1p-53;
            for (size_t a = 0; a < 2; a++) {
                double *q = c->target + a * 2; /* step 1, row a */
                q[k] = pk;
                q[1 - k] = 1.0 - pk; /* exact: pk < 1/2 is a multiple of 2^-53 */
            }
            S_equal_rows(c);
            const uint64_t L = S_word(seed, 0, SD_TOKEN_LOW_BLOCK + 1, 0) >> 11;
            const size_t want = L < ((uint64_t)1 << 20) ? k : 1 - k;
            by_low[want != k]++;
            sd_params par;
            sd_params_defaults(&par, &sd_verifier_block);
            par.gamma = 2;
            sd_sim_opts so = {.seed = seed, .trials = 1, .threads = 1, .want_tokens = 1};
            sd_sim_result r;
            cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &r, NULL), SD_OK);
            cr_assert_str_eq(r.kernel, "block-sorted");
            cr_expect_eq(r.tokens[0], want, "isa %d seed %zu: x_1 = %u, the whole uniform gives %zu", isa,
                         (size_t)seed, r.tokens[0], want);
            sd_sim_result_free(&r);
            sd_chain_free(c);
        }
    }
    sd_rngbuf_cap_isa(-1);
    cr_assert_gt(by_low[0], 5);
    cr_assert_gt(by_low[1], 5, "draws the low bits turned to the alias: %zu", by_low[1]);
}

/* The same outcomes when the kernel trusts fewer bits of w (the test hook
 * sd_block_test_trust_bits: the whole uniform computed for most draws, the
 * open path on every lane of the vector code): every statistic the same
 * bits, on the vector and the scalar paths. */
Test(kernel_block_draws, trusting_fewer_bits_changes_nothing)
{
    sd_chain *c = tu_chain(7, 20, 43);
    cr_assert_not_null(c);
    const size_t gammas[] = {4, 0};
    for (int isa = 2; isa >= 0; isa -= 2) {
        sd_rngbuf_cap_isa(isa);
        for (size_t g = 0; g < 2; g++) {
            sd_params par;
            sd_params_defaults(&par, &sd_verifier_block);
            par.gamma = gammas[g];
            sd_sim_opts so = {.seed = 77, .trials = 2001, .threads = 1, .want_positions = 1, .want_rb = 1};
            sd_sim_result a, b;
            cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &a, NULL), SD_OK);
            sd_block_test_trust_bits(4);
            cr_assert_eq(sd_sim_run(&sd_verifier_block, c, &par, &so, &b, NULL), SD_OK);
            sd_block_test_trust_bits(32);
            char what[64];
            snprintf(what, sizeof what, "isa %d gamma %zu", isa, gammas[g]);
            tu_same_sim(&a, &b, what);
            sd_sim_result_free(&a);
            sd_sim_result_free(&b);
        }
    }
    sd_rngbuf_cap_isa(-1);
    sd_chain_free(c);
}
