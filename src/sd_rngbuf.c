/* sd_rngbuf.c — eight Philox4x32-10 blocks per refill (sd_rngbuf.h).
 *
 * Philox4x32-10 (Salmon et al. 2011; Random123 philox.h): ten rounds of
 *   (lo0,hi0) = M0·c0,  (lo1,hi1) = M1·c2   (32×32 → 64-bit products)
 *   c ← (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),
 * with the key bumped by (W0, W1) between rounds.  The AVX2 code runs the
 * same rounds on eight counters in the eight 32-bit lanes of a register:
 * _mm256_mul_epu32 multiplies the even lanes, a 32-bit shift brings the odd
 * lanes down, and blends put the low and high halves back in place.
 * sd_rngbuf_trials runs the same rounds with the trial, not the block, varying
 * across the lanes; with AVX-512 it keeps one counter per 64-bit lane
 * instead, which needs no blends (S_philox8x1 below), and so does the
 * AVX-512 refill.  A refill transposes the blocks' words into stream order
 * and converts each pair of words to its 53-bit uniform (sd_rngbuf.h). */
#include "sd_rngbuf.h"

#include <Random123/philox.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define S_HAVE_X86 1
#else
#define S_HAVE_X86 0
#endif

/* The widest instruction set the vector paths may use (sd_rngbuf_cap_isa). */
static int S_isa_cap = 2;

/* The refill's code (S_refill_path), -1 until asked. */
static int S_path = -1;

void sd_rngbuf_cap_isa(int isa)
{
    __atomic_store_n(&S_isa_cap, isa < 0 ? 2 : isa, __ATOMIC_RELAXED);
    __atomic_store_n(&S_path, -1, __ATOMIC_RELAXED);
}

/* sd_stream_uniform of the words w0, w1: U·2^-53 with U = (w0>>5)·2^26 + (w1>>6). */
static inline double S_u53(uint32_t w0, uint32_t w1)
{
    return ((double)(w0 >> 5) * 67108864.0 + (double)(w1 >> 6)) * (1.0 / 9007199254740992.0);
}

__attribute__((noinline)) static void S_refill_scalar(sd_rngbuf *s)
{
    philox4x32_key_t key = {{s->key[0], s->key[1]}};
    for (unsigned b = 0; b < SD_RNGBUF_BLOCKS; b++) {
        uint64_t blk = s->next_block + b;
        philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), s->trial[0], s->trial[1]}};
        philox4x32_ctr_t out = philox4x32(ctr, key);
        for (unsigned w = 0; w < 4; w++)
            s->buf[4 * b + w] = out.v[w];
    }
    for (unsigned j = 0; j < SD_RNGBUF_WORDS / 2; j++)
        s->uni[j] = S_u53(s->buf[2 * j], s->buf[2 * j + 1]);
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

/* The uniforms of the word pairs (w0, w1) = (low, high half) of the four
 * 64-bit lanes of r, as sd_stream_uniform: (a·2^26 + b)·2^-53 with
 * a = w0>>5 < 2^27, b = w1>>6 < 2^26, by the exponent trick: with a in the
 * mantissa bits of 2^25 (whose ulp is 2^-27) the double is 2^25 + a·2^-27,
 * and with b in those of 2^-1 (ulp 2^-53) it is 2^-1 + b·2^-53; both
 * subtractions and the sum are exact (the sum is a multiple of 2^-53
 * below 1). */
__attribute__((target("avx2"))) static inline __m256d S_uni4(__m256i r)
{
    const __m256i ma = _mm256_set1_epi64x(0x07FFFFFF), ea = _mm256_set1_epi64x(0x4180000000000000ll);
    const __m256i eb = _mm256_set1_epi64x(0x3FE0000000000000ll);
    __m256i a = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(r, 5), ma), ea);
    __m256i b = _mm256_or_si256(_mm256_srli_epi64(r, 38), eb);
    return _mm256_add_pd(_mm256_sub_pd(_mm256_castsi256_pd(a), _mm256_set1_pd(33554432.0)),
                         _mm256_sub_pd(_mm256_castsi256_pd(b), _mm256_set1_pd(0.5)));
}

/* Lane j of the registers holds block 2j (j < 4) or 2(j-4)+1 (j >= 4) of
 * the refill, so that the in-lane unpacks below transpose the four words
 * registers into stream order with no lane crossing: unpacking the words of
 * lane j and j+4 of each 128-bit half gives blocks (2j, 2j+1) in one
 * register, stored at buf[8j .. 8j+7].  next_block is a multiple of 8, so
 * its low word plus 7 does not carry: blk_hi is the same for all lanes. */
__attribute__((target("avx2"))) static void S_refill_avx2(sd_rngbuf *s)
{
    __m256i c[4];
    c[0] = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)s->next_block),
                            _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    c[1] = _mm256_set1_epi32((int)(uint32_t)(s->next_block >> 32));
    c[2] = _mm256_set1_epi32((int)s->trial[0]);
    c[3] = _mm256_set1_epi32((int)s->trial[1]);
    S_rounds8(c, s->key[0], s->key[1]);
    __m256i a01 = _mm256_unpacklo_epi32(c[0], c[1]), a23 = _mm256_unpacklo_epi32(c[2], c[3]);
    __m256i b01 = _mm256_unpackhi_epi32(c[0], c[1]), b23 = _mm256_unpackhi_epi32(c[2], c[3]);
    __m256i r0 = _mm256_unpacklo_epi64(a01, a23), r1 = _mm256_unpackhi_epi64(a01, a23);
    __m256i r2 = _mm256_unpacklo_epi64(b01, b23), r3 = _mm256_unpackhi_epi64(b01, b23);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 0), r0);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 8), r1);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 16), r2);
    _mm256_storeu_si256((__m256i *)(void *)(s->buf + 24), r3);
    _mm256_storeu_pd(s->uni + 0, S_uni4(r0));
    _mm256_storeu_pd(s->uni + 4, S_uni4(r1));
    _mm256_storeu_pd(s->uni + 8, S_uni4(r2));
    _mm256_storeu_pd(s->uni + 12, S_uni4(r3));
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

/* Philox block blk of the eight trials t0 + idx[i..i+7] (idx NULL:
 * t0 + i..i+7), one per 32-bit lane of c[0..3]. */
__attribute__((target("avx2"))) static inline void S_block8(uint64_t seed, uint64_t blk, uint64_t t0,
                                                           const uint32_t *idx, size_t i, __m256i c[4])
{
    uint32_t lo[8], hi[8];
    for (unsigned l = 0; l < 8; l++) {
        uint64_t t = t0 + (idx ? idx[i + l] : i + l);
        lo[l] = (uint32_t)t;
        hi[l] = (uint32_t)(t >> 32);
    }
    c[0] = _mm256_set1_epi32((int)(uint32_t)blk);
    c[1] = _mm256_set1_epi32((int)(uint32_t)(blk >> 32));
    c[2] = _mm256_loadu_si256((const __m256i *)(const void *)lo);
    c[3] = _mm256_loadu_si256((const __m256i *)(const void *)hi);
    S_rounds8(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* Trials t0 + idx[i] (idx NULL: t0 + i), i < 8·⌊n/8⌋, of sd_rngbuf_trials;
 * returns how many. */
__attribute__((target("avx2"))) static size_t S_trials_avx2(uint64_t seed, uint64_t blk, uint64_t t0,
                                                            const uint32_t *idx, size_t n, uint64_t *even,
                                                            uint64_t *odd)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i c[4];
        S_block8(seed, blk, t0, idx, i, c);
        S_u53x8(c[0], c[1], even + i);
        S_u53x8(c[2], c[3], odd + i);
    }
    return i;
}

/* The eight 32-bit words of w, in lane order, as w·2^21 in 64-bit
 * integers at out[0..7]. */
__attribute__((target("avx2"))) static inline void S_hi8(__m256i w, uint64_t *out)
{
    __m256i lo = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(w));
    __m256i hi = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(w, 1));
    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_slli_epi64(lo, 21));
    _mm256_storeu_si256((__m256i *)(void *)(out + 4), _mm256_slli_epi64(hi, 21));
}

/* Trials t0 + idx[i] (idx NULL: t0 + i), i < 8·⌊n/8⌋, of
 * sd_rngbuf_trials_hi(_at); returns how many. */
__attribute__((target("avx2"))) static size_t S_hi_avx2(uint64_t seed, uint64_t blk, uint64_t t0,
                                                        const uint32_t *idx, size_t n, uint64_t *const w[4])
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i c[4];
        S_block8(seed, blk, t0, idx, i, c);
        for (int r = 0; r < 4; r++)
            S_hi8(c[r], w[r] + i);
    }
    return i;
}

/* The same with AVX-512F, eight trials per register in 64-bit lanes: a
 * 32-bit word lives in the low half of its lane and the high half is
 * never read (vpmuludq reads only the low halves; the output masks them).
 * Then a round is, per eight trials,
 *   P0 = M0·c0, P1 = M1·c2                  (vpmuludq: lo in the low half, hi in the high)
 *   c0 ← swap(P1) ^ c1 ^ k0,  c1 ← P1,  c2 ← swap(P0) ^ c3 ^ k1,  c3 ← P0,
 * where swap exchanges the halves of each lane (vpshufd, brings hi down):
 * two multiplies, two shuffles and two three-way XORs, with no blends.
 * In round 1 c0 = blk_lo is the same in every lane, so P0 is one scalar
 * product.  Four groups of eight are interleaved (32 trials per pass) to
 * hide the multiplies' latency. */
typedef struct {
    __m512i k0[10], k1[10]; /* round keys, broadcast */
    uint64_t p0;            /* M0·blk_lo: round 1's P0, the same for every trial */
    uint32_t c1;            /* blk_hi */
} S_key512;

__attribute__((target("avx512f"))) static void S_key512_init(S_key512 *K, uint64_t seed, uint64_t blk)
{
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        K->k0[r] = _mm512_set1_epi32((int)k0);
        K->k1[r] = _mm512_set1_epi32((int)k1);
        k0 += PHILOX_W32_0;
        k1 += PHILOX_W32_1;
    }
    K->p0 = (uint64_t)PHILOX_M4x32_0 * (uint32_t)blk;
    K->c1 = (uint32_t)(blk >> 32);
}

/* Philox4x32-10 of the counters (blk, t) for the 8·NG trials t in the
 * 64-bit lanes of t[0..NG-1]; c[j][w] receives word w of group j.  The
 * rounds are unrolled and the NG groups interleaved (independent chains
 * that hide the multiplies' latency). */
#define S_PHILOX_Z(NG)                                                                                  \
    __attribute__((target("avx512f"))) static inline void S_philox8x##NG(const S_key512 *K,           \
                                                                          const __m512i *t,             \
                                                                          __m512i c[][4])               \
    {                                                                                                   \
        const __m512i m0 = _mm512_set1_epi64((long long)PHILOX_M4x32_0);                                \
        const __m512i m1 = _mm512_set1_epi64((long long)PHILOX_M4x32_1);                                \
        const __m512i b1 = _mm512_set1_epi32((int)K->c1);                                               \
        const __m512i h0 = _mm512_set1_epi32((int)(uint32_t)(K->p0 >> 32));                             \
        const __m512i l0 = _mm512_set1_epi64((long long)(uint32_t)K->p0);                               \
        _Pragma("GCC unroll 4") for (int j = 0; j < NG; j++)                                           \
        { /* round 1: c0 = blk_lo, c1 = blk_hi in every lane, c2 = t_lo, c3 = t_hi */                   \
            __m512i P1 = _mm512_mul_epu32(t[j], m1);                                                    \
            c[j][0] = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(P1, _MM_PERM_CDAB), b1, K->k0[0],   \
                                                0x96);                                                  \
            c[j][1] = P1;                                                                               \
            c[j][2] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(t[j], 32), h0, K->k1[0], 0x96);       \
            c[j][3] = l0;                                                                               \
        }                                                                                               \
        _Pragma("GCC unroll 9") for (int r = 1; r < 10; r++)                                           \
            _Pragma("GCC unroll 4") for (int j = 0; j < NG; j++)                                       \
        {                                                                                               \
            __m512i P0 = _mm512_mul_epu32(c[j][0], m0), P1 = _mm512_mul_epu32(c[j][2], m1);             \
            c[j][0] = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(P1, _MM_PERM_CDAB), c[j][1],        \
                                                K->k0[r], 0x96);                                        \
            c[j][2] = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(P0, _MM_PERM_CDAB), c[j][3],        \
                                                K->k1[r], 0x96);                                        \
            c[j][1] = P1;                                                                               \
            c[j][3] = P0;                                                                               \
        }                                                                                               \
    }
S_PHILOX_Z(1)
S_PHILOX_Z(4)

/* (wa>>5)·2^26 + (wb>>6) from the low halves of the lanes:
 * (wa & ~31) << 21 | (wb & ~63) >> 6, the masks clearing the high halves. */
__attribute__((target("avx512f"))) static inline __m512i S_u53z8(__m512i wa, __m512i wb)
{
    const __m512i ma = _mm512_set1_epi64(0xFFFFFFE0ll), mb = _mm512_set1_epi64(0xFFFFFFC0ll);
    return _mm512_or_si512(_mm512_slli_epi64(_mm512_and_si512(wa, ma), 21),
                           _mm512_srli_epi64(_mm512_and_si512(wb, mb), 6));
}

__attribute__((target("avx512f"))) static inline void S_out8(__m512i t, const S_key512 *K, uint64_t *even,
                                                             uint64_t *odd)
{
    __m512i c[1][4];
    S_philox8x1(K, &t, c);
    _mm512_storeu_si512((void *)even, S_u53z8(c[0][0], c[0][1]));
    _mm512_storeu_si512((void *)odd, S_u53z8(c[0][2], c[0][3]));
}

/* Trials t0 + idx[i] (idx NULL: t0 + i), i < 8·⌊n/8⌋; returns how many. */
__attribute__((target("avx512f"))) static size_t S_trials_avx512(uint64_t seed, uint64_t blk, uint64_t t0,
                                                                 const uint32_t *idx, size_t n,
                                                                 uint64_t *even, uint64_t *odd)
{
    S_key512 K;
    S_key512_init(&K, seed, blk);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i base = _mm512_set1_epi64((long long)t0);
    size_t i = 0;
#define S_T(j) (idx ? _mm512_add_epi64(base, _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(idx + i + 8 * (j))))) \
                    : _mm512_add_epi64(base, _mm512_add_epi64(lane, _mm512_set1_epi64((long long)(i + 8 * (j))))))
    for (; i + 32 <= n; i += 32) {
        __m512i c[4][4], t[4] = {S_T(0), S_T(1), S_T(2), S_T(3)};
        S_philox8x4(&K, t, c);
        for (int j = 0; j < 4; j++) {
            _mm512_storeu_si512((void *)(even + i + 8 * j), S_u53z8(c[j][0], c[j][1]));
            _mm512_storeu_si512((void *)(odd + i + 8 * j), S_u53z8(c[j][2], c[j][3]));
        }
    }
    for (; i + 8 <= n; i += 8)
        S_out8(S_T(0), &K, even + i, odd + i);
#undef S_T
    return i;
}

/* Trials t0 + idx[i] (idx NULL: t0 + i), i < 8·⌊n/8⌋, of
 * sd_rngbuf_trials_hi(_at), 32 then 8 at a time: each word, in the low half
 * of its lane (the high half is garbage), masked and shifted to w·2^21. */
__attribute__((target("avx512f"))) static size_t S_hi_avx512(uint64_t seed, uint64_t blk, uint64_t t0,
                                                             const uint32_t *idx, size_t n, uint64_t *const w[4])
{
    S_key512 K;
    S_key512_init(&K, seed, blk);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), m32 = _mm512_set1_epi64(0xFFFFFFFFll);
    const __m512i t0v = _mm512_set1_epi64((long long)t0), base = _mm512_add_epi64(t0v, lane);
    size_t i = 0;
#define S_T(j) (idx ? _mm512_add_epi64(t0v, _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(idx + i + 8 * (j))))) \
                    : _mm512_add_epi64(base, _mm512_set1_epi64((long long)(i + 8 * (j)))))
#define S_PUT(j, r) _mm512_storeu_si512((void *)(w[r] + i + 8 * (j)), _mm512_slli_epi64(_mm512_and_si512(c[j][r], m32), 21))
    for (; i + 32 <= n; i += 32) {
        __m512i c[4][4], t[4] = {S_T(0), S_T(1), S_T(2), S_T(3)};
        S_philox8x4(&K, t, c);
        for (int j = 0; j < 4; j++)
            for (int r = 0; r < 4; r++)
                S_PUT(j, r);
    }
    for (; i + 8 <= n; i += 8) {
        __m512i c[1][4], t = S_T(0);
        S_philox8x1(&K, &t, c);
        for (int r = 0; r < 4; r++)
            S_PUT(0, r);
    }
#undef S_PUT
#undef S_T
    return i;
}

/* S_uni4 on the eight 64-bit lanes of r ((x & ma) | ea in one ternary-logic op). */
__attribute__((target("avx512f"))) static inline __m512d S_uni8(__m512i r)
{
    const __m512i ma = _mm512_set1_epi64(0x07FFFFFF), ea = _mm512_set1_epi64(0x4180000000000000ll);
    const __m512i eb = _mm512_set1_epi64(0x3FE0000000000000ll);
    __m512i a = _mm512_ternarylogic_epi64(_mm512_srli_epi64(r, 5), ma, ea, 0xEA);
    __m512i b = _mm512_or_si512(_mm512_srli_epi64(r, 38), eb);
    return _mm512_add_pd(_mm512_sub_pd(_mm512_castsi512_pd(a), _mm512_set1_pd(33554432.0)),
                         _mm512_sub_pd(_mm512_castsi512_pd(b), _mm512_set1_pd(0.5)));
}

/* The refill with AVX-512F: the eight blocks in the 64-bit lanes, a word in
 * the low half of its lane (the rounds of S_philox8x1, no blends).  Round 1
 * is specialised: c1 = blk_hi, c2 = t_lo, c3 = t_hi are the same in every
 * lane (next_block is a multiple of 8), so P1 = M1·t_lo is one scalar
 * product and the new c0, c1 are constants.  Lane j holds block
 * (0,4,1,5,2,6,3,7)[j]: merging c1 into the high halves of c0 (and c3 into
 * c2) gives each block's words (w0,w1) and (w2,w3) as 64-bit lanes, and the
 * in-lane 64-bit unpacks then put blocks 0-3 and 4-7 in stream order. */
__attribute__((target("avx512f"))) static void S_refill_avx512(sd_rngbuf *s)
{
    const __m512i m0 = _mm512_set1_epi64((long long)PHILOX_M4x32_0);
    const __m512i m1 = _mm512_set1_epi64((long long)PHILOX_M4x32_1);
    uint32_t k0 = s->key[0], k1 = s->key[1];
    uint64_t p1 = (uint64_t)PHILOX_M4x32_1 * s->trial[0];
    __m512i blk = _mm512_add_epi64(_mm512_set1_epi64((long long)s->next_block),
                                   _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7));
    __m512i P0 = _mm512_mul_epu32(blk, m0);
    __m512i c0 = _mm512_set1_epi32((int)((uint32_t)(p1 >> 32) ^ (uint32_t)(s->next_block >> 32) ^ k0));
    __m512i c1 = _mm512_set1_epi32((int)(uint32_t)p1);
    __m512i c2 = _mm512_xor_si512(_mm512_shuffle_epi32(P0, _MM_PERM_CDAB), _mm512_set1_epi32((int)(s->trial[1] ^ k1)));
    __m512i c3 = P0;
    /* The round keys by one vector add each (the empty asm hides the
     * constants from the compiler, which would otherwise broadcast each
     * round's key from a scalar: two instructions). */
    __m512i w0 = _mm512_set1_epi32((int)PHILOX_W32_0), w1 = _mm512_set1_epi32((int)PHILOX_W32_1);
    __asm__("" : "+v"(w0), "+v"(w1));
    __m512i kv0 = _mm512_set1_epi32((int)k0), kv1 = _mm512_set1_epi32((int)k1);
#pragma GCC unroll 9
    for (int r = 1; r < 10; r++) {
        kv0 = _mm512_add_epi32(kv0, w0);
        kv1 = _mm512_add_epi32(kv1, w1);
        __m512i P1;
        P0 = _mm512_mul_epu32(c0, m0);
        P1 = _mm512_mul_epu32(c2, m1);
        c0 = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(P1, _MM_PERM_CDAB), c1, kv0, 0x96);
        c2 = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(P0, _MM_PERM_CDAB), c3, kv1, 0x96);
        c1 = P1;
        c3 = P0;
    }
    __m512i x01 = _mm512_mask_shuffle_epi32(c0, 0xAAAA, c1, _MM_PERM_CDAB);
    __m512i x23 = _mm512_mask_shuffle_epi32(c2, 0xAAAA, c3, _MM_PERM_CDAB);
    __m512i r0 = _mm512_unpacklo_epi64(x01, x23), r1 = _mm512_unpackhi_epi64(x01, x23);
    _mm512_storeu_si512((void *)s->buf, r0);
    _mm512_storeu_si512((void *)(s->buf + 16), r1);
    _mm512_storeu_pd(s->uni, S_uni8(r0));
    _mm512_storeu_pd(s->uni + 8, S_uni8(r1));
}

/* Bit k set: the processor has feature k (0 AVX2, 1 AVX-512F, 2 AVX-512DQ,
 * 3 AVX-512 VPOPCNTDQ); asked once. */
static unsigned S_cpu(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = (__builtin_cpu_supports("avx2") ? 1 : 0) | (__builtin_cpu_supports("avx512f") ? 2 : 0) |
            (__builtin_cpu_supports("avx512dq") ? 4 : 0) | (__builtin_cpu_supports("avx512vpopcntdq") ? 8 : 0);
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return (unsigned)v;
}
#endif

/* The features of mask `need` (S_cpu's bits) are there and the cap allows `level`. */
static int S_can(unsigned need, int level)
{
#if S_HAVE_X86
    return (S_cpu() & need) == need && __atomic_load_n(&S_isa_cap, __ATOMIC_RELAXED) >= level;
#else
    (void)need;
    (void)level;
    return 0;
#endif
}

int sd_rngbuf_avx512(void)
{
    return S_can(2u, 2);
}

int sd_rngbuf_avx512dq(void)
{
    return S_can(2u | 4u, 2);
}

int sd_rngbuf_avx512popcnt(void)
{
    return S_can(2u | 8u, 2);
}

int sd_rngbuf_vectorised(void)
{
    return S_can(1u, 1);
}

/* sd_rngbuf_refill, inlined in its two callers here. */
static inline void S_refill(sd_rngbuf *s)
{
    /* 2 AVX-512F, 1 AVX2, 0 scalar: decided once (and again after sd_rngbuf_cap_isa). */
    int path = __atomic_load_n(&S_path, __ATOMIC_RELAXED);
    if (path < 0) {
        path = sd_rngbuf_avx512() ? 2 : sd_rngbuf_vectorised();
        __atomic_store_n(&S_path, path, __ATOMIC_RELAXED);
    }
#if S_HAVE_X86
    if (path == 2)
        S_refill_avx512(s);
    else if (path == 1)
        S_refill_avx2(s);
    else
#endif
        S_refill_scalar(s);
    s->next_block += SD_RNGBUF_BLOCKS;
    s->pos = 0;
}

void sd_rngbuf_refill(sd_rngbuf *s)
{
    S_refill(s);
}

double sd_rngbuf_uniform_slow(sd_rngbuf *s)
{
    if (s->pos == SD_RNGBUF_WORDS) {
        S_refill(s);
        s->pos = 2;
        return s->uni[0];
    }
    uint32_t w0 = sd_rngbuf_u32(s);
    return S_u53(w0, sd_rngbuf_u32(s));
}

/* Trials t0 + idx[i] (idx NULL: t0 + i) for i < n. */
static void S_trials(uint64_t seed, uint64_t blk, uint64_t t0, const uint32_t *idx, size_t n, uint64_t *even,
                     uint64_t *odd)
{
    size_t i = 0;
#if S_HAVE_X86
    if (sd_rngbuf_avx512())
        i = S_trials_avx512(seed, blk, t0, idx, n, even, odd);
    if (sd_rngbuf_vectorised())
        i += S_trials_avx2(seed, blk, idx ? t0 : t0 + i, idx ? idx + i : NULL, n - i, even + i, odd + i);
#endif
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (; i < n; i++) {
        uint64_t t = t0 + (idx ? idx[i] : i);
        philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)t, (uint32_t)(t >> 32)}};
        philox4x32_ctr_t w = philox4x32(ctr, key);
        even[i] = ((uint64_t)(w.v[0] >> 5) << 26) | (w.v[1] >> 6);
        odd[i] = ((uint64_t)(w.v[2] >> 5) << 26) | (w.v[3] >> 6);
    }
}

void sd_rngbuf_trials(uint64_t seed, uint64_t blk, uint64_t t0, size_t n, uint64_t *even,
                      uint64_t *odd)
{
    S_trials(seed, blk, t0, NULL, n, even, odd);
}

void sd_rngbuf_trials_at(uint64_t seed, uint64_t blk, uint64_t t0, const uint32_t *idx, size_t n,
                         uint64_t *even, uint64_t *odd)
{
    S_trials(seed, blk, t0, idx, n, even, odd);
}

/* Trials t0 + idx[i] (idx NULL: t0 + i) for i < n. */
static void S_hi(uint64_t seed, uint64_t blk, uint64_t t0, const uint32_t *idx, size_t n, uint64_t *const w[4])
{
    size_t i = 0;
#if S_HAVE_X86
    if (sd_rngbuf_avx512())
        i = S_hi_avx512(seed, blk, t0, idx, n, w);
    if (sd_rngbuf_vectorised()) {
        uint64_t *const rest[4] = {w[0] + i, w[1] + i, w[2] + i, w[3] + i};
        i += S_hi_avx2(seed, blk, idx ? t0 : t0 + i, idx ? idx + i : NULL, n - i, rest);
    }
#endif
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (; i < n; i++) {
        uint64_t t = t0 + (idx ? idx[i] : i);
        philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)t, (uint32_t)(t >> 32)}};
        philox4x32_ctr_t c = philox4x32(ctr, key);
        for (int r = 0; r < 4; r++)
            w[r][i] = (uint64_t)c.v[r] << 21;
    }
}

void sd_rngbuf_trials_hi(uint64_t seed, uint64_t blk, uint64_t t0, size_t n, uint64_t *const w[4])
{
    S_hi(seed, blk, t0, NULL, n, w);
}

void sd_rngbuf_trials_hi_at(uint64_t seed, uint64_t blk, uint64_t t0, const uint32_t *idx, size_t n,
                            uint64_t *const w[4])
{
    S_hi(seed, blk, t0, idx, n, w);
}
