/*
 * The tq1x32k4 packed family: TQ1_0 blocks (ternary, base-3 fixed point, 1.69
 * bits a value) with their bytes moved, not re-encoded, for SIMD GEMV and GEMM,
 * 32 output rows per tile. It holds exactly the bytes of the file's blocks (32
 * blocks of 54 bytes = one 1728-byte record), so a GEMV over it reads as many
 * bytes as one over the file; but each 64-byte load holds one dword of 16 rows
 * side by side, and the k-th trit of each of its bytes is a 4-value k step of
 * those 16 rows: the decode runs on whole vectors (no shuffles, no per-row
 * gathering), and each decoded trit vector meets one broadcast of 4 activation
 * bytes in an int8 dot product (vpdpbusd, sdot).
 *
 * A block's 52 trit bytes (qs[0..48) then qh[0..4)) are 13 dwords g = 0..12,
 * dword g = bytes 4g..4g+3. Byte j (0..3) of dword g holds, in its trit k (0 the
 * most significant), the value (blocks.h's definition of TQ1_0):
 *
 *   g = 0..7:    e = 32k + 4g + j                  k = 0..4   (qs[0..32))
 *   g = 8..11:   e = 160 + 16k + 4(g - 8) + j      k = 0..4   (qs[32..48))
 *   g = 12:      e = 240 + 4k + j                  k = 0..3   (qh; its fifth trit is padding)
 *
 * so trit k of a dword is the 4 consecutive values e0(g, k) .. e0(g, k) + 3 of its
 * row: one k step. A tile is in / 256 block records, one after another. Record b
 * holds block b of the tile's 32 rows:
 *
 *   [128 g, 128 g + 128)  dword g of the 32 rows: load L(g, h) of 64 bytes at
 *                         128 g + 64 h holds rows 16h + r (r = 0..15) at 4r,
 *                         each the row's dword g as the file has it
 *   [1664, 1728)          fp16 d of rows 0..31 (each block's own, bit for bit)
 *
 *   +------ g = 0 ------+------ g = 1 ------+ ... +------ g = 12 -----+-- d ---+
 *   | rows 0-15 | 16-31 | rows 0-15 | 16-31 |     | rows 0-15 | 16-31 | 32 f16 |
 *   | r0 r1 .. r15 (4 B each: the row's qs[4g..4g+3], or qh at g = 12)        |
 *
 * Decoding a load into its steps: v_0 = L, v_{k+1} = 3 v_k mod 256 (two byte adds),
 * trit_k = (3 v_k) >> 8 = [v_k >= 86] + [v_k >= 171] (0, 1 or 2; test_tq1x checks the
 * identity on all 256 bytes and every k), pw__tq1x_trit below. The weight of value e
 * of row r is (t - 1) d; kernels take the unsigned t against the signed activations
 * and the -1 once per block from the activations' sum: y_r += d_r x.d (sum_e t_e
 * x.qs[e] - x.sum). Rows past `out` in the last tile are zero (trits 0, d = 0).
 *
 * Integer range (|x.qs| <= 127): sum_e t x.qs is within 256 * 2 * 127 = 65024 per
 * row and block, and |sum_e t x.qs - x.sum| = |sum_e (t - 1) x.qs| <= 32512: int32 and
 * f32 hold both exactly.
 *
 * Decode cost per 64 values (one trit vector of 16 rows), and the measured rates
 * ([11008, 4096] n = 1 cold, [512, 4096] n = 2 with the weight in L2; this project's
 * shared Zen 5 VM; figures and commands in each kernel file):
 *   AVX-512 VNNI  7 ops: 2 vpaddb, the trit in 4 (vpsubusb, vpminub, vpcmpub into a
 *                 mask, a masked vpaddb), vpdpbusd; and one broadcast load.
 *                 Cold 0.49-0.57 ms (17-19 GB/s), warm the same rate: compute-bound.
 *   AVX-VNNI      8 ops (two ymm: per ymm vpmaddubsw x 2 for the trits of the even and
 *                 odd bytes and their next fixed points, vpdpbusd x 2). Cold 0.89-1.00
 *                 ms (about 10 GB/s), warm 0.084-0.087 ms.
 *   AVX2          12 ops (the same with vpmaddubsw and vpaddw for the dots). Cold
 *                 0.99-1.14 ms, warm 0.090-0.102 ms.
 *   NEON dotprod  20 ops (four q registers: per register 2 CMHS and an add for -t, MUL
 *                 by 3, SDOT); llvm-mca only (tq1x_dotprod.c).
 * The row-major kernels it replaces ran at 6.5-7.9 GB/s (x86) on the same machine.
 *
 * Activations: PW_ACT_Q8_256 rows (the row-major TQ1_0 kernels' form). Weight shape:
 * in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_TQ1X_H
#define PACKWISE_KERNEL_TQ1X_H

#include "kernel/tile32.h"

#define PW__TQ1X_FAMILY "tq1x32k4"
#define PW__TQ1X_NR PW__TILE32_NR
#define PW__TQ1X_KR 4          /* k values per row per step */
#define PW__TQ1X_RECORD 1728   /* bytes per (tile, block): 32 x 54 */
#define PW__TQ1X_DWORDS 13     /* trit dwords per row and block */
#define PW__TQ1X_GROUP 128     /* bytes per dword of 32 rows: 2 loads */
#define PW__TQ1X_D 1664        /* offset of the fp16 d of the 32 rows */
#define PW__TQ1X_VERSION 1

/* The first value e0(g, k) of trit k of dword g (the table above). */
static inline int pw__tq1x_e0(int g, int k) {
    return g < 8 ? 32 * k + 4 * g : g < 12 ? 160 + 16 * k + 4 * (g - 8) : 240 + 4 * k;
}

/* Trits per byte of dword g: 5, but 4 in qh. */
static inline int pw__tq1x_trits(int g) { return g < 12 ? 5 : 4; }

/* The leading trit of a fixed-point byte v, (3 v) >> 8, in the compare form the SIMD
 * kernels use. */
static inline uint8_t pw__tq1x_trit(uint8_t v) { return (uint8_t)((v >= 86) + (v >= 171)); }

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__TQ1X_KERNEL(isa_, features_, run_, priority_)                                  \
    PW__TILE32_KERNEL("tq1_0", PW__TQ1X_FAMILY, PW_FORMAT_TQ1_0, Q8_256, pw__tq1x_pack_plan, \
                      pw__tq1x_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__TQ1X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                             \
    PW__TILE32_GEMM_KERNEL("tq1_0", PW__TQ1X_FAMILY, PW_FORMAT_TQ1_0, Q8_256, pw__tq1x_pack_plan, \
                           pw__tq1x_pack, isa_, features_, run_, priority_, mr_)

pw_status pw__tq1x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__tq1x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__tq1x_pack_plan, pw__tq1x_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * 54, as the packer lays them out: the input-block-major
 * GEMM kernels' fill (kernel/tile32.h, pw__tile32_fill_ibm). Portable C. */
void pw__tq1x_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
