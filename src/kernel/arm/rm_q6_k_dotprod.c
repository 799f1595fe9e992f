#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "rm_q6_k_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * Q6_K row-major GEMV with NEON sdot against PW_ACT_Q8_256 rows. The 6-bit
 * value u = low4 | high2 << 4 is in [0, 63] and the weight is u - 32; the
 * -32 is applied through the activation's bsums (one per 16-element
 * sub-block j, the granularity of Q6_K's int8 scales sc_j):
 *
 *   y += d * d_x * (sum_j sc_j * sum(u * q_x)  -  32 * sum_j sc_j * bsum_j)
 *
 * all in int32 per super-block (|sum| < 2^28).
 *
 *   Q6_K block, 210 B
 *   +------- ql[128] -------+---- qh[64] ----+- scales[16] s8 -+-d-+
 *    0                       128              192               208
 *   Half h (elements 128h ..): ql[64h ..] (a) and ql[64h+32 ..] (b), qh[32h ..].
 *   Element 128h + 32g + l (l < 32):
 *     g = 0: a[l] & 15 | (qh[l] & 0x03) << 4     g = 1: b[l] & 15 | (qh[l] & 0x0c) << 2
 *     g = 2: a[l] >> 4 | (qh[l] & 0x30)          g = 3: b[l] >> 4 | (qh[l] & 0xc0) >> 2
 *   so each 16-byte load of a, b, qh yields four whole 16-element sub-blocks.
 *   Each value is two ops: g = 0, 1 a shift-and-insert of qh (shifted 2 for g = 1)
 *   under the low nibble then an AND with 0x3F; g = 2, 3 an AND of qh (shifted 2
 *   for g = 3) with 0x30, then a shift-right-and-insert of the high nibble. Where
 *   each value was masked, shifted and or-ed apart (18 ops a load, not 9): llvm-mca
 *   35.05 cycles a super-block on neoverse-v2, 45.58 on apple-m1.
 *
 *   activation pw__q8_256, 576 B: d at 0, bsums int16[16] at 8, qs at 64.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q6_k_row, neoverse-v2: 22.81 cycles/iter, 0.109 cycles/weight byte,
 *     9.2 B/cycle: 92% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q6_k_row, apple-m1: 38.75 cycles/iter, 0.185 cycles/weight byte,
 *     5.4 B/cycle: 30% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/dotprod_util.h"

#define Q6_K_BYTES 210

static float q6_k_row(const uint8_t *w, int64_t step, const uint8_t *xq, int64_t nb) {
    const pw__q8_256 *x = (const pw__q8_256 *)xq;
    const uint8x16_t m6 = vdupq_n_u8(0x3F), m30 = vdupq_n_u8(0x30);
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b, w += step, ++x) {
        const int8_t *sc = (const int8_t *)w + 192;
        /* the -32 offset: sum_j sc_j * bsum_j */
        const int8x16_t scv = vld1q_s8(sc);
        const int16x8_t sc_lo = vmovl_s8(vget_low_s8(scv)), sc_hi = vmovl_high_s8(scv);
        const int16x8_t bs_lo = vld1q_s16(x->bsums), bs_hi = vld1q_s16(x->bsums + 8);
        int32x4_t off = vmull_s16(vget_low_s16(sc_lo), vget_low_s16(bs_lo));
        off = vmlal_high_s16(off, sc_lo, bs_lo);
        off = vmlal_s16(off, vget_low_s16(sc_hi), vget_low_s16(bs_hi));
        off = vmlal_high_s16(off, sc_hi, bs_hi);

        int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h) {
            const uint8_t *ql = w + 64 * h, *qh = w + 128 + 32 * h;
            const int8_t *xs = x->qs + 128 * h;
            const int8_t *sh = sc + 8 * h;
            for (int l = 0; l < 32; l += 16) {
                const uint8x16_t a = vld1q_u8(ql + l), bb = vld1q_u8(ql + 32 + l);
                const uint8x16_t hb = vld1q_u8(qh + l), hb2 = vshrq_n_u8(hb, 2);
                /* shift-and-insert: the low nibbles keep bits 0..3 under qh << 4 (bits 6, 7
                 * then cleared), the high nibbles go under qh's bits 4, 5 already in place */
                const int8x16_t u0 = vreinterpretq_s8_u8(vandq_u8(vsliq_n_u8(a, hb, 4), m6));
                const int8x16_t u1 = vreinterpretq_s8_u8(vandq_u8(vsliq_n_u8(bb, hb2, 4), m6));
                const int8x16_t u2 = vreinterpretq_s8_u8(vsriq_n_u8(vandq_u8(hb, m30), a, 4));
                const int8x16_t u3 = vreinterpretq_s8_u8(vsriq_n_u8(vandq_u8(hb2, m30), bb, 4));
                const int j = l / 16; /* sub-block 8h + 2g + j */
                int32x4_t z[4]; /* the dots start from loaded zeros (pw__arm_chain_zeros) */
                pw__arm_chain_zeros(z, 4);
                s0 = vmlaq_n_s32(s0, vdotq_s32(z[0], u0, vld1q_s8(xs + l)), sh[j]);
                s1 = vmlaq_n_s32(s1, vdotq_s32(z[1], u1, vld1q_s8(xs + 32 + l)), sh[2 + j]);
                s0 = vmlaq_n_s32(s0, vdotq_s32(z[2], u2, vld1q_s8(xs + 64 + l)), sh[4 + j]);
                s1 = vmlaq_n_s32(s1, vdotq_s32(z[3], u3, vld1q_s8(xs + 96 + l)), sh[6 + j]);
            }
        }
        acc = pw__arm_sb_step(acc, s0, s1, 32 * vaddvq_s32(off), w + 208, x->d);
    }
    return acc;
}

PW__ARM_RM_RUNS(q6_k, 256, Q6_K_BYTES, sizeof(pw__q8_256), q6_k_row)

PW__ARM_RM_KERNEL(q6_k, PW_FORMAT_Q6_K, Q8_256);
