/* test_stream.c — generated chains streamed step by step (src/sd_model.h,
 * sd_gen_stream) and the token kernel that runs on them
 * (sims/kernels/kernel_token_stream.c): the same bytes as the stored run, exact values
 * forward over the rows, the memory budget refusing before allocating. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_chain.h"
#include "../src/sd_exact.h"
#include "../src/sd_model.h"
#include "test_util.h"

static sd_gen_params S_gen(size_t V, size_t T, unsigned long seed, int rng)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = V;
    gp.T = T;
    gp.seed = seed;
    gp.rng = rng;
    return gp;
}

/* The stream's steps are the stored chain's rows, bit for bit, for both
 * generators. */
Test(stream_gen, steps_are_the_stored_chain)
{
    for (int rng = 0; rng < 2; rng++) {
        sd_gen_params gp = S_gen(9, 5, 4, rng);
        sd_error err;
        sd_chain *c = sd_chain_generate(&gp, &err);
        cr_assert(c, "%s", err.msg);
        sd_gen_stream *g = NULL;
        cr_assert_eq(sd_gen_stream_new(&gp, &g, &err), SD_OK, "%s", err.msg);
        double p[81], q[81], init[9];
        sd_gen_stream_init(g, init);
        cr_assert_eq(memcmp(init, c->init, sizeof init), 0);
        for (size_t t = 1; t <= 5; t++) {
            size_t got;
            cr_assert_eq(sd_gen_stream_next(g, p, q, &got, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(got, t);
            cr_assert_eq(memcmp(p, sd_chain_p(c, t, 0), sizeof p), 0, "rng %d step %zu draft", rng, t);
            cr_assert_eq(memcmp(q, sd_chain_q(c, t, 0), sizeof q), 0, "rng %d step %zu target", rng, t);
        }
        cr_assert_eq(sd_gen_stream_next(g, p, q, NULL, &err), SD_EUSAGE); /* past the horizon */
        sd_gen_stream_free(g);
        sd_chain_free(c);
    }
}

/* streamed = stored, bit for bit: several V, T (one and more than 64 end-bit
 * words), gamma (horizon, 1, 3, T-1, beyond T), trial counts with a partial
 * block and a partial lockstep group, threads 1, 2, 3, the sampled tokens
 * and the per-position counts. */
Test(stream_kernel, same_bits_as_the_stored_run)
{
    static const struct {
        size_t V, T, gamma;
        uint64_t trials;
    } cases[] = {
        {7, 50, 0, 5000}, {20, 13, 3, 9001}, {33, 70, 0, 4099}, {5, 1, 0, 3000},
        {6, 9, 1, 2500},  {12, 8, 7, 4097},  {3, 70, 90, 1500},
    };
    const sd_verifier_type *vt = sd_verifier_find("token");
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        sd_gen_params gp = S_gen(cases[k].V, cases[k].T, 10 + k, SD_GEN_DIRICHLET);
        sd_error err;
        sd_chain *c = sd_chain_generate(&gp, &err);
        cr_assert(c, "%s", err.msg);
        sd_params par;
        sd_params_defaults(&par, vt);
        par.gamma = cases[k].gamma;
        size_t ntok = cases[k].T < 4 ? cases[k].T : 4;
        sd_sim_opts so = {.seed = 3 + k, .trials = cases[k].trials, .threads = 1, .want_rb = 1,
                          .want_tokens = ntok, .want_positions = 1};
        sd_sim_result ref;
        cr_assert_eq(sd_sim_run(vt, c, &par, &so, &ref, &err), SD_OK, "%s", err.msg);
        cr_assert_str_eq(ref.kernel, "token-alias");
        for (unsigned th = 1; th <= 3; th++) {
            sd_model_stream ms = {.gen = gp};
            sd_model m = sd_model_of_stream(&ms);
            sd_sim_job job = {vt, &m, &par};
            so.threads = th;
            sd_sim_result r;
            cr_assert_eq(sd_sim_run_job(&job, &so, &r, &err), SD_OK, "%s", err.msg);
            cr_assert_str_eq(r.kernel, "token-stream");
            char what[96];
            snprintf(what, sizeof what, "V=%zu T=%zu gamma=%zu threads %u", cases[k].V, cases[k].T,
                     cases[k].gamma, th);
            tu_same_sim(&ref, &r, what);
            cr_assert_eq(memcmp(ref.tokens, r.tokens, cases[k].trials * ntok * sizeof *r.tokens), 0, "%s: tokens",
                         what);
            cr_assert_eq(memcmp(ref.pos_counts, r.pos_counts, cases[k].T * cases[k].V * sizeof *r.pos_counts), 0,
                         "%s: positions", what);
            /* the run's pass kept the exact values: those of the stored chain */
            double er, ec;
            cr_assert_eq(sd_exact_token(c, par.gamma, &er, &ec, &err), SD_OK, "%s", err.msg);
            cr_assert(ms.memo_ok && ms.memo_gamma == par.gamma, "%s", what);
            cr_assert(ms.memo_rejections == er && ms.memo_calls == ec, "%s: %.17g %.17g vs %.17g %.17g", what,
                      ms.memo_rejections, ms.memo_calls, er, ec);
            sd_sim_result_free(&r);
        }
        sd_sim_result_free(&ref);
        sd_chain_free(c);
    }
}

/* The control: the streamed kernel with the broken tables (rejected mass
 * from TV·q instead of [q-p]+) is caught by the same comparison — its runs
 * are not the stored exact kernel's — and it is the stored broken kernel's. */
Test(stream_kernel, broken_tables_are_caught_by_the_same_comparison)
{
    const sd_verifier_type *vt = sd_verifier_find("token"), *bt = sd_verifier_find("broken-token-kernel");
    sd_gen_params gp = S_gen(7, 20, 5, SD_GEN_DIRICHLET);
    sd_error err;
    sd_chain *c = sd_chain_generate(&gp, &err);
    cr_assert(c);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_opts so = {.seed = 1, .trials = 6000, .threads = 2, .want_tokens = 20};
    sd_sim_result good, broken, broken_stored;
    sd_model_stream ms = {.gen = gp};
    sd_model m = sd_model_of_stream(&ms);
    sd_sim_job job = {bt, &m, &par};
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &good, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_sim_run_job(&job, &so, &broken, &err), SD_OK, "%s", err.msg);
    cr_assert_str_eq(broken.kernel, "token-stream-broken");
    cr_assert_neq(memcmp(good.tokens, broken.tokens, 6000 * 20 * sizeof *good.tokens), 0,
                  "the broken streamed kernel must not reproduce the exact kernel's tokens");
    cr_assert_eq(sd_sim_run(bt, c, &par, &so, &broken_stored, &err), SD_OK, "%s", err.msg);
    tu_same_sim(&broken_stored, &broken, "broken: streamed vs stored");
    sd_sim_result_free(&good);
    sd_sim_result_free(&broken);
    sd_sim_result_free(&broken_stored);
    sd_chain_free(c);
}

/* Exact values forward over the rows = sd_exact_token on the stored chain,
 * bit for bit (Theorem 1 at gamma 0 and >= T, the DP otherwise), for both
 * generators; a second call reads the memo. */
Test(stream_exact, forward_values_equal_theorem1_and_the_dp)
{
    static const size_t gammas[] = {0, 1, 2, 3, 11, 12, 40};
    for (int rng = 0; rng < 2; rng++) {
        sd_gen_params gp = S_gen(8, 12, 21, rng);
        sd_error err;
        sd_chain *c = sd_chain_generate(&gp, &err);
        cr_assert(c, "%s", err.msg);
        sd_model_stream ms = {.gen = gp};
        for (size_t k = 0; k < sizeof gammas / sizeof *gammas; k++) {
            double r1, c1, r2, c2;
            cr_assert_eq(sd_exact_token(c, gammas[k], &r1, &c1, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_token_stream_exact(&ms, gammas[k], &r2, &c2, &err), SD_OK, "%s", err.msg);
            cr_assert(r1 == r2 && c1 == c2, "rng %d gamma %zu: %.17g %.17g vs %.17g %.17g", rng, gammas[k], r2,
                      c2, r1, c1);
            cr_assert(ms.memo_ok && ms.memo_gamma == gammas[k]);
            ms.memo_rejections = -1.0; /* the memo is what a second call returns */
            cr_assert_eq(sd_token_stream_exact(&ms, gammas[k], &r2, NULL, &err), SD_OK);
            cr_assert_eq(r2, -1.0);
            ms.memo_ok = 0;
        }
        sd_chain_free(c);
    }
}

/* Monte-Carlo on a streamed chain with no stored counterpart computed:
 * rejections and target calls within 4 standard errors of the forward
 * exact values (4 se: a false alarm has probability 6e-5 per comparison
 * under the normal approximation; fixed seeds). */
Test(stream_law, monte_carlo_within_4se_of_the_exact_values)
{
    static const size_t gammas[] = {0, 3};
    const sd_verifier_type *vt = sd_verifier_find("token");
    for (size_t k = 0; k < 2; k++) {
        sd_model_stream ms = {.gen = S_gen(300, 20, 77, SD_GEN_DIRICHLET)};
        sd_model m = sd_model_of_stream(&ms);
        sd_params par;
        sd_params_defaults(&par, vt);
        par.gamma = gammas[k];
        sd_sim_job job = {vt, &m, &par};
        sd_sim_opts so = {.seed = 5, .trials = 20000, .threads = 2, .want_rb = 1};
        sd_sim_result r;
        sd_error err;
        cr_assert_eq(sd_sim_run_job(&job, &so, &r, &err), SD_OK, "%s", err.msg);
        sd_exact_values ex;
        cr_assert_eq(sd_verifier_exact(vt, &m, &par, &ex, &err), SD_OK, "%s", err.msg);
        const sd_welford *w[] = {&r.rejections, &r.rejections_rb, &r.target_calls};
        const double want[] = {ex.rejections, ex.rejections, ex.target_calls};
        for (size_t i = 0; i < 3; i++) {
            double se = sd_welford_stderr(w[i]);
            cr_assert(fabs(w[i]->mean - want[i]) < 4.0 * se, "gamma %zu stat %zu: %.6f vs exact %.6f (se %.3g)",
                      gammas[k], i, w[i]->mean, want[i], se);
        }
        sd_sim_result_free(&r);
    }
}

/* What a streamed chain does not offer is refused with a message. */
Test(stream_limits, library_refusals)
{
    const sd_verifier_type *vt = sd_verifier_find("token"), *bv = sd_verifier_find("block");
    sd_model_stream ms = {.gen = S_gen(6, 10, 1, SD_GEN_DIRICHLET)};
    sd_model m = sd_model_of_stream(&ms);
    sd_params par, bpar;
    sd_params_defaults(&par, vt);
    sd_params_defaults(&bpar, bv);
    sd_error err;
    sd_sim_result r;
    sd_sim_job job = {vt, &m, &par}, bjob = {bv, &m, &bpar};
    sd_sim_opts so = {.seed = 1, .trials = 100, .threads = 1};
    /* no stored rows for a generic step: SD_ETOOBIG naming what runs */
    cr_assert_eq(sd_sim_run_job(&bjob, &so, &r, &err), SD_ETOOBIG);
    cr_assert(tu_contains(err.msg, "--algo block needs the stored chain") && tu_contains(err.msg, "token"),
              "%s", err.msg);
    /* early stopping needs blocks run one after the other */
    so.time_limit = 1.0;
    cr_assert_eq(sd_sim_run_job(&job, &so, &r, &err), SD_EUSAGE);
    cr_assert(tu_contains(err.msg, "give --trials"), "%s", err.msg);
    so.time_limit = 0.0;
    /* block ranges (MPI) */
    sd_sim_block blk[1];
    double hist[11] = {0};
    cr_assert_eq(sd_sim_run_blocks(&job, &so, 0, 1, blk, hist, NULL, NULL, &err), SD_EUSAGE);
    cr_assert(tu_contains(err.msg, "streamed"), "%s", err.msg);
    /* the trials' state over the bound, before allocating */
    so.trials = (uint64_t)1 << 34;
    so.kernel_max_bytes = (size_t)1 << 20;
    cr_assert_eq(sd_sim_run_job(&job, &so, &r, &err), SD_ETOOBIG);
    cr_assert(tu_contains(err.msg, "--trials 17179869184") && tu_contains(err.msg, "memory budget 1048576"),
              "%s", err.msg);
    /* the step's rows and tables over the bound */
    ms.gen.V = 4096;
    m = sd_model_of_stream(&ms);
    so.trials = 100;
    cr_assert_eq(sd_sim_run_job(&job, &so, &r, &err), SD_ETOOBIG);
    cr_assert(tu_contains(err.msg, "V=4096 need 536969216 bytes") && tu_contains(err.msg, "1048576"), "%s",
              err.msg);
}

/* The command line: --stream gives the stored run's JSON (the kernel and
 * the model's "streamed" aside), with a model line saying so; refusals
 * exit 65 (sizes) or 64 (usage) naming the sizes, under a small address
 * space limit so that an allocation of the refused size would fail
 * differently (exit 71). */
static char *S_strip(const char *json)
{
    char *s = strdup(json), *w = s;
    for (const char *line = json; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (!strstr(line, "\"kernel\"") || (nl && strstr(line, "\"kernel\"") > nl)) {
            if (!strstr(line, "\"streamed\"") || (nl && strstr(line, "\"streamed\"") > nl)) {
                memcpy(w, line, len);
                w += len;
            }
        }
        line += len;
    }
    *w = '\0';
    return s;
}

Test(stream_cli, json_is_the_stored_runs)
{
    static const char *const runs[] = {
        "run --V 9 --T 20 --trials 6000 --gamma 3 --json",
        "run --V 5 --T 66 --trials 5000 --json --rng numpy-mt19937",
    };
    for (size_t k = 0; k < 2; k++) {
        char cmd[256], *a, *b, *e;
        cr_assert_eq(tu_run(runs[k], &a, &e), 0, "%s", e);
        free(e);
        snprintf(cmd, sizeof cmd, "%s --stream --threads 3", runs[k]);
        cr_assert_eq(tu_run(cmd, &b, &e), 0, "%s", e);
        free(e);
        cr_assert(tu_contains(b, "\"kernel\": \"token-stream\"") && tu_contains(b, "\"streamed\": true"), "%s", b);
        char *sa = S_strip(a), *sb = S_strip(b);
        cr_assert(tu_same_results(sa, sb), "%s\n%s", a, b);
        free(sa);
        free(sb);
        free(a);
        free(b);
    }
    char *o;
    cr_assert_eq(tu_run("run --V 9 --T 20 --trials 6000 --stream", &o, NULL), 0);
    cr_assert(tu_contains(o, "generated (streamed: rows built step by step), V=9, T=20"), "%s", o);
    cr_assert(tu_contains(o, "kernel token-stream") && tu_contains(o, "exact: Theorem 1"), "%s", o);
    free(o);
}

/* `simdec args` exits with code and its stderr holds both fragments. */
static void S_refused(const char *args, int code, const char *frag1, const char *frag2)
{
    char *o, *e;
    cr_assert_eq(tu_run(args, &o, &e), code, "%s: %s", args, e);
    cr_assert(tu_contains(e, frag1) && tu_contains(e, frag2), "%s: %s", args, e);
    free(o);
    free(e);
}

Test(stream_cli, refusals_name_sizes_before_allocating)
{
    /* an address space of 400 MB: allocating the refused sizes would fail
     * (exit 71).  Not under AddressSanitizer, whose shadow memory alone
     * reserves terabytes of address space (the instrumented binary could not
     * start): there the messages and exit codes are checked, and the
     * uninstrumented run of this test checks that nothing was allocated. */
#if !defined(__SANITIZE_ADDRESS__)
    struct rlimit lim = {(rlim_t)400 << 20, (rlim_t)400 << 20};
    cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
#endif
    /* streamed automatically (13.4 GB stored > half of 64 MiB), but one
     * step's rows and tables need 537 MB */
    S_refused("run --V 4096 --T 50 --max-memory 64M", 65, "V=4096 need 536969216 bytes",
              "memory budget 67108864");
    /* the trials' state */
    S_refused("run --V 50 --T 50 --stream --trials 100000000 --max-memory 100M", 65,
              "--trials 100000000 keep 28 bytes of state each", "104857600");
    /* a verifier without a streamed kernel: the stored chain over the budget */
    S_refused("run --algo block --V 2048 --T 50 --max-memory 1G", 65, "V=2048, T=50 takes 3.355 GB stored",
              "1.07 GB (--max-memory)");
    S_refused("gen --V 4096 --T 50 --max-memory 4G", 65, "13.42 GB stored", "refusing");
    /* usage */
    S_refused("run --algo block --V 5 --stream", 64, "--stream", "needs stored rows");
    S_refused("run --V 5 --stream --time-limit 1", 64, "streamed chain", "give --trials");
    S_refused("run --V 5 --max-memory 12", 64, "--max-memory '12'", "4G");
}

/* The stored chain may be freed once the token kernel's tables are built:
 * the engine says so (kernel_ready) for token-alias, whose plan copies
 * what it reads, and not for the generic step or the block kernel, which
 * read the rows during the run; the run after the chain is freed gives
 * the same bits. */
static void S_ready(void *ctx)
{
    sd_chain **c = ctx;
    sd_chain_free(*c);
    *c = NULL;
}

Test(stream_limits, chain_freed_once_the_token_tables_are_built)
{
    const sd_verifier_type *vt = sd_verifier_find("token"), *bv = sd_verifier_find("block");
    sd_gen_params gp = S_gen(9, 12, 3, SD_GEN_DIRICHLET);
    sd_error err;
    sd_chain *keep = sd_chain_generate(&gp, &err), *c = sd_chain_generate(&gp, &err);
    cr_assert(keep && c);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_sim_opts so = {.seed = 4, .trials = 5000, .threads = 2, .want_rb = 1};
    sd_sim_result ref, r;
    cr_assert_eq(sd_sim_run(vt, keep, &par, &so, &ref, &err), SD_OK, "%s", err.msg);
    so.kernel_ready = S_ready;
    so.kernel_ready_ctx = &c;
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &err), SD_OK, "%s", err.msg);
    cr_assert_null(c, "token-alias: the chain was released");
    tu_same_sim(&ref, &r, "chain freed after the tables");
    sd_sim_result_free(&ref);
    sd_sim_result_free(&r);
    /* the block kernel and the generic step keep reading the rows */
    sd_params bpar;
    sd_params_defaults(&bpar, bv);
    sd_chain *c2 = keep;
    so.kernel_ready_ctx = &c2;
    cr_assert_eq(sd_sim_run(bv, keep, &bpar, &so, &r, &err), SD_OK, "%s", err.msg);
    cr_assert_not_null(c2, "kernel %s", r.kernel);
    sd_sim_result_free(&r);
    so.generic = 1;
    cr_assert_eq(sd_sim_run(vt, keep, &par, &so, &r, &err), SD_OK, "%s", err.msg);
    cr_assert_not_null(c2);
    sd_sim_result_free(&r);
    sd_chain_free(keep);
}
