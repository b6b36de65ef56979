/* sd_block.h — internals shared by the block-verification simulators
 * (sims/verifiers/block.c, sims/controls/broken_block_residual.c, sims/verifiers/greedy_block.c).  Not a
 * public interface: verifiers are reached through sd_verifier.h. */
#ifndef SD_BLOCK_H
#define SD_BLOCK_H

#include <stdint.h>
#include <string.h>

#include "../engine/sd_verifier.h"

/* Which residual a block-verification iteration samples on rejection. */
/* block's own slot of --draft-policy (src/sd_draft.h); its kernel and the
 * output-first path decline a policy other than fixed. */
#define SD_BLOCK_SLOT_POLICY 0

typedef enum {
    SD_BLOCK_RESIDUAL_EQ4 = 0,      /* max(p_τ q(.|X^τ) - p(.|X^τ), 0): Sun et al. 2025, eq. 4 */
    SD_BLOCK_RESIDUAL_TOKENWISE = 1 /* [q - p]+ at X^τ: the vllm-ascend 7807 bug */
} sd_block_residual;

/* State of a block-verification run: V doubles of scratch.  Allocated by
 * sd_block_alloc (which refuses nothing: the scratch is O(V)) and released
 * by sd_block_free (accepts NULL). */
int sd_block_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
void sd_block_free(void *state);

/* One iteration of block verification (Sun et al. 2025, Alg. 2) with the given
 * residual; the arguments are those of sd_verifier_type.step. */
int sd_block_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                  size_t n, size_t prev, size_t *out, sd_iter *it, sd_block_residual kind);

/* The fast kernel of block verification (sims/kernels/kernel_block.c): per-row
 * tables sorted by q/p with prefix sums, O(log V) per drafted token; and
 * its broken variant (residual with π = 1), the control
 * broken-block-kernel. */
extern const sd_kernel_type sd_block_kernel;
extern const sd_kernel_type sd_block_kernel_broken;
/* block-backoff: sparse-row models (src/sd_backoff.h; sims/kernels/kernel_backoff.c). */
extern const sd_kernel_type sd_block_kernel_backoff;
/* The same with the token-wise residual at a rejection: the kernel of the
 * control broken-block-residual on sparse-row models. */
extern const sd_kernel_type sd_block_kernel_backoff_tokenwise;

/* Tests only: the block kernel trusts only the top `bits` (0..32) of each
 * draft uniform's 32-bit word w and computes the whole 53-bit uniform
 * whenever those leave the alias test open (32, the default: only where w
 * itself does; see sims/kernels/kernel_block.c), so that the tests run that path
 * often; the outcomes are the same for any value.  Not for use while other
 * threads run kernels. */
void sd_block_test_trust_bits(unsigned bits);

/* c ? a : b without a branch (the kernels' coin outcomes are unpredictable):
 * the bits of a where c is non-zero, of b elsewhere. */
static inline double sd_block_sel(int c, double a, double b)
{
    uint64_t ua, ub, m = -(uint64_t)(c != 0);
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ub ^= (ua ^ ub) & m;
    memcpy(&b, &ub, sizeof b);
    return b;
}

/* The sorted row of those kernels (and of greedy-block's): the tokens of
 * the row (p, q) by r = q/p decreasing (+inf where p = 0 < q, -1 where
 * p = q = 0, ties by token), so that π q > p (or a q > b p) holds on a
 * prefix: ord[V], rs[V rounded up to a multiple of 8] (r in that order,
 * padded with -1), prefix sums Q[V+1], P[V+1] of q and p in that order.
 * key: V entries of the caller's scratch. */
typedef struct sd_block_key {
    double r;
    uint32_t x;
} sd_block_key;
void sd_block_sort_row(const double *p, const double *q, size_t V, sd_block_key *key, double *rs, double *Q,
                       double *P, uint32_t *ord);

/* The threshold of a sorted row's ratio r (the block kernel stores these in
 * place of the ratios): the least double θ with fl(θ r) > 1, so that for
 * every double π in (0, 1]
 *     fl(π r) > 1  <=>  π >= θ
 * (fl, round to nearest, is monotone, so the π in (0, 1] with fl(π r) > 1
 * are those from a least one on); the least positive double for r = +inf
 * (π·inf = inf), +inf where no π <= 1 has it (r <= 1, among them the rows'
 * 0 and -1: fl(π r) <= fl(r) = r).  Greater r, smaller or equal θ. */
double sd_block_threshold(double r);

#endif
