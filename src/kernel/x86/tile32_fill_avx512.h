/*
 * AVX-512 pieces of the input-block-major GEMM kernels' record fills
 * (pw__tile32_fill_ibm, kernel/tile32.h): the 32 blocks of a tile's rows at one
 * block column hold a tiled record's bytes in another arrangement, and a record
 * is made from them with 128-bit row loads, in-lane 4 x 4 dword transposes and
 * gathers. Register g of a group of four holds rows 4L + g in 128-bit lane L (of
 * 16 rows); a transpose then gives, per dword column, the 16 rows' dwords in row
 * order: one 64-byte step of a record.
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_FILL_AVX512_H
#define PACKWISE_KERNEL_X86_TILE32_FILL_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define PW__T32F_INLINE static inline __attribute__((always_inline))

/* 16 bytes at p of rows g, g + 4, g + 8, g + 12 (rows rs bytes apart) in lanes 0..3. */
PW__T32F_INLINE __m512i pw__t32f_rows4(const uint8_t *p, size_t rs, int g) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p + (size_t)g * rs)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + (size_t)(g + 4) * rs)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + (size_t)(g + 8) * rs)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + (size_t)(g + 12) * rs)), 3);
}

/* The in-lane 4 x 4 dword transposes of four registers: col[c] lane L = dword c of
 * z[0..3]'s lane L, in that order. */
PW__T32F_INLINE void pw__t32f_transpose4(const __m512i z[4], __m512i col[4]) {
    const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
    col[0] = _mm512_unpacklo_epi64(t0, t2);
    col[1] = _mm512_unpackhi_epi64(t0, t2);
    col[2] = _mm512_unpacklo_epi64(t1, t3);
    col[3] = _mm512_unpackhi_epi64(t1, t3);
}

/* The 16 bytes at p of 16 rows (rows rs bytes apart) as four registers: col[c] lane r =
 * dword c of row r (pw__t32f_rows4, then pw__t32f_transpose4). */
PW__T32F_INLINE void pw__t32f_rows16(const uint8_t *p, size_t rs, __m512i col[4]) {
    __m512i z[4];
    for (int g = 0; g < 4; ++g) z[g] = pw__t32f_rows4(p, rs, g);
    pw__t32f_transpose4(z, col);
}

/* Columns 0..3 of four registers' 4 x 4 dword matrices (one per 128-bit lane), stored
 * as the 64 bytes at dst, dst + step, dst + 2 step, dst + 3 step (64-byte aligned). */
PW__T32F_INLINE void pw__t32f_transpose4_store(const __m512i z[4], uint8_t *dst, size_t step) {
    __m512i col[4];
    pw__t32f_transpose4(z, col);
    for (int c = 0; c < 4; ++c) _mm512_store_si512((__m512i *)(dst + c * step), col[c]);
}

/* 16 nibble-packed bytes at p of rows 0..15 (a) and 16..31 (b), rows rs bytes apart, as
 * two groups of four 64-byte steps of a record: at lo, steps whose lane r holds a's low
 * nibbles (row r) below b's (row r + 16); at hi, the same of their high nibbles. The
 * nibble merge of the q4x32k4 family, which q4kx32k4 and q6kx32k4 share. */
PW__T32F_INLINE void pw__t32f_nibble_steps(const uint8_t *p, size_t rs, uint8_t *lo, uint8_t *hi) {
    const __m512i m = _mm512_set1_epi8(0x0F);
    __m512i e[4], f[4];
    for (int g = 0; g < 4; ++g) {
        const __m512i a = pw__t32f_rows4(p, rs, g), b = pw__t32f_rows4(p + 16 * rs, rs, g);
        e[g] = _mm512_ternarylogic_epi32(m, a, _mm512_slli_epi16(b, 4), 0xCA); /* m ? a : b << 4 */
        f[g] = _mm512_ternarylogic_epi32(m, _mm512_srli_epi16(a, 4), b, 0xCA);
    }
    pw__t32f_transpose4_store(e, lo, 64);
    pw__t32f_transpose4_store(f, hi, 64);
}

/* The dword at p of 16 rows, row r's at p + r * bytes, in lane r. */
PW__T32F_INLINE __m512i pw__t32f_gather16(const uint8_t *p, int bytes) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(bytes));
    return _mm512_i32gather_epi32(idx, p, 1);
}

/* The first fp16 of 32 blocks (a block's d; row r's at src + r * bytes) as 32 fp16 at
 * dst (32-byte aligned). */
PW__T32F_INLINE void pw__t32f_d_from_blocks(const uint8_t *src, int bytes, uint8_t *dst) {
    _mm256_store_si256((__m256i *)dst, _mm512_cvtepi32_epi16(pw__t32f_gather16(src, bytes)));
    _mm256_store_si256((__m256i *)(dst + 32),
                       _mm512_cvtepi32_epi16(pw__t32f_gather16(src + 16 * bytes, bytes)));
}

#endif
