/*
 * What the AVX-512 kernels of the q4kx32k4 family (kernel/q4kx.h) share: the
 * decode of a record's packed 6-bit scales and mins. The GEMV kernel
 * (q4kx_avx512.c) decodes them per record and row of X, the GEMM kernel
 * (q4kx_gemm_avx512.c) once per record for every row of X.
 */
#ifndef PACKWISE_KERNEL_X86_Q4KX_AVX512_H
#define PACKWISE_KERNEL_X86_Q4KX_AVX512_H

#include <immintrin.h>
#include <stdint.h>

/* Scales and mins of 16 rows as words, from their 192 packed scale bytes p (byte i of
 * row r at 16i + r): sc[k] = [sub-block 2k of the 16 rows | sub-block 2k+1], mn[k] the
 * same for the mins. 6 zero-extending loads and 20 word operations. */
static inline __attribute__((always_inline)) void
pw__q4kx_scales_mins(const uint8_t *p, __m512i sc[4], __m512i mn[4]) {
    __m512i w[6]; /* w[k]: bytes 2k and 2k+1 of the 16 rows, zero-extended */
    for (int k = 0; k < 6; ++k)
        w[k] = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(p + 32 * k)));
    const __m512i m63 = _mm512_set1_epi16(63), m0f = _mm512_set1_epi16(0x0F);
    /* sub-blocks 0..3: 6 bits of bytes 0..3 (scales) and 4..7 (mins) */
    sc[0] = _mm512_and_si512(w[0], m63);
    sc[1] = _mm512_and_si512(w[1], m63);
    mn[0] = _mm512_and_si512(w[2], m63);
    mn[1] = _mm512_and_si512(w[3], m63);
    /* sub-blocks 4..7: low 4 bits in bytes 8..11 (scale low nibble, min high nibble),
     * top 2 bits the top bits of bytes 0..3 (scale) and 4..7 (min), >> 2 puts them at
     * bits 4-5; 0xE4 = C ? A : B, with C = 0x0F */
    sc[2] = _mm512_ternarylogic_epi32(w[4], _mm512_srli_epi16(w[0], 2), m0f, 0xE4);
    sc[3] = _mm512_ternarylogic_epi32(w[5], _mm512_srli_epi16(w[1], 2), m0f, 0xE4);
    mn[2] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(w[4], 4), _mm512_srli_epi16(w[2], 2), m0f,
                                      0xE4);
    mn[3] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(w[5], 4), _mm512_srli_epi16(w[3], 2), m0f,
                                      0xE4);
}

/* Dword r of the result = words [m_2k, m_2k+1] of row r, from mn[k] (pw__q4kx_scales_mins):
 * the weight side of a vpdpwssd that sums two sub-blocks' min terms. */
static inline __attribute__((always_inline)) __m512i pw__q4kx_min_pair(__m512i mn) {
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    /* words r and 16 + r of mn */
    const __m512i idx =
        _mm512_or_si512(iota, _mm512_slli_epi32(_mm512_add_epi32(iota, _mm512_set1_epi32(16)),
                                                16));
    return _mm512_permutexvar_epi16(idx, mn);
}

#endif
