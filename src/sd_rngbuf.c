/* sd_rngbuf.c — eight Philox4x32-10 blocks per call (sd_rngbuf.h).
 *
 * Philox4x32-10 (Salmon et al. 2011; Random123 philox.h): ten rounds of
 *   (lo0,hi0) = M0·c0,  (lo1,hi1) = M1·c2   (32×32 → 64-bit products)
 *   c ← (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),
 * with the key bumped by (W0, W1) between rounds.  The AVX2 code runs the
 * same rounds on eight counters in the eight 32-bit lanes of a register:
 * _mm256_mul_epu32 multiplies the even lanes, a 32-bit shift brings the odd
 * lanes down, and blends put the low and high halves back in place. */
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

__attribute__((target("avx2"))) static void S_refill_avx2(sd_rngbuf *s)
{
    uint32_t lo[SD_RNGBUF_BLOCKS], hi[SD_RNGBUF_BLOCKS];
    for (unsigned b = 0; b < SD_RNGBUF_BLOCKS; b++) {
        uint64_t blk = s->next_block + b;
        lo[b] = (uint32_t)blk;
        hi[b] = (uint32_t)(blk >> 32);
    }
    __m256i c0 = _mm256_loadu_si256((const __m256i *)(const void *)lo);
    __m256i c1 = _mm256_loadu_si256((const __m256i *)(const void *)hi);
    __m256i c2 = _mm256_set1_epi32((int)s->trial[0]);
    __m256i c3 = _mm256_set1_epi32((int)s->trial[1]);
    const __m256i m0 = _mm256_set1_epi32((int)PHILOX_M4x32_0);
    const __m256i m1 = _mm256_set1_epi32((int)PHILOX_M4x32_1);
    uint32_t k0 = s->key[0], k1 = s->key[1];
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
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 0 * SD_RNGBUF_BLOCKS), c0);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 1 * SD_RNGBUF_BLOCKS), c1);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 2 * SD_RNGBUF_BLOCKS), c2);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 3 * SD_RNGBUF_BLOCKS), c3);
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
