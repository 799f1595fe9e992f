#if !defined(__AVX512F__) || !defined(__AVX512BW__)
#error "act_avx512.c needs -mavx512f -mavx512bw (cmake gives *_avx512.c these flags)"
#endif
/*
 * AVX-512 activation quantizer: the same bytes as pw__act_quantize_row (act.c)
 * for finite input, bit for bit, so a kernel's result does not depend on which
 * of the two ran. Each step is the scalar one in f32, in the same order: amax
 * as the largest |x|, d = amax / 127 and id = 1 / d as scalar divisions,
 * q = x * id rounded to nearest even (vcvtps2dq under the default MXCSR, as
 * nearbyintf) after clamping to [-127, 127] in f32; qu = q ^ 0x80 = q + 128; sums exact in
 * int32. The GEMM path quantizes n x in values per call, which the scalar
 * code (a libm call per value) made up to a fifth of a 128-row GEMM.
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

static void quantize_q8_32(const float *x, int64_t in, pw__q8_32 *b) {
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    for (int64_t j = 0; j < in / 32; ++j, x += 32) {
        const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        const float d = amax_of(_mm512_max_ps(_mm512_and_ps(v0, sign), _mm512_and_ps(v1, sign))) / 127.0f;
        const __m512 id = _mm512_set1_ps(inverse(d));
        const __m512i q0 = quant16(v0, id), q1 = quant16(v1, id);
        store_q(q0, b[j].qs, b[j].qu);
        store_q(q1, b[j].qs + 16, b[j].qu + 16);
        const int32_t s = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        memset(&b[j], 0, offsetof(pw__q8_32, qs));
        b[j].d = d;
        b[j].sum = s;
        b[j].dsum = d * (float)s;
    }
}

static void quantize_q8_256(const float *x, int64_t in, pw__q8_256 *b) {
    const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    for (int64_t j = 0; j < in / 256; ++j, x += 256) {
        __m512 m = _mm512_setzero_ps();
        for (int g = 0; g < 16; ++g) m = _mm512_max_ps(m, _mm512_and_ps(_mm512_loadu_ps(x + 16 * g), sign));
        const float d = amax_of(m) / 127.0f;
        const __m512 id = _mm512_set1_ps(inverse(d));
        memset(&b[j], 0, offsetof(pw__q8_256, qs));
        int32_t s = 0;
        for (int g = 0; g < 16; ++g) {
            const __m512i q = quant16(_mm512_loadu_ps(x + 16 * g), id);
            store_q(q, b[j].qs + 16 * g, b[j].qu + 16 * g);
            const int32_t gs = _mm512_reduce_add_epi32(q);
            b[j].bsums[g] = (int16_t)gs;
            s += gs;
        }
        b[j].d = d;
        b[j].sum = s;
    }
}

const pw__act_forms pw__act_forms_avx512 = {quantize_q8_32, quantize_q8_256,
                                            pw__qd8_quantize_row_avx512};
