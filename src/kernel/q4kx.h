/*
 * The q4kx32k4 packed family: Q4_K super-blocks with their bytes rearranged
 * for SIMD GEMV, 32 output rows per tile. It holds exactly the bytes of the
 * file's blocks (32 blocks of 144 bytes = one 4608-byte record; the 6-bit
 * scales and mins stay packed as the file has them), so a GEMV over it reads
 * as many bytes as one over the file; but one 64-byte load holds one 4-value
 * k step of all 32 rows, ready for an int8 dot product with one broadcast of
 * 4 activation bytes, as the q4x32k4 family does for Q4_0 (kernel/q4x.h).
 *
 * A tile is in / 256 block records, one after another. Record b holds
 * super-block b of the tile's 32 rows:
 *
 *   step s (s = 0..63) = bytes [64s, 64s + 64): 16 lanes x 4 bytes
 *     byte 64s + 4r + j (r = 0..15, j = 0..3):  low nibble  q[r,      4s + j]
 *                                               high nibble q[r + 16, 4s + j]
 *     (element e = 4s + j of the super-block in its natural order, so steps
 *     8t .. 8t + 7 are 32-element sub-block t)
 *   bytes [4096, 4160): fp16 d    of rows 0..31
 *   bytes [4160, 4224): fp16 dmin of rows 0..31
 *   bytes [4224, 4608): the 12 packed scale/min bytes of each row, byte i of
 *                       row r at 4224 + 192 (r / 16) + 16i + r % 16
 *                       (pw__k4_scale_min() decodes them)
 *
 *   +-- step 0 --+-- step 1 --+ ... +-- step 63 --+-- d --+-- dmin --+-- scales ----------+
 *   | k0..3      | k4..7      |     | k252..255   | 32 x  | 32 x     | rows 0..15: 12 x 16 |
 *   | r lo, r+16 hi per lane  |     |             | fp16  | fp16     | rows 16..31: 12 x 16|
 *
 * q is the unsigned nibble (0..15); the weight of element e of row r is
 * d * sc[e / 32] * q - dmin * m[e / 32] as in Q4_K. Both nibbles of a byte
 * pair with the same activation value, so per sub-block one dot product of
 * the whole byte (q[r] + 16 q[r+16]) and one of its low nibble give both
 * rows: rows r+16 = (whole - low) / 16, exactly, before the sub-block's
 * per-row scale is applied. The byte order of the scales puts one scale byte
 * of 16 rows in 16 consecutive bytes, so SIMD code decodes the scales of 16
 * rows at once with a few operations. Rows past `out` in the last tile are
 * zero (q = 0, d = dmin = 0, scales 0).
 *
 * Activations: PW_ACT_Q8_256 rows. Weight shape: in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_Q4KX_H
#define PACKWISE_KERNEL_Q4KX_H

#include "kernel/tile32.h"

#define PW__Q4KX_FAMILY "q4kx32k4"
#define PW__Q4KX_NR PW__TILE32_NR
#define PW__Q4KX_KR 4             /* k values per row per 64-byte step */
#define PW__Q4KX_RECORD 4608      /* bytes per (tile, super-block): 32 Q4_K blocks */
#define PW__Q4KX_D 4096           /* offset of the fp16 d of the 32 rows in a record */
#define PW__Q4KX_DMIN 4160        /* offset of the fp16 dmin of the 32 rows */
#define PW__Q4KX_SCALES 4224      /* offset of the packed scale bytes (12 x 32) */
#define PW__Q4KX_VERSION 1

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q4KX_KERNEL(isa_, features_, run_, priority_)                               \
    PW__TILE32_KERNEL("q4_k", PW__Q4KX_FAMILY, PW_FORMAT_Q4_K, Q8_256, \
                      pw__q4kx_pack_plan, pw__q4kx_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q4KX_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                            \
    PW__TILE32_GEMM_KERNEL("q4_k", PW__Q4KX_FAMILY, PW_FORMAT_Q4_K, Q8_256,   \
                           pw__q4kx_pack_plan, pw__q4kx_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__q4kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q4kx_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q4kx_pack_plan, pw__q4kx_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * (block bytes), as the packer lays them out: the
 * input-block-major GEMM kernels' fill on AVX2, AVX-VNNI and NEON (kernel/tile32.h,
 * pw__tile32_fill_ibm). Portable C on 32-bit words; rec 4-byte aligned. */
void pw__q4kx_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
