/*
 * What the QB4W NEON kernels share (qb4w_dotprod.c, qb4w_i8mm.c): the contract's last
 * steps for 4 channels of one row (kernel/qb4w.h).
 */
#ifndef PACKWISE_KERNEL_ARM_QB4W_NEON_H
#define PACKWISE_KERNEL_ARM_QB4W_NEON_H

#include "kernel/arm/qc4w_neon.h"
#include "kernel/qb4w.h"

#include <arm_neon.h>

#define PW__QB4W_INLINE static inline __attribute__((always_inline))

/* t = acc + (neg_zp - 128) * F, v = t * a_scale + bias (unfused), then the clamp and
 * store QC4W's kernels end with (kernel/arm/qc4w_neon.h). */
PW__QB4W_INLINE void finish4(float32x4_t acc, const pw__qd8_header *h, const uint8_t *fsum,
                             const uint8_t *bias, const pw__mm_call *c, uint8_t *y, int cols) {
    const float32x4_t b = vld1q_f32((const float *)(const void *)bias);
    const float32x4_t fs = vld1q_f32((const float *)(const void *)fsum);
    const float32x4_t t = vaddq_f32(acc, vmulq_n_f32(fs, (float)(h->neg_zp - 128)));
    float32x4_t v = vaddq_f32(vmulq_n_f32(t, h->scale), b);
    pw__neon_clamp_store4(v, c, y, cols);
}

#endif
