/*
 * The i8g32x8k8 packed family: the i8g idea (integer formats re-expressed as
 * int8 values with one f32 scale, and one f32 min where the format has one,
 * per group of 32 input values; see kernel/i8g.h) tiled for the Arm i8mm
 * SMMLA instruction, which multiplies a 2x8 int8 matrix by an 8x2 one into a
 * 2x2 int32 tile. Its operands want rows paired and k interleaved by 8, so a
 * tile holds nr = 8 output rows and each step kr = 8 k values:
 *
 *   w[o, k] = scale[o, g] * q[o, k] + min[o, g]      g = k / 32
 *
 * A tile is in / 32 group records, one after another (in is whole blocks,
 * so whole groups). One record, 288 bytes (320 with min):
 *
 *   q      4 steps x 64 B, step s = k 8s .. 8s+7 of the group:
 *
 *          +----- 16 B -----+----- 16 B -----+----- 16 B -----+----- 16 B -----+
 *          | r0 k0-7 r1 k0-7| r2 k0-7 r3 k0-7| r4 k0-7 r5 k0-7| r6 k0-7 r7 k0-7|
 *          +----------------+----------------+----------------+----------------+
 *            pair 0            pair 1            pair 2            pair 3
 *          byte 64s + 16p + 8h + u = q[2p + h, 8s + u] (int8)
 *          Each 16-byte pair is one SMMLA operand (2 rows x 8 k, row-major).
 *
 *   scale  f32[8]   at byte 256
 *   min    f32[8]   at byte 288, only for formats with a minimum (Q4_1, Q5_1, Q4_K, Q5_K)
 *
 * Rows past `out` in the last tile are zero (q = 0, scale = 0, min = 0).
 * Activations are PW_ACT_Q8_32 rows; kernels pair two rows of X in
 * registers (8 bytes of each) to make the other SMMLA operand.
 */
#ifndef PACKWISE_KERNEL_ARM_I8MM_PACK_H
#define PACKWISE_KERNEL_ARM_I8MM_PACK_H

#include "kernel/kernel.h"

#define PW__I8MM_FAMILY "i8g32x8k8"
#define PW__I8MM_NR 8
#define PW__I8MM_KR 8
#define PW__I8MM_GROUP 32
#define PW__I8MM_VERSION 1

/* Bytes of one group record. */
static inline uint64_t pw__i8mm_group_bytes(int has_min) {
    return (uint64_t)PW__I8MM_GROUP * PW__I8MM_NR + 32u + (has_min ? 32u : 0u);
}

/* The family's form of `format`: its i8g group must be 32 (PW_ERR_UNSUPPORTED otherwise). */
pw_status pw__i8mm_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__i8mm_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__i8mm_pack_plan, pw__i8mm_pack)

#endif
