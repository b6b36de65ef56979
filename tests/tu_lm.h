/* tu_lm.h — two small hand-written ARPA bigram models and a draft with its
 * own vocabulary, shared by the n-gram tests, with their dense rows computed
 * straight from the numbers (the reference the sparse code is checked
 * against).
 *
 * Tokens 0 </s>, 1 <s>, 2 a, 3 b, 4 c; rows do not sum to 1 (rounded log10
 * values): the models renormalise. */
#ifndef TU_LM_H
#define TU_LM_H

#include <stddef.h>
#include <stdint.h>

struct sd_backoff;
struct sd_chain;
struct sd_exact_values;
struct sd_params;
struct sd_sim_result;
struct sd_verifier_type;

typedef struct {
    double uni[5], bo[5];
    struct { int a, x; double lp; } bi[8];
    size_t nbi;
} tu_lmdef;

extern const tu_lmdef tu_lm_target, tu_lm_draft;

/* tu_lm_target's unigrams with their backoff weights, as the ARPA section
 * of a file that writes its higher orders by hand. */
#define TU_LM_UNIGRAMS                                                                                                 \
    "\\1-grams:\n"                                                                                                     \
    "-0.6990\t</s>\n"                                                                                                  \
    "-99\t<s>\t-0.30103\n"                                                                                             \
    "-0.5229\ta\t-0.1\n"                                                                                               \
    "-0.6990\tb\t-0.2\n"                                                                                               \
    "-0.5229\tc\t0.05\n"

/* The ARPA text of d, malloc'd; the caller frees it. */
char *tu_lm_arpa_text(const tu_lmdef *d);

/* Katz rows straight from the numbers: 10^bigram if listed, else
 * 10^(bo(a) + uni(x)); <s> gets 0; each row normalised. */
void tu_lm_dense_rows(const tu_lmdef *d, double r[5][5]);

/* A draft with its own vocabulary: </s> <s> a b d (no c; d is not a target
 * word), as ARPA text, and its rows over the target's words: c gets 0, d is
 * dropped, each row renormalised; after c (a word it lacks) its unigram. */
extern const char tu_lm_draft_own[];
void tu_lm_dense_draft_own(double p[5][5]);

/* vt with par on the backoff model m by the kernel named vt->name
 * "-backoff" (asserted; seed, 40000 trials, 2 threads), beside the exact
 * values on the same rows stored in c: *ex the exact values, *res the
 * estimates (sd_sim_result_free it), *zr and *zc the z-scores of the
 * rejections and the target calls. */
void tu_lm_kernel_vs_exact(const struct sd_verifier_type *vt, const struct sd_params *par, const struct sd_backoff *m,
                           const struct sd_chain *c, uint64_t seed, struct sd_exact_values *ex,
                           struct sd_sim_result *res, double *zr, double *zc);

/* The rows of the backoff model m stored as a chain (x_0 = m->start),
 * validated (asserted); sd_chain_free it. */
struct sd_chain *tu_lm_stored(const struct sd_backoff *m);

#endif
