#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_q4_k_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * Q4_K row-major GEMV with NEON sdot against PW_ACT_Q8_256 rows (GGUF's
 * Q4_K x Q8_K pairing). Per 256-element super-block, with sub-block j
 * (32 elements) of 6-bit scale sc_j and min m_j:
 *
 *   y += d * d_x * sum_j sc_j * sum(q * q_x)  -  dmin * d_x * sum_j m_j * bsum_j
 *
 * where bsum_j = sum of the activation's 32 values of sub-block j (two of
 * its 16-value bsums). The scale sum stays int32 for the whole super-block
 * (|sum| < 2^23), so there is one f32 step per 256 values.
 *
 *   Q4_K block, 144 B
 *   +-d-+dmin+-- scales[12] --+------------ qs[128] ------------+
 *    0   2    4                16
 *   qs[32c .. 32c+32): chunk c of 64 elements; low nibbles = sub-block 2c,
 *   high nibbles = sub-block 2c+1 (two 16-byte loads give both).
 *   scales: 6-bit sc/m of sub-blocks 0..3 in bytes 0..3 / 4..7; of 4..7 the
 *   low 4 bits in bytes 8..11 (sc low, m high nibble), the top 2 bits in
 *   bits 6..7 of bytes 0..3 (sc) / 4..7 (m): unpacked four at a time in
 *   32-bit words, then widened to int32 lanes for multiply-accumulate by lane
 *   (before, as bytes read back one by one and moved to vector registers: 131
 *   instructions a super-block, 18.30 / 23.05 cycles below; now 114, and the
 *   vector pipes the bound: eight zeroed sdot starts, 16 sdot, 16 unpacking ops,
 *   8 multiply-accumulates and the scale and min work, about 72 vector ops).
 *
 *   activation pw__q8_256, 576 B: d at 0, bsums int16[16] at 8, qs at 64.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4_k_row, neoverse-v2: 17.05 cycles/iter, 0.118 cycles/weight byte,
 *     8.4 B/cycle: 84% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4_k_row, apple-m1: 22.05 cycles/iter, 0.153 cycles/weight byte,
 *     6.5 B/cycle: 36% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#define Q4_K_BYTES 144

/* The 6-bit scales (*sc) and mins (*mn) of the eight sub-blocks as the bytes of one
 * 64-bit word each (pw__k4_scale_min, four at a time in 32-bit words). */
PW__ALWAYS_INLINE void q4_k_scales(const uint8_t *packed, uint64_t *sc, uint64_t *mn) {
    uint32_t a, b, c;
    memcpy(&a, packed, 4);
    memcpy(&b, packed + 4, 4);
    memcpy(&c, packed + 8, 4);
    const uint32_t s1 = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
    const uint32_t m1 = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
    *sc = (uint64_t)(a & 0x3f3f3f3fu) | (uint64_t)s1 << 32;
    *mn = (uint64_t)(b & 0x3f3f3f3fu) | (uint64_t)m1 << 32;
}

static float q4_k_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    float32x4_t acc = vdupq_n_f32(0.0f);
    float acc_min = 0.0f;
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        uint64_t sc64, mn64;
        q4_k_scales(w + 4, &sc64, &mn64);
        /* min term: sum_j m_j * (bsums[2j] + bsums[2j+1]) */
        const int16x8_t bs = vpaddq_s16(vld1q_s16(x->bsums), vld1q_s16(x->bsums + 8));
        const int16x8_t mv = vreinterpretq_s16_u16(vmovl_u8(vcreate_u8(mn64)));
        const int32x4_t mp = vmlal_high_s16(vmull_s16(vget_low_s16(mv), vget_low_s16(bs)), mv, bs);
        const float dx = x->d;
        acc_min += pw__arm_f16_at(w + 2) * dx * (float)vaddvq_s32(mp);
        /* the scales as int32 lanes, for multiply-accumulate by lane (no scalar moves) */
        const uint16x8_t scw = vmovl_u8(vcreate_u8(sc64));
        const int32x4_t sc03 = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(scw)));
        const int32x4_t sc47 = vreinterpretq_s32_u32(vmovl_high_u16(scw));

        const uint8_t *q = w + 16;
        const int8_t *xs = x->qs;
        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
        /* chunk c: 64 elements, sub-blocks 2c (low nibbles) and 2c + 1 (high) */
#define Q4_K_CHUNK(c, scv, lane)                                                                  \
    {                                                                                             \
        const uint8x16_t v0 = vld1q_u8(q + 32 * (c)), v1 = vld1q_u8(q + 32 * (c) + 16);           \
        const int8_t *xc = xs + 64 * (c);                                                         \
        int32x4_t z[2]; /* loaded zeros (pw__arm_chain_zeros) */                                  \
        pw__arm_chain_zeros(z, 2);                                                                \
        int32x4_t lo = vdotq_s32(z[0], vreinterpretq_s8_u8(vandq_u8(v0, m4)), vld1q_s8(xc));      \
        lo = vdotq_s32(lo, vreinterpretq_s8_u8(vandq_u8(v1, m4)), vld1q_s8(xc + 16));             \
        int32x4_t hi = vdotq_s32(z[1], vreinterpretq_s8_u8(vshrq_n_u8(v0, 4)), vld1q_s8(xc + 32)); \
        hi = vdotq_s32(hi, vreinterpretq_s8_u8(vshrq_n_u8(v1, 4)), vld1q_s8(xc + 48));            \
        s0 = vmlaq_laneq_s32(s0, lo, scv, lane);                                                  \
        s1 = vmlaq_laneq_s32(s1, hi, scv, (lane) + 1);                                            \
    }
        Q4_K_CHUNK(0, sc03, 0)
        Q4_K_CHUNK(1, sc03, 2)
        Q4_K_CHUNK(2, sc47, 0)
        Q4_K_CHUNK(3, sc47, 2)
#undef Q4_K_CHUNK
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(vaddq_s32(s0, s1)), pw__arm_f16_at(w) * dx);
    }
    return vaddvq_f32(acc) - acc_min;
}

PW__ARM_RM_RUNS(q4_k, 256, Q4_K_BYTES, sizeof(pw__q8_256), q4_k_row)

PW__ARM_RM_KERNEL(q4_k, PW_FORMAT_Q4_K, Q8_256);
