/*
 * The q2kx32k4 packed family: Q2_K blocks with their bits rearranged for
 * SIMD GEMV and GEMM, 32 output rows per tile. It holds exactly the bytes of
 * the file's blocks (32 blocks of 84 bytes = one 2688-byte record), so a GEMV
 * over it reads as many bytes as one over the file; but each 64-byte load of
 * quants holds two 4-value k steps of all 32 rows, each one mask (and for the
 * second one shift) away from an int8 dot product with one broadcast of 4
 * activation bytes: no per-row gathering or permuting, as a row-major kernel
 * needs.
 *
 * A tile is in / 256 block records, one after another. Record b holds block
 * b of the tile's 32 rows. Its 16 sub-blocks (16 values each, one 4-bit scale
 * and one 4-bit min per row) come first, 128 bytes each, in k order; then the
 * scale bytes, then d, then dmin:
 *
 *   sub-block s (s = 0..15) at 128 s: two loads P_k (k = 0, 1) of 64 bytes at
 *   128 s + 64 k; its four k steps t = 4s + u (u = 0..3), values
 *   e = 4t + j = 16s + 4u + j (j = 0..3) of the block. Byte 128s + 64k + 4r + j
 *   (r = 0..15):
 *     bits 0-1: q[r,      16s + 4k + j]         (step u = k)
 *     bits 2-3: q[r,      16s + 4k + 8 + j]     (step u = k + 2)
 *     bits 4-5: q[r + 16, 16s + 4k + j]         (step u = k)
 *     bits 6-7: q[r + 16, 16s + 4k + 8 + j]     (step u = k + 2)
 *   so step u = k is P_k & 0x33 and step u = k + 2 is (P_k >> 2) & 0x33 (row r
 *   in the low nibble, row r + 16 in the high one); & 0x03 keeps row r alone.
 *   [2048, 2560): the scale bytes as the file has them (low nibble the scale,
 *                 high nibble the min), byte 2048 + 32 s + r = scales[s] of row r
 *                 (the 32 rows of one sub-block side by side, rows 0..15 first)
 *   [2560, 2624): fp16 d    of rows 0..31 (each block's own, bit for bit)
 *   [2624, 2688): fp16 dmin of rows 0..31
 *
 *   +- sub-block 0 (128 B) -+-- 1 --+ ... +-- 15 --+-- scales --+-- d ---+-- dmin -+
 *   | P_0       | P_1       |       |     |        | 16 x 32 u8 | 32 f16 | 32 f16  |
 *   | steps 0,2 | steps 1,3 |       |     |        | sc | m << 4|        |         |
 *
 * The weight of value e of row r is d * sc[e / 16] * q - dmin * m[e / 16] as in
 * Q2_K (q = 0..3, the file's 2 bits at bits 2 ((e % 128) / 32) of
 * qs[32 (e / 128) + e % 32]; sc, m = 0..15). Kernels take the unsigned q
 * against the signed activations, sub-block by sub-block, and the mins once per
 * record from the activation block sums: -dmin * sum_s m[s] * bsums[s]. Rows
 * past `out` in the last tile are zero (q = 0, scales 0, d = dmin = 0).
 *
 * Activations: PW_ACT_Q8_256 rows. Weight shape: in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_Q2KX_H
#define PACKWISE_KERNEL_Q2KX_H

#include "kernel/tile32.h"

#define PW__Q2KX_FAMILY "q2kx32k4"
#define PW__Q2KX_NR PW__TILE32_NR
#define PW__Q2KX_KR 4         /* k values per row per step */
#define PW__Q2KX_RECORD 2688  /* bytes per (tile, block): 32 x 84 */
#define PW__Q2KX_SUB 128      /* bytes per sub-block of 16 values: 2 loads */
#define PW__Q2KX_SCALES 2048  /* offset of the scale bytes (16 x 32) */
#define PW__Q2KX_D 2560       /* offset of the fp16 d of the 32 rows */
#define PW__Q2KX_DMIN 2624    /* offset of the fp16 dmin of the 32 rows */
#define PW__Q2KX_VERSION 1

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__Q2KX_KERNEL(isa_, features_, run_, priority_)                               \
    PW__TILE32_KERNEL("q2_k", PW__Q2KX_FAMILY, PW_FORMAT_Q2_K, Q8_256, \
                      pw__q2kx_pack_plan, pw__q2kx_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__Q2KX_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                            \
    PW__TILE32_GEMM_KERNEL("q2_k", PW__Q2KX_FAMILY, PW_FORMAT_Q2_K, Q8_256,   \
                           pw__q2kx_pack_plan, pw__q2kx_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__q2kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__q2kx_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__q2kx_pack_plan, pw__q2kx_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * (block bytes), as the packer lays them out: the
 * input-block-major GEMM kernels' fill (kernel/tile32.h, pw__tile32_fill_ibm).
 * Portable C on 32-bit words; rec 4-byte aligned. */
void pw__q2kx_record_from_blocks(const uint8_t *src, uint8_t *rec);
#if defined(__x86_64__)
/* The same bytes made with AVX-512 F/BW (x86/q2kx_gemm_avx512.c: the input-block-major
 * GEMM's maker; callable where the CPU has AVX-512 F/BW/VL/VNNI, as that kernel). */
void pw__q2kx_record_from_blocks_avx512(const uint8_t *src, uint8_t *rec);
#endif

/* The quant bytes [0, 2048) of a record, shared with tq2x32k4 (kernel/tq2x.h: TQ2_0's
 * qs lie as Q2_K's, 2 bits per value at bits 2 ((e % 128) / 32) of qs[32 (e / 128) +
 * e % 32]). pw__q2kx_place_quants ORs row r's 256 quants, from its block's 64 qs bytes,
 * into a zeroed record (the packers); pw__q2kx_record_quants writes all 2048 bytes
 * from the 32 rows' qs, row r's at qs + r * bb (the record makers). */
void pw__q2kx_place_quants(const uint8_t qs[64], int r, uint8_t *rec);
void pw__q2kx_record_quants(const uint8_t *qs, size_t bb, uint8_t *rec);

#endif
