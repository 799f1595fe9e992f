#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "rm_kquant_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI row-major GEMV for the 256-element super-block formats Q4_K,
 * Q5_K, Q6_K and TQ2_0, read where they lie: block (o, b) at w->data +
 * (w->offset + o*strides[0] + b) * block_bytes, nothing copied or packed.
 * Activations are pw__q8_256 rows (GGUF's Q8_K pairing: one f32 scale per
 * 256, sums per 16); y[i, o] for o in [o0, o1), i in [i0, i1).
 *
 * Eight weight rows (two quads of four; Q4_K one quad) advance together,
 * one super-block per step. Work that depends on the activations only (their
 * s8 values rearranged to match the weight bytes, offset terms, sub-block
 * sums) is done once per step for the tile's rows, and per-row bookkeeping
 * that vectorises across rows once per quad: the fp16 d (and dmin) of the
 * quad's rows are converted together, and the packed Q4_K/Q5_K scales and
 * mins of its four rows are unpacked in one zmm. Two quads read a cold weight
 * faster than one (more rows in flight): Q5_K, Q6_K and TQ2_0 gained 4 to 8%
 * of the read bandwidth; Q4_K measured about 1% slower, so it keeps one.
 * Weight values are unsigned bytes for vpdpbusd (u8 weight x s8 activation
 * -> 16 int32 lanes of 4 products each).
 *
 *   Q4_K (144 B) | d dmin | 12 B scales+mins | 128 B nibbles |
 *     one zmm of nibbles = 2 chunks of 32 bytes; low nibbles are sub-blocks
 *     4L and 4L+2, high nibbles 4L+1 and 4L+3 (L = 0, 1):
 *       lo: [ elems 128L+0..31 | 128L+64..95 ]   hi: [ 128L+32..63 | 128L+96..127 ]
 *   Q5_K (176 B) as Q4_K plus | 32 B qh | before the nibbles: bit j of qh[l]
 *     is bit 4 of element 32j + l, added as +16 under a byte mask.
 *   Q6_K (210 B) | 128 B ql | 64 B qh | 16 x s8 scales | d |
 *     half h: zmm of ql[64h..64h+63]: low nibbles elems 128h+0..63, high
 *     nibbles 128h+64..127; the 2 high bits from qh[32h..32h+31] (bits 0-1,
 *     2-3 | 4-5, 6-7 for the four 32-element groups).
 *   TQ2_0 (66 B) | 64 B of 2-bit trits | d |
 *     shift 2g of the zmm: [ elems 32g+0..31 | 128+32g+0..31 ]
 *
 * Sub-block scales are applied in integers: the two dot vectors of a zmm of
 * weights are packed to int16 (vpackssdw) and multiplied by a word vector of
 * scales, accumulating in int32 (vpdpwssd), so one f32 convert and FMA per
 * super-block remain. The int16 pack is exact: a lane is at most 4 * 15 * 127
 * = 7620 in magnitude for Q4_K, 4 * 31 * 127 = 15748 for Q5_K and 4 * 32 *
 * 127 = 16256 for Q6_K, whose -32 is folded in first. Offsets: Q6_K's -32 and
 * TQ2_0's -1 are activation-only terms, set as the starting value of the dot
 * (negated); Q4_K/Q5_K mins are sum_j min_j * (sum of sub-block j's
 * activations), one vpmaddwd per two rows against the activation sums, in
 * separate accumulators.
 *
 * The next tile's rows are prefetched into L2 while a tile computes, every
 * cache line of them (the hardware prefetchers alone do not keep interleaved
 * rows streaming).
 */
#include "format/blocks.h"
#include "kernel/kernel.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <string.h>

#define RM_NR 8 /* most weight rows per tile: quads of KQ sharing the activation work */
#define KQ 4    /* rows per quad: the unit of the step functions */
#define RM_NR_Q4_K 4 /* Q4_K: one quad */
#define RM_INLINE static inline __attribute__((always_inline))

enum { K_Q4_K, K_Q5_K, K_Q6_K, K_TQ2_0 };

/* Weight rows per tile (the descriptor's tile_rows). */
RM_INLINE int k_tile_rows(int fmt) { return fmt == K_Q4_K ? RM_NR_Q4_K : RM_NR; }

RM_INLINE size_t k_block_bytes(int fmt) {
    switch (fmt) {
    case K_Q4_K: return sizeof(pw__block_q4_K);
    case K_Q5_K: return sizeof(pw__block_q5_K);
    case K_Q6_K: return sizeof(pw__block_q6_K);
    default: return sizeof(pw__block_tq2_0);
    }
}

/* Prefetch every cache line of [p, p + bytes) into L2 (l2) or L1. */
RM_INLINE void k_prefetch(const uint8_t *p, size_t bytes, int l2) {
    for (size_t k = 0; k + 64 < bytes; k += 64) pw__x86_prefetch_line(p + k, l2);
    pw__x86_prefetch_line(p + bytes - 1, l2);
}

/* Two 32-byte pieces of activations as one zmm. */
RM_INLINE __m512i k_cat(const int8_t *lo, const int8_t *hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)lo)),
                              _mm256_loadu_si256((const __m256i *)hi), 1);
}

/* The activation half of a step, shared by the rows of a tile. */
typedef struct k_act {
    __m512i q[4];    /* s8 activations lined up with the four weight vectors of the format */
    __m512i init[4]; /* starting value of each dot (activation-only offset terms) */
    __m512i sums;    /* Q4_K/Q5_K: words [0 x4, s0..s3 | 0 x4, s4..s7] twice, s_j = sum of sub-block j */
    __m512i pairs;   /* Q4_K/Q5_K: int32 lane 4j + r holds the words s_2j, s_2j+1 (k_step_fold) */
    float d;
} k_act;

RM_INLINE k_act k_act_load(const pw__q8_256 *x, int fmt) {
    k_act a;
    const int8_t *q = x->qs;
    a.d = x->d;
    a.sums = _mm512_setzero_si512();
    a.pairs = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) a.init[k] = _mm512_setzero_si512();
    if (fmt == K_Q4_K || fmt == K_Q5_K) {
        a.q[0] = k_cat(q + 0, q + 64);    /* lo, L = 0 */
        a.q[1] = k_cat(q + 32, q + 96);   /* hi, L = 0 */
        a.q[2] = k_cat(q + 128, q + 192); /* lo, L = 1 */
        a.q[3] = k_cat(q + 160, q + 224); /* hi, L = 1 */
        const __m256i pairs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)x->bsums),
                                                _mm256_set1_epi16(1));
        const __m256i v = _mm256_packs_epi32(_mm256_setzero_si256(), pairs);
        a.sums = _mm512_inserti64x4(_mm512_castsi256_si512(v), v, 1);
        const __m128i s8 = _mm_packs_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
        a.pairs = _mm512_permutexvar_epi32(
            _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0), _mm512_castsi128_si512(s8));
    } else if (fmt == K_Q6_K) {
        const __m512i c32 = _mm512_set1_epi8(32);
        for (int k = 0; k < 4; ++k) {
            a.q[k] = _mm512_loadu_si512(q + 64 * k);
            a.init[k] = _mm512_sub_epi32(_mm512_setzero_si512(),
                                         _mm512_dpbusd_epi32(_mm512_setzero_si512(), c32, a.q[k]));
        }
    } else {
        for (int g = 0; g < 4; ++g) a.q[g] = k_cat(q + 32 * g, q + 128 + 32 * g);
        a.init[0] = _mm512_maskz_set1_epi32(1, -x->sum);
    }
    return a;
}

/*
 * Q4_K/Q5_K: the 12 packed scale bytes of a quad's rows (at blk[r] + 4, 16
 * bytes readable), unpacked to words: sm[0] = [row 0 | row 1], sm[1] = [row 2 |
 * row 3], each row [sc0..3, m0..3, sc4..7, m4..7].
 */
RM_INLINE void k4_scales_mins(const uint8_t *const blk[KQ], int rows, __m512i sm[2]) {
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(blk[0] + 4)));
    if (rows > 1) x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(blk[1] + 4)), 1);
    if (rows > 2) x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(blk[2] + 4)), 2);
    if (rows > 3) x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(blk[3] + 4)), 3);
    /* per row, dwords u0, u1, u2: sc0-3 = u0 & 63s; m0-3 = u1 & 63s; sc4-7 = (u2 & 15s) |
     * the top 2 bits of u0's bytes << 4; m4-7 = (u2 >> 4 & 15s) | u1's top bits << 4 */
    __m512i lowbits = _mm512_srlv_epi32(_mm512_shuffle_epi32(x, _MM_SHUFFLE(2, 2, 1, 0)),
                                        _mm512_broadcast_i32x4(_mm_set_epi32(4, 0, 0, 0)));
    lowbits = _mm512_and_si512(lowbits, _mm512_broadcast_i32x4(_mm_set_epi32(
                                            0x0f0f0f0f, 0x0f0f0f0f, 0x3f3f3f3f, 0x3f3f3f3f)));
    const __m512i top = _mm512_srli_epi32(_mm512_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 1, 0)), 2);
    const __m512i packed = _mm512_ternarylogic_epi32(
        lowbits, top, _mm512_broadcast_i32x4(_mm_set_epi32(0x30303030, 0x30303030, 0, 0)),
        0xF8); /* a | (b & c) */
    sm[0] = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(packed));
    sm[1] = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(packed, 1));
}

/* fp16 pairs at blk[r] (Q4_K/Q5_K d, dmin) as f32 [d0, m0, d1, m1, ..] times f. */
RM_INLINE __m512 k_f16_pairs(const uint8_t *const blk[KQ], int rows, float f) {
    uint64_t lo = pw__rd_u32(blk[0]), hi = 0;
    if (rows > 1) lo |= (uint64_t)pw__rd_u32(blk[1]) << 32;
    if (rows > 2) hi = pw__rd_u32(blk[2]);
    if (rows > 3) hi |= (uint64_t)pw__rd_u32(blk[3]) << 32;
    const __m256 v = _mm256_cvtph_ps(_mm_set_epi64x((long long)hi, (long long)lo));
    return _mm512_zextps256_ps512(_mm256_mul_ps(v, _mm256_set1_ps(f)));
}

/* fp16 at blk[r] + off as f32 lane r, times f. */
RM_INLINE __m512 k_f16_rows(const uint8_t *const blk[KQ], int rows, size_t off, float f) {
    uint64_t h = pw__rd_u16(blk[0] + off);
    for (int r = 1; r < rows; ++r) h |= (uint64_t)pw__rd_u16(blk[r] + off) << (16 * r);
    const __m128 v = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)h));
    return _mm512_zextps128_ps512(_mm_mul_ps(v, _mm_set1_ps(f)));
}

/* Lane k of v in all 16 lanes. */
RM_INLINE __m512 k_lane(__m512 v, int k) { return _mm512_permutexvar_ps(_mm512_set1_epi32(k), v); }

/* Word index vectors for vpermw: the scale of each int16 lane after vpackssdw of the
 * two dot vectors of part p (a 128-bit lane of the pack holds 4 words of each). */
static const int16_t k4_scale_index[2][2][32] = {
    /* [row parity][part]: words of k4_scales_mins; a row's sc0..3 at 0..3, sc4..7 at
     * 8..11, the odd row of a pair 16 words on */
    {{0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1,
      2, 2, 2, 2, 3, 3, 3, 3, 2, 2, 2, 2, 3, 3, 3, 3},
     {8, 8, 8, 8, 9, 9, 9, 9, 8, 8, 8, 8, 9, 9, 9, 9,
      10, 10, 10, 10, 11, 11, 11, 11, 10, 10, 10, 10, 11, 11, 11, 11}},
    {{16, 16, 16, 16, 17, 17, 17, 17, 16, 16, 16, 16, 17, 17, 17, 17,
      18, 18, 18, 18, 19, 19, 19, 19, 18, 18, 18, 18, 19, 19, 19, 19},
     {24, 24, 24, 24, 25, 25, 25, 25, 24, 24, 24, 24, 25, 25, 25, 25,
      26, 26, 26, 26, 27, 27, 27, 27, 26, 26, 26, 26, 27, 27, 27, 27}}};
static const int16_t q6k_scale_index[2][32] = {
    /* half h, 128-bit lane j: [sc(8h+j) x4, sc(8h+4+j) x4] */
    {0, 0, 0, 0, 4, 4, 4, 4, 1, 1, 1, 1, 5, 5, 5, 5,
     2, 2, 2, 2, 6, 6, 6, 6, 3, 3, 3, 3, 7, 7, 7, 7},
    {8, 8, 8, 8, 12, 12, 12, 12, 9, 9, 9, 9, 13, 13, 13, 13,
     10, 10, 10, 10, 14, 14, 14, 14, 11, 11, 11, 11, 15, 15, 15, 15}};

/* Q4_K/Q5_K, one super-block of a quad's rows: isum[r] row r's int32 dot with its
 * sub-block scales applied (16 lanes to add; rows past `rows` zero), sm its scales and
 * mins (k4_scales_mins). */
RM_INLINE void k4_isums(const uint8_t *const blk[KQ], const k_act *a, int rows, int fmt,
                        __m512i isum[KQ], __m512i sm[2]) {
    const int q5 = fmt == K_Q5_K;
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    k4_scales_mins(blk, rows, sm);
#pragma GCC unroll 4
    for (int r = 0; r < KQ; ++r) {
        isum[r] = _mm512_setzero_si512();
        if (r >= rows) continue;
        const uint8_t *qs = blk[r] + (q5 ? 48 : 16);
        const __m512i qh =
            q5 ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk[r] + 16)))
               : _mm512_setzero_si512();
        for (int part = 0; part < 2; ++part) {
            const __m512i nib = _mm512_loadu_si512(qs + 64 * part);
            __m512i lo = _mm512_and_si512(nib, m0f);
            __m512i hi = _mm512_and_si512(_mm512_srli_epi16(nib, 4), m0f);
            if (q5) {
                /* sub-blocks 4L, 4L+2 (lo) and 4L+1, 4L+3 (hi): bit (sub) of qh[l] */
                const __m512i blo = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << (4 * part))),
                                                       _mm256_set1_epi8((char)(1 << (4 * part + 2))), 1);
                const __m512i c16 = _mm512_set1_epi8(16);
                lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(qh, blo), lo, c16);
                hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(qh, _mm512_add_epi8(blo, blo)), hi,
                                          c16);
            }
            const __m512i dlo = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, a->q[2 * part]);
            const __m512i dhi = _mm512_dpbusd_epi32(_mm512_setzero_si512(), hi, a->q[2 * part + 1]);
            const __m512i sc =
                _mm512_permutexvar_epi16(_mm512_loadu_si512(k4_scale_index[r % 2][part]), sm[r / 2]);
            isum[r] = _mm512_dpwssd_epi32(isum[r], _mm512_packs_epi32(dlo, dhi), sc);
        }
    }
}

/* Q6_K, one super-block of a quad's rows: isum[r] as k4_isums' (the -32 folded in). */
RM_INLINE void q6k_isums(const uint8_t *const blk[KQ], const k_act *a, int rows, __m512i isum[KQ]) {
    const __m512i m0f = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    /* high bits to bits 4-5: groups 0, 1 (lo) shift left 4, 2; groups 2, 3 (hi) right 0, 2 */
    const __m512i shl = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i shr = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
#pragma GCC unroll 4
    for (int r = 0; r < KQ; ++r) {
        isum[r] = _mm512_setzero_si512();
        if (r >= rows) continue;
        const __m512i sc16 = _mm512_castsi256_si512(
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk[r] + 192))));
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(blk[r] + 64 * h);
            const __m512i qh =
                _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk[r] + 128 + 32 * h)));
            const __m512i lo = _mm512_ternarylogic_epi32(_mm512_and_si512(ql, m0f),
                                                         _mm512_sllv_epi16(qh, shl), m30, 0xF8);
            const __m512i hi = _mm512_ternarylogic_epi32(
                _mm512_and_si512(_mm512_srli_epi16(ql, 4), m0f), _mm512_srlv_epi16(qh, shr), m30, 0xF8);
            const __m512i dlo = _mm512_dpbusd_epi32(a->init[2 * h], lo, a->q[2 * h]);
            const __m512i dhi = _mm512_dpbusd_epi32(a->init[2 * h + 1], hi, a->q[2 * h + 1]);
            const __m512i sc = _mm512_permutexvar_epi16(_mm512_loadu_si512(q6k_scale_index[h]), sc16);
            isum[r] = _mm512_dpwssd_epi32(isum[r], _mm512_packs_epi32(dlo, dhi), sc);
        }
    }
}

/* TQ2_0, one super-block of a quad's rows: isum[r] as k4_isums' (the -1 folded in). */
RM_INLINE void tq2_isums(const uint8_t *const blk[KQ], const k_act *a, int rows, __m512i isum[KQ]) {
    const __m512i m3 = _mm512_set1_epi8(3);
#pragma GCC unroll 4
    for (int r = 0; r < KQ; ++r) {
        isum[r] = _mm512_setzero_si512();
        if (r >= rows) continue;
        const __m512i q = _mm512_loadu_si512(blk[r]);
        isum[r] = a->init[0];
        isum[r] = _mm512_dpbusd_epi32(isum[r], _mm512_and_si512(q, m3), a->q[0]);
        isum[r] = _mm512_dpbusd_epi32(isum[r], _mm512_and_si512(_mm512_srli_epi16(q, 2), m3), a->q[1]);
        isum[r] = _mm512_dpbusd_epi32(isum[r], _mm512_and_si512(_mm512_srli_epi16(q, 4), m3), a->q[2]);
        isum[r] = _mm512_dpbusd_epi32(isum[r], _mm512_and_si512(_mm512_srli_epi16(q, 6), m3), a->q[3]);
    }
}

/* The super-block scales of a quad's rows: Q4_K/Q5_K [d0, dmin0, d1, dmin1, ..] (lanes
 * 2r, 2r + 1), Q6_K/TQ2_0 d in lane r; times the activations' d. */
RM_INLINE __m512 k_row_scales(const uint8_t *const blk[KQ], const k_act *a, int rows, int fmt) {
    if (fmt == K_Q4_K || fmt == K_Q5_K) return k_f16_pairs(blk, rows, a->d);
    return k_f16_rows(blk, rows, fmt == K_Q6_K ? 208 : 64, a->d);
}

/* One super-block of a quad's rows, any format: isum[r] as k4_isums' (sm: Q4_K/Q5_K). */
RM_INLINE void k_isums(const uint8_t *const blk[KQ], const k_act *a, int rows, int fmt,
                       __m512i isum[KQ], __m512i sm[2]) {
    if (fmt == K_Q4_K || fmt == K_Q5_K)
        k4_isums(blk, a, rows, fmt, isum, sm);
    else if (fmt == K_Q6_K)
        q6k_isums(blk, a, rows, isum);
    else
        tq2_isums(blk, a, rows, isum);
}

/* One super-block of a quad's rows (any format), each row's sums in its own vector:
 * acc[r] += row r's (16 lanes to add); Q4_K/Q5_K's min terms (to subtract) to
 * accm[r / 2], rows 2k and 2k + 1 in its halves. */
RM_INLINE void k_step(const uint8_t *const blk[KQ], const k_act *a, int rows, int fmt,
                      __m512 acc[KQ], __m512 accm[2]) {
    __m512i isum[KQ], sm[2];
    const __m512 d = k_row_scales(blk, a, rows, fmt);
    const int pairs = fmt == K_Q4_K || fmt == K_Q5_K;
    k_isums(blk, a, rows, fmt, isum, sm);
#pragma GCC unroll 4
    for (int r = 0; r < rows; ++r)
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), k_lane(d, pairs ? 2 * r : r), acc[r]);
    if (!pairs) return;
#pragma GCC unroll 2
    for (int k = 0; k < (rows + 1) / 2; ++k) {
        const __m512i msum = _mm512_madd_epi16(sm[k], a->sums);
        const __m512 dmin = _mm512_permutexvar_ps(
            _mm512_inserti64x4(_mm512_set1_epi32(4 * k + 1), _mm256_set1_epi32(4 * k + 3), 1), d);
        accm[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum), dmin, accm[k]);
    }
}

/* Index of vpermt2w over the two k4_scales_mins vectors (rows 0, 1 | rows 2, 3): word
 * 2i + h of the result, i = 4j + r, is row r's min m_(2j + h) (a row's m0..3 at words
 * 4..7 of its 16, m4..7 at 12..15). */
static const int16_t k4_min_index[32] = {
    4, 5, 20, 21, 36, 37, 52, 53, 6, 7, 22, 23, 38, 39, 54, 55,
    12, 13, 28, 29, 44, 45, 60, 61, 14, 15, 30, 31, 46, 47, 62, 63};

/* One super-block of a quad's rows (any format) into qv, lane 4j + r a partial sum of
 * row r (Q4_K/Q5_K min terms subtracted): the rows' int32 dots are added across lanes in
 * integers first (exact in int32: below 2^24 for Q4_K/Q5_K, 2^26 for Q6_K, whose
 * conversion then rounds as the f32 additions it replaces did), so one conversion and
 * fma serve the four rows, and the min terms of the four rows take one vpmaddwd
 * against the activations' sub-block sums. */
RM_INLINE void k_step_fold(const uint8_t *const blk[KQ], const k_act *a, int rows, int fmt,
                           __m512 *qv) {
    __m512i isum[KQ], sm[2];
    const __m512 d = k_row_scales(blk, a, rows, fmt);
    const int pairs = fmt == K_Q4_K || fmt == K_Q5_K;
    k_isums(blk, a, rows, fmt, isum, sm);
    /* lane 4j + r of v: a partial of row r's dot */
    const __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(isum[0], isum[1]),
                                        _mm512_unpackhi_epi32(isum[0], isum[1]));
    const __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(isum[2], isum[3]),
                                        _mm512_unpackhi_epi32(isum[2], isum[3]));
    const __m512i v = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
    const __m512 dv = pairs ? _mm512_permutexvar_ps(
                                  _mm512_set_epi32(6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0), d)
                            : _mm512_shuffle_f32x4(d, d, 0);
    *qv = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), dv, *qv);
    if (!pairs) return;
    /* min terms: lane 4j + r, m_2j s_2j + m_2j+1 s_2j+1 of row r, times its dmin */
    const __m512i mm = _mm512_permutex2var_epi16(sm[0], _mm512_loadu_si512(k4_min_index), sm[1]);
    const __m512 dmin = _mm512_permutexvar_ps(
        _mm512_set_epi32(7, 5, 3, 1, 7, 5, 3, 1, 7, 5, 3, 1, 7, 5, 3, 1), d);
    *qv = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(mm, a->pairs)), dmin, *qv);
}

static inline float k_hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* y[i, o .. o+rows) for rows (RM_NR or fewer) consecutive weight rows. */
RM_INLINE void k_tile(const pw__mm_call *c, int64_t o, int rows, int64_t i, int fmt, int l2) {
    const pw_view *w = c->w;
    const size_t bb = k_block_bytes(fmt);
    /* a row's next block: bb on in row-major order, out * bb in input-block-major */
    const size_t bs = (size_t)w->strides[1] * bb;
    const int64_t nb = c->in / 256;
    const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (size_t)i * c->xq_row_bytes);
    const uint8_t *wr[RM_NR], *pf[RM_NR];
    __m512 acc[RM_NR], accm[RM_NR / 2];
#pragma GCC unroll 8
    for (int r = 0; r < RM_NR; ++r) {
        /* pf: the same row of the next tile, fetched while this one computes */
        const int64_t on = o + r + rows < c->out ? o + r + rows : o;
        wr[r] = w->data + (size_t)(w->offset + (r < rows ? o + r : o) * w->strides[0]) * bb;
        pf[r] = w->data + (size_t)(w->offset + on * w->strides[0]) * bb;
        acc[r] = _mm512_setzero_ps();
        if (r % 2 == 0) accm[r / 2] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; ++b) {
        const k_act a = k_act_load(x + b, fmt);
        const uint8_t *blk[RM_NR];
#pragma GCC unroll 8
        for (int r = 0; r < RM_NR; ++r) {
            blk[r] = wr[r] + (size_t)b * bs;
            if (r < rows) k_prefetch(pf[r] + (size_t)b * bs, bb, l2);
        }
#pragma GCC unroll 4
        for (int q = 0; q < RM_NR / KQ; ++q) {
            const int qrows = rows - KQ * q < KQ ? rows - KQ * q : KQ;
            if (qrows <= 0) break;
            k_step(blk + KQ * q, &a, qrows, fmt, acc + KQ * q, accm + KQ / 2 * q);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) {
        const __m512 m = accm[r / 2];
        const __m256 half = r % 2 ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1))
                                  : _mm512_castps512_ps256(m);
        const float min = k_hsum256(half);
        c->y[i * c->ldy + o + r] = _mm512_reduce_add_ps(acc[r]) - min;
    }
}

/* The next tile's rows prefetched into L2 where pw__x86_prefetch_l2 says so (Intel,
 * Zen 4), else into L1, for the K-quants; TQ2_0 always into L2. On the Zen 5 VM (L1
 * there), one process alternating the two, a [11008, 4096] weight evicted before each
 * call, 41 calls each, median GB/s, two rounds: Q5_K 20.9 / 21.0 -> 24.2 / 24.3 (1
 * thread), 38.1 / 38.1 -> 44.3 / 44.5 (2). The two builds in turn, packwise bench
 * --policy in_place --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2, fraction of
 * the read, 1 thread [11008, 4096], two or three rounds: Q5_K 48.1 / 62.6 / 62.6 /
 * 58.7 / 53.4% -> 56.3 / 67.3 / 66.3 / 65.7 / 62.2%, Q4_K 81.0 / 80.3 -> 87.6 / 84.4,
 * Q6_K 61.5 / 60.1 -> 63.8 / 64.5; TQ2_0 gained in the one-process runs (15.3 -> 17.8,
 * 29.3 -> 37.0 GB/s) but lost in the bench's (52.6 / 60.4 / 65.9 / 64.0 / 58.2 -> 44.5 /
 * 58.5 / 57.9 / 49.9 / 40.5%), so it keeps L2. The setting is read once per call.
 * Folding each quad's rows into one vector a step (k_step_fold, as the input-block-major
 * GEMV does) measured slower here in one process (Q5_K 19.8 -> 18.9, 40.5 -> 38.3 GB/s;
 * TQ2_0 level). */
RM_INLINE void k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1, int fmt) {
    const int l2 = fmt == K_TQ2_0 || __atomic_load_n(&pw__x86_prefetch_l2, __ATOMIC_RELAXED);
    const int nr = k_tile_rows(fmt);
    int64_t o = o0;
    for (; o + nr <= o1; o += nr)
        for (int64_t i = i0; i < i1; ++i) k_tile(c, o, nr, i, fmt, l2);
    for (; o + KQ <= o1; o += KQ)
        for (int64_t i = i0; i < i1; ++i) k_tile(c, o, KQ, i, fmt, l2);
    for (; o < o1; ++o)
        for (int64_t i = i0; i < i1; ++i) k_tile(c, o, 1, i, fmt, l2);
}

/* Input-block-major views read as streams: the rows of one block column lie side by
 * side there, so the kernel reads K_IBM_S columns at once over all of a task's rows,
 * each a contiguous run of rows x bb bytes (one stream), quad by quad in turn; after
 * each column group a quad's sums are folded to one per row (k_lanes_sum) and added to
 * y, which holds the partial sums between groups. Each stream is prefetched K_IBM_PF /
 * K_IBM_S bytes ahead, from the end of a column on into its next one. Rows that do not
 * lie side by side (a narrowed view) are read where they lie, each quad prefetching its
 * rows of its stream's next column.
 *
 * It replaced a GEMV that made each tile's q4kx/q6kx record in L1 from a column and ran
 * the tiled kernel's record function on it (0.2's *_ibm_gemv_avx512vnni): the maker cost
 * more than the record saved. packwise bench --layout kernel --policy in_place --kernel
 * K --formats F --shapes 11008x4096 --batch 1, the two kernels alternately, two rounds:
 * 1 thread, Q4_K 82-87% of the read against 59-66%, Q6_K 84-88% against 50-51%,
 * Q5_K 79-84% against k_run's 68-70%. Streams, the same runs for S = 1, 2, 4 (and 8):
 * Q4_K 65-73%, 78-80%, 79-85% (75-90%); Q6_K 78-79%, 84-85%, 84-90% (76-81%). One
 * stream is compute-bound near the bus (the weight in L2, 512 x 4096, 1 thread: Q4_K
 * at 14-18 GB/s, about 24 vector operations per 144-byte block); several let the
 * loads of one overlap the arithmetic of another. Prefetch over all four streams 2,
 * 4, 8, 16 KiB: 77-83%, 84%, 78-82%, 78%. TQ2_0: 83-84% against k_run's 79% (one
 * stream here measured 72%). A quad's sums stay in registers over its column group
 * (they went through L1 at every stream's step, a store-to-load chain across the
 * streams): weight in L2 ([512, 4096], 1 thread, an Intel Xeon VM) Q4_K 23.8 -> 28.1
 * GB/s, Q5_K 26.1 -> 28.4, TQ2_0 18.8 -> 21.4, Q6_K 38.3 -> 36.1 (within its noise);
 * cold [11008, 4096] 1 thread, 3 rounds each in turn, Q4_K 84.7-85.9% -> 85.9-86.7%,
 * Q5_K 84.7-86.6 -> 86.2-87.2, Q6_K 90.3-92.3 -> 88.9-90.5.
 *
 * Runs as long as the task: the kernel read passes of 256 rows, each quad's four row
 * sums and two min sums (96 bytes a row) kept in an array on the stack between column
 * groups, so each stream jumped to its next column after 36 KiB (Q4_K). On Zen 4 longer
 * runs read faster (--layout kernel --policy in_place, 1 thread, [11008, 4096] and
 * [4096, 4096], a scratch build choosing the pass at run time, two rounds in turn): Q4_K
 * 256 / 512 / 1024 rows 57-58 / 61-63 / 65-66% at 11008, Q6_K 59-65 / 64 / 66-67; with
 * the sums folded to 16 bytes a row (so 4096 rows fit in 64 KiB), three rounds: 2048 /
 * 4096 / 8192 rows Q4_K 74-76 / 73-77 / 76-81, Q6_K 75-78 / 76-79 / 77-81. Folded to one
 * sum a row and kept in y, there is no pass: the same runs, three rounds of the two
 * builds in turn, Q4_K 53-56% -> 63-79 (73-79 in two of three) at 11008 and 48-55 ->
 * 73-75 at 4096, Q5_K 53-58 -> 70-75 / 48-52 -> 63-64, Q6_K 58-63 -> 81-82 / 54-58 ->
 * 74-77; two rounds at 2 threads (tasks of 344 rows, as before): Q4_K 70-72 -> 78-80,
 * Q6_K 73 -> 77-79, TQ2_0 69-71 -> 81-83 (1 thread 51-53 -> 63-66). The fold costs 17
 * operations a quad per column group (16 blocks); the stored array cost 12 loads and
 * stores. Q4_K stays below Q6_K because it is compute-bound on Zen 4: a [1024, 4096]
 * weight left in cache (the scratch harness) reads at 28 GB/s, Q6_K at 36.
 *
 * Each step now adds its four rows' dots across lanes in integers and converts once
 * (k_step_fold), where each row took a conversion, a lane broadcast of its d and an fma,
 * and the four rows' min terms take one vpmaddwd (vpermt2w gathers their mins), where
 * each pair of rows took its own and a fold after every group: from cache ([1024, 4096],
 * three rounds) Q4_K 27.9 -> 31.2 GB/s; cold, 1 thread, two or three rounds of the builds
 * in turn, [11008, 4096] / [4096, 4096]: Q4_K 70-76% -> 77-83% / 66-69 -> 70-76, Q5_K
 * 65-68 -> 74-78 / 62-63 -> 68-72, TQ2_0 58-60 -> 59-65 / 55-57 -> 55-56, Q6_K 84-85 ->
 * 85-86 / 82-83 -> 86-87; 2 threads (tasks of 344 rows) Q4_K 81-83 -> 78-79, TQ2_0
 * 78-79 -> 74-76, Q6_K level. */
#define K_IBM_SPAN (1 << 20) /* most rows of one k_ibm_span call: int arithmetic inside */
#define K_IBM_S 4     /* columns read at once: the streams */
#define K_IBM_PF 4096 /* bytes prefetched ahead into L1, over all the streams */
/* On Zen 4 (pw__x86_hw_streams, base/cpu.c) another distance. With 256-row passes:
 * --layout kernel --policy in_place, [11008, 4096] and [4096, 4096], 1 / 2 threads,
 * two rounds of each distance in turn: Q4_K 4096 B 47-55 / 50-68%, 3072 43-60 / 48-70,
 * 2048 51-57 / 70-72, 1536 51-58 / 49-74, 1024 55-62 / 72-77; Q6_K 49-55 / 40-67, 46-59 / 62-75, 60-66 / 65-77,
 * 56-61 / 67-74, 56-61 / 66-76; three more rounds of 4096 and the shipped switch, 1
 * thread: Q4_K 46-57 / 51-58, Q6_K 48-56 / 59-63. Later, [11008, 4096], two rounds of
 * each in turn: this (L1, 2 KiB) Q4_K 59-61 / 71-74%, Q6_K 67-68 / 70; into L2 57-58 /
 * 65-68, 40 / 52; no prefetch 60-61 / 65-73, 42-44 / 51-54; L1 4 KiB 57 / 54-71, 56 /
 * 71; L1 8 KiB 53 / 65-67, 47-49 / 44-56. Not compute-bound alone: a [1024, 4096]
 * weight left in cache (a scratch build that skips the flush) reads at Q4_K 22-29,
 * Q6_K 30-37 GB/s against 15-19 and 12-21 cold.
 *
 * With runs as long as the task (above) the best distance on Zen 4 is none: each step
 * prefetches its own quad's lines just before it reads them, so all of them are
 * requested at once (a Q6_K step reads its blocks' low bits, high bits, scales and d in
 * four places); the hardware prefetcher runs ahead along the four streams. [11008,
 * 4096] / [4096, 4096], 1 thread, three rounds of each in turn: Q6_K 2 KiB 78-81 /
 * 72-74%, 1 KiB 82-84 / 73-75, none 83-85 / 76-81, no prefetch instructions at all
 * 47-50 / 44-47; Q4_K 74-78 / 66-69, 73-77 / 68, 74-76 / 67-69, 72-75 / 65-70; Q5_K
 * 66-67 / 59-60, 68 / 64-66, 68-72 / 62-65; TQ2_0 59-64 / 54-61, 62-64 / 56-60, 58-63 /
 * 55-61. Two threads, two rounds: Q4_K 64-80 / 53-72 against 79-81 / 75-76, Q6_K 80-87
 * / 70-72 against 78-82 / 78, TQ2_0 70-78 / 69-73 against 72 / 60-66. */
#define K_IBM_PF_ZEN4 0
/* On Zen 5 (pw__x86_zen5) twice the distance: an AMD EPYC Zen 5 VM (2 vCPUs, shared),
 * --layout kernel --policy in_place, [11008, 4096] / [4096, 4096], one scratch build
 * choosing at run time, three rounds of each in turn, 4096 / 8192 / 12288 bytes over the
 * four streams, 1 thread: Q4_K 74-76 / 82-95 / 84-93% and 68-74 / 74-92 / 68-91, Q5_K
 * 73-77 / 80-91 / 81-91 and 69-71 / 78-83 / 73-84, Q6_K 74-77 / 80-85 / 81-83 and 69-76 /
 * 81-82 / 82-86, TQ2_0 62-68 / 69-82 / 63-84 and 65-70 / 54-79 / 71-84; 2 threads Q4_K
 * 76-86 / 77-80 / 81-88, Q6_K 71-87 / 80-85 / 83-86 (2048 lower than 4096 throughout:
 * Q4_K 70-76, Q6_K 69-71 on 1 thread). */
#define K_IBM_PF_ZEN5 8192
/* And Q6_K there two columns at a time, not four: the same VM, --layout kernel --policy
 * in_place --formats Q6_K (with Q4_K, Q5_K, TQ2_0) --shapes 11008x4096,4096x4096 --batch 1
 * --threads 1,2, one scratch build choosing at run time, six rounds of each in turn,
 * fraction of the read, [11008, 4096] / [4096, 4096], 1 thread: four columns 70.8-84.0 /
 * 72.1-80.6%, two 69.9-94.0 / 88.2-91.5 (below 80 only in the slow spell that took every
 * choice down), one 80.5-95.8 / 88.7-94.1; 2 threads 80.1-84.5 / 68.8-76.4, 71.2-91.9 /
 * 71.1-80.4, 72.3-86.8 / 74.5-81.6. Q4_K, Q5_K and TQ2_0 were no better with one or two
 * columns (Q4_K 1 thread 87-91 / 82-85 with four, 62-91 / 61-86 with one or two). */
#define K_IBM_S_ZEN5_Q6_K 2
_Static_assert(K_IBM_S_ZEN5_Q6_K <= K_IBM_S, "k_ibm_span sizes its arrays by K_IBM_S");
/* Lane r of the result: the sum of lanes 4j + r of v (j = 0..3). */
RM_INLINE __m128 k_lanes_sum(__m512 v) {
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm512_castps512_ps128(v);
}

/* Rows [o0, o0 + rows) of an input-block-major view, every column: K_IBM_S columns at a
 * time, each quad's sums added to y after each group (y holds the partial sums between
 * groups). */
RM_INLINE void k_ibm_span(const pw__mm_call *c, int64_t o0, int rows, int64_t i0, int64_t i1,
                          int fmt, size_t lead, const int S) {
    const pw_view *w = c->w;
    const size_t bb = k_block_bytes(fmt);
    const size_t rs = (size_t)w->strides[0] * bb, bs = (size_t)w->strides[1] * bb;
    const int64_t nb = c->in / 256;
    const int adjacent = rs == bb;
    const size_t run = (size_t)rows * bb; /* bytes of one column's run */
    const uint8_t *first = w->data + (size_t)(w->offset + o0 * w->strides[0]) * bb;
    for (int64_t i = i0; i < i1; ++i) {
        const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (size_t)i * c->xq_row_bytes);
        float *y = c->y + i * c->ldy + o0;
        for (int64_t b = 0; b < nb; b += S) {
            const int sn = nb - b < S ? (int)(nb - b) : S;
            k_act a[K_IBM_S];
            const uint8_t *col[K_IBM_S], *next[K_IBM_S];
            for (int s = 0; s < S; ++s) {
                if (s >= sn) break;
                a[s] = k_act_load(x + b + s, fmt);
                col[s] = first + (size_t)(b + s) * bs;
                next[s] = b + s + S < nb ? col[s] + (size_t)S * bs : NULL;
            }
            for (int q = 0; q < rows; q += KQ) {
                const int qrows = rows - q < KQ ? rows - q : KQ;
                /* the quad's sums in registers over the column group, then added to y */
                __m512 qv = _mm512_setzero_ps();
                for (int s = 0; s < S; ++s) {
                    if (s >= sn) break;
                    const uint8_t *blk[KQ];
                    for (int r = 0; r < KQ; ++r)
                        blk[r] = col[s] + (size_t)(q + (r < qrows ? r : 0)) * rs;
                    if (adjacent) {
                        const size_t at = (size_t)q * bb + lead;
                        const uint8_t *p = at < run ? col[s] + at
                                           : next[s] != NULL ? next[s] + (at - run)
                                                             : NULL;
                        if (p != NULL)
                            for (size_t l = 0; l < (size_t)qrows * bb; l += 64)
                                _mm_prefetch((const char *)(p + l), _MM_HINT_T0);
                    } else if (b + s + S < nb) { /* this stream's next column */
                        for (int r = 0; r < qrows; ++r) k_prefetch(blk[r] + (size_t)S * bs, bb, 1);
                    }
                    k_step_fold(blk, &a[s], qrows, fmt, &qv);
                }
                const __mmask8 m = (__mmask8)((1u << qrows) - 1);
                __m128 v = k_lanes_sum(qv);
                if (b > 0) v = _mm_add_ps(v, _mm_maskz_loadu_ps(m, y + q));
                _mm_mask_storeu_ps(y + q, m, v);
            }
        }
    }
}

/* S (at most K_IBM_S, a constant once inlined) columns at a time, pf bytes prefetched
 * ahead over all of them. */
RM_INLINE void k_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                         int fmt, const int pf, const int S) {
    for (int64_t o = o0; o < o1; o += K_IBM_SPAN)
        k_ibm_span(c, o, o1 - o < K_IBM_SPAN ? (int)(o1 - o) : K_IBM_SPAN, i0, i1, fmt,
                   (size_t)pf / (size_t)S, S);
}

#define RM_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)
/* One descriptor per block order, the key naming the layout it reads: k_run for row-major
 * views, k_ibm_run for input-block-major ones. */
#define RM_INFO(fmt_, id, nr, kind_, layout_, lkey_)                                        \
    {.name = id "_" kind_ "_avx512vnni",                                                    \
     .key = PW__KEY(id, lkey_, Q8_256, "avx512vnni"),                                       \
     .format = fmt_,                                                                        \
     .layout = layout_,                                                                     \
     .tile_rows = nr,                                                                       \
     .tile_batch = 1,                                                                       \
     .activation = PW_ACT_Q8_256,                                                           \
     .features = RM_FEATURES,                                                               \
     .isa = "avx512vnni"}
/* One format's two run functions (k_run, k_ibm_run; k_ its K_* value) and their
 * descriptors. */
#define RM_KERNELS(name_, fmt_, id, nr, k_)                                                 \
    static void run_##name_(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,       \
                            int64_t i1) {                                                   \
        k_run(c, o0, o1, i0, i1, k_);                                                       \
    }                                                                                       \
    static void ibm_##name_(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,       \
                            int64_t i1) {                                                   \
        if (__atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED))                         \
            k_ibm_run(c, o0, o1, i0, i1, k_, K_IBM_PF_ZEN4, K_IBM_S);                       \
        else if (__atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED) && k_ == K_Q6_K)          \
            k_ibm_run(c, o0, o1, i0, i1, k_, K_IBM_PF_ZEN5, K_IBM_S_ZEN5_Q6_K);             \
        else if (__atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED))                          \
            k_ibm_run(c, o0, o1, i0, i1, k_, K_IBM_PF_ZEN5, K_IBM_S);                       \
        else                                                                                \
            k_ibm_run(c, o0, o1, i0, i1, k_, K_IBM_PF, K_IBM_S);                            \
    }                                                                                       \
    const pw__kernel pw__k_##name_##_rm_avx512vnni = {                                      \
        .info = RM_INFO(fmt_, id, nr, "rm", PW_LAYOUT_BLOCKED_ROW_MAJOR, "row_major"),      \
        .run = run_##name_, .priority = PW__PRIO_AVX512, .min_n = 1};                       \
    const pw__kernel pw__k_##name_##_ibm_avx512vnni = {                                     \
        .info = RM_INFO(fmt_, id, nr, "ibm", PW_LAYOUT_BLOCKED_INPUT_MAJOR,                 \
                        "input_block_major"),                                               \
        .run = ibm_##name_, .priority = PW__PRIO_AVX512, .min_n = 1};

RM_KERNELS(q4_k, PW_FORMAT_Q4_K, "q4_k", RM_NR_Q4_K, K_Q4_K)
RM_KERNELS(q5_k, PW_FORMAT_Q5_K, "q5_k", RM_NR, K_Q5_K)
RM_KERNELS(q6_k, PW_FORMAT_Q6_K, "q6_k", RM_NR, K_Q6_K)
RM_KERNELS(tq2_0, PW_FORMAT_TQ2_0, "tq2_0", RM_NR, K_TQ2_0)
