/*
 * What the AVX-512 kernels of the q3kx32k4 family (kernel/q3kx.h) share: a
 * sub-block's fourth step gathered from its three loads' top bits, and the
 * decode of 16 rows' packed 6-bit scales. The GEMV kernel (q3kx_avx512.c)
 * decodes the scales per record and row of X, the GEMM kernel
 * (q3kx_gemm_avx512.c) once per record for every row of X.
 */
#ifndef PACKWISE_KERNEL_X86_Q3KX_AVX512_H
#define PACKWISE_KERNEL_X86_Q3KX_AVX512_H

#include <immintrin.h>
#include <stdint.h>

/* Step 3 of a sub-block from its loads p0, p1, p2: bit k of each nibble's quant is bit 3
 * of that nibble of p_k. Two bit selects (0xE4: C ? A : B per bit) of the loads shifted
 * so that bit 3 of p_k lands at bit k; bits 3 and 7 of the result are another byte's or
 * step's bits (the 16-bit shifts move bits across bytes only there), for the caller's
 * mask (0x07 or 0x77) to clear. */
static inline __attribute__((always_inline)) __m512i pw__q3kx_step3(__m512i p0, __m512i p1,
                                                                    __m512i p2) {
    const __m512i t = _mm512_ternarylogic_epi32(_mm512_srli_epi16(p0, 3), _mm512_srli_epi16(p1, 2),
                                                _mm512_set1_epi8(0x11), 0xE4);
    return _mm512_ternarylogic_epi32(t, _mm512_srli_epi16(p2, 1), _mm512_set1_epi8(0x33), 0xE4);
}

/* The 16 scales (stored value - 32, int8 in [-32, 31]) of 16 rows from their 192 packed
 * bytes p (byte i of row r at 16i + r): out[16 j + r] = scale j of row r. Quarter q
 * (scales 4q .. 4q + 3): the low nibbles of bytes 0..3 (q = 0), 4..7 (q = 1), their high
 * nibbles (q = 2, 3), and bits 2q, 2q + 1 of bytes 8..11 as bits 4-5. */
static inline __attribute__((always_inline)) void pw__q3kx_scales16(const uint8_t *p,
                                                                     int8_t *out) {
    const __m512i l0 = _mm512_loadu_si512(p), l1 = _mm512_loadu_si512(p + 64),
                  hb = _mm512_loadu_si512(p + 128);
    const __m512i m0f = _mm512_set1_epi8(0x0F), m3f = _mm512_set1_epi8(0x3F),
                  c32 = _mm512_set1_epi8(32);
    const __m512i lo[4] = {l0, l1, _mm512_srli_epi16(l0, 4), _mm512_srli_epi16(l1, 4)};
    const __m512i hi[4] = {_mm512_slli_epi16(hb, 4), _mm512_slli_epi16(hb, 2), hb,
                           _mm512_srli_epi16(hb, 2)};
    for (int q = 0; q < 4; ++q) {
        const __m512i v = _mm512_ternarylogic_epi32(lo[q], hi[q], m0f, 0xE4);
        _mm512_storeu_si512(out + 64 * q, _mm512_sub_epi8(_mm512_and_si512(v, m3f), c32));
    }
}

#endif
