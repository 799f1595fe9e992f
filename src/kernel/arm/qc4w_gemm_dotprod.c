#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "qc4w_gemm_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod kernel for QC4W family qc4w_n8k8s2 (layout in qc4w/qc4w.h):
 * 8 channels by up to PW__QC4W_MRD rows of X per micro-tile, s8 x s8 sdot by
 * element, so no offset is needed: the zero point alone comes back through
 * the weight sums (qc4w_neon.h has the last steps and the exactness bound).
 *
 * Bytes read per 8 k values: one 32-byte chunk of the tile, and 8 bytes of
 * each row's q (an int8x8 whose lane 0 pairs with the low nibbles and lane 1
 * with the high ones):
 *
 *   chunk j (32 B):  | ch 0: 4 B | ch 1 | ch 2 | ch 3 | ch 4 | ... | ch 7 |   two int8x16
 *   byte i of ch c:  low nibble w[c, 8j + i], high nibble w[c, 8j + 4 + i]   (i < 4)
 *   QD8 row:         | header 64 B | q[Kp] | u[Kp] |     q[8j .. 8j+7]
 *
 *   acc[ch 0..3] += sdot(16 * w_low [ch 0..3], q, lane 0) + sdot(16 * w_high, q, lane 1)
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   run_dotprod, neoverse-v2: 5.02 cycles/iter, 0.157 cycles/weight byte,
 *     51.0 int8 MAC/cycle: 80% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   run_dotprod, apple-m1: 6.69 cycles/iter, 0.209 cycles/weight byte,
 *     38.3 int8 MAC/cycle: 60% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
#include "kernel/arm/qc4w_neon.h"

#define PW__QC4W_MRD 4 /* rows of X per micro-tile */

PW__QC4W_INLINE void panel(const uint8_t *tile, int64_t chunks, const uint8_t *lhs, size_t ldl,
                           uint8_t *y, size_t ldy_bytes, int cols, const pw__mm_call *c,
                           const int MR) {
    int32x4_t acc[PW__QC4W_MRD][2];
    const int8_t *q = (const int8_t *)(lhs + sizeof(pw__qd8_header));
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = vdupq_n_s32(0);
    for (int64_t j = 0; j < chunks; ++j) {
        const int8x16_t r0 = vld1q_s8((const int8_t *)(tile + 32 * j));
        const int8x16_t r1 = vld1q_s8((const int8_t *)(tile + 32 * j + 16));
        const int8x16_t l0 = pw__qc4w_lo16(r0), h0 = pw__qc4w_hi16(r0);
        const int8x16_t l1 = pw__qc4w_lo16(r1), h1 = pw__qc4w_hi16(r1);
        for (int r = 0; r < MR; ++r) {
            const int8x8_t a = vld1_s8(q + r * ldl + 8 * j);
            acc[r][0] = vdotq_lane_s32(vdotq_lane_s32(acc[r][0], l0, a, 0), h0, a, 1);
            acc[r][1] = vdotq_lane_s32(vdotq_lane_s32(acc[r][1], l1, a, 0), h1, a, 1);
        }
    }
    const uint8_t *meta = tile + 32 * chunks;
    const size_t esz = c->y16 != NULL ? 2 : 4;
    for (int r = 0; r < MR; ++r) {
        const uint8_t *row = lhs + r * ldl;
        uint8_t *yr = y + r * ldy_bytes;
        pw__qc4w_finish4(acc[r][0], row, meta, 8, 0, c, yr, cols < 4 ? cols : 4);
        if (cols > 4) pw__qc4w_finish4(acc[r][1], row, meta, 8, 4, c, yr + 4 * esz, cols - 4);
    }
}

static void run_dotprod(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const int64_t chunks = d->in_padded / 8;
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    for (int64_t t0 = n0; t0 < n1; t0 += 8) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / 8) * d->tile_bytes;
        const int cols = n1 - t0 < 8 ? (int)(n1 - t0) : 8;
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        int64_t m = m0;
        for (; m + PW__QC4W_MRD <= m1; m += PW__QC4W_MRD)
            panel(tile, chunks, c->xq + (size_t)m * ldl, ldl, y + (size_t)m * ldy_bytes, ldy_bytes,
                  cols, c, PW__QC4W_MRD);
        const uint8_t *a = c->xq + (size_t)m * ldl;
        uint8_t *yy = y + (size_t)m * ldy_bytes;
        switch (m1 - m) {
        case 3: panel(tile, chunks, a, ldl, yy, ldy_bytes, cols, c, 3); break;
        case 2: panel(tile, chunks, a, ldl, yy, ldy_bytes, cols, c, 2); break;
        case 1: panel(tile, chunks, a, ldl, yy, ldy_bytes, cols, c, 1); break;
        default: break;
        }
    }
}

const pw__kernel pw__k_qc4w_n8k8s2_dotprod = PW__QC4W_KERNEL(
    8, 8, 2, "dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, run_dotprod, PW__PRIO_DOTPROD, PW__QC4W_MRD, 65536, 0);
