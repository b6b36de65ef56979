/* sd_block.h — internals shared by the block-verification simulators
 * (sims/block.c, sims/broken_block_residual.c, sims/greedy_block.c).  Not a
 * public interface: verifiers are reached through sd_verifier.h. */
#ifndef SD_BLOCK_H
#define SD_BLOCK_H

#include "sd_verifier.h"

/* Which residual a block-verification iteration samples on rejection. */
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

/* The fast kernel of block verification (sims/kernel_block.c): per-row
 * tables sorted by q/p with prefix sums, O(log V) per drafted token; and
 * its broken variant (residual with π = 1), the control
 * broken-block-kernel. */
extern const sd_kernel_type sd_block_kernel;
extern const sd_kernel_type sd_block_kernel_broken;

/* Greedy block verification with other readings of Sun et al. 2025, Alg. 5
 * (registered nowhere; the tests run `check` on them, see
 * sims/greedy_block.c):
 *   _after_y:     the joint law in eq. 31 is taken from the context after
 *                 Y (Alg. 6 line 5 updates c before line 6 modifies Mb);
 *   _tokenwise:   eq. 31 read per token, [Mb(x|.) - Ms(x|.)]+;
 *   _unmodified:  Alg. 4 alone, no modification at all. */
extern const sd_verifier_type sd_verifier_greedy_block_after_y;
extern const sd_verifier_type sd_verifier_greedy_block_tokenwise;
extern const sd_verifier_type sd_verifier_greedy_block_unmodified;

#endif
