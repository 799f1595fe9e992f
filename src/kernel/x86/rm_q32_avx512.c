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
 * Eight weight rows (two quads of four) advance together over the blocks, so
 * one set of activation registers serves eight rows and each row keeps a
 * single f32 accumulator. One step of one row:
 *
 *   Q4_0 / IQ4_NL, four 18-byte blocks b..b+3 (72 bytes = 36 words):
 *     | d | 16 B nibbles | d | 16 B nibbles | d | 16 B | d | 16 B |   byte j of a block:
 *      w0   w1 .. w8       w9   w10 .. w17   w18  ..     w27  ..     lo = elem j, hi = elem j+16
 *   one vpermw of the first 64 bytes (words 0..31) gathers
 *     g  = [ nib(b) | nib(b+1) | nib(b+2) | d(b) d(b+1) d(b+2) d(b+3) x4 ]
 *   the d of four rows are taken from lane 3 of their g (vpermt2q), then block
 *   b+3's nibbles (bytes 56..71, one 16-byte load) replace it (vinserti32x4):
 *     q  = [ nib(b) | nib(b+1) | nib(b+2) | nib(b+3) ]    one 128-bit lane per block
 *     lo = q & 15, hi = q >> 4 & 15 (IQ4_NL: each through the codebook + 128, vpshufb)
 *   activations: lo pairs with [ x(b)[0..15] | x(b+1)[0..15] | .. ], hi with [16..31]
 *
 *   Q8_0, two 34-byte blocks:  | d | 32 x s8 | d | 32 x s8 |
 *     w = [ q(b) + 128 | q(b+1) + 128 ]  u8 (xor 0x80), activations [ x(b) | x(b+1) ]
 *
 * vpdpbusd multiplies unsigned weight bytes by signed activation bytes, so
 * the weight side carries a bias (8 for Q4_0, 128 for IQ4_NL and Q8_0).
 * Its term, bias * sum(x.qs) over the activations each int32 lane sees,
 * depends only on the activations: it is computed once per step and is the
 * starting value of every row's dot, negated. The int32 lanes of a block
 * (4 for Q4_0/IQ4_NL, 8 for Q8_0) are converted to f32 and multiplied by
 * d_w(block) * d_x(block); the fp16 d_w of a quad's rows are converted
 * together and spread to the lanes by vpermps. (vpermw and vpermt2q are one
 * uop each where the two-source vpermt2w they replace is three: the GEMV runs
 * about 10% faster from L2.) A short last step (fewer
 * blocks) runs the same code with the missing blocks zero. The integer part
 * is exact: |lane| <= 2 * 4 * 255 * 127.
 *
 * The next tile's rows are prefetched into L2 while a tile computes, every
 * cache line of them: with eight rows in flight the hardware prefetchers alone
 * reach about half the read bandwidth of a cold weight. Measured and not
 * better: prefetching into L1, one line in two or four, a linear order over
 * the tile, distances from 1/8 to 2 tiles, 4 or 16 rows per tile.
 */
#include "format/blocks.h"
#include "kernel/kernel.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <string.h>

#define RM_NR 8 /* weight rows per tile: two quads of 4 sharing the activation work */
#define RM_INLINE static inline __attribute__((always_inline))

enum { Q32_Q4_0, Q32_IQ4_NL, Q32_Q8_0 };

RM_INLINE size_t q32_block_bytes(int fmt) {
    return fmt == Q32_Q8_0 ? sizeof(pw__block_q8_0) : sizeof(pw__block_q4_0);
}

/* Blocks per step: one zmm of nibbles holds four Q4_0/IQ4_NL blocks, one zmm of
 * Q8_0 bytes two. */
RM_INLINE int q32_group(int fmt) { return fmt == Q32_Q8_0 ? 2 : 4; }

/* Unsigned bias added to the weight values so vpdpbusd can take them. */
RM_INLINE int q32_bias(int fmt) { return fmt == Q32_Q4_0 ? 8 : 128; }

/* Prefetch every cache line of [p, p + bytes). */
RM_INLINE void q32_prefetch(const uint8_t *p, size_t bytes) {
    for (size_t k = 0; k + 64 < bytes; k += 64) _mm_prefetch((const char *)(p + k), _MM_HINT_T1);
    _mm_prefetch((const char *)(p + bytes - 1), _MM_HINT_T1);
}

/* The activation half of a step (t <= group blocks from x), shared by the rows of a tile. */
typedef struct q32_act {
    __m512i lo, hi; /* s8, lined up with the weight vectors (Q8_0: lo only) */
    __m512i init;   /* -bias * (sum of the activations each int32 lane will see) */
    __m512 d;       /* activation scale of each block, in the order of q32_row_scales */
} q32_act;

static inline const __m256i *q32_qs(const pw__q8_32 *x, int k) { return (const __m256i *)x[k].qs; }

RM_INLINE q32_act q32_act_load(const pw__q8_32 *x, int t, int fmt) {
    q32_act a;
    const __m256i z = _mm256_setzero_si256();
    __m256i q[4];
    float d[4];
    for (int k = 0; k < 4; ++k) {
        q[k] = k < t ? _mm256_loadu_si256(q32_qs(x, k)) : z;
        d[k] = k < t ? x[k].d : 0.0f;
    }
    const __m512i p0 = _mm512_inserti64x4(_mm512_castsi256_si512(q[0]), q[1], 1);
    const __m512i bias = _mm512_set1_epi8((char)q32_bias(fmt));
    __m512i sums;
    if (fmt == Q32_Q8_0) {
        a.lo = p0;
        a.hi = _mm512_setzero_si512();
        sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, a.lo);
        /* row scales come as [row 0: b, b+1, row 1: b, b+1, ...] */
        a.d = _mm512_castps128_ps512(_mm_setr_ps(d[0], d[1], d[0], d[1]));
        a.d = _mm512_shuffle_f32x4(a.d, a.d, 0);
    } else {
        /* 128-bit lane k of lo/hi: the first/last 16 activations of block b+k */
        const __m512i p1 = _mm512_inserti64x4(_mm512_castsi256_si512(q[2]), q[3], 1);
        a.lo = _mm512_shuffle_i64x2(p0, p1, _MM_SHUFFLE(2, 0, 2, 0));
        a.hi = _mm512_shuffle_i64x2(p0, p1, _MM_SHUFFLE(3, 1, 3, 1));
        sums = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, a.lo), bias,
                                   a.hi);
        a.d = _mm512_broadcast_f32x4(_mm_setr_ps(d[0], d[1], d[2], d[3]));
    }
    a.init = _mm512_sub_epi32(_mm512_setzero_si512(), sums);
    return a;
}

/* The first 64 bytes of a step of one row (fewer, zero-filled, in a short last step). */
RM_INLINE __m512i q32_head(const uint8_t *blk, int t, int fmt) {
    const size_t bytes = (size_t)t * q32_block_bytes(fmt);
    if (bytes >= 64) return _mm512_loadu_si512(blk);
    return _mm512_maskz_loadu_epi8((__mmask64)((1ull << bytes) - 1), blk);
}

/*
 * Q4_0/IQ4_NL: a row's q32_head rearranged, lanes 0..2 the nibble bytes of
 * blocks b..b+2 and words 24..27 the fp16 d of blocks b..b+3 (28..31 unused).
 */
RM_INLINE __m512i q32_gather(__m512i head) {
    const __m512i idx = _mm512_set_epi16(0, 0, 0, 0, 27, 18, 9, 0, 26, 25, 24, 23, 22, 21, 20, 19,
                                         17, 16, 15, 14, 13, 12, 11, 10, 8, 7, 6, 5, 4, 3, 2, 1);
    return _mm512_permutexvar_epi16(idx, head);
}

/*
 * The fp16 block scales of the tile's rows as f32 times the activation scales:
 * Q4_0/IQ4_NL [row r: blocks b..b+3] in lanes 4r..4r+3, taken from qword 6 of
 * each row's q32_gather; Q8_0 [row r: b, b+1] in lanes 2r, 2r+1, read from blk[r].
 */
RM_INLINE __m512 q32_row_scales(const uint8_t *const blk[4], const __m512i g[4],
                                int rows, int t, int fmt, __m512 da) {
    if (fmt == Q32_Q8_0) {
        uint64_t h[4] = {0, 0, 0, 0};
        for (int r = 0; r < rows; ++r) {
            h[r] = (uint64_t)pw__rd_u16(blk[r]);
            if (t > 1) h[r] |= (uint64_t)pw__rd_u16(blk[r] + sizeof(pw__block_q8_0)) << 16;
        }
        const __m128i v = _mm_set_epi64x((long long)(h[2] | h[3] << 32), (long long)(h[0] | h[1] << 32));
        return _mm512_mul_ps(_mm512_zextps256_ps512(_mm256_cvtph_ps(v)), da);
    }
    /* qword 6 of each row: rows 0, 1 into qwords 0, 1, rows 2, 3 into qwords 2, 3 */
    const __m512i r01 = _mm512_permutex2var_epi64(g[0], _mm512_set_epi64(0, 0, 0, 0, 0, 0, 14, 6), g[1]);
    const __m512i r23 = _mm512_permutex2var_epi64(g[2], _mm512_set_epi64(0, 0, 0, 0, 14, 6, 0, 0), g[3]);
    const __m512i h = _mm512_mask_blend_epi64(0x0C, r01, r23);
    return _mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(h)), da);
}

/* Row r's lanes of q32_row_scales, spread over the int32 lanes of its dot. */
RM_INLINE __m512 q32_scale_of_row(__m512 scales, int r, int fmt) {
    const __m512i idx = fmt == Q32_Q8_0
                            ? _mm512_set_epi32(2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r + 1,
                                               2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r, 2 * r, 2 * r,
                                               2 * r, 2 * r, 2 * r, 2 * r, 2 * r)
                            : _mm512_set_epi32(4 * r + 3, 4 * r + 3, 4 * r + 3, 4 * r + 3, 4 * r + 2,
                                               4 * r + 2, 4 * r + 2, 4 * r + 2, 4 * r + 1, 4 * r + 1,
                                               4 * r + 1, 4 * r + 1, 4 * r, 4 * r, 4 * r, 4 * r);
    return _mm512_permutexvar_ps(idx, scales);
}

RM_INLINE __m512i q32_nibble_dot(__m512i q, const q32_act *a, int fmt);

/* int32 dot of one row's step (t blocks at blk; Q4_0/IQ4_NL: g = q32_gather(q32_head(blk)))
 * with the activations. */
RM_INLINE __m512i q32_dot(const uint8_t *blk, __m512i g, const q32_act *a, int t, int fmt) {
    if (fmt == Q32_Q8_0) {
        __m512i w = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(blk + 2)));
        if (t > 1)
            w = _mm512_mask_broadcast_i64x4(
                w, 0xF0, _mm256_loadu_si256((const __m256i *)(blk + sizeof(pw__block_q8_0) + 2)));
        return _mm512_dpbusd_epi32(a->init, _mm512_xor_si512(w, _mm512_set1_epi8((char)0x80)), a->lo);
    }
    /* lane 3 <- block b+3's 16 nibble bytes, the step's last (zero in a short step) */
    const __m128i tail = t == 4 ? _mm_loadu_si128((const __m128i *)(blk + 56)) : _mm_setzero_si128();
    return q32_nibble_dot(_mm512_inserti32x4(g, tail, 3), a, fmt);
}

/* Q4_0/IQ4_NL: the int32 dot of four blocks' nibble bytes q (block k in 128-bit lane k)
 * against a's activations, from a's init. */
RM_INLINE __m512i q32_nibble_dot(__m512i q, const q32_act *a, int fmt) {
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    __m512i lo = _mm512_and_si512(q, m0f);
    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m0f);
    if (fmt == Q32_IQ4_NL) {
        const __m512i lut = _mm512_broadcast_i32x4(_mm_add_epi8(
            _mm_loadu_si128((const __m128i *)pw__iq4nl_values), _mm_set1_epi8((char)0x80)));
        lo = _mm512_shuffle_epi8(lut, lo);
        hi = _mm512_shuffle_epi8(lut, hi);
    }
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(a->init, lo, a->lo), hi, a->hi);
}

/* One step (t blocks from block b) of the tile's rows; pf[r] is prefetched alongside. */
RM_INLINE void q32_step(const uint8_t *const wr[RM_NR], const uint8_t *const pf[RM_NR],
                        size_t off, const pw__q8_32 *x, int rows, int t, int fmt,
                        __m512 acc[RM_NR]) {
    const q32_act a = q32_act_load(x, t, fmt);
    const size_t bytes = (size_t)q32_group(fmt) * q32_block_bytes(fmt);
    const uint8_t *blk[RM_NR];
    __m512i g[RM_NR];
#pragma GCC unroll 8
    for (int r = 0; r < RM_NR; ++r) {
        blk[r] = wr[r] + off;
        /* Q8_0 reads its scales and bytes directly: no head */
        g[r] = r < rows && fmt != Q32_Q8_0 ? q32_gather(q32_head(blk[r], t, fmt))
                                           : _mm512_setzero_si512();
        if (r < rows) q32_prefetch(pf[r] + off, bytes);
    }
    for (int q = 0; q < RM_NR / 4; ++q) {
        const int qrows = rows - 4 * q < 4 ? rows - 4 * q : 4;
        if (qrows <= 0) break;
        const __m512 scales = q32_row_scales(blk + 4 * q, g + 4 * q, qrows, t, fmt, a.d);
#pragma GCC unroll 4
        for (int r = 0; r < qrows; ++r) {
            const __m512i dot = q32_dot(blk[4 * q + r], g[4 * q + r], &a, t, fmt);
            acc[4 * q + r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), q32_scale_of_row(scales, r, fmt),
                                             acc[4 * q + r]);
        }
    }
}

/* y[i, o .. o+rows) for rows (RM_NR or fewer) consecutive weight rows. */
RM_INLINE void q32_tile(const pw__mm_call *c, int64_t o, int rows, int64_t i, int fmt) {
    const pw_view *w = c->w;
    const size_t bb = q32_block_bytes(fmt);
    const int g = q32_group(fmt);
    const int64_t nb = c->in / 32;
    const pw__q8_32 *x = (const pw__q8_32 *)(c->xq + (size_t)i * c->xq_row_bytes);
    const uint8_t *wr[RM_NR], *pf[RM_NR];
    __m512 acc[RM_NR];
#pragma GCC unroll 8
    for (int r = 0; r < RM_NR; ++r) {
        /* pf: the same row of the next tile, fetched while this one computes */
        const int64_t on = o + r + rows < c->out ? o + r + rows : o;
        wr[r] = w->data + (size_t)(w->offset + (r < rows ? o + r : o) * w->strides[0]) * bb;
        pf[r] = w->data + (size_t)(w->offset + on * w->strides[0]) * bb;
        acc[r] = _mm512_setzero_ps();
    }
    int64_t b = 0;
    for (; b + g <= nb; b += g) q32_step(wr, pf, (size_t)b * bb, x + b, rows, g, fmt, acc);
    if (b < nb) q32_step(wr, pf, (size_t)b * bb, x + b, rows, (int)(nb - b), fmt, acc);
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) c->y[i * c->ldy + o + r] = _mm512_reduce_add_ps(acc[r]);
}

RM_INLINE void q32_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                       int fmt) {
    int64_t o = o0;
    for (; o + RM_NR <= o1; o += RM_NR)
        for (int64_t i = i0; i < i1; ++i) q32_tile(c, o, RM_NR, i, fmt);
    for (; o + 4 <= o1; o += 4)
        for (int64_t i = i0; i < i1; ++i) q32_tile(c, o, 4, i, fmt);
    for (; o < o1; ++o)
        for (int64_t i = i0; i < i1; ++i) q32_tile(c, o, 1, i, fmt);
}

/*
 * Input-block-major views (the spec's kernel order, read as they are): block
 * (o, b) at w->data + (w->offset + o + b * strides[1]) * block_bytes, so the
 * rows of one block column lie side by side. The step above turns around: the
 * 72 bytes it gathers are block b of four adjacent rows (a quad), each
 * 128-bit lane a row, and the activations are block b's, the same in every
 * lane; the fp16 d of the quad's rows come from the same vpermw (words
 * 24..27). Q8_0 takes two adjacent rows per zmm ([row r | row r + 1], 68
 * bytes). Each unit (quad or pair) keeps one f32 partial sum, its int32 lanes
 * still apart (a row's lanes are added once, at the end); Q4_0 and IQ4_NL take four
 * quads at a time where they can, their lanes added in integers at every step, one
 * f32 sum per row (ibm_group_step).
 *
 * Order of reading: KC block columns at a time over a pass of rows (IBM_KC; Q4_0 and
 * IQ4_NL IBM_KC_ZEN5 on Zen 5), each unit running down its KC columns before the next
 * unit, so the weight is read as KC sequential streams (one per column, the rows' blocks in order)
 * with every line prefetched IBM_PF bytes ahead into L1 (into L2 where the tiled
 * GEMVs prefetch there, pw__x86_prefetch_l2: on Zen 4, three rounds of both in turn,
 * --layout kernel --policy in_place, 1 thread / 2 threads, [4096, 4096] Q4_0 49-49.4 /
 * 73.5-75.0% -> 60.6-66.3 / 81.1-81.6, Q8_0 49.4-50.7 / 71.6-72.3 -> 73.5-74.6 /
 * 78.6-85.2; [11008, 4096] Q8_0 66.1-67.5 / 77.0-78.2 -> 75.1-75.8 / 81.9-84.7, Q4_0
 * 67.5-68.7 / 75.7-79.7 -> 65.2-66.3 / 77.2-81.0), from the end of a
 * column's run on into the next column group's (as rm_kquant_avx512.c's k_ibm_run
 * does; before, those prefetches went to the next pass's rows and each column
 * group began unfetched: Q4_0 85-91% against 82-86% of the read, [4096, 4096]
 * 80-83% against 76-78%, Q8_0 [4096, 4096] 87-89% against 82-83%, [11008, 4096]
 * level; three rounds, both builds in turn). The partial sums live
 * in L1 between column groups. [11008, 4096], 1 thread, cold (bench --layout
 * kernel --policy in_place), fraction of the same run's read of the same bytes:
 * Q4_0 80-88%, Q8_0 77-86% (43 GB/s machine, six runs each). Measured and not
 * kept: one tile of 32 rows over all columns with the next tile's runs
 * prefetched (77.6% / 58%: 128 interleaved streams), 4, 6 or 16 columns at a
 * time (lower), prefetch 256 B or 2 KiB ahead, into L2, or non-temporal (lower).
 * From L2 (a 512-row weight) it computes at 47 GB/s for Q4_0 and 55 for Q8_0,
 * against 71 and 68 for the tiled q4x/q8x kernels, whose records put one row
 * per int32 lane and so need no lane sums and one scale vector per 16 rows.
 * On a Zen 4 VM (AVX-512 in two 256-bit halves) Q4_0's runs below the bus whether
 * the weight is cold or not: a [1024, 4096] weight left in L3 (flush skipped, a scratch
 * build) reads at 21-27 GB/s against 23-26 cold, where the q4x GEMV reads 74 from L3
 * and the read ceilings at [4096, 4096] are 29-39 GB/s; Q8_0's is partly held by its
 * own work (24-41 from L3 against 23-29 cold, five rounds; the q8x GEMV 78-81). A quad
 * step takes 12 vector operations (two vpermw, the insert and five f32 operations
 * beside the nibble work and two vpdpbusd), a tiled record step 5; at the 3.7 GHz the
 * bench's vpdpbusd peak loop implies (470 GOP/s, one zmm vpdpbusd a cycle), Q4_0's 25
 * GB/s is about 10.5 cycles a quad step. (llvm-mca's znver4 model, which costs a zmm
 * vpdpbusd at two cycles, half what that loop measures, was no guide here.) So Q4_0 and
 * IQ4_NL now take 16 rows at a time (ibm_group_step): the four quads' dots summed per
 * row in integers, then one f32 conversion, scale and fma for the 16 rows where each
 * quad had its own. Zen 4, one build switched at run time (not in the tree), --layout
 * kernel --policy in_place, three rounds in turn, 1 thread: Q4_0 [11008, 4096]
 * 65.5-65.7% -> 69.6-71.1, [4096, 4096] 59.3-60.4 -> 63.4-66.7; IQ4_NL 58.4-58.8 ->
 * 65.4-66.8 and 53.3-55.2 -> 59.9-67.2; 2 threads level (four more rounds: Q4_0
 * 77.4-81.7 against 79.4-81.7, IQ4_NL 64.0-82.7 against 73.2-81.0). The same for
 * Q8_0 (eight pairs, three rounds of unpacks and lane shuffles, the 16 d in one gather)
 * was not kept: three rounds in turn, [11008, 4096] 1 thread 77.2-77.7% -> 77.4-79.9,
 * [4096, 4096] 74.8-75.7 -> 71.3-72.1, 2 threads 83.1-87.1 -> 75.7-84.2. Not tried:
 * converting only the four d of a quad step (an xmm vcvtph2ps) for the rows after the
 * last whole group.
 *
 * A pass's rows make each column's run: 512 rows of Q4_0 are 9 KiB, after which the
 * column's stream jumps to the next column group. Q4_0 and IQ4_NL, whose group sums are
 * one f32 lane per row, now take up to IBM_RB_GROUPS rows a pass (the sums 32 KiB, in L1
 * and L2), so a column's run is up to 144 KiB; Q8_0's pairs keep IBM_RB (their sums are 8
 * lanes a row). Zen 4, one build switched at run time, --layout kernel --policy in_place,
 * two rounds in turn, 1 thread, [11008, 4096] / [4096, 4096]: Q4_0 70.3-70.6% /
 * 64.1-64.9 -> 77.3-79.2 / 69.5-70.9, IQ4_NL 65.6-65.8 / 59.5-59.8 -> 69.2-70.9 /
 * 63.5-64.8 (16384 rows: the same within noise; without software prefetch 81.7-82.1 /
 * 67.4-70.1 for Q4_0, 71.8 / 58.9-60.5 for IQ4_NL). Q8_0 at 4096 rows a pass measured
 * 78-80% against 76 (not kept: 128 KiB of sums). On more than one thread a task's rows
 * (352 of [11008, 4096] on 2) bound the run instead.
 *
 * Q8_0 now has no pass: four pairs at a time fold their sums to one a row after each
 * column group (ibm_pairs4_to_y) and add them to y, which holds the partial sums
 * between groups (as rm_kquant_avx512.c's k_ibm_span), so each column's run is a
 * task's rows (1.1 MiB at [11008, 4096] on one thread) and the 16 KiB array of pair
 * sums is gone. Three rounds of the two builds in turn, 1 thread, in_place: Q8_0
 * [11008, 4096] 77.6-81.2% -> 89.5-91.9, [4096, 4096] 72.5-74.2 -> 80.6-80.8; two more
 * rounds at 2 threads 83.6-84.7 -> 82.8-85.0 and 79.4-81.5 -> 77.1-77.3. The same for
 * Q4_0's groups (their sums in y, no pass) read 4% slower from cache (a [1024, 4096]
 * weight, 31.5 against 30.2 GB/s, three rounds) and 2-4 points slower cold, so the
 * groups keep their passes and their sums on the stack; the rows after the last group
 * add theirs to y (ibm_quad_to_y).
 *
 * On Zen 4 the prefetch distance now depends on the run: runs of IBM_LONG_RUN rows or
 * more (one thread) read Q8_0 with no software prefetch and Q4_0/IQ4_NL IBM_PF_ZEN4
 * ahead; shorter ones (a task of two threads: 128 to 344 rows) keep IBM_PF. One scratch
 * build choosing at run time, 1 thread, two or three rounds of each in turn, [11008,
 * 4096] / [4096, 4096]: Q8_0 1 KiB 89-91 / 81-83%, none 94 / 85-87, 256 B 93-94 /
 * 80-81, 4 KiB 79-82 / 79-80; Q4_0 1 KiB 77-80 / 69-73, none 81-83 / 68-73, 4 KiB
 * 77-81 / 74-77; IQ4_NL 68-70 / 63-66, 72-73 / 57-62, 70-75 / 66-72. At 2 threads the
 * long-run choices lost at [4096, 4096] (Q8_0 80-82 -> 62-75, Q4_0 75-78 -> 67-69).
 * The shipped rule against 1 KiB throughout, two rounds in turn, 1 / 2 threads: Q8_0
 * 89-90 / 85-88 -> 94 / 85-86 and 80-83 / 79 -> 85-86 / 78-79, Q4_0 81-82 / 79-82 ->
 * 81-83 / 80 and 72-74 / 78-79 -> 76-80 / 79-80, IQ4_NL 72 / 79-80 -> 70-73 / 79 and
 * 67-68 / 78-79 -> 66-71 / 76-77.
 */
#define IBM_KC 8     /* block columns read together */
/* Q4_0/IQ4_NL's on Zen 5 (pw__x86_zen5): an AMD EPYC Zen 5 VM (2 vCPUs, shared),
 * --layout kernel --policy in_place --formats Q4_0, [11008, 4096] / [4096, 4096], three
 * builds in turn, three rounds, 1 thread: 8 columns 78-83 / 76-81%, 4 columns 84-87 /
 * 80-85, 16 columns 59-62 / 45-49; 2 threads 68-82 / 68-74, 70-78 / 74-80, 54-64 / 55-57.
 * The shipped switch against the build before it, two rounds in turn, 1 / 2 threads,
 * [11008, 4096]: Q4_0 81 / 74-78 against 80-82 / 72-79, IQ4_NL 84 / 76-80 against
 * 81-83 / 73; [4096, 4096]: Q4_0 78-81 / 73-75 against 77 / 67-70, IQ4_NL 80-81 /
 * 72-78 against 79-80 / 67-70. */
#define IBM_KC_ZEN5 4
/* and their prefetch distance there: one scratch build choosing at run time, --layout
 * kernel --policy in_place --formats Q4_0, four rounds in turn, 1 thread, [11008, 4096] /
 * [4096, 4096]: 1 KiB (with the groups' prefetch below) 77.6-85.1 / 75.1-80.8%, 2 KiB
 * 80.8-86.8 / 75.8-82.7, 1 KiB with a sixth line per group as before 78.0-80.7 /
 * 74.4-76.6; 2 threads level (64-78 / 68-75 each); 4 and 8 KiB lower (71.5-80.7, 53.6-64.6);
 * IQ4_NL at 2 KiB against 1 KiB, 1 thread, 80.0-88.3 / 80.0-86.4 against 80.7-84.6 /
 * 71.6-81.5. */
#define IBM_PF_ZEN5 2048
_Static_assert(IBM_KC_ZEN5 <= IBM_KC, "ibm_rows sizes its activations by IBM_KC");
#define IBM_SPAN (1 << 20) /* most rows of one ibm_rows call: int arithmetic inside */
#define IBM_RB_GROUPS 8192 /* most rows per pass of Q4_0/IQ4_NL groups (sums: 32 KiB) */
#define IBM_PF 1024  /* prefetch distance along a column, bytes */
#define IBM_PF_ZEN4 4096 /* Q4_0/IQ4_NL's on Zen 4 (pw__x86_hw_streams), runs of */
#define IBM_LONG_RUN 2048 /* rows or more; Q8_0 none there */
#define IBM_QUADS 8  /* the descriptor's tile_rows: IBM_QUADS units */

/* Block b's activations in all four 128-bit lanes (Q8_0: both 256-bit halves). */
RM_INLINE q32_act ibm_act_load(const pw__q8_32 *x, int fmt) {
    q32_act a;
    const __m512i bias = _mm512_set1_epi8((char)q32_bias(fmt));
    __m512i sums;
    if (fmt == Q32_Q8_0) {
        a.lo = _mm512_broadcast_i64x4(_mm256_loadu_si256(q32_qs(x, 0)));
        a.hi = _mm512_setzero_si512();
        sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, a.lo);
    } else {
        a.lo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)x->qs));
        a.hi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(x->qs + 16)));
        sums = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, a.lo), bias,
                                   a.hi);
    }
    a.init = _mm512_sub_epi32(_mm512_setzero_si512(), sums);
    a.d = _mm512_set1_ps(x->d);
    return a;
}

/* Rows of one accumulator: 4 (a quad) for Q4_0/IQ4_NL, 2 (a pair) for Q8_0. */
RM_INLINE int ibm_unit(int fmt) { return fmt == Q32_Q8_0 ? 2 : 4; }

/* acc + the products of block b of `t` adjacent rows (t <= ibm_unit) at blk. */
RM_INLINE __m512 ibm_step(const uint8_t *blk, int t, const q32_act *a, int fmt, __m512 acc) {
    if (fmt == Q32_Q8_0) {
        /* q32_dot and q32_row_scales read rows r, r + 1 as they read blocks b, b + 1 */
        const uint64_t h = (uint64_t)pw__rd_u16(blk) | (t > 1 ? (uint64_t)pw__rd_u16(blk + sizeof(pw__block_q8_0)) << 16 : 0);
        const __m512 d = _mm512_permutexvar_ps(
            _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
            _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi64_si128((long long)h))));
        const __m512i dot = q32_dot(blk, _mm512_setzero_si512(), a, t, fmt);
        return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, a->d), acc);
    }
    const __m512i g = q32_gather(q32_head(blk, t, fmt));
    const __m512i dot = q32_dot(blk, g, a, t, fmt);
    /* words 24..27 of g: the d of rows 0..3, each spread over its row's four lanes */
    const __m512i spread = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 27, 27,
                                            27, 27, 26, 26, 26, 26, 25, 25, 25, 25, 24, 24, 24, 24);
    const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(spread, g)));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, a->d), acc);
}

/*
 * Q4_0/IQ4_NL, 16 adjacent rows (four quads, 288 bytes) of one block column: acc (lane
 * 4L + k: row 4k + L of the 16, the order ibm_rows undoes when it stores) + their
 * products. Each quad's dot keeps a row's four partial sums in its 128-bit lane L; two
 * rounds of unpacks and adds sum them in integers (exact: |sum| <= 4 * 2 * 4 * 255 *
 * 127 < 2^24) into one lane per row, so the f32 work (the d of 16 rows converted and
 * scaled once, one conversion, one fma) is done once per 16 rows, not once per quad.
 * A quad's nibbles come from two loads 8 bytes apart by one vpermt2w (the first load
 * alone misses the last row's 8 last bytes) and its d from the first load, already in
 * the sums' order, where a vpermw, an insert of the last row and a permute of the sums
 * to row order at every step did it: Q4_0 from cache ([1024, 4096]) 30.6-30.7 -> 31.3-31.5
 * GB/s; cold, 1 thread, three rounds in turn, [11008, 4096] / [4096, 4096]: Q4_0
 * 78.8-79.8% -> 79.3-81.6 / 72.1-73.9 -> 74.2-76.7, IQ4_NL 68.9-70.8 -> 69.9-74.3 /
 * 62.6-69.2 -> 64.4-68.0.
 */
RM_INLINE __m512 ibm_group_step(const uint8_t *blk, const q32_act *a, int fmt, __m512 acc) {
    const size_t qb = 4 * q32_block_bytes(fmt); /* a quad's bytes */
    /* word 8L + k of a quad's nibbles: row L's word k, at byte 18L + 2 + 2k (row 3 from
     * the second load, 8 bytes on) */
    const __m512i qs_idx = _mm512_set_epi16(63, 62, 61, 60, 59, 58, 57, 56, 26, 25, 24, 23, 22, 21,
                                            20, 19, 17, 16, 15, 14, 13, 12, 11, 10, 8, 7, 6, 5, 4,
                                            3, 2, 1);
    __m512i lo[4], dot[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
        lo[q] = _mm512_loadu_si512(blk + q * qb);
        const __m512i hi = _mm512_loadu_si512(blk + q * qb + 8);
        dot[q] = q32_nibble_dot(_mm512_permutex2var_epi16(lo[q], qs_idx, hi), a, fmt);
    }
    /* lane 4L + k of sum is row 4k + L (row L of quad k) */
    __m512i sum;
    if (fmt == Q32_Q4_0) {
        /* each int32 lane of a dot is 8 products (n - 8) * a, |.| <= 8 * 8 * 127 = 8128, so
         * packed to int16 (vpackssdw: lane L of quad pair (k, k + 1) -> row L's 4 + 4 words)
         * and added in pairs by vpmaddwd (|.| <= 16256) twice: 6 operations, not 9. Zen 4,
         * [1024, 4096] from cache, four rounds in turn: 31.5-31.9 -> 32.3-32.9 GB/s; cold
         * ([11008, 4096] and [4096, 4096], 1 and 2 threads, three rounds) level within
         * the noise (77-82% of the read either way at 1 thread) */
        const __m512i one = _mm512_set1_epi16(1);
        const __m512i m01 = _mm512_madd_epi16(_mm512_packs_epi32(dot[0], dot[1]), one);
        const __m512i m23 = _mm512_madd_epi16(_mm512_packs_epi32(dot[2], dot[3]), one);
        sum = _mm512_madd_epi16(_mm512_packs_epi32(m01, m23), one);
    } else { /* IQ4_NL's lanes reach 8 * 127 * 127: summed in int32 */
        const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(dot[0], dot[1]),
                                            _mm512_unpackhi_epi32(dot[0], dot[1]));
        const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(dot[2], dot[3]),
                                            _mm512_unpackhi_epi32(dot[2], dot[3]));
        sum = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
    }
    /* the d in the same order: word 4L + k <- quad k's word 9L (quads 0, 1 from the first
     * permute, 2, 3 from the second) */
    const __m512i d_idx = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                           59, 27, 59, 27, 50, 18, 50, 18, 41, 9, 41, 9, 32, 0, 32, 0);
    const __m512i h01 = _mm512_permutex2var_epi16(lo[0], d_idx, lo[1]);
    const __m512i h23 = _mm512_permutex2var_epi16(lo[2], d_idx, lo[3]);
    const __m512i h = _mm512_mask_blend_epi16(0xCCCC, h01, h23);
    const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(h)), a->d);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), d, acc);
}

/* Where a unit's prefetch starts: dist bytes on along its column from byte off of the
 * pass's column run (col, in column group b0); past this pass's rows, the same distance
 * into the next column group's (read next), not the next pass's; NULL after the last
 * group, or always when dist is 0 (no software prefetch). */
RM_INLINE const uint8_t *ibm_ahead(const uint8_t *base, const uint8_t *col, size_t off,
                                   size_t run, int64_t b0, int64_t nb, size_t bs, size_t dist,
                                   const int KC) {
    const size_t at = off + dist;
    return dist == 0 ? NULL
           : at < run ? col + dist
           : b0 + KC < nb ? base + (size_t)(b0 + KC) * bs + (at - run)
                              : NULL;
}

/* y[q .. q + t) (t <= 4) + the sums of a quad's partial sums (row k in 128-bit lane k). */
RM_INLINE void ibm_quad_to_y(float *y, __m512 acc, int t, int add) {
    /* the four lanes of each row to its lane 4k, then rows 0..t-1 to lanes 0..t-1 */
    __m512 v = _mm512_add_ps(acc, _mm512_permute_ps(acc, 0x4E));
    v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xB1));
    const __mmask8 m = (__mmask8)((1u << t) - 1);
    __m128 r = _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, v));
    if (add) r = _mm_add_ps(r, _mm_maskz_loadu_ps(m, y));
    _mm_mask_storeu_ps(y, m, r);
}

/* y[q .. q + t) (t <= 2) + the sums of a pair's partial sums (row k in 256-bit half k). */
RM_INLINE void ibm_pair_to_y(float *y, __m512 acc, int t, int add) {
    const __m256 lo = _mm512_castps512_ps256(acc);
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1));
    const __m128 r0 = _mm_add_ps(_mm256_castps256_ps128(lo), _mm256_extractf128_ps(lo, 1));
    const __m128 r1 = _mm_add_ps(_mm256_castps256_ps128(hi), _mm256_extractf128_ps(hi, 1));
    __m128 s = _mm_hadd_ps(r0, r1); /* two partials of row 0, two of row 1 */
    s = _mm_hadd_ps(s, s);          /* [row 0, row 1, row 0, row 1] */
    const __mmask8 m = (__mmask8)((1u << t) - 1);
    if (add) s = _mm_add_ps(s, _mm_maskz_loadu_ps(m, y));
    _mm_mask_storeu_ps(y, m, s);
}

/* y[0 .. 8) + the sums of four pairs' partial sums (acc[p]: rows 2p, 2p + 1 in its halves). */
RM_INLINE void ibm_pairs4_to_y(float *y, const __m512 acc[4], int add) {
    /* 128-bit lane k of t0: row k's four partials (t1: row 4 + k) */
    const __m512 t0 = _mm512_add_ps(_mm512_shuffle_f32x4(acc[0], acc[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_f32x4(acc[0], acc[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512 t1 = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2], acc[3], _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_f32x4(acc[2], acc[3], _MM_SHUFFLE(3, 1, 3, 1)));
    /* lane 4k: row k, lane 4k + 1: row 4 + k (after the second add, also lanes 4k + 2, 3) */
    __m512 u = _mm512_add_ps(_mm512_unpacklo_ps(t0, t1), _mm512_unpackhi_ps(t0, t1));
    u = _mm512_add_ps(u, _mm512_permute_ps(u, 0x4E));
    const __m512i order = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 13, 9, 5, 1, 12, 8, 4, 0);
    __m256 r = _mm512_castps512_ps256(_mm512_permutexvar_ps(order, u));
    if (add) r = _mm256_add_ps(r, _mm256_loadu_ps(y));
    _mm256_storeu_ps(y, r);
}

/*
 * y[i, o .. o + rows) for adjacent rows (Q4_0/IQ4_NL: rows <= IBM_RB_GROUPS), KC
 * block columns at a time: each unit (Q4_0/IQ4_NL 16 rows, then quads for the rest;
 * Q8_0 four pairs, then pairs) sums its run of the KC columns in a register and
 * adds it to its partial sums (the groups' on the stack, the others' in y), so the
 * weight is read as KC sequential streams, each the rows' bytes of one column in
 * order. zen5: Q4_0/IQ4_NL on Zen 5 (ibm_run), which read IBM_KC_ZEN5 columns at a time
 * IBM_PF_ZEN5 ahead.
 */
RM_INLINE void ibm_rows(const pw__mm_call *c, int64_t o, int rows, int64_t i, int fmt,
                        int zen5, const int KC) {
    const pw_view *w = c->w;
    const size_t bb = q32_block_bytes(fmt);
    const int unit = ibm_unit(fmt);
    const int full = rows / unit, units = (rows + unit - 1) / unit, last = rows - full * unit;
    const size_t bs = (size_t)w->strides[1] * bb, ub = (size_t)unit * bb;
    const size_t run = (size_t)rows * bb; /* bytes of one column's run */
    const int64_t nb = c->in / 32;
    const pw__q8_32 *x = (const pw__q8_32 *)(c->xq + (size_t)i * c->xq_row_bytes);
    const uint8_t *base = w->data + (size_t)(w->offset + o * w->strides[0]) * bb;
    float *yr = c->y + i * c->ldy + o;
    q32_act act[IBM_KC];
    __m512 partg[IBM_RB_GROUPS / 16]; /* the groups' sums (in y, 4% slower from cache) */
    const int l2 = __atomic_load_n(&pw__x86_prefetch_l2, __ATOMIC_RELAXED);
    const int zen4_long = __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED) &&
                          rows >= IBM_LONG_RUN;
    const size_t dist = zen4_long ? (fmt == Q32_Q8_0 ? 0 : IBM_PF_ZEN4)
                        : zen5    ? IBM_PF_ZEN5
                                  : IBM_PF;
    /* Q4_0/IQ4_NL: whole groups of 16 rows by ibm_group_step, the rows after them by quads */
    const int groups = fmt != Q32_Q8_0 ? rows / 16 : 0, u0 = 4 * groups;
    for (int64_t b0 = 0; b0 < nb; b0 += KC) {
        const int kc = nb - b0 < KC ? (int)(nb - b0) : KC;
        for (int k = 0; k < kc; ++k) act[k] = ibm_act_load(x + b0 + k, fmt);
        const uint8_t *col = base + (size_t)b0 * bs;
        for (int gi = 0; gi < groups; ++gi, col += 4 * ub) {
            /* lane 4L + k: row 16 gi + 4k + L (ibm_group_step) */
            __m512 acc = b0 > 0 ? partg[gi] : _mm512_setzero_ps();
            if (kc == KC) {
                const uint8_t *pf = ibm_ahead(base, col, (size_t)gi * 4 * ub, run, b0, nb, bs, dist, KC);
#pragma GCC unroll 8
                for (int k = 0; k < KC; ++k) {
                    /* five lines from pf: the next group's start where this one's ends,
                     * so every line of the run is met (a sixth, as the pairs below
                     * take, was 2-5 points slower on Zen 5: see IBM_PF_ZEN5) */
                    if (pf != NULL)
                        for (size_t l = 0; l < 4 * ub; l += 64)
                            pw__x86_prefetch_line(pf + k * bs + l, l2);
                    acc = ibm_group_step(col + k * bs, &act[k], fmt, acc);
                }
            } else {
                for (int k = 0; k < kc; ++k) acc = ibm_group_step(col + k * bs, &act[k], fmt, acc);
            }
            partg[gi] = acc;
        }
        int u = u0;
        /* Q8_0: four whole pairs at a time, their sums folded together */
        for (; fmt == Q32_Q8_0 && kc == KC && u + 4 <= full; u += 4, col += 4 * ub) {
            __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                             _mm512_setzero_ps()};
            const uint8_t *pf = ibm_ahead(base, col, (size_t)u * ub, run, b0, nb, bs, dist, KC);
#pragma GCC unroll 8
            for (int k = 0; k < KC; ++k) {
                if (pf != NULL)
                    for (size_t l = 0; l < 4 * ub + 64; l += 64)
                        pw__x86_prefetch_line(pf + k * bs + l, l2);
#pragma GCC unroll 4
                for (int p = 0; p < 4; ++p)
                    acc[p] = ibm_step(col + k * bs + p * ub, unit, &act[k], fmt, acc[p]);
            }
            ibm_pairs4_to_y(yr + 2 * u, acc, b0 > 0);
        }
        for (; u < units; ++u, col += ub) {
            const int t = u < full ? unit : last;
            __m512 acc = _mm512_setzero_ps();
            if (kc == KC && t == unit) {
                const uint8_t *pf = ibm_ahead(base, col, (size_t)u * ub, run, b0, nb, bs, dist, KC);
#pragma GCC unroll 8
                for (int k = 0; k < KC; ++k) {
                    if (pf != NULL) {
                        pw__x86_prefetch_line(pf + k * bs, l2);
                        pw__x86_prefetch_line(pf + k * bs + 64, l2);
                    }
                    acc = ibm_step(col + k * bs, unit, &act[k], fmt, acc);
                }
            } else {
                for (int k = 0; k < kc; ++k) acc = ibm_step(col + k * bs, t, &act[k], fmt, acc);
            }
            if (fmt == Q32_Q8_0)
                ibm_pair_to_y(yr + 2 * u, acc, t, b0 > 0);
            else
                ibm_quad_to_y(yr + 4 * u, acc, t, b0 > 0);
        }
    }
    /* a group's lane 4L + k is row 4k + L (ibm_group_step): to row order */
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    for (int gi = 0; gi < groups; ++gi)
        _mm512_storeu_ps(yr + 16 * gi, _mm512_permutexvar_ps(order, partg[gi]));
}

RM_INLINE void ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                       int fmt) {
    const int span = fmt == Q32_Q8_0 ? IBM_SPAN : IBM_RB_GROUPS;
    /* Q4_0/IQ4_NL four columns at once on Zen 5 (IBM_KC_ZEN5), 2 KiB ahead (IBM_PF_ZEN5) */
    const int zen5 = fmt != Q32_Q8_0 && __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED);
    for (int64_t o = o0; o < o1; o += span) {
        const int rows = o1 - o < span ? (int)(o1 - o) : span;
        for (int64_t i = i0; i < i1; ++i) {
            if (zen5)
                ibm_rows(c, o, rows, i, fmt, 1, IBM_KC_ZEN5);
            else
                ibm_rows(c, o, rows, i, fmt, 0, IBM_KC);
        }
    }
}

static void ibm_q4_0(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    ibm_run(c, o0, o1, i0, i1, Q32_Q4_0);
}
static void ibm_iq4_nl(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    ibm_run(c, o0, o1, i0, i1, Q32_IQ4_NL);
}
static void ibm_q8_0(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    ibm_run(c, o0, o1, i0, i1, Q32_Q8_0);
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
#define RM_INFO(fmt_, id)                                                                   \
    IBM_INFO(fmt_, id, "rm", PW_LAYOUT_BLOCKED_ROW_MAJOR, "row_major", RM_NR)
#define IBM_INFO(fmt_, id, kind_, layout_, lkey_, nr_)                                      \
    {.name = id "_" kind_ "_avx512vnni",                                                    \
     .key = PW__KEY(id, lkey_, Q8_32, "avx512vnni"),                                        \
     .format = fmt_,                                                                        \
     .layout = layout_,                                                                     \
     .tile_rows = nr_,                                                                      \
     .tile_batch = 1,                                                                       \
     .activation = PW_ACT_Q8_32,                                                            \
     .features = RM_FEATURES,                                                               \
     .isa = "avx512vnni"}

const pw__kernel pw__k_q4_0_rm_avx512vnni = {
    .info = RM_INFO(PW_FORMAT_Q4_0, "q4_0"), .run = run_q4_0, .priority = PW__PRIO_AVX512, .min_n = 1};
const pw__kernel pw__k_iq4_nl_rm_avx512vnni = {
    .info = RM_INFO(PW_FORMAT_IQ4_NL, "iq4_nl"), .run = run_iq4_nl, .priority = PW__PRIO_AVX512, .min_n = 1};
const pw__kernel pw__k_q8_0_rm_avx512vnni = {
    .info = RM_INFO(PW_FORMAT_Q8_0, "q8_0"), .run = run_q8_0, .priority = PW__PRIO_AVX512, .min_n = 1};

#define IBM_KERNEL(name_, fmt_, id, run_, unit_)                                            \
    const pw__kernel pw__k_##name_##_ibm_avx512vnni = {                                     \
        .info = IBM_INFO(fmt_, id, "ibm", PW_LAYOUT_BLOCKED_INPUT_MAJOR, "input_block_major", \
                         IBM_QUADS * (unit_)),                                              \
        .run = run_, .priority = PW__PRIO_AVX512, .min_n = 1};
IBM_KERNEL(q4_0, PW_FORMAT_Q4_0, "q4_0", ibm_q4_0, 4)
IBM_KERNEL(iq4_nl, PW_FORMAT_IQ4_NL, "iq4_nl", ibm_iq4_nl, 4)
IBM_KERNEL(q8_0, PW_FORMAT_Q8_0, "q8_0", ibm_q8_0, 2)
