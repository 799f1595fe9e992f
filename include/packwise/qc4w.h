/**
 * @file qc4w.h
 * @brief QC4W weights: per-channel int4 weights with dynamic int8 (QD8)
 *        activations, bias and clamp, as one more weight kind of the operator
 *        (weight.h).
 *
 * A QC4W weight is N output channels by K input channels of int4 values
 * with one f32 scale per channel and an optional f32 bias per channel:
 *
 *     w_real[n, k] = scale[n] * w[n, k]              w[n, k] in -8 .. 7
 *
 * The model's (raw) form is described by ::pw_qc4w_weights: N rows of
 * ceil(K / 2) bytes, two values per byte along K, the low nibble holding the
 * even k. The nibble encodes w[n, k] either as a signed two's-complement int4
 * (kernel zero point 0) or as an unsigned 0..15 from which 8 is subtracted
 * (kernel zero point 8). A transposed source (::PW_QC4W_TRANSPOSED: K rows
 * of ceil(N / 2) bytes, nibbles paired along N) is accepted too; it is
 * converted to N x K, nibble by nibble, before packing.
 *
 * pw_weight_create_qc4w() packs the weight once for the best kernel the
 * context allows (tiles of nr channels, K in kr-value chunks interleaved
 * across the tile, weight sums, scales and bias after each tile; the layout
 * belongs to the kernel family and is never read by another family). Each
 * run quantizes every row of X to int8 with its own scale and zero point
 * (QD8: the row's min and max, zero exactly representable) and computes
 *
 *     y[i, n] = clamp((sum_k (a[i, k] - zp[i]) * w[n, k]) * (a_scale[i] * scale[n]) + bias[n],
 *                     min, max)
 *
 * with an exact integer sum, then f32 steps in that order, each rounded (the
 * product, then the bias added): with scales so large that the product passes
 * FLT_MAX (about 1e37 and up), y is infinite even where adding the bias would
 * have brought it back into range. Weights created over the same raw weights with
 * one ::pw_cache (cache.h) share one packed copy; the cache's key is a hash of
 * the raw weights (nibbles, scales, bias, shape, zero point, flags) and the
 * packer's identity.
 */
#ifndef PACKWISE_QC4W_H
#define PACKWISE_QC4W_H

#include "packwise/base.h"
#include "packwise/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flags of ::pw_qc4w_weights. */
enum pw_qc4w_flag {
    /** data is K rows of ceil(N / 2) bytes, nibbles paired along N (low nibble = even n) */
    PW_QC4W_TRANSPOSED = 1u << 0
};

/**
 * Raw QC4W weights, as the model holds them. Every pointer is borrowed and
 * only read, and only during pw_weight_create_qc4w(). Initialise with
 * pw_qc4w_weights_init(); new fields are only ever appended.
 */
typedef struct pw_qc4w_weights {
    size_t struct_size;  /**< sizeof(pw_qc4w_weights), set by init */
    int64_t out;         /**< N: output channels (elements), >= 1 */
    int64_t in;          /**< K: input channels (elements), >= 1; odd K is fine */
    const uint8_t *data; /**< N x ceil(K/2) bytes (K x ceil(N/2) when transposed); the unused
                              high nibble at the end of an odd-length row is ignored */
    const float *scale;  /**< N finite per-channel scales */
    const float *bias;   /**< N finite biases, or NULL for none */
    int32_t zero_point;  /**< 0: nibbles are signed -8..7; 8: nibbles are 0..15, value - 8 */
    uint32_t flags;      /**< bitwise OR of ::pw_qc4w_flag */
    const char *name;    /**< for messages and trace events; may be NULL */
} pw_qc4w_weights;

/** Zero everything and set struct_size. */
PW_API void pw_qc4w_weights_init(pw_qc4w_weights *weights);

/**
 * Plan a weight over raw QC4W weights (weight.h) and pack it once, now: the
 * raw arrays are borrowed only during this call. Refused, with a message
 * naming the field: N or K of zero or negative, a zero point other than 0 or
 * 8, unknown flags, a NaN or infinite scale or bias (the first bad channel is
 * named), NULL data or scale, a size that overflows, options.bias together
 * with weights->bias, ::PW_MEMORY_IN_PLACE (nothing reads raw QC4W weights).
 * Trace events: the kernel chosen, the transposed source's conversion and
 * the packing (adapter, with bytes), the cache's hit or miss.
 */
PW_API pw_status pw_weight_create_qc4w(pw_context *ctx, const pw_qc4w_weights *weights,
                                       const pw_weight_options *options, pw_weight **out);

#ifdef __cplusplus
}
#endif
#endif
