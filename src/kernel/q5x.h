/*
 * The q5x32k4 packed family: Q5_0 blocks rearranged for SIMD GEMV and GEMM, 32
 * output rows per tile, the 5-bit sibling of q4x32k4 (kernel/q4x.h) as q5kx32k4
 * is of q4kx32k4 (kernel/q5kx.h). It holds exactly the bytes of the file's
 * blocks (32 blocks of 22 bytes = one 704-byte record); before it, Q5_0 had no
 * packed form and the compact policy ran the row-major kernels for every n.
 *
 * A tile is in / 32 block records, one after another. Record b holds block b
 * of the tile's 32 rows:
 *
 *   bytes [0, 576): a q4x32k4 record (q4x.h, bit for bit) of the rows' low 4
 *                   bits and fp16 d: step s (s = 0..7) = bytes [64s, 64s + 64),
 *                   byte 64s + 4r + j (r = 0..15, j = 0..3) holds element
 *                   4s + j of row r (low nibble) and of row r + 16 (high)
 *   bytes [576, 704): bit 4 of every element in two 64-byte planes, L at 576
 *                   and H at 640: bit s of byte i of L is bit 4 of the element
 *                   in the low nibble of byte i of step s (element 4s + i % 4
 *                   of row i / 4), of H the same for the high nibble (row
 *                   16 + i / 4): q5kx.h's planes of one sub-block
 *
 * The value of element k of row r is (q + 16 h - 16) * d, q its nibble, h its
 * bit, as in Q5_0 (whose element k takes its bit from bit k of qh). The -16 does
 * not depend on the row: -16 * sum of the activation block, once per block.
 * Rows past `out` in the last tile are zero.
 *
 * Activations: PW_ACT_Q8_32 rows. Weight shape: in a multiple of 32.
 */
#ifndef PACKWISE_KERNEL_Q5X_H
#define PACKWISE_KERNEL_Q5X_H

#include "kernel/q4x.h"

#define PW__Q5X_FAMILY "q5x32k4"
#define PW__Q5X_RECORD 704       /* bytes per (tile, block): 32 Q5_0 blocks */
#define PW__Q5X_BITS 576         /* offset of the bit-4 planes L, H (64 bytes each) */
#define PW__Q5X_VERSION 1
_Static_assert(PW__Q5X_BITS == PW__Q4X_RECORD, "the planes follow a q4x32k4 record");

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q5X_KERNEL(isa_, features_, run_, priority_)                             \
    PW__TILE32_KERNEL("q5_0", PW__Q5X_FAMILY, PW_FORMAT_Q5_0, Q8_32, \
                      pw__q5x_pack_plan, pw__q5x_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q5X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                             \
    PW__TILE32_GEMM_KERNEL("q5_0", PW__Q5X_FAMILY, PW_FORMAT_Q5_0, Q8_32,     \
                           pw__q5x_pack_plan, pw__q5x_pack, isa_, features_, run_, priority_, mr_)

pw_status pw__q5x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *desc);
void pw__q5x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                  uint8_t *dst);
PW__VIEW_PACKER(pw__q5x_pack_plan, pw__q5x_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block column,
 * row r's at src + r * 22 (the input-block-major GEMM kernels' fill, kernel/tile32.h).
 * Portable C; rec 4-byte aligned. */
void pw__q5x_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
