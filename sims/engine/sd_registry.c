/* sd_registry.c — the table of verifiers (sd_verifier.h).  Adding a
 * verifier to simdec itself: write sims/NAME.c ending in `const
 * sd_verifier_type sd_verifier_NAME = {...};`, declare it below and add it
 * to the table.  Plugins add theirs at run time (sd_verifier_add). */
#include <string.h>

#include "sd_params.h"
#include "sd_verifier.h"

extern const sd_verifier_type sd_verifier_token;
extern const sd_verifier_type sd_verifier_block;
extern const sd_verifier_type sd_verifier_greedy_block;
extern const sd_verifier_type sd_verifier_batch;
extern const sd_verifier_type sd_verifier_rrs;
extern const sd_verifier_type sd_verifier_spectr;
extern const sd_verifier_type sd_verifier_biased;
extern const sd_verifier_type sd_verifier_sprinter;
extern const sd_verifier_type sd_verifier_broken_block_residual;
extern const sd_verifier_type sd_verifier_broken_coin;
extern const sd_verifier_type sd_verifier_broken_batch;
extern const sd_verifier_type sd_verifier_broken_token_kernel;
extern const sd_verifier_type sd_verifier_broken_block_kernel;
extern const sd_verifier_type sd_verifier_broken_rrs_kernel;
extern const sd_verifier_type sd_verifier_tree_rrs;
extern const sd_verifier_type sd_verifier_tree_rrs_wor;
extern const sd_verifier_type sd_verifier_tree_topk;
extern const sd_verifier_type sd_verifier_traversal;
extern const sd_verifier_type sd_verifier_univer;
extern const sd_verifier_type sd_verifier_spectr_gbv;
extern const sd_verifier_type sd_verifier_broken_tree_residual;
extern const sd_verifier_type sd_verifier_broken_tree_wor;
extern const sd_verifier_type sd_verifier_broken_greedy_kernel;
extern const sd_verifier_type sd_verifier_broken_draft_peek;
extern const sd_verifier_type sd_verifier_onehot;
extern const sd_verifier_type sd_verifier_strict;
extern const sd_verifier_type sd_verifier_broken_onehot;
extern const sd_verifier_type sd_verifier_optimal_md;
extern const sd_verifier_type sd_verifier_broken_optimal_md;
extern const sd_verifier_type sd_verifier_hu_greedy;
extern const sd_verifier_type sd_verifier_broken_hu_greedy;
extern const sd_verifier_type sd_verifier_gumbel;
extern const sd_verifier_type sd_verifier_gumbel_list;
extern const sd_verifier_type sd_verifier_broken_gumbel;
extern const sd_verifier_type sd_verifier_broken_univer;
extern const sd_verifier_type sd_verifier_khisti;
extern const sd_verifier_type sd_verifier_broken_khisti;
extern const sd_verifier_type sd_verifier_tree_lp;
extern const sd_verifier_type sd_verifier_broken_tree_lp;

const sd_verifier_type *const sd_verifiers[] = {
    &sd_verifier_token,
    &sd_verifier_block,
    &sd_verifier_greedy_block,
    &sd_verifier_batch,
    &sd_verifier_rrs,
    &sd_verifier_spectr,
    &sd_verifier_biased,
    &sd_verifier_sprinter,
    &sd_verifier_tree_rrs,
    &sd_verifier_tree_rrs_wor,
    &sd_verifier_tree_topk,
    &sd_verifier_traversal,
    &sd_verifier_univer,
    &sd_verifier_spectr_gbv,
    &sd_verifier_tree_lp,
    &sd_verifier_onehot,
    &sd_verifier_strict,
    &sd_verifier_optimal_md,
    &sd_verifier_hu_greedy,
    &sd_verifier_gumbel,
    &sd_verifier_gumbel_list,
    &sd_verifier_khisti,
    &sd_verifier_broken_block_residual,
    &sd_verifier_broken_coin,
    &sd_verifier_broken_batch,
    &sd_verifier_broken_token_kernel,
    &sd_verifier_broken_block_kernel,
    &sd_verifier_broken_rrs_kernel,
    &sd_verifier_broken_tree_residual,
    &sd_verifier_broken_tree_wor,
    &sd_verifier_broken_greedy_kernel,
    &sd_verifier_broken_draft_peek,
    &sd_verifier_broken_onehot,
    &sd_verifier_broken_optimal_md,
    &sd_verifier_broken_hu_greedy,
    &sd_verifier_broken_gumbel,
    &sd_verifier_broken_univer,
    &sd_verifier_broken_khisti,
    &sd_verifier_broken_tree_lp,
    NULL,
};

/* Verifiers added at run time (plugins).  Added once at start-up, before
 * any thread runs; read-only afterwards. */
#define S_ADDED_MAX 256
static const sd_verifier_type *S_added[S_ADDED_MAX];
static size_t S_nadded;

const sd_verifier_type *sd_verifier_at(size_t n)
{
    size_t nb = sizeof sd_verifiers / sizeof *sd_verifiers - 1;
    if (n < nb)
        return sd_verifiers[n];
    return n - nb < S_nadded ? S_added[n - nb] : NULL;
}

const sd_verifier_type *sd_verifier_find(const char *name)
{
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++)
        if (strcmp(vt->name, name) == 0)
            return vt;
    return NULL;
}

int sd_verifier_add(const sd_verifier_type *vt, const char *source, sd_error *err)
{
    int rc = sd_params_check_decls(vt, err);
    if (rc) {
        sd_error_prefix(err, "%s", source);
        return rc;
    }
    const sd_verifier_type *old = sd_verifier_find(vt->name);
    if (old == vt)
        return SD_OK; /* the same plugin named twice */
    if (old)
        return sd_error_set(err, SD_EDATA, "%s: verifier '%s' is already defined", source, vt->name);
    if (S_nadded == S_ADDED_MAX)
        return sd_error_set(err, SD_ETOOBIG, "%s: more than %d plugin verifiers", source, S_ADDED_MAX);
    S_added[S_nadded++] = vt;
    return SD_OK;
}

const sd_verifier_type *sd_verifier_baseline(void)
{
    return &sd_verifier_token;
}
