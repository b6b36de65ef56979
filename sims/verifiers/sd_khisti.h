/* sd_khisti.h — the verifier khisti's selection and law with a hook for its
 * control broken-khisti (docs/controls.md). */
#ifndef SD_KHISTI_H
#define SD_KHISTI_H

#include "../engine/sd_verifier.h"

/* SD_KHISTI_CORRECT: khisti.c's rule.  SD_KHISTI_BUG_NO_SD: the token the
 * importance-sampling step selects is emitted as it is (no second,
 * speculative-sampling step): its law is p_I, not q. */
enum { SD_KHISTI_CORRECT = 0, SD_KHISTI_BUG_NO_SD = 1 };

/* The largest number of multisets of drafts (C(V+a-1, a)) the selection's
 * law enumerates. */
#define SD_KHISTI_MAX_MULTISETS ((size_t)1 << 20)

/* The k-draft tree step with the rule chosen by bug (state: khisti's
 * alloc), and the exact iteration law. */
int sd_khisti_step_mode(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng,
                        size_t n, size_t prev, size_t *out, sd_iter *it, int bug, sd_error *err);
int sd_khisti_law_mode(const sd_chain *c, const sd_params *par, size_t n, size_t prev,
                       struct sd_iter_law *out, int bug, sd_error *err);

int sd_khisti_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err);
void sd_khisti_free(void *state);
extern const sd_param_decl sd_khisti_params[];

#endif
