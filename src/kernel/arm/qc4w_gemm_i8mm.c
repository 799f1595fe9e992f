#if !defined(__aarch64__) || !defined(__ARM_FEATURE_MATMUL_INT8)
#error "qc4w_gemm_i8mm.c needs Arm64 i8mm (cmake gives *_i8mm.c -march=armv8.2-a+dotprod+i8mm)"
#endif
/*
 * NEON i8mm kernel for QC4W family qc4w_n4k16s2 (layout in qc4w/qc4w.h): 4
 * channels by up to 8 rows of X (four pairs) per micro-tile, smmla (2 x 8 signed
 * bytes times 8 x 2 into a 2 x 2 int32 block); a row without a partner (n = 1, the
 * GEMV, or an odd last row) by sdot. s8 x s8, so only the zero point comes back
 * through the weight sums (qc4w_neon.h has the last steps and the exactness bound).
 *
 * Bytes read per 16 k values: one 32-byte chunk of the tile (unpacked once for
 * all the pairs), 16 bytes of the q of each row:
 *
 *   chunk j (32 B):  | ch 0: 8 B | ch 1: 8 B | ch 2: 8 B | ch 3: 8 B |        two int8x16
 *   byte i of ch c:  low nibble w[c, 16j + i], high nibble w[c, 16j + 8 + i]   (i < 8)
 *
 * so the low nibbles of one int8x16 are exactly smmla's right operand for
 * k 16j .. 16j+7 of two channels (8 k per channel, one after the other), the
 * high nibbles the one for k 16j+8 .. 16j+15. The left operand is the two
 * rows' q for the same 8 k, zipped by 64-bit halves:
 *
 *   acc{ch0,1} = | r0.c0 r0.c1 | r1.c0 r1.c1 | += smmla([r0 q0..7 | r1 q0..7], 16 * w_low[ch 0,1]) + ...
 *
 * One row: sdot of the same int8x16 against [q0..7 | q0..7] (lanes 2c, 2c + 1 of a
 * channel pair hold channel c's halves, added pairwise at the end), 4 sdot a chunk
 * where smmla would pair the row with itself and throw half its products away.
 *
 * Before (4 channels by one pair of rows, an odd row paired with itself, n = 1
 * included): run_i8mm 8.02 cycles per chunk on both models, 16 int8 MAC/cycle,
 * 12% of the SMMLA peak and a third of the dotprod kernel's 51 (qc4w_gemm_dotprod.c),
 * though i8mm's priority put it first on every i8mm core; its GEMV 4 weight B/cycle,
 * 40% of the Neoverse V2 streaming figure. Each pair's chain of two smmla a chunk
 * was the bound (llvm-mca's bottleneck analysis: dependencies); four pairs give
 * four times the independent work for the same unpacking.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   run_i8mm, neoverse-v2: 7.02 cycles/iter, 0.219 cycles/weight byte,
 *     72.9 int8 MAC/cycle: 57% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   run_i8mm, apple-m2: 9.35 cycles/iter, 0.292 cycles/weight byte,
 *     54.7 int8 MAC/cycle: 43% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   qc4w_i8mm_row, neoverse-v2: 2.52 cycles/iter, 0.079 cycles/weight byte,
 *     12.7 B/cycle: 127% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   qc4w_i8mm_row, apple-m1: 3.53 cycles/iter, 0.110 cycles/weight byte,
 *     9.1 B/cycle: 50% of a core's streaming rate (18.1 B/cycle, 58 GB/s at 3.2 GHz)
 */
#include "kernel/arm/qc4w_neon.h"

/* NP pairs of rows (1..4) x 4 channels: row[2p], row[2p + 1] -> y[2p], y[2p + 1]. The
 * tile's chunk is unpacked once for every pair. */
PW__QC4W_INLINE void pairs(const uint8_t *tile, int64_t chunks, const uint8_t *const *row,
                           uint8_t *const *y, int cols, const pw__mm_call *c, const int NP) {
    int32x4_t a01[PW__NEON_I8MM_MR / 2], a23[PW__NEON_I8MM_MR / 2];
    const int8_t *q[PW__NEON_I8MM_MR];
    for (int r = 0; r < 2 * NP; ++r) q[r] = (const int8_t *)(row[r] + sizeof(pw__qd8_header));
    for (int p = 0; p < NP; ++p) a01[p] = a23[p] = vdupq_n_s32(0);
    for (int64_t j = 0; j < chunks; ++j) {
        const int8x16_t w01 = vld1q_s8((const int8_t *)(tile + 32 * j));
        const int8x16_t w23 = vld1q_s8((const int8_t *)(tile + 32 * j + 16));
        const int8x16_t l01 = pw__qc4w_lo16(w01), h01 = pw__qc4w_hi16(w01);
        const int8x16_t l23 = pw__qc4w_lo16(w23), h23 = pw__qc4w_hi16(w23);
        for (int p = 0; p < NP; ++p)
            pw__neon_i8mm_pair_chunk(&a01[p], &a23[p], q[2 * p] + 16 * j, q[2 * p + 1] + 16 * j,
                                     l01, h01, l23, h23);
    }
    const uint8_t *meta = tile + 32 * chunks;
    for (int p = 0; p < NP; ++p) {
        pw__qc4w_finish4(vcombine_s32(vget_low_s32(a01[p]), vget_low_s32(a23[p])), row[2 * p],
                         meta, 4, 0, c, y[2 * p], cols);
        pw__qc4w_finish4(vcombine_s32(vget_high_s32(a01[p]), vget_high_s32(a23[p])),
                         row[2 * p + 1], meta, 4, 0, c, y[2 * p + 1], cols);
    }
}

/* One row x 4 channels by sdot, not smmla (whose 2 x 2 block would pair the row with
 * itself, half its products thrown away): each channel's 8 bytes against the row's 8 q
 * of the same k in both 64-bit halves, so int32 lanes (2c, 2c + 1) of a channel pair
 * hold channel c's two halves, added pairwise at the end. Its own function (not
 * inlined) so scripts/arm_mca.py finds its loop: the GEMV's. */
__attribute__((noinline)) static void qc4w_i8mm_row(const uint8_t *tile, int64_t chunks,
                                                    const uint8_t *row, uint8_t *y, int cols,
                                                    const pw__mm_call *c) {
    const int8_t *q = (const int8_t *)(row + sizeof(pw__qd8_header));
    int32x4_t l01 = vdupq_n_s32(0), l23 = l01, h01 = l01, h23 = l01;
    for (int64_t j = 0; j < chunks; ++j) {
        const int8x16_t w01 = vld1q_s8((const int8_t *)(tile + 32 * j));
        const int8x16_t w23 = vld1q_s8((const int8_t *)(tile + 32 * j + 16));
        const int8x8_t xl = vld1_s8(q + 16 * j), xh = vld1_s8(q + 16 * j + 8);
        const int8x16_t alo = vcombine_s8(xl, xl), ahi = vcombine_s8(xh, xh);
        l01 = vdotq_s32(l01, pw__qc4w_lo16(w01), alo);
        l23 = vdotq_s32(l23, pw__qc4w_lo16(w23), alo);
        h01 = vdotq_s32(h01, pw__qc4w_hi16(w01), ahi);
        h23 = vdotq_s32(h23, pw__qc4w_hi16(w23), ahi);
    }
    const int32x4_t acc = vpaddq_s32(vaddq_s32(l01, h01), vaddq_s32(l23, h23));
    pw__qc4w_finish4(acc, row, tile + 32 * chunks, 4, 0, c, y, cols);
}

static void run_i8mm(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const int64_t chunks = c->pack_desc->in_padded / 16;
#define QC4W_PAIRS(np) pairs(tile, chunks, row, yr, cols, c, np)
#define QC4W_ROW(r) qc4w_i8mm_row(tile, chunks, row[r], yr[r], cols, c)
    PW__NEON_I8MM_RUN(c, n0, n1, m0, m1, QC4W_PAIRS, QC4W_ROW);
#undef QC4W_PAIRS
#undef QC4W_ROW
}

const pw__kernel pw__k_qc4w_n4k16s2_i8mm = PW__QC4W_KERNEL(
    4, 16, 2, "i8mm", PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM, run_i8mm, PW__PRIO_I8MM,
    PW__NEON_I8MM_MR, 65536, 0);
