/* sd_token.h — the fast kernel for token-level speculative decoding on a
 * stored chain (sims/kernels/kernel_token.c), used by the driver (sd_sim.c) and by
 * `check` (sd_check.c) in place of the generic step-by-step verifier
 * sd_verifier_token, which stays the mechanistic reference.
 *
 * The kernel draws, at every position n, the pair (x_n, flag) from ONE
 * alias table per (step, previous token) over 2V outcomes o = 2b + flag:
 *   flag 0 (draft accepted, x_n = b):  probability min(p_n, q_n)(b|a)
 *   flag 1 (rejection, x_n = b):       probability max(0, q_n - p_n)(b|a)
 * and reads a bonus position's x_n ~ q_n(.|a) from the same table with the
 * flag ignored (the two rows add up to q).  Why this has the law of the
 * mechanistic verifier, and how the random numbers are laid out: the
 * comment at the top of sims/kernels/kernel_token.c.  One uniform per
 * position (uniform n of the trial, below, for x_n, uniform 0 for x_0), so
 * trials run in lockstep, position by position, over groups of trials.
 *
 * Alias tables (sd_token_alias_build).  K = 2^lgK columns (K >= number of
 * outcomes), C = 2^(53-lgK) = 2^53/K.  The outcome weights are rounded to
 * integer masses m_o summing to exactly 2^53 (m_o = 0 whenever w_o = 0,
 * and when w_o < 2^-53·Σw, which a 53-bit uniform cannot resolve either)
 * and split into columns by Vose's method in exact integer arithmetic.
 * Entry k is thr·K + alias (thr in 0..C, alias < K): a 53-bit uniform
 * integer U draws column k = U >> (53-lgK) and returns k if
 * (U mod C) < thr, else alias.  Outcome o is then returned for exactly m_o
 * of the 2^53 values of U: an outcome of weight 0 never is, for any U. */
#ifndef SD_TOKEN_H
#define SD_TOKEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../src/sd_stats.h"
#include "../engine/sd_verifier.h"

extern const sd_verifier_type sd_verifier_token;

/* token's own slot of --draft-policy (src/sd_draft.h); its kernels decline
 * (SD_EUSAGE) a policy other than fixed. */
#define SD_TOKEN_SLOT_POLICY 0
static inline int sd_token_policy_fixed(const sd_params *par)
{
    return sd_draft_policy_decode(par->v[SD_TOKEN_SLOT_POLICY]).rule == SD_DRAFT_FIXED;
}

struct sd_iter_law;

/* The step and the exact iteration law of token-level SD under par's draft
 * policy (any, fixed included).  peek = 1 is the hook of the control
 * broken-draft-peek: the drafter peeks at the verification coin and does
 * not draft a token (after the first) that would be rejected, ending the
 * iteration with the bonus from q instead of the residual — a stopping
 * rule that is not a stopping time of the drafts, so the law of that
 * position is min(p,q) + TV q, not q. */
int sd_token_policy_step(const sd_chain *c, const sd_params *par, int peek, sd_stream *rng, size_t n,
                         size_t prev, size_t *out, sd_iter *it);
int sd_token_policy_law(const sd_chain *c, const sd_params *par, int peek, size_t n, size_t prev,
                        struct sd_iter_law *out, sd_error *err);

/* Token-level SD's mechanistic step (sd_verifier_type.step), shared with
 * the control broken-token-kernel. */
int sd_token_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err);

/* --- alias tables ---------------------------------------------------------- */

/* Builds the table of n outcomes with weights w[0..n) (finite, >= 0, not
 * all 0; they need not sum to 1) into tab[0..2^lgK).  SD_EUSAGE when
 * n > 2^lgK or lgK is not in 1..24, SD_EDATA for bad weights, SD_ENOMEM. */
int sd_token_alias_build(const double *w, size_t n, unsigned lgK, uint64_t *tab, sd_error *err);

/* The outcome of the 53-bit uniform integer U (see above). */
static inline size_t sd_token_alias_draw(const uint64_t *tab, unsigned lgK, uint64_t U)
{
    const unsigned s = 53u - lgK;
    const uint64_t k = U >> s, e = tab[k], alias = e & (((uint64_t)1 << lgK) - 1);
    /* k if (U mod 2^s) < thr, else alias; without a branch (a coin that
     * compilers' branches mispredict) */
    const uint64_t to_alias = -(uint64_t)((U & (((uint64_t)1 << s) - 1)) >= (e >> lgK));
    return (size_t)(k ^ ((k ^ alias) & to_alias));
}

/* out[i] = the eight bytes at base + 8·idx[i] for i < n (n a multiple of
 * 4), four independent loads per turn: the kernels' AVX-512 loops compute
 * the indices in one vector pass, load the words with this and read them
 * back as vectors in the next pass, instead of a gather (on the 2-core Xeon
 * of docs/performance.md a vpgatherqq of eight L1-resident words costs
 * 30–40 cycles, this ~1.5 per word; docs/findings.md).  The empty asm keeps
 * the compiler from turning the loop back into a gather. */
static inline void sd_fetch64(const void *base, const uint32_t *idx, size_t n, uint64_t *out)
{
    const unsigned char *b = base;
    for (const uint32_t *end = idx + n; idx < end; idx += 4, out += 4) {
        uint64_t e0, e1, e2, e3;
        memcpy(&e0, b + (size_t)idx[0] * 8, 8);
        memcpy(&e1, b + (size_t)idx[1] * 8, 8);
        memcpy(&e2, b + (size_t)idx[2] * 8, 8);
        memcpy(&e3, b + (size_t)idx[3] * 8, 8);
#if defined(__GNUC__)
        __asm__("" : "+r"(e0), "+r"(e1), "+r"(e2), "+r"(e3));
#endif
        out[0] = e0;
        out[1] = e1;
        out[2] = e2;
        out[3] = e3;
    }
}

/* The next array of `bytes` from a kernel's work arena at *off (arena NULL:
 * only counts the bytes).  Each array starts on a cache line, five lines
 * after the end of the one before: the kernels' arrays of 1–8 KiB would
 * otherwise start at offsets equal modulo 4096, and a pass that loads one
 * and stores another would wait on false store-to-load dependencies (4K
 * aliasing; docs/findings.md, 42).  *off stays a multiple of 64, so the
 * arena may come from aligned_alloc(64, *off). */
static inline void *sd_carve(unsigned char *arena, size_t *off, size_t bytes)
{
    void *p = arena ? arena + *off : NULL;
    *off += (bytes + 63) / 64 * 64 + 5 * 64;
    return p;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The eight 64-bit words at base + off[l] (byte offsets, one per lane) as
 * one vector, for the AVX-512 loops that have no work array to fetch into
 * (sd_fetch64 is faster where they do). */
__attribute__((target("avx512f"))) static inline __m512i sd_gather8(const void *base, __m512i off)
{
    return _mm512_i64gather_epi64(off, base, 1);
}

/* The kernels keep per-trial fields as 32-bit arrays and work on them in
 * 64-bit lanes: eight words at p widened to a vector, and a vector's lanes
 * narrowed back to eight words at p (in functions compiled for avx512f). */
#define SD_LD32X8(p) _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define SD_ST32X8(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtepi64_epi32(v))
#endif

/* --- the plan: one alias table per (step, previous token) ------------------- */

typedef struct sd_token_plan sd_token_plan;

/* What the tables hold.  BROKEN_RESIDUAL is a deliberately wrong kernel
 * for the tests of `check`: rejected outcomes with weight TV·q(b) (the
 * target resampled, instead of the residual [q - p]+): the law of x_n is
 * min(p,q) + TV·q ≠ q. */
typedef enum { SD_TOKEN_EXACT = 0, SD_TOKEN_BROKEN_RESIDUAL = 1 } sd_token_kind;

/* Default memory bound of a plan: 1 GiB (V = 1024 at T = 50). */
#define SD_TOKEN_PLAN_MAX_BYTES ((size_t)1 << 30)

/* Bytes of the plan of chain c: (steps·V + 1)·2^lgK·8 with 2^lgK the
 * smallest power of two >= 2V and steps = 1 for a time-homogeneous chain,
 * T otherwise, plus steps·V·8 for each row's TV (the Rao-Blackwellised
 * estimate; SIZE_MAX on overflow). */
size_t sd_token_plan_bytes(const sd_chain *c);

/* Builds the tables for chain c and draft length par->gamma (0 = to the
 * horizon), on `threads` OpenMP threads (0: all cores; the tables do not
 * depend on it).  Time O(steps·V·V); memory sd_token_plan_bytes(c).
 * SD_ETOOBIG, before allocating, when that exceeds max_bytes (0:
 * SD_TOKEN_PLAN_MAX_BYTES) — the caller then uses the generic verifier;
 * SD_ENOMEM.  The plan copies what it needs: c may be freed after.  Free
 * with sd_token_plan_free(). */
int sd_token_plan_new(const sd_chain *c, const sd_params *par, sd_token_kind kind,
                      size_t max_bytes, unsigned threads, sd_token_plan **out, sd_error *err);
void sd_token_plan_free(sd_token_plan *plan);

/* --- pieces for other drivers (the streamed kernel, sims/kernels/kernel_token_stream.c) -----
 *
 * The same computations as the plan's, exported so that a driver holding
 * one step's rows at a time gives the plan's results bit for bit. */

/* log2 of the columns of a table over 2V outcomes: the smallest lgK with
 * 2^lgK >= 2V. */
unsigned sd_token_lgK(size_t V);

/* One step's tables: for a = 0..V-1 the table of row (p[a·V..], q[a·V..])
 * into tab[a·2^lgK ..] and its rejected mass into tv[a], on `threads`
 * OpenMP threads (>= 1; the tables do not depend on it).  SD_ENOMEM when
 * out of memory or when a row is not a distribution. */
int sd_token_step_tables(const double *p, const double *q, size_t V, sd_token_kind kind, int threads,
                         uint64_t *tab, double *tv, sd_error *err);

/* Table memory of `bytes` (2 MiB-aligned with transparent huge pages from
 * 2 MiB on); free with free().  NULL when out of memory. */
uint64_t *sd_token_table_alloc(size_t bytes);

/* The table of x_0 ~ init (outcomes 2·b) into tab[0..2^lgK). */
int sd_token_init_table(const double *init, size_t V, uint64_t *tab, sd_error *err);

/* Uniforms (sims/kernels/kernel_token.c, "uniforms"): uniform n (n = 0..T) of trial t
 * of run seed is the 53-bit integer w·2^21 + L with w = 32-bit word n of
 * sd_stream(seed, t) (word n mod 4 of its Philox block n/4:
 * sd_rngbuf_trials_hi gives w·2^21) and L = sd_token_low21(seed, t, n), the
 * top 21 bits of word n of the same stream from Philox block
 * SD_TOKEN_LOW_BLOCK on, which the kernels compute only when w cannot
 * decide a draw. */
#define SD_TOKEN_LOW_BLOCK ((uint64_t)1 << 62)
uint64_t sd_token_low21(uint64_t seed, uint64_t trial, size_t n);

/* sd_token_alias_draw of uniform n of trial t from its high part hi =
 * w·2^21 (the low bits computed where needed): the same outcome. */
size_t sd_token_draw_hi(const uint64_t *tab, unsigned lgK, uint64_t hi, uint64_t seed, uint64_t trial, size_t n);

/* Tests only: the kernels trust only the top `bits` (0..32) of each
 * uniform's word w and compute the whole uniform whenever those leave a
 * draw undecided (32, the default: only when w itself does), so that the
 * tests run that path often; the outcomes are the same for any value.  Not
 * for use while other threads run kernels. */
void sd_token_test_trust_bits(unsigned bits);

/* Position n of s trials in lockstep: tab and tv are step n's (V tables,
 * V rejected masses), u[i] = w·2^21 for trial t0 + i's uniform n (above),
 * gamma the draft length or 0 for lookahead to the horizon (gamma >= T
 * counts as 0).
 * Updates prev (x_{n-1} -> x_n), rej, j (drafts accepted in the current
 * iteration), rb (if not NULL: += tv[x_{n-1}] at a drafting position) and
 * sets bit `bit` of ends[i] where an iteration ends at n. */
void sd_token_position(const uint64_t *tab, const double *tv, unsigned lgK, uint32_t gamma, size_t s,
                       const uint64_t *u, uint32_t *prev, uint32_t *rej, uint32_t *j, double *rb,
                       uint64_t *ends, unsigned bit, uint64_t seed, uint64_t t0, size_t n);

/* Trials per lockstep group at horizon T (a power of two, at most 1024,
 * smaller where the end bits of a group would pass 2^20 words).  Groups
 * start at the first trial of each sd_kernel_type.run call (a driver's
 * block) and hold the statistics' rounding: see sd_token_replay. */
size_t sd_token_group(size_t T);

/* The statistics of the group of trials i0..i0+n-1, replayed from their end
 * bits (word w of trial i at ends[w·stride + i]) over horizon T, and their
 * counts rej[i], rb[i] (rb may be NULL when out->rb is), into out as
 * sd_token_plan_run adds a group: rej and calls as exact integer sums over
 * the group, one sd_welford_merge_sums each; acc likewise from the group's
 * histogram of accepted drafts (counted in cnt, 8(T + 1) words of scratch);
 * hist += that histogram; rb as the group's mean and sum of squared
 * deviations (two passes in a fixed order), one sd_welford_merge. */
void sd_token_replay(size_t T, size_t stride, const uint64_t *ends, const uint32_t *rej, const double *rb,
                     size_t i0, size_t n, uint64_t *cnt, const sd_observe *out);

/* --- running trials ---------------------------------------------------------- */

/* Per-thread scratch for sd_token_plan_run (O(group·(T/64 + 8)) bytes). */
typedef struct sd_token_work sd_token_work;
int sd_token_work_new(const sd_token_plan *plan, sd_token_work **out, sd_error *err);
void sd_token_work_free(sd_token_work *w);

/* What sd_token_plan_run reports: an sd_observe (sd_verifier.h) with
 * rej, calls, acc, hist, pos, tokens and the stop rule L (with cells); the
 * statistics are merged one summary per group of sd_token_group(T) trials
 * (exact integer sums -> n, mean, sum of squared deviations; Chan's merge;
 * sd_token_replay).  With L > 0 only positions 1..L are run and rej,
 * calls, acc, hist are not touched. */

/* Runs trials lo..hi-1 of run `seed` in lockstep, in groups of trials
 * taken in trial order.  Safe on one plan from many threads, each with its
 * own work. */
void sd_token_plan_run(const sd_token_plan *plan, sd_token_work *w, uint64_t seed, uint64_t lo,
                       uint64_t hi, const sd_observe *out);

/* The same computation for one trial, position by position, with the
 * scalar sd_stream: the reference the tests hold the lockstep code to (same
 * tokens and counts).  tokens (capacity T+1) receives x_0..x_T; hist (if
 * not NULL) += 1 at each iteration's number of accepted drafts. */
void sd_token_plan_trial(const sd_token_plan *plan, uint64_t seed, uint64_t trial,
                         size_t *tokens, size_t *rejections, size_t *iterations, double *hist);

/* --- the kernels (sd_verifier.h) -------------------------------------------------
 *
 * token-alias: the plan above on a stored chain (SD_TOKEN_EXACT);
 * token-alias-broken: the same with SD_TOKEN_BROKEN_RESIDUAL tables, the
 *   kernel of the control broken-token-kernel, which check must flag;
 * token-zipf: the on-demand Zipf model (below). */
extern const sd_kernel_type sd_token_kernel_alias;
extern const sd_kernel_type sd_token_kernel_broken;
extern const sd_kernel_type sd_token_kernel_zipf;
/* token-backoff: sparse-row models (src/sd_backoff.h; sims/kernels/kernel_backoff.c). */
extern const sd_kernel_type sd_token_kernel_backoff;

/* --- the streamed model (sims/kernels/kernel_token_stream.c) ----------------------------------
 *
 * token-stream: the kernel on a generated chain streamed step by step
 * (src/sd_model.h), an sd_kernel_all_type: step n's rows are generated, its
 * tables built and every trial advanced through position n, then the next
 * step; the statistics are the token-alias kernel's on the stored chain,
 * bit for bit.  token-stream-broken: the same with SD_TOKEN_BROKEN_RESIDUAL
 * tables (the streamed kernel of the control broken-token-kernel). */
extern const sd_kernel_all_type sd_token_kernel_stream;
extern const sd_kernel_all_type sd_token_kernel_stream_broken;

/* Bytes of one step's rows and tables at vocabulary V (2·V²·8 +
 * (V+1)·2^lgK·8 + V·8), SIZE_MAX when V is too large; and the bytes of state
 * each trial keeps over horizon T. */
size_t sd_token_stream_bytes(size_t V);
size_t sd_token_stream_trial_bytes(size_t T);

/* Exact E[N_rej] and E[target calls] of token-level SD with draft length
 * gamma (0: the horizon) on a streamed chain: Theorem 1 of Yin et al. 2024
 * or the DP of sd_exact_token_dp, run forward over the rows — the values of
 * sd_exact_token on the stored chain, bit for bit.  Taken from ms's memo
 * when a pass (a run's, or an earlier call's) computed them, else one pass
 * over the generator (the cost of generating the chain).  SD_ETOOBIG where
 * the DP exceeds SD_EXACT_MAX_WORK; the generator's errors. */
int sd_token_stream_exact(sd_model_stream *ms, size_t gamma, double *rejections, double *target_calls,
                          sd_error *err);

/* --- the on-demand model ------------------------------------------------------ */

/* The algorithm on the on-demand model of src/sd_zipf.h with draft length
 * gamma (0 = rest of the horizon), in O(1) expected work per token
 * (sims/kernels/kernel_token_zipf.c): draft a rank r ~ z_d and emit x = π⁻¹_{t,prev}(r);
 * accept if u·z_d(r) < z_q(r); else draw a rank from max(0, z_q - z_d) and
 * map it; a bonus draws a rank from z_q.  Uniforms come from the stream
 * (seed, trial); x_0 = ⌊u·V⌋ (uniform init). */
struct sd_zipf;
void sd_token_zipf_trial(const struct sd_zipf *m, size_t gamma, uint64_t seed, uint64_t trial,
                         size_t *tokens, size_t *rejections, size_t *iterations, double *hist,
                         sd_welford *acc);

#endif
