/*
 * The contract's last steps for the Arm64 QC4W kernels (qc4w/qc4w.h), shared
 * by qc4w_gemm_dotprod.c and qc4w_gemm_i8mm.c: both accumulate 16 * sum q w
 * (weights unpacked as 16 * w: shift left 4 for the low nibble, and 0xF0 for
 * the high one, both signed bytes; activations the signed q), so
 *
 *   isum = (acc >> 4) + neg_zp * weight_sum
 *
 * exact in int32 for K <= 65536 (|16 * sum q w| <= 16 * 128 * 8 * K < 2^31).
 * The clamp is compare-and-select, not FMAX/FMIN: those order -0.0 below
 * +0.0, while the contract keeps v unless v < min (or v > max), as the
 * scalar comparison does.
 */
#ifndef PACKWISE_KERNEL_ARM_QC4W_NEON_H
#define PACKWISE_KERNEL_ARM_QC4W_NEON_H

#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "qc4w_neon.h needs Arm64 with dotprod (-march=armv8.2-a+dotprod)"
#endif

#include "kernel/qc4w.h"

#include <arm_neon.h>
#include <string.h>

#define PW__QC4W_INLINE static inline __attribute__((always_inline))

/* 16 * w of the low and high nibbles of 16 packed bytes. */
PW__QC4W_INLINE int8x16_t pw__qc4w_lo16(int8x16_t raw) { return vshlq_n_s8(raw, 4); }
PW__QC4W_INLINE int8x16_t pw__qc4w_hi16(int8x16_t raw) {
    return vreinterpretq_s8_u8(vandq_u8(vreinterpretq_u8_s8(raw), vdupq_n_u8(0xF0)));
}

/* The clamp (compare and select) and the store of the first `cols` (1..4) of v to y, as
 * f16 (nearest even) when call->y16 is set, else f32: the last step of every int4 kernel
 * here (QB4W's too, kernel/arm/qb4w_neon.h). */
PW__QC4W_INLINE void pw__neon_clamp_store4(float32x4_t v, const pw__mm_call *c, uint8_t *y, int cols) {
    const float32x4_t vmin = vdupq_n_f32(c->min), vmax = vdupq_n_f32(c->max);
    v = vbslq_f32(vcltq_f32(v, vmin), vmin, v);
    v = vbslq_f32(vcgtq_f32(v, vmax), vmax, v);
    if (c->y16 != NULL) {
        const uint16x4_t hv = vreinterpret_u16_f16(vcvt_f16_f32(v));
        if (cols == 4) {
            vst1_u16((uint16_t *)(void *)y, hv);
        } else {
            uint16_t out[4];
            vst1_u16(out, hv);
            memcpy(y, out, 2 * (size_t)cols);
        }
    } else if (cols == 4) {
        vst1q_f32((float *)(void *)y, v);
    } else {
        float out[4];
        vst1q_f32(out, v);
        memcpy(y, out, 4 * (size_t)cols);
    }
}

/*
 * Four channels of one row: acc holds 16 * sum q w for channels [c0, c0 + 4)
 * of the tile whose metadata (weight_sum[nr], scale[nr], bias[nr]) is at meta.
 * Writes the first `cols` (1..4) outputs to y.
 */
PW__QC4W_INLINE void pw__qc4w_finish4(int32x4_t acc, const uint8_t *row, const uint8_t *meta,
                                      int nr, int c0, const pw__mm_call *c, uint8_t *y,
                                      int cols) {
    const pw__qd8_header *h = pw__qd8_hdr(row);
    const int32x4_t ws = vld1q_s32((const int32_t *)(const void *)(meta + 4 * c0));
    const float32x4_t sc = vld1q_f32((const float *)(const void *)(meta + 4 * (nr + c0)));
    const float32x4_t bias = vld1q_f32((const float *)(const void *)(meta + 4 * (2 * nr + c0)));
    const int32x4_t isum = vmlaq_n_s32(vshrq_n_s32(acc, 4), ws, h->neg_zp);
    const float32x4_t s = vmulq_n_f32(sc, h->scale);
    float32x4_t v = vaddq_f32(vmulq_f32(vcvtq_f32_s32(isum), s), bias);
    pw__neon_clamp_store4(v, c, y, cols);
}

#if defined(__ARM_FEATURE_MATMUL_INT8)
/* The i8mm int4 kernels' step: one 16-k chunk of a pair of rows (q0, q1: their q at the
 * chunk) against 4 channels' weights, the chunk's low halves l01, l23 (k 0..7 of
 * channels 0, 1 and 2, 3) and high halves h01, h23 (k 8..15): smmla on the two rows
 * zipped by 64-bit halves, *a01 = | r0.c0 r0.c1 | r1.c0 r1.c1 | and *a23 likewise. */
PW__QC4W_INLINE void pw__neon_i8mm_pair_chunk(int32x4_t *a01, int32x4_t *a23, const int8_t *q0,
                                              const int8_t *q1, int8x16_t l01, int8x16_t h01,
                                              int8x16_t l23, int8x16_t h23) {
    const int64x2_t x0 = vreinterpretq_s64_s8(vld1q_s8(q0));
    const int64x2_t x1 = vreinterpretq_s64_s8(vld1q_s8(q1));
    const int8x16_t alo = vreinterpretq_s8_s64(vzip1q_s64(x0, x1));
    const int8x16_t ahi = vreinterpretq_s8_s64(vzip2q_s64(x0, x1));
    *a01 = vmmlaq_s32(vmmlaq_s32(*a01, alo, l01), ahi, h01);
    *a23 = vmmlaq_s32(vmmlaq_s32(*a23, alo, l23), ahi, h23);
}
#endif

/*
 * The walk of the i8mm int4 kernels (qc4w_gemm_i8mm.c, qb4w_i8mm.c): tiles of 4
 * channels over [n0, n1), rows of X over [m0, m1) in micro-tiles of up to
 * PW__NEON_I8MM_MR rows (four smmla pairs), their whole pairs by PAIRS(np) (np = 1..4, a
 * constant at each use) and an odd last row by ROW(r) (sdot: smmla would pair it with
 * itself). PAIRS and ROW read the walk's tile, row[], yr[], cols and c_.
 */
#define PW__NEON_I8MM_MR 8
#define PW__NEON_I8MM_RUN(c_, n0, n1, m0, m1, PAIRS, ROW)                                      \
    do {                                                                                       \
        const int f16_ = (c_)->y16 != NULL;                                                    \
        const size_t ldl_ = (c_)->xq_row_bytes, esz_ = f16_ ? 2 : 4;                           \
        const size_t ldy_ = (size_t)(c_)->ldy * esz_;                                          \
        for (int64_t t0_ = (n0); t0_ < (n1); t0_ += 4) {                                       \
            const uint8_t *tile = (c_)->packed + (uint64_t)(t0_ / 4) * (c_)->pack_desc->tile_bytes; \
            const int cols = (n1) - t0_ < 4 ? (int)((n1) - t0_) : 4;                           \
            uint8_t *y_ = (f16_ ? (uint8_t *)(c_)->y16 : (uint8_t *)(c_)->y) + (size_t)t0_ * esz_; \
            for (int64_t m_ = (m0); m_ < (m1);) {                                              \
                const int rows_ = (m1) - m_ < PW__NEON_I8MM_MR ? (int)((m1) - m_) : PW__NEON_I8MM_MR; \
                const uint8_t *row[PW__NEON_I8MM_MR];                                          \
                uint8_t *yr[PW__NEON_I8MM_MR];                                                 \
                for (int r_ = 0; r_ < rows_; ++r_) {                                           \
                    row[r_] = (c_)->xq + (size_t)(m_ + r_) * ldl_;                             \
                    yr[r_] = y_ + (size_t)(m_ + r_) * ldy_;                                    \
                }                                                                              \
                switch (rows_ / 2) {                                                           \
                case 4: PAIRS(4); break;                                                       \
                case 3: PAIRS(3); break;                                                       \
                case 2: PAIRS(2); break;                                                       \
                case 1: PAIRS(1); break;                                                       \
                default: break;                                                                \
                }                                                                              \
                if (rows_ % 2) ROW(rows_ - 1);                                                 \
                m_ += rows_;                                                                   \
            }                                                                                  \
        }                                                                                      \
    } while (0)

#endif
