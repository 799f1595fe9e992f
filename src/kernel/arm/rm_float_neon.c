#if !defined(__aarch64__)
#error "rm_float_neon.c is Arm64 code (cmake builds src/kernel/arm/ only there)"
#endif
/*
 * NEON row-major GEMV kernels of the float formats F32, F16 and BF16, read
 * straight from the weight's bytes (PW_LAYOUT_BLOCKED_ROW_MAJOR; a float format's
 * "block" is one element, so a narrowed view may start anywhere) against f32
 * activations (PW_ACT_F32, call->x). Baseline Armv8-A: every Arm64 core has these
 * instructions, so the kernels sit at the `neon` level. Before them Arm ran the
 * portable scalar kernels (rm_float_scalar.c) for the float formats.
 *
 * Per 16 consecutive elements of a row and of x:
 *
 *   F32   64 bytes  loaded as is (four q registers)
 *   F16   32 bytes  FCVTL / FCVTL2 (exact)
 *   BF16  32 bytes  USHLL / USHLL2 by 16 (exact: bf16 is the top half of an f32)
 *   x     64 bytes  f32
 *
 * then four fma; a step takes 32 elements into 32 partial sums (eight independent
 * fma chains: four left the loop bound by the fma latency in llvm-mca's Apple M1
 * model, 4.0 cycles a step), added once at the end of the row: more partial sums
 * than the AVX2 kernel's 8. A row whose length is not a multiple of 32 ends with
 * one step of 16 and then element by element into one more partial sum. The loop
 * around the row dot and the descriptors are kernel/rm_float.h's (rows of X
 * inner, so a weight row is read from memory once and stays in L1).
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   f32_rm_neon, neoverse-v2: 5.36 cycles/iter, 0.042 cycles/weight byte,
 *     23.9 B/cycle: 239% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   f32_rm_neon, apple-m1: 4.69 cycles/iter, 0.037 cycles/weight byte,
 *     27.3 B/cycle: 151% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   f16_rm_neon, neoverse-v2: 8.03 cycles/iter, 0.125 cycles/weight byte,
 *     8.0 B/cycle: 80% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   f16_rm_neon, apple-m1: 5.53 cycles/iter, 0.086 cycles/weight byte,
 *     11.6 B/cycle: 64% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   bf16_rm_neon, neoverse-v2: 4.53 cycles/iter, 0.071 cycles/weight byte,
 *     14.1 B/cycle: 141% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   bf16_rm_neon, apple-m1: 5.53 cycles/iter, 0.086 cycles/weight byte,
 *     11.6 B/cycle: 64% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/rm_float.h"

#include <arm_neon.h>

#define RMF_INLINE static inline __attribute__((always_inline))

/* Elements k .. k + 15 of row p as four f32 vectors; f is a constant at each use. */
RMF_INLINE void rmf_load16(pw_format f, const uint8_t *p, float32x4_t v[4]) {
    if (f == PW_FORMAT_F32) {
        for (int j = 0; j < 4; ++j) v[j] = vld1q_f32((const float *)(const void *)(p + 16 * j));
        return;
    }
    for (int h = 0; h < 2; ++h) {
        const uint16x8_t u = vld1q_u16((const uint16_t *)(const void *)(p + 16 * h));
        if (f == PW_FORMAT_F16) {
            const float16x8_t e = vreinterpretq_f16_u16(u);
            v[2 * h] = vcvt_f32_f16(vget_low_f16(e));
            v[2 * h + 1] = vcvt_high_f32_f16(e);
        } else {
            v[2 * h] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(u), 16));
            v[2 * h + 1] = vreinterpretq_f32_u32(vshll_high_n_u16(u, 16));
        }
    }
}

/* f is a constant at each use (pw__rm_float_loop), so each format gets its own loop. */
RMF_INLINE float rmf_row(pw_format f, const uint8_t *row, const float *x, int64_t in) {
    const int64_t eb = pw__float_bytes(f);
    float32x4_t acc[8];
    for (int j = 0; j < 8; ++j) acc[j] = vdupq_n_f32(0.0f);
    int64_t k = 0;
    for (; k + 32 <= in; k += 32) {
        float32x4_t w[8];
        rmf_load16(f, row + k * eb, w);
        rmf_load16(f, row + (k + 16) * eb, w + 4);
        for (int j = 0; j < 8; ++j) acc[j] = vfmaq_f32(acc[j], w[j], vld1q_f32(x + k + 4 * j));
    }
    if (k + 16 <= in) {
        float32x4_t w[4];
        rmf_load16(f, row + k * eb, w);
        for (int j = 0; j < 4; ++j) acc[j] = vfmaq_f32(acc[j], w[j], vld1q_f32(x + k + 4 * j));
        k += 16;
    }
    float tail = 0.0f;
    for (; k < in; ++k) tail += pw__float_elem(f, row + k * eb) * x[k];
    for (int j = 0; j < 4; ++j) acc[j] = vaddq_f32(acc[j], acc[j + 4]);
    return vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3]))) + tail;
}

PW__RM_FLOAT_KERNEL(f32, PW_FORMAT_F32, neon, PW_CPU_NEON, PW__PRIO_NEON, rmf_row)
PW__RM_FLOAT_KERNEL(f16, PW_FORMAT_F16, neon, PW_CPU_NEON, PW__PRIO_NEON, rmf_row)
PW__RM_FLOAT_KERNEL(bf16, PW_FORMAT_BF16, neon, PW_CPU_NEON, PW__PRIO_NEON, rmf_row)
