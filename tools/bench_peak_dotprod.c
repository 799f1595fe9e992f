/*
 * Arm dotprod: the int8 peak of the machine section as SDOT on 128-bit
 * vectors.
 *
 *   acc[j] (4 x i32) += sum over 4 of a (16 x s8) * b (16 x s8)    j = 0..15
 *
 * 16 multiply-accumulates per instruction; sixteen independent accumulators
 * in registers cover the latency on wide cores.
 */
#if !defined(__ARM_FEATURE_DOTPROD)
#error "bench_peak_dotprod.c needs -march=armv8.2-a+dotprod (tools/CMakeLists.txt sets it)"
#endif

#include "bench.h"

#include <arm_neon.h>

double pw_bench_int8_dotprod(uint64_t iters) {
    const int8x16_t a = vdupq_n_s8(3), b = vdupq_n_s8(-2);
    /* Distinct starting values: identical chains would be one chain to the compiler. */
    int32x4_t c0 = vdupq_n_s32(0), c1 = vdupq_n_s32(1), c2 = vdupq_n_s32(2), c3 = vdupq_n_s32(3),
              c4 = vdupq_n_s32(4), c5 = vdupq_n_s32(5), c6 = vdupq_n_s32(6), c7 = vdupq_n_s32(7),
              c8 = vdupq_n_s32(8), c9 = vdupq_n_s32(9), c10 = vdupq_n_s32(10), c11 = vdupq_n_s32(11),
              c12 = vdupq_n_s32(12), c13 = vdupq_n_s32(13), c14 = vdupq_n_s32(14), c15 = vdupq_n_s32(15);
    for (uint64_t i = 0; i < iters; ++i) {
        c0 = vdotq_s32(c0, a, b);
        c1 = vdotq_s32(c1, a, b);
        c2 = vdotq_s32(c2, a, b);
        c3 = vdotq_s32(c3, a, b);
        c4 = vdotq_s32(c4, a, b);
        c5 = vdotq_s32(c5, a, b);
        c6 = vdotq_s32(c6, a, b);
        c7 = vdotq_s32(c7, a, b);
        c8 = vdotq_s32(c8, a, b);
        c9 = vdotq_s32(c9, a, b);
        c10 = vdotq_s32(c10, a, b);
        c11 = vdotq_s32(c11, a, b);
        c12 = vdotq_s32(c12, a, b);
        c13 = vdotq_s32(c13, a, b);
        c14 = vdotq_s32(c14, a, b);
        c15 = vdotq_s32(c15, a, b);
    }
    const int32x4_t s = vaddq_s32(
        vaddq_s32(vaddq_s32(vaddq_s32(c0, c1), vaddq_s32(c2, c3)),
                  vaddq_s32(vaddq_s32(c4, c5), vaddq_s32(c6, c7))),
        vaddq_s32(vaddq_s32(vaddq_s32(c8, c9), vaddq_s32(c10, c11)),
                  vaddq_s32(vaddq_s32(c12, c13), vaddq_s32(c14, c15))));
    volatile int32_t sink = vaddvq_s32(s);
    (void)sink;
    return (double)iters * 16.0 * 16.0 * 2.0;
}
