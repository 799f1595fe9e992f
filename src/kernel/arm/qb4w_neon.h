/*
 * What the QB4W NEON kernels share (qb4w_dotprod.c, qb4w_i8mm.c): the contract's last
 * steps for 4 channels of one row (kernel/qb4w.h).
 */
#ifndef PACKWISE_KERNEL_ARM_QB4W_NEON_H
#define PACKWISE_KERNEL_ARM_QB4W_NEON_H

#include "kernel/qb4w.h"

#include <arm_neon.h>
#include <string.h>

#define PW__QB4W_INLINE static inline __attribute__((always_inline))

/* t = acc + (neg_zp - 128) * F, v = t * a_scale + bias (unfused), clamped as the scalar
 * comparisons do (compare and select: FMAX/FMIN would order -0.0 below +0.0 and pass NaN
 * differently), stored as f32 or f16. */
PW__QB4W_INLINE void finish4(float32x4_t acc, const pw__qd8_header *h, const uint8_t *fsum,
                             const uint8_t *bias, const pw__mm_call *c, uint8_t *y, int cols) {
    const float32x4_t b = vld1q_f32((const float *)(const void *)bias);
    const float32x4_t fs = vld1q_f32((const float *)(const void *)fsum);
    const float32x4_t t = vaddq_f32(acc, vmulq_n_f32(fs, (float)(h->neg_zp - 128)));
    float32x4_t v = vaddq_f32(vmulq_n_f32(t, h->scale), b);
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

#endif
