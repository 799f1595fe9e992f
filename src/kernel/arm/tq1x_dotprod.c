#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "tq1x_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the tq1x32k4 family (layout in kernel/tq1x.h):
 * TQ1_0 in the bytes the x86 kernels read, so one packed weight (or cache file)
 * serves both. The GEMV loop is tile32_neon.h's, the GEMM loop tile32_kgemm.h's;
 * this file is the record functions. Activations are pw__q8_256 rows.
 *
 * A 64-byte load L(g, h) is four q registers; register j holds rows 16h + 4j .. + 3,
 * group q = 4h + j (rows 4q .. 4q + 3). Per register v and trit k, with a_k the 4
 * activation bytes x.qs[e0(g, k) .. + 3] in every lane (LD1R):
 *
 *   w_k = (v_k >= 86) + (v_k >= 171)     two CMHS (all ones where true) and an add:
 *                                        -t, a signed byte 0, -1 or -2
 *   v_{k+1} = v_k * 3                    (MUL by element: 3 v mod 256)
 *   D_q += sdot(w_k, a_k)                = -sum t x.qs
 *   end of record:  acc_q += f32(-D_q - x.sum) * d * x.d
 *
 * Per 16 values of 4 rows: 5 ops (2 compares, the add, the multiply, the SDOT). |D_q|
 * <= 256 * 2 * 127 (tq1x.h).
 *
 * GEMV (tq1xn_block): the record in address order, dword by dword, the 8 groups'
 * chains in registers: per dword 8 loads, 40 SDOT. GEMM (tq1xn_panel): one group
 * (register j of half h's loads) at a time, its trits made once for the panel's mr rows
 * of X: per dword 1 load, 4 ops a trit, mr SDOT a trit.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * By the estimate below the GEMV gains little on Arm, unlike x86: NEON compares give
 * vectors, so the row-major tq1_0_rm_dotprod decodes nearly as cheaply (25.05 cycles
 * per 256-value block on neoverse-v2, 0.098 cycles a value; this loop 57.28 per 640
 * values, 0.090; apple-m1 0.125 and 0.119). Both are bound by about 5 vector ops per
 * 16 values (the trit, the next trit's multiply, the dot).
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   tq1xn_run, neoverse-v2: 57.28 cycles/iter, 0.447 cycles/weight byte,
 *     2.2 B/cycle: 22% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   tq1xn_run, apple-m1: 76.36 cycles/iter, 0.597 cycles/weight byte,
 *     1.7 B/cycle: 9% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   tq1xn_panel_any, neoverse-v2: 15.79 cycles/iter, 0.987 cycles/weight byte,
 *     20.3 int8 MAC/cycle: 32% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   tq1xn_panel_any, apple-m1: 21.04 cycles/iter, 1.315 cycles/weight byte,
 *     15.2 int8 MAC/cycle: 24% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
/* As in q4x_dotprod.c: GCC 12's pre-allocation scheduler hoists loads ahead of the
 * SDOT chains and spills. Set before the includes so that every inlined helper shares
 * the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "format/blocks.h"
#include "kernel/arm/tile32_neon.h"
#include "kernel/tq1x.h"

#include <stddef.h>

#define TQ1XN_INLINE static inline __attribute__((always_inline))

#define TQ1XN_MR 4 /* most rows of X per GEMM panel */

/* -t of the 16 bytes v (0, -1 or -2 as signed bytes). */
TQ1XN_INLINE int8x16_t tq1xn_negtrit(uint8x16_t v) {
    return vreinterpretq_s8_u8(vaddq_u8(vcgeq_u8(v, vdupq_n_u8(86)), vcgeq_u8(v, vdupq_n_u8(171))));
}

/* The 4 activation bytes at p in every lane: LD1R, a load-port operation (the
 * lane-indexed SDOT needs its lane a constant the loops here do not unroll to). */
TQ1XN_INLINE int8x16_t tq1xn_bcast4(const int8_t *p) {
    return vreinterpretq_s8_s32(vld1q_dup_s32((const int32_t *)(const void *)p));
}

/* acc + f32(-D - sum) * d * xd. */
TQ1XN_INLINE float32x4_t tq1xn_out(float32x4_t acc, int32x4_t D, int32_t sum, float32x4_t d,
                                   float xd) {
    const int32x4_t s = vsubq_s32(vnegq_s32(D), vdupq_n_s32(sum));
    return vfmaq_n_f32(acc, vmulq_f32(vcvtq_f32_s32(s), d), xd);
}

/* D[j] (j < n) += the dots of the trits (`trits` of them) of the registers v[j], trit
 * k's activations at xq + step * k, with the trits made once for all n chains: the
 * GEMV's 8 groups with one row of X (v[j] group j's, xq[j] the row's), or the GEMM's
 * one group with n rows (v[j] the same, xq[j] row j's). */
TQ1XN_INLINE void tq1xn_trits(const uint8x16_t *v0, int nv, const int8_t *const *xq, int n,
                              int step, int trits, int32x4_t *D) {
    const uint8x16_t three = vdupq_n_u8(3);
    uint8x16_t v[8];
    for (int j = 0; j < nv; ++j) v[j] = v0[j];
    for (int k = 0; k < trits; ++k) {
        int8x16_t a[TQ1XN_MR];
        for (int i = 0; i < n; ++i) a[i] = tq1xn_bcast4(xq[i] + step * k);
        for (int j = 0; j < nv; ++j) {
            const int8x16_t w = tq1xn_negtrit(v[j]);
            for (int i = 0; i < n; ++i) D[nv > 1 ? j : i] = vdotq_s32(D[nv > 1 ? j : i], w, a[i]);
            if (k + 1 < trits) v[j] = vmulq_u8(v[j], three);
        }
    }
}

/* The three runs of dwords (tq1x.h): g = 0..7 (e0 = 4g + 32k), 8..11 (160 + 4(g - 8) +
 * 16k), 12 (240 + 4k), for nv registers at byte `at` of each dword's 128 and n rows of
 * X, through tq1xn_trits. The first is the loop scripts/arm_mca.py times. */
TQ1XN_INLINE void tq1xn_dwords(const uint8_t *rec, int at, int nv, const pw__q8_256 *const *xb,
                               int n, int32x4_t *D) {
#define TQ1XN_RUN(g0_, g1_, base_, step_, trits_)                                              \
    for (int g = (g0_); g < (g1_); ++g) {                                                        \
        uint8x16_t v[8];                                                                         \
        const int8_t *xq[TQ1XN_MR];                                                              \
        for (int j = 0; j < nv; ++j)                                                             \
            v[j] = vld1q_u8(rec + PW__TQ1X_GROUP * g + at + 16 * j);                              \
        for (int i = 0; i < n; ++i) xq[i] = xb[i]->qs + (base_) + 4 * (g - (g0_));               \
        tq1xn_trits(v, nv, xq, n, (step_), (trits_), D);                                         \
    }
#pragma GCC unroll 1
    TQ1XN_RUN(0, 8, 0, 32, 5)
#pragma GCC unroll 1
    TQ1XN_RUN(8, 12, 160, 16, 5)
    TQ1XN_RUN(12, 13, 240, 4, 4)
#undef TQ1XN_RUN
}

/* ---- GEMV ---- */

/* GEMV record function (tile32_neon.h): acc[q] += group q's dots with block xbp. */
TQ1XN_INLINE void tq1xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    int32x4_t D[8];
    for (int q = 0; q < 8; ++q) D[q] = vdupq_n_s32(0);
    tq1xn_dwords(rec, 0, 8, &xb, 1, D);
    for (int q = 0; q < 8; ++q)
        acc[q] = tq1xn_out(acc[q], D[q], xb->sum, pw__t32n_f16x4(rec + PW__TQ1X_D + 8 * q), xb->d);
}

/* ---- GEMM ---- */

/* One record's d as f32, decoded once for every panel. */
typedef struct tq1xn_rec {
    float d[32];
} tq1xn_rec;

static void tq1xn_decode(const uint8_t *rec, void *out) {
    tq1xn_rec *rs = out;
    for (int q = 0; q < 8; ++q) vst1q_f32(rs->d + 4 * q, pw__t32n_f16x4(rec + PW__TQ1X_D + 8 * q));
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots, group q at a
 * time, its mr chains in registers. */
TQ1XN_INLINE void tq1xn_panel(const uint8_t *rec, const tq1xn_rec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    const pw__q8_256 *xb[TQ1XN_MR];
    for (int i = 0; i < mr; ++i) xb[i] = (const pw__q8_256 *)x[i];
    for (int q = 0; q < 8; ++q) {
        int32x4_t D[TQ1XN_MR];
        for (int i = 0; i < mr; ++i) D[i] = vdupq_n_s32(0);
        tq1xn_dwords(rec, 16 * q, 1, xb, mr, D);
        const float32x4_t d = vld1q_f32(rs->d + 4 * q);
        for (int i = 0; i < mr; ++i) {
            float *y = yb + 32 * i + 4 * q;
            vst1q_f32(y, tq1xn_out(vld1q_f32(y), D[i], xb[i]->sum, d, xb[i]->d));
        }
    }
}

/* The GEMV over tq1xn_block, the GEMMs over tq1xn_panel (its panel of any height
 * 1..TQ1XN_MR out of line; scripts/arm_mca.py finds it), one of them over
 * input-block-major TQ1_0 bytes as they are (records made one at a time from a column's
 * blocks, pw__tq1x_record_from_blocks), and the three kernels (ranked in
 * tile32_neon.h). */
PW__T32N_KFAMILY(tq1xn, tq1_0_tq1x32k4, tq1_0, PW_FORMAT_TQ1_0, PW__TQ1X_RECORD, pw__block_tq1_0,
                 pw__tq1x_record_from_blocks, tq1xn_rec, tq1xn_decode, TQ1XN_MR, PW__TQ1X_KERNEL,
                 PW__TQ1X_GEMM_KERNEL)
