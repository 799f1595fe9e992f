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

/* The eight SDOT of register j of the sub-block at sb against its 16 activation bytes
 * a, each quant masked where it lies rather than shifted down (P & 0x0C is 4t, P & 0x30
 * 16t: valid signed bytes): *lo += group j's steps 0, 1, *lo4 += its steps 2, 3 times 4,
 * *hi16 += group 4 + j's steps 0, 1 times 16, *hi += its steps 2, 3 (P >> 6). Group j's
 * dot is then lo + lo4 / 4, group 4 + j's hi + hi16 / 16, both exact (vsraq_n_s32 by 2
 * and 4: every term of lo4 and hi16 is a multiple of the factor): eight unpacking
 * operations where pw__q2kxn_quants takes twelve, for two more chains. */
static inline __attribute__((always_inline)) void
pw__q2kxn_dots_masked(const uint8_t *sb, int j, int8x16_t a, int32x4_t *lo, int32x4_t *lo4,
                      int32x4_t *hi16, int32x4_t *hi) {
    const uint8x16_t m03 = vdupq_n_u8(0x03), m0c = vdupq_n_u8(0x0C), m30 = vdupq_n_u8(0x30);
    const uint8x16_t p0 = vld1q_u8(sb + 16 * j), p1 = vld1q_u8(sb + 64 + 16 * j);
#define PW__Q2KXN_DOT(acc, v, lane) *(acc) = vdotq_laneq_s32(*(acc), vreinterpretq_s8_u8(v), a, (lane))
    PW__Q2KXN_DOT(lo, vandq_u8(p0, m03), 0);
    PW__Q2KXN_DOT(lo, vandq_u8(p1, m03), 1);
    PW__Q2KXN_DOT(lo4, vandq_u8(p0, m0c), 2);
    PW__Q2KXN_DOT(lo4, vandq_u8(p1, m0c), 3);
    PW__Q2KXN_DOT(hi16, vandq_u8(p0, m30), 0);
    PW__Q2KXN_DOT(hi16, vandq_u8(p1, m30), 1);
    PW__Q2KXN_DOT(hi, vshrq_n_u8(p0, 6), 2);
    PW__Q2KXN_DOT(hi, vshrq_n_u8(p1, 6), 3);
#undef PW__Q2KXN_DOT
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
