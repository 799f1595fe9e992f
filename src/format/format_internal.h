/*
 * The traits table: one entry per pw_format, indexed by the enum, with the
 * decode and reference-quantize functions. Decode reproduces ggml's
 * dequantize_row_* bit for bit (the library is compiled with
 * -ffp-contract=off and each decoder keeps ggml's operation order).
 */
#ifndef PACKWISE_FORMAT_INTERNAL_H
#define PACKWISE_FORMAT_INTERNAL_H

#include "packwise/format.h"

#include <stddef.h>

/* Decode `blocks` consecutive blocks at src into blocks * block_size floats. */
typedef void (*pw__decode_fn)(const void *src, size_t blocks, float *dst);
/* Quantize blocks * block_size finite floats into `blocks` blocks (deterministic). */
typedef void (*pw__quantize_fn)(const float *src, size_t blocks, void *dst);

typedef struct pw__format_traits {
    pw_format_info info;
    pw__decode_fn decode;
    pw__quantize_fn quantize;
} pw__format_traits;

extern const pw__format_traits pw__format_table[PW_FORMAT_COUNT];

/* Decoders (decode.c, decode_k.c) and reference quantizers (quantize.c,
 * quantize_k.c) behind the table, callable directly by code that already
 * knows the format (the reference kernels, the benchmarks). Same contracts
 * as pw__decode_fn / pw__quantize_fn: src and dst need no alignment. */
#define PW__FORMAT_FUNCTIONS(X)                                                              \
    X(f32) X(f16) X(bf16) X(q4_0) X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1) X(q2_K) X(q3_K)   \
    X(q4_K) X(q5_K) X(q6_K) X(q8_K) X(iq4_nl) X(tq1_0) X(tq2_0)

#define PW__DECLARE_FORMAT_FUNCTIONS(name)                                                   \
    void pw__decode_##name(const void *src, size_t blocks, float *dst);                      \
    void pw__quantize_##name(const float *src, size_t blocks, void *dst);
PW__FORMAT_FUNCTIONS(PW__DECLARE_FORMAT_FUNCTIONS)
#undef PW__DECLARE_FORMAT_FUNCTIONS

/* Traits of a format, or NULL when f is out of range. */
static inline const pw__format_traits *pw__format(pw_format f) {
    return (unsigned)f < (unsigned)PW_FORMAT_COUNT ? &pw__format_table[f] : NULL;
}

#endif
