#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_q4_0_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * Q4_0 row-major GEMV with NEON sdot: Y[i, o] = sum over blocks of
 * d_w * d_x * sum(q_w * q_x), q_w = nibble - 8, against PW_ACT_Q8_32 rows.
 * Reads the file's bytes as they are (kernel.h, BLOCKED_ROW_MAJOR); any
 * o-range, any n (rows of X are the inner loop, dotprod_util.h).
 *
 *   Q4_0 block, 18 B                      activation block pw__q8_32, 96 B
 *   +-d f16-+--- qs[16] ---+              +-d-+ ... +--- qs[32] (s8) ---+
 *    0       2                             0         32
 *   qs byte j: low nibble = element j, high nibble = element j + 16, so one
 *   16-byte load gives elements 0..15 (and) and 16..31 (shift), each paired
 *   with a 16-byte half of qs by one sdot.
 *
 * The nibbles (0..15) go to sdot as they are; the -8 is -8 * x.sum, the block
 * sum's starting value (bias4 = 2 in each of its four lanes). Subtracting 8 from
 * both halves instead cost two vector ops a block: llvm-mca then gave 7.03 cycles
 * per 2 blocks on neoverse-v2 and 8.03 on apple-m1 (51% and 25% of the streaming
 * rates below). The same for Q5_0 (its codes as Q5_1's, bias4 = 4) gained nothing
 * (10.54 -> 10.29 and 12.70 -> 13.64): its codes take two ops a half either way.
 *
 * Two blocks per step into two f32 accumulators keep two independent chains
 * (pw__arm_q32_row, dotprod_util.h).
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4_0_row, neoverse-v2: 5.54 cycles/iter, 0.154 cycles/weight byte,
 *     6.5 B/cycle: 65% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4_0_row, apple-m1: 7.54 cycles/iter, 0.209 cycles/weight byte,
 *     4.8 B/cycle: 26% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#define Q4_0_BYTES 18

/* Element j in the low nibble of byte j, element j + 16 in its high nibble (code - 8 by
 * the row's bias4). */
PW__ALWAYS_INLINE int8x16x2_t q4_0_codes(const uint8_t *w) {
    const uint8x16_t v = vld1q_u8(w + 2);
    const int8x16x2_t q = {{vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F))),
                            vreinterpretq_s8_u8(vshrq_n_u8(v, 4))}};
    return q;
}

static float q4_0_row(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb) {
    return pw__arm_q32_row(w, bs, xq, nb, q4_0_codes, 2);
}

PW__ARM_RM_RUNS(q4_0, 32, Q4_0_BYTES, sizeof(pw__q8_32), q4_0_row)

PW__ARM_RM_KERNEL(q4_0, PW_FORMAT_Q4_0, Q8_32);
