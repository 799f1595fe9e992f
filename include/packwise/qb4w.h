/**
 * @file qb4w.h
 * @brief QB4W weights: blockwise int4 weights (one scale, and optionally one
 *        zero point, per block of K values along each row) with dynamic int8
 *        (QD8) activations, bias and clamp, as one more weight kind of the
 *        operator (weight.h).
 *
 * This is the int4 form of ONNX Runtime's `MatMulNBits` (bits = 4), of GPTQ
 * and AWQ exports, of XNNPACK's `qb4w` and KleidiAI's `qsi4c32p` kernels.
 * A QB4W weight is N output channels by K input channels, cut along K into
 * blocks of B values (B a power of two from 16 to 256; the last block may be
 * partial), with per block b = k / B of row n a scale s[n, b] and a zero
 * point z[n, b]:
 *
 *     w_real[n, k] = s[n, b] * (u[n, k] - z[n, b])     u in 0 .. 15, z in 0 .. 15
 *
 * The model's (raw) form, ::pw_qb4w_weights:
 * - data: N rows of ceil(K / 2) bytes, two values per byte along K, the low
 *   nibble holding the even k (as QC4W and MatMulNBits; a MatMulNBits `B`
 *   input of shape [N, n_blocks, B / 2] is this when K is a multiple of B,
 *   else each row is cut to ceil(K / 2) bytes). A transposed source
 *   (::PW_QB4W_TRANSPOSED: K rows of ceil(N / 2) bytes, nibbles paired along
 *   N) is converted to N x K, nibble by nibble, before packing; scales and
 *   zero points are N x n_blocks in either case.
 * - scales: N x n_blocks values, row n's blocks contiguous (n_blocks =
 *   ceil(K / B)), as f32, f16 or bf16 (::pw_dtype); finite.
 * - zero points, one of (::pw_qb4w_zero):
 *   ::PW_QB4W_ZERO_CONST  one constant for every block: 8 (nibbles are
 *                         unsigned, value - 8: MatMulNBits without
 *                         zero_points, GGUF Q4_0) or 0 (nibbles are signed
 *                         two's-complement int4, as QC4W's zero point 0);
 *   ::PW_QB4W_ZERO_U4     4 bits per block, N rows of ceil(n_blocks / 2)
 *                         bytes, the low nibble holding the even block
 *                         (MatMulNBits' packed uint8 zero_points);
 *   ::PW_QB4W_ZERO_U8     one byte per block, N x n_blocks, each 0 .. 15
 *                         (a larger one is refused: u - z must fit the int8
 *                         the kernels multiply).
 * - bias: N finite values, or NULL.
 *
 * pw_weight_create_qb4w() packs the weight once for the best kernel the
 * context allows (kernel/qb4w.h in the sources describes the tiles). Each run
 * quantizes every row of X to int8 with its own scale and zero point (QD8, as
 * for QC4W) and computes, per block, an exact integer sum and then f32 steps
 * in a fixed order (no fused multiply-add), so that every kernel on every ISA
 * gives the same bits:
 *
 *     isum[m, n, b] = sum_{k in block b} (q[m, k] - zp[m]) * (u[n, k] - z[n, b])
 *     acc = 0;  for b in order: acc = acc + (float)isum[m, n, b] * s[n, b]
 *     y[m, n] = clamp(acc * a_scale[m] + bias[n], min, max)
 *
 * Weights created over the same raw weights with one ::pw_cache share one
 * packed copy; its key hashes the raw weights (nibbles, scales as given,
 * zero points, bias, shape, block size, flags) and the packer's identity.
 */
#ifndef PACKWISE_QB4W_H
#define PACKWISE_QB4W_H

#include "packwise/base.h"
#include "packwise/view.h"
#include "packwise/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flags of ::pw_qb4w_weights. */
enum pw_qb4w_flag {
    /** data is K rows of ceil(N / 2) bytes, nibbles paired along N (low nibble = even n);
     *  scales and zero points stay N x n_blocks */
    PW_QB4W_TRANSPOSED = 1u << 0
};

/** How the zero points of ::pw_qb4w_weights are given. No kind is 0: a descriptor whose
 *  zero points were never named is refused, not read with a zero point that may be wrong
 *  (signed against unsigned nibbles give finite, plausible, wrong products). */
typedef enum pw_qb4w_zero {
    PW_QB4W_ZERO_CONST = 1, /**< zero_point (0 or 8) for every block; zero_points unused */
    PW_QB4W_ZERO_U4 = 2,    /**< zero_points: N rows of ceil(n_blocks / 2) bytes, 4 bits each,
                                 low nibble = even block */
    PW_QB4W_ZERO_U8 = 3     /**< zero_points: N x n_blocks bytes, each 0 .. 15 */
} pw_qb4w_zero;

/**
 * Raw QB4W weights, as the model holds them. Every pointer is borrowed and
 * only read, and only during pw_weight_create_qb4w(). Initialise with
 * pw_qb4w_weights_init(); new fields are only ever appended.
 */
typedef struct pw_qb4w_weights {
    size_t struct_size;         /**< sizeof(pw_qb4w_weights), set by init */
    int64_t out;                /**< N: output channels, >= 1 */
    int64_t in;                 /**< K: input channels, >= 1 (odd K and a partial last block
                                     are fine) */
    int32_t block_size;         /**< B: values per block along K, a power of two, 16 .. 256 */
    const uint8_t *data;        /**< N x ceil(K/2) bytes (K x ceil(N/2) when transposed) */
    const void *scales;         /**< N x ceil(K/B) finite scales of type scale_type */
    pw_dtype scale_type;        /**< PW_DTYPE_F32, PW_DTYPE_F16 or PW_DTYPE_BF16 */
    pw_qb4w_zero zero_kind;     /**< how the zero points are given; required (0 is refused) */
    int32_t zero_point;         /**< ::PW_QB4W_ZERO_CONST: 8 (unsigned nibbles) or 0 (signed) */
    const uint8_t *zero_points; /**< ::PW_QB4W_ZERO_U4 / ::PW_QB4W_ZERO_U8; else NULL */
    const float *bias;          /**< N finite biases, or NULL for none */
    uint32_t flags;             /**< bitwise OR of ::pw_qb4w_flag */
    const char *name;           /**< for messages and trace events; may be NULL */
} pw_qb4w_weights;

/** Zero everything and set struct_size; scale_type becomes F32 (its zero value). The zero
 *  points are left unnamed: set zero_kind (and zero_point or zero_points). */
PW_API void pw_qb4w_weights_init(pw_qb4w_weights *weights);

/** Blocks per row, ceil(K / B) (0 when B is not positive). */
PW_API int64_t pw_qb4w_blocks(const pw_qb4w_weights *weights);

/**
 * Plan a weight over raw QB4W weights (weight.h) and pack it once, now: the
 * raw arrays are borrowed only during this call. Refused, with a message
 * naming the field: N or K below 1, a block size that is not a power of two
 * in 16 .. 256, an unknown scale type or zero-point kind, a constant zero
 * point other than 0 or 8, a U8 zero point above 15 (the first is named),
 * unknown flags, a NaN or infinite scale or bias (the first is named), NULL
 * data, scales or (U4/U8) zero_points, a size that overflows, options.bias
 * together with weights->bias, ::PW_MEMORY_IN_PLACE (nothing reads raw QB4W
 * weights), K above the chosen kernel's exact range. Trace events: the
 * kernel chosen, the transposed source's conversion and the packing (adapter,
 * with bytes), the cache's hit or miss.
 */
PW_API pw_status pw_weight_create_qb4w(pw_context *ctx, const pw_qb4w_weights *weights,
                                       const pw_weight_options *options, pw_weight **out);

/**
 * GGUF Q4_0 as QB4W, exactly: a Q4_0 block is 32 unsigned nibbles with an
 * f16 scale and the implied zero point 8, so a [N, K] Q4_0 view (any order,
 * view.h) is a QB4W weight with B = 32, f16 scales and ::PW_QB4W_ZERO_CONST 8.
 * Writes N x K/2 bytes of nibbles in QB4W's order (low nibble = even k;
 * Q4_0 keeps k and k + 16 in one byte) to @p data and N x K/32 f16 scales to
 * @p scales, and fills @p weights to describe them (name from the view). K
 * must be a multiple of 32 (it always is for Q4_0). Refused: a view that is
 * not Q4_0 or not 2-D, buffers of the wrong size (@p data_bytes,
 * @p scales_count).
 */
PW_API pw_status pw_qb4w_from_q4_0(pw_context *ctx, const pw_view *q4_0, uint8_t *data,
                                   size_t data_bytes, uint16_t *scales, size_t scales_count,
                                   pw_qb4w_weights *weights);

#ifdef __cplusplus
}
#endif
#endif
