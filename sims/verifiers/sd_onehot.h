/* sd_onehot.h — the verifier onehot's step with a hook for its control
 * broken-onehot (docs/controls.md). */
#ifndef SD_ONEHOT_H
#define SD_ONEHOT_H

#include "../engine/sd_verifier.h"

/* SD_ONEHOT_CORRECT: the rule of onehot.c.  SD_ONEHOT_BUG_KEEP_X: on a
 * rejection the next draft or the final draw uses the target with the
 * rejected token left in (q, not q without x): at one draft the output
 * law is q(y) (1 + p(y) - sum_x p(x) q(x)), not q unless p(y) equals
 * sum_x p(x) q(x) wherever q(y) > 0: biased towards the likely drafts. */
enum { SD_ONEHOT_CORRECT = 0, SD_ONEHOT_BUG_KEEP_X = 1 };

/* One iteration of onehot (k = par->k drafts of length sd_draft_len) with
 * the rule chosen by bug; state from onehot's alloc. */
int sd_onehot_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                        size_t n, size_t prev, size_t *out, sd_iter *it, int bug,
                        sd_error *err);

/* onehot's parameters, alloc and free, shared with broken-onehot. */
int sd_onehot_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
extern const sd_param_decl sd_onehot_params[];

#endif
