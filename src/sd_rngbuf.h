/* sd_rngbuf.h — the per-trial Philox stream of sd_rng.h, generated eight
 * counter blocks at a time.
 *
 * An sd_rngbuf positioned at (seed, trial) yields exactly the numbers of
 * sd_stream (same key = seed, counter = (block, trial), same order of the
 * four 32-bit words of a block, same 53-bit uniforms): only the way they are
 * computed differs.  Philox4x32-10 is a function of the counter, so eight
 * consecutive blocks are computed at once, with AVX-512F or AVX2 when the
 * processor has it (checked at run time, once) and by the scalar Random123 code
 * otherwise.  The arithmetic is on 32-bit integers, so every path gives the
 * same bits on every machine.  Blocks computed past the end of a trial are
 * discarded; they belong to no other trial.  A refill leaves the words in
 * stream order and beside them the uniform of each pair of words, so a
 * draw is a load and an increment.
 *
 * Cost per 53-bit uniform, refills included (one thread, 1000 uniforms per
 * trial, on the 2-core Xeon of docs/performance.md): about 1.8 ns with
 * AVX-512, 2.3 ns with AVX2, 5.2 ns scalar. */
#ifndef SD_RNGBUF_H
#define SD_RNGBUF_H

#include <stddef.h>
#include <stdint.h>

#define SD_RNGBUF_BLOCKS 8u                       /* counter blocks per refill */
#define SD_RNGBUF_WORDS (4u * SD_RNGBUF_BLOCKS)   /* 32-bit words per refill */
_Static_assert((SD_RNGBUF_WORDS & (SD_RNGBUF_WORDS - 1)) == 0, "sd_rngbuf_uniform's test needs a power of two");

typedef struct sd_rngbuf {
    /* uni[j]: the uniform of words 2j and 2j+1 of buf (sd_rngbuf_uniform's
     * value at an even pos), computed by the refill. */
    double uni[SD_RNGBUF_WORDS / 2];
    /* Word w (0..3) of block b (0..7) of the current refill is at
     * buf[4 * b + w]: the stream's order (the refill transposes). */
    uint32_t buf[SD_RNGBUF_WORDS];
    unsigned pos;         /* words of buf already used; SD_RNGBUF_WORDS: empty */
    uint64_t next_block;  /* block counter of the next refill's first block, a multiple of
                           * SD_RNGBUF_BLOCKS (so a refill's blocks share counter word 1) */
    uint32_t key[2];      /* the seed */
    uint32_t trial[2];    /* the trial, counter words 2 and 3 */
} sd_rngbuf;

/* Positions s at the start of trial `trial` of run `seed` (sd_stream_init). */
static inline void sd_rngbuf_init(sd_rngbuf *s, uint64_t seed, uint64_t trial)
{
    s->pos = SD_RNGBUF_WORDS;
    s->next_block = 0;
    s->key[0] = (uint32_t)seed;
    s->key[1] = (uint32_t)(seed >> 32);
    s->trial[0] = (uint32_t)trial;
    s->trial[1] = (uint32_t)(trial >> 32);
}

/* Computes the next SD_RNGBUF_BLOCKS blocks into s->buf and s->uni and sets pos = 0. */
void sd_rngbuf_refill(sd_rngbuf *s);

/* The stream across trials (the lockstep token kernel, sims/kernels/kernel_token.c):
 * for trials t0 .. t0+n-1 of run `seed`, Philox block `blk` of each
 * trial's stream, returned as the two 53-bit uniforms it holds,
 * uniform = U·2^-53 with U = (w0>>5)·2^26 + (w1>>6) (even[i]: uniform
 * 2·blk, words 0,1) and likewise from words 2,3 (odd[i]: uniform 2·blk+1)
 * — bit for bit the uniforms 2·blk and 2·blk+1 of sd_stream(seed, t0+i).
 * Thirty-two and eight trials at a time with AVX-512F, eight with AVX2
 * (run-time checks), scalar otherwise; every path gives the same bits.
 * Cost (make bench, "random-number floor"): about 0.9 ns per 53-bit
 * uniform with AVX-512 on the 2-core Xeon of docs/performance.md. */
void sd_rngbuf_trials(uint64_t seed, uint64_t blk, uint64_t t0, size_t n, uint64_t *even,
                      uint64_t *odd);

/* The same for the trials t0 + idx[0], ..., t0 + idx[n-1] (any order,
 * repeats allowed): even[i], odd[i] are uniforms 2·blk and 2·blk+1 of
 * sd_stream(seed, t0 + idx[i]).  For kernels whose trials advance in
 * lockstep but drop out at different times (sims/kernels/kernel_block.c). */
void sd_rngbuf_trials_at(uint64_t seed, uint64_t blk, uint64_t t0, const uint32_t *idx, size_t n,
                         uint64_t *even, uint64_t *odd);

/* The stream across trials word by word (the token kernel, sims/kernels/kernel_token.c):
 * for trials t0 .. t0+n-1 of run `seed`, the four 32-bit words of Philox
 * block `blk` of each trial's stream — words 4·blk .. 4·blk+3 of
 * sd_stream(seed, t0+i), in sd_stream_u32's order — as w[r][i] = word_r·2^21,
 * the high 32 bits of a 53-bit integer.  Thirty-two and eight trials at a
 * time with AVX-512F, eight with AVX2, scalar otherwise; the same bits on
 * every path. */
void sd_rngbuf_trials_hi(uint64_t seed, uint64_t blk, uint64_t t0, size_t n, uint64_t *const w[4]);

/* The same for the trials t0 + idx[0], ..., t0 + idx[n-1] (any order,
 * repeats allowed): w[r][i] = word_r·2^21 of Philox block blk of
 * sd_stream(seed, t0 + idx[i]) (the block kernel, sims/kernels/kernel_block.c). */
void sd_rngbuf_trials_hi_at(uint64_t seed, uint64_t blk, uint64_t t0, const uint32_t *idx, size_t n,
                            uint64_t *const w[4]);

/* 1 if refills use the AVX2 code on this processor. */
int sd_rngbuf_vectorised(void);

/* 1 if the processor has AVX-512F (sd_rngbuf_trials and the token kernel
 * then use sixteen- and eight-lane code). */
int sd_rngbuf_avx512(void);

/* 1 if it has AVX-512F and DQ (the block kernel's vector passes). */
int sd_rngbuf_avx512dq(void);

/* 1 if it has AVX-512F and VPOPCNTDQ (the token kernel's replay). */
int sd_rngbuf_avx512popcnt(void);

/* Tests only: caps the instruction set that sd_rngbuf_avx512(),
 * sd_rngbuf_avx512dq(), sd_rngbuf_avx512popcnt() and
 * sd_rngbuf_vectorised() report (and every vector path uses, the kernels'
 * included): 0 scalar, 1 AVX2, 2 or -1 whatever the processor has (the
 * default).  Not for use while other threads run kernels. */
void sd_rngbuf_cap_isa(int isa);

/* sd_rngbuf_uniform when pos is odd or SD_RNGBUF_WORDS. */
double sd_rngbuf_uniform_slow(sd_rngbuf *s);

/* The next 32 bits (sd_stream_u32). */
static inline uint32_t sd_rngbuf_u32(sd_rngbuf *s)
{
    if (s->pos == SD_RNGBUF_WORDS)
        sd_rngbuf_refill(s);
    return s->buf[s->pos++];
}

/* A uniform double in [0,1) with 53 bits (sd_stream_uniform, same bits):
 * from an even pos (the usual case: the callers draw only uniforms) the
 * refill has computed it.  SD_RNGBUF_WORDS is a power of two, so
 * pos & ~(SD_RNGBUF_WORDS - 2) == 0 says pos is even and below SD_RNGBUF_WORDS. */
static inline double sd_rngbuf_uniform(sd_rngbuf *s)
{
    unsigned k = s->pos;
    if (__builtin_expect((k & ~(SD_RNGBUF_WORDS - 2u)) == 0, 1)) {
        s->pos = k + 2;
        return s->uni[k >> 1];
    }
    return sd_rngbuf_uniform_slow(s);
}

#endif
