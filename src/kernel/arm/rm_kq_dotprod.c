#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_kq_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * Q2_K, Q3_K, Q5_K and TQ1_0 row-major GEMV with NEON sdot against
 * PW_ACT_Q8_256 rows (GGUF's Q8_K pairing), read from the file's bytes. Every
 * weight is decoded to an int8 code in [-16, 48] that sdot takes as it is (signed
 * for Q3_K, Q5_K and TQ1_0); a code's offset from the true value, where there is
 * one, leaves through the activation's bsums. A super-block's integer dot stays
 * in int32 lanes to its end (bounds at each format), so there is one f32 step
 * per 256 values (and one more for the Q2_K/Q5_K minimum, as Q4_K).
 *
 *   activation pw__q8_256, 576 B: d at 0, sum at 4, bsums int16[16] at 8, qs at 64.
 *
 * Sub-block scales: sdot leaves one int32x4 per 16 (32) weights of a sub-block;
 * two rounds of pairwise adds turn four of them into the four sub-block sums,
 * in sub-block order, and one MLA by four int32 scales adds them (sub4).
 *
 * Q2_K, 84 B, sub-block s = e/16 of 16 elements:
 *   +- scales[16] -+------------ qs[64] ------------+-d-+dmin+
 *    0              16                               80  82
 *   scales[s]: scale sc_s low nibble, min m_s high nibble (both 0..15).
 *   Element 128h + 32g + l (l < 32): bits 2g..2g+1 of qs[32h + l].
 *   y += d * d_x * sum_s sc_s * sum(q * q_x)  -  dmin * d_x * sum_s m_s * bsum_s
 *   The codes are not shifted down: group g is qs & (3 << 2g) (q * 4^g) for
 *   g < 3, qs >> 6 (q) for g = 3; the scales, times 16 / 4^g (16, 4, 1, 16:
 *   at most 240, one u8 multiply) give every product 16x its value, and the
 *   1/16 is one f32 multiply at the end (exact, a power of two). |sum| < 2^25.
 *
 * Q3_K, 110 B, sub-block s = e/16 of 16 elements:
 *   +-- hmask[32] --+------------ qs[64] ------------+ scales[12] +-d-+
 *    0               32                               96           108
 *   Element 128h + 32g + l: low2 = bits 2g..2g+1 of qs[32h + l], high bit =
 *   bit 4h + g of hmask[l]; q = low2 - (high ? 0 : 4) in [-4, 3]. The code is
 *   q itself: low2 in bits 0..1 and, from a test of the INVERTED hmask bit,
 *   0xFC (-4 | low2) or 0 in bits 2..7 (one bitwise select).
 *   Scale j (6 bits, minus 32): low 4 bits in byte j % 8 (low nibble for
 *   j < 8), top 2 in bits 2(j/4)..+1 of byte 8 + j % 4.
 *   y += d * d_x * sum_s (sc_s - 32) * sum(q * q_x)                 |sum| < 2^23
 *
 * Q5_K, 176 B, sub-block j = e/32 of 32 elements:
 *   +-d-+dmin+-- scales[12] --+-- qh[32] --+----------- qs[128] -----------+
 *    0   2    4                16           48
 *   scales/mins: Q4_K's 6-bit packing (rm_q4_k_dotprod.c).
 *   qs[32c + l]: low nibble element 64c + l, high nibble 64c + 32 + l;
 *   qh[l] bit j is bit 4 of element 32j + l: u = nibble + 16 * bit in [0, 31].
 *   The code is u - 16 in [-16, 15]: the nibble in bits 0..3 and, from a test
 *   of the inverted qh bit, 0xF (-16) or 0 in bits 4..7; the +16 comes back as
 *   16 * sum_j sc_j * bsum_j (bsum_j: the two bsums of sub-block j):
 *   y += d * d_x * sum_j sc_j * (sum((u - 16) * q_x) + 16 * bsum_j)
 *        - dmin * d_x * sum_j m_j * bsum_j                            |sum| < 2^26
 *
 * TQ1_0, 54 B: five trits a byte (four in qh), t in {0, 1, 2} meaning t - 1:
 *   +------------ qs[48] ------------+qh[4]+-d-+
 *    0                                48    52
 *   Trit k of a byte v is the leading trit of v * 3^k (mod 256), and the
 *   leading trit of a byte u is 0 for u < 86, 1 for u < 171, else 2, so
 *   t - 1 = (u < 86 ? -1 : 0) - (u > 170 ? -1 : 0): two compares and a
 *   subtraction, no offset. Elements: trit k of qs[m] -> 32k + m (m < 32),
 *   of qs[32 + m] -> 160 + 16k + m (m < 16), of qh[j] -> 240 + 4k + j (k < 4).
 *   y += d * d_x * sum((t - 1) * q_x)                                 |sum| < 2^15
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q2_k_row, neoverse-v2: 18.80 cycles/iter, 0.224 cycles/weight byte,
 *     4.5 B/cycle: 45% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q2_k_row, apple-m1: 24.04 cycles/iter, 0.286 cycles/weight byte,
 *     3.5 B/cycle: 19% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q3_k_row, neoverse-v2: 26.86 cycles/iter, 0.244 cycles/weight byte,
 *     4.1 B/cycle: 41% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q3_k_row, apple-m1: 35.06 cycles/iter, 0.319 cycles/weight byte,
 *     3.1 B/cycle: 17% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q5_k_row, neoverse-v2: 25.55 cycles/iter, 0.145 cycles/weight byte,
 *     6.9 B/cycle: 69% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q5_k_row, apple-m1: 33.04 cycles/iter, 0.188 cycles/weight byte,
 *     5.3 B/cycle: 29% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   tq1_0_row, neoverse-v2: 25.05 cycles/iter, 0.464 cycles/weight byte,
 *     2.2 B/cycle: 22% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   tq1_0_row, apple-m1: 32.05 cycles/iter, 0.594 cycles/weight byte,
 *     1.7 B/cycle: 9% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#define Q2_K_BYTES 84
#define Q3_K_BYTES 110
#define Q5_K_BYTES 176
#define TQ1_0_BYTES 54

/* sdot of 16 int8 codes with 16 activations, from zero (a loaded zero:
 * pw__arm_chain_zeros). */
PW__ALWAYS_INLINE int32x4_t dot16(int8x16_t q, const int8_t *xs) {
    int32x4_t z;
    pw__arm_chain_zeros(&z, 1);
    return vdotq_s32(z, q, vld1q_s8(xs));
}

PW__ALWAYS_INLINE int8x16_t s8(uint8x16_t v) { return vreinterpretq_s8_u8(v); }

/* v, hidden from the optimizer: an inverted mask stays one NOT, where GCC would
 * fold it into each test of it (cmtst of ~v becomes bic + cmtst). */
PW__ALWAYS_INLINE uint8x16_t opaque(uint8x16_t v) {
    __asm__("" : "+w"(v));
    return v;
}

/* The sums of a, b, c, d (one sub-block's int32x4 each) in lanes 0, 1, 2, 3. */
PW__ALWAYS_INLINE int32x4_t sub4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
    return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

/* Two fp16 at p (d, dmin) times dx: lanes 0 and 1. */
PW__ALWAYS_INLINE float32x2_t f16x2_times(const uint8_t *p, float dx) {
    uint32_t h;
    memcpy(&h, p, 4);
    return vmul_n_f32(vget_low_f32(vcvt_f32_f16(vreinterpret_f16_u32(vdup_n_u32(h)))), dx);
}

/* sum_i a_i * b_i over 16 int16 lanes (two vectors each), in int32x4 lanes. */
PW__ALWAYS_INLINE int32x4_t mul16(int16x8_t a0, int16x8_t a1, int16x8_t b0, int16x8_t b1) {
    int32x4_t s = vmull_s16(vget_low_s16(a0), vget_low_s16(b0));
    s = vmlal_high_s16(s, a0, b0);
    s = vmlal_s16(s, vget_low_s16(a1), vget_low_s16(b1));
    return vmlal_high_s16(s, a1, b1);
}

/* ------------------------------------------------------------------------ */
/* Q2_K                                                                      */
/* ------------------------------------------------------------------------ */

/* Sub-blocks 8h + 2g .. 8h + 2g + 3 (groups g and g + 1) of half h: v0 and v1 are
 * the half's qs bytes l = 0..15 and 16..31 masked (or shifted) to each group. */
PW__ALWAYS_INLINE int32x4_t q2_k_four(uint8x16_t a0, uint8x16_t a1, uint8x16_t b0, uint8x16_t b1,
                                      const int8_t *xs) {
    return sub4(dot16(s8(a0), xs), dot16(s8(a1), xs + 16), dot16(s8(b0), xs + 32),
                dot16(s8(b1), xs + 48));
}

static float q2_k_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    const uint8x16_t m4 = vdupq_n_u8(0x0F), g0 = vdupq_n_u8(0x03), g1 = vdupq_n_u8(0x0C),
                     g2 = vdupq_n_u8(0x30);
    /* 16 / 4^g for the masked codes of group g = (s % 8) / 2, 16 for g = 3 (shifted) */
    static const uint8_t unit[16] = {16, 16, 4, 4, 1, 1, 16, 16, 16, 16, 4, 4, 1, 1, 16, 16};
    const uint8x16_t uv = vld1q_u8(unit);
    float32x4_t acc = vdupq_n_f32(0.0f), acc_min = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        const uint8x16_t packed = vld1q_u8(w);
        int32x4_t sc[4];
        pw__arm_widen_u8(vmulq_u8(vandq_u8(packed, m4), uv), sc); /* <= 15 * 16 = 240: u8 */
        /* min term: sum_s m_s * bsum_s, |.| <= 16 * 15 * 2032 < 2^19 */
        const uint8x16_t mn = vshrq_n_u8(packed, 4);
        const int32x4_t mp =
            mul16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn))),
                  vreinterpretq_s16_u16(vmovl_high_u8(mn)), vld1q_s16(x->bsums),
                  vld1q_s16(x->bsums + 8));
        /* sub-block sums times 16: |q_s * q_x| sum <= 16 * 3 * 127 = 6096, times a
         * scale of at most 15 (16x: 240 with the 4^g folded in), 16 sub-blocks */
        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t v0 = vld1q_u8(w + 16 + 32 * h), v1 = vld1q_u8(w + 32 + 32 * h);
            const int8_t *xs = x->qs + 128 * h;
            s0 = vmlaq_s32(s0,
                           q2_k_four(vandq_u8(v0, g0), vandq_u8(v1, g0), vandq_u8(v0, g1),
                                     vandq_u8(v1, g1), xs),
                           sc[2 * h]);
            s1 = vmlaq_s32(s1,
                           q2_k_four(vandq_u8(v0, g2), vandq_u8(v1, g2), vshrq_n_u8(v0, 6),
                                     vshrq_n_u8(v1, 6), xs + 64),
                           sc[2 * h + 1]);
        }
        const float32x2_t dd = f16x2_times(w + 80, x->d); /* d * d_x, dmin * d_x */
        acc = vfmaq_lane_f32(acc, vcvtq_f32_s32(vaddq_s32(s0, s1)), dd, 0);
        acc_min = vfmaq_lane_f32(acc_min, vcvtq_f32_s32(mp), dd, 1);
    }
    return vaddvq_f32(acc) * 0.0625f - vaddvq_f32(acc_min);
}

/* ------------------------------------------------------------------------ */
/* Q3_K                                                                      */
/* ------------------------------------------------------------------------ */

/* The sixteen scales minus 32, int8 in [-32, 31], from the 12 packed bytes at p. */
PW__ALWAYS_INLINE int8x16_t q3_k_scales(const uint8_t *p) {
    const uint8x8_t a = vld1_u8(p);
    uint32_t t;
    memcpy(&t, p + 8, 4);
    /* low 4 bits: scales 0..7 the low nibbles of bytes 0..7, 8..15 the high */
    const uint8x16_t lo = vcombine_u8(vand_u8(a, vdup_n_u8(0x0F)), vshr_n_u8(a, 4));
    /* top 2 bits: byte 8 + j % 4 (lane j of the repeated word), bits 2(j/4) to 4..5 */
    static const int8_t to45[16] = {4, 4, 4, 4, 2, 2, 2, 2, 0, 0, 0, 0, -2, -2, -2, -2};
    const uint8x16_t hi =
        vandq_u8(vshlq_u8(vreinterpretq_u8_u32(vdupq_n_u32(t)), vld1q_s8(to45)), vdupq_n_u8(0x30));
    return vsubq_s8(s8(vorrq_u8(lo, hi)), vdupq_n_s8(32));
}

/* The codes q of 16 elements: low2 in bits 0..1 of t, and 0xFC (-4) in the
 * others where bit `bit` of nh (the inverted hmask) is set. */
PW__ALWAYS_INLINE int8x16_t q3_k_code(uint8x16_t t, uint8x16_t nh, uint8_t bit) {
    return s8(vbslq_u8(vdupq_n_u8(0x03), t, vtstq_u8(nh, vdupq_n_u8(bit))));
}

/* Sub-blocks of groups g and g + 1 of a half: a0/a1 the qs bytes (l < 16, l >= 16)
 * with group g in bits 0..1, b0/b1 with group g + 1; `bit` = hmask bit of group g. */
PW__ALWAYS_INLINE int32x4_t q3_k_four(uint8x16_t a0, uint8x16_t a1, uint8x16_t b0, uint8x16_t b1,
                                      uint8x16_t nh0, uint8x16_t nh1, uint8_t bit,
                                      const int8_t *xs) {
    const uint8_t next = (uint8_t)(bit << 1);
    return sub4(dot16(q3_k_code(a0, nh0, bit), xs), dot16(q3_k_code(a1, nh1, bit), xs + 16),
                dot16(q3_k_code(b0, nh0, next), xs + 32),
                dot16(q3_k_code(b1, nh1, next), xs + 48));
}

static float q3_k_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        int32x4_t sc[4];
        pw__arm_widen_s8(q3_k_scales(w + 96), sc);
        /* the inverted hmask: bits 0..3 for half 0, 4..7 (shifted down) for half 1,
         * so that four test masks serve both halves */
        const uint8x16_t nh0 = opaque(vmvnq_u8(vld1q_u8(w)));
        const uint8x16_t nh1 = opaque(vmvnq_u8(vld1q_u8(w + 16)));
        /* |q| <= 4: a sub-block sum <= 16 * 4 * 127 = 8128, times |sc| <= 32, 16 of them */
        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t v0 = vld1q_u8(w + 32 + 32 * h), v1 = vld1q_u8(w + 48 + 32 * h);
            const uint8x16_t n0 = h ? vshrq_n_u8(nh0, 4) : nh0, n1 = h ? vshrq_n_u8(nh1, 4) : nh1;
            const int8_t *xs = x->qs + 128 * h;
            s0 = vmlaq_s32(
                s0, q3_k_four(v0, v1, vshrq_n_u8(v0, 2), vshrq_n_u8(v1, 2), n0, n1, 1, xs),
                sc[2 * h]);
            s1 = vmlaq_s32(s1,
                           q3_k_four(vshrq_n_u8(v0, 4), vshrq_n_u8(v1, 4), vshrq_n_u8(v0, 6),
                                     vshrq_n_u8(v1, 6), n0, n1, 4, xs + 64),
                           sc[2 * h + 1]);
        }
        acc = pw__arm_sb_step(acc, s0, s1, 0, w + 108, x->d);
    }
    return acc;
}

/* ------------------------------------------------------------------------ */
/* Q5_K                                                                      */
/* ------------------------------------------------------------------------ */

/* The eight 6-bit scales (*sc) and mins (*mn) of the 12 packed bytes at p (Q4_K's
 * packing): sc/m of sub-blocks 0..3 are bits 0..5 of bytes 0..3 / 4..7; of 4..7 the
 * low 4 bits are the low / high nibbles of bytes 8..11 and the top 2 bits 6..7 of
 * bytes 0..3 / 4..7. As u32 pairs [sc 0..3, m 0..3] and [sc 4..7, m 4..7]. */
PW__ALWAYS_INLINE void q5_k_scales(const uint8_t *p, uint8x8_t *sc, uint8x8_t *mn) {
    const uint8x8_t a = vld1_u8(p);
    uint32_t c;
    memcpy(&c, p + 8, 4);
    static const int8_t down[8] = {0, 0, 0, 0, -4, -4, -4, -4};
    const uint8x8_t nib = vand_u8(vshl_u8(vreinterpret_u8_u32(vdup_n_u32(c)), vld1_s8(down)),
                                  vdup_n_u8(0x0F));
    const uint32x2_t first = vreinterpret_u32_u8(vand_u8(a, vdup_n_u8(0x3F)));
    const uint32x2_t second =
        vreinterpret_u32_u8(vorr_u8(nib, vand_u8(vshr_n_u8(a, 2), vdup_n_u8(0x30))));
    *sc = vreinterpret_u8_u32(vzip1_u32(first, second));
    *mn = vreinterpret_u8_u32(vzip2_u32(first, second));
}

/* The codes u - 16 of 16 elements: the nibble in bits 0..3 of t, and 0xF (-16)
 * in bits 4..7 where bit `bit` of nh (the inverted qh) is set. */
PW__ALWAYS_INLINE int8x16_t q5_k_code(uint8x16_t t, uint8x16_t nh, uint8_t bit) {
    return s8(vbslq_u8(vdupq_n_u8(0x0F), t, vtstq_u8(nh, vdupq_n_u8(bit))));
}

/* Chunk c (sub-blocks 2c and 2c + 1): its two int32x4 sums, low nibbles in lo;
 * nh0/nh1 the inverted qh, shifted down 4 for c >= 2 (four test masks for all). */
PW__ALWAYS_INLINE void q5_k_chunk(const uint8_t *qs, uint8x16_t nh0, uint8x16_t nh1, int c,
                                  const int8_t *xs, int32x4_t *lo, int32x4_t *hi) {
    const uint8x16_t v0 = vld1q_u8(qs + 32 * c), v1 = vld1q_u8(qs + 32 * c + 16);
    const uint8_t bl = (uint8_t)(1u << (2 * (c & 1))), bh = (uint8_t)(bl << 1);
    *lo = vdotq_s32(dot16(q5_k_code(v0, nh0, bl), xs), q5_k_code(v1, nh1, bl), vld1q_s8(xs + 16));
    *hi = vdotq_s32(dot16(q5_k_code(vshrq_n_u8(v0, 4), nh0, bh), xs + 32),
                    q5_k_code(vshrq_n_u8(v1, 4), nh1, bh), vld1q_s8(xs + 48));
}

static float q5_k_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    float32x4_t acc = vdupq_n_f32(0.0f), acc_min = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        uint8x8_t sc8, mn8;
        q5_k_scales(w + 4, &sc8, &mn8);
        const int16x8_t sc = vreinterpretq_s16_u16(vmovl_u8(sc8));
        const int16x8_t mn = vreinterpretq_s16_u16(vmovl_u8(mn8));
        /* bsum_j of the 32-element sub-blocks: |.| <= 32 * 127 = 4064, int16 */
        const int16x8_t bs = vpaddq_s16(vld1q_s16(x->bsums), vld1q_s16(x->bsums + 8));
        /* the +16 of the codes: 16 * sum_j sc_j * bsum_j, |.| <= 16 * 8 * 63 * 4064 < 2^25 */
        const int32x4_t off =
            vmlal_high_s16(vmull_s16(vget_low_s16(sc), vget_low_s16(bs)), sc, bs);
        /* min term: sum_j m_j * bsum_j, |.| <= 8 * 63 * 4064 < 2^21 */
        const int32x4_t mp =
            vmlal_high_s16(vmull_s16(vget_low_s16(mn), vget_low_s16(bs)), mn, bs);
        const uint8x16_t nh0 = opaque(vmvnq_u8(vld1q_u8(w + 16)));
        const uint8x16_t nh1 = opaque(vmvnq_u8(vld1q_u8(w + 32)));
        const uint8_t *qs = w + 48;
        /* |u - 16| <= 16: a sub-block sum <= 32 * 16 * 127 = 65024, times sc <= 63, 8 of
         * them < 2^25; with the offset < 2^26 */
        int32x4_t l0, h0, l1, h1, l2, h2, l3, h3;
        q5_k_chunk(qs, nh0, nh1, 0, x->qs, &l0, &h0);
        q5_k_chunk(qs, nh0, nh1, 1, x->qs + 64, &l1, &h1);
        const uint8x16_t nh0_hi = vshrq_n_u8(nh0, 4), nh1_hi = vshrq_n_u8(nh1, 4);
        q5_k_chunk(qs, nh0_hi, nh1_hi, 2, x->qs + 128, &l2, &h2);
        q5_k_chunk(qs, nh0_hi, nh1_hi, 3, x->qs + 192, &l3, &h3);
        int32x4_t s = vshlq_n_s32(off, 4);
        s = vmlaq_s32(s, sub4(l0, h0, l1, h1), vmovl_s16(vget_low_s16(sc)));
        s = vmlaq_s32(s, sub4(l2, h2, l3, h3), vmovl_high_s16(sc));
        const float32x2_t dd = f16x2_times(w, x->d); /* d * d_x, dmin * d_x */
        acc = vfmaq_lane_f32(acc, vcvtq_f32_s32(s), dd, 0);
        acc_min = vfmaq_lane_f32(acc_min, vcvtq_f32_s32(mp), dd, 1);
    }
    return vaddvq_f32(acc) - vaddvq_f32(acc_min);
}

/* ------------------------------------------------------------------------ */
/* TQ1_0                                                                     */
/* ------------------------------------------------------------------------ */

/* t - 1 of the leading trit of each byte: -1 below 86, +1 above 170, else 0. */
PW__ALWAYS_INLINE int8x16_t tq1_0_trit(uint8x16_t u) {
    return vsubq_s8(s8(vcltq_u8(u, vdupq_n_u8(86))), s8(vcgtq_u8(u, vdupq_n_u8(170))));
}

static float tq1_0_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    const uint8x16_t p3 = vdupq_n_u8(3), p9 = vdupq_n_u8(9), p27 = vdupq_n_u8(27),
                     p81 = vdupq_n_u8(81);
    /* lane 4k + j: qh[j] * 3^k */
    static const uint8_t pow_qh[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
    const uint8x16_t pq = vld1q_u8(pow_qh);
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        const uint8x16_t a0 = vld1q_u8(w), a1 = vld1q_u8(w + 16), c = vld1q_u8(w + 32);
        uint32_t qh;
        memcpy(&qh, w + 48, 4);
        const uint8x16_t e = vmulq_u8(vreinterpretq_u8_u32(vdupq_n_u32(qh)), pq);
        const int8_t *xs = x->qs;
        /* 256 products of |.| <= 127: |sum| <= 32512 */
        int32x4_t s0 = vdotq_s32(vdupq_n_s32(0), tq1_0_trit(a0), vld1q_s8(xs));
        int32x4_t s1 = vdotq_s32(vdupq_n_s32(0), tq1_0_trit(a1), vld1q_s8(xs + 16));
        s0 = vdotq_s32(s0, tq1_0_trit(vmulq_u8(a0, p3)), vld1q_s8(xs + 32));
        s1 = vdotq_s32(s1, tq1_0_trit(vmulq_u8(a1, p3)), vld1q_s8(xs + 48));
        s0 = vdotq_s32(s0, tq1_0_trit(vmulq_u8(a0, p9)), vld1q_s8(xs + 64));
        s1 = vdotq_s32(s1, tq1_0_trit(vmulq_u8(a1, p9)), vld1q_s8(xs + 80));
        s0 = vdotq_s32(s0, tq1_0_trit(vmulq_u8(a0, p27)), vld1q_s8(xs + 96));
        s1 = vdotq_s32(s1, tq1_0_trit(vmulq_u8(a1, p27)), vld1q_s8(xs + 112));
        s0 = vdotq_s32(s0, tq1_0_trit(vmulq_u8(a0, p81)), vld1q_s8(xs + 128));
        s1 = vdotq_s32(s1, tq1_0_trit(vmulq_u8(a1, p81)), vld1q_s8(xs + 144));
        /* elements 160 + 16k + m of qs[32 + m] */
        s0 = vdotq_s32(s0, tq1_0_trit(c), vld1q_s8(xs + 160));
        s1 = vdotq_s32(s1, tq1_0_trit(vmulq_u8(c, p3)), vld1q_s8(xs + 176));
        s0 = vdotq_s32(s0, tq1_0_trit(vmulq_u8(c, p9)), vld1q_s8(xs + 192));
        s1 = vdotq_s32(s1, tq1_0_trit(vmulq_u8(c, p27)), vld1q_s8(xs + 208));
        s0 = vdotq_s32(s0, tq1_0_trit(vmulq_u8(c, p81)), vld1q_s8(xs + 224));
        /* elements 240 + 4k + j of qh[j] */
        s1 = vdotq_s32(s1, tq1_0_trit(e), vld1q_s8(xs + 240));
        acc = pw__arm_sb_step(acc, s0, s1, 0, w + 52, x->d);
    }
    return acc;
}

PW__ARM_RM_RUNS(q2_k, 256, Q2_K_BYTES, sizeof(pw__q8_256), q2_k_row)
PW__ARM_RM_RUNS(q3_k, 256, Q3_K_BYTES, sizeof(pw__q8_256), q3_k_row)
PW__ARM_RM_RUNS(q5_k, 256, Q5_K_BYTES, sizeof(pw__q8_256), q5_k_row)
PW__ARM_RM_RUNS(tq1_0, 256, TQ1_0_BYTES, sizeof(pw__q8_256), tq1_0_row)

PW__ARM_RM_KERNEL(q2_k, PW_FORMAT_Q2_K, Q8_256);
PW__ARM_RM_KERNEL(q3_k, PW_FORMAT_Q3_K, Q8_256);
PW__ARM_RM_KERNEL(q5_k, PW_FORMAT_Q5_K, Q8_256);
PW__ARM_RM_KERNEL(tq1_0, PW_FORMAT_TQ1_0, Q8_256);
