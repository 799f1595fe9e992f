/*
 * The iq4x32k4 packed family: IQ4_NL blocks in the q4x32k4 layout (kernel/q4x.h),
 * byte for byte: an IQ4_NL block is a Q4_0 block whose nibbles index a codebook
 * (pw__iq4nl_values: -127 .. 113) instead of standing for q - 8, so its record is
 * Q4_0's: steps s = 0..7 at [64s, 64s + 64) (byte 64s + 4r + j: element 4s + j of
 * row r low, of row r + 16 high), then the 32 rows' fp16 d at [512, 576). 576 bytes
 * = 32 blocks of 18. Before it, IQ4_NL had no packed form and the compact policy ran
 * the row-major kernels for every n.
 *
 * Kernels map each nibble through the codebook with a byte shuffle (vpshufb, TBL):
 * x86 to codebook + 128 (1 .. 241, the unsigned side of vpdpbusd; -128 * the
 * activation block's sum once per block), AVX2 to its magnitude with the sign moved
 * onto the activations (vpsignb: vpmaddubsw's pairs of 241 x 127 would saturate),
 * NEON to the signed value itself (SDOT is signed x signed).
 *
 * Activations: PW_ACT_Q8_32 rows. Weight shape: in a multiple of 32.
 */
#ifndef PACKWISE_KERNEL_IQ4X_H
#define PACKWISE_KERNEL_IQ4X_H

#include "kernel/q4x.h"

#define PW__IQ4X_FAMILY "iq4x32k4"
#define PW__IQ4X_VERSION 1

/* A kernel of the family: what it reads, once for every ISA. */
#define PW__IQ4X_KERNEL(isa_, features_, run_, priority_)                             \
    PW__TILE32_KERNEL("iq4_nl", PW__IQ4X_FAMILY, PW_FORMAT_IQ4_NL, Q8_32, \
                      pw__iq4x_pack_plan, pw__iq4x_pack, isa_, features_, run_, priority_)
/* A GEMM kernel of the family: mr_ rows of X per pass over a record. */
#define PW__IQ4X_GEMM_KERNEL(isa_, features_, run_, priority_, mr_)                             \
    PW__TILE32_GEMM_KERNEL("iq4_nl", PW__IQ4X_FAMILY, PW_FORMAT_IQ4_NL, Q8_32,     \
                           pw__iq4x_pack_plan, pw__iq4x_pack, isa_, features_, run_, priority_, \
                           mr_)

pw_status pw__iq4x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *desc);
void pw__iq4x_pack(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst);
PW__VIEW_PACKER(pw__iq4x_pack_plan, pw__iq4x_pack)

/* A record made from the 32 blocks of a column: pw__q4x_record_from_blocks (the blocks
 * are laid out alike). */

#endif
