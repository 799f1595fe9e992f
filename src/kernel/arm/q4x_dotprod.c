#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "q4x_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the q4x32k4 family (layout in kernel/q4x.h):
 * the bytes the x86 kernels read, so one packed weight (or cache file) serves
 * both. The loops are tile32_neon.h's; this file is the record functions.
 *
 * A 64-byte step s of a record is four q registers: bytes [64s + 16j, +16)
 * (j = 0..3) hold, per 4-byte lane l, k = 4s .. 4s+3 of row 4j + l in the low
 * nibbles and of row 16 + 4j + l in the high nibbles. With a0, a1 the 32 bytes of
 * x.qs and c = -8 * x.sum per block and row of X:
 *
 *   lo_j = c + sum_s sdot(v_sj & 0x0F, a[s], lane s)   rows 4j .. 4j+3
 *   hi_j = c + sum_s sdot(v_sj >> 4,   a[s], lane s)   rows 16+4j .. 16+4j+3
 *   acc  += f32(dot) * (f32(d) * x.d)                  d: the rows' fp16 scales
 *
 * The nibbles (0..15) are valid signed bytes, so SDOT is exact and the -8 offset
 * is c alone: sum (q - 8) a = sum q a - 8 sum a. Both nibbles are unpacked
 * (AND, USHR): the AVX-512 kernel's "whole byte minus low nibble" trick needs the
 * byte (0..255) as an unsigned factor against signed activations, which is USDOT
 * (FEAT_I8MM), not this level; a signed view of the byte is not linear in the
 * high nibble. This file's i8mm build (q4x_i8mm.c, tile32_neon.h) does it for the
 * Q4_0 and Q4_1 GEMVs. Per step: 4 loads, 4 AND, 4 USHR, 8 SDOT (GEMV); the activation
 * side is the indexed SDOT's lane (tile32_neon.h), nothing per step. Integer
 * range: |dot| <= 32 * 15 * 128 + 8 * 32 * 128, exact in int32 and f32.
 *
 * GEMM: each quarter j of a record (one q register a step: 8 rows) is unpacked once
 * per panel of up to 6 rows of X (PW__T32NG_MR): per step 1 load, 2 unpacking ops and
 * 2 x mr SDOT; the 2 x mr int32 dots, 2 x mr activation vectors and the step stay in
 * registers (GCC spills a few activation vectors at 6 rows: loads, which the loop has
 * to spare), the f32 sums in L1 (tile32_neon.h). Each quarter's chains start from c by
 * a load (pw__arm_chain_load). By llvm-mca's Neoverse V2 model the loop is bound by
 * its four vector pipes, where SDOT, the unpacking, SCVTF (two slots), FMUL, FMLA and
 * the data of each f32 store all go: per quarter and 4 rows of X 64 SDOT in 128 slots.
 * So more rows of X per unpacked quarter, and no register copies: 4 rows with copies
 * 33.03 cycles a quarter (31.0 MAC/cycle), by loads 32.04 (32.0), 6 rows by loads 44.04
 * a quarter of 96 SDOT (34.9).
 *
 * Float steps: acc += f32(dot) * (d * x.d), FMA, as the x86 kernels (the portable
 * kernel, q4x_pack.c, rounds the product and the sum separately; the tests bound
 * both against the double oracle).
 *
 * By llvm-mca (below; a model, no Arm hardware was used) the GEMV record loop takes
 * 0.080 (Neoverse V2) and 0.098 (Apple M1) cycles per weight byte, q4_0_rm_dotprod's
 * loop 0.195 and 0.223 (docs/arm_mca.md); the GEMM loop reaches 54% (V2) and 48% (M1)
 * of the int8 peak, q4_0_i8g32_dotprod's 60% and 48%: hence the rank just below it.
 *
 * No i8mm GEMM reads this family (nor the other k4 families): SMMLA takes two rows of 8
 * consecutive k, a record register holds 4 k of each of 4 rows, so every pair of steps
 * needs a ZIP1 and a ZIP2 (.4s) after the unpacking to make its operands, and the X
 * side a zip of each pair of rows. A prototype of the Q4_0 GEMM quarter that way (8
 * rows by 2 pairs of X rows, 4 step pairs: 32 SMMLA, the same 1024 multiply-adds as
 * the loop here; a scratch file, not in the tree, compiled with the i8mm file flags)
 * took by llvm-mca 19 31.0 cycles a quarter on neoverse-v2 (33 int8 MAC/cycle, resource
 * bound 22.0) and 35.4 on apple-m2, against 33.03 and 38.04 for this loop: 6-7%, since
 * the unpacking, the zips and the f32 steps bound both, not the multiplies. A family
 * in 8-k groups would be another packed form (layout rule: its own key) for one ISA's
 * GEMM; not done.
 *
 * Q5_0 (the q5x32k4 family, kernel/q5x.h: a q4x32k4 record, then bit 4 in two 64-byte
 * planes, bit s of plane byte i being bit 4 of byte i of step s) runs the same
 * functions (q5xn_block, q5xn_gemm_block) with the offset -16: per 16 bytes of a step,
 * PW__T32N_VALUES (tile32_neon.h) puts the planes' bit s at bit 4 of both values (two
 * loads, four shifts, a BSL and an SRI). Values 0..31: |dot| <= 32 * 31 * 128 + 16 * 32
 * * 128, exact in int32. IQ4_NL (the iq4x32k4 family, kernel/iq4x.h: Q4_0's record,
 * each nibble a codebook index) runs them too (iq4xn_block, iq4xn_gemm_block): a TBL
 * through the signed codebook per 16 bytes and nibble, no offset. Q4_1 and Q5_1
 * (q41x32k4, q51x32k4, kernel/q41x.h) run Q4_0's and Q5_0's with no offset, then
 * acc += f32(m) * x.dsum per 4 rows (FMLA by a scalar), m the rows' fp16 minima.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4xn_run, neoverse-v2: 44.55 cycles/iter, 0.077 cycles/weight byte,
 *     12.9 B/cycle: 129% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4xn_run, apple-m1: 54.04 cycles/iter, 0.094 cycles/weight byte,
 *     10.7 B/cycle: 59% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q5xn_run, neoverse-v2: 82.04 cycles/iter, 0.117 cycles/weight byte,
 *     8.6 B/cycle: 86% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q5xn_run, apple-m1: 94.04 cycles/iter, 0.134 cycles/weight byte,
 *     7.5 B/cycle: 41% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   iq4xn_run, neoverse-v2: 61.05 cycles/iter, 0.106 cycles/weight byte,
 *     9.4 B/cycle: 94% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   iq4xn_run, apple-m1: 75.71 cycles/iter, 0.131 cycles/weight byte,
 *     7.6 B/cycle: 42% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q41xn_run, neoverse-v2: 50.81 cycles/iter, 0.079 cycles/weight byte,
 *     12.6 B/cycle: 126% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q41xn_run, apple-m1: 59.37 cycles/iter, 0.093 cycles/weight byte,
 *     10.8 B/cycle: 60% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q51xn_run, neoverse-v2: 86.04 cycles/iter, 0.112 cycles/weight byte,
 *     8.9 B/cycle: 89% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q51xn_run, apple-m1: 99.37 cycles/iter, 0.129 cycles/weight byte,
 *     7.7 B/cycle: 43% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q4xn_gemm_run, neoverse-v2: 44.03 cycles/iter, 0.306 cycles/weight byte,
 *     34.9 int8 MAC/cycle: 55% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q4xn_gemm_run, apple-m1: 50.04 cycles/iter, 0.348 cycles/weight byte,
 *     30.7 int8 MAC/cycle: 48% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q5xn_gemm_run, neoverse-v2: 52.04 cycles/iter, 0.296 cycles/weight byte,
 *     29.5 int8 MAC/cycle: 46% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q5xn_gemm_run, apple-m1: 60.04 cycles/iter, 0.341 cycles/weight byte,
 *     25.6 int8 MAC/cycle: 40% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   iq4xn_gemm_run, neoverse-v2: 48.04 cycles/iter, 0.334 cycles/weight byte,
 *     32.0 int8 MAC/cycle: 50% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   iq4xn_gemm_run, apple-m1: 55.55 cycles/iter, 0.386 cycles/weight byte,
 *     27.7 int8 MAC/cycle: 43% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q41xn_gemm_run, neoverse-v2: 48.04 cycles/iter, 0.300 cycles/weight byte,
 *     32.0 int8 MAC/cycle: 50% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q41xn_gemm_run, apple-m1: 54.72 cycles/iter, 0.342 cycles/weight byte,
 *     28.1 int8 MAC/cycle: 44% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q51xn_gemm_run, neoverse-v2: 56.04 cycles/iter, 0.292 cycles/weight byte,
 *     27.4 int8 MAC/cycle: 43% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q51xn_gemm_run, apple-m1: 64.72 cycles/iter, 0.337 cycles/weight byte,
 *     23.7 int8 MAC/cycle: 37% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
/* As in i8g_dotprod.c: GCC 12's pre-allocation scheduler hoists a record's loads
 * ahead of the SDOT chains and spills (the Q4_0 GEMV's record loop: 29 stack
 * accesses a record); without it the loops keep their dots and sums in registers.
 * Set before the includes so that every inlined helper shares the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "format/blocks.h"
#include "kernel/arm/tile32_neon.h"
#include "kernel/iq4x.h"
#include "kernel/q41x.h"
#include "kernel/q4x.h"
#include "kernel/q5x.h"

#define Q4XN_INLINE static inline __attribute__((always_inline))

/* GEMV record function (tile32_neon.h): dot[q] holds rows 4q .. 4q+3. */
/* The values of 16 bytes of step s of format f (PW__Q4X_*): the nibbles (lo, hi) with
 * Q5_0's bit 4 from the planes at pl, or IQ4_NL's through the codebook (TBL; signed:
 * no offset). */
#define Q4XN_VALUES(v, s, f, pl, lo, hi)                                                       \
    do {                                                                                       \
        PW__T32N_VALUES(v, s, PW__Q4X_BIT4(f), pl, (pl) + 64, lo, hi);                     \
        if ((f) == PW__Q4X_IQ4_NL) {                                                           \
            const int8x16_t book_ = vld1q_s8(pw__iq4nl_values);                                \
            (lo) = vreinterpretq_u8_s8(vqtbl1q_s8(book_, (lo)));                               \
            (hi) = vreinterpretq_u8_s8(vqtbl1q_s8(book_, (hi)));                               \
        }                                                                                      \
    } while (0)

/* The offset a block of format f adds: -8 (Q4_0) or -16 (Q5_0) times the activations'
 * sum, or none. */
Q4XN_INLINE int32_t q4xn_offset(int f, const pw__q8_32 *xb) {
    return PW__Q4X_OFFSET(f) * xb->sum;
}

Q4XN_INLINE void q4xn_block_any(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8],
                               const int f) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    const int8x16_t a0 = vld1q_s8(xb->qs), a1 = vld1q_s8(xb->qs + 16);
    const int32x4_t c = vdupq_n_s32(q4xn_offset(f, xb));
    const uint8_t *pl = rec + PW__Q5X_BITS; /* Q5_0's planes (q5x.h) */
    int32x4_t dot[8];
#if PW__T32N_I8MM
    /* Q4_0, Q4_1 (tile32_neon.h): dot[4 + j] runs over the whole bytes from 17c, so that
     * it ends at dot[j] + 16 (c + the high nibbles' dot), and that difference is exact */
    if (f == PW__Q4X_Q4_0 || f == PW__Q4X_Q4_1) {
        pw__arm_chain_splat(c, 4, dot);
        pw__arm_chain_splat(vmulq_n_s32(c, 17), 4, dot + 4);
        pw__t32n_usdot_steps(rec, a0, a1, dot, dot + 4);
        for (int j = 0; j < 4; ++j) dot[4 + j] = vshrq_n_s32(vsubq_s32(dot[4 + j], dot[j]), 4);
    } else
#endif
    {
        pw__arm_chain_splat(c, 8, dot);
#define Q4XN_STEP(s)                                                                           \
    for (int j = 0; j < 4; ++j) {                                                              \
        const uint8x16_t v = vld1q_u8(rec + 64 * (s) + 16 * j);                                \
        uint8x16_t lo, hi;                                                                     \
        Q4XN_VALUES(v, s, f, pl + 16 * j, lo, hi);                                             \
        dot[j] = PW__T32N_SDOT(dot[j], vreinterpretq_s8_u8(lo), a0, a1, s);                    \
        dot[4 + j] = PW__T32N_SDOT(dot[4 + j], vreinterpretq_s8_u8(hi), a0, a1, s);            \
    }
        PW__T32N_STEPS(Q4XN_STEP)
#undef Q4XN_STEP
    }
    const float xd = xb->d;
    const uint8_t *mins = rec + PW__Q4X_RECORD_OF(f) - 64; /* Q4_1, Q5_1 (q41x.h) */
    for (int q = 0; q < 8; ++q) {
        acc[q] = pw__t32n_scale_add(acc[q], dot[q],
                                    pw__t32n_f16x4(rec + PW__Q4X_SCALES + 8 * q), xd);
        if (PW__Q4X_MIN(f)) acc[q] = vfmaq_n_f32(acc[q], pw__t32n_f16x4(mins + 8 * q), xb->dsum);
    }
}

Q4XN_INLINE void q4xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    q4xn_block_any(rec, xbp, acc, PW__Q4X_Q4_0);
}
Q4XN_INLINE void q5xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    q4xn_block_any(rec, xbp, acc, PW__Q4X_Q5_0);
}
Q4XN_INLINE void iq4xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    q4xn_block_any(rec, xbp, acc, PW__Q4X_IQ4_NL);
}
Q4XN_INLINE void q41xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    q4xn_block_any(rec, xbp, acc, PW__Q4X_Q4_1);
}
Q4XN_INLINE void q51xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    q4xn_block_any(rec, xbp, acc, PW__Q4X_Q5_1);
}

/* GEMM record function (tile32_neon.h): quarter j of each step (rows 4j .. 4j+3 low,
 * 16+4j .. 16+4j+3 high) unpacked once for the panel's mr rows. */
Q4XN_INLINE void q4xn_gemm_any(const uint8_t *rec, const uint8_t *const *x,
                               float acc[][PW__TILE32_NR], const int mr, const int f) {
    int8x16_t a0[PW__T32NG_MR], a1[PW__T32NG_MR];
    int32_t c[PW__T32NG_MR];
    float xd[PW__T32NG_MR], xm[PW__T32NG_MR];
    for (int r = 0; r < mr; ++r) {
        const pw__q8_32 *xb = (const pw__q8_32 *)x[r];
        a0[r] = vld1q_s8(xb->qs);
        a1[r] = vld1q_s8(xb->qs + 16);
        c[r] = q4xn_offset(f, xb);
        xd[r] = xb->d;
        xm[r] = xb->dsum;
    }
    const uint8_t *mins = rec + PW__Q4X_RECORD_OF(f) - 64; /* Q4_1, Q5_1 (q41x.h) */
    int32_t start[4 * PW__T32NG_MR] __attribute__((aligned(16))); /* c[r] in 4 lanes */
    for (int r = 0; r < mr; ++r) vst1q_s32(start + 4 * r, vdupq_n_s32(c[r]));
    for (int j = 0; j < 4; ++j) {
        int32x4_t lo[PW__T32NG_MR], hi[PW__T32NG_MR];
        pw__arm_chain_load(start, mr, lo);
        pw__arm_chain_load(start, mr, hi);
        const uint8_t *bits = rec + PW__Q5X_BITS + 16 * j; /* Q5_0's planes (q5x.h) */
#define Q4XN_GSTEP(s)                                                                          \
    {                                                                                          \
        const uint8x16_t v = vld1q_u8(rec + 64 * (s) + 16 * j);                                \
        uint8x16_t ul, uh;                                                                     \
        Q4XN_VALUES(v, s, f, bits, ul, uh);                                                    \
        const int8x16_t vl = vreinterpretq_s8_u8(ul), vh = vreinterpretq_s8_u8(uh);            \
        for (int r = 0; r < mr; ++r) {                                                         \
            lo[r] = PW__T32N_SDOT(lo[r], vl, a0[r], a1[r], s);                                 \
            hi[r] = PW__T32N_SDOT(hi[r], vh, a0[r], a1[r], s);                                 \
        }                                                                                      \
    }
        PW__T32N_STEPS(Q4XN_GSTEP)
#undef Q4XN_GSTEP
        const float32x4_t dl = pw__t32n_f16x4(rec + PW__Q4X_SCALES + 8 * j);
        const float32x4_t dh = pw__t32n_f16x4(rec + PW__Q4X_SCALES + 32 + 8 * j);
        const float32x4_t ml = PW__Q4X_MIN(f) ? pw__t32n_f16x4(mins + 8 * j) : dl;
        const float32x4_t mh = PW__Q4X_MIN(f) ? pw__t32n_f16x4(mins + 32 + 8 * j) : dh;
        for (int r = 0; r < mr; ++r) {
            float *pl = acc[r] + 4 * j, *ph = acc[r] + 16 + 4 * j;
            float32x4_t sl = pw__t32n_scale_add(vld1q_f32(pl), lo[r], dl, xd[r]);
            float32x4_t sh = pw__t32n_scale_add(vld1q_f32(ph), hi[r], dh, xd[r]);
            if (PW__Q4X_MIN(f)) {
                sl = vfmaq_n_f32(sl, ml, xm[r]);
                sh = vfmaq_n_f32(sh, mh, xm[r]);
            }
            vst1q_f32(pl, sl);
            vst1q_f32(ph, sh);
        }
    }
}

Q4XN_INLINE void q4xn_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    q4xn_gemm_any(rec, x, acc, mr, PW__Q4X_Q4_0);
}
Q4XN_INLINE void q5xn_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    q4xn_gemm_any(rec, x, acc, mr, PW__Q4X_Q5_0);
}
Q4XN_INLINE void iq4xn_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr) {
    q4xn_gemm_any(rec, x, acc, mr, PW__Q4X_IQ4_NL);
}
Q4XN_INLINE void q41xn_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr) {
    q4xn_gemm_any(rec, x, acc, mr, PW__Q4X_Q4_1);
}
Q4XN_INLINE void q51xn_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr) {
    q4xn_gemm_any(rec, x, acc, mr, PW__Q4X_Q5_1);
}

#define Q4XN_FEATURES (PW_CPU_NEON | PW_CPU_DOTPROD)

/* A family's runs and descriptors: the GEMV (pre_##_block over records of record_
 * bytes), the GEMM (pre_##_gemm_block) and the GEMM over input-block-major bytes as
 * they are (each tile's records of a pass made in an L1 scratch from the blocks of its
 * columns by make_, portable C, then the same panels over them: kernel/tile32_gemm.h).
 * sym_ names the family's kernels (q4_0_q4x32k4 -> q4_0_q4x32k4_dotprod,
 * q4_0_q4x32k4_gemm_dotprod), id_ the format (q4_0_ibm_gemm_dotprod). The GEMV ranks
 * above the row-major dotprod kernel (PW__PRIO_DOTPROD), as the x86 family kernels rank
 * above theirs; the GEMMs just below the format's i8g32_dotprod kernel (PW__PRIO_DOTPROD
 * + PW__PRIO_GEMM; on x86 the families' GEMMs rank above i8g: kernel.h). */
#define Q4XN_FAMILY(pre_, sym_, id_, format_, record_, block_t_, make_, KERNEL_, GEMM_KERNEL_)  \
    static void pre_##_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,          \
                           int64_t i1) {                                                      \
        pw__t32n_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_block);        \
    }                                                                                         \
    static void pre_##_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,     \
                                int64_t i1) {                                                 \
        pw__t32ng_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_gemm_block);  \
    }                                                                                         \
    const pw__kernel pw__k_##sym_##_dotprod =                                                 \
        KERNEL_("dotprod", Q4XN_FEATURES, pre_##_run, PW__PRIO_DOTPROD + 2);                   \
    const pw__kernel pw__k_##sym_##_gemm_dotprod = GEMM_KERNEL_(                              \
        "dotprod", Q4XN_FEATURES, pre_##_gemm_run, PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1,       \
        PW__T32NG_MR);                                                                        \
    PW__TILE32_IBM_FILL(pre_##_fill_ibm, block_t_, record_, make_)                            \
    static void pre_##_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, \
                                    int64_t i1) {                                             \
        pw__t32ng_run_fill(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32),                 \
                           pre_##_gemm_block, pre_##_fill_ibm);                               \
    }                                                                                         \
    const pw__kernel pw__k_##id_##_ibm_gemm_dotprod = PW__TILE32_IBM_GEMM_KERNEL(             \
        #id_, format_, Q8_32, "dotprod", Q4XN_FEATURES, pre_##_ibm_gemm_run,                   \
        PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1, PW__T32NG_MR);

#if PW__T32N_I8MM
/* The i8mm build (q4x_i8mm.c): the Q4_0 and Q4_1 GEMVs, USDOT on the whole bytes. */
#define Q4XN_I8MM_GEMV(pre_, sym_, record_, KERNEL_)                                           \
    static void pre_##_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,          \
                           int64_t i1) {                                                      \
        pw__t32n_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_block);        \
    }                                                                                         \
    const pw__kernel pw__k_##sym_##_i8mm =                                                    \
        KERNEL_("i8mm", PW__T32N_I8MM_FEATURES, pre_##_run, PW__PRIO_T32N_I8MM_GEMV);
Q4XN_I8MM_GEMV(q4xn, q4_0_q4x32k4, PW__Q4X_RECORD, PW__Q4X_KERNEL)
Q4XN_I8MM_GEMV(q41xn, q4_1_q41x32k4, PW__Q41X_RECORD, PW__Q41X_KERNEL)
#else
Q4XN_FAMILY(q4xn, q4_0_q4x32k4, q4_0, PW_FORMAT_Q4_0, PW__Q4X_RECORD, pw__block_q4_0,
            pw__q4x_record_from_blocks, PW__Q4X_KERNEL, PW__Q4X_GEMM_KERNEL)
/* Q5_0's records (q5x.h) and IQ4_NL's (iq4x.h; its blocks are laid out as Q4_0's: the
 * same record maker), read as Q4_0's are. */
Q4XN_FAMILY(q5xn, q5_0_q5x32k4, q5_0, PW_FORMAT_Q5_0, PW__Q5X_RECORD, pw__block_q5_0,
            pw__q5x_record_from_blocks, PW__Q5X_KERNEL, PW__Q5X_GEMM_KERNEL)
Q4XN_FAMILY(iq4xn, iq4_nl_iq4x32k4, iq4_nl, PW_FORMAT_IQ4_NL, PW__Q4X_RECORD, pw__block_iq4_nl,
            pw__q4x_record_from_blocks, PW__IQ4X_KERNEL, PW__IQ4X_GEMM_KERNEL)
/* Q4_1's and Q5_1's (q41x.h): Q4_0's and Q5_0's with no offset, then the rows' m. */
Q4XN_FAMILY(q41xn, q4_1_q41x32k4, q4_1, PW_FORMAT_Q4_1, PW__Q41X_RECORD, pw__block_q4_1,
            pw__q41x_record_from_blocks, PW__Q41X_KERNEL, PW__Q41X_GEMM_KERNEL)
Q4XN_FAMILY(q51xn, q5_1_q51x32k4, q5_1, PW_FORMAT_Q5_1, PW__Q51X_RECORD, pw__block_q5_1,
            pw__q51x_record_from_blocks, PW__Q51X_KERNEL, PW__Q51X_GEMM_KERNEL)
#endif
