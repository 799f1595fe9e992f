/*
 * The q8x32k4 packed family: Q8_0 blocks rearranged for SIMD GEMV and GEMM,
 * 32 output rows per tile. It holds exactly the bytes of the file's blocks
 * (32 blocks of 34 bytes = one 1088-byte record), so one form serves every
 * batch size at the file's size; one 64-byte load holds one 4-value k step of
 * 16 rows, ready for an int8 dot product with one broadcast of 4 activation
 * bytes.
 *
 * A tile is in / 32 block records, one after another. Record b (1024 bytes of
 * values, then 32 fp16 scales) holds block b of the tile's 32 rows:
 *
 *   step s (s = 0..7) = bytes [128s, 128s + 128): two 64-byte halves
 *     byte 128s + 4r + j        (r = 0..15, j = 0..3):  u[r,      4s + j]
 *     byte 128s + 64 + 4r + j   (r = 0..15, j = 0..3):  u[r + 16, 4s + j]
 *   bytes [1024, 1088): fp16 d of rows 0..31 (each block's own d, bit for bit)
 *
 *   +------------ step 0 ------------+------------ step 1 -----------+ ... +---- d ----+
 *   | rows 0..15 k0..3 | rows 16..31 k0..3 | rows 0..15 k4..7 | ...  |     | 32 x fp16 |
 *
 * u = q XOR 0x80 = q + 128 (0..255), q the block's int8 value: x86 VNNI
 * (vpdpbusd) multiplies unsigned by signed bytes, so the weight is the unsigned
 * side and the int8 activations (pw__q8_32.qs) the signed side, and
 *   sum_k q[k] a[k] = sum_k u[k] a[k] - 128 * sum_k a[k]
 * where the last sum is the activation block's (pw__q8_32.sum), once per block.
 * Rows past `out` in the last tile are zero blocks (q = 0, so u = 0x80; d = 0).
 *
 * Activations: PW_ACT_Q8_32 rows. Weight shape: in a multiple of 32.
 */
#ifndef PACKWISE_KERNEL_Q8X_H
#define PACKWISE_KERNEL_Q8X_H

#include "kernel/tile32.h"

#define PW__Q8X_FAMILY "q8x32k4"
#define PW__Q8X_NR PW__TILE32_NR
#define PW__Q8X_KR 4          /* k values per row per 64-byte load */
#define PW__Q8X_STEP 128      /* bytes per k step: rows 0..15, then rows 16..31 */
#define PW__Q8X_RECORD 1088   /* bytes per (tile, block): 8 x 128 values + 32 x fp16 d */
#define PW__Q8X_SCALES 1024   /* offset of the fp16 scales inside a record */
#define PW__Q8X_VERSION 1

/* A GEMV kernel of the family (one row of X per pass over a record). */
#define PW__Q8X_KERNEL(isa_, features_, run_, priority_)                             \
    PW__TILE32_KERNEL("q8_0", PW__Q8X_FAMILY, PW_FORMAT_Q8_0, Q8_32, \
                      pw__q8x_pack_plan, pw__q8x_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q8X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                         \
    PW__TILE32_GEMM_KERNEL("q8_0", PW__Q8X_FAMILY, PW_FORMAT_Q8_0, Q8_32, \
                           pw__q8x_pack_plan, pw__q8x_pack, isa_, features_, run_, priority_, mr_)

pw_status pw__q8x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *desc);
void pw__q8x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                  uint8_t *dst);
PW__VIEW_PACKER(pw__q8x_pack_plan, pw__q8x_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * (block bytes), as the packer lays them out: the
 * input-block-major GEMM kernels' fill on AVX2, AVX-VNNI and NEON (kernel/tile32.h,
 * pw__tile32_fill_ibm). Portable C on 32-bit words; rec 4-byte aligned. */
void pw__q8x_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
