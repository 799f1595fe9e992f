#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_tq2_0_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * TQ2_0 row-major GEMV with NEON sdot against PW_ACT_Q8_256 rows. Trits
 * t in {0, 1, 2} mean t - 1; the -1 is the activation block's sum:
 *
 *   y += d * d_x * (sum(t * q_x) - sum(q_x))
 *
 *   TQ2_0 block, 66 B
 *   +------------ qs[64] ------------+-d f16-+
 *    0                                64
 *   Element 128h + 32g + l (l < 32): bits 2g..2g+1 of qs[32h + l], so two
 *   16-byte loads per half give all four 32-element groups by shift and mask.
 *
 *   activation pw__q8_256, 576 B: d at 0, sum at 4, qs at 64.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   tq2_0_row, neoverse-v2: 14.05 cycles/iter, 0.213 cycles/weight byte,
 *     4.7 B/cycle: 47% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   tq2_0_row, apple-m1: 18.88 cycles/iter, 0.286 cycles/weight byte,
 *     3.5 B/cycle: 19% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#define TQ2_0_BYTES 66

PW__ALWAYS_INLINE int32x4_t tq2_group(int32x4_t s, uint8x16_t v0, uint8x16_t v1, const int8_t *xs) {
    const uint8x16_t m3 = vdupq_n_u8(3);
    s = vdotq_s32(s, vreinterpretq_s8_u8(vandq_u8(v0, m3)), vld1q_s8(xs));
    return vdotq_s32(s, vreinterpretq_s8_u8(vandq_u8(v1, m3)), vld1q_s8(xs + 16));
}

static float tq2_0_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t v0 = vld1q_u8(w + 32 * h), v1 = vld1q_u8(w + 32 * h + 16);
            const int8_t *xs = x->qs + 128 * h;
            s0 = tq2_group(s0, v0, v1, xs);
            s1 = tq2_group(s1, vshrq_n_u8(v0, 2), vshrq_n_u8(v1, 2), xs + 32);
            s0 = tq2_group(s0, vshrq_n_u8(v0, 4), vshrq_n_u8(v1, 4), xs + 64);
            s1 = tq2_group(s1, vshrq_n_u8(v0, 6), vshrq_n_u8(v1, 6), xs + 96);
        }
        acc = pw__arm_sb_step(acc, s0, s1, x->sum, w + 64, x->d);
    }
    return acc;
}

PW__ARM_RM_RUNS(tq2_0, 256, TQ2_0_BYTES, sizeof(pw__q8_256), tq2_0_row)

PW__ARM_RM_KERNEL(tq2_0, PW_FORMAT_TQ2_0, Q8_256);
