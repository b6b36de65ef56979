/* sd_rng.h — reproducible random streams, one per trial.
 *
 * A stream is Philox4x32-10 (Salmon et al. 2011, Random123) keyed by the
 * 64-bit run seed, with the 64-bit trial index in the upper half of the
 * counter: the numbers a trial sees depend on (seed, trial) only, never on
 * which thread, process or machine ran it, so results are bit-identical for
 * any parallel split of the trials.
 *
 * Uniforms have 53 bits of resolution (two 32-bit outputs per double;
 * gsl_rng_uniform has only 32), in [0, 1): 0 can occur (probability
 * 2^-53), 1 cannot.  Acceptance tests must therefore be written
 * `u < ratio` (P = ratio exactly), never `u <= ratio`, which accepts a
 * token of ratio 0 when u = 0 (sglang issue 35771). */
#ifndef SD_RNG_H
#define SD_RNG_H

#include <stdint.h>

#include <Random123/philox.h>

typedef struct sd_stream {
    philox4x32_key_t key;
    philox4x32_ctr_t ctr;  /* v[0],v[1]: block counter; v[2],v[3]: trial */
    philox4x32_ctr_t out;  /* the current block of four 32-bit outputs */
    unsigned left;         /* outputs of `out` not yet used */
} sd_stream;

/* Positions the stream at the start of trial `trial` of the run `seed`. */
static inline void sd_stream_init(sd_stream *s, uint64_t seed, uint64_t trial)
{
    s->key.v[0] = (uint32_t)seed;
    s->key.v[1] = (uint32_t)(seed >> 32);
    s->ctr.v[0] = 0;
    s->ctr.v[1] = 0;
    s->ctr.v[2] = (uint32_t)trial;
    s->ctr.v[3] = (uint32_t)(trial >> 32);
    s->left = 0;
}

/* The next 32 random bits of the stream. */
static inline uint32_t sd_stream_u32(sd_stream *s)
{
    if (s->left == 0) {
        s->out = philox4x32(s->ctr, s->key);
        if (++s->ctr.v[0] == 0)
            ++s->ctr.v[1];
        s->left = 4;
    }
    return s->out.v[4 - s->left--];
}

/* A uniform double in [0,1) with 53 random bits. */
static inline double sd_stream_uniform(sd_stream *s)
{
    uint32_t a = sd_stream_u32(s) >> 5; /* 27 bits */
    uint32_t b = sd_stream_u32(s) >> 6; /* 26 bits */
    return ((double)a * 67108864.0 + (double)b) * (1.0 / 9007199254740992.0);
}

#endif
