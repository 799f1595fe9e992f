#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_q8_0_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * Q8_0 row-major GEMV with NEON sdot: Y[i, o] = sum over blocks of
 * d_w * d_x * sum(q_w * q_x) against PW_ACT_Q8_32 rows. Reads the file's
 * bytes as they are (kernel.h, BLOCKED_ROW_MAJOR); any o-range, any n.
 *
 *   Q8_0 block, 34 B                      activation block pw__q8_32, 96 B
 *   +-d f16-+------ qs[32] (s8) ------+   +-d-+ ... +--- qs[32] (s8) ---+
 *    0       2                             0         32
 *   Two 16-byte loads per side, two sdot per block.
 *
 * Two blocks per step into two f32 accumulators keep two independent chains
 * (pw__arm_q32_row, dotprod_util.h).
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q8_0_row, neoverse-v2: 5.04 cycles/iter, 0.074 cycles/weight byte,
 *     13.5 B/cycle: 135% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q8_0_row, apple-m1: 6.53 cycles/iter, 0.096 cycles/weight byte,
 *     10.4 B/cycle: 58% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#define Q8_0_BYTES 34

PW__ALWAYS_INLINE int8x16x2_t q8_0_codes(const uint8_t *w) {
    const int8x16x2_t q = {{vld1q_s8((const int8_t *)w + 2), vld1q_s8((const int8_t *)w + 18)}};
    return q;
}

static float q8_0_row(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb) {
    return pw__arm_q32_row(w, bs, xq, nb, q8_0_codes, 0);
}

PW__ARM_RM_RUNS(q8_0, 32, Q8_0_BYTES, sizeof(pw__q8_32), q8_0_row)

PW__ARM_RM_KERNEL(q8_0, PW_FORMAT_Q8_0, Q8_32);
