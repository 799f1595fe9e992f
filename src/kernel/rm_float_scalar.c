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
#include "kernel/rm_float.h"

#define PW__LANES 8

/* f is a constant at each use (pw__rm_float_loop), so each format gets its own loop. */
static inline __attribute__((always_inline)) float rm_float_row(pw_format f, const uint8_t *row,
                                                                const float *x, int64_t in) {
    const int64_t eb = pw__float_bytes(f);
    double acc[PW__LANES] = {0};
    int64_t k = 0;
    for (; k + PW__LANES <= in; k += PW__LANES)
        for (int l = 0; l < PW__LANES; ++l)
            acc[l] += (double)pw__float_elem(f, row + (k + l) * eb) * (double)x[k + l];
    for (; k < in; ++k)
        acc[k % PW__LANES] += (double)pw__float_elem(f, row + k * eb) * (double)x[k];
    double s = 0.0;
    for (int l = 0; l < PW__LANES; ++l) s += acc[l];
    return (float)s;
}

PW__RM_FLOAT_KERNEL(f32, PW_FORMAT_F32, scalar, 0, PW__PRIO_SCALAR, rm_float_row)
PW__RM_FLOAT_KERNEL(f16, PW_FORMAT_F16, scalar, 0, PW__PRIO_SCALAR, rm_float_row)
PW__RM_FLOAT_KERNEL(bf16, PW_FORMAT_BF16, scalar, 0, PW__PRIO_SCALAR, rm_float_row)
