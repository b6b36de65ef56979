/* sd_fig_util.h — private to plots/: what the figure files share.
 *
 * The figures live one file per paper, each ending in its table of figures
 * (the sd_figure definitions declared at the end of this header):
 *   fig_yin2024.c        Yin, Chen, Huang & Wang 2024, "A Theoretical
 *                        Perspective for Speculative Decoding Algorithm"
 *   fig_sun2024_block.c  Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami &
 *                        Suresh 2025, "Block Verification Accelerates
 *                        Speculative Decoding"
 *   fig_spectr.c         Sun, Suresh, Ro, Beirami, Jain & Yu 2023, "SpecTr:
 *                        Fast Speculative Decoding via Optimal Transport"
 *   fig_sprinter.c       Zhong, Teku & Tandon 2025, "Speeding up Speculative
 *                        Decoding via Sequential Approximate Verification"
 *                        (SPRINTER)
 *   fig_simdec.c         simdec's own figures
 *   fig_trees.c          token trees: tree verifiers against the LP optimum
 * and sd_figures.c holds the registry (sd_figures.h); sd_fig_util.c the helpers below:
 * the layout of a data file and its estimates, and the Monte-Carlo runs,
 * every one of which goes through the trial engine (sims/engine/sd_sim.h).
 *
 * Contract of the writers (sd_figures.h): a header of comment lines, then
 * data blocks "# [name]"; numbers with 10 significant digits; a status
 * with err set on failure.  Every function returning int returns SD_OK or a
 * library status with err set. */
#ifndef SD_FIG_UTIL_H
#define SD_FIG_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_error.h"
#include "../src/sd_stats.h"
#include "sd_figures.h"

/* --- estimates and the layout of a data file (sd_fig_util.c) -------------- */

/* A Monte-Carlo estimate, its standard error and its 95% interval
 * mean ± z se, z = z_{0.975} ≈ 1.96 (normal approximation), the z of
 * sd_welford_ci95. */
typedef struct sd_fig_est {
    double mean, se, lo, hi;
} sd_fig_est;

/* The estimate mean with standard error se. */
sd_fig_est sd_fig_est_normal(double mean, double se);
/* The mean of the observations in w (sd_welford_stderr, sd_welford_ci95). */
sd_fig_est sd_fig_est_welford(const sd_welford *w);
/* The estimate of a - X from one of X. */
sd_fig_est sd_fig_est_flip(double a, sd_fig_est e);
/* Prints " mean lo hi" (the columns mean ci95_lo ci95_hi). */
void sd_fig_put_est(FILE *f, sd_fig_est e);

/* The first two lines: "# simdec plot NAME" and "# WHAT". */
void sd_fig_head(FILE *f, const char *name, const char *what);
/* Starts data block `name` (gnuplot's index '[name]') with its columns. */
void sd_fig_block(FILE *f, const char *name, const char *columns);
/* "# LABEL = x_0 x_1 ..." */
void sd_fig_vec(FILE *f, const char *label, const double *x, size_t V);
/* A writer's final status: rc if set, else SD_EOUTPUT if writing f failed. */
int sd_fig_done(FILE *f, int rc, sd_error *err);
/* n trials, or a tenth of them (at least 100) with o->quick. */
uint64_t sd_fig_trials(const sd_figure_opts *o, uint64_t n);

/* The registered verifier `name`; NULL with SD_EINTERNAL set if missing. */
const sd_verifier_type *sd_fig_verifier(const char *name, sd_error *err);
/* Ber(x) puts mass x on token 1 (as sd_exact_otm.h): out = (1-x, x). */
void sd_fig_ber(double x, double *out);

/* --- Monte-Carlo, through the trial engine (sd_fig_util.c) ----------------- */

/* sd_sim_run of `trials` trials of vt on c with the streams (seed, i), on
 * every core; stop may be NULL (whole trials from x_0 ~ init).  want is a
 * set of SD_FIG_WANT_* bits.  On success the caller frees *res with
 * sd_sim_result_free. */
enum { SD_FIG_WANT_POSITIONS = 1, SD_FIG_WANT_PER_TRIAL = 2 };
int sd_fig_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
               uint64_t seed, uint64_t trials, const sd_sim_stop *stop, unsigned want,
               sd_sim_result *res, sd_error *err);

/* One iteration at position 1 after x_0 = prev (no draw of x_0), per trial;
 * res->per_trial is filled when per_trial is set. */
int sd_fig_first_iteration(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           size_t prev, uint64_t seed, uint64_t trials, int per_trial,
                           sd_sim_result *res, sd_error *err);

/* E[N_rej] per trial of verifier `algo` on chain c. */
int sd_fig_rej_mc(const char *algo, const sd_chain *c, const sd_params *par, uint64_t seed,
                  uint64_t trials, sd_fig_est *out, sd_error *err);
/* The same on the single-token problem (p, q): one position (T = 1), so a
 * trial is one iteration and N_rej is the indicator "no draft accepted". */
int sd_fig_rej_single(const char *algo, const double *p, const double *q, size_t V,
                      const sd_params *par, uint64_t seed, uint64_t trials, sd_fig_est *out,
                      sd_error *err);
/* Acceptance 1 - P(no draft accepted) of multi-draft verifier `algo` with k
 * drafts at one position. */
int sd_fig_accept_mc(const char *algo, const double *p, const double *q, size_t V, size_t k,
                     uint64_t seed, uint64_t trials, sd_fig_est *out, sd_error *err);

/* --- the model of Yin et al. 2024, App. F (fig_yin2024.c) ------------------
 * Also the model of simdec's biased-verifier figure (fig_simdec.c). */

/* Two nonstationary Markov chains on 7 tokens, seed 10, uniform prompt,
 * horizon T, drawn as the paper's numpy code draws them (`simdec gen
 * --rng numpy-mt19937`). */
sd_chain *sd_fig_yin_chain(size_t T, sd_error *err);
/* "# model: simdec gen ..." for sd_fig_yin_chain(T). */
void sd_fig_yin_desc(FILE *f, size_t T);
/* The single-token pair of the Pareto figures: p_1(.|0), q_1(.|0) of
 * sd_fig_yin_chain(50), malloc'd (*V entries each). */
int sd_fig_yin_pair(double **p, double **q, size_t *V, sd_error *err);
/* The header of a figure on that pair (TV(p,q) = tv). */
void sd_fig_yin_pair_head(FILE *f, const char *name, const char *title, const double *p,
                          const double *q, size_t V, double tv);
/* max_x p(x) - q(x) (>= 0): the eps beyond which b = min(1,(q+eps)/p) is 1. */
double sd_fig_eps_max(const double *p, const double *q, size_t V);
/* The biased verifier on (p, q) at one position (residual 0 = opt, 1 =
 * uno): rejection rate and output bias TV(law of x_1, q), the plug-in TV
 * with a delta-method interval. */
int sd_fig_biased_mc(const double *p, const double *q, size_t V, double eps, int residual,
                     uint64_t seed, uint64_t trials, sd_fig_est *rej, sd_fig_est *tv,
                     sd_error *err);

/* --- the tables of figures, in the order of `simdec plot all` ------------- */

extern const sd_figure sd_fig_yin2024_fig2a, sd_fig_yin2024_fig2b, sd_fig_yin2024_fig2c,
    sd_fig_yin2024_fig3, sd_fig_yin2024_fig4, sd_fig_yin2024_fig5;
extern const sd_figure sd_fig_sun2024_block_fig3;
extern const sd_figure sd_fig_spectr_fig4, sd_fig_spectr_fig5, sd_fig_spectr_fig6;
extern const sd_figure sd_fig_sprinter_fig5, sd_fig_sprinter_fig6;
extern const sd_figure sd_fig_simdec_multidraft, sd_fig_simdec_verify, sd_fig_simdec_biased;
extern const sd_figure sd_fig_simdec_speedup; /* fig_speedup.c */
extern const sd_figure sd_fig_simdec_draft_policy; /* fig_draft_policy.c */
extern const sd_figure sd_fig_simdec_trees;
extern const sd_figure sd_fig_simdec_referee; /* fig_referee.c */

#endif
