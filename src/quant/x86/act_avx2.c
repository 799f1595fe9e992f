#if !defined(__AVX2__)
#error "act_avx2.c needs -mavx2 (cmake gives *_avx2.c this flag)"
#endif
/*
 * AVX2 activation quantizer for the AVX2 and AVX-VNNI levels: the same bytes as
 * pw__act_quantize_row (act.c), bit for bit, by the steps act_avx512.c takes (its
 * comment) at 256 bits: amax as the largest |x|, d = amax / 127 and id = 1 / d as
 * scalar divisions, q = x * id clamped to [-127, 127] in f32 (a NaN product, 0 * inf,
 * to 0) and rounded to nearest even by vcvtps2dq under the default MXCSR, as
 * nearbyintf; qu = q ^ 0x80; sums exact in int32. Before it the two levels ran the
 * scalar code, a libm call per value: 8% of a warm [2048, 4096] Q4_K GEMV at
 * avxvnni (perf), and per GEMM row as much again.
 */
#include "quant/act.h"

#include <immintrin.h>
#include <string.h>

static float hmax8(__m256 m) {
    __m128 v = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    v = _mm_max_ps(v, _mm_movehl_ps(v, v));
    v = _mm_max_ss(v, _mm_movehdup_ps(v));
    return _mm_cvtss_f32(v);
}

static int32_t hsum8(__m256i s) {
    __m128i v = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
    return _mm_cvtsi128_si32(v);
}

/* Eight values times id: clamped in f32 as the scalar code, NaN to 0, then rounded. */
static __m256i quant8(const float *x, __m256 id) {
    __m256 p = _mm256_mul_ps(_mm256_loadu_ps(x), id);
    p = _mm256_and_ps(p, _mm256_cmp_ps(p, p, _CMP_ORD_Q));
    p = _mm256_min_ps(_mm256_max_ps(p, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    return _mm256_cvtps_epi32(p);
}

/* 32 values (four groups of 8 int32, each in [-127, 127]) as bytes in order: the packs
 * interleave 128-bit lanes, the dword permute puts them back. */
static void store_q32(const __m256i q[4], int8_t *qs, uint8_t *qu) {
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    const __m256i o = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)(void *)qs, o);
    _mm256_storeu_si256((__m256i *)(void *)qu, _mm256_xor_si256(o, _mm256_set1_epi8((char)0x80)));
}

static float inverse(float d) { return d > 0.0f ? 1.0f / d : 0.0f; }

/* amax of n (a multiple of 8) values. */
static float amax_of(const float *x, int n) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < n; k += 8) m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + k), sign));
    return hmax8(m);
}

static void quantize_q8_32(const float *x, int64_t in, pw__q8_32 *b) {
    for (int64_t j = 0; j < in / 32; ++j, x += 32) {
        const float d = amax_of(x, 32) / 127.0f;
        const __m256 id = _mm256_set1_ps(inverse(d));
        __m256i q[4];
        for (int g = 0; g < 4; ++g) q[g] = quant8(x + 8 * g, id);
        memset(&b[j], 0, offsetof(pw__q8_32, qs));
        store_q32(q, b[j].qs, b[j].qu);
        const int32_t s = hsum8(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
        b[j].d = d;
        b[j].sum = s;
        b[j].dsum = d * (float)s;
    }
}

static void quantize_q8_256(const float *x, int64_t in, pw__q8_256 *b) {
    for (int64_t j = 0; j < in / 256; ++j, x += 256) {
        const float d = amax_of(x, 256) / 127.0f;
        const __m256 id = _mm256_set1_ps(inverse(d));
        memset(&b[j], 0, offsetof(pw__q8_256, qs));
        int32_t s = 0;
        for (int c = 0; c < 8; ++c) { /* 32 values: bsums of groups 2c and 2c + 1 */
            __m256i q[4];
            for (int g = 0; g < 4; ++g) q[g] = quant8(x + 32 * c + 8 * g, id);
            store_q32(q, b[j].qs + 32 * c, b[j].qu + 32 * c);
            const int32_t g0 = hsum8(_mm256_add_epi32(q[0], q[1])), g1 = hsum8(_mm256_add_epi32(q[2], q[3]));
            b[j].bsums[2 * c] = (int16_t)g0;
            b[j].bsums[2 * c + 1] = (int16_t)g1;
            s += g0 + g1;
        }
        b[j].d = d;
        b[j].sum = s;
    }
}

const pw__act_forms pw__act_forms_avx2 = {quantize_q8_32, quantize_q8_256,
                                          pw__qd8_quantize_row_avx2};
