#if !defined(__AVX512F__) || !defined(__AVX512BW__)
#error "act_avx512.c needs -mavx512f -mavx512bw (cmake gives *_avx512.c these flags)"
#endif
/*
 * AVX-512 activation quantizer: the same bytes as pw__act_quantize_row (act.c)
 * for finite input, bit for bit, so a kernel's result does not depend on which
 * of the two ran. Each step is the scalar one in f32, in the same order: amax
 * as the largest |x|, d = amax / 127 and id = 1 / d as divisions (correctly
 * rounded, scalar or vector alike),
 * q = x * id rounded to nearest even (vcvtps2dq under the default MXCSR, as
 * nearbyintf) after clamping to [-127, 127] in f32; qu = q ^ 0x80 = q + 128; sums exact in
 * int32. The GEMM path quantizes n x in values per call, which the scalar
 * code (a libm call per value) made up to a fifth of a 128-row GEMM. A GEMV
 * pays it on every call too: Q8_32 blocks are quantized sixteen at a time, their
 * horizontal maxima and sums reduced together (reduce16), which took a [32, 4096]
 * Q4_0 GEMV call (a loop of calls, one thread) from 2.4 to 1.9 us, and Q8_256's
 * sub-block sums the same way.
 *
 *   x: 32 (or 256) f32  ->  | d | dsum/sum | sums | pad | qs[32] | qu[32] |
 */
#include "quant/act.h"

#include <immintrin.h>
#include <string.h>

static float amax_of(__m512 m) { return _mm512_reduce_max_ps(m); }

/* Quantize 16 values with id: clamped in f32 as the scalar code, NaN (0 * inf) to 0. */
static __m512i quant16(__m512 v, __m512 id) {
    __m512 p = _mm512_mul_ps(v, id);
    p = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(p, p, _CMP_ORD_Q), p);
    p = _mm512_min_ps(_mm512_max_ps(p, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
    return _mm512_cvtps_epi32(p);
}

static void store_q(__m512i q, int8_t *qs, uint8_t *qu) {
    const __m128i b = _mm512_cvtsepi32_epi8(q);
    _mm_storeu_si128((__m128i *)(void *)qs, b);
    _mm_storeu_si128((__m128i *)(void *)qu, _mm_xor_si128(b, _mm_set1_epi8((char)0x80)));
}

static float inverse(float d) { return d > 0.0f ? 1.0f / d : 0.0f; }

/* a op b: the largest of f32 lanes (add 0) or the sum of int32 lanes (add 1). */
static inline __attribute__((always_inline)) __m512 op16(__m512 a, __m512 b, const int add) {
    if (!add) return _mm512_max_ps(a, b);
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

/* Lane j: op over the 16 lanes of m[j] (op16; both order-free: the max is exact and
 * the int32 sums stay far from overflow). Four levels of two-source shuffles, 46
 * operations where 16 separate reductions took about 128, each a chain of its own. */
static inline __attribute__((always_inline)) __m512 reduce16(const __m512 m[16], const int add) {
    __m512 t[8], u[4], v[2];
    /* t[i]: m[2i] folded into 128-bit lanes 0, 1; m[2i + 1] into lanes 2, 3 */
    for (int i = 0; i < 8; ++i)
        t[i] = op16(_mm512_shuffle_f32x4(m[2 * i], m[2 * i + 1], 0x44),
                    _mm512_shuffle_f32x4(m[2 * i], m[2 * i + 1], 0xEE), add);
    /* u[i]: m[4i + c] folded into 128-bit lane c */
    for (int i = 0; i < 4; ++i)
        u[i] = op16(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0x88),
                    _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0xDD), add);
    /* v[i], 128-bit lane c: m[8i + c] in lanes 0, 1, m[8i + 4 + c] in lanes 2, 3 */
    for (int i = 0; i < 2; ++i)
        v[i] = op16(_mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0x44),
                    _mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0xEE), add);
    /* lane 4c + k: m[4k + c]; then lane j: m[j] */
    const __m512 w = op16(_mm512_shuffle_ps(v[0], v[1], 0x88), _mm512_shuffle_ps(v[0], v[1], 0xDD), add);
    return _mm512_permutexvar_ps(_mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), w);
}

static void quantize_q8_32_one(const float *x, pw__q8_32 *b) {
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float d = amax_of(_mm512_max_ps(_mm512_and_ps(v0, sign), _mm512_and_ps(v1, sign))) / 127.0f;
    const __m512 id = _mm512_set1_ps(inverse(d));
    const __m512i q0 = quant16(v0, id), q1 = quant16(v1, id);
    store_q(q0, b->qs, b->qu);
    store_q(q1, b->qs + 16, b->qu + 16);
    const int32_t s = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    memset(b, 0, offsetof(pw__q8_32, qs));
    b->d = d;
    b->sum = s;
    b->dsum = d * (float)s;
}

/* Sixteen blocks at a time: their amax, d and 1 / d as vectors (vdivps rounds as the
 * scalar division does), their sums reduced together (reduce16). */
static void quantize_q8_32(const float *x, int64_t in, pw__q8_32 *b) {
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    const int64_t nb = in / 32;
    int64_t j = 0;
    for (; j + 16 <= nb; j += 16, x += 512) {
        __m512 m[16];
        for (int k = 0; k < 16; ++k)
            m[k] = _mm512_max_ps(_mm512_and_ps(_mm512_loadu_ps(x + 32 * k), sign),
                                 _mm512_and_ps(_mm512_loadu_ps(x + 32 * k + 16), sign));
        const __m512 d = _mm512_div_ps(reduce16(m, 0), _mm512_set1_ps(127.0f));
        const __m512 id = _mm512_maskz_div_ps(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_GT_OQ),
                                              _mm512_set1_ps(1.0f), d);
        float dk[16], idk[16], dsk[16];
        int32_t sk[16];
        _mm512_storeu_ps(dk, d);
        _mm512_storeu_ps(idk, id);
        for (int k = 0; k < 16; ++k) {
            const __m512 idv = _mm512_set1_ps(idk[k]);
            const __m512i q0 = quant16(_mm512_loadu_ps(x + 32 * k), idv);
            const __m512i q1 = quant16(_mm512_loadu_ps(x + 32 * k + 16), idv);
            store_q(q0, b[j + k].qs, b[j + k].qu);
            store_q(q1, b[j + k].qs + 16, b[j + k].qu + 16);
            m[k] = _mm512_castsi512_ps(_mm512_add_epi32(q0, q1));
        }
        const __m512i s = _mm512_castps_si512(reduce16(m, 1));
        _mm512_storeu_si512(sk, s);
        _mm512_storeu_ps(dsk, _mm512_mul_ps(d, _mm512_cvtepi32_ps(s)));
        for (int k = 0; k < 16; ++k) {
            memset(&b[j + k], 0, offsetof(pw__q8_32, qs));
            b[j + k].d = dk[k];
            b[j + k].dsum = dsk[k];
            b[j + k].sum = sk[k];
        }
    }
    for (; j < nb; ++j, x += 32) quantize_q8_32_one(x, &b[j]);
}

static void quantize_q8_256(const float *x, int64_t in, pw__q8_256 *b) {
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    for (int64_t j = 0; j < in / 256; ++j, x += 256) {
        __m512 m = _mm512_setzero_ps();
        for (int g = 0; g < 16; ++g) m = _mm512_max_ps(m, _mm512_and_ps(_mm512_loadu_ps(x + 16 * g), sign));
        const float d = amax_of(m) / 127.0f;
        const __m512 id = _mm512_set1_ps(inverse(d));
        memset(&b[j], 0, offsetof(pw__q8_256, qs));
        __m512 qv[16];
        for (int g = 0; g < 16; ++g) {
            const __m512i q = quant16(_mm512_loadu_ps(x + 16 * g), id);
            store_q(q, b[j].qs + 16 * g, b[j].qu + 16 * g);
            qv[g] = _mm512_castsi512_ps(q);
        }
        /* the 16 sub-block sums at once (|.| <= 16 * 127: int16 exactly) */
        const __m512i gs = _mm512_castps_si512(reduce16(qv, 1));
        _mm256_storeu_si256((__m256i *)(void *)b[j].bsums, _mm512_cvtepi32_epi16(gs));
        b[j].d = d;
        b[j].sum = _mm512_reduce_add_epi32(gs);
    }
}

/* Whether x[0..n) holds a NaN or an infinity: the largest |x| bit pattern (unsigned,
 * so NaN's above infinity's) reaches the all-ones exponent. */
static int not_finite(const float *x, int64_t n) {
    const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF);
    __m512i m0 = _mm512_setzero_si512(), m1 = m0;
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(x + k), abs));
        m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(x + k + 16), abs));
    }
    for (; k < n; k += 16) {
        const __mmask16 m = n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1);
        m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_maskz_loadu_epi32(m, x + k), abs));
    }
    return _mm512_reduce_max_epu32(_mm512_max_epu32(m0, m1)) >= 0x7F800000u;
}

const pw__act_forms pw__act_forms_avx512 = {quantize_q8_32, quantize_q8_256,
                                            pw__qd8_quantize_row_avx512, not_finite};
