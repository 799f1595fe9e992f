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
 * Two blocks per step into two f32 accumulators keep two independent chains.
 */
#include "kernel/arm/dotprod_util.h"

#define Q8_0_BYTES 34

PW__ALWAYS_INLINE float32x4_t q8_0_block(float32x4_t acc, const uint8_t *w, const pw__q8_32 *x) {
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), vld1q_s8((const int8_t *)w + 2), vld1q_s8(x->qs));
    s = vdotq_s32(s, vld1q_s8((const int8_t *)w + 18), vld1q_s8(x->qs + 16));
    return vfmaq_n_f32(acc, vcvtq_f32_s32(s), pw__arm_f16_at(w) * x->d);
}

static float q8_0_row(const uint8_t *w, const uint8_t *xq, int64_t nb) {
    const pw__q8_32 *x = (const pw__q8_32 *)xq;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        a0 = q8_0_block(a0, w + b * Q8_0_BYTES, x + b);
        a1 = q8_0_block(a1, w + (b + 1) * Q8_0_BYTES, x + b + 1);
    }
    if (b < nb) a0 = q8_0_block(a0, w + b * Q8_0_BYTES, x + b);
    return vaddvq_f32(vaddq_f32(a0, a1));
}

static void q8_0_rm_dotprod(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__arm_rm_loop(c, o0, o1, i0, i1, 32, Q8_0_BYTES, q8_0_row);
}

const pw__kernel pw__k_q8_0_rm_dotprod = {
    .info = {.name = "q8_0_rm_dotprod",
             .key = "matmul_wt:q8_0/row_major x f32->Q8_32 -> f32 :dotprod",
             .format = PW_FORMAT_Q8_0,
             .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,
             .tile_rows = 1,
             .tile_batch = 1,
             .activation = PW_ACT_Q8_32,
             .features = PW_CPU_NEON | PW_CPU_DOTPROD,
             .isa = "dotprod"},
    .run = q8_0_rm_dotprod,
    .priority = PW__PRIO_DOTPROD,
    .min_n = 1};
