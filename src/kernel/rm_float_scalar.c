/*
 * Portable row-major GEMV kernels of the float formats F32, F16 and BF16
 * (PW_LAYOUT_BLOCKED_ROW_MAJOR, f32 activations): the float formats have no
 * i8g form, so these are their non-reference kernels at the scalar ISA level.
 *
 * Each weight row is read once per row of X, element by element (4, 2 or 2
 * bytes, converted exactly with the helpers of format/blocks.h), into 8
 * partial sums in double so the additions are independent and the result
 * stays at the f32 rounding floor (ggml's SIMD paths keep 32 f32 partial sums;
 * 8 f32 sums would double their error). Any in, any o-range, narrowed and
 * offset views.
 */
#include "format/blocks.h"
#include "kernel/kernel.h"

#include <string.h>

#define PW__LANES 8

static inline float elem(pw_format f, const uint8_t *p) {
    if (f == PW_FORMAT_F32) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return f == PW_FORMAT_F16 ? pw__f16_to_f32(h) : pw__bf16_to_f32(h);
}

/* f is a constant at each call below, so each format gets its own loop. */
static inline void rm_float(const pw__mm_call *c, pw_format f, int64_t o0, int64_t o1, int64_t i0,
                            int64_t i1) {
    const pw_view *w = c->w;
    const int64_t eb = f == PW_FORMAT_F32 ? 4 : 2;
    for (int64_t o = o0; o < o1; ++o) {
        const uint8_t *row = w->data + (w->offset + o * w->strides[0]) * eb;
        for (int64_t i = i0; i < i1; ++i) {
            const float *x = c->x + i * c->ldx;
            double acc[PW__LANES] = {0};
            int64_t k = 0;
            for (; k + PW__LANES <= c->in; k += PW__LANES)
                for (int l = 0; l < PW__LANES; ++l)
                    acc[l] += (double)elem(f, row + (k + l) * eb) * (double)x[k + l];
            for (; k < c->in; ++k) acc[k % PW__LANES] += (double)elem(f, row + k * eb) * (double)x[k];
            double s = 0.0;
            for (int l = 0; l < PW__LANES; ++l) s += acc[l];
            c->y[i * c->ldy + o] = (float)s;
        }
    }
}

static void f32_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    rm_float(c, PW_FORMAT_F32, o0, o1, i0, i1);
}

static void f16_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    rm_float(c, PW_FORMAT_F16, o0, o1, i0, i1);
}

static void bf16_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    rm_float(c, PW_FORMAT_BF16, o0, o1, i0, i1);
}

#define PW__FLOAT_SCALAR(id, fmt)                                                                  \
    const pw__kernel pw__k_##id##_rm_scalar = {                                                    \
        .info = {.name = #id "_rm_scalar",                                                         \
                 .key = PW__KEY(#id, "row_major", F32, "scalar"),                        \
                 .format = fmt,                                                                    \
                 .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,                                            \
                 .tile_rows = 1,                                                                   \
                 .tile_batch = 1,                                                                  \
                 .activation = PW_ACT_F32,                                                         \
                 .features = 0,                                                                    \
                 .isa = "scalar"},                                                                 \
        .run = id##_run,                                                                           \
        .priority = PW__PRIO_SCALAR,                                                               \
        .min_n = 1};

PW__FLOAT_SCALAR(f32, PW_FORMAT_F32)
PW__FLOAT_SCALAR(f16, PW_FORMAT_F16)
PW__FLOAT_SCALAR(bf16, PW_FORMAT_BF16)
