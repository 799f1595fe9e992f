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

/* Traits of a format, or NULL when f is out of range. */
static inline const pw__format_traits *pw__format(pw_format f) {
    return (unsigned)f < (unsigned)PW_FORMAT_COUNT ? &pw__format_table[f] : NULL;
}

#endif
