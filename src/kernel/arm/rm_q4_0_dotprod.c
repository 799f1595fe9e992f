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
 * Two blocks per step into two f32 accumulators keep two independent chains.
 */
#include "kernel/arm/dotprod_util.h"

#define Q4_0_BYTES 18

PW__ALWAYS_INLINE float32x4_t q4_0_block(float32x4_t acc, const uint8_t *w, const pw__q8_32 *x) {
    const uint8x16_t v = vld1q_u8(w + 2);
    const int8x16_t eight = vdupq_n_s8(8);
    const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F))), eight);
    const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), lo, vld1q_s8(x->qs));
    s = vdotq_s32(s, hi, vld1q_s8(x->qs + 16));
    return vfmaq_n_f32(acc, vcvtq_f32_s32(s), pw__arm_f16_at(w) * x->d);
}

static float q4_0_row(const uint8_t *w, const uint8_t *xq, int64_t nb) {
    const pw__q8_32 *x = (const pw__q8_32 *)xq;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        a0 = q4_0_block(a0, w + b * Q4_0_BYTES, x + b);
        a1 = q4_0_block(a1, w + (b + 1) * Q4_0_BYTES, x + b + 1);
    }
    if (b < nb) a0 = q4_0_block(a0, w + b * Q4_0_BYTES, x + b);
    return vaddvq_f32(vaddq_f32(a0, a1));
}

static void q4_0_rm_dotprod(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__arm_rm_loop(c, o0, o1, i0, i1, 32, Q4_0_BYTES, q4_0_row);
}

const pw__kernel pw__k_q4_0_rm_dotprod = {
    .info = {.name = "q4_0_rm_dotprod",
             .key = "matmul_wt:q4_0/row_major x f32->Q8_32 -> f32 :dotprod",
             .format = PW_FORMAT_Q4_0,
             .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,
             .tile_rows = 1,
             .tile_batch = 1,
             .activation = PW_ACT_Q8_32,
             .features = PW_CPU_NEON | PW_CPU_DOTPROD,
             .isa = "dotprod"},
    .run = q4_0_rm_dotprod,
    .priority = PW__PRIO_DOTPROD,
    .min_n = 1};
