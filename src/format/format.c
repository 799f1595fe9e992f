/*
 * The format traits table and the public format API: lookup by enum, name
 * and GGUF type id, row sizes, decode/quantize entry points with argument
 * checks, and the scalar half/bfloat16 conversions.
 */
#include "format/blocks.h"
#include "format/format_internal.h"
#include "base/internal.h"

#include <math.h>

const int8_t pw__iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

#define PW__ENTRY(fmt, str, gguf, bsize, bytes, fn)                                          \
    [fmt] = {.info = {.format = fmt,                                                         \
                      .name = str,                                                           \
                      .gguf_type = gguf,                                                     \
                      .block_size = bsize,                                                   \
                      .block_bytes = bytes},                                                 \
             .decode = pw__decode_##fn,                                                      \
             .quantize = pw__quantize_##fn}

/* GGUF type ids are those of ggml's enum ggml_type. */
const pw__format_traits pw__format_table[PW_FORMAT_COUNT] = {
    PW__ENTRY(PW_FORMAT_F32, "F32", 0, 1, 4, f32),
    PW__ENTRY(PW_FORMAT_F16, "F16", 1, 1, 2, f16),
    PW__ENTRY(PW_FORMAT_BF16, "BF16", 30, 1, 2, bf16),
    PW__ENTRY(PW_FORMAT_Q4_0, "Q4_0", 2, PW__QK4_0, sizeof(pw__block_q4_0), q4_0),
    PW__ENTRY(PW_FORMAT_Q4_1, "Q4_1", 3, PW__QK4_1, sizeof(pw__block_q4_1), q4_1),
    PW__ENTRY(PW_FORMAT_Q5_0, "Q5_0", 6, PW__QK5_0, sizeof(pw__block_q5_0), q5_0),
    PW__ENTRY(PW_FORMAT_Q5_1, "Q5_1", 7, PW__QK5_1, sizeof(pw__block_q5_1), q5_1),
    PW__ENTRY(PW_FORMAT_Q8_0, "Q8_0", 8, PW__QK8_0, sizeof(pw__block_q8_0), q8_0),
    PW__ENTRY(PW_FORMAT_Q8_1, "Q8_1", 9, PW__QK8_1, sizeof(pw__block_q8_1), q8_1),
    PW__ENTRY(PW_FORMAT_Q2_K, "Q2_K", 10, PW__QK_K, sizeof(pw__block_q2_K), q2_K),
    PW__ENTRY(PW_FORMAT_Q3_K, "Q3_K", 11, PW__QK_K, sizeof(pw__block_q3_K), q3_K),
    PW__ENTRY(PW_FORMAT_Q4_K, "Q4_K", 12, PW__QK_K, sizeof(pw__block_q4_K), q4_K),
    PW__ENTRY(PW_FORMAT_Q5_K, "Q5_K", 13, PW__QK_K, sizeof(pw__block_q5_K), q5_K),
    PW__ENTRY(PW_FORMAT_Q6_K, "Q6_K", 14, PW__QK_K, sizeof(pw__block_q6_K), q6_K),
    PW__ENTRY(PW_FORMAT_Q8_K, "Q8_K", 15, PW__QK_K, sizeof(pw__block_q8_K), q8_K),
    PW__ENTRY(PW_FORMAT_IQ4_NL, "IQ4_NL", 20, PW__QK4_NL, sizeof(pw__block_iq4_nl), iq4_nl),
    PW__ENTRY(PW_FORMAT_TQ1_0, "TQ1_0", 34, PW__QK_K, sizeof(pw__block_tq1_0), tq1_0),
    PW__ENTRY(PW_FORMAT_TQ2_0, "TQ2_0", 35, PW__QK_K, sizeof(pw__block_tq2_0), tq2_0),
};

const pw_format_info *pw_format_get(pw_format format) {
    const pw__format_traits *t = pw__format(format);
    return t ? &t->info : NULL;
}

double pw_format_bits_per_weight(pw_format format) {
    const pw__format_traits *t = pw__format(format);
    return t ? 8.0 * t->info.block_bytes / t->info.block_size : 0.0;
}

static int pw__ascii_lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int pw__name_equal(const char *a, const char *b) {
    for (; *a && *b; ++a, ++b)
        if (pw__ascii_lower((unsigned char)*a) != pw__ascii_lower((unsigned char)*b)) return 0;
    return *a == *b;
}

pw_status pw_format_from_name(const char *name, pw_format *out) {
    if (name == NULL || out == NULL) return PW_ERR_INVALID_ARGUMENT;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        if (pw__name_equal(name, pw__format_table[f].info.name)) {
            *out = (pw_format)f;
            return PW_OK;
        }
    }
    return PW_ERR_UNSUPPORTED;
}

pw_status pw_format_from_gguf_type(uint32_t gguf_type, pw_format *out) {
    if (out == NULL) return PW_ERR_INVALID_ARGUMENT;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        if (pw__format_table[f].info.gguf_type >= 0 &&
            (uint32_t)pw__format_table[f].info.gguf_type == gguf_type) {
            *out = (pw_format)f;
            return PW_OK;
        }
    }
    return PW_ERR_UNSUPPORTED;
}

/* The traits of `format`, or a failure naming the function and the value. */
static pw_status pw__format_checked(pw_context *ctx, const char *fn, pw_format format,
                                    const pw__format_traits **out) {
    *out = pw__format(format);
    PW__FAIL_IF(*out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "%s: format %d is not a pw_format (valid: 0 .. %d; see pw_format_from_name)", fn,
                (int)format, PW_FORMAT_COUNT - 1);
    return PW_OK;
}

pw_status pw_format_row_bytes(pw_context *ctx, pw_format format, int64_t elements,
                              uint64_t *bytes) {
    const pw__format_traits *t;
    PW__TRY(pw__format_checked(ctx, "pw_format_row_bytes", format, &t));
    PW__FAIL_IF(bytes == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_format_row_bytes: the output pointer 'bytes' is NULL");
    PW__FAIL_IF(elements < 0, ctx, PW_ERR_SHAPE,
                "pw_format_row_bytes: %lld elements of %s is negative", (long long)elements,
                t->info.name);
    PW__FAIL_IF(elements % t->info.block_size != 0, ctx, PW_ERR_SHAPE,
                "pw_format_row_bytes: %lld elements is not a whole number of %s blocks "
                "(%d elements each; %lld left over)",
                (long long)elements, t->info.name, (int)t->info.block_size,
                (long long)(elements % t->info.block_size));
    uint64_t total;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)(elements / t->info.block_size),
                                     (uint64_t)t->info.block_bytes, &total),
                ctx, PW_ERR_OVERFLOW,
                "pw_format_row_bytes: %lld elements of %s take more than 2^64 bytes",
                (long long)elements, t->info.name);
    *bytes = total;
    return PW_OK;
}

/* Shared argument checks of decode and quantize. */
static pw_status pw__check_blocks(pw_context *ctx, const char *fn, const pw__format_traits *t,
                                  const void *src, size_t blocks, const void *dst) {
    PW__FAIL_IF(blocks > 0 && (src == NULL || dst == NULL), ctx, PW_ERR_INVALID_ARGUMENT,
                "%s: %s pointer is NULL for %zu %s blocks", fn, src == NULL ? "source" : "destination",
                blocks, t->info.name);
    uint64_t elements, bytes;
    PW__FAIL_IF(pw__mul_overflow_u64(blocks, (uint64_t)t->info.block_size, &elements) ||
                    pw__mul_overflow_u64(blocks, (uint64_t)t->info.block_bytes, &bytes) ||
                    elements > SIZE_MAX / sizeof(float) || bytes > SIZE_MAX,
                ctx, PW_ERR_OVERFLOW, "%s: %zu %s blocks do not fit in the address space", fn,
                blocks, t->info.name);
    return PW_OK;
}

pw_status pw_format_decode(pw_context *ctx, pw_format format, const void *src, size_t blocks,
                           float *dst) {
    const pw__format_traits *t;
    PW__TRY(pw__format_checked(ctx, "pw_format_decode", format, &t));
    PW__TRY(pw__check_blocks(ctx, "pw_format_decode", t, src, blocks, dst));
    if (blocks > 0) t->decode(src, blocks, dst);
    return PW_OK;
}

pw_status pw_format_quantize(pw_context *ctx, pw_format format, const float *src, size_t blocks,
                             void *dst) {
    const pw__format_traits *t;
    PW__TRY(pw__format_checked(ctx, "pw_format_quantize", format, &t));
    PW__TRY(pw__check_blocks(ctx, "pw_format_quantize", t, src, blocks, dst));
    /* Refuse before writing anything: a NaN or infinity would silently
     * poison a whole block's scale. */
    const size_t n = blocks * (size_t)t->info.block_size;
    for (size_t i = 0; i < n; ++i) {
        PW__FAIL_IF(!isfinite(src[i]), ctx, PW_ERR_INVALID_ARGUMENT,
                    "pw_format_quantize: input element %zu (block %zu of %zu, %s) is %s; "
                    "only finite values can be quantized",
                    i, i / (size_t)t->info.block_size, blocks, t->info.name,
                    isnan(src[i]) ? "NaN" : src[i] > 0 ? "+infinity" : "-infinity");
    }
    if (blocks > 0) t->quantize(src, blocks, dst);
    return PW_OK;
}

float pw_f16_to_f32(uint16_t h) { return pw__f16_to_f32(h); }
uint16_t pw_f32_to_f16(float f) { return pw__f32_to_f16(f); }
float pw_bf16_to_f32(uint16_t h) { return pw__bf16_to_f32(h); }
uint16_t pw_f32_to_bf16(float f) { return pw__f32_to_bf16(f); }
