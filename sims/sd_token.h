/* sd_token.h — a fast kernel for token-level speculative decoding on a
 * stored chain, used by the driver (sd_sim.c) in place of the generic
 * step-by-step path of sims/token.c.
 *
 * Contract: for every (seed, trial), sd_token_plan_trial() returns exactly
 * what sd_sim_trial(&sd_verifier_token, ...) returns (same tokens, counts,
 * histogram increments and Welford additions, in the same order): it draws
 * the same uniforms from the same Philox stream (src/sd_rngbuf.h) in the
 * same order and makes the same floating-point comparisons:
 *   draft      smallest x with u < Σ_{i<=x} p(i)        (sd_dist_sample)
 *   accept     u·p(x) < q(x)
 *   residual   smallest x with u·m < Σ_{i<=x} max(0,q-p)(i),
 *              m = Σ max(0, q-p)                        (sd_dist_sample_residual)
 *   bonus      smallest x with u < Σ_{i<=x} q(i).
 * Only the search differs: the running sums are precomputed per row, and a
 * guide table (Chen & Asau 1974) of G = 2^⌈log2 V⌉ buckets starts each
 * search at g[k] = the smallest i whose running sum exceeds fl((k/G)·m),
 * k = ⌊u·G⌋.  Rounding is monotone, so u >= k/G implies fl(u·m) >=
 * fl((k/G)·m) and the answer is >= g[k]: the search is exact, in O(1)
 * expected steps per draw instead of O(V).  tests/test_perf.c checks the
 * equality trial by trial. */
#ifndef SD_TOKEN_H
#define SD_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "../src/sd_stats.h"
#include "sd_verifier.h"

extern const sd_verifier_type sd_verifier_token;

typedef struct sd_token_plan sd_token_plan;

/* Largest plan built, in bytes; beyond it the driver keeps the generic
 * path (same results, O(V) per draw). */
#define SD_TOKEN_PLAN_MAX_BYTES ((size_t)1 << 31)

/* Bytes a plan for chain c and parameters par needs (SIZE_MAX on
 * overflow). */
size_t sd_token_plan_bytes(const sd_chain *c, const sd_params *par);

/* Builds the plan (running sums and guide tables of every row).  Time
 * O(rows·V); memory sd_token_plan_bytes().  SD_ETOOBIG above
 * SD_TOKEN_PLAN_MAX_BYTES (before allocating), SD_ENOMEM.  The plan keeps a
 * pointer to c, which must outlive it.  Free with sd_token_plan_free(). */
int sd_token_plan_new(const sd_chain *c, const sd_params *par, sd_token_plan **out,
                      sd_error *err);
void sd_token_plan_free(sd_token_plan *plan);

/* One trial (see the contract above): tokens (capacity T+1) receives
 * x_0..x_T; hist (capacity T+1, or NULL) and acc (or NULL) as in
 * sd_sim_trial.  Safe to call from many threads on one plan. */
void sd_token_plan_trial(const sd_token_plan *plan, uint64_t seed, uint64_t trial,
                         size_t *tokens, size_t *rejections, size_t *iterations,
                         double *hist, sd_welford *acc);

/* The same algorithm on the on-demand model of src/sd_lazy.h with draft
 * length gamma (0 = rest of the horizon), in O(1) expected work per token
 * (sims/token_lazy.c): draft a rank r ~ z_d and emit x = π⁻¹_{t,prev}(r);
 * accept if u·z_d(r) < z_q(r); else draw a rank from max(0, z_q - z_d) and
 * map it; a bonus draws a rank from z_q.  Uniforms come from the stream
 * (seed, trial); x_0 = ⌊u·V⌋ (uniform init). */
struct sd_lazy;
void sd_token_lazy_trial(const struct sd_lazy *m, size_t gamma, uint64_t seed, uint64_t trial,
                         size_t *tokens, size_t *rejections, size_t *iterations, double *hist,
                         sd_welford *acc);

#endif
