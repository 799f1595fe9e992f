#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "rm_q32_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI row-major GEMV for the 32-element block formats Q4_0, IQ4_NL
 * and Q8_0. The weight is read where it lies (a GGUF mapping, a narrowed or
 * offset view): block (o, b) at w->data + (w->offset + o*strides[0] + b) *
 * block_bytes; nothing is copied or packed. Activations are pw__q8_32 rows
 * (GGUF's Q8_0 pairing); y[i, o] for o in [o0, o1), i in [i0, i1).
 *
 * Four weight rows advance together over the blocks, two blocks per step, so
 * one activation register set serves four rows and each row keeps a single
 * f32 accumulator. One step for one row:
 *
 *   Q4_0 / IQ4_NL, 18-byte blocks b, b+1 of the row:
 *     | d | 16 B nibbles | d | 16 B nibbles |     byte j: lo = elem j, hi = elem j+16
 *   zmm, one 128-bit lane each:  [ lo(b) | hi(b) | lo(b+1) | hi(b+1) ]   u8 0..15
 *   (IQ4_NL: each nibble through the codebook, + 128, by vpshufb)
 *
 *   Q8_0, 34-byte blocks:  | d | 32 x s8 | d | 32 x s8 |
 *   zmm:  [ q(b) + 128 | q(b+1) + 128 ]  u8 (xor 0x80)
 *
 *   activation zmm: [ x.qs(b) | x.qs(b+1) ]  s8
 *
 * vpdpbusd multiplies unsigned weight bytes by signed activation bytes, so
 * the weight side carries a bias (8 for Q4_0, 128 for IQ4_NL and Q8_0).
 * Its term, bias * sum(x.qs) over each group of four lanes, depends only on
 * the activations: it is computed once per step for the four rows and used
 * as the starting value of every row's dot, negated. The 16 int32 lanes
 * (8 per block) are converted to f32 and multiplied by [d_w(b) d_x(b) x 8,
 * d_w(b+1) d_x(b+1) x 8]. An odd last block runs the same step with the
 * second half zero. The integer part is exact: |lane| <= 4 * 255 * 127.
 */
#include "format/blocks.h"
#include "kernel/kernel.h"

#include <immintrin.h>
#include <string.h>

#define RM_NR 4 /* weight rows per tile */
#define RM_INLINE static inline __attribute__((always_inline))

enum { Q32_Q4_0, Q32_IQ4_NL, Q32_Q8_0 };

RM_INLINE size_t q32_block_bytes(int fmt) {
    return fmt == Q32_Q8_0 ? sizeof(pw__block_q8_0) : sizeof(pw__block_q4_0);
}

/* Unsigned bias added to the weight values so vpdpbusd can take them. */
RM_INLINE int q32_bias(int fmt) { return fmt == Q32_Q4_0 ? 8 : 128; }

/* The activation half of a step: shared by the rows of a tile. */
typedef struct q32_act {
    __m512i q;    /* s8 values of blocks b, b+1 */
    __m512i init; /* -bias * (sum of the 4 activations of each lane) */
    __m512 d;     /* [d(b) x 8, d(b+1) x 8] */
} q32_act;

RM_INLINE q32_act q32_act_load(const pw__q8_32 *x, int two, int fmt) {
    q32_act a;
    const __m256i q0 = _mm256_loadu_si256((const __m256i *)x[0].qs);
    const __m512 d0 = _mm512_set1_ps(x[0].d);
    if (two) {
        a.q = _mm512_inserti64x4(_mm512_castsi256_si512(q0),
                                 _mm256_loadu_si256((const __m256i *)x[1].qs), 1);
        a.d = _mm512_mask_mov_ps(d0, 0xFF00, _mm512_set1_ps(x[1].d));
    } else {
        a.q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), _mm256_setzero_si256(), 1);
        a.d = d0;
    }
    const __m512i sums =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)q32_bias(fmt)), a.q);
    a.init = _mm512_sub_epi32(_mm512_setzero_si512(), sums);
    return a;
}

static inline uint32_t q32_rd16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* Weight bytes of blocks b (and b+1) of one row, as unsigned values lined up with q32_act.q. */
RM_INLINE __m512i q32_weights(const uint8_t *blk, int two, int fmt) {
    if (fmt == Q32_Q8_0) {
        __m512i w = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(blk + 2)));
        if (two)
            w = _mm512_mask_broadcast_i64x4(
                w, 0xF0, _mm256_loadu_si256((const __m256i *)(blk + sizeof(pw__block_q8_0) + 2)));
        return _mm512_xor_si512(w, _mm512_set1_epi8((char)0x80));
    }
    __m512i w = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(blk + 2)));
    if (two)
        w = _mm512_mask_broadcast_i32x4(
            w, 0xFF00, _mm_loadu_si128((const __m128i *)(blk + sizeof(pw__block_q4_0) + 2)));
    /* 128-bit lanes 1 and 3 take the high nibbles. */
    const __m512i shift = _mm512_set_epi64(0x0004000400040004, 0x0004000400040004, 0, 0,
                                           0x0004000400040004, 0x0004000400040004, 0, 0);
    w = _mm512_and_si512(_mm512_srlv_epi16(w, shift), _mm512_set1_epi8(0x0F));
    if (fmt == Q32_IQ4_NL) {
        const __m128i lut = _mm_add_epi8(_mm_loadu_si128((const __m128i *)pw__iq4nl_values),
                                         _mm_set1_epi8((char)0x80));
        w = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(lut), w);
    }
    return w;
}

/* [d_w(b) x 8, d_w(b+1) x 8] * a.d for one row. */
RM_INLINE __m512 q32_scale(const uint8_t *blk, int two, int fmt, __m512 da) {
    uint32_t h = q32_rd16(blk);
    if (two) h |= q32_rd16(blk + q32_block_bytes(fmt)) << 16;
    const __m512 d = _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128((int)h)));
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_mul_ps(_mm512_permutexvar_ps(idx, d), da);
}

RM_INLINE __m512 q32_step(const uint8_t *blk, const q32_act *a, int two, int fmt, __m512 acc) {
    const __m512i dot = _mm512_dpbusd_epi32(a->init, q32_weights(blk, two, fmt), a->q);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), q32_scale(blk, two, fmt, a->d), acc);
}

/* y[i, o .. o+rows) for rows (RM_NR or 1) consecutive weight rows. */
RM_INLINE void q32_tile(const pw__mm_call *c, int64_t o, int rows, int64_t i, int fmt) {
    const pw_view *w = c->w;
    const size_t bb = q32_block_bytes(fmt);
    const int64_t nb = c->in / 32;
    const pw__q8_32 *x = (const pw__q8_32 *)(c->xq + (size_t)i * c->xq_row_bytes);
    const uint8_t *wr[RM_NR];
    __m512 acc[RM_NR];
#pragma GCC unroll 4
    for (int r = 0; r < rows; ++r) {
        wr[r] = w->data + (size_t)(w->offset + (o + r) * w->strides[0]) * bb;
        acc[r] = _mm512_setzero_ps();
    }
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const q32_act a = q32_act_load(x + b, 1, fmt);
#pragma GCC unroll 4
        for (int r = 0; r < rows; ++r) acc[r] = q32_step(wr[r] + (size_t)b * bb, &a, 1, fmt, acc[r]);
    }
    if (b < nb) {
        const q32_act a = q32_act_load(x + b, 0, fmt);
#pragma GCC unroll 4
        for (int r = 0; r < rows; ++r) acc[r] = q32_step(wr[r] + (size_t)b * bb, &a, 0, fmt, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < rows; ++r) c->y[i * c->ldy + o + r] = _mm512_reduce_add_ps(acc[r]);
}

RM_INLINE void q32_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                       int fmt) {
    int64_t o = o0;
    for (; o + RM_NR <= o1; o += RM_NR)
        for (int64_t i = i0; i < i1; ++i) q32_tile(c, o, RM_NR, i, fmt);
    for (; o < o1; ++o)
        for (int64_t i = i0; i < i1; ++i) q32_tile(c, o, 1, i, fmt);
}

static void run_q4_0(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q32_run(c, o0, o1, i0, i1, Q32_Q4_0);
}
static void run_iq4_nl(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q32_run(c, o0, o1, i0, i1, Q32_IQ4_NL);
}
static void run_q8_0(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q32_run(c, o0, o1, i0, i1, Q32_Q8_0);
}

#define RM_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

const pw__kernel pw__k_q4_0_rm_avx512vnni = {
    .info = {.name = "q4_0_rm_avx512vnni",
             .key = "matmul_wt:q4_0/row_major x f32->q8_32 -> f32 :avx512vnni",
             .format = PW_FORMAT_Q4_0,
             .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,
             .tile_rows = RM_NR,
             .tile_batch = 1,
             .activation = PW_ACT_Q8_32,
             .features = RM_FEATURES,
             .isa = "avx512vnni"},
    .run = run_q4_0,
    .priority = PW__PRIO_AVX512,
    .min_n = 1};

const pw__kernel pw__k_iq4_nl_rm_avx512vnni = {
    .info = {.name = "iq4_nl_rm_avx512vnni",
             .key = "matmul_wt:iq4_nl/row_major x f32->q8_32 -> f32 :avx512vnni",
             .format = PW_FORMAT_IQ4_NL,
             .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,
             .tile_rows = RM_NR,
             .tile_batch = 1,
             .activation = PW_ACT_Q8_32,
             .features = RM_FEATURES,
             .isa = "avx512vnni"},
    .run = run_iq4_nl,
    .priority = PW__PRIO_AVX512,
    .min_n = 1};

const pw__kernel pw__k_q8_0_rm_avx512vnni = {
    .info = {.name = "q8_0_rm_avx512vnni",
             .key = "matmul_wt:q8_0/row_major x f32->q8_32 -> f32 :avx512vnni",
             .format = PW_FORMAT_Q8_0,
             .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,
             .tile_rows = RM_NR,
             .tile_batch = 1,
             .activation = PW_ACT_Q8_32,
             .features = RM_FEATURES,
             .isa = "avx512vnni"},
    .run = run_q8_0,
    .priority = PW__PRIO_AVX512,
    .min_n = 1};
