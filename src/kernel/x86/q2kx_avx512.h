/*
 * What the AVX-512 kernels of the q2kx32k4 family (kernel/q2kx.h) and of
 * tq2x32k4 (kernel/tq2x.h: its quant bytes are q2kx32k4's) share: one
 * sub-block's four k steps unpacked from its two loads P_0, P_1 and dotted with
 * the activations, in the GEMV form (q2kx_avx512.c, tq2x_avx512.c) and the GEMM
 * form (q2kx_gemm_avx512.c, tq2x_avx512.c). Step u is q_u = P_0, P_1, P_0 >> 2,
 * P_1 >> 2 (16-bit shifts), row r in bits 0-1 of lane r's bytes and row r + 16
 * in bits 4-5.
 */
#ifndef PACKWISE_KERNEL_X86_Q2KX_AVX512_H
#define PACKWISE_KERNEL_X86_Q2KX_AVX512_H

#include "kernel/q2kx.h"
#include "kernel/x86/tile32_avx512.h"

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

#endif
