#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "q6kx_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMV and GEMM over the q6kx32k4 family (layout in kernel/q6kx.h):
 * Q6_K in the bytes the x86 kernels read, so one packed weight (or cache file)
 * serves both, and on Arm the one form of a Q6_K weight serves n = 1 and n > 1 at
 * the file's size (before, the compact policy left Q6_K in place and ran the
 * row-major GEMV kernel for every n). The GEMV loop is tile32_neon.h's, the GEMM
 * loop tile32_kgemm.h's; this file is the record functions. Activations are
 * pw__q8_256 rows (|qs| <= 127).
 *
 * Every 64-byte load of a sub-block is four q registers; register j of each
 * (bytes [16j, +16)) holds, per 4-byte lane l, rows 4j + l (group j) and
 * 16 + 4j + l (group 4 + j): group q is rows 4q .. 4q+3. Sub-block s's 16
 * activation bytes are one q register a, whose lane i step i of the sub-block
 * takes (indexed SDOT). Per sub-block and register j, the low loads L0..L3 and
 * the high loads H0, H1 make the 6-bit quants (0..63, valid signed bytes) of the
 * four steps and both groups; with L = L_2p, L' = L_2p+1, H = H_p (q6kx.h's bits):
 *
 *   step 2p,     group j:      BSL(0x0F, L, H & 0x30)            L's low nibble, H 4-5
 *   step 2p,     group 4 + j:  SRI(H >> 2, L, 4)                 L's high nibble, H 6-7
 *   step 2p + 1, group j:      SLI(L', H, 4) & 0x3F              L''s low nibble, H 0-1
 *   step 2p + 1, group 4 + j:  SRI((H << 2) & 0x30, L', 4)       L''s high nibble, H 2-3
 *
 * nine operations for four quant vectors, then one SDOT each. Per sub-block s and
 * group q, from c = -32 * bsums[s] (the -32 offset: sum (q - 32) a = sum q a -
 * 32 sum a; bsums are the sums of 16 activations, one per sub-block):
 *
 *   D_sq = c + sum_i sdot(quants, a, lane i)      |.| <= 16 * 63 * 128 + 32 * 2048 < 2^18
 *   S_q += D_sq * sc_s      (MLA by the rows' int8 scales widened to int32; < 2^29)
 *   end of record:  acc_q += f32(S_q) * (d * x.d)   (FMLA: the x86 kernels' float step)
 *
 * GEMV (q6kxn_block): the record in address order, as the x86 kernels read it
 * (q6kx_avx512.c has the Zen 4 measurement behind it; on Arm it is unmeasured):
 * the 16 sub-blocks, each one's 8 group dots kept in L1 (2 KiB), then the scales
 * and d. Per sub-block: 24 loads, 72 unpacking ops, 32 SDOT; its chains start by loads
 * from a table of the 16 sub-blocks' offsets made once a record (a register copy of the
 * offset a chain before: 32.03 -> 30.03 cycles a sub-block on neoverse-v2, 40.37 ->
 * 37.37 on apple-m1). The llvm-mca estimate below is of the sub-block loop only: that
 * table and the scale work once a record are about 250 more instructions (the rest of
 * q6kxn_run) against 16 x 166 in the loop, so up to 10% more cycles a record than the
 * figure.
 *
 * GEMM (q6kxn_panel, tile32_kgemm.h): the record's scales widened once for every
 * panel (an L1 scratch, q6kxn_gemm_decode; the GEMV widens them where it uses them); per
 * register j of the loads (8 rows) and sub-block, its quants made once for the panel's
 * mr rows of X: 6 loads, 18 unpacking ops and 8 x mr SDOT; the 2 x mr chains, 2 x mr
 * scaled sums and mr activation vectors stay in registers.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q6kxn_run, neoverse-v2: 30.03 cycles/iter, 0.072 cycles/weight byte,
 *     14.0 B/cycle: 140% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q6kxn_run, apple-m1: 37.37 cycles/iter, 0.089 cycles/weight byte,
 *     11.2 B/cycle: 62% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 *   q6kxn_panel_any, neoverse-v2: 15.04 cycles/iter, 0.143 cycles/weight byte,
 *     34.0 int8 MAC/cycle: 53% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   q6kxn_panel_any, apple-m1: 20.53 cycles/iter, 0.196 cycles/weight byte,
 *     24.9 int8 MAC/cycle: 39% of the core's int8 peak (SDOT: 64 MAC/cycle)
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
#include "kernel/q6kx.h"

#include <stddef.h>

#define Q6KXN_INLINE static inline __attribute__((always_inline))

#define Q6KXN_MR 4 /* most rows of X per GEMM panel */

/* The int8 scales of sub-block s, rows 16h .. 16h+15, as int32: w[k] rows 16h + 4k ..
 * 16h + 4k + 3. */
Q6KXN_INLINE void q6kxn_scales(const uint8_t *rec, int s, int h, int32x4_t w[4]) {
    const int8x16_t v = vld1q_s8((const int8_t *)rec + PW__Q6KX_SCALES + 32 * s + 16 * h);
    pw__arm_widen_s8(v, w);
}

/* The masks the quants are made with. */
typedef struct q6kxn_masks {
    uint8x16_t m0f, m30, m3f;
} q6kxn_masks;

Q6KXN_INLINE q6kxn_masks q6kxn_masks_make(void) {
    const q6kxn_masks k = {vdupq_n_u8(0x0F), vdupq_n_u8(0x30), vdupq_n_u8(0x3F)};
    return k;
}

/* The quants of register j of sub-block sb's high pair p: w[0], w[1] steps 2p and 2p + 1
 * of group j, w[2], w[3] the same steps of group 4 + j (the file's comment). */
Q6KXN_INLINE void q6kxn_quants(const uint8_t *sb, int j, int p, q6kxn_masks k, int8x16_t w[4]) {
    const uint8x16_t l0 = vld1q_u8(sb + 64 * (2 * p) + 16 * j);
    const uint8x16_t l1 = vld1q_u8(sb + 64 * (2 * p + 1) + 16 * j);
    const uint8x16_t h = vld1q_u8(sb + PW__Q6KX_HIGH + 64 * p + 16 * j);
    w[0] = vreinterpretq_s8_u8(vbslq_u8(k.m0f, l0, vandq_u8(h, k.m30)));
    w[1] = vreinterpretq_s8_u8(vandq_u8(vsliq_n_u8(l1, h, 4), k.m3f));
    w[2] = vreinterpretq_s8_u8(vsriq_n_u8(vshrq_n_u8(h, 2), l0, 4));
    w[3] = vreinterpretq_s8_u8(vsriq_n_u8(vandq_u8(vshlq_n_u8(h, 2), k.m30), l1, 4));
}

/* *lo and *hi + steps 2p and 2p + 1 (p a constant) of q6kxn_quants's w, group j's and
 * group 4 + j's, against lanes 2p and 2p + 1 of one row's activation bytes a (the lane
 * an immediate at every optimization level: tile32_neon.h). */
Q6KXN_INLINE void q6kxn_dot4(int32x4_t *lo, int32x4_t *hi, const int8x16_t w[4], int8x16_t a,
                             const int p) {
    if (p == 0) {
        *lo = vdotq_laneq_s32(*lo, w[0], a, 0);
        *lo = vdotq_laneq_s32(*lo, w[1], a, 1);
        *hi = vdotq_laneq_s32(*hi, w[2], a, 0);
        *hi = vdotq_laneq_s32(*hi, w[3], a, 1);
    } else {
        *lo = vdotq_laneq_s32(*lo, w[0], a, 2);
        *lo = vdotq_laneq_s32(*lo, w[1], a, 3);
        *hi = vdotq_laneq_s32(*hi, w[2], a, 2);
        *hi = vdotq_laneq_s32(*hi, w[3], a, 3);
    }
}

/* ---- GEMV ---- */

/* GEMV record function (tile32_neon.h): acc[q] += group q's dots with block xbp. */
Q6KXN_INLINE void q6kxn_block(const uint8_t *rec, const uint8_t *xbp, float32x4_t acc[8]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const q6kxn_masks k = q6kxn_masks_make();
    int32_t dots[16][8][4] __attribute__((aligned(16))); /* [s][q]: 2 KiB, L1 */
    /* each sub-block's chains start from -32 x its bsum by a load, not a register copy */
    int32_t start[16][4] __attribute__((aligned(16)));
    for (int s = 0; s < 16; ++s) vst1q_s32(start[s], vdupq_n_s32(-32 * xb->bsums[s]));
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sb = rec + PW__Q6KX_SUB * s;
        const int8x16_t a = vld1q_s8(xb->qs + 16 * s);
        for (int j = 0; j < 4; ++j) {
            int32x4_t lo, hi;
            pw__arm_chain_load(start[s], 1, &lo);
            pw__arm_chain_load(start[s], 1, &hi);
            int8x16_t w[4];
            q6kxn_quants(sb, j, 0, k, w);
            q6kxn_dot4(&lo, &hi, w, a, 0);
            q6kxn_quants(sb, j, 1, k, w);
            q6kxn_dot4(&lo, &hi, w, a, 1);
            vst1q_s32(dots[s][j], lo);
            vst1q_s32(dots[s][4 + j], hi);
        }
    }
    /* the scales widened where they are used (the GEMM's scratch would cost a store and a
     * load of each) */
    for (int h = 0; h < 2; ++h) { /* groups 4h .. 4h+3: rows 16h .. 16h+15 */
        int32x4_t sum[4];
        for (int g = 0; g < 4; ++g) sum[g] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            int32x4_t w[4];
            q6kxn_scales(rec, s, h, w);
            for (int g = 0; g < 4; ++g)
                sum[g] = vmlaq_s32(sum[g], vld1q_s32(dots[s][4 * h + g]), w[g]);
        }
        for (int g = 0; g < 4; ++g) {
            const int q = 4 * h + g;
            acc[q] = pw__t32n_scale_add(acc[q], sum[g], pw__t32n_f16x4(rec + PW__Q6KX_D + 8 * q),
                                        xb->d);
        }
    }
}

/* ---- GEMM ---- */

/* The GEMM loop's decode (tile32_kgemm.h). */
static void q6kxn_gemm_decode(const uint8_t *rec, void *out) {
    pw__t32n_srec_decode(rec, PW__Q6KX_D, q6kxn_scales, out);
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. Register j of
 * every load (groups j and 4 + j) at a time, so that the 2 x mr chains of one
 * sub-block and the 2 x mr scaled sums stay in registers. */
Q6KXN_INLINE void q6kxn_panel(const uint8_t *rec, const pw__t32n_srec *rs, const uint8_t *const *x,
                              float *yb, const int mr) {
    const q6kxn_masks k = q6kxn_masks_make();
    const pw__q8_256 *xb[Q6KXN_MR];
    for (int i = 0; i < mr; ++i) xb[i] = (const pw__q8_256 *)x[i];
    /* the chains' start values -32 b_s of each sub-block and row, loaded at each start
     * (pw__arm_chain_load): made once a record, not twice per register j */
    int32_t start[16][4 * Q6KXN_MR] __attribute__((aligned(16)));
    for (int s = 0; s < 16; ++s)
        for (int i = 0; i < mr; ++i)
            vst1q_s32(start[s] + 4 * i, vdupq_n_s32(-32 * xb[i]->bsums[s]));
    for (int j = 0; j < 4; ++j) {
        int32x4_t sl[Q6KXN_MR], sh[Q6KXN_MR];
        for (int i = 0; i < mr; ++i) sl[i] = sh[i] = vdupq_n_s32(0);
        for (int s = 0; s < 16; ++s) {
            const uint8_t *sb = rec + PW__Q6KX_SUB * s;
            int8x16_t a[Q6KXN_MR];
            int32x4_t lo[Q6KXN_MR], hi[Q6KXN_MR];
            for (int i = 0; i < mr; ++i) a[i] = vld1q_s8(xb[i]->qs + 16 * s);
            pw__arm_chain_load(start[s], mr, lo);
            pw__arm_chain_load(start[s], mr, hi);
            int8x16_t w[4];
            q6kxn_quants(sb, j, 0, k, w);
            for (int i = 0; i < mr; ++i) q6kxn_dot4(&lo[i], &hi[i], w, a[i], 0);
            q6kxn_quants(sb, j, 1, k, w);
            for (int i = 0; i < mr; ++i) q6kxn_dot4(&lo[i], &hi[i], w, a[i], 1);
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
            vst1q_f32(yh, pw__t32n_scale_add(vld1q_f32(yh), sh[i], dh, xb[i]->d));
        }
    }
}

/* The GEMV over q6kxn_block, the GEMMs over q6kxn_panel (its panel of any height
 * 1..Q6KXN_MR out of line; scripts/arm_mca.py finds it), one of them over
 * input-block-major Q6_K bytes as they are (records made one at a time from a column's
 * blocks, pw__q6kx_record_from_blocks), and the three kernels (ranked in
 * tile32_neon.h). */
PW__T32N_KFAMILY(q6kxn, q6_k_q6kx32k4, q6_k, PW_FORMAT_Q6_K, PW__Q6KX_RECORD, pw__block_q6_K,
                 pw__q6kx_record_from_blocks, pw__t32n_srec, q6kxn_gemm_decode, Q6KXN_MR,
                 PW__Q6KX_KERNEL, PW__Q6KX_GEMM_KERNEL)
