#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "q3kx_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the q3kx32k4 family (layout in kernel/q3kx.h):
 * Q3_K in the bytes the x86 kernels read, so one packed weight (or cache file)
 * serves both, and on Arm the one form of a Q3_K weight serves n = 1 and n > 1 at
 * the file's size. The GEMV loop is tile32_neon.h's, the GEMM loop tile32_kgemm.h's;
 * this file is the record functions. Activations are pw__q8_256 rows (|qs| <= 127).
 *
 * Every 64-byte load of a sub-block is four q registers; register j of each (bytes
 * [16j, +16)) holds, per 4-byte lane l, rows 4j + l (group j, low nibbles) and
 * 16 + 4j + l (group 4 + j, high nibbles): group q is rows 4q .. 4q+3. Sub-block s's
 * 16 activation bytes are one q register a, whose lane u step u of the sub-block
 * takes (indexed SDOT). Per sub-block and register j, the loads P0, P1, P2 make the
 * quants of its four steps and both groups (valid signed bytes):
 *
 *   step u < 3:  group j: P_u & 0x07      group 4 + j: P_u & 0x70 (16 q)
 *   step 3:      y = BSL(0x11, P0 >> 3, BSL(0x22, P1 >> 2, P2 >> 1)), then the same masks
 *
 * 13 operations for eight quant vectors, then one SDOT each. Per sub-block s and
 * group, from c = -4 * bsums[s] (the -4 offset: sum (q - 4) a = sum q a - 4 sum a):
 *
 *   D_s,j   = c    + sum_u sdot(P_u & 0x07, a, lane u)   |.| <= 16 * 4 * 127 = 8128
 *   D_s,4+j = 16 c + sum_u sdot(P_u & 0x70, a, lane u)   16 x that
 *   S_q += D_s,q * (scale_s - 32)      (MLA; |S| <= 16 * 32 * 16 * 8128 < 2^27)
 *   end of record:  acc_q += f32(S_q, >> 4 for q >= 4: exact) * (d * x.d)
 *
 * GEMV (q3kxn_block): the record in address order, as the x86 kernels read it: the
 * 16 sub-blocks, each one's 8 group dots kept in L1 (2 KiB), then the scales
 * (decoded 16 rows of one sub-block at a time: q3kxn_scales) and d. A sub-block's
 * chains start by loads from a table of the 16 sub-blocks' c and 16c made once a
 * record, where each was a register copy (llvm-mca, cycles a sub-block: neoverse-v2
 * 24.53 -> 23.03, apple-m1 30.70 -> 28.03; the table is outside the loop the estimate
 * below is of).
 *
 * GEMM (q3kxn_panel, tile32_kgemm.h): the record's scales decoded and widened once for
 * every panel (an L1 scratch, q3kxn_gemm_decode); per register j of the loads (8 rows) and
 * sub-block, its quants made once for the panel's mr rows of X: 3 loads, 13 unpacking
 * ops and 8 x mr SDOT; the 2 x mr chains, 2 x mr scaled sums and mr activation vectors
 * stay in registers.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q3kxn_run, neoverse-v2: 23.03 cycles/iter, 0.105 cycles/weight byte,
 *     9.6 B/cycle: 96% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q3kxn_run, apple-m1: 28.03 cycles/iter, 0.127 cycles/weight byte,
 *     7.8 B/cycle: 43% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q3kxn_panel_any, neoverse-v2: 13.28 cycles/iter, 0.241 cycles/weight byte,
 *     38.5 int8 MAC/cycle: 60% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q3kxn_panel_any, apple-m1: 17.70 cycles/iter, 0.322 cycles/weight byte,
 *     28.9 int8 MAC/cycle: 45% of the core's int8 peak (SDOT: 64 MAC/cycle)
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
#include "kernel/q3kx.h"

#include <stddef.h>

#define Q3KXN_INLINE static inline __attribute__((always_inline))

#define Q3KXN_MR 4 /* most rows of X per GEMM panel */

/* The scales (stored value - 32) of sub-block j, rows 16h .. 16h+15, as int32: w[k] rows
 * 16h + 4k .. 16h + 4k + 3. From the packed bytes (q3kx.h: byte i of row r at
 * 192 (r / 16) + 16 i + r % 16): the low 4 bits in byte j % 8 (its high nibble for
 * j >= 8), the top 2 in bits 2 (j / 4) of byte 8 + j % 4 (pw__q3k_unpack_scales). */
Q3KXN_INLINE void q3kxn_scales(const uint8_t *rec, int j, int h, int32x4_t w[4]) {
    const uint8_t *p = rec + PW__Q3KX_SCALES + 192 * h;
    const uint8x16_t lb = vld1q_u8(p + 16 * (j % 8)), hb = vld1q_u8(p + 16 * (8 + j % 4));
    const uint8x16_t lo = j < 8 ? vandq_u8(lb, vdupq_n_u8(0x0F)) : vshrq_n_u8(lb, 4);
    const int sh = 2 * (j / 4); /* the top bits' position, to bits 4-5 */
    const uint8x16_t hi = vandq_u8(sh == 0   ? vshlq_n_u8(hb, 4)
                                   : sh == 2 ? vshlq_n_u8(hb, 2)
                                   : sh == 4 ? hb
                                             : vshrq_n_u8(hb, 2),
                                   vdupq_n_u8(0x30));
    const int8x16_t v = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo, hi)), vdupq_n_s8(32));
    pw__arm_widen_s8(v, w);
}

/* The quants of register j of sub-block sb: w[u] step u of group j (0..7), w[4 + u] of
 * group 4 + j (16 q: 0..112). */
Q3KXN_INLINE void q3kxn_quants(const uint8_t *sb, int j, int8x16_t w[8]) {
    const uint8x16_t m07 = vdupq_n_u8(0x07), m70 = vdupq_n_u8(0x70);
    const uint8x16_t p0 = vld1q_u8(sb + 16 * j), p1 = vld1q_u8(sb + 64 + 16 * j),
                     p2 = vld1q_u8(sb + 128 + 16 * j);
    /* step 3: bit k of each nibble's quant is bit 3 of that nibble of P_k */
    const uint8x16_t y = vbslq_u8(vdupq_n_u8(0x11), vshrq_n_u8(p0, 3),
                                  vbslq_u8(vdupq_n_u8(0x22), vshrq_n_u8(p1, 2), vshrq_n_u8(p2, 1)));
    const uint8x16_t p[4] = {p0, p1, p2, y};
    for (int u = 0; u < 4; ++u) {
        w[u] = vreinterpretq_s8_u8(vandq_u8(p[u], m07));
        w[4 + u] = vreinterpretq_s8_u8(vandq_u8(p[u], m70));
    }
}

/* ---- GEMV ---- */

/* GEMV record function (tile32_neon.h): acc[q] += group q's dots with block xbp. */
Q3KXN_INLINE void q3kxn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    int32_t dots[16][8][4] __attribute__((aligned(16))); /* [s][q]: 2 KiB, L1 */
    /* each sub-block's chains start from c and 16c by loads, not register copies */
    int32_t start[16][2][4] __attribute__((aligned(16)));
    for (int s = 0; s < 16; ++s) {
        const int32x4_t c = vdupq_n_s32(-4 * xb->bsums[s]);
        vst1q_s32(start[s][0], c);
        vst1q_s32(start[s][1], vshlq_n_s32(c, 4));
    }
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sb = rec + PW__Q3KX_SUB * s;
        const int8x16_t a = vld1q_s8(xb->qs + 16 * s);
        for (int j = 0; j < 4; ++j) {
            int8x16_t w[8];
            q3kxn_quants(sb, j, w);
            int32x4_t lo, hi;
            pw__arm_chain_load(start[s][0], 1, &lo);
            pw__arm_chain_load(start[s][1], 1, &hi);
            pw__t32n_dot8(&lo, &hi, w, a);
            vst1q_s32(dots[s][j], lo);
            vst1q_s32(dots[s][4 + j], hi);
        }
    }
    for (int h = 0; h < 2; ++h) { /* groups 4h .. 4h+3: rows 16h .. 16h+15 */
        int32x4_t sum[4];
        for (int g = 0; g < 4; ++g) sum[g] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            int32x4_t w[4];
            q3kxn_scales(rec, s, h, w);
            for (int g = 0; g < 4; ++g)
                sum[g] = vmlaq_s32(sum[g], vld1q_s32(dots[s][4 * h + g]), w[g]);
        }
        for (int g = 0; g < 4; ++g) {
            const int q = 4 * h + g;
            acc[q] = pw__t32n_scale_add(acc[q], h ? vshrq_n_s32(sum[g], 4) : sum[g],
                                        pw__t32n_f16x4(rec + PW__Q3KX_D + 8 * q), xb->d);
        }
    }
}

/* ---- GEMM ---- */

/* The GEMM loop's decode (tile32_kgemm.h). */
static void q3kxn_gemm_decode(const uint8_t *rec, void *out) {
    pw__t32n_srec_decode(rec, PW__Q3KX_D, q3kxn_scales, out);
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. Register j of
 * every load (groups j and 4 + j) at a time, so that the 2 x mr chains of one
 * sub-block and the 2 x mr scaled sums stay in registers. */
Q3KXN_INLINE void q3kxn_panel(const uint8_t *rec, const pw__t32n_srec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    const pw__q8_256 *xb[Q3KXN_MR];
    for (int i = 0; i < mr; ++i) xb[i] = (const pw__q8_256 *)x[i];
    /* the chains' start values (-4 b_s, and 16 x that for the high groups) of each
     * sub-block and row, loaded at each start (pw__arm_chain_load): made once a record,
     * not per register j */
    int32_t start[2][16][4 * Q3KXN_MR] __attribute__((aligned(16)));
    for (int s = 0; s < 16; ++s)
        for (int i = 0; i < mr; ++i) {
            vst1q_s32(start[0][s] + 4 * i, vdupq_n_s32(-4 * xb[i]->bsums[s]));
            vst1q_s32(start[1][s] + 4 * i, vdupq_n_s32(-64 * xb[i]->bsums[s]));
        }
    for (int j = 0; j < 4; ++j) {
        int32x4_t sl[Q3KXN_MR], sh[Q3KXN_MR];
        for (int i = 0; i < mr; ++i) sl[i] = sh[i] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            const uint8_t *sb = rec + PW__Q3KX_SUB * s;
            int8x16_t a[Q3KXN_MR];
            int32x4_t lo[Q3KXN_MR], hi[Q3KXN_MR];
            for (int i = 0; i < mr; ++i) a[i] = vld1q_s8(xb[i]->qs + 16 * s);
            pw__arm_chain_load(start[0][s], mr, lo);
            pw__arm_chain_load(start[1][s], mr, hi);
            int8x16_t w[8];
            q3kxn_quants(sb, j, w);
            for (int i = 0; i < mr; ++i) pw__t32n_dot8(&lo[i], &hi[i], w, a[i]);
            const int32x4_t scl = vld1q_s32(rs->sc[s] + 4 * j);
            const int32x4_t sch = vld1q_s32(rs->sc[s] + 16 + 4 * j);
            for (int i = 0; i < mr; ++i) {
                sl[i] = vmlaq_s32(sl[i], lo[i], scl);
                sh[i] = vmlaq_s32(sh[i], hi[i], sch);
            }
        }
        const float32x4_t dl = vld1q_f32(rs->d + 4 * j), dh = vld1q_f32(rs->d + 16 + 4 * j);
        for (int i = 0; i < mr; ++i) {
            float *yl = yb + 32 * i + 4 * j, *yh = yb + 32 * i + 16 + 4 * j;
            vst1q_f32(yl, pw__t32n_scale_add(vld1q_f32(yl), sl[i], dl, xb[i]->d));
            vst1q_f32(yh, pw__t32n_scale_add(vld1q_f32(yh), vshrq_n_s32(sh[i], 4), dh, xb[i]->d));
        }
    }
}

/* The GEMV over q3kxn_block, the GEMMs over q3kxn_panel (its panel of any height
 * 1..Q3KXN_MR out of line: two loops call it; scripts/arm_mca.py finds it), one of them
 * over input-block-major Q3_K bytes as they are (records made one at a time from a
 * column's blocks, pw__q3kx_record_from_blocks), and the three kernels (ranked in
 * tile32_neon.h). */
PW__T32N_KFAMILY(q3kxn, q3_k_q3kx32k4, q3_k, PW_FORMAT_Q3_K, PW__Q3KX_RECORD, pw__block_q3_K,
                 pw__q3kx_record_from_blocks, pw__t32n_srec, q3kxn_gemm_decode, Q3KXN_MR,
                 PW__Q3KX_KERNEL, PW__Q3KX_GEMM_KERNEL)
