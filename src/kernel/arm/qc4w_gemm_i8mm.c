#if !defined(__aarch64__) || !defined(__ARM_FEATURE_MATMUL_INT8)
#error "qc4w_gemm_i8mm.c needs Arm64 i8mm (cmake gives *_i8mm.c -march=armv8.2-a+dotprod+i8mm)"
#endif
/*
 * NEON i8mm kernel for QC4W family qc4w_n4k16s2 (layout in qc4w/qc4w.h): 4
 * channels by pairs of rows of X, smmla (2 x 8 signed bytes times 8 x 2 into
 * a 2 x 2 int32 block). s8 x s8, so only the zero point comes back through
 * the weight sums (qc4w_neon.h has the last steps and the exactness bound).
 *
 * Bytes read per 16 k values: one 32-byte chunk of the tile, 16 bytes of the
 * q of each of two rows:
 *
 *   chunk j (32 B):  | ch 0: 8 B | ch 1: 8 B | ch 2: 8 B | ch 3: 8 B |        two int8x16
 *   byte i of ch c:  low nibble w[c, 16j + i], high nibble w[c, 16j + 8 + i]   (i < 8)
 *
 * so the low nibbles of one int8x16 are exactly smmla's right operand for
 * k 16j .. 16j+7 of two channels (8 k per channel, one after the other), the
 * high nibbles the one for k 16j+8 .. 16j+15. The left operand is the two
 * rows' q for the same 8 k, zipped by 64-bit halves:
 *
 *   acc{ch0,1} = | r0.c0 r0.c1 | r1.c0 r1.c1 | += smmla([r0 q0..7 | r1 q0..7], 16 * w_low[ch 0,1]) + ...
 *
 * An odd last row is paired with itself and only one of the two is stored.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   run_i8mm, neoverse-v2: 8.02 cycles/iter, 0.251 cycles/weight byte,
 *     16.0 int8 MAC/cycle: 12% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   run_i8mm, apple-m2: 8.02 cycles/iter, 0.251 cycles/weight byte,
 *     16.0 int8 MAC/cycle: 12% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 */
#include "kernel/arm/qc4w_neon.h"

/* Two rows x 4 channels; rows r0 and r1 may be the same row. */
static void pair(const uint8_t *tile, int64_t chunks, const uint8_t *row0, const uint8_t *row1,
                 uint8_t *y0, uint8_t *y1, int cols, const pw__mm_call *c) {
    int32x4_t a01 = vdupq_n_s32(0), a23 = a01;
    const int8_t *q0 = (const int8_t *)(row0 + sizeof(pw__qd8_header));
    const int8_t *q1 = (const int8_t *)(row1 + sizeof(pw__qd8_header));
    for (int64_t j = 0; j < chunks; ++j) {
        const int8x16_t w01 = vld1q_s8((const int8_t *)(tile + 32 * j));
        const int8x16_t w23 = vld1q_s8((const int8_t *)(tile + 32 * j + 16));
        const int64x2_t x0 = vreinterpretq_s64_s8(vld1q_s8(q0 + 16 * j));
        const int64x2_t x1 = vreinterpretq_s64_s8(vld1q_s8(q1 + 16 * j));
        const int8x16_t alo = vreinterpretq_s8_s64(vzip1q_s64(x0, x1));
        const int8x16_t ahi = vreinterpretq_s8_s64(vzip2q_s64(x0, x1));
        a01 = vmmlaq_s32(vmmlaq_s32(a01, alo, pw__qc4w_lo16(w01)), ahi, pw__qc4w_hi16(w01));
        a23 = vmmlaq_s32(vmmlaq_s32(a23, alo, pw__qc4w_lo16(w23)), ahi, pw__qc4w_hi16(w23));
    }
    const uint8_t *meta = tile + 32 * chunks;
    pw__qc4w_finish4(vcombine_s32(vget_low_s32(a01), vget_low_s32(a23)), row0, meta, 4, 0, c, y0, cols);
    if (y1 != NULL)
        pw__qc4w_finish4(vcombine_s32(vget_high_s32(a01), vget_high_s32(a23)), row1, meta, 4, 0, c,
                         y1, cols);
}

static void run_i8mm(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const int64_t chunks = d->in_padded / 16;
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    for (int64_t t0 = n0; t0 < n1; t0 += 4) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / 4) * d->tile_bytes;
        const int cols = n1 - t0 < 4 ? (int)(n1 - t0) : 4;
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        for (int64_t m = m0; m < m1; m += 2) {
            const int two = m + 1 < m1;
            const uint8_t *r0 = c->xq + (size_t)m * ldl;
            pair(tile, chunks, r0, two ? r0 + ldl : r0, y + (size_t)m * ldy_bytes,
                 two ? y + (size_t)(m + 1) * ldy_bytes : NULL, cols, c);
        }
    }
}

const pw__kernel pw__k_qc4w_n4k16s2_i8mm = PW__QC4W_KERNEL(
    4, 16, 2, "i8mm", PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM, run_i8mm, PW__PRIO_I8MM, 2, 65536, 0);
