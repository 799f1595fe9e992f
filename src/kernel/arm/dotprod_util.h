/*
 * Helpers shared by the Arm64 kernels compiled with dotprod (and i8mm): the
 * fp16 scale load, the row loop of every row-major GEMV kernel, and the one
 * edge-tile store. Included only from *_dotprod.c / *_i8mm.c files, whose
 * per-file flags make these intrinsics available.
 */
#ifndef PACKWISE_KERNEL_ARM_DOTPROD_UTIL_H
#define PACKWISE_KERNEL_ARM_DOTPROD_UTIL_H

#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "dotprod_util.h needs Arm64 with dotprod (-march=armv8.2-a+dotprod)"
#endif

#include "kernel/kernel.h"

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#define PW__ALWAYS_INLINE static inline __attribute__((always_inline))

/* fp16 bits -> f32 with the FCVT every Armv8 core has (exact, as pw__f16_to_f32). */
PW__ALWAYS_INLINE float pw__arm_f16(uint16_t h) {
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

/* Read an fp16 field at any byte address (blocks are 2-byte aligned at most). */
PW__ALWAYS_INLINE float pw__arm_f16_at(const void *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pw__arm_f16(h);
}

/*
 * Dot product of one weight row (nb blocks, contiguous) with one row of
 * quantized activations; returns the f32 result.
 */
typedef float (*pw__arm_row_dot_fn)(const uint8_t *w, const uint8_t *xq, int64_t nb);

/*
 * The row loop every row-major kernel shares (kernel.h contract): rows
 * [o0, o1) of the view, rows [i0, i1) of X. X rows are the inner loop so a
 * weight row is read from memory once and stays in L1 while every row of X
 * meets it. Inlined with a constant `dot`, so each kernel gets its own copy
 * with the dot product inlined.
 */
PW__ALWAYS_INLINE void pw__arm_rm_loop(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                       int64_t i1, int64_t block_size, size_t block_bytes,
                                       pw__arm_row_dot_fn dot) {
    const pw_view *w = c->w;
    const int64_t nb = c->in / block_size;
    for (int64_t o = o0; o < o1; ++o) {
        const uint8_t *wrow = w->data + (size_t)(w->offset + o * w->strides[0]) * block_bytes;
        for (int64_t i = i0; i < i1; ++i)
            c->y[i * c->ldy + o] = dot(wrow, c->xq + (size_t)i * c->xq_row_bytes, nb);
    }
}

/*
 * Store `rows` (1..8) floats of one output row of an 8-wide tile held in two
 * vectors (by value, so accumulators never need an address): whole tiles
 * store vectors, the edge tile (o1 - t0 < nr) goes through this one path.
 */
PW__ALWAYS_INLINE void pw__arm_store8(float *y, float32x4_t a, float32x4_t b, int rows) {
    if (rows == 8) {
        vst1q_f32(y, a);
        vst1q_f32(y + 4, b);
        return;
    }
    float tmp[8];
    vst1q_f32(tmp, a);
    vst1q_f32(tmp + 4, b);
    memcpy(y, tmp, sizeof(float) * (size_t)rows);
}

#endif
