/*
 * AVX2 row-major GEMV kernels of the 32-element formats: Q4_0, Q4_1, Q5_0,
 * Q5_1, Q8_0 and IQ4_NL, read straight from the file's bytes (layout
 * PW_LAYOUT_BLOCKED_ROW_MAJOR, any narrowed or offset view), against
 * PW_ACT_Q8_32 activations. Four weight rows per pass; any o-range, any n.
 * The same block functions read input-block-major views as column streams
 * (pw__rm_ibm_run, rm_avx2.h).
 *
 * Per weight block and activation block (one pw__q8_32, 96 bytes):
 *
 *   Q4_0  [d f16][16 B nibbles]          byte j = e_j | e_{j+16} << 4
 *   Q5_0  [d][qh u32][16 B nibbles]      bit e of qh = bit 4 of e
 *   Q4_1  [d][m][16 B nibbles]           Q5_1 [d][m][qh][16 B nibbles]
 *   Q8_0  [d][32 x s8]                   IQ4_NL [d][16 B nibbles -> codebook]
 *   x     [d f32][dsum f32][sum s32][pad][qs: 32 x s8][qu]
 *
 * Integer work: the nibble formats (Q4_0, Q4_1, Q5_0, Q5_1) put the
 * unsigned codes (0..31) of two rows' blocks in one ymm pair and take 8 or 16
 * times sum(qs) out exactly in int32 for Q4_0/Q5_0; Q4_1/Q5_1 add m * dsum
 * (the activation's exact d * sum). Q8_0 and IQ4_NL, whose codes reach
 * -128/-127, go one row per ymm through the sign trick (rm_avx2.h). Then
 * one f32 fma per ymm with d * x.d, the rows' fp16 d converted together.
 *
 * Built twice (avx2_level.h): avx2, and avxvnni through rm_q32_avxvnni.c,
 * where each vpmaddubsw + vpmaddwd pair is one vpdpbusd (two per row pair for
 * the nibble formats, started from the offset correction; the sign trick's
 * dot for Q8_0 and IQ4_NL).
 */
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "rm_q32_avx2.c must be compiled with -mavx2 -mfma -mf16c"
#endif

#include "kernel/x86/rm_avx2.h"

#include <stddef.h>

#define PW__RM_Q32_ROWS 4

_Static_assert(offsetof(pw__q8_32, dsum) == offsetof(pw__q8_32, d) + 4,
               "pairs_dm loads x.d and x.dsum as one 8-byte value");

static PW__AVX2_INLINE const pw__q8_32 *xblock(const uint8_t *x) {
    return (const pw__q8_32 *)(const void *)x;
}

/* 16 bytes of nibbles -> 32 bytes in element order (low nibbles, then high). */
static PW__AVX2_INLINE __m256i nibbles32(const uint8_t *qs) {
    const __m256i q = _mm256_broadcastsi128_si256(pw__ld128(qs)); /* a load, no shuffle uop */
    const __m256i shifted = _mm256_srlv_epi64(q, _mm256_setr_epi64x(0, 0, 4, 4));
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

/*
 * Nibble formats take two rows per ymm: a = [row A's 16 bytes | row B's],
 * lo = a & 15 = elements 0..15 of A and of B, hi = a >> 4 = elements 16..31.
 * Against [qs 0..15 | qs 0..15] and [qs 16..31 | qs 16..31] two vpmaddubsw,
 * one int16 add (2 * 2*31*127 < 32767) and one vpmaddwd leave row A's dot in
 * lanes 0..3 and row B's in lanes 4..7.
 */
typedef struct pair_codes {
    __m256i lo, hi; /* unsigned codes <= 31 */
} pair_codes;

static PW__AVX2_INLINE pair_codes nibbles_pair(const uint8_t *qa, const uint8_t *qb) {
    const __m256i a =
        _mm256_inserti128_si256(_mm256_castsi128_si256(pw__ld128(qa)), pw__ld128(qb), 1);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    return (pair_codes){_mm256_and_si256(a, m4), _mm256_and_si256(_mm256_srli_epi16(a, 4), m4)};
}

/* Adds 0x10 to the codes whose bit e is set in row A's qh (lanes 0..15 of lo:
 * bits 0..15, of hi: bits 16..31) and row B's (lanes 16..31). */
static PW__AVX2_INLINE pair_codes add_high_pair(pair_codes c, const uint8_t *qha,
                                                const uint8_t *qhb) {
    const __m256i v =
        _mm256_set1_epi64x((long long)((uint64_t)pw__rd_u32(qha) | (uint64_t)pw__rd_u32(qhb) << 32));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i sel_lo = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4,
                                            4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5);
    const __m256i sel_hi = _mm256_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 6, 6, 6,
                                            6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7);
    const __m256i x10 = _mm256_set1_epi8(0x10);
    const __m256i lo = _mm256_shuffle_epi8(v, sel_lo), hi = _mm256_shuffle_epi8(v, sel_hi);
    c.lo = _mm256_or_si256(
        c.lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(lo, bit), bit), x10));
    c.hi = _mm256_or_si256(
        c.hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hi, bit), bit), x10));
    return c;
}

typedef pair_codes (*codes_fn)(const uint8_t *wa, const uint8_t *wb);

static PW__AVX2_INLINE pair_codes q4_0_codes(const uint8_t *wa, const uint8_t *wb) {
    return nibbles_pair(wa + offsetof(pw__block_q4_0, qs), wb + offsetof(pw__block_q4_0, qs));
}

static PW__AVX2_INLINE pair_codes q4_1_codes(const uint8_t *wa, const uint8_t *wb) {
    return nibbles_pair(wa + offsetof(pw__block_q4_1, qs), wb + offsetof(pw__block_q4_1, qs));
}

static PW__AVX2_INLINE pair_codes q5_0_codes(const uint8_t *wa, const uint8_t *wb) {
    return add_high_pair(
        nibbles_pair(wa + offsetof(pw__block_q5_0, qs), wb + offsetof(pw__block_q5_0, qs)),
        wa + offsetof(pw__block_q5_0, qh), wb + offsetof(pw__block_q5_0, qh));
}

static PW__AVX2_INLINE pair_codes q5_1_codes(const uint8_t *wa, const uint8_t *wb) {
    return add_high_pair(
        nibbles_pair(wa + offsetof(pw__block_q5_1, qs), wb + offsetof(pw__block_q5_1, qs)),
        wa + offsetof(pw__block_q5_1, qh), wb + offsetof(pw__block_q5_1, qh));
}

/*
 * Block column of `rows` rows of a nibble format, two rows per ymm (see
 * nibbles_pair). f holds d_r * x.d in lane 2r (and m_r * x.dsum in lane 2r + 1
 * for formats with a minimum). offset: the codes are q + offset, removed
 * exactly in int32 (lanes 0 and 4: offset * sum(qs) for each row). A missing
 * second row of a pair reads the first row again under a zero scale.
 */
static PW__AVX2_INLINE void pairs(const uint8_t *w, int64_t rs, int rows, const pw__q8_32 *xb,
                                  __m256 f, int offset, __m256 acc[5], codes_fn codes) {
    const __m256i xlo = _mm256_broadcastsi128_si256(pw__ld128(xb->qs));
    const __m256i xhi = _mm256_broadcastsi128_si256(pw__ld128(xb->qs + 16));
    const __m256i corr = _mm256_setr_epi32(offset * xb->sum, 0, 0, 0, offset * xb->sum, 0, 0, 0);
    for (int p = 0; 2 * p < rows; ++p) {
        const int two = 2 * p + 1 < rows;
        const uint8_t *wa = w + 2 * p * rs, *wb = two ? wa + rs : wa;
        const pair_codes c = codes(wa, wb);
        __m256i dot;
        if (PW__VNNI) {
            /* two vpdpbusd from -offset * sum(qs): no int16 step, no widening */
            const __m256i start =
                offset ? _mm256_sub_epi32(_mm256_setzero_si256(), corr) : _mm256_setzero_si256();
            dot = pw__dpbusd(pw__dpbusd(start, c.lo, xlo), c.hi, xhi);
        } else {
            const __m256i p16 =
                _mm256_add_epi16(_mm256_maddubs_epi16(c.lo, xlo), _mm256_maddubs_epi16(c.hi, xhi));
            dot = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
            if (offset) dot = _mm256_sub_epi32(dot, corr);
        }
        __m256 scale =
            _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(4 * p, 4 * p, 4 * p, 4 * p, 4 * p + 2,
                                                          4 * p + 2, 4 * p + 2, 4 * p + 2));
        if (!two) scale = _mm256_blend_ps(scale, _mm256_setzero_ps(), 0xF0);
        acc[p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[p]);
    }
}

/* 2 fp16 at w + r * rs for r < rows, as lanes 2r, 2r + 1 (others 0), converted. */
static PW__AVX2_INLINE __m256 f16x2_rows(const uint8_t *w, int64_t rs, int rows) {
    __m128i h = _mm_cvtsi32_si128((int)pw__rd_u32(w));
    if (rows > 1) h = _mm_insert_epi32(h, (int)pw__rd_u32(w + rs), 1);
    if (rows > 2) h = _mm_insert_epi32(h, (int)pw__rd_u32(w + 2 * rs), 2);
    if (rows > 3) h = _mm_insert_epi32(h, (int)pw__rd_u32(w + 3 * rs), 3);
    return _mm256_cvtph_ps(h);
}

/* d only: lane 2r = d_r * x.d (the fp16 after d is the block's next bytes, times 0). */
static PW__AVX2_INLINE void pairs_d(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                    int offset, __m256 acc[5], codes_fn codes) {
    const pw__q8_32 *xb = xblock(x);
    const __m256 f = _mm256_mul_ps(f16x2_rows(w, rs, rows),
                                   _mm256_setr_ps(xb->d, 0, xb->d, 0, xb->d, 0, xb->d, 0));
    pairs(w, rs, rows, xb, f, offset, acc, codes);
}

/* [d, m]: lane 2r = d_r * x.d, lane 2r + 1 = m_r * x.dsum, added to row r's total. */
static PW__AVX2_INLINE void pairs_dm(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                     __m256 acc[5], codes_fn codes) {
    const pw__q8_32 *xb = xblock(x);
    uint64_t dd; /* x.d and x.dsum, adjacent */
    memcpy(&dd, (const uint8_t *)xb + offsetof(pw__q8_32, d), 8);
    const __m256 xs = _mm256_castsi256_ps(_mm256_set1_epi64x((long long)dd));
    const __m256 f =
        _mm256_mul_ps(f16x2_rows(w, rs, rows), xs); /* [d0 x.d, m0 x.dsum, d1 x.d, ...] */
    pairs(w, rs, rows, xb, f, 0, acc, codes);
    acc[4] = _mm256_add_ps(acc[4],
                           _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)));
}

/* Q8_0 and IQ4_NL: one row per ymm, signed codes through the sign trick. */
typedef __m256i (*idot_fn)(const uint8_t *w, const pw__q8_32 *xb);

static PW__AVX2_INLINE __m256i q8_0_idot(const uint8_t *w, const pw__q8_32 *xb) {
    return pw__dot_ss(pw__ld256(w + offsetof(pw__block_q8_0, qs)), pw__ld256(xb->qs));
}

static PW__AVX2_INLINE __m256i iq4_nl_idot(const uint8_t *w, const pw__q8_32 *xb) {
    const __m256i table = _mm256_broadcastsi128_si256(pw__ld128(pw__iq4nl_values));
    const __m256i q = _mm256_shuffle_epi8(table, nibbles32(w + offsetof(pw__block_iq4_nl, qs)));
    return pw__dot_ss(q, pw__ld256(xb->qs));
}

/* acc[r] += d_r * x.d * idot (fp16 d at the block's start). */
static PW__AVX2_INLINE void rows_d(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                   __m256 acc[5], idot_fn idot) {
    const pw__q8_32 *xb = xblock(x);
    const __m128 s = pw__f16_rows(w, rs, rows, xb->d);
    for (int r = 0; r < rows; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(idot(w + r * rs, xb)), pw__lane(s, r), acc[r]);
}

static PW__AVX2_INLINE void q4_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    pairs_d(w, rs, rows, x, 8, acc, q4_0_codes);
}

static PW__AVX2_INLINE void q5_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    pairs_d(w, rs, rows, x, 16, acc, q5_0_codes);
}

static PW__AVX2_INLINE void q4_1_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    pairs_dm(w, rs, rows, x, acc, q4_1_codes);
}

static PW__AVX2_INLINE void q5_1_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    pairs_dm(w, rs, rows, x, acc, q5_1_codes);
}

static PW__AVX2_INLINE void q8_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    rows_d(w, rs, rows, x, acc, q8_0_idot);
}

static PW__AVX2_INLINE void iq4_nl_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                         __m256 acc[5]) {
    rows_d(w, rs, rows, x, acc, iq4_nl_idot);
}

/* Each format's run functions and kernel descriptors (PW__RM_KERNELS, rm_avx2.h): its
 * block function in the row-major loop and in the input-block-major streams. */
PW__RM_KERNELS(q4_0, PW_FORMAT_Q4_0, q4_0, 32, Q8_32, PW__RM_Q32_ROWS, 1, PASSES)
PW__RM_KERNELS(q4_1, PW_FORMAT_Q4_1, q4_1, 32, Q8_32, PW__RM_Q32_ROWS, 1, PASSES)
PW__RM_KERNELS(q5_0, PW_FORMAT_Q5_0, q5_0, 32, Q8_32, PW__RM_Q32_ROWS, 1, PASSES)
PW__RM_KERNELS(q5_1, PW_FORMAT_Q5_1, q5_1, 32, Q8_32, PW__RM_Q32_ROWS, 1, PASSES)
PW__RM_KERNELS(q8_0, PW_FORMAT_Q8_0, q8_0, 32, Q8_32, PW__RM_Q32_ROWS, 0, LONG)
PW__RM_KERNELS(iq4_nl, PW_FORMAT_IQ4_NL, iq4_nl, 32, Q8_32, PW__RM_Q32_ROWS, 0, PASSES)
