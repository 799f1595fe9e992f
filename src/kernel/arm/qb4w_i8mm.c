#if !defined(__aarch64__) || !defined(__ARM_FEATURE_MATMUL_INT8)
#error "qb4w_i8mm.c needs Arm64 i8mm (cmake gives *_i8mm.c -march=armv8.2-a+dotprod+i8mm)"
#endif
/*
 * NEON i8mm kernel for QB4W family qb4w_n4k16s2 (layout and contract in
 * kernel/qb4w.h): 4 channels by up to 8 rows of X (four pairs) per micro-tile,
 * smmla (2 x 8 signed bytes times 8 x 2 into a 2 x 2 int32 block) on the
 * signed QD8 q and the block-centred weights u - z_b (int8, -15 .. 15). The
 * contract's d_b multiplies q + 128, so the block's weight sum ws_b = sum
 * (u - z_b) is summed here too, by sdot of the same weight vectors against
 * ones (per tile, shared by the rows):
 *
 *   d_b = sum q (u - z_b) + 128 * ws_b                        (int32, exact)
 *
 * Bytes read per 16 k values: one 32-byte chunk of the tile (unpacked once
 * for all the pairs of rows), 16 bytes of the q of each row:
 *
 *   chunk j (32 B):  | ch 0: 8 B | ch 1: 8 B | ch 2: 8 B | ch 3: 8 B |        two uint8x16
 *   byte i of ch c:  low nibble u[c, 16j + i], high nibble u[c, 16j + 8 + i]   (i < 8)
 *
 *   w_lo = (raw & 15) - z,  w_hi = (raw >> 4) - z    (z: each channel's z_b, 8 times)
 *
 * so w_lo of one uint8x16 is smmla's right operand for k 16j .. 16j+7 of two
 * channels, w_hi the one for k 16j+8 .. 16j+15. The left operand is two
 * rows' q for the same 8 k, zipped by 64-bit halves:
 *
 *   acc{ch0,1} = | r0.c0 r0.c1 | r1.c0 r1.c1 | += smmla([r0 q0..7 | r1 q0..7], w_lo[ch 0,1]) + ...
 *
 * Per block (at most min(B, Kq - bB) / 16 chunks: never past the QD8 padding)
 * the int32 sums start at 0 and end in the f32 accumulators by the contract's
 * step acc = fma((float)d_b, s_b, acc) (vfmaq: one rounding, as fmaf); after the
 * last block t = acc + (float)(neg_zp - 128) * F, then t * a_scale + bias.
 * A row without a partner (n = 1, the GEMV, or an odd last row) runs by sdot: the
 * same centred weights against [q0..7 | q0..7], lanes 2c, 2c + 1 of a channel pair
 * holding channel c's halves (the same d_b, so the same results bit for bit).
 * Before (4 rows, an odd row paired with itself, n = 1 included): run_i8mm 42.5 int8
 * MAC/cycle on neoverse-v2 (33% of the SMMLA peak), half of each smmla thrown away at n = 1.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   run_i8mm, neoverse-v2: 9.02 cycles/iter, 0.282 cycles/weight byte,
 *     56.8 int8 MAC/cycle: 44% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   run_i8mm, apple-m2: 12.02 cycles/iter, 0.376 cycles/weight byte,
 *     42.6 int8 MAC/cycle: 33% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   qb4w_i8mm_row, neoverse-v2: 4.52 cycles/iter, 0.141 cycles/weight byte,
 *     7.1 B/cycle: 71% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   qb4w_i8mm_row, apple-m1: 6.03 cycles/iter, 0.188 cycles/weight byte,
 *     5.3 B/cycle: 29% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/qb4w_neon.h"

/* The block-centred weights of a chunk's 16 bytes: (raw & 15) - z, (raw >> 4) - z. */
PW__QB4W_INLINE int8x16_t qb4w_lo(uint8x16_t raw, int8x16_t z) {
    return vsubq_s8(vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(15))), z);
}
PW__QB4W_INLINE int8x16_t qb4w_hi(uint8x16_t raw, int8x16_t z) {
    return vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(raw, 4)), z);
}

/* Block b of a tile: its chunks, its weight bytes, its scales' place, and the zero
 * points of channels (0, 1) and (2, 3), each 8 times. */
typedef struct qb4w_blk {
    pw__qb4w_at at;
    int64_t chunks;
    const uint8_t *w;
    int8x16_t z01, z23;
} qb4w_blk;
PW__QB4W_INLINE qb4w_blk qb4w_block(const pw__pack_desc *d, const uint8_t *tile, int64_t b) {
    qb4w_blk k;
    k.at = pw__qb4w_block_at(d, b);
    k.chunks = pw__qb4w_block_values(d, b) / 16;
    k.w = tile + k.at.data;
    const uint8x16_t idx01 = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    uint32_t z4;
    memcpy(&z4, tile + k.at.zero, 4);
    const uint8x16_t zb = vreinterpretq_u8_u32(vdupq_n_u32(z4));
    k.z01 = vreinterpretq_s8_u8(vqtbl1q_u8(zb, idx01));
    k.z23 = vreinterpretq_s8_u8(vqtbl1q_u8(zb, vaddq_u8(idx01, vdupq_n_u8(2))));
    return k;
}

/* NP pairs of rows (1..4) x 4 channels: row[2p], row[2p + 1] -> y[2p], y[2p + 1]. */
PW__QB4W_INLINE void pairs(const pw__pack_desc *d, const uint8_t *tile, const uint8_t *const *row,
                           uint8_t *const *y, int cols, const pw__mm_call *c, const int NP) {
    const int64_t nb = pw__qb4w_blocks_of(d), bsz = d->group;
    const uint8_t *fsum = tile + pw__qb4w_fsum_offset(d), *bias = tile + pw__qb4w_bias_offset(d);
    const int8_t *q[PW__NEON_I8MM_MR];
    float32x4_t f[PW__NEON_I8MM_MR];
    for (int r = 0; r < 2 * NP; ++r) {
        q[r] = pw__qd8_q(row[r]);
        f[r] = vdupq_n_f32(0.0f);
    }
    const int8x16_t ones = vdupq_n_s8(1);
    for (int64_t b = 0; b < nb; ++b) {
        const qb4w_blk k = qb4w_block(d, tile, b);
        const int64_t k0 = b * bsz;
        int32x4_t a01[PW__NEON_I8MM_MR / 2], a23[PW__NEON_I8MM_MR / 2];
        int32x4_t w01 = vdupq_n_s32(0), w23 = w01;
        for (int p = 0; p < NP; ++p) a01[p] = a23[p] = vdupq_n_s32(0);
        for (int64_t j = 0; j < k.chunks; ++j) {
            const uint8x16_t r01 = vld1q_u8(k.w + 32 * j), r23 = vld1q_u8(k.w + 32 * j + 16);
            const int8x16_t l01 = qb4w_lo(r01, k.z01), h01 = qb4w_hi(r01, k.z01);
            const int8x16_t l23 = qb4w_lo(r23, k.z23), h23 = qb4w_hi(r23, k.z23);
            w01 = vdotq_s32(vdotq_s32(w01, l01, ones), h01, ones);
            w23 = vdotq_s32(vdotq_s32(w23, l23, ones), h23, ones);
            for (int p = 0; p < NP; ++p)
                pw__neon_i8mm_pair_chunk(&a01[p], &a23[p], q[2 * p] + k0 + 16 * j,
                                         q[2 * p + 1] + k0 + 16 * j, l01, h01, l23, h23);
        }
        /* lanes (ch 0 k 0..3, ch 0 k 4..7, ch 1 ...) summed in pairs: 128 * ws_b per channel */
        const int32x4_t ws = vshlq_n_s32(vpaddq_s32(w01, w23), 7);
        const float32x4_t s = vld1q_f32((const float *)(const void *)(tile + k.at.scale));
        for (int p = 0; p < NP; ++p) {
            const int32x4_t e = vcombine_s32(vget_low_s32(a01[p]), vget_low_s32(a23[p]));
            const int32x4_t o = vcombine_s32(vget_high_s32(a01[p]), vget_high_s32(a23[p]));
            f[2 * p] = vfmaq_f32(f[2 * p], vcvtq_f32_s32(vaddq_s32(e, ws)), s);
            f[2 * p + 1] = vfmaq_f32(f[2 * p + 1], vcvtq_f32_s32(vaddq_s32(o, ws)), s);
        }
    }
    for (int r = 0; r < 2 * NP; ++r) finish4(f[r], pw__qd8_hdr(row[r]), fsum, bias, c, y[r], cols);
}

/* One row x 4 channels by sdot, not smmla (whose 2 x 2 block would pair the row with
 * itself, half its products thrown away): each channel's 8 centred weights against the
 * row's 8 q of the same k in both 64-bit halves, the weights also against ones for
 * ws_b, int32 lanes (2c, 2c + 1) of a channel pair added pairwise per block. Its own
 * function (not inlined) so scripts/arm_mca.py finds its loop: the GEMV's. */
__attribute__((noinline)) static void qb4w_i8mm_row(const pw__pack_desc *d, const uint8_t *tile,
                                                    const uint8_t *row, uint8_t *y, int cols,
                                                    const pw__mm_call *c) {
    const int64_t nb = pw__qb4w_blocks_of(d), bsz = d->group;
    const int8_t *q = pw__qd8_q(row);
    const int8x16_t ones = vdupq_n_s8(1);
    float32x4_t f = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        const qb4w_blk k = qb4w_block(d, tile, b);
        const int8_t *qb = q + b * bsz;
        int32x4_t a01 = vdupq_n_s32(0), a23 = a01, w01 = a01, w23 = a01;
        for (int64_t j = 0; j < k.chunks; ++j) {
            const uint8x16_t r01 = vld1q_u8(k.w + 32 * j), r23 = vld1q_u8(k.w + 32 * j + 16);
            const int8x16_t l01 = qb4w_lo(r01, k.z01), h01 = qb4w_hi(r01, k.z01);
            const int8x16_t l23 = qb4w_lo(r23, k.z23), h23 = qb4w_hi(r23, k.z23);
            const int8x8_t xl = vld1_s8(qb + 16 * j), xh = vld1_s8(qb + 16 * j + 8);
            const int8x16_t alo = vcombine_s8(xl, xl), ahi = vcombine_s8(xh, xh);
            a01 = vdotq_s32(vdotq_s32(a01, l01, alo), h01, ahi);
            a23 = vdotq_s32(vdotq_s32(a23, l23, alo), h23, ahi);
            w01 = vdotq_s32(vdotq_s32(w01, l01, ones), h01, ones);
            w23 = vdotq_s32(vdotq_s32(w23, l23, ones), h23, ones);
        }
        const int32x4_t ws = vshlq_n_s32(vpaddq_s32(w01, w23), 7);
        const float32x4_t s = vld1q_f32((const float *)(const void *)(tile + k.at.scale));
        f = vfmaq_f32(f, vcvtq_f32_s32(vaddq_s32(vpaddq_s32(a01, a23), ws)), s);
    }
    finish4(f, pw__qd8_hdr(row), tile + pw__qb4w_fsum_offset(d), tile + pw__qb4w_bias_offset(d),
            c, y, cols);
}

static void run_i8mm(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
#define QB4W_PAIRS(np) pairs(d, tile, row, yr, cols, c, np)
#define QB4W_ROW(r) qb4w_i8mm_row(d, tile, row[r], yr[r], cols, c)
    PW__NEON_I8MM_RUN(c, n0, n1, m0, m1, QB4W_PAIRS, QB4W_ROW);
#undef QB4W_PAIRS
#undef QB4W_ROW
}

const pw__kernel pw__k_qb4w_n4k16s2_i8mm = PW__QB4W_KERNEL(
    4, 16, 2, "i8mm", PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM, run_i8mm, PW__PRIO_I8MM, PW__NEON_I8MM_MR, 0);
