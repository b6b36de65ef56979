/* sd_optimal_md.h — the verifier optimal-md's step and law with a hook
 * for its control broken-optimal-md (docs/controls.md). */
#ifndef SD_OPTIMAL_MD_H
#define SD_OPTIMAL_MD_H

#include "../engine/sd_verifier.h"

/* SD_OPTIMAL_MD_CORRECT: the rule of optimal_md.c.  SD_OPTIMAL_MD_BUG_FRESH_Q:
 * when the plan's Y is none of the drafts (a rejection) the token emitted is a
 * fresh draw from q instead of Y, the textbook "resample from the target"
 * bug: the output law is α-mixed towards the plan's acceptances plus (1-α) q,
 * not q unless the plan accepts nothing. */
enum { SD_OPTIMAL_MD_CORRECT = 0, SD_OPTIMAL_MD_BUG_FRESH_Q = 1 };

int sd_optimal_md_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                            size_t n, size_t prev, size_t *out, sd_iter *it, int bug, sd_error *err);

/* The exact law of one iteration under the rule chosen by bug. */
int sd_optimal_md_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                           struct sd_iter_law *out, int bug, sd_error *err);

/* optimal-md's parameters, alloc and free, shared with broken-optimal-md. */
int sd_optimal_md_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
void sd_optimal_md_free(void *state);
extern const sd_param_decl sd_optimal_md_params[];

#endif
