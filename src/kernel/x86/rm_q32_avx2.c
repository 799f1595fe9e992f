/*
 * AVX2 row-major GEMV kernels of the 32-element formats: Q4_0, Q4_1, Q5_0,
 * Q5_1, Q8_0 and IQ4_NL, read straight from the file's bytes (layout
 * PW_LAYOUT_BLOCKED_ROW_MAJOR, any narrowed or offset view), against
 * PW_ACT_Q8_32 activations. Four weight rows per pass; any o-range, any n.
 *
 * Per weight block and activation block (one pw__q8_32, 96 bytes):
 *
 *   Q4_0  [d f16][16 B nibbles]          byte j = e_j | e_{j+16} << 4
 *   Q5_0  [d][qh u32][16 B nibbles]      bit e of qh = bit 4 of e
 *   Q4_1  [d][m][16 B nibbles]           Q5_1 [d][m][qh][16 B nibbles]
 *   Q8_0  [d][32 x s8]                   IQ4_NL [d][16 B nibbles -> codebook]
 *   x     [d f32][dsum f32][sum s32][pad][qs: 32 x s8][qu]
 *
 * Integer work per block: 32 weights as bytes, one vpmaddubsw + vpmaddwd
 * into 8 int32 lanes. Offset formats multiply the unsigned codes (0..31) and
 * subtract 8 or 16 times sum(qs) in lane 0, exactly, in int32; Q4_1/Q5_1 add
 * m * dsum (the activation's exact d * sum); Q8_0 and IQ4_NL use the sign
 * trick (rm_avx2.h). Then one f32 fma with d * x.d.
 */
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "rm_q32_avx2.c must be compiled with -mavx2 -mfma -mf16c"
#endif

#include "kernel/x86/rm_avx2.h"

#include <stddef.h>

#define PW__RM_Q32_ROWS 4

static PW__AVX2_INLINE const pw__q8_32 *xblock(const uint8_t *x) {
    return (const pw__q8_32 *)(const void *)x;
}

/* 16 bytes of nibbles -> 32 bytes in element order (low nibbles, then high). */
static PW__AVX2_INLINE __m256i nibbles32(const uint8_t *qs) {
    const __m128i q = pw__ld128(qs);
    const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_srli_epi16(q, 4), 1);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

/* Byte e = 0x10 where bit e of the little-endian qh is set, else 0. */
static PW__AVX2_INLINE __m256i high_bits32(const uint8_t *qh) {
    const __m256i v = _mm256_set1_epi32((int)pw__rd32(qh));
    const __m256i spread = _mm256_shuffle_epi8(
        v, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
                            3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

/* acc += d * x.d * (dot(codes, qs) - offset * sum(qs)); codes unsigned <= 31. */
static PW__AVX2_INLINE __m256 finish_offset(__m256i codes, const uint8_t *w, const pw__q8_32 *xb,
                                            int offset, __m256 acc) {
    __m256i dot = pw__dot_us(codes, pw__ld256(xb->qs));
    dot = _mm256_sub_epi32(dot, pw__lane0_epi32(offset * xb->sum));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), pw__f16_times(pw__rd16(w), xb->d), acc);
}

/* acc += d * x.d * dot(codes, qs) + m * x.dsum; [d, m] are the block's first 4 bytes. */
static PW__AVX2_INLINE __m256 finish_min(__m256i codes, const uint8_t *w, const pw__q8_32 *xb,
                                         __m256 acc) {
    const __m256i dot = pw__dot_us(codes, pw__ld256(xb->qs));
    const __m128 f = pw__f16x2_times(w, &xb->d); /* [d * x.d, m * x.dsum, 0, 0] */
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_broadcastss_ps(f), acc);
    return _mm256_add_ps(acc, _mm256_blend_ps(_mm256_setzero_ps(), _mm256_castps128_ps256(f), 0x2));
}

static PW__AVX2_INLINE __m256 q4_0_block(const uint8_t *w, const uint8_t *x, __m256 acc) {
    return finish_offset(nibbles32(w + offsetof(pw__block_q4_0, qs)), w, xblock(x), 8, acc);
}

static PW__AVX2_INLINE __m256 q5_0_block(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const __m256i codes = _mm256_or_si256(nibbles32(w + offsetof(pw__block_q5_0, qs)),
                                          high_bits32(w + offsetof(pw__block_q5_0, qh)));
    return finish_offset(codes, w, xblock(x), 16, acc);
}

static PW__AVX2_INLINE __m256 q4_1_block(const uint8_t *w, const uint8_t *x, __m256 acc) {
    return finish_min(nibbles32(w + offsetof(pw__block_q4_1, qs)), w, xblock(x), acc);
}

static PW__AVX2_INLINE __m256 q5_1_block(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const __m256i codes = _mm256_or_si256(nibbles32(w + offsetof(pw__block_q5_1, qs)),
                                          high_bits32(w + offsetof(pw__block_q5_1, qh)));
    return finish_min(codes, w, xblock(x), acc);
}

static PW__AVX2_INLINE __m256 q8_0_block(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_32 *xb = xblock(x);
    const __m256i dot = pw__dot_ss(pw__ld256(w + offsetof(pw__block_q8_0, qs)), pw__ld256(xb->qs));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), pw__f16_times(pw__rd16(w), xb->d), acc);
}

static PW__AVX2_INLINE __m256 iq4_nl_block(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_32 *xb = xblock(x);
    const __m256i table = _mm256_broadcastsi128_si256(pw__ld128(pw__iq4nl_values));
    const __m256i q = _mm256_shuffle_epi8(table, nibbles32(w + offsetof(pw__block_iq4_nl, qs)));
    const __m256i dot = pw__dot_ss(q, pw__ld256(xb->qs));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), pw__f16_times(pw__rd16(w), xb->d), acc);
}

/* Run wrappers: the driver specialised on each format's block function. */
static void q4_0_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_Q32_ROWS, 32, sizeof(pw__block_q4_0), sizeof(pw__q8_32), 0, 0,
               q4_0_block);
}

static void q4_1_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_Q32_ROWS, 32, sizeof(pw__block_q4_1), sizeof(pw__q8_32), 0, 0,
               q4_1_block);
}

static void q5_0_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_Q32_ROWS, 32, sizeof(pw__block_q5_0), sizeof(pw__q8_32), 0, 0,
               q5_0_block);
}

static void q5_1_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_Q32_ROWS, 32, sizeof(pw__block_q5_1), sizeof(pw__q8_32), 0, 0,
               q5_1_block);
}

static void q8_0_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_Q32_ROWS, 32, sizeof(pw__block_q8_0), sizeof(pw__q8_32), 0, 0,
               q8_0_block);
}

static void iq4_nl_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__rm_run(c, o0, o1, i0, i1, PW__RM_Q32_ROWS, 32, sizeof(pw__block_iq4_nl), sizeof(pw__q8_32), 0,
               0, iq4_nl_block);
}

#define PW__Q32_KERNEL(id, fmt)                                                              \
    const pw__kernel pw__k_##id##_rm_avx2 = {                                                \
        .info = {.name = #id "_rm_avx2",                                                     \
                 .key = "matmul_wt:" #id "/row_major x f32->Q8_32 -> f32 :avx2",             \
                 .format = fmt,                                                              \
                 .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,                                      \
                 .tile_rows = 1,                                                             \
                 .tile_batch = 1,                                                            \
                 .activation = PW_ACT_Q8_32,                                                 \
                 .features = PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C,                         \
                 .isa = "avx2"},                                                             \
        .run = id##_rm_run,                                                                  \
        .priority = PW__PRIO_AVX2,                                                           \
        .min_n = 1};

PW__Q32_KERNEL(q4_0, PW_FORMAT_Q4_0)
PW__Q32_KERNEL(q4_1, PW_FORMAT_Q4_1)
PW__Q32_KERNEL(q5_0, PW_FORMAT_Q5_0)
PW__Q32_KERNEL(q5_1, PW_FORMAT_Q5_1)
PW__Q32_KERNEL(q8_0, PW_FORMAT_Q8_0)
PW__Q32_KERNEL(iq4_nl, PW_FORMAT_IQ4_NL)
