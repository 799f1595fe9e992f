#if !defined(__AVX512F__) || !defined(__AVX512BW__)
#error "qd8_avx512.c needs -mavx512f -mavx512bw (cmake gives *_avx512.c these flags)"
#endif
/*
 * The QD8 quantizer (quant/qd8.c) 16 lanes at a time, for the AVX-512 QC4W
 * kernel: the same bits as pw__qd8_quantize_row, lane by lane. It reads K
 * floats and writes the row's header, q[Kp] and u[Kp] (layout in quant/act.h).
 *
 *   min/max:  vminps(v, lo) is exactly `v < lo ? v : lo` (and vmaxps the
 *             `>` form), so the running extremes match the scalar loop's; a
 *             -0.0 never enters them (it is not below +0.0), so the order of
 *             the final reduction cannot matter either.
 *   values:   x * inv, clamped to [-256, 256], rounded by the 1.5 * 2^23
 *             addition, truncated (exact: already integral), + zp, clamped
 *             to [-128, 127]; vpmovdb narrows, u = q ^ 0x80.
 * Scale and zero point come from the shared pw__qd8_params. A row with a
 * value that is not finite goes to the portable quantizer, which names it.
 */
#include "quant/act.h"

#include <immintrin.h>
#include <string.h>

void pw__qd8_quantize_row_avx512(const float *x, int64_t k, int64_t k_padded, uint8_t *row) {
    __m512 vlo = _mm512_setzero_ps(), vhi = vlo;
    __mmask16 bad = 0;
    for (int64_t i = 0; i < k; i += 16) {
        const __mmask16 m = k - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k - i)) - 1u);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i); /* zeros past K leave min/max alone */
        bad |= _mm512_cmp_ps_mask(_mm512_sub_ps(v, v), _mm512_setzero_ps(), _CMP_NEQ_UQ);
        vlo = _mm512_min_ps(v, vlo);
        vhi = _mm512_max_ps(v, vhi);
    }
    if (bad) {
        pw__qd8_quantize_row(x, k, k_padded, row);
        return;
    }
    const pw__qd8_range r = {_mm512_reduce_min_ps(vlo), _mm512_reduce_max_ps(vhi), -1};
    float inv;
    int32_t zp;
    (void)pw__qd8_begin(row, &r, &inv, &zp); /* header: scale and zero point */
    int8_t *q = (int8_t *)(row + sizeof(pw__qd8_header));
    uint8_t *u = row + sizeof(pw__qd8_header) + (size_t)k_padded;
    const __m512 vinv = _mm512_set1_ps(inv), lo256 = _mm512_set1_ps(-256.0f);
    const __m512 hi256 = _mm512_set1_ps(256.0f), magic = _mm512_set1_ps(12582912.0f);
    const __m512i vzp = _mm512_set1_epi32(zp), qmin = _mm512_set1_epi32(-128);
    const __m512i qmax = _mm512_set1_epi32(127);
    const __m128i flip = _mm_set1_epi8((char)0x80);
    __m512i vsum = _mm512_setzero_si512();
    for (int64_t i = 0; i < k; i += 16) {
        const __mmask16 m = k - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k - i)) - 1u);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vinv);
        v = _mm512_min_ps(_mm512_max_ps(v, lo256), hi256);
        v = _mm512_sub_ps(_mm512_add_ps(v, magic), magic);
        __m512i iv = _mm512_add_epi32(_mm512_cvttps_epi32(v), vzp);
        iv = _mm512_min_epi32(_mm512_max_epi32(iv, qmin), qmax);
        const __m128i qb = _mm512_cvtepi32_epi8(iv);
        _mm_mask_storeu_epi8(q + i, m, qb);
        _mm_mask_storeu_epi8(u + i, m, _mm_xor_si128(qb, flip));
        vsum = _mm512_mask_add_epi32(vsum, m, vsum, iv);
    }
    pw__qd8_end(row, k, k_padded, _mm512_reduce_add_epi32(vsum));
}
