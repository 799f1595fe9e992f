#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "q8x_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the q8x32k4 family (layout in kernel/q8x.h):
 * the bytes the x86 kernels read, so one packed weight (or cache file) serves
 * both. The loops are tile32_neon.h's; this file is the record functions.
 *
 * A 128-byte step s of a record is eight q registers: bytes [128s + 16j, +16)
 * (j = 0..7) hold, per 4-byte lane l, u = q + 128 of k = 4s .. 4s+3 of row
 * 4j + l (j < 4: rows 0..15 in the step's first 64 bytes; j >= 4: rows 16..31 in
 * its second). With a0, a1 the 32 bytes of x.qs per block and row of X:
 *
 *   dot_j = sum_s sdot(u_sj ^ 0x80, a[s], lane s)     rows 4j .. 4j+3, = sum q a
 *   acc  += f32(dot) * (f32(d) * x.d)                 d: the rows' fp16 scales
 *
 * The stored u is the x86 form (VNNI multiplies unsigned weights by signed
 * activations). Without FEAT_I8MM there is no unsigned-by-signed dot product, and
 * UDOT with the unsigned activations (x.qu) would need the weights' block sums
 * (sum u qu = sum q qs + 128 (sum q + sum qs) + 32 * 128^2), which the record does
 * not hold: so one EOR a register flips u back to q, and SDOT needs no correction.
 * Per step: 8 loads, 8 EOR, 8 SDOT (GEMV). Integer range: |dot| <= 32 * 128 * 128,
 * exact in int32 and f32; the same integer as the x86 kernels' c + sum u a.
 *
 * GEMM: each register j of a step (4 rows) is flipped once per panel of up to 6
 * rows of X (PW__T32NG_MR), two registers (j and j + 4: rows 4j .. 4j+3 and 16+4j ..
 * 16+4j+3) at a time: per step 2 loads, 2 EOR and 2 x mr SDOT; the 2 x mr int32 dots
 * and 2 x mr activation vectors stay in registers, the f32 sums in L1 (tile32_neon.h);
 * each quarter's chains start from zero by a load (pw__arm_chain_zeros; q4x_dotprod.c
 * says why: 4 rows with MOVI 33.03 cycles a quarter, 6 rows by loads 44.54 for 1.5x
 * the SDOT).
 *
 * Float steps: acc += f32(dot) * (d * x.d), FMA, as the x86 kernels (the portable
 * kernel, q8x_pack.c, rounds the product and the sum separately; the tests bound
 * both against the double oracle).
 *
 * By llvm-mca (below; a model, no Arm hardware was used) the GEMV record loop takes
 * 0.043 (Neoverse V2) and 0.052 (Apple M1) cycles per weight byte, q8_0_rm_dotprod's
 * loop 0.074 and 0.096 (docs/arm_mca.md); the GEMM loop reaches 54% (V2) and 48% (M1)
 * of the int8 peak, q8_0_i8g32_dotprod's 60% and 48%: hence the rank just below it.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q8xn_run, neoverse-v2: 46.29 cycles/iter, 0.043 cycles/weight byte,
 *     23.5 B/cycle: 235% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q8xn_run, apple-m1: 56.36 cycles/iter, 0.052 cycles/weight byte,
 *     19.3 B/cycle: 107% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q8xn_gemm_run, neoverse-v2: 44.53 cycles/iter, 0.164 cycles/weight byte,
 *     34.5 int8 MAC/cycle: 54% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q8xn_gemm_run, apple-m1: 50.37 cycles/iter, 0.185 cycles/weight byte,
 *     30.5 int8 MAC/cycle: 48% of the core's int8 peak (SDOT: 64 MAC/cycle)
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
#include "kernel/q8x.h"

#define Q8XN_INLINE static inline __attribute__((always_inline))

/* Register j of step s: rows 4j .. 4j+3 (tile32_neon.h's acc[j]), q = u ^ 0x80. */
Q8XN_INLINE int8x16_t q8xn_load(const uint8_t *rec, int s, int j, uint8x16_t flip) {
    return vreinterpretq_s8_u8(veorq_u8(vld1q_u8(rec + PW__Q8X_STEP * s + 16 * j), flip));
}

/* GEMV record function (tile32_neon.h): dot[q] holds rows 4q .. 4q+3. */
Q8XN_INLINE void q8xn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    const uint8x16_t flip = vdupq_n_u8(0x80);
    const int8x16_t a0 = vld1q_s8(xb->qs), a1 = vld1q_s8(xb->qs + 16);
    int32x4_t dot[8];
    for (int q = 0; q < 8; ++q) dot[q] = vdupq_n_s32(0);
#define Q8XN_STEP(s)                                                                           \
    for (int j = 0; j < 8; ++j)                                                                \
        dot[j] = PW__T32N_SDOT(dot[j], q8xn_load(rec, s, j, flip), a0, a1, s);
    PW__T32N_STEPS(Q8XN_STEP)
#undef Q8XN_STEP
    const float xd = xb->d;
    for (int q = 0; q < 8; ++q)
        acc[q] = pw__t32n_scale_add(acc[q], dot[q],
                                    pw__t32n_f16x4(rec + PW__Q8X_SCALES + 8 * q), xd);
}

/* GEMM record function (tile32_neon.h): registers j and j + 4 of each step (rows
 * 4j .. 4j+3 and 16+4j .. 16+4j+3) flipped once for the panel's mr rows. */
Q8XN_INLINE void q8xn_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    const uint8x16_t flip = vdupq_n_u8(0x80);
    int8x16_t a0[PW__T32NG_MR], a1[PW__T32NG_MR];
    float xd[PW__T32NG_MR];
    for (int r = 0; r < mr; ++r) {
        const pw__q8_32 *xb = (const pw__q8_32 *)x[r];
        a0[r] = vld1q_s8(xb->qs);
        a1[r] = vld1q_s8(xb->qs + 16);
        xd[r] = xb->d;
    }
    for (int j = 0; j < 4; ++j) {
        int32x4_t lo[PW__T32NG_MR], hi[PW__T32NG_MR];
        pw__arm_chain_zeros(lo, mr);
        pw__arm_chain_zeros(hi, mr);
#define Q8XN_GSTEP(s)                                                                          \
    {                                                                                          \
        const int8x16_t vl = q8xn_load(rec, s, j, flip);                                       \
        const int8x16_t vh = q8xn_load(rec, s, j + 4, flip);                                   \
        for (int r = 0; r < mr; ++r) {                                                         \
            lo[r] = PW__T32N_SDOT(lo[r], vl, a0[r], a1[r], s);                                 \
            hi[r] = PW__T32N_SDOT(hi[r], vh, a0[r], a1[r], s);                                 \
        }                                                                                      \
    }
        PW__T32N_STEPS(Q8XN_GSTEP)
#undef Q8XN_GSTEP
        const float32x4_t dl = pw__t32n_f16x4(rec + PW__Q8X_SCALES + 8 * j);
        const float32x4_t dh = pw__t32n_f16x4(rec + PW__Q8X_SCALES + 32 + 8 * j);
        for (int r = 0; r < mr; ++r) {
            float *pl = acc[r] + 4 * j, *ph = acc[r] + 16 + 4 * j;
            vst1q_f32(pl, pw__t32n_scale_add(vld1q_f32(pl), lo[r], dl, xd[r]));
            vst1q_f32(ph, pw__t32n_scale_add(vld1q_f32(ph), hi[r], dh, xd[r]));
        }
    }
}

static void q8xn_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32n_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8xn_block);
}

static void q8xn_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32ng_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8xn_gemm_block);
}

/* Above the row-major dotprod kernel (PW__PRIO_DOTPROD) for GEMV, as the x86 family
 * kernels rank above theirs; the GEMM kernel just below q8_0_i8g32_dotprod
 * (PW__PRIO_DOTPROD + PW__PRIO_GEMM; on x86 the family GEMMs rank above i8g: kernel.h). */
const pw__kernel pw__k_q8_0_q8x32k4_dotprod =
    PW__Q8X_KERNEL("dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, q8xn_run, PW__PRIO_DOTPROD + 2);

const pw__kernel pw__k_q8_0_q8x32k4_gemm_dotprod =
    PW__Q8X_GEMM_KERNEL("dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, q8xn_gemm_run,
                        PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1, PW__T32NG_MR);

/* GEMM over input-block-major Q8_0 bytes as they are: each tile's records of a pass
 * made in an L1 scratch from the blocks of its columns (pw__q8x_record_from_blocks,
 * portable C), then the panels above over them (kernel/tile32_gemm.h). */
PW__TILE32_IBM_FILL(q8xn_fill_ibm, pw__block_q8_0, PW__Q8X_RECORD, pw__q8x_record_from_blocks)

static void q8xn_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32ng_run_fill(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8xn_gemm_block,
                       q8xn_fill_ibm);
}

const pw__kernel pw__k_q8_0_ibm_gemm_dotprod = PW__TILE32_IBM_GEMM_KERNEL(
    "q8_0", PW_FORMAT_Q8_0, Q8_32, "dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, q8xn_ibm_gemm_run,
    PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1, PW__T32NG_MR);
