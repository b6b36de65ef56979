/* sd_referee.h — the referee: every lossless verifier's exact expected
 * accepted tokens per iteration beside the optimum of its class
 * (`simdec referee`, docs/referee.md).
 *
 * Classes, read from the parameters a verifier declares (no verifier is
 * named here):
 *   - declares "tree": a draft token tree; the optimum is tree-valid (the
 *     best valid verifier for the drafted tree, treelp/), with tree-ot
 *     (full information) beside it as a bound;
 *   - declares "k" or "M" (a number of i.i.d. drafts): refereed at one
 *     draft position (its gamma set to 1 when it declares gamma), where the
 *     class's optimum is the k-draft optimum α_k = 1 - max_B [p(B)^k - q(B)]
 *     (Sun et al. 2023, src/sd_exact_otm.h); the optimum for drafts drawn
 *     without replacement (Hu et al. 2025) is given beside it; and, when it
 *     declares gamma and o->gamma > 1, a second row at gamma G against
 *     tree-valid on the tree (k, 1, ..., 1) of depth G drafted i.i.d. (k
 *     i.i.d. draft sequences are that tree);
 *   - otherwise one draft sequence of length gamma; the optimum is
 *     valid-verify (the best valid verifier, Sun et al. 2025, Def. 1), whose
 *     value is block verification's E[τ] (their Thm 2; the LP of
 *     lp/valid_verify.c reproduces it, tests/test_lp.c).
 * Controls (SD_VERIFIER_CONTROL) and verifiers that do not claim to be
 * lossless at their parameters are left out.
 *
 * The verifier's exact value: its iteration law (sd_verifier_type's
 * iteration_law) at (n = 1, x_0 = prev), accepted drafts of an outcome =
 * emitted - 1 after a rejection, else min(emitted, G), G its draft length;
 * for tree verifiers (their kind in sd_verifier_type.tree) the tree
 * enumeration (sims/exact/sd_exact_tree.h).  Where
 * neither exists or a computation is refused (too large), the row carries
 * NAN and a note saying why. */
#ifndef SD_REFEREE_H
#define SD_REFEREE_H

#include <stddef.h>

#include "../sims/engine/sd_verifier.h"

typedef struct sd_referee_row {
    const char *algo;          /* the verifier's name (borrowed from its type) */
    char params[160];          /* "k=2 gamma=1", the parameters the row used */
    char model[64];
    double exact_accepted;     /* NAN: not computed (see note) */
    double optimum;            /* of its class; NAN: not reached (see note) */
    const char *optimum_kind;  /* "valid-verify", "k-draft" or "tree-valid" (trees, and k-draft
                                  verifiers at gamma > 1) */
    double fraction;           /* exact_accepted / optimum (1 when both are 0), or NAN */
    double optimum_wor;        /* k-draft: the optimum without replacement; else NAN */
    double tree_ot;            /* tree: the tree-ot bound; else NAN */
    char note[240];            /* why something is missing, or "" */
} sd_referee_row;

typedef struct sd_referee_opts {
    size_t k;          /* drafts of the k-draft class (default 2) */
    size_t gamma;      /* draft length of the one-sequence class (default 2) */
    const char *tree;  /* --tree for the tree class, or NULL: each verifier's default */
} sd_referee_opts;

/* Appends to *rows (realloc'd; *n rows) one row per lossless verifier
 * (built in and added by plugins) for chain c from the context (t = 1,
 * x_0 = prev), the model named `model`.  Failures of one verifier become
 * that row's note; the status is SD_ENOMEM (or SD_EUSAGE for a context
 * outside the chain) only. */
int sd_referee_model(const sd_chain *c, const char *model, size_t prev, const sd_referee_opts *o,
                     sd_referee_row **rows, size_t *n, sd_error *err);

/* The fixed benchmark (`simdec referee` without model options, the figure
 * simdec-referee), model i of SD_REFEREE_NMODELS, into *out (the caller
 * frees it) and its name into *name:
 *   0 default           the default generated chain (V 7, T 50, model-seed 10)
 *   1 spectr-bernoulli  Sun et al. 2023's Bernoulli example: p = Ber(0.25),
 *                       q = Ber(0.75), i.i.d. (T 8)
 *   2 chain-zeros       the generated chain at V 5, T 8 with zeros put in:
 *                       p(b|a) = 0 where a+b = 0 mod 3, q(b|a) = 0 where
 *                       a+2b = 1 mod 4, rows renormalised
 *   3 fortunes-bigram   the ARPA model at arpa_path (its bigram the target,
 *                       its unigram the draft) on x_0 = <s> and the 15 words
 *                       of highest unigram probability, rows renormalised
 *                       over those 16 tokens (T 8); SD_EIO with err set when
 *                       the file is absent or unreadable.
 * The context of every model is t = 1 after x_0 = token 0. */
#define SD_REFEREE_NMODELS 4
#define SD_REFEREE_ARPA "build/lm/fortunes-bigram.arpa"
int sd_referee_bench_model(size_t i, const char *arpa_path, sd_chain **out, const char **name, sd_error *err);

#endif
