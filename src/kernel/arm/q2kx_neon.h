/*
 * The q2kx32k4 quant step on NEON (kernel/q2kx.h's bits), shared by the families
 * whose quant bytes are q2kx's: q2kx_dotprod.c (Q2_K) and tq2x_dotprod.c (TQ2_0,
 * kernel/tq2x.h).
 */
#ifndef PACKWISE_KERNEL_ARM_Q2KX_NEON_H
#define PACKWISE_KERNEL_ARM_Q2KX_NEON_H

#include <arm_neon.h>
#include <stdint.h>

/* The quants of register j (bytes [16j, +16) of each load) of the sub-block at sb:
 * w[u] step u of group j (rows 4j .. 4j+3), w[4 + u] of group 4 + j (rows 16 + 4j ..):
 *   group j:      step 0  P & 3,        step 1  P' & 3,
 *                 step 2  (P >> 2) & 3, step 3  (P' >> 2) & 3
 *   group 4 + j:  step 0  (P >> 4) & 3, step 1  (P' >> 4) & 3,
 *                 step 2  P >> 6,       step 3  P' >> 6
 * with P, P' the sub-block's loads P_0, P_1: twelve operations for eight vectors. */
static inline __attribute__((always_inline)) void pw__q2kxn_quants(const uint8_t *sb, int j,
                                                                   int8x16_t w[8]) {
    const uint8x16_t m03 = vdupq_n_u8(0x03);
    const uint8x16_t p0 = vld1q_u8(sb + 16 * j), p1 = vld1q_u8(sb + 64 + 16 * j);
    w[0] = vreinterpretq_s8_u8(vandq_u8(p0, m03));
    w[1] = vreinterpretq_s8_u8(vandq_u8(p1, m03));
    w[2] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(p0, 2), m03));
    w[3] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(p1, 2), m03));
    w[4] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(p0, 4), m03));
    w[5] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(p1, 4), m03));
    w[6] = vreinterpretq_s8_u8(vshrq_n_u8(p0, 6));
    w[7] = vreinterpretq_s8_u8(vshrq_n_u8(p1, 6));
}

/* The four steps of one group's quants w[0..3] against the 16 activation bytes a of
 * the sub-block (step u takes lane u: indexed SDOT) added to acc. */
static inline __attribute__((always_inline)) int32x4_t pw__q2kxn_dot4(int32x4_t acc,
                                                                     const int8x16_t w[4],
                                                                     int8x16_t a) {
    acc = vdotq_laneq_s32(acc, w[0], a, 0);
    acc = vdotq_laneq_s32(acc, w[1], a, 1);
    acc = vdotq_laneq_s32(acc, w[2], a, 2);
    return vdotq_laneq_s32(acc, w[3], a, 3);
}

#endif
