#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "tq2x_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV and GEMM over the tq2x32k4 family (layout in kernel/tq2x.h):
 * TQ2_0 with its trits laid out as q2kx32k4's quants, so that one 64-byte load
 * holds two 4-value k steps of all 32 rows of a tile. Activations are pw__q8_256
 * rows; y[i, o] for o in [o0, o1), i in [i0, i1).
 *
 * GEMV, one record, one row of X. Lane r holds rows r (bits 0-3 of a byte) and
 * r + 16 (bits 4-7); per sub-block s, with a_u = bcast(x.qs[16s + 4u .. +3]):
 *
 *   q_0 = P_0, q_1 = P_1, q_2 = P_0 >> 2, q_3 = P_1 >> 2      (16-bit shifts)
 *   L += dpbusd(q_u & 0x03, a_u)        = dot(t[r])                  rows 0..15
 *   W += dpbusd(q_u & 0x33, a_u)        = dot(t[r] + 16 t[r + 16])   (whole bytes)
 *
 * over the whole block in one integer sum (TQ2_0 has no sub-block scales), 4 chains
 * each (one per u) so that no chain is longer than 16; L starts at -x.sum and W at
 * -17 x.sum, so that
 *
 *   lo = L = dot(t[r]) - x.sum,   hi = (W - L) >> 4 = dot(t[r + 16]) - x.sum
 *
 * (exact: W - L = 16 hi), and acc += f32(lo, hi) * d * x.d (pw__tile32_scale_add).
 * The whole bytes save q2kx's shift and mask for rows r + 16 per step: per sub-block
 * 2 loads, 10 logic ops and shifts, 8 dot products.
 *
 * GEMM, one record, a panel of up to PW__T32G_MR = 10 rows of X (the loop is
 * tile32_gemm_avx512.h's, as for Q4_0 and Q8_0): the steps unpacked once per panel,
 * A = q_u & 0x03 (row r), B = (q_u >> 4) & 0x03 (row r + 16), two int32 chains per
 * row of X that start at -x_i.sum, 2 mr dot products per step.
 *
 * Integer ranges (|x.qs| <= 127, |x.sum| <= 256 * 128; a trit t <= 3, the 3 that
 * ggml never writes included): |dot| <= 256 * 3 * 127 < 2^17, W's lanes (bytes up to
 * 51) <= 256 * 51 * 127 < 2^22, |W + 17 x.sum| < 2^23: all exact in int32, and the
 * sums lo, hi (< 2^18) exact in f32.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 *
 * Measured: packwise bench --formats TQ2_0 --shapes 11008x4096 --batch 1,128 --threads 1
 * --policy compact,in_place, the shared 2-vCPU AMD EPYC (Zen 5) VM, load 3, one run:
 * GEMV 0.298 ms, 93% of the read (the row-major tq2_0_rm_avx512vnni in the same run:
 * 0.467 ms, 59%); GEMM n = 128 22.2 ms, 62% of the int8 peak (row-major 46.7 ms, 28%).
 * Two more runs at load 4-4.7: GEMV 76-93% (row-major 54-57%), GEMM 60-72% (19-24%).
 */
#include "format/blocks.h"
#include "kernel/tq2x.h"
#include "kernel/x86/q2kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_gemm_avx512.h"

#include <stddef.h>

#define TQ2X_INLINE static inline __attribute__((always_inline))

#define TQ2X_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

/* One record with one pw__q8_256 activation block (the record function of
 * tile32_avx512.h). */
TQ2X_INLINE void tq2x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m512i z = _mm512_setzero_si512();
    __m512i l[4] = {_mm512_set1_epi32(-xb->sum), z, z, z};
    __m512i w[4] = {_mm512_set1_epi32(-17 * xb->sum), z, z, z};
#pragma GCC unroll 4
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__TQ2X_SUB * s;
        if (pf) pw__tile32_prefetch_pf(sub, PW__TQ2X_SUB, pf);
        pw__q2kx_gemv_sub(sub, xb->qs + 16 * s, l, w, 4);
    }
    if (pf) pw__tile32_prefetch_pf(rec + PW__TQ2X_D, PW__TQ2X_RECORD - PW__TQ2X_D, pf);
    const __m512i lo = _mm512_add_epi32(_mm512_add_epi32(l[0], l[1]), _mm512_add_epi32(l[2], l[3]));
    const __m512i wa = _mm512_add_epi32(_mm512_add_epi32(w[0], w[1]), _mm512_add_epi32(w[2], w[3]));
    const __m512i hi = _mm512_srai_epi32(_mm512_sub_epi32(wa, lo), 4);
    pw__tile32_scale_add(acc, lo, hi, rec + PW__TQ2X_D, xb->d);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_avx512.h), as
 * Q2_K's. */
static void tq2x_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, PW__QK_K, PW__TQ2X_RECORD, sizeof(pw__q8_256), tq2x_block, 1,
                   PW__HW_ZEN4);
}

const pw__kernel pw__k_tq2_0_tq2x32k4_avx512vnni =
    PW__TQ2X_KERNEL("avx512vnni", TQ2X_FEATURES, tq2x_run, PW__PRIO_AVX512 + 2);

/* One record for mr (a constant) rows of X: acc[i][0..31] += their dots (the record
 * function of tile32_gemm_avx512.h). */
TQ2X_INLINE void tq2x_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    __m512i dt[PW__T32G_MR][2], lo[PW__T32G_MR], hi[PW__T32G_MR];
#pragma GCC unroll 10
    for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm512_set1_epi32(-((const pw__q8_256 *)x[i])->sum);
#pragma GCC unroll 1
    for (int s = 0; s < 16; ++s)
        pw__q2kx_gemm_sub(rec + PW__TQ2X_SUB * s, x, offsetof(pw__q8_256, qs) + 16 * s, dt, mr);
#pragma GCC unroll 10
    for (int i = 0; i < mr; ++i) lo[i] = dt[i][0], hi[i] = dt[i][1];
    pw__t32g_scale_add(rec + PW__TQ2X_D, x, lo, hi, acc, mr);
}

static void tq2x_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32g_run(c, o0, o1, i0, i1, PW__QK_K, PW__TQ2X_RECORD, sizeof(pw__q8_256), tq2x_gemm_block);
}

const pw__kernel pw__k_tq2_0_tq2x32k4_gemm_avx512vnni = PW__TQ2X_GEMM_KERNEL(
    "avx512vnni", TQ2X_FEATURES, tq2x_gemm_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, PW__T32G_MR);

/* GEMM over input-block-major TQ2_0 bytes as they are: the loop above over each tile's
 * records of a pass made in an L1 scratch from the 32 blocks of each column
 * (pw__t32g_run_fill), the quants as Q2_K's (pw__q2kx_quants_avx512, q2kx_avx512.h),
 * d from each row's last dword (bytes 62..65: d in its high word). Measured as Q2_K's
 * (q2kx_gemm_avx512.c, the same runs, --formats TQ2_0): in_place 20.6-21.4 ms (0.98-1.01x
 * the packed GEMM's 20.8-21.0), where the portable maker took 24.4-29.6 ms (0.70-0.84x
 * of 18.3-20.8). */
void pw__tq2x_record_from_blocks_avx512(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_tq2_0);
    pw__q2kx_quants_avx512(src + offsetof(pw__block_tq2_0, qs), bb, rec);
    _Static_assert(offsetof(pw__block_tq2_0, d) + 2 == sizeof(pw__block_tq2_0), "d ends a block");
    pw__q2kx_f16_rows(src + offsetof(pw__block_tq2_0, d) - 2, bb, NULL, rec + PW__TQ2X_D);
}

PW__TILE32_IBM_FILL(tq2x_fill_ibm, pw__block_tq2_0, PW__TQ2X_RECORD,
                    pw__tq2x_record_from_blocks_avx512)

static void tq2x_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32g_run_fill(c, o0, o1, i0, i1, PW__QK_K, PW__TQ2X_RECORD, sizeof(pw__q8_256),
                      tq2x_gemm_block, tq2x_fill_ibm);
}

const pw__kernel pw__k_tq2_0_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "tq2_0", PW_FORMAT_TQ2_0, Q8_256, "avx512vnni", TQ2X_FEATURES, tq2x_ibm_gemm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, PW__T32G_MR);
