/* sd_rngbuf.c — eight Philox4x32-10 blocks per call (sd_rngbuf.h).
 *
 * Philox4x32-10 (Salmon et al. 2011; Random123 philox.h): ten rounds of
 *   (lo0,hi0) = M0·c0,  (lo1,hi1) = M1·c2   (32×32 → 64-bit products)
 *   c ← (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),
 * with the key bumped by (W0, W1) between rounds.  The AVX2 code runs the
 * same rounds on eight counters in the eight 32-bit lanes of a register:
 * _mm256_mul_epu32 multiplies the even lanes, a 32-bit shift brings the odd
 * lanes down, and blends put the low and high halves back in place.
 * sd_rngbuf_trials runs the same rounds with the trial, not the block, varying
 * across the lanes. */
#include "sd_rngbuf.h"

#include <Random123/philox.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define S_HAVE_X86 1
#else
#define S_HAVE_X86 0
#endif

static void S_refill_scalar(sd_rngbuf *s)
{
    philox4x32_key_t key = {{s->key[0], s->key[1]}};
    for (unsigned b = 0; b < SD_RNGBUF_BLOCKS; b++) {
        uint64_t blk = s->next_block + b;
        philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), s->trial[0], s->trial[1]}};
        philox4x32_ctr_t out = philox4x32(ctr, key);
        for (unsigned w = 0; w < 4; w++)
            s->buf[w * SD_RNGBUF_BLOCKS + b] = out.v[w];
    }
}

#if S_HAVE_X86
/* lo and hi halves of m·c for the eight lanes of c. */
__attribute__((target("avx2"))) static inline void S_mulhilo8(__m256i c, __m256i m, __m256i *lo,
                                                               __m256i *hi)
{
    __m256i pe = _mm256_mul_epu32(c, m);
    __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

/* Ten Philox rounds on eight counters (c0..c3, one 32-bit lane each). */
__attribute__((target("avx2"))) static inline void S_rounds8(__m256i *c, uint32_t k0, uint32_t k1)
{
    const __m256i m0 = _mm256_set1_epi32((int)PHILOX_M4x32_0);
    const __m256i m1 = _mm256_set1_epi32((int)PHILOX_M4x32_1);
    __m256i c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    for (int r = 0; r < 10; r++) {
        __m256i lo0, hi0, lo1, hi1;
        S_mulhilo8(c0, m0, &lo0, &hi0);
        S_mulhilo8(c2, m1, &lo1, &hi1);
        __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
        __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 += PHILOX_W32_0;
        k1 += PHILOX_W32_1;
    }
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
}

__attribute__((target("avx2"))) static void S_refill_avx2(sd_rngbuf *s)
{
    uint32_t lo[SD_RNGBUF_BLOCKS], hi[SD_RNGBUF_BLOCKS];
    for (unsigned b = 0; b < SD_RNGBUF_BLOCKS; b++) {
        uint64_t blk = s->next_block + b;
        lo[b] = (uint32_t)blk;
        hi[b] = (uint32_t)(blk >> 32);
    }
    __m256i c[4];
    c[0] = _mm256_loadu_si256((const __m256i *)(const void *)lo);
    c[1] = _mm256_loadu_si256((const __m256i *)(const void *)hi);
    c[2] = _mm256_set1_epi32((int)s->trial[0]);
    c[3] = _mm256_set1_epi32((int)s->trial[1]);
    S_rounds8(c, s->key[0], s->key[1]);
    for (unsigned w = 0; w < 4; w++)
        _mm256_storeu_si256((__m256i *)(void *)(s->buf + w * SD_RNGBUF_BLOCKS), c[w]);
}

/* The 53-bit integers (wa>>5)·2^26 + (wb>>6) of the eight lanes, in lane
 * order, to out[0..7]: a' = wa>>5 and b' = wb with its low 6 bits cleared
 * are interleaved into 64-bit lanes a'·2^32 + b' (the 64-bit permute puts
 * lanes 0-3 in the low unpack, 4-7 in the high), then shifted right by 6. */
__attribute__((target("avx2"))) static inline void S_u53x8(__m256i wa, __m256i wb, uint64_t *out)
{
    __m256i a = _mm256_permute4x64_epi64(_mm256_srli_epi32(wa, 5), 0xD8);
    __m256i b = _mm256_permute4x64_epi64(_mm256_and_si256(wb, _mm256_set1_epi32(~63)), 0xD8);
    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_srli_epi64(_mm256_unpacklo_epi32(b, a), 6));
    _mm256_storeu_si256((__m256i *)(void *)(out + 4), _mm256_srli_epi64(_mm256_unpackhi_epi32(b, a), 6));
}

/* Trials t0 .. t0 + 8·⌊n/8⌋ - 1 of sd_rngbuf_trials; returns how many. */
__attribute__((target("avx2"))) static size_t S_trials_avx2(uint64_t seed, uint64_t blk, uint64_t t0,
                                                            size_t n, uint64_t *even, uint64_t *odd)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32_t lo[8], hi[8];
        for (unsigned l = 0; l < 8; l++) {
            uint64_t t = t0 + i + l;
            lo[l] = (uint32_t)t;
            hi[l] = (uint32_t)(t >> 32);
        }
        __m256i c[4];
        c[0] = _mm256_set1_epi32((int)(uint32_t)blk);
        c[1] = _mm256_set1_epi32((int)(uint32_t)(blk >> 32));
        c[2] = _mm256_loadu_si256((const __m256i *)(const void *)lo);
        c[3] = _mm256_loadu_si256((const __m256i *)(const void *)hi);
        S_rounds8(c, (uint32_t)seed, (uint32_t)(seed >> 32));
        S_u53x8(c[0], c[1], even + i);
        S_u53x8(c[2], c[3], odd + i);
    }
    return i;
}

/* The same with AVX-512F on sixteen trials: 32-bit multiplies of the even
 * and odd lanes merged under a mask, three-way XORs in one instruction. */
__attribute__((target("avx512f"))) static inline void S_mulhilo16(__m512i c, __m512i m, __m512i *lo,
                                                                   __m512i *hi)
{
    __m512i pe = _mm512_mul_epu32(c, m);
    __m512i po = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), m);
    *lo = _mm512_mask_blend_epi32((__mmask16)0xAAAA, pe, _mm512_slli_epi64(po, 32));
    *hi = _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(pe, 32), po);
}

/* wa>>5 and wb's top 26 bits as 53-bit integers, lanes in order, to out[0..15]. */
__attribute__((target("avx512f"))) static inline void S_u53x16(__m512i wa, __m512i wb, uint64_t *out)
{
    const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    __m512i a = _mm512_srli_epi32(wa, 5), b = _mm512_and_si512(wb, _mm512_set1_epi32(~63));
    _mm512_storeu_si512((void *)out, _mm512_srli_epi64(_mm512_permutex2var_epi32(b, lo_idx, a), 6));
    _mm512_storeu_si512((void *)(out + 8), _mm512_srli_epi64(_mm512_permutex2var_epi32(b, hi_idx, a), 6));
}

__attribute__((target("avx512f"))) static size_t S_trials_avx512(uint64_t seed, uint64_t blk,
                                                                 uint64_t t0, size_t n, uint64_t *even,
                                                                 uint64_t *odd)
{
    const __m512i m0 = _mm512_set1_epi32((int)PHILOX_M4x32_0);
    const __m512i m1 = _mm512_set1_epi32((int)PHILOX_M4x32_1);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32_t lo[16], hi[16];
        for (unsigned l = 0; l < 16; l++) {
            uint64_t t = t0 + i + l;
            lo[l] = (uint32_t)t;
            hi[l] = (uint32_t)(t >> 32);
        }
        __m512i c0 = _mm512_set1_epi32((int)(uint32_t)blk);
        __m512i c1 = _mm512_set1_epi32((int)(uint32_t)(blk >> 32));
        __m512i c2 = _mm512_loadu_si512((const void *)lo);
        __m512i c3 = _mm512_loadu_si512((const void *)hi);
        uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
        for (int r = 0; r < 10; r++) {
            __m512i lo0, hi0, lo1, hi1;
            S_mulhilo16(c0, m0, &lo0, &hi0);
            S_mulhilo16(c2, m1, &lo1, &hi1);
            c0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32((int)k0), 0x96);
            c2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32((int)k1), 0x96);
            c1 = lo1;
            c3 = lo0;
            k0 += PHILOX_W32_0;
            k1 += PHILOX_W32_1;
        }
        S_u53x16(c0, c1, even + i);
        S_u53x16(c2, c3, odd + i);
    }
    return i;
}

int sd_rngbuf_avx512(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512f") ? 1 : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}
#endif

#if !S_HAVE_X86
int sd_rngbuf_avx512(void)
{
    return 0;
}
#endif

int sd_rngbuf_vectorised(void)
{
#if S_HAVE_X86
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
#else
    return 0;
#endif
}

void sd_rngbuf_refill(sd_rngbuf *s)
{
#if S_HAVE_X86
    if (sd_rngbuf_vectorised())
        S_refill_avx2(s);
    else
#endif
        S_refill_scalar(s);
    s->next_block += SD_RNGBUF_BLOCKS;
    s->pos = 0;
}

void sd_rngbuf_trials(uint64_t seed, uint64_t blk, uint64_t t0, size_t n, uint64_t *even,
                      uint64_t *odd)
{
    size_t i = 0;
#if S_HAVE_X86
    if (sd_rngbuf_avx512())
        i = S_trials_avx512(seed, blk, t0, n, even, odd);
    if (sd_rngbuf_vectorised())
        i += S_trials_avx2(seed, blk, t0 + i, n - i, even + i, odd + i);
#endif
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (; i < n; i++) {
        uint64_t t = t0 + i;
        philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)t, (uint32_t)(t >> 32)}};
        philox4x32_ctr_t w = philox4x32(ctr, key);
        even[i] = ((uint64_t)(w.v[0] >> 5) << 26) | (w.v[1] >> 6);
        odd[i] = ((uint64_t)(w.v[2] >> 5) << 26) | (w.v[3] >> 6);
    }
}
