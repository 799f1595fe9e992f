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
    const __m256i q = _mm256_broadcastsi128_si256(pw__ld128(qs)); /* a load, no shuffle uop */
    const __m256i shifted = _mm256_srlv_epi64(q, _mm256_setr_epi64x(0, 0, 4, 4));
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
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

/* The integer part of each format: 8 int32 lanes summing exactly to
 * sum(q[e] * qs[e]) over the block, for the block at w. */
typedef __m256i (*idot_fn)(const uint8_t *w, const pw__q8_32 *xb);

static PW__AVX2_INLINE __m256i q4_0_idot(const uint8_t *w, const pw__q8_32 *xb) {
    const __m256i dot = pw__dot_us(nibbles32(w + offsetof(pw__block_q4_0, qs)), pw__ld256(xb->qs));
    return _mm256_sub_epi32(dot, pw__lane0_epi32(8 * xb->sum)); /* codes are q + 8 */
}

static PW__AVX2_INLINE __m256i q5_0_idot(const uint8_t *w, const pw__q8_32 *xb) {
    const __m256i codes = _mm256_or_si256(nibbles32(w + offsetof(pw__block_q5_0, qs)),
                                          high_bits32(w + offsetof(pw__block_q5_0, qh)));
    return _mm256_sub_epi32(pw__dot_us(codes, pw__ld256(xb->qs)), pw__lane0_epi32(16 * xb->sum));
}

static PW__AVX2_INLINE __m256i q4_1_idot(const uint8_t *w, const pw__q8_32 *xb) {
    return pw__dot_us(nibbles32(w + offsetof(pw__block_q4_1, qs)), pw__ld256(xb->qs));
}

static PW__AVX2_INLINE __m256i q5_1_idot(const uint8_t *w, const pw__q8_32 *xb) {
    const __m256i codes = _mm256_or_si256(nibbles32(w + offsetof(pw__block_q5_1, qs)),
                                          high_bits32(w + offsetof(pw__block_q5_1, qh)));
    return pw__dot_us(codes, pw__ld256(xb->qs));
}

static PW__AVX2_INLINE __m256i q8_0_idot(const uint8_t *w, const pw__q8_32 *xb) {
    return pw__dot_ss(pw__ld256(w + offsetof(pw__block_q8_0, qs)), pw__ld256(xb->qs));
}

static PW__AVX2_INLINE __m256i iq4_nl_idot(const uint8_t *w, const pw__q8_32 *xb) {
    const __m256i table = _mm256_broadcastsi128_si256(pw__ld128(pw__iq4nl_values));
    const __m256i q = _mm256_shuffle_epi8(table, nibbles32(w + offsetof(pw__block_iq4_nl, qs)));
    return pw__dot_ss(q, pw__ld256(xb->qs));
}

/* Formats scaled by d alone (fp16 at the block's start): acc[r] += d_r * x.d * idot. */
static PW__AVX2_INLINE void rows_d(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                   __m256 acc[5], idot_fn idot) {
    const pw__q8_32 *xb = xblock(x);
    const __m128 s = pw__f16_rows(w, rs, rows, xb->d);
    for (int r = 0; r < rows; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(idot(w + r * rs, xb)), pw__lane(s, r), acc[r]);
}

/* Formats with a minimum ([d, m] fp16 at the block's start): acc[r] += d_r * x.d
 * * idot, and lane r of acc[4] += m_r * x.dsum. */
static PW__AVX2_INLINE void rows_dm(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                    __m256 acc[5], idot_fn idot) {
    const pw__q8_32 *xb = xblock(x);
    __m128i h = _mm_cvtsi32_si128((int)pw__rd32(w));
    if (rows > 1) h = _mm_insert_epi32(h, (int)pw__rd32(w + rs), 1);
    if (rows > 2) h = _mm_insert_epi32(h, (int)pw__rd32(w + 2 * rs), 2);
    if (rows > 3) h = _mm_insert_epi32(h, (int)pw__rd32(w + 3 * rs), 3);
    const __m256 xs = _mm256_castpd_ps(_mm256_broadcast_sd((const double *)(const void *)&xb->d));
    const __m256 f = _mm256_mul_ps(_mm256_cvtph_ps(h), xs); /* [d0 x.d, m0 x.dsum, d1 x.d, ...] */
    for (int r = 0; r < rows; ++r) {
        const __m256 dr = _mm256_permutevar8x32_ps(f, _mm256_set1_epi32(2 * r));
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(idot(w + r * rs, xb)), dr, acc[r]);
    }
    acc[4] = _mm256_add_ps(acc[4], _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)));
}

static PW__AVX2_INLINE void q4_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x, __m256 acc[5]) {
    rows_d(w, rs, rows, x, acc, q4_0_idot);
}

static PW__AVX2_INLINE void q5_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x, __m256 acc[5]) {
    rows_d(w, rs, rows, x, acc, q5_0_idot);
}

static PW__AVX2_INLINE void q4_1_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x, __m256 acc[5]) {
    rows_dm(w, rs, rows, x, acc, q4_1_idot);
}

static PW__AVX2_INLINE void q5_1_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x, __m256 acc[5]) {
    rows_dm(w, rs, rows, x, acc, q5_1_idot);
}

static PW__AVX2_INLINE void q8_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x, __m256 acc[5]) {
    rows_d(w, rs, rows, x, acc, q8_0_idot);
}

static PW__AVX2_INLINE void iq4_nl_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x, __m256 acc[5]) {
    rows_d(w, rs, rows, x, acc, iq4_nl_idot);
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
