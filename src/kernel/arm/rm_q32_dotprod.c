#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_q32_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * Row-major GEMV with NEON sdot for the 32-element formats beside Q4_0 and Q8_0:
 * Q4_1, Q5_0, Q5_1 and IQ4_NL, against PW_ACT_Q8_32 rows. Each reads the file's
 * bytes as they are (kernel.h, BLOCKED_ROW_MAJOR; input-block-major views through
 * pw__arm_ibm_loop), so the compact policy serves these formats on Arm without a
 * packed copy (before, with no such kernel, it ran the reference kernel). Per
 * block, with int8 codes c (element order as Q4_0's: byte j of the nibbles holds
 * element j low and j + 16 high):
 *
 *   y += d * x.d * sum(c * x.qs)  [+ m * x.dsum]        x.dsum = x.d * sum(x.qs)
 *
 *   Q4_1   20 B  d, m, qs[16]           c = nibble (0..15), value c * d + m
 *   Q5_0   22 B  d, qh[4], qs[16]       c = (nibble | bit e of qh << 4) - 16 (-16..15)
 *   Q5_1   24 B  d, m, qh[4], qs[16]    c = nibble | bit e of qh << 4 (0..31), + m
 *   IQ4_NL 18 B  d, qs[16]              c = pw__iq4nl_values[nibble] (-127..113)
 *
 * Two sdot a block (elements 0..15 and 16..31), |sum| <= 32 * 127 * 127 < 2^19,
 * exact in int32; one f32 fma a block (pw__arm_q32_row_min, dotprod_util.h: two
 * blocks a step into two chains). Q5's fifth bits: the 32 bits of qh, bytes 0..3,
 * each spread over 8 lanes (one vtbl) and tested against the lane's bit (vtst).
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4_1_row, neoverse-v2: 8.53 cycles/iter, 0.213 cycles/weight byte,
 *     4.7 B/cycle: 47% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4_1_row, apple-m1: 9.37 cycles/iter, 0.234 cycles/weight byte,
 *     4.3 B/cycle: 24% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q5_0_row, neoverse-v2: 10.54 cycles/iter, 0.239 cycles/weight byte,
 *     4.2 B/cycle: 42% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q5_0_row, apple-m1: 12.70 cycles/iter, 0.289 cycles/weight byte,
 *     3.5 B/cycle: 19% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q5_1_row, neoverse-v2: 13.03 cycles/iter, 0.272 cycles/weight byte,
 *     3.7 B/cycle: 37% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q5_1_row, apple-m1: 15.36 cycles/iter, 0.320 cycles/weight byte,
 *     3.1 B/cycle: 17% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   iq4_nl_row, neoverse-v2: 7.03 cycles/iter, 0.195 cycles/weight byte,
 *     5.1 B/cycle: 51% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   iq4_nl_row, apple-m1: 8.03 cycles/iter, 0.223 cycles/weight byte,
 *     4.5 B/cycle: 25% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#include "format/blocks.h"

/* Lane e of the two vectors: 0xFF where bit e of the little-endian uint32 at p is set
 * (its bytes 0..3 spread over 8 lanes each by one table lookup, then tested). */
PW__ALWAYS_INLINE uint8x16x2_t q5_high(const uint8_t *p) {
    uint32_t h;
    memcpy(&h, p, 4);
    const uint8x16_t b = vreinterpretq_u8_u32(vdupq_n_u32(h));
    const uint8x16_t bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
    const uint8x16_t i01 = vcombine_u8(vdup_n_u8(0), vdup_n_u8(1));
    const uint8x16_t i23 = vcombine_u8(vdup_n_u8(2), vdup_n_u8(3));
    const uint8x16x2_t r = {{vtstq_u8(vqtbl1q_u8(b, i01), bit), vtstq_u8(vqtbl1q_u8(b, i23), bit)}};
    return r;
}

/* The low nibbles (elements 0..15) and high nibbles (16..31) of the 16 bytes at p. */
PW__ALWAYS_INLINE uint8x16x2_t nibbles(const uint8_t *p) {
    const uint8x16_t v = vld1q_u8(p);
    const uint8x16x2_t r = {{vandq_u8(v, vdupq_n_u8(0x0F)), vshrq_n_u8(v, 4)}};
    return r;
}

PW__ALWAYS_INLINE int8x16x2_t q4_1_codes(const uint8_t *w) {
    const uint8x16x2_t n = nibbles(w + offsetof(pw__block_q4_1, qs));
    const int8x16x2_t q = {{vreinterpretq_s8_u8(n.val[0]), vreinterpretq_s8_u8(n.val[1])}};
    return q;
}

PW__ALWAYS_INLINE int8x16x2_t q5_0_codes(const uint8_t *w) {
    const uint8x16x2_t n = nibbles(w + offsetof(pw__block_q5_0, qs));
    const uint8x16x2_t h = q5_high(w + offsetof(pw__block_q5_0, qh));
    /* (nibble | 16 h) - 16 = nibble - 16 (1 - h): 16 where the bit is clear */
    const uint8x16_t ten = vdupq_n_u8(0x10);
    const int8x16x2_t q = {{vreinterpretq_s8_u8(vsubq_u8(n.val[0], vbicq_u8(ten, h.val[0]))),
                            vreinterpretq_s8_u8(vsubq_u8(n.val[1], vbicq_u8(ten, h.val[1])))}};
    return q;
}

PW__ALWAYS_INLINE int8x16x2_t q5_1_codes(const uint8_t *w) {
    const uint8x16x2_t n = nibbles(w + offsetof(pw__block_q5_1, qs));
    const uint8x16x2_t h = q5_high(w + offsetof(pw__block_q5_1, qh));
    const uint8x16_t ten = vdupq_n_u8(0x10);
    const int8x16x2_t q = {{vreinterpretq_s8_u8(vorrq_u8(n.val[0], vandq_u8(h.val[0], ten))),
                            vreinterpretq_s8_u8(vorrq_u8(n.val[1], vandq_u8(h.val[1], ten)))}};
    return q;
}

PW__ALWAYS_INLINE int8x16x2_t iq4_nl_codes(const uint8_t *w) {
    const uint8x16x2_t n = nibbles(w + offsetof(pw__block_iq4_nl, qs));
    const int8x16_t lut = vld1q_s8(pw__iq4nl_values);
    const int8x16x2_t q = {{vqtbl1q_s8(lut, n.val[0]), vqtbl1q_s8(lut, n.val[1])}};
    return q;
}

static float q4_1_row(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb) {
    return pw__arm_q32_row_min(w, bs, xq, nb, q4_1_codes, 1, 0);
}
static float q5_0_row(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb) {
    return pw__arm_q32_row(w, bs, xq, nb, q5_0_codes, 0);
}
static float q5_1_row(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb) {
    return pw__arm_q32_row_min(w, bs, xq, nb, q5_1_codes, 1, 0);
}
static float iq4_nl_row(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb) {
    return pw__arm_q32_row(w, bs, xq, nb, iq4_nl_codes, 0);
}

PW__ARM_RM_RUNS(q4_1, 32, sizeof(pw__block_q4_1), sizeof(pw__q8_32), q4_1_row)
PW__ARM_RM_RUNS(q5_0, 32, sizeof(pw__block_q5_0), sizeof(pw__q8_32), q5_0_row)
PW__ARM_RM_RUNS(q5_1, 32, sizeof(pw__block_q5_1), sizeof(pw__q8_32), q5_1_row)
PW__ARM_RM_RUNS(iq4_nl, 32, sizeof(pw__block_iq4_nl), sizeof(pw__q8_32), iq4_nl_row)

PW__ARM_RM_KERNEL(q4_1, PW_FORMAT_Q4_1, Q8_32);
PW__ARM_RM_KERNEL(q5_0, PW_FORMAT_Q5_0, Q8_32);
PW__ARM_RM_KERNEL(q5_1, PW_FORMAT_Q5_1, Q8_32);
PW__ARM_RM_KERNEL(iq4_nl, PW_FORMAT_IQ4_NL, Q8_32);
