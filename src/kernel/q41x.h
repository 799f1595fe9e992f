/*
 * The q41x32k4 and q51x32k4 packed families: Q4_1 and Q5_1 blocks rearranged
 * for SIMD GEMV and GEMM, 32 output rows per tile, the siblings with a minimum
 * of q4x32k4 (kernel/q4x.h) and q5x32k4 (kernel/q5x.h). Each holds exactly the
 * bytes of the file's blocks: 32 blocks of 20 bytes = one 640-byte record
 * (Q4_1), 32 of 24 = one 768-byte record (Q5_1). Before them, Q4_1 and Q5_1 had
 * no packed form and the compact policy ran the row-major kernels for every n.
 *
 * A tile is in / 32 block records, one after another. Record b holds block b
 * of the tile's 32 rows:
 *
 *   q41x32k4  bytes [0, 576):   a q4x32k4 record (q4x.h, bit for bit) of the
 *                               rows' nibbles and fp16 d
 *             bytes [576, 640): fp16 m of rows 0..31 (each block's own m)
 *   q51x32k4  bytes [0, 704):   a q5x32k4 record (q5x.h, bit for bit) of the
 *                               rows' low 4 bits, fp16 d and bit 4 in two planes
 *             bytes [704, 768): fp16 m of rows 0..31
 *
 *   +-- steps 0..7 (512) --+-- d (64) --+[-- planes L, H (128) --]+-- m (64) --+
 *
 * The value of element k of row r is q * d + m (Q4_1) or (q + 16 h) * d + m
 * (Q5_1), q its nibble, h its bit, as in the file. The dot product with an
 * activation block (x.qs, x.d, x.dsum = x.d * sum(x.qs)) is
 * d * x.d * sum(q x.qs) + m * x.dsum: the q4x and q5x kernels' integer dots with
 * no offset, then one more fma per row with the rows' m. Rows past `out` in the
 * last tile are zero.
 *
 * Activations: PW_ACT_Q8_32 rows. Weight shape: in a multiple of 32.
 */
#ifndef PACKWISE_KERNEL_Q41X_H
#define PACKWISE_KERNEL_Q41X_H

#include "kernel/q5x.h"

#define PW__Q41X_FAMILY "q41x32k4"
#define PW__Q41X_RECORD 640      /* bytes per (tile, block): 32 Q4_1 blocks */
#define PW__Q41X_MINS 576        /* offset of the fp16 m of the 32 rows */
#define PW__Q41X_VERSION 1
#define PW__Q51X_FAMILY "q51x32k4"
#define PW__Q51X_RECORD 768      /* bytes per (tile, block): 32 Q5_1 blocks */
#define PW__Q51X_MINS 704        /* offset of the fp16 m of the 32 rows */
#define PW__Q51X_VERSION 1
_Static_assert(PW__Q41X_MINS == PW__Q4X_RECORD && PW__Q51X_MINS == PW__Q5X_RECORD,
               "m follows a q4x32k4 or q5x32k4 record");
_Static_assert(PW__Q4X_RECORD_OF(PW__Q4X_Q4_1) == PW__Q41X_RECORD &&
                   PW__Q4X_RECORD_OF(PW__Q4X_Q5_1) == PW__Q51X_RECORD &&
                   PW__Q4X_RECORD_OF(PW__Q4X_Q5_0) == PW__Q5X_RECORD,
               "PW__Q4X_RECORD_OF gives each family's record");

/* Kernels of the families: what they read, once for every ISA. */
#define PW__Q41X_KERNEL(isa_, features_, run_, priority_)                             \
    PW__TILE32_KERNEL("q4_1", PW__Q41X_FAMILY, PW_FORMAT_Q4_1, Q8_32, \
                      pw__q41x_pack_plan, pw__q41x_pack, isa_, features_, run_, priority_)
#define PW__Q41X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                             \
    PW__TILE32_GEMM_KERNEL("q4_1", PW__Q41X_FAMILY, PW_FORMAT_Q4_1, Q8_32,     \
                           pw__q41x_pack_plan, pw__q41x_pack, isa_, features_, run_, priority_, \
                           mr_)
#define PW__Q51X_KERNEL(isa_, features_, run_, priority_)                             \
    PW__TILE32_KERNEL("q5_1", PW__Q51X_FAMILY, PW_FORMAT_Q5_1, Q8_32, \
                      pw__q51x_pack_plan, pw__q51x_pack, isa_, features_, run_, priority_)
#define PW__Q51X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                             \
    PW__TILE32_GEMM_KERNEL("q5_1", PW__Q51X_FAMILY, PW_FORMAT_Q5_1, Q8_32,     \
                           pw__q51x_pack_plan, pw__q51x_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__q41x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q41x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q41x_pack_plan, pw__q41x_pack)
pw_status pw__q51x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q51x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q51x_pack_plan, pw__q51x_pack)

/* One record of each family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * 20 (Q4_1) or 24 (Q5_1): the input-block-major GEMM
 * kernels' fill (kernel/tile32.h). Portable C; rec 4-byte aligned. */
void pw__q41x_record_from_blocks(const uint8_t *src, uint8_t *rec);
void pw__q51x_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
