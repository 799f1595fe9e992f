#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "qb4w_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod kernel for QB4W family qb4w_n8k8s2 (layout and contract in
 * kernel/qb4w.h): 8 channels by up to PW__QB4W_MRD rows of X per micro-tile,
 * s8 x s8 sdot by element on the signed QD8 q and the block-centred weights
 * u - z_b (int8, -15 .. 15). The contract's d_b multiplies q + 128, so the
 * block's weight sum ws_b = sum (u - z_b) is summed here too, by sdot of the
 * same weight vectors against ones (per tile, shared by every row):
 *
 *   d_b = sum q (u - z_b) + 128 * ws_b                        (int32, exact)
 *
 * |d_b| <= 255 * 15 * 256 per block: no overflow for any K.
 *
 * Bytes read per 8 k values: one 32-byte chunk of the tile, and 8 bytes of
 * each row's q (an int8x8 whose lane 0 pairs with the low nibbles and lane 1
 * with the high ones):
 *
 *   chunk j (32 B):  | ch 0: 4 B | ch 1 | ch 2 | ch 3 | ch 4 | ... | ch 7 |   two uint8x16
 *   byte i of ch c:  low nibble u[c, 8j + i], high nibble u[c, 8j + 4 + i]   (i < 4)
 *
 *   w_lo = (raw & 15) - z,  w_hi = (raw >> 4) - z    (z: each channel's z_b, 4 times)
 *   acc[ch 0..3] += sdot(w_lo[ch 0..3], q, lane 0) + sdot(w_hi, q, lane 1)
 *
 * Per block (at most min(B, Kq - bB) / 8 chunks: never past the QD8 padding)
 * the int32 sums start at 0 and end in the f32 accumulator by the contract's
 * step acc = fma((float)d_b, s_b, acc) (vfmaq: one rounding, as fmaf); after the
 * last block t = acc + (float)(neg_zp - 128) * F, then t * a_scale + bias.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   run_dotprod, neoverse-v2: 7.02 cycles/iter, 0.220 cycles/weight byte,
 *     36.4 int8 MAC/cycle: 57% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   run_dotprod, apple-m1: 9.35 cycles/iter, 0.292 cycles/weight byte,
 *     27.4 int8 MAC/cycle: 43% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
#include "kernel/arm/qb4w_neon.h"

#define PW__QB4W_MRD 4 /* rows of X per micro-tile */


PW__QB4W_INLINE void panel(const pw__pack_desc *d, const uint8_t *tile, const uint8_t *lhs, size_t ldl,
                           uint8_t *y, size_t ldy_bytes, int cols, const pw__mm_call *c, const int MR) {
    const int64_t nb = pw__qb4w_blocks_of(d), bsz = d->group;
    const uint8_t *fsum = tile + pw__qb4w_fsum_offset(d), *bias = tile + pw__qb4w_bias_offset(d);
    const int8_t *q[PW__QB4W_MRD];
    float32x4_t f[PW__QB4W_MRD][2];
    for (int r = 0; r < MR; ++r) {
        q[r] = pw__qd8_q(lhs + (size_t)r * ldl);
        f[r][0] = f[r][1] = vdupq_n_f32(0.0f);
    }
    const int8x16_t ones = vdupq_n_s8(1);
    const uint8x16_t idx0 = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    const uint8x16_t idx1 = vaddq_u8(idx0, vdupq_n_u8(4));
    const uint8x16_t m4 = vdupq_n_u8(15);
    for (int64_t b = 0; b < nb; ++b) {
        const pw__qb4w_at at = pw__qb4w_block_at(d, b);
        const int64_t chunks = pw__qb4w_block_values(d, b) / 8;
        const uint8x16_t zb = vcombine_u8(vld1_u8(tile + at.zero), vdup_n_u8(0));
        const int8x16_t z0 = vreinterpretq_s8_u8(vqtbl1q_u8(zb, idx0));
        const int8x16_t z1 = vreinterpretq_s8_u8(vqtbl1q_u8(zb, idx1));
        const uint8_t *w = tile + at.data;
        const int64_t k0 = b * bsz;
        int32x4_t acc[PW__QB4W_MRD][2];
        int32x4_t ws0 = vdupq_n_s32(0), ws1 = ws0;
        for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = vdupq_n_s32(0);
        for (int64_t j = 0; j < chunks; ++j) {
            const uint8x16_t r0 = vld1q_u8(w + 32 * j), r1 = vld1q_u8(w + 32 * j + 16);
            const int8x16_t l0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(r0, m4)), z0);
            const int8x16_t h0 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(r0, 4)), z0);
            const int8x16_t l1 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(r1, m4)), z1);
            const int8x16_t h1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(r1, 4)), z1);
            ws0 = vdotq_s32(vdotq_s32(ws0, l0, ones), h0, ones);
            ws1 = vdotq_s32(vdotq_s32(ws1, l1, ones), h1, ones);
            for (int r = 0; r < MR; ++r) {
                const int8x8_t a = vld1_s8(q[r] + k0 + 8 * j);
                acc[r][0] = vdotq_lane_s32(vdotq_lane_s32(acc[r][0], l0, a, 0), h0, a, 1);
                acc[r][1] = vdotq_lane_s32(vdotq_lane_s32(acc[r][1], l1, a, 0), h1, a, 1);
            }
        }
        ws0 = vshlq_n_s32(ws0, 7); /* 128 * ws_b */
        ws1 = vshlq_n_s32(ws1, 7);
        const float32x4_t s0 = vld1q_f32((const float *)(const void *)(tile + at.scale));
        const float32x4_t s1 = vld1q_f32((const float *)(const void *)(tile + at.scale + 16));
        for (int r = 0; r < MR; ++r) {
            f[r][0] = vfmaq_f32(f[r][0], vcvtq_f32_s32(vaddq_s32(acc[r][0], ws0)), s0);
            f[r][1] = vfmaq_f32(f[r][1], vcvtq_f32_s32(vaddq_s32(acc[r][1], ws1)), s1);
        }
    }
    const size_t esz = c->y16 != NULL ? 2 : 4;
    for (int r = 0; r < MR; ++r) {
        const pw__qd8_header *h = pw__qd8_hdr(lhs + (size_t)r * ldl);
        uint8_t *yr = y + (size_t)r * ldy_bytes;
        finish4(f[r][0], h, fsum, bias, c, yr, cols < 4 ? cols : 4);
        if (cols > 4) finish4(f[r][1], h, fsum + 16, bias + 16, c, yr + 4 * esz, cols - 4);
    }
}

static void run_dotprod(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    for (int64_t t0 = n0; t0 < n1; t0 += 8) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / 8) * d->tile_bytes;
        const int cols = n1 - t0 < 8 ? (int)(n1 - t0) : 8;
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        int64_t m = m0;
        for (; m + PW__QB4W_MRD <= m1; m += PW__QB4W_MRD)
            panel(d, tile, c->xq + (size_t)m * ldl, ldl, y + (size_t)m * ldy_bytes, ldy_bytes, cols, c,
                  PW__QB4W_MRD);
        const uint8_t *a = c->xq + (size_t)m * ldl;
        uint8_t *yy = y + (size_t)m * ldy_bytes;
        switch (m1 - m) {
        case 3: panel(d, tile, a, ldl, yy, ldy_bytes, cols, c, 3); break;
        case 2: panel(d, tile, a, ldl, yy, ldy_bytes, cols, c, 2); break;
        case 1: panel(d, tile, a, ldl, yy, ldy_bytes, cols, c, 1); break;
        default: break;
        }
    }
}

const pw__kernel pw__k_qb4w_n8k8s2_dotprod = PW__QB4W_KERNEL(
    8, 8, 2, "dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, run_dotprod, PW__PRIO_DOTPROD, PW__QB4W_MRD, 0);
