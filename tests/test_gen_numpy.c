/* test_gen_numpy.c — `gen --rng numpy-mt19937`: the chain of Yin, Chen,
 * Huang & Wang 2024 (App. F) against numpy itself, its Theorem 1 value, its
 * refusals; and SPRINTER's Theorem 3.3 at fp = 1 (suite gen_numpy). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/sd_chain.h"
#include "../src/sd_exact.h"
#include "test_exact_util.h"
#include "test_util.h"

/* Debian's interpreter, where python3-numpy (scripts/install-deps.sh)
 * lives; a python3 earlier on PATH may lack it. */
#define S_PYTHON "/usr/bin/python3"

/* The chain of sd_chain_generate_numpy against tests/yin_numpy_chain.py
 * (numpy's np.random.seed/np.random.rand), entry by entry.  1e-15: numpy
 * sums a row of 8 or more numbers pairwise, simdec left to right, so the
 * normalising sums may differ in the last bit (relative 1.1e-16); for
 * V < 8 both sum left to right and the entries are equal. */
static void S_compare_with_numpy(size_t V, size_t T, unsigned long seed)
{
    cr_assert_eq(system(S_PYTHON " -c 'import numpy' 2>/dev/null"), 0,
                 "python3-numpy is missing (make deps installs it)");
    char cmd[256];
    snprintf(cmd, sizeof cmd, S_PYTHON " tests/yin_numpy_chain.py %zu %zu %lu", V, T, seed);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = V;
    gp.T = T;
    gp.seed = seed;
    gp.rng = SD_GEN_NUMPY_MT19937;
    sd_error err;
    sd_chain *c = sd_chain_generate(&gp, &err);
    cr_assert_not_null(c, "%s", err.msg);
    double worst = 0.0, worst_equal_sum = 0.0;
    size_t n = 0;
    for (int part = 0; part < 2; part++) {
        const double *m = part ? c->target : c->draft;
        for (size_t i = 0; i < T * V * V; i++, n++) {
            double x;
            cr_assert_eq(fscanf(f, "%lf", &x), 1, "numpy gave %zu numbers; expected %zu", n, 2 * T * V * V);
            double d = fabs(x - m[i]);
            worst = d > worst ? d : worst;
            if (V < 8)
                worst_equal_sum = d > worst_equal_sum ? d : worst_equal_sum;
        }
    }
    double extra;
    cr_expect_eq(fscanf(f, "%lf", &extra), EOF, "numpy gave more than %zu numbers", n);
    cr_expect_eq(pclose(f), 0);
    cr_expect(worst <= 1e-15, "V=%zu T=%zu seed %lu: largest difference %.3g", V, T, seed, worst);
    cr_expect_eq(worst_equal_sum, 0.0, "V=%zu < 8: expected equal entries, largest difference %.3g", V,
                 worst_equal_sum);
    for (size_t a = 0; a < V; a++)
        cr_expect_eq(c->init[a], 1.0 / (double)V);
    sd_chain_free(c);
}

Test(gen_numpy, yin_chain_equals_numpy)
{
    S_compare_with_numpy(7, 50, 10);
}

Test(gen_numpy, other_shapes_and_seeds_equal_numpy)
{
    S_compare_with_numpy(12, 3, 1);          /* V >= 8: numpy's pairwise row sums */
    S_compare_with_numpy(2, 5, 4294967295UL); /* the largest seed numpy takes */
}

/* Yin et al. 2024, §3 and App. F: 16.41 rejections at T = 50, 50/16.41 =
 * 3.05 times fewer target calls than tokens.  The value pinned here is
 * Theorem 1 on the numpy chain (numpy itself, summed in Python, gives
 * 16.40489017528212; a difference below 1e-12 is summation order). */
Test(gen_numpy, theorem1_is_the_papers)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.rng = SD_GEN_NUMPY_MT19937;
    sd_chain *c = sd_chain_generate(&gp, NULL);
    cr_assert_not_null(c);
    double rej;
    cr_assert_eq(sd_exact_rejections(c, &rej, NULL), SD_OK);
    cr_expect(fabs(rej - 16.40489017528212) < 1e-12, "%.17g", rej);
    cr_expect(fabs(50.0 / rej - 3.05) < 0.005, "%.17g", 50.0 / rej);
    sd_chain_free(c);
    char *out, *err;
    cr_assert_eq(tu_run("eval rejections --rng numpy-mt19937 --V 7 --T 50 --model-seed 10", &out, &err), 0,
                 "%s", err);
    cr_expect(tu_contains(out, "16.404890175282"), "%s", out);
    cr_expect(tu_contains(out, "rng numpy-mt19937"), "%s", out);
    free(out);
    free(err);
    cr_expect(fabs(tx_cli_number("eval rejections --rng numpy-mt19937 --json", "rejections") - rej) == 0.0);
}

/* gen writes the chain; a reload gives it back bit for bit (Theorem 1
 * through --model equals Theorem 1 through --rng). */
Test(gen_numpy, gen_writes_the_chain)
{
    char *path = tu_tempfile(""), args[512], *out, *err;
    snprintf(args, sizeof args, "gen --rng numpy-mt19937 --V 7 --T 50 --model-seed 10 -o %s", path);
    cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "eval rejections --model %s --json", path);
    double from_file = tx_cli_number(args, "rejections");
    cr_expect_eq(from_file, tx_cli_number("eval rejections --rng numpy-mt19937 --json", "rejections"));
    remove(path);
    free(path);
}

static void S_refused(const char *args, const char *fragment)
{
    char *out, *err;
    cr_expect_eq(tu_run(args, &out, &err), 64, "%s", args);
    cr_expect(tu_contains(err, fragment), "%s: %s", args, err);
    free(out);
    free(err);
}

Test(gen_numpy, refusals)
{
    S_refused("gen --rng numpy-mt19937 --model-seed 0", "--model-seed 0");
    S_refused("gen --rng numpy-mt19937 --alpha 2", "--alpha/--mix do not apply");
    S_refused("run --rng numpy-mt19937 --mix 0.3", "--alpha/--mix do not apply");
    S_refused("gen --rng numpy", "--rng 'numpy'");
    S_refused("run --zipf --rng numpy-mt19937", "--rng does not apply to --zipf");
    S_refused("run --model tests/hostile/valid.json --rng numpy-mt19937", "not to --model");
}

/* Zhong, Teku & Tandon 2025, Theorem 3.3: E[N] = Σ_{i=1..r} tp^i +
 * tp^r fp/(1-fp).  At fp = 1 the second term is infinite unless tp^r = 0,
 * i.e. tp = 0 and r >= 1: then E[N] = 0 and E[T_stop] = t_d. */
Test(gen_numpy, sprinter_fp1_finite_when_tp0)
{
    cr_expect_eq(tx_cli_number("eval sprinter --tp 0 --fp 1 --r 1 --json", "expected_tokens"), 0.0);
    cr_expect_eq(tx_cli_number("eval sprinter --tp 0 --fp 1 --r 4 --td 0.5 --json", "expected_stop_time"), 0.5);
    char *out, *err;
    cr_expect_eq(tu_run("eval sprinter --tp 0 --fp 1 --r 0 --json", &out, &err), 0);
    cr_expect(tu_contains(out, "\"expected_tokens\": null"), "%s", out);
    free(out);
    free(err);
    cr_expect_eq(tu_run("eval sprinter --help", &out, &err), 0);
    cr_expect(tu_contains(out, "tp = 0 and R >= 1"), "%s", out);
    free(out);
    free(err);
}
