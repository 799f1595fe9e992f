#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "tq2x_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the tq2x32k4 family (layout in kernel/tq2x.h):
 * TQ2_0 in the bytes the x86 kernels read, so one packed weight (or cache file)
 * serves both. The GEMV loop is tile32_neon.h's, the GEMM loop tile32_kgemm.h's
 * (PW__T32N_KGEMM); this file is the record functions. Activations are pw__q8_256
 * rows (|qs| <= 127).
 *
 * The quant bytes are q2kx32k4's, and so is the step code (arm/q2kx_neon.h): every
 * 64-byte load P_k of a sub-block is four q registers; register j holds rows
 * 4j .. 4j+3 (group j, bits 0-3) and 16 + 4j .. (group 4 + j, bits 4-7); twelve
 * operations make the eight trit vectors of register j of a sub-block, then one
 * indexed SDOT each against the sub-block's 16 activation bytes (lane u: step u).
 * TQ2_0 has no sub-block scales, so a group's dot runs over the whole block:
 *
 *   D_q = -x.sum + sum_s sum_u sdot(t, a_s, lane u)     |.| <= 256 * (3 + 1) * 128 < 2^18
 *   acc_q += f32(D_q) * d_q * x.d                        per record
 *
 * GEMV (tq2xn_block): a trit need not be shifted down to bits 0-1 before its SDOT:
 * masked where it lies it goes to a chain of its own factor (pw__q2kxn_dots_masked,
 * arm/q2kx_neon.h), and as TQ2_0 has no sub-block scales the chains run over the whole
 * record and are added once (an SSRA by 2 and by 4). Sixteen chains, per sub-block 8
 * loads, 32 unpacking ops (an AND or a USHR each), 32 SDOT, where the step code above
 * took 48 unpacking ops. llvm-mca, cycles a sub-block: neoverse-v2 16.02 and apple-m1 21.35
 * (below), where one chain a group took 20.03 and 26.69 (and SDOT from zero then an add
 * per group 24.0 on neoverse-v2).
 *
 * GEMM (tq2xn_panel, tile32_kgemm.h): per register j of the loads (8 rows), the trits
 * of every sub-block made once for the panel's mr rows of X: 2 loads, 12 unpacking
 * ops and 8 x mr SDOT; the 2 x mr sums stay in registers over the whole record.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   tq2xn_run, neoverse-v2: 16.02 cycles/iter, 0.121 cycles/weight byte,
 *     8.2 B/cycle: 82% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   tq2xn_run, apple-m1: 21.35 cycles/iter, 0.162 cycles/weight byte,
 *     6.2 B/cycle: 34% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   tq2xn_panel_any, neoverse-v2: 11.03 cycles/iter, 0.334 cycles/weight byte,
 *     46.4 int8 MAC/cycle: 73% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   tq2xn_panel_any, apple-m1: 14.69 cycles/iter, 0.445 cycles/weight byte,
 *     34.8 int8 MAC/cycle: 54% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
/* As in q4x_dotprod.c: GCC 12's pre-allocation scheduler hoists loads ahead of the
 * SDOT chains and spills. Set before the includes so that every inlined helper shares
 * the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "format/blocks.h"
#include "kernel/arm/q2kx_neon.h"
#include "kernel/arm/tile32_neon.h"
#include "kernel/tq2x.h"

#include <stddef.h>

#define TQ2XN_INLINE static inline __attribute__((always_inline))

#define TQ2XN_MR 4 /* most rows of X per GEMM panel */

/* ---- GEMV ---- */

/* GEMV record function (tile32_neon.h): acc[q] += group q's dots with block xbp. */
TQ2XN_INLINE void tq2xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    /* chains by factor over the whole record (pw__q2kxn_dots_masked): one[j] group j's
     * trits in place, four[j] its 4t, sixteen[j] group 4 + j's 16t, one[4 + j] its t */
    int32x4_t one[8], four[4], sixteen[4];
    pw__arm_chain_splat(vdupq_n_s32(-xb->sum), 8, one);
    pw__arm_chain_zeros(four, 4);
    pw__arm_chain_zeros(sixteen, 4);
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sb = rec + PW__TQ2X_SUB * s;
        const int8x16_t a = vld1q_s8(xb->qs + 16 * s);
        for (int j = 0; j < 4; ++j)
            pw__q2kxn_dots_masked(sb, j, a, &one[j], &four[j], &sixteen[j], &one[4 + j]);
    }
    for (int j = 0; j < 4; ++j) {
        one[j] = vsraq_n_s32(one[j], four[j], 2);
        one[4 + j] = vsraq_n_s32(one[4 + j], sixteen[j], 4);
    }
    for (int q = 0; q < 8; ++q)
        acc[q] = pw__t32n_scale_add(acc[q], one[q], pw__t32n_f16x4(rec + PW__TQ2X_D + 8 * q), xb->d);
}

/* ---- GEMM ---- */

/* One record's d as f32, row r at index r (the GEMM loop's decode, tile32_kgemm.h). */
typedef struct tq2xn_rec {
    float d[32];
} tq2xn_rec;

static void tq2xn_decode(const uint8_t *rec, void *out) {
    tq2xn_rec *rs = out;
    for (int q = 0; q < 8; ++q) vst1q_f32(rs->d + 4 * q, pw__t32n_f16x4(rec + PW__TQ2X_D + 8 * q));
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. Register j of
 * every load (groups j and 4 + j) at a time, its 2 x mr sums in registers over the
 * whole record. */
TQ2XN_INLINE void tq2xn_panel(const uint8_t *rec, const tq2xn_rec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    const pw__q8_256 *xb[TQ2XN_MR];
    for (int i = 0; i < mr; ++i) xb[i] = (const pw__q8_256 *)x[i];
    for (int j = 0; j < 4; ++j) {
        int32x4_t lo[TQ2XN_MR], hi[TQ2XN_MR];
        for (int i = 0; i < mr; ++i) lo[i] = hi[i] = vdupq_n_s32(-xb[i]->sum);
        for (int s = 0; s < 16; ++s) {
            int8x16_t w[8];
            pw__q2kxn_quants(rec + PW__TQ2X_SUB * s, j, w);
            for (int i = 0; i < mr; ++i) {
                const int8x16_t a = vld1q_s8(xb[i]->qs + 16 * s);
                lo[i] = pw__q2kxn_dot4(lo[i], w, a);
                hi[i] = pw__q2kxn_dot4(hi[i], w + 4, a);
            }
        }
        const float32x4_t dl = vld1q_f32(rs->d + 4 * j), dh = vld1q_f32(rs->d + 16 + 4 * j);
        for (int i = 0; i < mr; ++i) {
            float *yl = yb + 32 * i + 4 * j, *yh = yb + 32 * i + 16 + 4 * j;
            vst1q_f32(yl, pw__t32n_scale_add(vld1q_f32(yl), lo[i], dl, xb[i]->d));
            vst1q_f32(yh, pw__t32n_scale_add(vld1q_f32(yh), hi[i], dh, xb[i]->d));
        }
    }
}

/* The GEMV over tq2xn_block, the GEMMs over tq2xn_panel (its panel of any height
 * 1..TQ2XN_MR out of line: two loops call it; scripts/arm_mca.py finds it), one of them
 * over input-block-major TQ2_0 bytes as they are (records made one at a time from a
 * column's blocks, pw__tq2x_record_from_blocks), and the three kernels (ranked in
 * tile32_neon.h). */
PW__T32N_KFAMILY(tq2xn, tq2_0_tq2x32k4, tq2_0, PW_FORMAT_TQ2_0, PW__TQ2X_RECORD, pw__block_tq2_0,
                 pw__tq2x_record_from_blocks, tq2xn_rec, tq2xn_decode, TQ2XN_MR, PW__TQ2X_KERNEL,
                 PW__TQ2X_GEMM_KERNEL)
