/* test_exact_util.h — random instances shared by the test_exact*.c suites
 * (exact_*).  Everything is drawn from GSL's mt19937 with a fixed seed. */
#ifndef TEST_EXACT_UTIL_H
#define TEST_EXACT_UTIL_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "../src/sd_chain.h"

/* A random probability vector of V entries: uniform weights, each set to 0
 * with probability zero_frac (at least one entry stays positive); with
 * levels > 0 the weights are whole numbers 1..levels, so that ties in
 * ratios occur. */
void tx_random_dist(gsl_rng *r, double *x, size_t V, double zero_frac, unsigned levels);

/* A validated random chain: every draft and target row from
 * tx_random_dist(zero_frac) independently (so the target may put mass where
 * the draft has none), init likewise; homogeneous (one matrix) or not. */
sd_chain *tx_random_chain(size_t V, size_t T, int homogeneous, double zero_frac,
                          unsigned long seed);

/* The toy model of Sun et al. 2025, §2 (tokens A = 0, B = 1):
 * draft p(A) = 2/3, target q(A) = 1/3, i.i.d., horizon T. */
sd_chain *tx_toy_chain(size_t T);

/* Parses stdout of `simdec ARGS --json` (exit status must be 0) and
 * returns the number under `key`; NAN on failure (asserted by callers). */
double tx_cli_number(const char *args, const char *key);

#endif
