/* sd_model.h — the one door through which every model enters: a stored
 * chain (a simdec-chain-1 file, a generated chain, a --p/--q problem), the
 * on-demand Zipf model for large vocabularies (sd_zipf.h), whose rows are
 * computed when needed and never stored, or a generated chain streamed step
 * by step (sd_gen_stream, sd_chain.h), whose rows exist one step at a time.
 *
 * Verifiers' generic steps read stored rows; a verifier that can run on the
 * Zipf or a streamed model does so through a kernel of its own
 * (sims/engine/sd_verifier.h). */
#ifndef SD_MODEL_H
#define SD_MODEL_H

#include <stddef.h>

#include "sd_chain.h"
#include "sd_zipf.h"

/* A generated chain streamed step by step: its generator, and what a pass
 * over its rows learnt.  Every pass regenerates the rows (one MT19937
 * stream, O(T·V²) draws), so the exact values of token-level SD computed
 * on the way by a run's pass are kept for the evaluator (sims/verifiers/token.c). */
typedef struct sd_model_stream {
    sd_gen_params gen;
    int memo_ok;             /* 1: the three below hold */
    size_t memo_gamma;       /* the draft length they are for (0: the horizon) */
    double memo_rejections;  /* E[N_rej] (Theorem 1 or the token DP) */
    double memo_calls;       /* E[target calls] */
} sd_model_stream;

/* A view of a model: it owns nothing (whoever built the chain, the Zipf
 * model or the stream frees it). */
typedef struct sd_model {
    size_t V, T;
    const sd_chain *chain;   /* stored rows, or NULL */
    const sd_zipf *zipf;     /* the on-demand Zipf model, or NULL */
    sd_model_stream *stream; /* a streamed generated chain, or NULL; exactly one is set */
    const struct sd_backoff *backoff; /* sparse rows (sd_backoff.h: an ARPA model, the i.i.d. problem), or NULL */
} sd_model;

static inline sd_model sd_model_of_chain(const sd_chain *c)
{
    sd_model m = {c->V, c->T, c, NULL, NULL, NULL};
    return m;
}

static inline sd_model sd_model_of_zipf(const sd_zipf *z)
{
    sd_model m = {z->V, z->T, NULL, z, NULL, NULL};
    return m;
}

static inline sd_model sd_model_of_stream(sd_model_stream *s)
{
    sd_model m = {s->gen.V, s->gen.T, NULL, NULL, s, NULL};
    return m;
}

/* A sparse-row model (sd_backoff.h): rows on demand, never V×V. */
struct sd_backoff;
static inline sd_model sd_model_of_backoff(const struct sd_backoff *b, size_t V, size_t T)
{
    sd_model m = {V, T, NULL, NULL, NULL, b};
    return m;
}

#endif
