#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q2kx_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q2kx32k4 family (layout in kernel/q2kx.h): Q2_K
 * with its bits rearranged so that one 64-byte load holds two 4-value k steps
 * of all 32 rows of a tile. Activations are pw__q8_256 rows; y[i, o] for o in
 * [o0, o1), i in [i0, i1) (n > 1 repeats the tile per row of X: GEMM speed
 * comes from the GEMM kernel, q2kx_gemm_avx512.c).
 *
 * One sub-block s (128 bytes, 16 values) of a record, one row of X. Lane r
 * holds rows r (bits 0-3 of a byte) and r + 16 (bits 4-7); with
 * a_u = bcast(x.qs[16s + 4u .. 16s + 4u + 3]):
 *
 *   q_0 = P_0, q_1 = P_1, q_2 = P_0 >> 2, q_3 = P_1 >> 2      (16-bit shifts)
 *   L = sum_u dpbusd(q_u & 0x03, a_u)   = dot(q[r])                 rows 0..15
 *   W = sum_u dpbusd(q_u & 0x33, a_u)   = dot(q[r] + 16 q[r + 16])
 *   Y = (W - L) >> 4                    = dot(q[r + 16])   exact (a multiple of 16)
 *
 * Then, per sub-block, with the 32 scale bytes of s widened to dwords (sc the low
 * nibble, m the high one, each a dword whose upper word is zero):
 *
 *   sx += dpwssd(L, sc[0..15]),   sy += dpwssd(Y, sc[16..31])
 *   mx += dpwssd(m[0..15], bcast(bsums[s])),  my likewise for rows 16..31
 *
 * (vpdpwssd multiplies the words of a dword pairwise: the low word of L, which
 * is L itself as |L| < 2^15, by sc, and its upper word by 0), and per record
 * acc_lo += (f32(sx) * d[0..15] - f32(mx) * dmin[0..15]) * x.d, acc_hi likewise.
 * Per sub-block: 2 loads, 8 dot products and 12 logic ops and shifts for the
 * quants, 4 dot products and 4 masks and shifts for the scales and mins.
 *
 * Integer ranges (|x.qs| <= 127, the block sums |bsums| <= 16 * 128): |L|, |Y| <=
 * 16 * 3 * 127 = 6096 (W <= 16 * 51 * 127 fits too); |sx| <= 16 * 15 * 6096 < 2^21,
 * |mx| <= 16 * 15 * 2048 < 2^19: all exact in f32.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 * Tiles lie one after another, so a thread's range is one linear stream; the
 * record is read in address order (sub-blocks, then scales, d and dmin), each
 * sub-block prefetching its bytes further on (pw__tile32_prefetch_pf), as the
 * Q4_K and Q6_K GEMVs do.
 *
 * Measured: packwise bench --formats Q2_K --shapes 11008x4096 --batch 1 --threads 1,
 * this project's 2-vCPU AMD EPYC VM shared with other jobs (load average 3-6), single
 * runs: 0.375-0.380 ms, 83-91% of the read (the row-major AVX-VNNI kernel it replaces,
 * timed with --kernel in the same session: 0.908 ms, 37%).
 */
#include "format/blocks.h"
#include "kernel/q2kx.h"
#include "kernel/x86/q2kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"

#define Q2KX_INLINE static inline __attribute__((always_inline))

/* One record with one pw__q8_256 activation block (the record function of
 * tile32_avx512.h). */
Q2KX_INLINE void q2kx_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    __m512i xs[16], ys[16];
#pragma GCC unroll 2
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q2KX_SUB * s;
        if (pf) pw__tile32_prefetch_pf(sub, PW__Q2KX_SUB, pf);
        __m512i l = _mm512_setzero_si512(), w = _mm512_setzero_si512();
        pw__q2kx_gemv_sub(sub, xb->qs + 16 * s, &l, &w, 1);
        xs[s] = l;
        ys[s] = _mm512_srai_epi32(_mm512_sub_epi32(w, l), 4);
    }
    if (pf)
        pw__tile32_prefetch_pf(rec + PW__Q2KX_SCALES, PW__Q2KX_RECORD - PW__Q2KX_SCALES, pf);
    const __m512i m0f = _mm512_set1_epi32(0x0F);
    __m512i sx = _mm512_setzero_si512(), sy = sx, mx = sx, my = sx;
#pragma GCC unroll 16
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sb = rec + PW__Q2KX_SCALES + 32 * s;
        const __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)sb));
        const __m512i v1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(sb + 16)));
        const __m512i bs = _mm512_set1_epi32(xb->bsums[s]);
        sx = _mm512_dpwssd_epi32(sx, xs[s], _mm512_and_si512(v0, m0f));
        sy = _mm512_dpwssd_epi32(sy, ys[s], _mm512_and_si512(v1, m0f));
        mx = _mm512_dpwssd_epi32(mx, _mm512_srli_epi32(v0, 4), bs);
        my = _mm512_dpwssd_epi32(my, _mm512_srli_epi32(v1, 4), bs);
    }
    const __m256i *d16 = (const __m256i *)(rec + PW__Q2KX_D);
    const __m256i *m16 = (const __m256i *)(rec + PW__Q2KX_DMIN);
    const __m512 xd = _mm512_set1_ps(xb->d);
    const __m512 t0 = _mm512_fmsub_ps(_mm512_cvtepi32_ps(sx), _mm512_cvtph_ps(_mm256_loadu_si256(d16)),
                                      _mm512_mul_ps(_mm512_cvtepi32_ps(mx),
                                                    _mm512_cvtph_ps(_mm256_loadu_si256(m16))));
    const __m512 t1 = _mm512_fmsub_ps(
        _mm512_cvtepi32_ps(sy), _mm512_cvtph_ps(_mm256_loadu_si256(d16 + 1)),
        _mm512_mul_ps(_mm512_cvtepi32_ps(my), _mm512_cvtph_ps(_mm256_loadu_si256(m16 + 1))));
    acc[0] = _mm512_fmadd_ps(t0, xd, acc[0]);
    acc[1] = _mm512_fmadd_ps(t1, xd, acc[1]);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_avx512.h), as
 * Q4_K's. */
static void q2kx_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, PW__QK_K, PW__Q2KX_RECORD, sizeof(pw__q8_256), q2kx_block, 1,
                   PW__HW_ZEN4);
}

const pw__kernel pw__k_q2_k_q2kx32k4_avx512vnni = PW__Q2KX_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q2kx_run,
    PW__PRIO_AVX512 + 2);
