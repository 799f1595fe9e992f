/*
 * The q6kx32k4 packed family: Q6_K blocks with their bits rearranged for
 * SIMD GEMV, 32 output rows per tile. It holds exactly the bytes of the
 * file's blocks (32 blocks of 210 bytes = one 6720-byte record), so a GEMV
 * over it reads as many bytes as one over the file; but every 64-byte load
 * of quants holds one 4-value k step of all 32 rows (the high bits: two
 * steps), ready for an int8 dot product with one broadcast of 4 activation
 * bytes: no per-row gathering or permuting, as a row-major kernel needs.
 *
 * A tile is in / 256 block records, one after another. Record b holds block
 * b of the tile's 32 rows. Its 16 sub-blocks (16 values each, one int8 scale
 * per row) come first, 384 bytes each, in k order; then the scales, then d:
 *
 *   sub-block s (s = 0..15) at 384 s; its four k steps t = 4s + i (i = 0..3),
 *   values e = 4t + j (j = 0..3) of the block:
 *     low  i at 384s + 64i (i = 0..3), byte 4r + j (r = 0..15):
 *            bits 0-3: low4[r, e]       bits 4-7: low4[r + 16, e]
 *     high p at 384s + 256 + 64p (p = 0..1), byte 4r + j: steps 4s + 2p (upper
 *            nibble) and 4s + 2p + 1 (lower nibble) share it:
 *            bits 4-5: high2[r, 16s + 8p + j]     bits 6-7: high2[r + 16, 16s + 8p + j]
 *            bits 0-1: high2[r, 16s + 8p + 4 + j] bits 2-3: high2[r + 16, 16s + 8p + 4 + j]
 *   [6144, 6656): int8 scales, byte 6144 + 32s + r = scales[s] of row r
 *   [6656, 6720): fp16 d of rows 0..31 (each block's own d, bit for bit)
 *
 *   +----- sub-block 0 (384 B) -----+-- 1 --+ ... +-- 15 --+-- scales --+-- d --+
 *   | low 0..3 (4 x 64) | high 0..1 |       |     |        | 16 x 32 s8 | 32 f16|
 *
 * low4 and high2 are the 4 and 2 bits of the file's 6-bit quant q (0..63) of
 * value e (blocks.h): the weight is d * scales[e / 16] * (q - 32) with
 * q = low4 + 16 high2. The high bits sit in the upper nibble of a byte for
 * the first step of a pair, so that nibble ORs onto the low nibble of a low
 * load without a shift (bits 6-7 then carry row r + 16's high bits, a known
 * extra term; kernel/x86/q6kx_avx512.c). Rows past `out` in the last tile are
 * zero (q = 0, scales 0, d = 0).
 *
 * Activations: PW_ACT_Q8_256 rows. Weight shape: in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_Q6KX_H
#define PACKWISE_KERNEL_Q6KX_H

#include "kernel/tile32.h"

#define PW__Q6KX_FAMILY "q6kx32k4"
#define PW__Q6KX_NR PW__TILE32_NR
#define PW__Q6KX_KR 4         /* k values per row per 64-byte step */
#define PW__Q6KX_RECORD 6720  /* bytes per (tile, block): 32 x 210 */
#define PW__Q6KX_SUB 384      /* bytes per sub-block of 16 values: 4 low + 2 high loads */
#define PW__Q6KX_HIGH 256     /* offset of the high bits inside a sub-block */
#define PW__Q6KX_SCALES 6144  /* offset of the int8 scales inside a record */
#define PW__Q6KX_D 6656       /* offset of the fp16 d inside a record */
#define PW__Q6KX_VERSION 1

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q6KX_KERNEL(isa_, features_, run_, priority_)                               \
    PW__TILE32_KERNEL("q6_k", PW__Q6KX_FAMILY, PW_FORMAT_Q6_K, Q8_256, \
                      pw__q6kx_pack_plan, pw__q6kx_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q6KX_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                            \
    PW__TILE32_GEMM_KERNEL("q6_k", PW__Q6KX_FAMILY, PW_FORMAT_Q6_K, Q8_256,   \
                           pw__q6kx_pack_plan, pw__q6kx_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__q6kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q6kx_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q6kx_pack_plan, pw__q6kx_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * (block bytes), as the packer lays them out: the
 * input-block-major GEMM kernels' fill on AVX2, AVX-VNNI and NEON (kernel/tile32.h,
 * pw__tile32_fill_ibm). Portable C on 32-bit words; rec 4-byte aligned. */
void pw__q6kx_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
