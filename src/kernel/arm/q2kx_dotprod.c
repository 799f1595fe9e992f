#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "q2kx_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the q2kx32k4 family (layout in kernel/q2kx.h):
 * Q2_K in the bytes the x86 kernels read, so one packed weight (or cache file)
 * serves both. The GEMV loop is tile32_neon.h's, the GEMM loop tile32_kgemm.h's;
 * this file is the record functions. Activations are pw__q8_256 rows
 * (|qs| <= 127).
 *
 * Every 64-byte load P_k of a sub-block is four q registers; register j of each
 * (bytes [16j, +16)) holds, per 4-byte lane l, rows 4j + l (bits 0-3: group j)
 * and 16 + 4j + l (bits 4-7: group 4 + j): group q is rows 4q .. 4q+3. Sub-block
 * s's 16 activation bytes are one q register a, whose lane u step u of the
 * sub-block takes (indexed SDOT). Per sub-block and register j, with P = P_0, P' =
 * P_1 (q2kx.h's bits), the quants (0..3) of the four steps (pw__q2kxn_quants,
 * arm/q2kx_neon.h, which TQ2_0's kernels share):
 *
 *   group j:      step 0  P & 3,        step 1  P' & 3,
 *                 step 2  (P >> 2) & 3, step 3  (P' >> 2) & 3
 *   group 4 + j:  step 0  (P >> 4) & 3, step 1  (P' >> 4) & 3,
 *                 step 2  P >> 6,       step 3  P' >> 6
 *
 * twelve operations for eight quant vectors, then one SDOT each:
 *
 *   D_sq = sum_u sdot(quants, a, lane u)        |.| <= 16 * 3 * 127 = 6096
 *   S_q += D_sq * sc_s,  M_q += m_s * bsums[s]  (MLA; the scale and min nibbles of
 *                        the rows' scale bytes widened to int32; |S| < 2^21, |M| < 2^19)
 *   end of record:  acc_q += (f32(S_q) * d - f32(M_q) * dmin) * x.d
 *
 * GEMV (q2kxn_block): the record in address order, as the x86 kernels read it: the
 * 16 sub-blocks, each one's 8 group dots kept in L1 (2 KiB), then the scales, d and
 * dmin. Per sub-block: 8 loads, 32 unpacking ops, 32 SDOT into four chains per register
 * (each quant masked where it lies: pw__q2kxn_dots_masked, arm/q2kx_neon.h), 8 SSRA
 * that add them; with the quants shifted down first (pw__q2kxn_quants, as the GEMM
 * makes them) it took 48 unpacking ops and llvm-mca 22.03 / 26.70 cycles a sub-block
 * (neoverse-v2 / apple-m1).
 *
 * GEMM (q2kxn_panel, tile32_kgemm.h): the record's scales and mins widened once for
 * every panel (an L1 scratch, q2kxn_decode); per register j of the loads (8 rows) and
 * sub-block, its quants made once for the panel's mr rows of X: 2 loads, 12 unpacking
 * ops and 8 x mr SDOT; the 2 x mr chains, 2 x mr scaled sums and mr activation vectors
 * stay in registers; the mins once per record and row of X.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q2kxn_run, neoverse-v2: 20.54 cycles/iter, 0.122 cycles/weight byte,
 *     8.2 B/cycle: 82% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q2kxn_run, apple-m1: 24.70 cycles/iter, 0.147 cycles/weight byte,
 *     6.8 B/cycle: 38% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q2kxn_panel_any, neoverse-v2: 13.03 cycles/iter, 0.310 cycles/weight byte,
 *     39.3 int8 MAC/cycle: 61% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q2kxn_panel_any, apple-m1: 17.37 cycles/iter, 0.414 cycles/weight byte,
 *     29.5 int8 MAC/cycle: 46% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
/* As in q4x_dotprod.c: GCC 12's pre-allocation scheduler hoists loads ahead of the
 * SDOT chains and spills. Set before the includes so that every inlined helper shares
 * the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "format/blocks.h"
#include "kernel/arm/q2kx_neon.h"
#include "kernel/arm/tile32_neon.h"
#include "kernel/q2kx.h"

#include <stddef.h>

#define Q2KXN_INLINE static inline __attribute__((always_inline))

#define Q2KXN_MR 4 /* most rows of X per GEMM panel */

/* One record's scales and mins in the form the dots use, row r of the tile at index r. */
typedef struct q2kxn_rec {
    int32_t sc[16][32]; /* sub-block s's 4-bit scale */
    int32_t m[16][32];  /* sub-block s's 4-bit min */
    float d[32], dmin[32];
} q2kxn_rec;
_Static_assert(sizeof(q2kxn_rec) <= PW__T32K_SCRATCH, "q2kxn_rec fits the loop's scratch");

/* The scale bytes of sub-block s, rows 16h .. 16h+15, as int32: the scales in sc[k]
 * and the mins in m[k], rows 16h + 4k .. 16h + 4k + 3. */
Q2KXN_INLINE void q2kxn_scales(const uint8_t *rec, int s, int h, int32x4_t sc[4], int32x4_t m[4]) {
    const uint8x16_t v = vld1q_u8(rec + PW__Q2KX_SCALES + 32 * s + 16 * h);
    const uint16x8_t w0 = vmovl_u8(vget_low_u8(v)), w1 = vmovl_high_u8(v);
    const uint32x4_t w[4] = {vmovl_u16(vget_low_u16(w0)), vmovl_high_u16(w0),
                             vmovl_u16(vget_low_u16(w1)), vmovl_high_u16(w1)};
    const uint32x4_t m0f = vdupq_n_u32(0x0F);
    for (int k = 0; k < 4; ++k) {
        sc[k] = vreinterpretq_s32_u32(vandq_u32(w[k], m0f));
        m[k] = vreinterpretq_s32_u32(vshrq_n_u32(w[k], 4));
    }
}

/* acc + (f32(S) * d - f32(M) * dmin) * xd. */
Q2KXN_INLINE float32x4_t q2kxn_out(float32x4_t acc, int32x4_t S, int32x4_t M, float32x4_t d,
                                   float32x4_t dmin, float xd) {
    const float32x4_t t = vfmsq_f32(vmulq_f32(vcvtq_f32_s32(S), d), vcvtq_f32_s32(M), dmin);
    return vfmaq_n_f32(acc, t, xd);
}

/* ---- GEMV ---- */

/* GEMV record function (tile32_neon.h): acc[q] += group q's dots with block xbp. */
Q2KXN_INLINE void q2kxn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    int32_t dots[16][8][4] __attribute__((aligned(16))); /* [s][q]: 2 KiB, L1 */
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sb = rec + PW__Q2KX_SUB * s;
        const int8x16_t a = vld1q_s8(xb->qs + 16 * s);
        for (int j = 0; j < 4; ++j) {
            /* group j's t and 4t, group 4 + j's 16t and t, started by loads */
            int32x4_t c[4];
            pw__arm_chain_zeros(c, 4);
            pw__q2kxn_dots_masked(sb, j, a, &c[0], &c[1], &c[2], &c[3]);
            vst1q_s32(dots[s][j], vsraq_n_s32(c[0], c[1], 2));
            vst1q_s32(dots[s][4 + j], vsraq_n_s32(c[3], c[2], 4));
        }
    }
    for (int h = 0; h < 2; ++h) { /* groups 4h .. 4h+3: rows 16h .. 16h+15 */
        int32x4_t sum[4], msum[4];
        for (int g = 0; g < 4; ++g) sum[g] = msum[g] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            int32x4_t sc[4], m[4];
            q2kxn_scales(rec, s, h, sc, m);
            for (int g = 0; g < 4; ++g) {
                sum[g] = vmlaq_s32(sum[g], vld1q_s32(dots[s][4 * h + g]), sc[g]);
                msum[g] = vmlaq_n_s32(msum[g], m[g], xb->bsums[s]);
            }
        }
        for (int g = 0; g < 4; ++g) {
            const int q = 4 * h + g;
            acc[q] = q2kxn_out(acc[q], sum[g], msum[g], pw__t32n_f16x4(rec + PW__Q2KX_D + 8 * q),
                               pw__t32n_f16x4(rec + PW__Q2KX_DMIN + 8 * q), xb->d);
        }
    }
}

/* ---- GEMM ---- */

/* Widen record rec's scales and mins to int32 and its fp16 d and dmin to f32 (the GEMM
 * loop's decode, tile32_kgemm.h). */
static void q2kxn_decode(const uint8_t *rec, void *out) {
    q2kxn_rec *rs = out;
    for (int s = 0; s < 16; ++s)
        for (int h = 0; h < 2; ++h) {
            int32x4_t sc[4], m[4];
            q2kxn_scales(rec, s, h, sc, m);
            for (int k = 0; k < 4; ++k) {
                vst1q_s32(rs->sc[s] + 16 * h + 4 * k, sc[k]);
                vst1q_s32(rs->m[s] + 16 * h + 4 * k, m[k]);
            }
        }
    for (int q = 0; q < 8; ++q) {
        vst1q_f32(rs->d + 4 * q, pw__t32n_f16x4(rec + PW__Q2KX_D + 8 * q));
        vst1q_f32(rs->dmin + 4 * q, pw__t32n_f16x4(rec + PW__Q2KX_DMIN + 8 * q));
    }
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. Register j of
 * every load (groups j and 4 + j) at a time, so that the 2 x mr chains of one
 * sub-block and the 2 x mr scaled sums stay in registers. */
Q2KXN_INLINE void q2kxn_panel(const uint8_t *rec, const q2kxn_rec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    const pw__q8_256 *xb[Q2KXN_MR];
    for (int i = 0; i < mr; ++i) xb[i] = (const pw__q8_256 *)x[i];
    for (int j = 0; j < 4; ++j) {
        int32x4_t sl[Q2KXN_MR], sh[Q2KXN_MR], ml[Q2KXN_MR], mh[Q2KXN_MR];
        for (int i = 0; i < mr; ++i) sl[i] = sh[i] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            const uint8_t *sb = rec + PW__Q2KX_SUB * s;
            int8x16_t a[Q2KXN_MR];
            int32x4_t lo[Q2KXN_MR], hi[Q2KXN_MR];
            for (int i = 0; i < mr; ++i) a[i] = vld1q_s8(xb[i]->qs + 16 * s);
            pw__arm_chain_zeros(lo, mr);
            pw__arm_chain_zeros(hi, mr);
            int8x16_t w[8];
            pw__q2kxn_quants(sb, j, w);
            for (int i = 0; i < mr; ++i) pw__t32n_dot8(&lo[i], &hi[i], w, a[i]);
            const int32x4_t scl = vld1q_s32(rs->sc[s] + 4 * j);
            const int32x4_t sch = vld1q_s32(rs->sc[s] + 16 + 4 * j);
            for (int i = 0; i < mr; ++i) {
                sl[i] = vmlaq_s32(sl[i], lo[i], scl);
                sh[i] = vmlaq_s32(sh[i], hi[i], sch);
            }
        }
        for (int i = 0; i < mr; ++i) ml[i] = mh[i] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            const int32x4_t mlo = vld1q_s32(rs->m[s] + 4 * j), mhi = vld1q_s32(rs->m[s] + 16 + 4 * j);
            for (int i = 0; i < mr; ++i) {
                ml[i] = vmlaq_n_s32(ml[i], mlo, xb[i]->bsums[s]);
                mh[i] = vmlaq_n_s32(mh[i], mhi, xb[i]->bsums[s]);
            }
        }
        const float32x4_t dl = vld1q_f32(rs->d + 4 * j), dh = vld1q_f32(rs->d + 16 + 4 * j);
        const float32x4_t nl = vld1q_f32(rs->dmin + 4 * j), nh = vld1q_f32(rs->dmin + 16 + 4 * j);
        for (int i = 0; i < mr; ++i) {
            float *yl = yb + 32 * i + 4 * j, *yh = yb + 32 * i + 16 + 4 * j;
            vst1q_f32(yl, q2kxn_out(vld1q_f32(yl), sl[i], ml[i], dl, nl, xb[i]->d));
            vst1q_f32(yh, q2kxn_out(vld1q_f32(yh), sh[i], mh[i], dh, nh, xb[i]->d));
        }
    }
}

/* The GEMV over q2kxn_block, the GEMMs over q2kxn_panel (its panel of any height
 * 1..Q2KXN_MR out of line: two loops call it; scripts/arm_mca.py finds it), one of them
 * over input-block-major Q2_K bytes as they are (records made one at a time from a
 * column's blocks, pw__q2kx_record_from_blocks), and the three kernels (ranked in
 * tile32_neon.h). */
PW__T32N_KFAMILY(q2kxn, q2_k_q2kx32k4, q2_k, PW_FORMAT_Q2_K, PW__Q2KX_RECORD, pw__block_q2_K,
                 pw__q2kx_record_from_blocks, q2kxn_rec, q2kxn_decode, Q2KXN_MR, PW__Q2KX_KERNEL,
                 PW__Q2KX_GEMM_KERNEL)
