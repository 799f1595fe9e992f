/*
 * The i8g packed family: any integer block format re-expressed as int8
 * values with one f32 scale (and, for formats with a minimum, one f32 min)
 * per group of G input values, tiled for int8 dot-product instructions.
 * One family serves the GEMM path of every integer format on every ISA
 * (scalar, AVX2, AVX-512 VNNI, NEON dotprod): the weight is decoded to
 * integers once, at pack time, never per row of X.
 *
 *   w[o, k] = scale[o, g] * q[o, k] + min[o, g]      g = k / G
 *
 * Family names: "i8g32x16k4" (G = 32) and "i8g16x16k4" (G = 16); nr = 16
 * output rows per tile, kr = 4 consecutive k values per row per step.
 * A tile holds in_padded / G group records, one after another:
 *
 *   q      G/4 steps x 16 rows x 4 bytes   int8, step s row r = q[r, 4s .. 4s+3]
 *   corr   int32[16]   -128 * sum(q[r, group]): lets VNNI pair u8 (x + 128) with s8 q
 *   scale  f32[16]
 *   min    f32[16]     only for formats with a minimum (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K)
 *
 *   +--------- step 0 ---------+--------- step 1 ---------+ ... +-corr-+-scale-+(-min-)+
 *   | r0:k0..3 r1:k0..3 .. r15 | r0:k4..7 ...             |     |      |       |       |
 *
 * Rows past `out` in the last tile are zero (q = 0, scale = 0, min = 0).
 * G = 32 formats pair with PW_ACT_Q8_32 activations (one scale per group);
 * G = 16 formats (Q2_K, Q3_K, Q6_K) with PW_ACT_Q8_256 (one scale per 256,
 * sums per 16). *
 * Memory. The form is larger than the file: per row and group, G int8 bytes
 * plus 8 bytes of corr and scale (12 with a min), against the file's block
 * bytes: 40 / 18 = 2.2x for Q4_0, 40 / 34 = 1.18x for Q8_0, 44 / 18 = 2.4x
 * for Q4_K, 24 / 13.1 = 1.8x for Q6_K (G = 16). So the operator's compact
 * policy (weight.h: one form for every batch size, at most the file's bytes
 * + 3%) never holds it; only `fastest` does. Under compact, GEMM reads instead:
 *   Q4_0, Q4_K, Q6_K   their 32-row tilings (q4x.h, q4kx.h, q6kx.h), the
 *                      file's bytes rearranged, which the GEMV kernels read too;
 *   every other format the file's bytes in place, through its row-major kernel
 *                      (AVX2 and up on x86, NEON dotprod on Arm; the reference
 *                      kernel at the scalar and plain NEON levels, which have none).
 * A tiling at the file's size is possible for each of the others (the same
 * rearrangement of whole blocks); it is worth writing where a model's weights
 * are of that format and a measurement shows GEMM over it beating the
 * row-major kernel by enough: Q8_0 first (the common 8-bit format).
 */
#ifndef PACKWISE_KERNEL_I8G_H
#define PACKWISE_KERNEL_I8G_H

#include "kernel/kernel.h"

#define PW__I8G_NR 16
#define PW__I8G_KR 4
#define PW__I8G_VERSION 1

/* Group size, whether the format has a min, and the activation form; 0 when the
 * format has no i8g form (float formats, Q8_1, Q8_K). */
int pw__i8g_group(pw_format f, int *has_min, pw_activation *act);

/* Split one block into int8 values (block_size), scales and mins (block_size / G). */
void pw__i8g_split(pw_format f, const void *block, int8_t *q, float *scale, float *min);

/* Bytes of one group record. */
static inline uint64_t pw__i8g_group_bytes(int group, int has_min) {
    return (uint64_t)group * PW__I8G_NR + 64u + 64u + (has_min ? 64u : 0u);
}

pw_status pw__i8g_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *desc);
void pw__i8g_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                  uint8_t *dst);
PW__VIEW_PACKER(pw__i8g_pack_plan, pw__i8g_pack)

/* The portable kernel over the family (any G, with or without min). */
void pw__i8g_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1);

#endif
