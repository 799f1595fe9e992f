#if !defined(__AVX2__)
#error "qd8_avx2.c needs -mavx2 (cmake gives *_avx2.c this flag)"
#endif
/*
 * The QD8 quantizer (quant/qd8.c) 8 lanes at a time, for the AVX2 and AVX-VNNI
 * levels' QC4W and QB4W kernels: the same bits as pw__qd8_quantize_row, by the steps
 * qd8_avx512.c takes (its comment), the last K % 8 values through the scalar
 * pw__qd8_value. A row with a value that is not finite goes to the portable
 * quantizer, which names it. Before it these levels ran the portable code: 3.4% of
 * the kernel's time in a [11008, 4096] n = 128 QC4W GEMM at avx2 (perf).
 */
#include "quant/act.h"

#include <immintrin.h>
#include <string.h>

void pw__qd8_quantize_row_avx2(const float *x, int64_t k, int64_t k_padded, uint8_t *row) {
    __m256 vlo = _mm256_setzero_ps(), vhi = vlo;
    int bad = 0;
    const int64_t k8 = k / 8 * 8;
    for (int64_t i = 0; i < k8; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        bad |= _mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(v, v), _mm256_setzero_ps(), _CMP_NEQ_UQ));
        vlo = _mm256_min_ps(v, vlo);
        vhi = _mm256_max_ps(v, vhi);
    }
    /* the lanes' extremes, then the tail as the scalar scan takes it (a -0.0 never
     * enters either: it is neither below nor above +0.0, so the order cannot matter) */
    float l[8], h[8], lo = 0.0f, hi = 0.0f;
    _mm256_storeu_ps(l, vlo);
    _mm256_storeu_ps(h, vhi);
    for (int j = 0; j < 8; ++j) {
        lo = l[j] < lo ? l[j] : lo;
        hi = h[j] > hi ? h[j] : hi;
    }
    for (int64_t i = k8; i < k; ++i) {
        const float v = x[i];
        bad |= (v - v) != 0.0f;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (bad) {
        pw__qd8_quantize_row(x, k, k_padded, row);
        return;
    }
    const pw__qd8_range r = {lo, hi, -1};
    float inv;
    int32_t zp;
    (void)pw__qd8_begin(row, &r, &inv, &zp); /* header: scale and zero point */
    int8_t *q = (int8_t *)(row + sizeof(pw__qd8_header));
    uint8_t *u = row + sizeof(pw__qd8_header) + (size_t)k_padded;
    const __m256 vinv = _mm256_set1_ps(inv), lo256 = _mm256_set1_ps(-256.0f);
    const __m256 hi256 = _mm256_set1_ps(256.0f), magic = _mm256_set1_ps(12582912.0f);
    const __m256i vzp = _mm256_set1_epi32(zp), qmin = _mm256_set1_epi32(-128);
    const __m256i qmax = _mm256_set1_epi32(127);
    const __m128i flip = _mm_set1_epi8((char)0x80);
    __m256i vsum = _mm256_setzero_si256();
    for (int64_t i = 0; i < k8; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv);
        v = _mm256_min_ps(_mm256_max_ps(v, lo256), hi256);
        v = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
        __m256i iv = _mm256_add_epi32(_mm256_cvttps_epi32(v), vzp);
        iv = _mm256_min_epi32(_mm256_max_epi32(iv, qmin), qmax);
        const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(iv), _mm256_extracti128_si256(iv, 1));
        const __m128i b = _mm_packs_epi16(w, w); /* bytes 0..7 in order */
        _mm_storel_epi64((__m128i *)(void *)(q + i), b);
        _mm_storel_epi64((__m128i *)(void *)(u + i), _mm_xor_si128(b, flip));
        vsum = _mm256_add_epi32(vsum, iv);
    }
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(vsum), _mm256_extracti128_si256(vsum, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    int32_t sum = _mm_cvtsi128_si32(s4);
    for (int64_t i = k8; i < k; ++i) {
        const int32_t iv = pw__qd8_value(x[i], inv, zp);
        q[i] = (int8_t)iv;
        u[i] = (uint8_t)(iv + 128);
        sum += iv;
    }
    pw__qd8_end(row, k, k_padded, sum);
}
