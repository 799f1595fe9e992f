/*
 * The q4x32k4 packed family: Q4_0 blocks with their nibbles rearranged for
 * SIMD GEMV, 32 output rows per tile. It holds exactly the bytes of the
 * file's blocks (32 blocks of 18 bytes = one 576-byte record), so a GEMV over
 * it reads as many bytes as one over the file; but one 64-byte load holds one
 * 4-value k step of all 32 rows, ready for an int8 dot product with one
 * broadcast of 4 activation bytes: no per-row gathering or permuting, as a
 * row-major kernel needs.
 *
 * A tile is in / 32 block records, one after another. Record b (512 bytes of
 * nibbles, then 32 fp16 scales) holds block b of the tile's 32 rows:
 *
 *   step s (s = 0..7) = bytes [64s, 64s + 64): 16 lanes x 4 bytes
 *     byte 64s + 4r + j (r = 0..15, j = 0..3):  low nibble  q[r,      4s + j]
 *                                               high nibble q[r + 16, 4s + j]
 *   bytes [512, 576): fp16 d of rows 0..31 (each block's own d, bit for bit)
 *
 *   +---------------- step 0 ----------------+-- step 1 --+ ... +-- step 7 --+---- d ----+
 *   | lane r: k0..3 of row r (lo), row r+16 (hi) | k4..7  |     | k28..31    | 32 x fp16 |
 *
 * q is the unsigned nibble (0..15); the weight is (q - 8) * d as in Q4_0.
 * Both nibbles of a byte pair with the same activation value, so one dot
 * product of the whole byte (q[r] + 16 q[r+16]) and one of its low nibble
 * give both rows: rows r+16 = (whole - low) / 16, exactly. The -8 offset
 * does not depend on the row: it is -8 * sum of the activation block
 * (pw__q8_32.sum), once per block. Rows past `out` in the last tile are zero
 * (q = 0, d = 0).
 *
 * Activations: PW_ACT_Q8_32 rows. Weight shape: in a multiple of 32.
 */
#ifndef PACKWISE_KERNEL_Q4X_H
#define PACKWISE_KERNEL_Q4X_H

#include "kernel/tile32.h"

#define PW__Q4X_FAMILY "q4x32k4"
#define PW__Q4X_NR PW__TILE32_NR
#define PW__Q4X_KR 4             /* k values per row per 64-byte step */
#define PW__Q4X_RECORD 576       /* bytes per (tile, block): 8 x 64 nibbles + 32 x fp16 d */
#define PW__Q4X_SCALES 512       /* offset of the fp16 scales inside a record */
#define PW__Q4X_VERSION 1

/* The formats whose records begin as this family's (q5x32k4: kernel/q5x.h; iq4x32k4:
 * kernel/iq4x.h; q41x32k4 and q51x32k4: kernel/q41x.h) share its kernels' code, a
 * constant of these telling them apart. */
enum { PW__Q4X_Q4_0, PW__Q4X_Q5_0, PW__Q4X_IQ4_NL, PW__Q4X_Q4_1, PW__Q4X_Q5_1 };
/* Whether format f's records carry bit 4 of each value in planes after the q4x32k4
 * record (q5x.h: Q5_0, Q5_1). */
#define PW__Q4X_BIT4(f) ((f) == PW__Q4X_Q5_0 || (f) == PW__Q4X_Q5_1)
/* Whether they end in the rows' fp16 minimum m, 64 bytes (q41x.h: Q4_1, Q5_1). */
#define PW__Q4X_MIN(f) ((f) == PW__Q4X_Q4_1 || (f) == PW__Q4X_Q5_1)
/* The bytes of one record of format f. */
#define PW__Q4X_RECORD_OF(f)                                                                 \
    (PW__Q4X_RECORD + (PW__Q4X_BIT4(f) ? 128 : 0) + (PW__Q4X_MIN(f) ? 64 : 0))
/* The offset of the value a nibble (with its bit 4) holds: Q4_0's -8, Q5_0's -16, none
 * for Q4_1 and Q5_1 (their minimum is a term of its own); IQ4_NL's is the codebook's. */
#define PW__Q4X_OFFSET(f) ((f) == PW__Q4X_Q4_0 ? -8 : (f) == PW__Q4X_Q5_0 ? -16 : 0)

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q4X_KERNEL(isa_, features_, run_, priority_)                             \
    PW__TILE32_KERNEL("q4_0", PW__Q4X_FAMILY, PW_FORMAT_Q4_0, Q8_32, \
                      pw__q4x_pack_plan, pw__q4x_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q4X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                             \
    PW__TILE32_GEMM_KERNEL("q4_0", PW__Q4X_FAMILY, PW_FORMAT_Q4_0, Q8_32,     \
                           pw__q4x_pack_plan, pw__q4x_pack, isa_, features_, run_, priority_, mr_)

pw_status pw__q4x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *desc);
void pw__q4x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                  uint8_t *dst);
PW__VIEW_PACKER(pw__q4x_pack_plan, pw__q4x_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * (block bytes), as the packer lays them out: the
 * input-block-major GEMM kernels' fill on AVX2, AVX-VNNI and NEON (kernel/tile32.h,
 * pw__tile32_fill_ibm). Portable C on 32-bit words; rec 4-byte aligned. */
void pw__q4x_record_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
