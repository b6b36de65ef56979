/* sd_kernel_law.h — one table-driven fast kernel for every verifier whose
 * iteration is Markov inside (sims/exact/sd_exact_gen.h, sd_pos_law): biased,
 * sprinter, batch, rrs, spectr (k-Seq) and the control broken-rrs-kernel.
 *
 * Such a verifier's position law gives, at depth i of an iteration, in
 * internal state s, at position t after x_{t-1} = a, the probabilities of
 *   cont[s'·V + y]: x_t = y and the iteration goes on in state s',
 *   end_ok[y]:      x_t = y and the iteration ends without a rejection,
 *   end_rej[y]:     x_t = y from a residual (a rejection),
 * summing to 1, and at depth i = G (after G drafts went on) the law of the
 * bonus token.  Everything `run` reports — x_0..x_T, rejections, target
 * calls, accepted drafts per iteration — is a function of the sequence of
 * these per-position outcomes (the argument of the token kernel,
 * sims/kernels/kernel_token.c, with the (x, R) pair replaced by (x, kind)), so drawing each
 * position's outcome as ONE categorical draw from its weights has the
 * verifier's law: these are the same weights from which sd_exact_gen
 * computes the exact values, and the laws themselves are held to each
 * verifier's mechanistic step by tests/test_exact_gen.c.
 *
 * Tables.  Per row (step t, previous token a) and slot — the first depth
 * (i = 0, state s0), a later depth 0 < i < G in state s, the bonus — one
 * alias table (sd_token_alias_build, sims/verifiers/sd_token.h) over the outcomes
 * o = kind·2^lgV + y, kind = s' (going on), S (ended, kept) or S+1
 * (rejected); a bonus table puts all of its mass on kind S.  The kernel
 * relies on the contract that the weights depend on the depth i only
 * through i = 0, 0 < i < G and i = G (true of every built-in law), and
 * identical tables of a row are stored once.  A trial uses one 53-bit
 * uniform for x_0 and one per position, from its own Philox stream
 * (sd_rngbuf, src/sd_rngbuf.h): results depend on (seed, trial) only, the
 * same bytes for any thread or rank count.
 *
 * What an ending reports: accepted = the depth i, plus 1 for a kept ending
 * before the bonus (SPRINTER's target keeping the token); rejected for kind
 * S+1; one target call; an iteration still going on at the horizon ends
 * there with i accepted drafts and the law's horizon_calls (SPRINTER: 0).
 * The Rao-Blackwellised rejections (kernels built with SD_OBS_RB) add, at
 * every drafting position, the table's rejected mass Σ_y end_rej(y): the
 * conditional probability of a rejection there, which is the stand-in of
 * token and biased (sd_verifier.h). */
#ifndef SD_KERNEL_LAW_H
#define SD_KERNEL_LAW_H

#include "../exact/sd_exact_gen.h"
#include "../engine/sd_verifier.h"

/* The verifier's position law at par (G = par's draft length, SIZE_MAX for
 * the horizon), allocated into *out (sd_pos_law_free).  SD_EUSAGE when the
 * kernel does not apply (parameters the step itself refuses, a plan with
 * no law). */
typedef int (*sd_kernel_law_fn)(const sd_chain *c, const sd_params *par, sd_pos_law *out,
                                sd_error *err);

/* Bytes of the tables for chain c and a law with S states (SIZE_MAX on
 * overflow): rows·(S+2) alias tables of 2^⌈log2((S+2)·2^⌈log2 V⌉)⌉ entries
 * of 8 bytes, with rows = V (a time-homogeneous chain) or T·V. */
size_t sd_kernel_law_bytes(const sd_chain *c, size_t S);

/* sd_kernel_type.plan_new for the law `law`: SD_EUSAGE without a message
 * when m has no stored chain or law() refuses; SD_ETOOBIG before
 * allocating when the tables exceed max_bytes (0: 1 GiB); SD_ENOMEM.  The
 * tables are built on `threads` threads (0: all; small tables on one) and
 * do not depend on it. */
int sd_kernel_law_plan_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                           unsigned threads, sd_kernel_law_fn law, sd_error *err);
void sd_kernel_law_plan_free(void *plan);
int sd_kernel_law_work_new(const void *plan, void **work, sd_error *err);
void sd_kernel_law_work_free(void *work);
/* Trials lo..hi-1 of run `seed` in trial order into *obs: stats (L = 0),
 * positions, cells (L > 0: positions 1..L are run, stats untouched), tokens,
 * and rb when asked. */
void sd_kernel_law_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                       const sd_observe *obs);

#define SD_KERNEL_LAW_SUPPORTS (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_TOKENS)

/* Defines `static const sd_kernel_type ID` named NAME from the position law
 * LAW (an sd_kernel_law_fn) feeding SUPPORTS. */
#define SD_KERNEL_LAW_DEFINE(ID, NAME, LAW, SUPPORTS)                                              \
    static int ID##_plan_new(void **plan, const sd_model *m, const sd_params *par,                 \
                             size_t max_bytes, unsigned threads, sd_error *err)                    \
    {                                                                                              \
        return sd_kernel_law_plan_new(plan, m, par, max_bytes, threads, LAW, err);                 \
    }                                                                                              \
    static const sd_kernel_type ID = {NAME,                    SUPPORTS,                           \
                                      ID##_plan_new,           sd_kernel_law_plan_free,            \
                                      sd_kernel_law_work_new,  sd_kernel_law_work_free,            \
                                      sd_kernel_law_run}

#endif
