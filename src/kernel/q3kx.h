/*
 * The q3kx32k4 packed family: Q3_K blocks with their bits rearranged for
 * SIMD GEMV and GEMM, 32 output rows per tile. It holds exactly the bytes of
 * the file's blocks (32 blocks of 110 bytes = one 3520-byte record), so a
 * GEMV over it reads as many bytes as one over the file. Each value's 3-bit
 * quant q = low2 + 4 high (0..7, the file's 2 low bits and its hmask bit)
 * sits whole in one nibble of one byte for three k steps in four, so those
 * steps are one mask away from an int8 dot product of all 32 rows with one
 * broadcast of 4 activation bytes; the fourth step's quants are spread over
 * the spare top bit of each nibble of the three.
 *
 * A tile is in / 256 block records, one after another. Record b holds block
 * b of the tile's 32 rows. Its 16 sub-blocks (16 values each, one 6-bit
 * scale per row) come first, 192 bytes each, in k order; then the scales,
 * then d:
 *
 *   sub-block s (s = 0..15) at 192 s: three loads P_k (k = 0..2) of 64 bytes at
 *   192 s + 64 k; its four k steps t = 4s + u (u = 0..3), values
 *   e = 4t + j = 16s + 4u + j (j = 0..3) of the block. Byte 192s + 64k + 4r + j
 *   (r = 0..15):
 *     bits 0-2: q[r,      16s + 4k + j]        (step u = k)
 *     bit  3:   bit k of q[r,      16s + 12 + j]   (step u = 3)
 *     bits 4-6: q[r + 16, 16s + 4k + j]
 *     bit  7:   bit k of q[r + 16, 16s + 12 + j]
 *   so step u < 3 is P_u & 0x77 (row r in the low nibble, r + 16 in the high),
 *   and step 3 is (P_0 >> 3 & 0x11) | (P_1 >> 2 & 0x22) | (P_2 >> 1 & 0x44).
 *   [3072, 3456): the 12 packed scale bytes of each row as the file has them,
 *                 byte i of row r at 3072 + 192 (r / 16) + 16 i + r % 16
 *                 (pw__q3k_unpack_scales() decodes them; 16 rows of one byte lie
 *                 side by side, as in q4kx32k4)
 *   [3456, 3520): fp16 d of rows 0..31 (each block's own d, bit for bit)
 *
 *   +-- sub-block 0 (192 B) --+-- 1 --+ ... +-- 15 --+-- scales ---------+-- d ---+
 *   | P_0 | P_1 | P_2         |       |     |        | rows 0..15: 12x16 | 32 f16 |
 *   | steps 0, 1, 2 + step 3's bits        |        | rows 16..31: 12x16|        |
 *
 * The weight of value e of row r is d * (sc[e / 16] - 32) * (q - 4), sc the
 * stored 6-bit scale, as in Q3_K (whose value e has its low 2 bits at bits
 * 2 ((e % 128) / 32) of qs[32 (e / 128) + e % 32] and its high bit at bit e / 32
 * of hmask[e % 32], set meaning "no -4"). Kernels take the unsigned q against
 * the signed activations and the -4 once per sub-block from the activation
 * block sums (-4 * bsums[s]). Rows past `out` in the last tile are zero (q = 0,
 * scales 0, d = 0).
 *
 * Activations: PW_ACT_Q8_256 rows. Weight shape: in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_Q3KX_H
#define PACKWISE_KERNEL_Q3KX_H

#include "kernel/tile32.h"

#define PW__Q3KX_FAMILY "q3kx32k4"
#define PW__Q3KX_NR PW__TILE32_NR
#define PW__Q3KX_KR 4         /* k values per row per 64-byte step */
#define PW__Q3KX_RECORD 3520  /* bytes per (tile, block): 32 x 110 */
#define PW__Q3KX_SUB 192      /* bytes per sub-block of 16 values: 3 loads */
#define PW__Q3KX_SCALES 3072  /* offset of the packed scale bytes (12 x 32) */
#define PW__Q3KX_D 3456       /* offset of the fp16 d inside a record */
#define PW__Q3KX_VERSION 1

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q3KX_KERNEL(isa_, features_, run_, priority_)                               \
    PW__TILE32_KERNEL("q3_k", PW__Q3KX_FAMILY, PW_FORMAT_Q3_K, Q8_256, \
                      pw__q3kx_pack_plan, pw__q3kx_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q3KX_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                            \
    PW__TILE32_GEMM_KERNEL("q3_k", PW__Q3KX_FAMILY, PW_FORMAT_Q3_K, Q8_256,   \
                           pw__q3kx_pack_plan, pw__q3kx_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__q3kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q3kx_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q3kx_pack_plan, pw__q3kx_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * (block bytes), as the packer lays them out: the
 * input-block-major GEMM kernels' fill (kernel/tile32.h, pw__tile32_fill_ibm).
 * Portable C on 32-bit words; rec 4-byte aligned. */
void pw__q3kx_record_from_blocks(const uint8_t *src, uint8_t *rec);
#if defined(__x86_64__)
/* The same bytes made with AVX-512 F/BW (x86/q3kx_gemm_avx512.c: the input-block-major
 * GEMM's maker; callable where the CPU has AVX-512 F/BW/VL/VNNI, as that kernel). */
void pw__q3kx_record_from_blocks_avx512(const uint8_t *src, uint8_t *rec);
#endif

#endif
