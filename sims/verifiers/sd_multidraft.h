/* sd_multidraft.h — the pieces shared by the multi-draft verifiers
 * (batch, broken-batch, rrs, spectr).
 *
 * Letters as in docs/notation.md: p is the draft, q the target.  Every function draws
 * its random numbers from the caller's stream and writes no globals, so it
 * is safe in the driver's threads as long as each thread passes its own
 * scratch. */
#ifndef SD_MULTIDRAFT_H
#define SD_MULTIDRAFT_H

#include <stddef.h>

#include "../engine/sd_verifier.h"

/* spectr --plan: the k-Seq selection or the OTM LP plan (Sun et al. 2023). */
typedef enum { SD_PLAN_KSEQ = 0, SD_PLAN_OTM = 1 } sd_plan_kind;
/* spectr's parameter slot of --plan (sims/verifiers/spectr.c). */
#define SD_SPECTR_SLOT_PLAN 0

/* Recursive rejection sampling at one position (SpecInfer, Sun et al. 2023 B.3;
 * Yin et al. 2024, Alg. 4 lines 12–19): draft tokens x[0..k-1]
 * (i.i.d. from p) are tried in turn, x[m-1] against q^m with
 *     q^1 = q,   q^{m+1} = [q^m - p]+,
 * accepted with probability min(1, q^m(x)/p(x)).  The first accepted one is
 * returned and *accepted is set to its 1-based index; if all k fail the
 * result is drawn from q^{k+1} and *accepted = 0.  The output law is q.
 *
 * Zero-mass residuals are never sampled: [q^m - p]+ has mass
 * r_m = TV(q^m, p), and draft m is rejected with probability r_m, so when
 * r_m = 0 (q^m = p) the rejection has probability 0; if rounding makes it
 * happen anyway the draft is accepted.
 *
 * extra_step = 1 is the negative control broken-batch: after all k fail it
 * samples [q^{k+1} - p]+ = q^{k+2} (Yin et al. 2024, Alg. 4 line 28 read literally,
 * one residual step too many) instead of q^{k+1}; when q^{k+2} has no mass
 * it falls back to q^{k+1}.
 *
 * w is the caller's scratch of V doubles. */
size_t sd_multidraft_rrs(const double *p, const double *q, size_t V,
                         const size_t *x, size_t k, int extra_step,
                         sd_stream *rng, double *w, size_t *accepted);

/* A token-level selection rule for the tree decoder: given the draft tokens
 * x[0..k-1] ~ p_t(.|prev) i.i.d. at position t, writes the selected token
 * *y, whose law must be q_t(.|prev).  Returns SD_OK or a status with err
 * set. */
typedef int (*sd_multidraft_select_fn)(void *ctx, const sd_chain *c, size_t t,
                                       size_t prev, const size_t *x, size_t k,
                                       sd_stream *rng, size_t *y, sd_error *err);

/* One iteration of Sun et al. 2023, Alg. 3 (DraftSelection) with k i.i.d. draft
 * sequences of length G = sd_draft_len(c, par, n) and the given
 * token-level selection.  Which drafts continue: at depth i the surviving
 * drafts are exactly those whose first i tokens equal the emitted
 * x_n..x_{n+i-1} (Alg. 3 line 11 selects by value: S_next = {z : z(1) = Y}),
 * whichever draft was accepted and even when Y came from the residual and
 * happens to equal a surviving draft's token.  Because the drafts' later
 * tokens are independent of the selection at earlier depths, the surviving
 * drafts' next tokens are i.i.d. p(.|Y) (Alg. 3's requirement, eq. 8);
 * they are drawn only when reached, which leaves every law unchanged.
 * The iteration ends at the first depth where no surviving draft agrees
 * with Y (a rejection: Y came from a residual; accepted = depth), or after
 * G depths, when one bonus token from q follows if the horizon allows
 * (Alg. 3 line 5).  One target call.
 *
 * drafts is the caller's scratch of k entries. */
int sd_multidraft_tree_step(const sd_chain *c, const sd_params *par,
                            sd_stream *rng, size_t n, size_t prev, size_t k,
                            sd_multidraft_select_fn select, void *ctx,
                            size_t *drafts, size_t *out, sd_iter *it,
                            sd_error *err);

/* One iteration of batch speculative decoding (Yin et al. 2024, Alg. 4, the unbiased
 * reading, docs/findings.md item 2), M = par->k drafts (the --M option) of length G = sd_draft_len: the M
 * first tokens go through sd_multidraft_rrs (extra_step as there); if one
 * is accepted only its draft continues, its later tokens verified
 * token by token against the original q_t with min(1, q/p) and a rejection
 * sampling [q_t - p_t]+; if all G are accepted one bonus token from q
 * follows when the horizon allows.  One target call.  drafts (M entries)
 * and w (V doubles) are the caller's scratch. */
int sd_multidraft_batch_step(const sd_chain *c, const sd_params *par,
                             sd_stream *rng, size_t n, size_t prev,
                             int extra_step, size_t *drafts, double *w,
                             size_t *out, sd_iter *it);

/* Scratch for batch and rrs: M or k draft tokens and V doubles; alloc
 * checks that the draft count is >= 1.  Shared alloc/free for the
 * verifier tables (field: "M" for batch, "k" for rrs). */
typedef struct sd_multidraft_scratch {
    size_t *drafts;
    double *w;
} sd_multidraft_scratch;

/* The verifier batch's alloc and parameters (M, gamma; sims/verifiers/batch.c),
 * shared with the control broken-batch, which differs from batch only in
 * its step and iteration law (extra_step = 1 of sd_multidraft_batch_step
 * and sd_law_batch). */
int sd_multidraft_batch_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
extern const sd_param_decl sd_multidraft_batch_params[];

/* The verifier rrs's alloc and step (sims/verifiers/rrs.c), shared with the control
 * broken-rrs-kernel. */
/* rrs-backoff: rrs on sparse-row models (src/sd_backoff.h; sims/kernels/kernel_backoff.c). */
extern const sd_kernel_type sd_rrs_kernel_backoff;
/* spectr-backoff: spectr (k-Seq) on sparse-row models (the same file). */
extern const sd_kernel_type sd_spectr_kernel_backoff;

int sd_multidraft_rrs_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
int sd_multidraft_rrs_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                           size_t n, size_t prev, size_t *out, sd_iter *it, sd_error *err);

int sd_multidraft_scratch_alloc(sd_multidraft_scratch **out, size_t V,
                                size_t count, const char *field, sd_error *err);
void sd_multidraft_scratch_free(void *state);

#endif
