/* sd_hu_greedy.h — the verifier hu-greedy's step and law with a hook for
 * its control broken-hu-greedy (docs/controls.md). */
#ifndef SD_HU_GREEDY_H
#define SD_HU_GREEDY_H

#include "../engine/sd_verifier.h"

struct sd_iter_law;

/* SD_HU_GREEDY_CORRECT: the rule of hu_greedy.c.  SD_HU_GREEDY_BUG_P: the
 * sampled k-th draft X ~ p' (p off the k-1 fixed tokens T, renormalised) is
 * verified as if it came from p: accepted with min(1, q(X)/p(X)) and the
 * rejection drawn from [q - p]+ normalised; for y outside T the output law
 * is p'(y) min(1, q(y)/p(y)) + R [q - p]+(y)/TV(p, q), not q. */
enum { SD_HU_GREEDY_CORRECT = 0, SD_HU_GREEDY_BUG_P = 1 };

int sd_hu_greedy_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                           size_t n, size_t prev, size_t *out, sd_iter *it, int bug,
                           sd_error *err);
int sd_hu_greedy_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                          struct sd_iter_law *out, int bug, sd_error *err);

/* hu-greedy's parameters, alloc and free, shared with broken-hu-greedy. */
int sd_hu_greedy_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
void sd_hu_greedy_free(void *state);
extern const sd_param_decl sd_hu_greedy_params[];

#endif
