/*
 * AVX2 row-major GEMV kernels of the float formats F32, F16 and BF16, read
 * straight from the weight's bytes (PW_LAYOUT_BLOCKED_ROW_MAJOR; a float
 * format's "block" is one element, so a narrowed view may start anywhere)
 * against f32 activations (PW_ACT_F32, call->x). Four weight rows per pass.
 *
 * Per step, 8 consecutive elements of a row and of x:
 *
 *   F32   32 bytes  w0 w1 .. w7 (f32)            loaded as is
 *   F16   16 bytes  h0 h1 .. h7 (IEEE binary16)  vcvtph2ps (F16C, exact)
 *   BF16  16 bytes  b0 b1 .. b7 (bfloat16)       zero-extend to 32 bits, << 16 (exact)
 *   x     32 bytes  f32
 *
 * then one fma into 8 partial sums per row. A row whose length is not a
 * multiple of 8 ends through the same step on zero-padded copies (rm_avx2.h).
 */
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "rm_float_avx2.c must be compiled with -mavx2 -mfma -mf16c"
#endif

#include "kernel/x86/rm_avx2.h"

#define PW__RM_FLOAT_ROWS 4

static PW__AVX2_INLINE __m256 x8(const uint8_t *x) {
    return _mm256_loadu_ps((const float *)(const void *)x);
}

static PW__AVX2_INLINE void f32_step(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                     __m256 acc[5]) {
    for (int r = 0; r < rows; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps((const float *)(const void *)(w + r * rs)), x8(x),
                                 acc[r]);
}

static PW__AVX2_INLINE void f16_step(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                     __m256 acc[5]) {
    for (int r = 0; r < rows; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_cvtph_ps(pw__ld128(w + r * rs)), x8(x), acc[r]);
}

static PW__AVX2_INLINE void bf16_step(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                      __m256 acc[5]) {
    for (int r = 0; r < rows; ++r) {
        const __m256i v = _mm256_slli_epi32(_mm256_cvtepu16_epi32(pw__ld128(w + r * rs)), 16);
        acc[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(v), x8(x), acc[r]);
    }
}

static void f32_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_FLOAT_ROWS, 0, 8, 32, 32, 1, 4, f32_step);
}

static void f16_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_FLOAT_ROWS, 0, 8, 16, 32, 1, 2, f16_step);
}

static void bf16_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_FLOAT_ROWS, 0, 8, 16, 32, 1, 2, bf16_step);
}

#define PW__FLOAT_KERNEL(id, fmt)                                                                  \
    const pw__kernel pw__k_##id##_rm_avx2 = {                                                      \
        .info = {.name = #id "_rm_avx2",                                                           \
                 .key = PW__KEY(#id, "row_major", F32, "avx2"),                          \
                 .format = fmt,                                                                    \
                 .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,                                            \
                 .tile_rows = 1,                                                                   \
                 .tile_batch = 1,                                                                  \
                 .activation = PW_ACT_F32,                                                         \
                 .features = PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C,                               \
                 .isa = "avx2"},                                                                   \
        .run = id##_rm_run,                                                                        \
        .priority = PW__PRIO_AVX2,                                                                 \
        .min_n = 1};

PW__FLOAT_KERNEL(f32, PW_FORMAT_F32)
PW__FLOAT_KERNEL(f16, PW_FORMAT_F16)
PW__FLOAT_KERNEL(bf16, PW_FORMAT_BF16)
