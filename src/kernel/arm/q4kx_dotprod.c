#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "q4kx_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the q4kx32k4 family (layout in kernel/q4kx.h):
 * Q4_K in the bytes the x86 kernels read, so one packed weight (or cache file)
 * serves both, and on Arm the one form of a Q4_K weight serves n = 1 and n > 1 at
 * the file's size (before, the compact policy left Q4_K in place and ran the
 * row-major GEMV kernel for every n). The GEMV loop is tile32_neon.h's, the GEMM
 * loop tile32_kgemm.h's; this file is the record functions. Activations are
 * pw__q8_256 rows (|qs| <= 127).
 *
 * A 64-byte step s of a record is four q registers, as in q4x_dotprod.c: bytes
 * [64s + 16j, +16) hold, per 4-byte lane l, k = 4s .. 4s+3 of row 4j + l in the
 * low nibbles and of row 16 + 4j + l in the high nibbles. Group q (q = 0..7) is
 * rows 4q .. 4q+3: the low nibbles of register j = q (q < 4) or the high
 * nibbles of register j = q - 4. Sub-block t (32 values, one 6-bit scale and
 * min per row) is steps 8t .. 8t+7, and its 32 activation bytes are two q
 * registers a0, a1, whose 4-byte lanes the indexed SDOT takes per step.
 *
 * Per sub-block t and group q (unsigned nibbles, valid signed bytes: SDOT is exact):
 *
 *   dot_tq = sum_s sdot(nibbles, a, lane s)        int32, |.| <= 32 * 15 * 128
 *   S_q   += dot_tq * sc_t      (MLA by the rows' scales widened to int32)
 *   M_q   += m_t * b_t          (b_t = bsums[2t] + bsums[2t+1], MLAL by a scalar)
 *
 *   end of record:  acc_q += (f32(S_q) * d - f32(M_q) * dmin) * x.d
 *
 * (FMLS, then FMLA by x.d: the x86 kernels' float steps). |S| <= 8 * 63 * 61440 <
 * 2^25, |M| <= 8 * 63 * 8128 < 2^23: exact in int32.
 *
 * Scales (q4kxn_sc_mn): byte i of rows 0..15 (and of rows 16..31) is 16
 * consecutive bytes of the record, one q register: a few byte operations give
 * the 6-bit scale and min of 16 rows and one sub-block at once, widened to int32
 * (scales) and int16 (mins): where the GEMV uses them, and into an L1 scratch
 * (q4kxn_decode) that every GEMM panel of a record reads.
 *
 * GEMV (q4kxn_block): the record in address order, as the x86 kernels read it
 * (q4kx_avx512.c has the Zen 4 measurement behind it; on Arm it is unmeasured):
 * the 64 steps, each sub-block's 8 group dots kept in L1 (1 KiB), then d, dmin and
 * the scales that weigh them. Per step: 4 loads, 4 AND, 4 USHR, 8 SDOT (this file's
 * i8mm build, q4kx_i8mm.c: 4 loads, 4 AND, 4 SDOT and 4 USDOT on the whole bytes for
 * Q4_K, tile32_neon.h). Every sub-block's dots start from a loaded zero
 * (pw__arm_chain_zeros): the MOVI they started from took a vector slot each. The llvm-mca
 * estimate below is of the sub-block loop only: the scale work once a record after it
 * is at most 308 more instructions (the rest of q4kxn_run) against 8 x 180 in the loop,
 * so up to 21% more cycles a record than the figure.
 *
 * GEMM (q4kxn_panel, tile32_kgemm.h): the record's scales decoded once for every
 * panel; per quarter j of the record (register j of each step: 8 rows) and
 * sub-block, its bytes unpacked once for the panel's mr rows of X: per step 1
 * load, 2 unpacking ops and 2 x mr SDOT; the 2 x mr sub-block chains, 2 x mr
 * scaled sums and 2 x mr activation vectors stay in registers (mr = 4: 24 of 32).
 *
 * Q5_K (the q5kx32k4 family, kernel/q5kx.h: a q4kx32k4 record of the low 4 bits, then
 * bit 4 in two 64-byte planes per sub-block, L_t and H_t, bit u of plane byte i being
 * bit 4 of byte i of step 8t + u) runs the same functions (q5kxn_block, q5kxn_panel):
 * per 16 bytes of a step, bit u of the planes' 16 bytes at the same offset is put at
 * bit 4 with bits 5-7 clear (SHL by 7 - u, USHR by 3), then a BSL under 0x0F keeps the
 * low nibble below it and an SRI by 4 puts the high nibble below the other: 4 SDOT-side
 * values from 2 more loads and 6 more operations. Values 0..31: |dot_tq| <= 32 * 31 *
 * 128, |S| <= 8 * 63 * 126976 < 2^26.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4kxn_run, neoverse-v2: 35.28 cycles/iter, 0.061 cycles/weight byte,
 *     16.3 B/cycle: 163% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4kxn_run, apple-m1: 44.36 cycles/iter, 0.077 cycles/weight byte,
 *     13.0 B/cycle: 72% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q5kxn_run, neoverse-v2: 78.69 cycles/iter, 0.112 cycles/weight byte,
 *     8.9 B/cycle: 89% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q5kxn_run, apple-m1: 84.70 cycles/iter, 0.120 cycles/weight byte,
 *     8.3 B/cycle: 46% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q4kxn_panel_any, neoverse-v2: 22.04 cycles/iter, 0.153 cycles/weight byte,
 *     46.5 int8 MAC/cycle: 73% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q4kxn_panel_any, apple-m1: 29.37 cycles/iter, 0.204 cycles/weight byte,
 *     34.9 int8 MAC/cycle: 54% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q5kxn_panel_any, neoverse-v2: 35.04 cycles/iter, 0.199 cycles/weight byte,
 *     29.2 int8 MAC/cycle: 46% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q5kxn_panel_any, apple-m1: 40.03 cycles/iter, 0.227 cycles/weight byte,
 *     25.6 int8 MAC/cycle: 40% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
/* As in q4x_dotprod.c: GCC 12's pre-allocation scheduler hoists loads ahead of the
 * SDOT chains and spills. Set before the includes so that every inlined helper shares
 * the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "format/blocks.h"
#include "kernel/arm/dotprod_util.h"
#include "kernel/arm/tile32_neon.h"
#include "kernel/q4kx.h"
#include "kernel/q5kx.h"

#include <stddef.h>

#define Q4KXN_INLINE static inline __attribute__((always_inline))

#define Q4KXN_MR 4 /* most rows of X per GEMM panel */

/* One record's scales in the form the dots use, row r of the tile at index r. */
typedef struct q4kxn_rec {
    int32_t sc[8][32]; /* sub-block t's 6-bit scale */
    int16_t mn[8][32]; /* sub-block t's 6-bit min */
    float d[32], dmin[32];
} q4kxn_rec;
_Static_assert(sizeof(q4kxn_rec) <= PW__T32K_SCRATCH, "q4kxn_rec fits the loop's scratch");

/* The 6-bit scales (*sc) and mins (*mn) of sub-block t of 16 rows, one byte a row, from
 * b[i] = packed byte i of the 16 rows (pw__k4_scale_min, 16 rows at a time: sub-blocks
 * 0..3 are the low 6 bits of bytes t and t + 4; 4..7 a nibble of byte t + 8 with, as
 * bits 4-5, the top two bits of byte t - 4 or t). */
Q4KXN_INLINE void q4kxn_sc_mn(const uint8x16_t b[12], int t, uint8x16_t *sc, uint8x16_t *mn) {
    const uint8x16_t m63 = vdupq_n_u8(63), m0f = vdupq_n_u8(0x0F);
    if (t < 4) {
        *sc = vandq_u8(b[t], m63);
        *mn = vandq_u8(b[t + 4], m63);
    } else {
        *sc = vsliq_n_u8(vandq_u8(b[t + 4], m0f), vshrq_n_u8(b[t - 4], 6), 4);
        *mn = vsliq_n_u8(vshrq_n_u8(b[t + 4], 4), vshrq_n_u8(b[t], 6), 4);
    }
}

/* The packed scale bytes of rows 16h .. 16h + 15: byte i in b[i]. */
Q4KXN_INLINE void q4kxn_scale_bytes(const uint8_t *rec, int h, uint8x16_t b[12]) {
    const uint8_t *p = rec + PW__Q4KX_SCALES + 192 * h;
    for (int i = 0; i < 12; ++i) b[i] = vld1q_u8(p + 16 * i);
}

/* Decode record rec's scales, mins, d and dmin into rs (the GEMM panels' form). */
Q4KXN_INLINE void q4kxn_decode(const uint8_t *rec, q4kxn_rec *rs) {
    for (int h = 0; h < 2; ++h) {
        uint8x16_t b[12];
        q4kxn_scale_bytes(rec, h, b);
        for (int t = 0; t < 8; ++t) {
            uint8x16_t sc, mn;
            q4kxn_sc_mn(b, t, &sc, &mn);
            int32x4_t w[4];
            pw__arm_widen_u8(sc, w); /* rows 4k .. 4k+3 of the 16 in w[k] */
            for (int k = 0; k < 4; ++k) vst1q_s32(rs->sc[t] + 16 * h + 4 * k, w[k]);
            vst1q_s16(rs->mn[t] + 16 * h, vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn))));
            vst1q_s16(rs->mn[t] + 16 * h + 8, vreinterpretq_s16_u16(vmovl_high_u8(mn)));
        }
    }
    for (int q = 0; q < 8; ++q) {
        vst1q_f32(rs->d + 4 * q, pw__t32n_f16x4(rec + PW__Q4KX_D + 8 * q));
        vst1q_f32(rs->dmin + 4 * q, pw__t32n_f16x4(rec + PW__Q4KX_DMIN + 8 * q));
    }
}

/* b[t] = the sum of sub-block t's 32 activations (two bsums; |.| <= 32 * 128). */
Q4KXN_INLINE void q4kxn_sums(const pw__q8_256 *xb, int16_t b[8]) {
    vst1q_s16(b, vpaddq_s16(vld1q_s16(xb->bsums), vld1q_s16(xb->bsums + 8)));
}

/* acc + (f32(s) * d - f32(m) * dmin) * xd: the float step of four rows. */
Q4KXN_INLINE float32x4_t q4kxn_float(float32x4_t acc, int32x4_t s, int32x4_t m, float32x4_t d,
                                     float32x4_t dmin, float xd) {
    const float32x4_t f = vfmsq_f32(vmulq_f32(vcvtq_f32_s32(s), d), vcvtq_f32_s32(m), dmin);
    return vfmaq_n_f32(acc, f, xd);
}

/* The same for group q (rows 4q .. 4q+3) from rs, M = sum_t m_t b_t of its rows. */
Q4KXN_INLINE float32x4_t q4kxn_finish(float32x4_t acc, int32x4_t s, const q4kxn_rec *rs, int q,
                                      const int16_t b[8], float xd) {
    int32x4_t m = vdupq_n_s32(0);
    for (int t = 0; t < 8; ++t) m = vmlal_n_s16(m, vld1_s16(rs->mn[t] + 4 * q), b[t]);
    return q4kxn_float(acc, s, m, vld1q_f32(rs->d + 4 * q), vld1q_f32(rs->dmin + 4 * q), xd);
}

/* ---- GEMV ---- */

/* GEMV record function (tile32_neon.h): acc[q] += group q's dots with block xbp (q5:
 * a Q5_K record). */
Q4KXN_INLINE void k4xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8],
                             const int q5) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    int32_t dots[8][8][4] __attribute__((aligned(16))); /* [t][q]: 1 KiB, L1 */
    for (int t = 0; t < 8; ++t) {
        const uint8_t *sb = rec + 512 * t, *pl = rec + PW__Q5KX_BITS + 128 * t;
        const int8x16_t a0 = vld1q_s8(xb->qs + 32 * t), a1 = vld1q_s8(xb->qs + 32 * t + 16);
        int32x4_t dot[8];
        pw__arm_chain_zeros(dot, 8);
#if PW__T32N_I8MM
        /* Q4_K (tile32_neon.h): dot[4 + j] over the whole bytes is dot[j] + 16 x the high
         * nibbles' dot */
        if (!q5) {
            pw__t32n_usdot_steps(sb, a0, a1, dot, dot + 4);
            for (int j = 0; j < 4; ++j) dot[4 + j] = vshrq_n_s32(vsubq_s32(dot[4 + j], dot[j]), 4);
        } else
#endif
        {
#define Q4KXN_STEP(s)                                                                          \
    for (int j = 0; j < 4; ++j) {                                                              \
        const uint8x16_t v = vld1q_u8(sb + 64 * (s) + 16 * j);                                 \
        uint8x16_t lo, hi;                                                                     \
        PW__T32N_VALUES(v, s, q5, pl + 16 * j, pl + 64 + 16 * j, lo, hi);                      \
        dot[j] = PW__T32N_SDOT(dot[j], vreinterpretq_s8_u8(lo), a0, a1, s);                    \
        dot[4 + j] = PW__T32N_SDOT(dot[4 + j], vreinterpretq_s8_u8(hi), a0, a1, s);            \
    }
            PW__T32N_STEPS(Q4KXN_STEP)
#undef Q4KXN_STEP
        }
        for (int q = 0; q < 8; ++q) vst1q_s32(dots[t][q], dot[q]);
    }
    /* the scales and mins decoded where they are used, 16 rows at a time (the GEMM's
     * scratch would cost a store and a load of each) */
    int16_t b[8];
    q4kxn_sums(xb, b);
    for (int h = 0; h < 2; ++h) { /* groups 4h .. 4h+3: rows 16h .. 16h+15 */
        uint8x16_t bytes[12];
        q4kxn_scale_bytes(rec, h, bytes);
        int32x4_t s[4], mm[4];
        for (int k = 0; k < 4; ++k) s[k] = mm[k] = vdupq_n_s32(0);
        for (int t = 0; t < 8; ++t) {
            uint8x16_t sc, mn;
            q4kxn_sc_mn(bytes, t, &sc, &mn);
            int32x4_t w[4];
            pw__arm_widen_u8(sc, w);
            for (int k = 0; k < 4; ++k) s[k] = vmlaq_s32(s[k], vld1q_s32(dots[t][4 * h + k]), w[k]);
            const int16x8_t m0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn)));
            const int16x8_t m1 = vreinterpretq_s16_u16(vmovl_high_u8(mn));
            mm[0] = vmlal_n_s16(mm[0], vget_low_s16(m0), b[t]);
            mm[1] = vmlal_high_n_s16(mm[1], m0, b[t]);
            mm[2] = vmlal_n_s16(mm[2], vget_low_s16(m1), b[t]);
            mm[3] = vmlal_high_n_s16(mm[3], m1, b[t]);
        }
        for (int k = 0; k < 4; ++k) {
            const int q = 4 * h + k;
            acc[q] = q4kxn_float(acc[q], s[k], mm[k], pw__t32n_f16x4(rec + PW__Q4KX_D + 8 * q),
                                 pw__t32n_f16x4(rec + PW__Q4KX_DMIN + 8 * q), xb->d);
        }
    }
}

Q4KXN_INLINE void q4kxn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    k4xn_block(rec, xbp, acc, 0);
}
Q4KXN_INLINE void q5kxn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    k4xn_block(rec, xbp, acc, 1);
}

/* ---- GEMM ---- */

/* The GEMM loop's decode (tile32_kgemm.h). */
static void q4kxn_gemm_decode(const uint8_t *rec, void *out) { q4kxn_decode(rec, out); }

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. Quarter j of
 * every step (groups j and 4 + j) at a time, so that the 2 x mr chains of one
 * sub-block and the 2 x mr scaled sums stay in registers. */
Q4KXN_INLINE void k4xn_panel(const uint8_t *rec, const q4kxn_rec *rs, const uint8_t *const *x,
                             float *yb, const int mr, const int q5) {
    int16_t b[Q4KXN_MR][8];
    const int8_t *qs[Q4KXN_MR];
    for (int i = 0; i < mr; ++i) {
        q4kxn_sums((const pw__q8_256 *)x[i], b[i]);
        qs[i] = (const int8_t *)(x[i] + offsetof(pw__q8_256, qs));
    }
    for (int j = 0; j < 4; ++j) {
        int32x4_t sl[Q4KXN_MR], sh[Q4KXN_MR];
        for (int i = 0; i < mr; ++i) sl[i] = sh[i] = vdupq_n_s32(0);
        for (int t = 0; t < 8; ++t) {
            const uint8_t *sb = rec + 512 * t + 16 * j;
            const uint8_t *pl = rec + PW__Q5KX_BITS + 128 * t + 16 * j;
            int8x16_t a0[Q4KXN_MR], a1[Q4KXN_MR];
            int32x4_t lo[Q4KXN_MR], hi[Q4KXN_MR];
            for (int i = 0; i < mr; ++i) {
                a0[i] = vld1q_s8(qs[i] + 32 * t);
                a1[i] = vld1q_s8(qs[i] + 32 * t + 16);
            }
            pw__arm_chain_zeros(lo, mr);
            pw__arm_chain_zeros(hi, mr);
#define Q4KXN_GSTEP(s)                                                                         \
    {                                                                                          \
        const uint8x16_t v = vld1q_u8(sb + 64 * (s));                                          \
        uint8x16_t ul, uh;                                                                     \
        PW__T32N_VALUES(v, s, q5, pl, pl + 64, ul, uh);                                        \
        const int8x16_t vl = vreinterpretq_s8_u8(ul), vh = vreinterpretq_s8_u8(uh);            \
        for (int i = 0; i < mr; ++i) {                                                         \
            lo[i] = PW__T32N_SDOT(lo[i], vl, a0[i], a1[i], s);                                 \
            hi[i] = PW__T32N_SDOT(hi[i], vh, a0[i], a1[i], s);                                 \
        }                                                                                      \
    }
            PW__T32N_STEPS(Q4KXN_GSTEP)
#undef Q4KXN_GSTEP
            const int32x4_t scl = vld1q_s32(rs->sc[t] + 4 * j);
            const int32x4_t sch = vld1q_s32(rs->sc[t] + 16 + 4 * j);
            for (int i = 0; i < mr; ++i) {
                sl[i] = vmlaq_s32(sl[i], lo[i], scl);
                sh[i] = vmlaq_s32(sh[i], hi[i], sch);
            }
        }
        for (int i = 0; i < mr; ++i) {
            const float xd = ((const pw__q8_256 *)x[i])->d;
            float *yl = yb + 32 * i + 4 * j, *yh = yb + 32 * i + 16 + 4 * j;
            vst1q_f32(yl, q4kxn_finish(vld1q_f32(yl), sl[i], rs, j, b[i], xd));
            vst1q_f32(yh, q4kxn_finish(vld1q_f32(yh), sh[i], rs, 4 + j, b[i], xd));
        }
    }
}

Q4KXN_INLINE void q4kxn_panel(const uint8_t *rec, const q4kxn_rec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    k4xn_panel(rec, rs, x, yb, mr, 0);
}
Q4KXN_INLINE void q5kxn_panel(const uint8_t *rec, const q4kxn_rec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    k4xn_panel(rec, rs, x, yb, mr, 1);
}

/* The GEMVs over q4kxn_block and q5kxn_block, the GEMMs over their panels (of any
 * height 1..Q4KXN_MR, out of line; scripts/arm_mca.py finds them), one of them over
 * input-block-major Q4_K or Q5_K bytes as they are (records made one at a time from a
 * column's blocks, pw__q4kx_record_from_blocks, pw__q5kx_record_from_blocks), and the
 * three kernels of each (ranked in tile32_neon.h). */
#if PW__T32N_I8MM
/* The i8mm build (q4kx_i8mm.c): the Q4_K GEMV, USDOT on the whole bytes. */
static void q4kxn_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32n_run(c, o0, o1, i0, i1, PW__QK_K, PW__Q4KX_RECORD, sizeof(pw__q8_256), q4kxn_block);
}
const pw__kernel pw__k_q4_k_q4kx32k4_i8mm =
    PW__Q4KX_KERNEL("i8mm", PW__T32N_I8MM_FEATURES, q4kxn_run, PW__PRIO_T32N_I8MM_GEMV);
#else
PW__T32N_KFAMILY(q4kxn, q4_k_q4kx32k4, q4_k, PW_FORMAT_Q4_K, PW__Q4KX_RECORD, pw__block_q4_K,
                 pw__q4kx_record_from_blocks, q4kxn_rec, q4kxn_gemm_decode, Q4KXN_MR,
                 PW__Q4KX_KERNEL, PW__Q4KX_GEMM_KERNEL)
/* Q5_K's records (kernel/q5kx.h), their scales decoded as Q4_K's. */
PW__T32N_KFAMILY(q5kxn, q5_k_q5kx32k4, q5_k, PW_FORMAT_Q5_K, PW__Q5KX_RECORD, pw__block_q5_K,
                 pw__q5kx_record_from_blocks, q4kxn_rec, q4kxn_gemm_decode, Q4KXN_MR,
                 PW__Q5KX_KERNEL, PW__Q5KX_GEMM_KERNEL)
#endif
