/* test_util.h — helpers shared by the Criterion tests.
 *
 * tu_run() runs the simdec executable (path in $SIMDEC_BIN, set by
 * scripts/run-tests.sh; default ./simdec) through /bin/sh with the given
 * argument string, captures stdout and stderr, and returns the exit status
 * (or 128+signal when it died of a signal).  *out and *err are malloc'd and
 * NUL-terminated; the caller frees them (either may be NULL to discard). */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>

int tu_run(const char *args, char **out, char **err);

/* Runs `args` (tu_run), asserts exit status 0 and that stdout (*out, which
 * the caller frees) is JSON, and returns it parsed (json_decref it). */
struct json_t *tu_run_json(const char *args, char **out);

struct sd_verifier_type;
struct sd_params;
struct sd_chain;
struct sd_check_result;
/* sd_check_run of vt with par on c: seed, trials and the window L, the
 * other options at their defaults (the test fails when it refuses); the
 * caller sd_check_result_free's the result. */
struct sd_check_result tu_check_run(const struct sd_verifier_type *vt, const struct sd_chain *c,
                                    const struct sd_params *par, uint64_t seed, uint64_t trials, size_t L);
/* The same, 1 when it says unbiased; *pv its chi-square p-value. */
int tu_check(const struct sd_verifier_type *vt, const struct sd_params *par, const struct sd_chain *c,
             uint64_t seed, uint64_t trials, size_t L, double *pv);

/* Writes text to a fresh temporary file and returns its malloc'd path. */
char *tu_tempfile(const char *text);

/* The contents of the file at path, malloc'd and NUL-terminated ("" when it
 * cannot be opened; NULL only when memory runs out); the caller frees it. */
char *tu_slurp(const char *path);

/* Runs `args` (tu_run), expects exit status `code` and, if fragment is not
 * NULL, that stderr contains it; a failing command must prefix its message
 * with "simdec: " and print nothing on stdout (a death by a signal is an
 * unexpected status). */
void tu_expect(const char *args, int code, const char *fragment);

/* 1 if needle occurs in hay (NULL-safe). */
int tu_contains(const char *hay, const char *needle);

/* 1 if two outputs are equal once the lines naming "seconds" and "threads"
 * (which describe the machine, not the result) are left out. */
int tu_same_results(const char *a, const char *b);

struct sd_sim_result;
/* Asserts that two runs gave the same bits: trial count, the Welford
 * records of rejections, target calls, accepted drafts and the
 * Rao-Blackwellised rejections, the histogram of accepted drafts, and the
 * per-position counts where either run kept them.  `what` names the pair in
 * a failure's message. */
void tu_same_sim(const struct sd_sim_result *a, const struct sd_sim_result *b, const char *what);

struct sd_verifier_type;
struct sd_params;
struct sd_sim_opts;
struct sd_chain;
/* Runs vt on c twice with the same options, with every instruction set and
 * with the scalar paths only (sd_rngbuf_cap_isa(0): scalar Philox too),
 * and asserts that both ran the kernel `kernel` and gave the same bits
 * (tu_same_sim; `what` names the case). */
void tu_same_sim_scalar(const struct sd_verifier_type *vt, const struct sd_chain *c, const struct sd_params *par,
                        const struct sd_sim_opts *so, const char *kernel, const char *what);

struct sd_chain;
/* The generated chain of `simdec gen --V V --T T --model-seed seed` (other
 * options at their defaults); the calling test fails when it cannot be
 * made. */
struct sd_chain *tu_chain(size_t V, size_t T, unsigned long seed);
/* The same with --alpha alpha. */
struct sd_chain *tu_chain_alpha(size_t V, size_t T, unsigned long seed, double alpha);
/* The 3-token chain of horizon 3 with exact zeros of the foundation's
 * tests: target mass where the draft has none and the reverse, non-uniform
 * init (asserts that it loads). */
struct sd_chain *tu_zero3_chain(void);
/* Asserts that the token kernel's mean rejections and target calls on c
 * at draft length gamma (trials on streams (seed, i)) are within 4
 * standard errors of sd_exact_token's: a correct kernel fails a check with
 * probability ~6e-5 (normal approximation, >= 20000 trials); a bias of a
 * few percent is many standard errors at these counts.  Zero standard
 * error: equal values asked. */
void tu_token_vs_exact(const struct sd_chain *c, size_t gamma, uint64_t seed, uint64_t trials);
/* The same with exact zeros: every target row gives token V-1 probability
 * 0 and every draft row token 0 (both renormalised): the draft proposes
 * tokens the target forbids, and the target wants tokens the draft never
 * proposes.  NULL on failure. */
struct sd_chain *tu_zero_chain(size_t V, size_t T, unsigned long seed);

/* A random distribution on V <= 16 tokens: Dirichlet(alpha) weights, each
 * entry zeroed with probability zf (at least one stays positive),
 * renormalised; every draw from r. */
void tu_dist(gsl_rng *r, double *x, size_t V, double alpha, double zf);
/* A chain over horizon T with random rows: init tu_dist(alpha, 0), then
 * each step's draft and target rows (in turn) tu_dist(alpha, zf); NULL on
 * failure. */
struct sd_chain *tu_random_chain(gsl_rng *r, size_t V, size_t T, double alpha, double zf);

struct sd_params;
/* Sets parameter `name` (a built-in verifier's own parameter: eps,
 * residual, tp, fp, plan; or gamma, k, M) in par, unchecked: the slot is
 * that of the first registered verifier declaring the name. */
void tu_par(struct sd_params *par, const char *name, double x);
/* Its value (as tu_par finds the slot). */
double tu_par_get(const struct sd_params *par, const char *name);
/* Sets parameter `name` of vt, unchecked, if vt declares it (else nothing). */
struct sd_verifier_type;
void tu_vpar(struct sd_params *par, const struct sd_verifier_type *vt, const char *name, double x);
/* One verifier configuration of a test's table: the verifier, up to two
 * parameters name[i] = value[i] it declares (NULL names are skipped) and,
 * where a test asks, the kernel expected to run it (else NULL). */
typedef struct tu_conf {
    const char *algo;
    const char *name[2];
    double value[2];
    const char *kernel;
} tu_conf;
/* The verifier of *cf with *par at its defaults and cf's parameters set;
 * fails the calling test when cf->algo is not registered. */
const struct sd_verifier_type *tu_setup(struct sd_params *par, const tu_conf *cf);

#endif
