/*
 * What the row-major GEMV kernels of the float formats F32, F16 and BF16 share
 * (rm_float_scalar.c, arm/rm_float_neon.c): one element read exactly, the loop
 * over weight rows and rows of X around a row dot, and the descriptors. A float
 * format's "block" is one element, activations are f32 (PW_ACT_F32, call->x).
 */
#ifndef PACKWISE_KERNEL_RM_FLOAT_H
#define PACKWISE_KERNEL_RM_FLOAT_H

#include "format/blocks.h"
#include "kernel/kernel.h"

#include <string.h>

/* Bytes of one element of float format f. */
static inline int64_t pw__float_bytes(pw_format f) { return f == PW_FORMAT_F32 ? 4 : 2; }

/* The element at p of float format f, converted exactly. */
static inline float pw__float_elem(pw_format f, const uint8_t *p) {
    if (f == PW_FORMAT_F32) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return f == PW_FORMAT_F16 ? pw__f16_to_f32(h) : pw__bf16_to_f32(h);
}

/* Dot product of one weight row (in elements of format f at row) with x. */
typedef float (*pw__float_row_fn)(pw_format f, const uint8_t *row, const float *x, int64_t in);

/* Rows [o0, o1) of the view, rows [i0, i1) of X: rows of X are the inner loop, so a
 * weight row is read from memory once and stays in L1 while every row of X meets it.
 * Inlined with constant f and dot, so each kernel gets its own loop. */
static inline __attribute__((always_inline)) void
pw__rm_float_loop(const pw__mm_call *c, pw_format f, int64_t o0, int64_t o1, int64_t i0,
                  int64_t i1, pw__float_row_fn dot) {
    const pw_view *w = c->w;
    const int64_t eb = pw__float_bytes(f);
    for (int64_t o = o0; o < o1; ++o) {
        const uint8_t *row = w->data + (w->offset + o * w->strides[0]) * eb;
        for (int64_t i = i0; i < i1; ++i)
            c->y[i * c->ldy + o] = dot(f, row, c->x + i * c->ldx, c->in);
    }
}

/* The run function id_rm_<isa> of one float format over a row dot, and its descriptor
 * pw__k_<id>_rm_<isa> (name "<id>_rm_<isa>"). */
#define PW__RM_FLOAT_KERNEL(id, fmt, isa_, features_, priority_, dot)                           \
    static void id##_rm_##isa_(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,        \
                              int64_t i1) {                                                     \
        pw__rm_float_loop(c, fmt, o0, o1, i0, i1, dot);                                         \
    }                                                                                           \
    const pw__kernel pw__k_##id##_rm_##isa_ = {                                                 \
        .info = {.name = #id "_rm_" #isa_,                                                      \
                 .key = PW__KEY(#id, "row_major", F32, #isa_),                                  \
                 .format = fmt,                                                                 \
                 .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,                                         \
                 .tile_rows = 1,                                                                \
                 .tile_batch = 1,                                                               \
                 .activation = PW_ACT_F32,                                                      \
                 .features = features_,                                                         \
                 .isa = #isa_},                                                                 \
        .run = id##_rm_##isa_,                                                                  \
        .priority = priority_,                                                                  \
        .min_n = 1};

#endif
