/*
 * The tq2x32k4 packed family: TQ2_0 blocks with their bits rearranged for
 * SIMD GEMV and GEMM, 32 output rows per tile. It holds exactly the bytes of
 * the file's blocks (32 blocks of 66 bytes = one 2112-byte record), so a GEMV
 * over it reads as many bytes as one over the file; each 64-byte load of
 * quants holds two 4-value k steps of all 32 rows, each one mask (and for the
 * second one shift) away from an int8 dot product with one broadcast of 4
 * activation bytes.
 *
 * TQ2_0's 2-bit trits lie in its qs as Q2_K's quants do (bits 2 ((e % 128) / 32)
 * of qs[32 (e / 128) + e % 32]), so the quant bytes of a record are q2kx32k4's
 * (kernel/q2kx.h, the same packing code); TQ2_0 has no sub-block scales or mins,
 * only one fp16 d per block. A tile is in / 256 block records, one after another;
 * record b holds block b of the tile's 32 rows:
 *
 *   sub-block s (s = 0..15) at 128 s: two loads P_k (k = 0, 1) of 64 bytes at
 *   128 s + 64 k; its four k steps t = 4s + u (u = 0..3), values
 *   e = 4t + j = 16s + 4u + j (j = 0..3) of the block. Byte 128s + 64k + 4r + j
 *   (r = 0..15):
 *     bits 0-1: t[r,      16s + 4k + j]         (step u = k)
 *     bits 2-3: t[r,      16s + 4k + 8 + j]     (step u = k + 2)
 *     bits 4-5: t[r + 16, 16s + 4k + j]         (step u = k)
 *     bits 6-7: t[r + 16, 16s + 4k + 8 + j]     (step u = k + 2)
 *   so step u = k is P_k & 0x33 and step u = k + 2 is (P_k >> 2) & 0x33 (row r
 *   in the low nibble, row r + 16 in the high one); & 0x03 keeps row r alone.
 *   Step t's values are e = 4t .. 4t + 3: the 64 steps walk the block in order.
 *   [2048, 2112): fp16 d of rows 0..31 (each block's own, bit for bit)
 *
 *   +- sub-block 0 (128 B) -+-- 1 --+ ... +-- 15 --+-- d ---+
 *   | P_0       | P_1       |       |     |        | 32 f16 |
 *   | steps 0,2 | steps 1,3 |       |     |        |        |
 *
 * The weight of value e of row r is (t - 1) * d (t = 0..2 as ggml writes it; a
 * stored 3 reads as 2 d, as in the format's decode). Kernels take the whole block's
 * unsigned t against the signed activations in one integer sum, and the -1 once per
 * record from the activation block: y += d * x.d * (sum_e t x.qs[e] - x.sum). Rows
 * past `out` in the last tile are zero (t = 0, d = 0).
 *
 * Activations: PW_ACT_Q8_256 rows. Weight shape: in a multiple of 256.
 */
#ifndef PACKWISE_KERNEL_TQ2X_H
#define PACKWISE_KERNEL_TQ2X_H

#include "kernel/q2kx.h"
#include "kernel/tile32.h"

#define PW__TQ2X_FAMILY "tq2x32k4"
#define PW__TQ2X_NR PW__TILE32_NR
#define PW__TQ2X_KR 4         /* k values per row per step */
#define PW__TQ2X_RECORD 2112  /* bytes per (tile, block): 32 x 66 */
#define PW__TQ2X_SUB 128      /* bytes per 16 values: 2 loads (PW__Q2KX_SUB) */
#define PW__TQ2X_D 2048       /* offset of the fp16 d of the 32 rows */
#define PW__TQ2X_VERSION 1

_Static_assert(PW__TQ2X_SUB == PW__Q2KX_SUB && PW__TQ2X_D == PW__Q2KX_SCALES,
               "tq2x32k4's quant bytes are q2kx32k4's");

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__TQ2X_KERNEL(isa_, features_, run_, priority_)                                  \
    PW__TILE32_KERNEL("tq2_0", PW__TQ2X_FAMILY, PW_FORMAT_TQ2_0, Q8_256, pw__tq2x_pack_plan, \
                      pw__tq2x_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__TQ2X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                            \
    PW__TILE32_GEMM_KERNEL("tq2_0", PW__TQ2X_FAMILY, PW_FORMAT_TQ2_0, Q8_256,                 \
                           pw__tq2x_pack_plan, pw__tq2x_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__tq2x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__tq2x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__tq2x_pack_plan, pw__tq2x_pack)

/* One record of the family made from the 32 blocks of a tile's rows at one block
 * column, row r's at src + r * 66, as the packer lays them out: the input-block-major
 * GEMM kernels' fill (kernel/tile32.h, pw__tile32_fill_ibm). Portable C. */
void pw__tq2x_record_from_blocks(const uint8_t *src, uint8_t *rec);
#if defined(__x86_64__)
/* The same bytes made with AVX-512 F/BW (x86/tq2x_avx512.c: the input-block-major GEMM's
 * maker; callable where the CPU has AVX-512 F/BW/VL/VNNI, as that kernel). */
void pw__tq2x_record_from_blocks_avx512(const uint8_t *src, uint8_t *rec);
#endif

#endif
