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

/* a op b: the largest of f32 lanes (add 0) or the sum of int32 lanes (add 1). */
static inline __attribute__((always_inline)) __m256 op8(__m256 a, __m256 b, const int add) {
    if (!add) return _mm256_max_ps(a, b);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
}

/* Lane j: op over the 8 lanes of m[j], as act_avx512.c's reduce16 at 256 bits (22
 * operations where 8 separate reductions take about 48). */
static inline __attribute__((always_inline)) __m256 reduce8(const __m256 m[8], const int add) {
    __m256 t[4], u[2];
    /* t[i]: m[2i] folded into 128-bit lane 0, m[2i + 1] into lane 1 */
    for (int i = 0; i < 4; ++i)
        t[i] = op8(_mm256_permute2f128_ps(m[2 * i], m[2 * i + 1], 0x20),
                   _mm256_permute2f128_ps(m[2 * i], m[2 * i + 1], 0x31), add);
    /* u[i], 128-bit lane c: m[4i + c] in lanes 0, 1, m[4i + 2 + c] in lanes 2, 3 */
    for (int i = 0; i < 2; ++i)
        u[i] = op8(_mm256_shuffle_ps(t[2 * i], t[2 * i + 1], 0x44),
                   _mm256_shuffle_ps(t[2 * i], t[2 * i + 1], 0xEE), add);
    /* lane 4c + k: m[2k + c]; then lane j: m[j] */
    const __m256 w = op8(_mm256_shuffle_ps(u[0], u[1], 0x88), _mm256_shuffle_ps(u[0], u[1], 0xDD), add);
    return _mm256_permutevar8x32_ps(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* One block. */
static void quantize_q8_32_one(const float *x, pw__q8_32 *b) {
    const float d = amax_of(x, 32) / 127.0f;
    const __m256 id = _mm256_set1_ps(inverse(d));
    __m256i q[4];
    for (int g = 0; g < 4; ++g) q[g] = quant8(x + 8 * g, id);
    memset(b, 0, offsetof(pw__q8_32, qs));
    store_q32(q, b->qs, b->qu);
    const int32_t s = hsum8(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    b->d = d;
    b->sum = s;
    b->dsum = d * (float)s;
}

/* Eight blocks at a time, as act_avx512.c takes sixteen: a [32, 4096] Q4_0 GEMV call at
 * avx2 (a loop of calls, one thread) 2.9 -> 2.3 us. */
static void quantize_q8_32(const float *x, int64_t in, pw__q8_32 *b) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const int64_t nb = in / 32;
    int64_t j = 0;
    for (; j + 8 <= nb; j += 8, x += 256) {
        __m256 m[8];
        for (int k = 0; k < 8; ++k) {
            __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + 32 * k), sign);
            for (int g = 1; g < 4; ++g) a = _mm256_max_ps(a, _mm256_and_ps(_mm256_loadu_ps(x + 32 * k + 8 * g), sign));
            m[k] = a;
        }
        const __m256 d = _mm256_div_ps(reduce8(m, 0), _mm256_set1_ps(127.0f));
        const __m256 id = _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d),
                                        _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_GT_OQ));
        float dk[8], idk[8], dsk[8];
        int32_t sk[8];
        _mm256_storeu_ps(dk, d);
        _mm256_storeu_ps(idk, id);
        for (int k = 0; k < 8; ++k) {
            const __m256 idv = _mm256_set1_ps(idk[k]);
            __m256i q[4];
            for (int g = 0; g < 4; ++g) q[g] = quant8(x + 32 * k + 8 * g, idv);
            store_q32(q, b[j + k].qs, b[j + k].qu);
            m[k] = _mm256_castsi256_ps(
                _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
        }
        const __m256i s = _mm256_castps_si256(reduce8(m, 1));
        _mm256_storeu_si256((__m256i *)(void *)sk, s);
        _mm256_storeu_ps(dsk, _mm256_mul_ps(d, _mm256_cvtepi32_ps(s)));
        for (int k = 0; k < 8; ++k) {
            memset(&b[j + k], 0, offsetof(pw__q8_32, qs));
            b[j + k].d = dk[k];
            b[j + k].dsum = dsk[k];
            b[j + k].sum = sk[k];
        }
    }
    for (; j < nb; ++j, x += 32) quantize_q8_32_one(x, &b[j]);
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

/* Whether x[0..n) holds a NaN or an infinity (act_avx512.c's test at 256 bits). */
static int not_finite(const float *x, int64_t n) {
    const __m256i abs = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i m0 = _mm256_setzero_si256(), m1 = m0;
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        m0 = _mm256_max_epu32(m0, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + k)), abs));
        m1 = _mm256_max_epu32(m1, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + k + 8)), abs));
    }
    for (; k < n; k += 8) { /* the last values by a masked load (lanes past n read as 0) */
        const int left = n - k >= 8 ? 8 : (int)(n - k);
        const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        m0 = _mm256_max_epu32(m0, _mm256_and_si256(_mm256_maskload_epi32((const int *)(const void *)(x + k), live), abs));
    }
    const __m256i m = _mm256_max_epu32(m0, m1);
    /* unsigned lanes >= 0x7F800000: max(m, limit) == m */
    const __m256i limit = _mm256_set1_epi32(0x7F800000);
    return _mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(m, limit), m)) != 0;
}

const pw__act_forms pw__act_forms_avx2 = {quantize_q8_32, quantize_q8_256,
                                          pw__qd8_quantize_row_avx2, not_finite};
