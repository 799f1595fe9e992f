/**
 * @file format.h
 * @brief Block formats: the traits table, decode and reference quantize.
 *
 * A format stores a run of @c block_size consecutive elements (along the
 * input dimension of a weight) in @c block_bytes bytes. Byte layouts are
 * exactly those of GGUF files as written by ggml; decode reproduces ggml's
 * dequantization bit for bit (see tests/test_format_ggml.c). Each format has a
 * deterministic reference quantizer: the same floats give the same bytes on
 * every ISA and every build.
 */
#ifndef PACKWISE_FORMAT_H
#define PACKWISE_FORMAT_H

#include "packwise/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Every format packwise reads. Values are stable; new formats are appended. */
typedef enum pw_format {
    PW_FORMAT_F32 = 0,
    PW_FORMAT_F16 = 1,
    PW_FORMAT_BF16 = 2,
    PW_FORMAT_Q4_0 = 3,
    PW_FORMAT_Q4_1 = 4,
    PW_FORMAT_Q5_0 = 5,
    PW_FORMAT_Q5_1 = 6,
    PW_FORMAT_Q8_0 = 7,
    PW_FORMAT_Q8_1 = 8,
    PW_FORMAT_Q2_K = 9,
    PW_FORMAT_Q3_K = 10,
    PW_FORMAT_Q4_K = 11,
    PW_FORMAT_Q5_K = 12,
    PW_FORMAT_Q6_K = 13,
    PW_FORMAT_Q8_K = 14,
    PW_FORMAT_IQ4_NL = 15,
    PW_FORMAT_TQ1_0 = 16,
    PW_FORMAT_TQ2_0 = 17,
    PW_FORMAT_COUNT = 18 /**< number of formats; not a format */
} pw_format;

/** Public traits of a format. */
typedef struct pw_format_info {
    pw_format format;    /**< the format these traits describe */
    const char *name;    /**< upper-case name as in GGUF documentation: "Q4_K" */
    int32_t gguf_type;   /**< GGUF/ggml type id, or -1 where GGUF has none */
    int32_t block_size;  /**< elements per block (1 for F32/F16/BF16) */
    int32_t block_bytes; /**< bytes per block */
} pw_format_info;

/** Traits of @p format, or NULL when @p format is not a ::pw_format. */
PW_API const pw_format_info *pw_format_get(pw_format format);

/** Bits per weight: 8 * block_bytes / block_size (0 for an unknown format). */
PW_API double pw_format_bits_per_weight(pw_format format);

/** Find a format by name, case-insensitively ("q4_k", "Q4_K", "iq4_nl"). */
PW_API pw_status pw_format_from_name(const char *name, pw_format *out);

/** Find a format by GGUF type id. ::PW_ERR_UNSUPPORTED when packwise has none. */
PW_API pw_status pw_format_from_gguf_type(uint32_t gguf_type, pw_format *out);

/**
 * Bytes taken by @p elements elements: elements / block_size * block_bytes.
 * ::PW_ERR_SHAPE when @p elements is not a whole number of blocks,
 * ::PW_ERR_OVERFLOW when the product does not fit.
 */
PW_API pw_status pw_format_row_bytes(pw_context *ctx, pw_format format, int64_t elements,
                                     uint64_t *bytes);

/**
 * Decode @p blocks consecutive blocks to floats.
 * @param ctx    context for the failure message
 * @param format the blocks' format
 * @param src    blocks * block_bytes bytes, any alignment
 * @param blocks number of blocks
 * @param dst    blocks * block_size floats
 */
PW_API pw_status pw_format_decode(pw_context *ctx, pw_format format, const void *src,
                                  size_t blocks, float *dst);

/**
 * Quantize blocks * block_size floats into @p blocks blocks with the format's
 * deterministic reference quantizer (no importance matrix). Non-finite input
 * is refused with ::PW_ERR_INVALID_ARGUMENT and nothing is written.
 */
PW_API pw_status pw_format_quantize(pw_context *ctx, pw_format format, const float *src,
                                    size_t blocks, void *dst);

/**
 * Write @p blocks random but valid blocks of @p format (the same @p seed gives
 * the same bytes): every quant field random, every scale a small positive
 * finite value (0.001 to 0.011), so that decoded weights and products are
 * finite. For load, memory and speed measurements at real shapes, where
 * quantizing floats would take longer than the measurement. Formats: Q4_0,
 * Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL (::PW_ERR_UNSUPPORTED for the others).
 */
PW_API pw_status pw_format_synthesize(pw_context *ctx, pw_format format, void *dst, size_t blocks,
                                      uint64_t seed);

/** IEEE half to float, exactly. */
PW_API float pw_f16_to_f32(uint16_t h);
/** Float to IEEE half, round to nearest even (NaN stays NaN). */
PW_API uint16_t pw_f32_to_f16(float f);
/** bfloat16 to float, exactly. */
PW_API float pw_bf16_to_f32(uint16_t h);
/** Float to bfloat16, round to nearest even (NaN stays NaN, as ggml does). */
PW_API uint16_t pw_f32_to_bf16(float f);

#ifdef __cplusplus
}
#endif
#endif
