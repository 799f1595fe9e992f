/*
 * Activation forms made from f32 X by the operator, once per call, into
 * scratch the context owns. Q8_32 and Q8_256 pair with GGUF block formats
 * (below); QD8 (a whole row, asymmetric) with QC4W weights (at the end). Each block carries the signed int8 values
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
#include "packwise/weight.h"

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

/* Elements per block and bytes per block of an activation form (F32: 1 and 4; QD8
 * quantizes whole rows: 1 and 0, see pw__act_row_bytes). */
int64_t pw__act_block_size(pw_activation a);
size_t pw__act_block_bytes(pw_activation a);

/* Bytes of one quantized row of `in` values (a multiple of the block size); 0 on
 * overflow. */
size_t pw__act_row_bytes(pw_activation a, int64_t in);

/* Quantize one row of `in` floats (a multiple of the block size) into blocks. */
void pw__act_quantize_row(pw_activation a, const float *x, int64_t in, void *dst);

/*
 * Quantize n rows of `in` values of type t (f32, f16 or bf16; row stride ldx
 * values) into rows of row_bytes bytes with the fastest quantizer the context's
 * ISA allows, on the context's threads when the work is GEMM-sized; every
 * quantizer writes exactly the bytes pw__act_quantize_row (or, for QD8,
 * pw__qd8_quantize_row) writes for the same values as f32 (finite x). f16 and
 * bf16 rows are converted PW__ACT_CHUNK values at a time into L1 as they are
 * quantized: X is never copied to f32 as a whole. a is never PW_ACT_F32.
 */
#define PW__ACT_CHUNK 1024
void pw__act_quantize_rows(pw_context *ctx, pw_activation a, const void *x, pw_dtype t, int64_t ldx,
                           int64_t n, int64_t in, void *dst, size_t row_bytes);

/* One ISA's activation quantizers: of the block forms, the bytes pw__act_quantize_row
 * writes for that form (`in` a multiple of its block); qd8, one QD8 row as
 * pw__qd8_quantize_row writes it (below); not_finite, whether x[0..n) holds a NaN or an
 * infinity (the operator's scan of X, op/run.c). */
typedef struct pw__act_forms {
    void (*q8_32)(const float *x, int64_t in, pw__q8_32 *dst);
    void (*q8_256)(const float *x, int64_t in, pw__q8_256 *dst);
    void (*qd8)(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
    int (*not_finite)(const float *x, int64_t n);
} pw__act_forms;
/* The forms of the fastest level ctx's ISA allows, or NULL (the portable code). */
const pw__act_forms *pw__act_forms_for(const pw_context *ctx);
#if defined(__x86_64__)
extern const pw__act_forms pw__act_forms_avx512; /* AVX-512 F+BW: quant/x86/act_avx512.c */
extern const pw__act_forms pw__act_forms_avx2;   /* AVX2 and AVX-VNNI levels: act_avx2.c */
#endif

/* Decode one quantized row back to floats (d * qs): the values kernels really see. */
void pw__act_dequantize_row(pw_activation a, const void *src, int64_t in, float *dst);

/* ------------------------------------------------------------------------ */
/* QD8 activations (PW_ACT_QD8)                                             */
/* ------------------------------------------------------------------------ */

/*
 * QD8 rows (the left-hand side, one per row of X, xq_row_bytes apart):
 *
 *   | pw__qd8_header (64 B) | int8 q[Kp] | uint8 u[Kp] = q + 128 |
 *
 *   x[k] ~ (q[k] - zp) * scale; q[k] = 0 (u = 128) for k >= K.
 *
 * QD8 panels (for kernels with xq_panel = P > 0, on top of the rows): the
 * u of rows [pP, pP + P) interleaved by 8 bytes, so a micro-tile of P rows
 * reads one contiguous stream with one pointer:
 *
 *   panel p (P * Kp bytes):  | row pP: u[0..7] | row pP+1: u[0..7] | ... | row pP+P-1: u[0..7] |
 *                            | row pP: u[8..15] | ...                                          |
 *
 * A last panel with fewer rows leaves the missing rows' slots unwritten.
 */

#define PW__QD8_K_ALIGN 32 /* K padding of a QD8 row, in elements */
static inline int64_t pw__qd8_k_padded(int64_t k) {
    return (k + PW__QD8_K_ALIGN - 1) / PW__QD8_K_ALIGN * PW__QD8_K_ALIGN;
}

typedef struct pw__qd8_header {
    float scale;     /* x ~ (q - zp) * scale; > 0 */
    int32_t neg_zp;  /* -zp, zp in [-128, 127] */
    int32_t sum;     /* sum of q[k] over k < K (for kernels that pair unsigned weights) */
    int32_t bad;     /* 1: the row had a value that is not finite (and is unusable) */
    int64_t bad_k;   /* the first such k */
    int32_t pad[10];
} pw__qd8_header;
_Static_assert(sizeof(pw__qd8_header) == 64, "pw__qd8_header is one cache line");

/* Bytes of one QD8 row for K inputs (a multiple of 64). */
static inline size_t pw__qd8_row_bytes(int64_t k_padded) {
    return sizeof(pw__qd8_header) + 2u * (size_t)k_padded;
}

/* Quantize one row of K floats. A value that is not finite makes the row
 * unusable: header.bad = 1 and header.bad_k names the first such k. */
void pw__qd8_quantize_row(const float *x, int64_t k, int64_t k_padded, uint8_t *row);

/* pw__qd8_quantize_row in steps, for a row that arrives in pieces (f16/bf16 X converted
 * a chunk at a time): scan every piece (base: its first index), begin (the header; 0 for
 * a row with a value that is not finite, which is then done), fill every piece, end. */
typedef struct pw__qd8_range {
    float lo, hi;  /* start at 0: the range holds 0 */
    int64_t bad_k; /* first index of a value that is not finite; -1 = none */
} pw__qd8_range;
void pw__qd8_scan(const float *x, int64_t k, int64_t base, pw__qd8_range *r);
int pw__qd8_begin(uint8_t *row, const pw__qd8_range *r, float *inv, int32_t *zp);
int32_t pw__qd8_fill(const float *x, int64_t k, float inv, int32_t zp, int8_t *q, uint8_t *u);
void pw__qd8_end(uint8_t *row, int64_t k, int64_t k_padded, int32_t sum);
typedef void (*pw__qd8_row_fn)(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
#if defined(__x86_64__)
/* quant/x86/qd8_avx512.c: AVX-512 F/BW only. */
void pw__qd8_quantize_row_avx512(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
/* quant/x86/qd8_avx2.c: the AVX2 and AVX-VNNI levels. */
void pw__qd8_quantize_row_avx2(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
#endif

/* What every quantizer shares: the row's scale, 1 / scale and zero point from
 * its min and max (lo <= 0 <= hi, finite), and one value's q. */
void pw__qd8_params(float lo, float hi, float *scale, float *inv, int32_t *zp);
static inline float pw__qd8_round_even(float v) {
    const float magic = 12582912.0f; /* 1.5 * 2^23: exact for |v| < 2^22 */
    return (v + magic) - magic;
}
static inline int32_t pw__qd8_value(float x, float inv, int32_t zp) {
    float v = x * inv;
    v = v < -256.0f ? -256.0f : (v > 256.0f ? 256.0f : v);
    const int32_t iv = (int32_t)pw__qd8_round_even(v) + zp;
    return iv < -128 ? -128 : (iv > 127 ? 127 : iv);
}

/* Bytes of the panels for `batch` rows, and the copy of rows [m0, m1)'s u into them. */
static inline size_t pw__qd8_panels_bytes(int64_t batch, int64_t k_padded, int32_t p) {
    return (size_t)((batch + p - 1) / p) * (size_t)p * (size_t)k_padded;
}
void pw__qd8_panel_rows(const uint8_t *lhs, size_t row_bytes, int64_t k_padded, int32_t p,
                        int64_t m0, int64_t m1, uint8_t *panels);

/* The row's parts. */
static inline const pw__qd8_header *pw__qd8_hdr(const uint8_t *row) {
    return (const pw__qd8_header *)(const void *)row;
}
static inline const int8_t *pw__qd8_q(const uint8_t *row) {
    return (const int8_t *)(row + sizeof(pw__qd8_header));
}
static inline const uint8_t *pw__qd8_u(const uint8_t *row, int64_t k_padded) {
    return row + sizeof(pw__qd8_header) + (size_t)k_padded;
}

#endif
