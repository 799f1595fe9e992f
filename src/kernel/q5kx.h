/*
 * The q5kx32k4 packed family: Q5_K super-blocks rearranged for SIMD GEMV and
 * GEMM, 32 output rows per tile, the 5-bit sibling of q4kx32k4 (kernel/q4kx.h).
 * It holds exactly the bytes of the file's blocks (32 blocks of 176 bytes =
 * one 5632-byte record), so the packed form costs what the file's weight costs.
 * Before it, Q5_K had no packed form: under the compact policy every product
 * read the row-major blocks (a GEMM at n = 128 at about 15% of the int8 peak).
 *
 * A tile is in / 256 block records, one after another. Record b holds
 * super-block b of the tile's 32 rows:
 *
 *   bytes [0, 4608): a q4kx32k4 record (q4kx.h, bit for bit) of the rows' low
 *                    4 bits, d, dmin and packed scales: step s (s = 0..63) =
 *                    bytes [64s, 64s + 64), byte 64s + 4r + j (r = 0..15,
 *                    j = 0..3) holds element 4s + j of row r (low nibble) and
 *                    of row r + 16 (high nibble)
 *   bytes [4608, 5632): bit 4 of every element, 128 bytes per sub-block t
 *                    (steps 8t .. 8t + 7): at 4608 + 128t the 64 bytes L_t,
 *                    whose byte i has as bit u (u = 0..7) bit 4 of the element
 *                    in the low nibble of byte i of step 8t + u (element
 *                    4(8t + u) + i % 4 of row i / 4), at 4608 + 128t + 64 the
 *                    64 bytes H_t, the same for the high nibbles (row
 *                    16 + i / 4) -- so byte i of a step takes its bits from
 *                    byte i of L_t and H_t, bit u: a load of a step's bytes and
 *                    one of L_t or H_t at the same offset line up byte for byte
 *                    at any vector width, and one shift and mask put bit u at
 *                    bit 4 (value 16)
 *
 *   +-- q4kx32k4 record: 64 steps | d | dmin | scales --+-- bits: 8 x (L_t | H_t) --+
 *
 * The value of element e of row r is d * sc[e / 32] * (q + 16 h) - dmin *
 * m[e / 32], q its nibble, h its bit, as in Q5_K (whose element e takes its
 * bit from bit e / 32 of qh[e % 32]). Rows past `out` in the last tile are zero.
 *
 * Activations: PW_ACT_Q8_256 rows. Weight shape: in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_Q5KX_H
#define PACKWISE_KERNEL_Q5KX_H

#include "kernel/q4kx.h"

#define PW__Q5KX_FAMILY "q5kx32k4"
#define PW__Q5KX_RECORD 5632      /* bytes per (tile, super-block): 32 Q5_K blocks */
#define PW__Q5KX_BITS 4608        /* offset of the bit-4 planes, 128 bytes a sub-block */
#define PW__Q5KX_VERSION 1
_Static_assert(PW__Q5KX_BITS == PW__Q4KX_RECORD, "the bits follow a q4kx32k4 record");

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q5KX_KERNEL(isa_, features_, run_, priority_)                               \
    PW__TILE32_KERNEL("q5_k", PW__Q5KX_FAMILY, PW_FORMAT_Q5_K, Q8_256, \
                      pw__q5kx_pack_plan, pw__q5kx_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q5KX_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                            \
    PW__TILE32_GEMM_KERNEL("q5_k", PW__Q5KX_FAMILY, PW_FORMAT_Q5_K, Q8_256,   \
                           pw__q5kx_pack_plan, pw__q5kx_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__q5kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q5kx_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q5kx_pack_plan, pw__q5kx_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block column,
 * row r's at src + r * 176, as the packer lays them out: the input-block-major GEMM
 * kernels' fill (kernel/tile32.h, pw__tile32_fill_ibm). Portable C; rec 4-byte aligned.
 * pw__q5kx_planes_from_blocks writes the bit planes alone (bytes [4608, 5632)), for a
 * fill that makes the first 4608 bytes its own way. */
void pw__q5kx_record_from_blocks(const uint8_t *src, uint8_t *rec);
void pw__q5kx_planes_from_blocks(const uint8_t *src, uint8_t *rec);

#endif
