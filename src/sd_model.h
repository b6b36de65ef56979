/* sd_model.h — the one door through which every model enters: a stored
 * chain (a simdec-chain-1 file, a generated chain, a --p/--q problem) or
 * the on-demand Zipf model for large vocabularies (sd_zipf.h), whose rows
 * are computed when needed and never stored.
 *
 * Verifiers' generic steps read stored rows; a verifier that can run on the
 * Zipf model does so through a kernel of its own (sims/sd_verifier.h). */
#ifndef SD_MODEL_H
#define SD_MODEL_H

#include <stddef.h>

#include "sd_chain.h"
#include "sd_zipf.h"

/* A view of a model: it owns nothing (whoever built the chain or the Zipf
 * model frees it). */
typedef struct sd_model {
    size_t V, T;
    const sd_chain *chain; /* stored rows, or NULL */
    const sd_zipf *zipf;   /* the on-demand Zipf model, or NULL; exactly one is set */
} sd_model;

static inline sd_model sd_model_of_chain(const sd_chain *c)
{
    sd_model m = {c->V, c->T, c, NULL};
    return m;
}

static inline sd_model sd_model_of_zipf(const sd_zipf *z)
{
    sd_model m = {z->V, z->T, NULL, z};
    return m;
}

#endif
