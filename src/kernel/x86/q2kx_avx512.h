/*
 * What the AVX-512 kernels of the q2kx32k4 family (kernel/q2kx.h) and of
 * tq2x32k4 (kernel/tq2x.h: its quant bytes are q2kx32k4's) share: one
 * sub-block's four k steps unpacked from its two loads P_0, P_1 and dotted with
 * the activations, in the GEMV form (q2kx_avx512.c, tq2x_avx512.c) and the GEMM
 * form (q2kx_gemm_avx512.c, tq2x_avx512.c), and the quant bytes of a record made
 * from the 32 rows' qs (the input-block-major GEMMs' record makers). Step u is q_u =
 * P_0, P_1, P_0 >> 2, P_1 >> 2 (16-bit shifts), row r in bits 0-1 of lane r's bytes
 * and row r + 16 in bits 4-5.
 */
#ifndef PACKWISE_KERNEL_X86_Q2KX_AVX512_H
#define PACKWISE_KERNEL_X86_Q2KX_AVX512_H

#include "kernel/q2kx.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_fill_avx512.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* GEMV: the sub-block at sub with one row of X's 16 activations a of it (a_u = bcast(a
 * + 4u)): l[u % nc] += dpbusd(q_u & 0x03, a_u) (rows 0..15) and w[u % nc] +=
 * dpbusd(q_u & 0x33, a_u) (row r + 16 q[r + 16] whole bytes), in nc (1, 2 or 4, a
 * constant) chains each. */
static inline __attribute__((always_inline)) void
pw__q2kx_gemv_sub(const uint8_t *sub, const int8_t *a, __m512i *l, __m512i *w, const int nc) {
    const __m512i m03 = _mm512_set1_epi8(0x03), m33 = _mm512_set1_epi8(0x33);
    const __m512i p0 = _mm512_loadu_si512(sub), p1 = _mm512_loadu_si512(sub + 64);
    const __m512i q[4] = {p0, p1, _mm512_srli_epi16(p0, 2), _mm512_srli_epi16(p1, 2)};
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
        const __m512i au = pw__tile32_bcast4(a + 4 * u);
        l[u % nc] = _mm512_dpbusd_epi32(l[u % nc], _mm512_and_si512(q[u], m03), au);
        w[u % nc] = _mm512_dpbusd_epi32(w[u % nc], _mm512_and_si512(q[u], m33), au);
    }
}

/* GEMM: the sub-block at sub with mr (a constant, at most 10) rows of X, row i's 16
 * activations of it at x[i] + at: dt[i][0] += dpbusd(q_u & 0x03, a_i,u) (rows 0..15),
 * dt[i][1] += dpbusd((q_u >> 4) & 0x03, a_i,u) (rows 16..31); each step unpacked once
 * for the mr rows. */
static inline __attribute__((always_inline)) void
pw__q2kx_gemm_sub(const uint8_t *sub, const uint8_t *const *x, size_t at, __m512i dt[][2],
                  const int mr) {
    const __m512i m03 = _mm512_set1_epi8(0x03);
    const __m512i p0 = _mm512_loadu_si512(sub), p1 = _mm512_loadu_si512(sub + 64);
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
        const __m512i p = u % 2 ? p1 : p0;
        const __m512i q = u < 2 ? p : _mm512_srli_epi16(p, 2);
        const __m512i a = _mm512_and_si512(q, m03);
        const __m512i b = _mm512_and_si512(_mm512_srli_epi16(q, 4), m03);
#pragma GCC unroll 10
        for (int i = 0; i < mr; ++i) {
            const __m512i xa = pw__tile32_bcast4((const int8_t *)(x[i] + at + 4 * u));
            dt[i][0] = _mm512_dpbusd_epi32(dt[i][0], a, xa);
            dt[i][1] = _mm512_dpbusd_epi32(dt[i][1], b, xa);
        }
    }
}

/*
 * The quant bytes [0, 2048) of a record from the 32 rows' 64 qs bytes, row r's at qs +
 * r * bb: pw__q2kx_record_quants's bytes (q2kx_pack.c, whose comment names the bits),
 * with 128-bit row loads, in-lane 4 x 4 dword transposes and bit selects. Chunk c (qs
 * bytes 16c .. 16c + 15, dwords D = 4 (c % 2) + 0..3 of half h = c / 2) of rows 0..15
 * and 16..31, transposed (pw__t32f_rows16): x[j], y[j] lane r = dword D of rows r and
 * r + 16. Lane r of load P_j of sub-block 8h + 2g + c % 2 (j = 0, 1; g = 0..3) takes bits
 * 2g, 2g + 1 of each byte of x[j], x[j + 2], y[j], y[j + 2] as its bits 0-1, 2-3, 4-5,
 * 6-7: per j four selects pair x[j] with x[j + 2] (and y's alike) in every nibble,
 *
 *   p = x[j] & 0x33 | (x[j + 2] << 2) & 0xCC    nibbles: [g = 0 of both] [g = 2 of both]
 *   q = (x[j] >> 2) & 0x33 | x[j + 2] & 0xCC    nibbles: [g = 1] [g = 3]
 *
 * (r, t of y likewise), four more pair x's nibble with y's: P (g = 0) = p & 0x0F | (r <<
 * 4) & 0xF0, g = 2: (p >> 4) & 0x0F | r & 0xF0, g = 1 and 3 of q and t alike. The 16-bit
 * shifts move bits across bytes only where the select's mask drops them. Per record 32
 * loads of 16 bytes and 24 inserts, 64 unpacks, 64 selects and 64 shifts, 32 stores.
 */
static inline __attribute__((always_inline)) void pw__q2kx_quants_avx512(const uint8_t *qs,
                                                                         size_t bb, uint8_t *rec) {
    const __m512i m33 = _mm512_set1_epi8(0x33), m0f = _mm512_set1_epi8(0x0F);
#define PW__Q2KX_SEL(m, a, b) _mm512_ternarylogic_epi32((m), (a), (b), 0xCA) /* m ? a : b */
    for (int c = 0; c < 4; ++c) {
        __m512i x[4], y[4];
        pw__t32f_rows16(qs + 16 * c, bb, x);
        pw__t32f_rows16(qs + 16 * c + 16 * bb, bb, y);
        for (int j = 0; j < 2; ++j) {
            const __m512i p = PW__Q2KX_SEL(m33, x[j], _mm512_slli_epi16(x[j + 2], 2));
            const __m512i q = PW__Q2KX_SEL(m33, _mm512_srli_epi16(x[j], 2), x[j + 2]);
            const __m512i r = PW__Q2KX_SEL(m33, y[j], _mm512_slli_epi16(y[j + 2], 2));
            const __m512i t = PW__Q2KX_SEL(m33, _mm512_srli_epi16(y[j], 2), y[j + 2]);
            const __m512i g[4] = {PW__Q2KX_SEL(m0f, p, _mm512_slli_epi16(r, 4)),
                                  PW__Q2KX_SEL(m0f, q, _mm512_slli_epi16(t, 4)),
                                  PW__Q2KX_SEL(m0f, _mm512_srli_epi16(p, 4), r),
                                  PW__Q2KX_SEL(m0f, _mm512_srli_epi16(q, 4), t)};
            for (int k = 0; k < 4; ++k)
                _mm512_storeu_si512(rec + PW__Q2KX_SUB * (8 * (c / 2) + c % 2 + 2 * k) + 64 * j,
                                    g[k]);
        }
    }
#undef PW__Q2KX_SEL
}

/* The dword at p of 32 rows (rows rs bytes apart; the 16 bytes at p - 12 of each row
 * are read) as two fp16 a row: its low words at lo, its high words at hi (32 fp16 each;
 * NULL: not stored). A block's d and dmin. */
static inline __attribute__((always_inline)) void pw__q2kx_f16_rows(const uint8_t *p, size_t rs,
                                                                    uint8_t *lo, uint8_t *hi) {
    for (int h = 0; h < 2; ++h) {
        __m512i col[4];
        pw__t32f_rows16(p - 12 + 16 * rs * (size_t)h, rs, col);
        if (lo) _mm256_storeu_si256((__m256i *)(lo + 32 * h), _mm512_cvtepi32_epi16(col[3]));
        if (hi)
            _mm256_storeu_si256((__m256i *)(hi + 32 * h),
                                _mm512_cvtepi32_epi16(_mm512_srli_epi32(col[3], 16)));
    }
}

#endif
