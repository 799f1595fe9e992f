/*
 * Activation forms made from f32 X by the dispatcher, once per call, into
 * scratch the weight handle owns. Each block carries the signed int8 values
 * and the same values offset by +128 as unsigned bytes, because x86 VNNI
 * (vpdpbusd) multiplies unsigned by signed bytes: a kernel pairs whichever
 * side it needs and corrects with the stored sums.
 *
 * Quantization: d = max|x| / 127 over the block, q = nearest(x / d) (ties to
 * even), so q is in [-127, 127] and q + 128 in [1, 255].
 */
#ifndef PACKWISE_QUANT_ACT_H
#define PACKWISE_QUANT_ACT_H

#include "packwise/matmul.h"

#include <stddef.h>
#include <stdint.h>

/* One block of 32 activations (PW_ACT_Q8_32): 96 bytes, 32-byte aligned qs/qu. */
typedef struct pw__q8_32 {
    float d;       /* scale: x ~ d * qs */
    float dsum;    /* d * sum(qs), for formats with a per-block minimum */
    int32_t sum;   /* sum(qs) */
    int32_t pad[5];
    int8_t qs[32];
    uint8_t qu[32]; /* qs + 128 */
} pw__q8_32;
_Static_assert(sizeof(pw__q8_32) == 96, "pw__q8_32 is 96 bytes");

/* One block of 256 activations (PW_ACT_Q8_256), as GGUF's Q8_K plus helpers. */
typedef struct pw__q8_256 {
    float d;            /* scale: x ~ d * qs */
    int32_t sum;        /* sum(qs) */
    int16_t bsums[16];  /* sum of each 16 consecutive qs */
    int32_t pad[6];
    int8_t qs[256];
    uint8_t qu[256];    /* qs + 128 */
} pw__q8_256;
_Static_assert(sizeof(pw__q8_256) == 576, "pw__q8_256 is 576 bytes");

/* Elements per block and bytes per block of an activation form (F32: 1 and 4). */
int64_t pw__act_block_size(pw_activation a);
size_t pw__act_block_bytes(pw_activation a);

/* Quantize one row of `in` floats (a multiple of the block size) into blocks. */
void pw__act_quantize_row(pw_activation a, const float *x, int64_t in, void *dst);

/*
 * Quantize n rows of `in` floats (row stride ldx floats) into rows of
 * row_bytes bytes with the fastest quantizer the context's ISA allows, on the
 * context's threads when the work is GEMM-sized; every quantizer writes
 * exactly the bytes pw__act_quantize_row writes (finite x).
 */
void pw__act_quantize_rows(pw_context *ctx, pw_activation a, const float *x, int64_t ldx,
                           int64_t n, int64_t in, void *dst, size_t row_bytes);

#if defined(__x86_64__)
/* AVX-512 F+BW form of pw__act_quantize_row (quant/x86/act_avx512.c). */
void pw__act_quantize_row_avx512(pw_activation a, const float *x, int64_t in, void *dst);
#endif

/* Decode one quantized row back to floats (d * qs): the values kernels really see. */
void pw__act_dequantize_row(pw_activation a, const void *src, int64_t in, float *dst);

#endif
