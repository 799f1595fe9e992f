/*
 * Shared pieces of the AVX2 row-major GEMV kernels (rm_*_avx2.c): the one
 * driver that walks rows and blocks, the horizontal sums, and the int8 dot
 * helpers. Only files built with the _avx2.c flags include it.
 *
 * A format supplies one block function, f(w, rs, rows, x, acc): it adds the
 * products of one block column of `rows` weight rows (w: the first row's
 * block as the file stores it, rs bytes from row to row) and the matching
 * activation block (x: a pw__q8_32, a pw__q8_256, or 8 f32) into 8 partial
 * sums per row. Several rows at once let the rows' dependency chains overlap
 * and share the activation loads and the scale conversion; the driver hands
 * every edge (the last rows of a range, the last elements of a float row) to
 * the same function with fewer rows.
 *
 * The int8 dot on AVX2 is vpmaddubsw (u8 x s8, adjacent pairs summed into
 * SATURATING int16) then vpmaddwd. Every caller keeps a pair sum inside int16:
 *   - unsigned weights 0..63 times activations in [-127, 127]: 2*63*127 = 16002;
 *   - signed weights >= -128 through the sign trick: |w| <= 128 as u8 times
 *     sign(x, w) in [-127, 127]: at most 2*128*127 = 32512.
 * Activations never reach -128 (act.h clamps to [-127, 127]), which is what
 * makes the sign trick exact.
 *
 * The same files build a second time for the avxvnni level (avx2_level.h):
 * there the int8 dot is one vpdpbusd (u8 x s8, four products summed straight
 * into int32, exact for any bytes), so the bounds above are no longer needed.
 * Signed x signed (Q8_0, IQ4_NL) still goes through the sign trick, one
 * vpdpbusd after vpabsb/vpsignb: vpdpbusd has an unsigned side too. Where the
 * int16 step also multiplies by int16 sub-block scales (vpmaddwd by scales,
 * not by ones: Q2_K..Q6_K), both levels run the same sequence, since a
 * vpdpbusd would need a vpmulld (2 uops) for the scales afterwards.
 */
#ifndef PACKWISE_KERNEL_X86_RM_AVX2_H
#define PACKWISE_KERNEL_X86_RM_AVX2_H

#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "rm_avx2.h needs -mavx2 -mfma -mf16c (only *_avx2.c and *_avxvnni.c files include it)"
#endif

#include "format/blocks.h"
#include "kernel/kernel.h"
#include "kernel/x86/avx2_level.h"

#include <immintrin.h>
#include <string.h>

#define PW__AVX2_INLINE inline __attribute__((always_inline))

/* Adds block column b of `rows` weight rows (the first at w, the next rs bytes
 * on) times activation block x into acc[0 .. rows), 8 partial sums each, and
 * optionally row scalars into lane r of acc[4]. */
typedef void (*pw__rm_block_fn)(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                __m256 acc[5]);

static PW__AVX2_INLINE __m256i pw__ld256(const void *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}
static PW__AVX2_INLINE __m128i pw__ld128(const void *p) {
    return _mm_loadu_si128((const __m128i *)p);
}

/* The four row totals of four 8-lane accumulators. */
static PW__AVX2_INLINE __m128 pw__hsum4_ps(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

/* The four row totals when acc0 holds rows 0 (lanes 0..3) and 1 (lanes 4..7)
 * and acc1 rows 2 and 3. */
static PW__AVX2_INLINE __m128 pw__hsum_pairs_ps(__m256 acc0, __m256 acc1) {
    const __m256 h = _mm256_hadd_ps(acc0, acc1);
    const __m256 t = _mm256_hadd_ps(h, h); /* [r0, r2, r0, r2 | r1, r3, r1, r3] */
    return _mm_unpacklo_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

/* sum u[k] * s[k] over 32 bytes as 8 int32 lanes; u unsigned, s signed, every
 * adjacent pair sum within int16 at the avx2 level (see the header comment). */
static PW__AVX2_INLINE __m256i pw__dot_us(__m256i u, __m256i s) {
    if (PW__VNNI) return pw__dpbusd(_mm256_setzero_si256(), u, s);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

/* sum w[k] * x[k] for signed w (any value) and x in [-127, 127]: the sign trick. */
static PW__AVX2_INLINE __m256i pw__dot_ss(__m256i w, __m256i x) {
    return pw__dot_us(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
}

/* An int32 vector holding v in lane 0 and zero elsewhere. */
static PW__AVX2_INLINE __m256i pw__lane0_epi32(int32_t v) {
    return _mm256_setr_epi32(v, 0, 0, 0, 0, 0, 0, 0);
}

/* fp16 h times f, broadcast to 8 lanes (F16C converts exactly). */
static PW__AVX2_INLINE __m256 pw__f16_times(uint16_t h, float f) {
    const __m128 v = _mm_cvtph_ps(_mm_cvtsi32_si128(h));
    return _mm256_broadcastss_ps(_mm_mul_ss(v, _mm_set_ss(f)));
}

/* Two fp16 at p times the same f, as lanes 0 and 1. */
static PW__AVX2_INLINE __m128 pw__f16x2_scale(const uint8_t *p, float f) {
    return _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128((int)pw__rd_u32(p))), _mm_set1_ps(f));
}

/* fp16 at p + r * rs for r < ROWS (lanes r; others 0), converted and times f. */
static PW__AVX2_INLINE __m128 pw__f16_rows(const uint8_t *p, int64_t rs, int ROWS, float f) {
    __m128i h = _mm_cvtsi32_si128(pw__rd_u16(p));
    if (ROWS > 1) h = _mm_insert_epi16(h, pw__rd_u16(p + rs), 1);
    if (ROWS > 2) h = _mm_insert_epi16(h, pw__rd_u16(p + 2 * rs), 2);
    if (ROWS > 3) h = _mm_insert_epi16(h, pw__rd_u16(p + 3 * rs), 3);
    return _mm_mul_ps(_mm_cvtph_ps(h), _mm_set1_ps(f));
}

/* Lane r of v in all 8 lanes. */
static PW__AVX2_INLINE __m256 pw__lane(__m128 v, int r) {
    if (r == 0) return _mm256_broadcastss_ps(v);
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(v), _mm256_set1_epi32(r));
}

/*
 * Y[i, o .. o + ROWS) for i in [i0, i1): ROWS weight rows (row stride rs
 * bytes) against each activation row; f adds one block column (bpr of them,
 * wb weight bytes and xb activation bytes each) into acc[0 .. ROWS), and may
 * put per-row scalars in lane r of acc[4]; with PAIRS, acc[p] holds rows 2p
 * (lanes 0..3) and 2p + 1 (lanes 4..7) instead. For float formats (f32_act) a row
 * may end in `tail` (< 8) elements of eb bytes, which go through f on
 * zero-padded copies. ROWS, wb, xb, eb and f are constants at every call, so
 * this is specialised per format.
 */
static PW__AVX2_INLINE void pw__rm_rows(const pw__mm_call *c, const uint8_t *w0, int64_t rs,
                                        int64_t bs, int ROWS, int PAIRS, int64_t bpr, size_t wb, size_t xb,
                                        int f32_act, int tail, size_t eb, int64_t o, int64_t i0,
                                        int64_t i1, pw__rm_block_fn f) {
    for (int64_t i = i0; i < i1; ++i) {
        const uint8_t *x =
            f32_act ? (const uint8_t *)(c->x + i * c->ldx) : c->xq + (size_t)i * c->xq_row_bytes;
        __m256 acc[5];
        for (int r = 0; r < 5; ++r) acc[r] = _mm256_setzero_ps();
        const uint8_t *p = w0;
        for (int64_t b = 0; b < bpr; ++b, p += bs, x += xb) {
            /* ROWS short row streams at once starve the hardware prefetcher (each
             * row is only a few KiB): fetch the same column of the next group of
             * rows into L2 now, one group's time ahead (measured: about 1.5x on
             * a weight in DRAM). A prefetch past the weight's end never faults. */
            for (int r = 0; r < ROWS; ++r)
                for (size_t l = 0; l < wb; l += 64)
                    _mm_prefetch(
                        (const char *)(uintptr_t)((uintptr_t)p + (uintptr_t)((r + ROWS) * rs) + l),
                        _MM_HINT_T1);
            f(p, rs, ROWS, x, acc);
        }
        if (f32_act && tail > 0) {
            float xt[8] = {0};
            uint8_t wt[4][32] = {{0}};
            memcpy(xt, x, (size_t)tail * sizeof(float));
            for (int r = 0; r < ROWS; ++r) memcpy(wt[r], p + r * rs, (size_t)tail * eb);
            f(wt[0], 32, ROWS, (const uint8_t *)xt, acc);
        }
        float s[4];
        const __m128 sums = PAIRS ? pw__hsum_pairs_ps(acc[0], acc[1])
                                  : pw__hsum4_ps(acc[0], acc[1], acc[2], acc[3]);
        _mm_storeu_ps(s, _mm_add_ps(sums, _mm256_castps256_ps128(acc[4])));
        for (int r = 0; r < ROWS; ++r) c->y[i * c->ldy + o + r] = s[r];
    }
}

/*
 * The whole rectangle [o0, o1) x [i0, i1) of a row-major kernel: groups of
 * ROWS weight rows, then the rows left over one at a time through the same
 * code. Each group of rows stays in L1 while every activation row passes.
 */
static PW__AVX2_INLINE void pw__rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                       int64_t i1, int ROWS, int PAIRS, int64_t block_elems,
                                       size_t wb, size_t xb, int f32_act, size_t eb,
                                       pw__rm_block_fn f) {
    const pw_view *w = c->w;
    const int64_t bpr = c->in / block_elems;
    const int tail = (int)(c->in % block_elems);
    const int64_t rs = w->strides[0] * (int64_t)(f32_act ? eb : wb);
    /* bytes from one block of a row to its next: wb in row-major order, out * wb in
     * input-block-major order (float formats: always row-major, 8 elements a step) */
    const int64_t bs = f32_act ? (int64_t)wb : w->strides[1] * (int64_t)wb;
    const uint8_t *base = w->data + w->offset * (int64_t)(f32_act ? eb : wb);
    int64_t o = o0;
    for (; o + ROWS <= o1; o += ROWS)
        pw__rm_rows(c, base + o * rs, rs, bs, ROWS, PAIRS, bpr, wb, xb, f32_act, tail, eb, o, i0,
                    i1, f);
    for (; o < o1; ++o)
        pw__rm_rows(c, base + o * rs, rs, bs, 1, PAIRS, bpr, wb, xb, f32_act, tail, eb, o, i0, i1,
                    f);
}

/*
 * Input-block-major views (the spec's kernel order) of the block formats, read as
 * streams: the rows of one block column lie side by side there, so a pass over up to
 * PW__RM_IBM_RB rows reads PW__RM_IBM_S columns at once, each a contiguous run of
 * rows x wb bytes (one stream), a unit of ROWS rows at a time in every stream in turn.
 * A unit's sums (its acc[0 .. ROWS) and acc[4], as pw__rm_rows has them) stay in L1
 * between column groups. Each stream is prefetched PW__RM_IBM_PF / PW__RM_IBM_S bytes
 * ahead into L1, from the end of a column on into its next one (and from the last
 * columns into the next pass's first). Rows that do not lie side by side (a narrowed
 * view) are read where they lie, each unit prefetching its rows of its stream's next
 * column. The same block functions as the row-major loop (any rows <= ROWS, row
 * stride rs): the last rows of a pass that do not fill a unit go one at a time.
 *
 * pw__rm_run, reading the same views a group of ROWS rows over all columns (one
 * short run per column, out x wb bytes apart), measured 30% (Q4_0) and 37% (Q8_0) of
 * the read at avx2, [11008, 4096], 1 thread (bench --layout kernel --policy
 * in_place), where the tiled kernels of the same run reached 74% and 92%. These
 * streams in the same runs: Q4_0 2.0-2.8 ms (7.0 before), Q8_0 3.8-4.5 ms (9.8),
 * 74-94% of the read; Q4_K and Q6_K (8 rows a group before, runs of 1.1-1.7 KiB)
 * about level. 2, 8 streams and 2 or 8 KiB of prefetch: no better within the
 * machine's swing. Q4_0 is then compute-bound near 10 GB/s at avx2 (the warm weight,
 * [512, 4096] in L2: 8.9-10.3 GB/s, the row-major loop on row-major bytes 12-14):
 * the pairs' nibble unpacking, offset and scale per block.
 */
#define PW__RM_IBM_RB 256  /* rows per pass: at most 2 x 256 ymm of sums, 16 KiB of L1 */
#define PW__RM_IBM_S 4     /* columns read at once: the streams */
#define PW__RM_IBM_PF 4096 /* bytes prefetched ahead into L1, over all the streams */

/* One unit of R rows (a constant, <= 4) starting at row r0 of the pass, over the
 * streams' columns: sums from and back to slot[0 .. R] (slot[R]: acc[4]). */
static PW__AVX2_INLINE void pw__rm_ibm_unit(__m256 *slot, int R, int64_t r0, int64_t rs,
                                            size_t wb, size_t run, int adjacent, int sn,
                                            const uint8_t *const *col,
                                            const uint8_t *const *next,
                                            const uint8_t *const *nextcol, const uint8_t *x,
                                            size_t xb, pw__rm_block_fn f) {
    __m256 acc[5];
    for (int r = 0; r < 4; ++r) acc[r] = r < R ? slot[r] : _mm256_setzero_ps();
    acc[4] = slot[R];
#pragma GCC unroll 8
    for (int s = 0; s < PW__RM_IBM_S; ++s) {
        if (s >= sn) break;
        const uint8_t *p = col[s] + r0 * rs;
        if (adjacent) {
            const size_t at = (size_t)r0 * wb + PW__RM_IBM_PF / PW__RM_IBM_S;
            const uint8_t *q = at < run ? col[s] + at : next[s] != NULL ? next[s] + (at - run) : NULL;
            if (q != NULL)
                for (size_t l = 0; l < (size_t)R * wb; l += 64)
                    _mm_prefetch((const char *)(q + l), _MM_HINT_T0);
        } else if (nextcol[s] != NULL) { /* this stream's next column, these rows */
            for (int r = 0; r < R; ++r)
                for (size_t l = 0; l < wb; l += 64)
                    _mm_prefetch((const char *)(nextcol[s] + r0 * rs + r * rs + (int64_t)l),
                                 _MM_HINT_T0);
        }
        f(p, rs, R, x + (size_t)s * xb, acc);
    }
    for (int r = 0; r < R; ++r) slot[r] = acc[r];
    slot[R] = acc[4];
}

/* y[0 .. R) + the totals of a unit of R rows (pw__rm_rows' reduction; add 0: y is
 * overwritten). */
static PW__AVX2_INLINE void pw__rm_ibm_add(const __m256 *slot, int R, int PAIRS, float *y, int add) {
    __m256 acc[4];
    for (int r = 0; r < 4; ++r) acc[r] = r < R ? slot[r] : _mm256_setzero_ps();
    const __m128 sums = PAIRS ? pw__hsum_pairs_ps(acc[0], acc[1])
                              : pw__hsum4_ps(acc[0], acc[1], acc[2], acc[3]);
    __m128 v = _mm_add_ps(sums, _mm256_castps256_ps128(slot[R]));
    if (R == 4) {
        if (add) v = _mm_add_ps(v, _mm_loadu_ps(y));
        _mm_storeu_ps(y, v);
        return;
    }
    float s[4];
    _mm_storeu_ps(s, v);
    for (int r = 0; r < R; ++r) y[r] = add ? y[r] + s[r] : s[r];
}

/* The rectangle [o0, o1) x [i0, i1) of a block format's input-block-major view (any
 * strides: the streams are contiguous where strides[0] is one block), in passes of up to
 * PW__RM_IBM_RB rows, their sums in L1 between column groups.
 *
 * LONG (PW__RM_KERNELS' runs_, Q8_0 only) reads without passes: after each column group
 * a unit's sums are added to y, which holds the partial sums between groups, so each
 * column is read in one run over [o0, o1). PACKWISE_ISA=avx2, --layout kernel
 * --policy in_place, 1 thread, two rounds of both in turn, [11008, 4096] / [4096,
 * 4096]: Q8_0 51.5-53.5% / 44.2-45.8 -> 75.0-77.4 / 69.9-70.6, Q6_K level (68-73 /
 * 63-66 against 68-72 / 65-67); the formats whose block function is slower lost what
 * the unit's reduction after every group costs, [11008, 4096]: Q4_0 52 -> 40-43, Q4_K
 * 53-55 -> 49-52, Q5_0 42-44 -> 31, IQ4_NL 38-40 -> 31-32, Q4_1 57 -> 53-54, Q5_K
 * 52-55 -> 48-49, Q2_K 39-40 -> 36, Q3_K 35-36 -> 32, TQ2_0 48-49 -> 45.
 */
static PW__AVX2_INLINE void pw__rm_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1,
                                           int64_t i0, int64_t i1, int ROWS, int PAIRS,
                                           int64_t block_elems, size_t wb, size_t xb, int LONG,
                                           pw__rm_block_fn f) {
    enum { S = PW__RM_IBM_S };
    const pw_view *w = c->w;
    const int64_t rs = w->strides[0] * (int64_t)wb, bs = w->strides[1] * (int64_t)wb;
    const int64_t nb = c->in / block_elems;
    const int adjacent = rs == (int64_t)wb;
    if (o1 <= o0) return;
    if (LONG) {
        const int64_t rows = o1 - o0, full = rows / ROWS, rem = rows % ROWS;
        const size_t run = (size_t)rows * wb; /* bytes of one column's run */
        const uint8_t *first = w->data + (w->offset + o0 * w->strides[0]) * (int64_t)wb;
        for (int64_t i = i0; i < i1; ++i) {
            const uint8_t *xrow = c->xq + (size_t)i * c->xq_row_bytes;
            float *y = c->y + i * c->ldy + o0;
            for (int64_t b = 0; b < nb; b += S) {
                const int sn = nb - b < S ? (int)(nb - b) : S;
                const uint8_t *col[S], *nextcol[S];
                for (int s = 0; s < S; ++s) {
                    col[s] = first + (b + s) * bs;
                    nextcol[s] = b + s + S < nb ? col[s] + S * bs : NULL;
                }
                const uint8_t *x = xrow + (size_t)b * xb;
                for (int64_t u = 0; u < full; ++u) {
                    __m256 slot[5] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                                      _mm256_setzero_ps(), _mm256_setzero_ps()};
                    if (sn == S) /* the whole group: the streams' loop unrolled */
                        pw__rm_ibm_unit(slot, ROWS, u * ROWS, rs, wb, run, adjacent, S, col, nextcol,
                                        nextcol, x, xb, f);
                    else
                        pw__rm_ibm_unit(slot, ROWS, u * ROWS, rs, wb, run, adjacent, sn, col, nextcol,
                                        nextcol, x, xb, f);
                    pw__rm_ibm_add(slot, ROWS, PAIRS, y + u * ROWS, b > 0);
                }
                for (int64_t r = 0; r < rem; ++r) {
                    __m256 slot[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
                    pw__rm_ibm_unit(slot, 1, full * ROWS + r, rs, wb, run, adjacent, sn, col, nextcol,
                                    nextcol, x, xb, f);
                    pw__rm_ibm_add(slot, 1, PAIRS, y + full * ROWS + r, b > 0);
                }
            }
        }
        return;
    }
    __m256 part[2 * PW__RM_IBM_RB]; /* (ROWS + 1) slots a unit, 2 a single row */
    /* passes of near-equal length, whole units */
    const int64_t passes = (o1 - o0 + PW__RM_IBM_RB - 1) / PW__RM_IBM_RB;
    const int64_t per = ((o1 - o0 + passes - 1) / passes + ROWS - 1) / ROWS * ROWS;
    for (int64_t i = i0; i < i1; ++i) {
        const uint8_t *xrow = c->xq + (size_t)i * c->xq_row_bytes;
        for (int64_t ob = o0; ob < o1; ob += per) {
            const int64_t rows = o1 - ob < per ? o1 - ob : per;
            const int64_t full = rows / ROWS, rem = rows % ROWS;
            const size_t run = (size_t)rows * wb; /* bytes of one column of the pass */
            const uint8_t *first = w->data + (w->offset + ob * w->strides[0]) * (int64_t)wb;
            const uint8_t *after = o1 - ob > per ? first + per * rs : NULL;
            const int64_t nslots = full * (ROWS + 1) + 2 * rem;
            for (int64_t k = 0; k < nslots; ++k) part[k] = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; b += S) {
                const int sn = nb - b < S ? (int)(nb - b) : S;
                const uint8_t *col[S], *next[S], *nextcol[S];
                for (int s = 0; s < S; ++s) {
                    col[s] = first + (b + s) * bs;
                    nextcol[s] = b + s + S < nb ? col[s] + S * bs : NULL;
                    next[s] = nextcol[s] != NULL ? nextcol[s] : after != NULL ? after + s * bs : NULL;
                }
                const uint8_t *x = xrow + (size_t)b * xb;
                if (sn == S) /* the whole group: the streams' loop unrolled */
                    for (int64_t u = 0; u < full; ++u)
                        pw__rm_ibm_unit(part + u * (ROWS + 1), ROWS, u * ROWS, rs, wb, run,
                                        adjacent, S, col, next, nextcol, x, xb, f);
                else
                    for (int64_t u = 0; u < full; ++u)
                        pw__rm_ibm_unit(part + u * (ROWS + 1), ROWS, u * ROWS, rs, wb, run,
                                        adjacent, sn, col, next, nextcol, x, xb, f);
                for (int64_t r = 0; r < rem; ++r)
                    pw__rm_ibm_unit(part + full * (ROWS + 1) + 2 * r, 1, full * ROWS + r, rs, wb,
                                    run, adjacent, sn, col, next, nextcol, x, xb, f);
            }
            float *y = c->y + i * c->ldy + ob;
            for (int64_t u = 0; u < full; ++u)
                pw__rm_ibm_add(part + u * (ROWS + 1), ROWS, PAIRS, y + u * ROWS, 0);
            for (int64_t r = 0; r < rem; ++r)
                pw__rm_ibm_add(part + full * (ROWS + 1) + 2 * r, 1, PAIRS, y + full * ROWS + r, 0);
        }
    }
}

/* A block format's two run functions and two kernel descriptors at the build's level
 * (avx2_level.h), one per block order, the key naming the layout each reads: the
 * row-major loop (pw__rm_run) for row-major views, the column streams (pw__rm_ibm_run)
 * for input-block-major ones. id##_block is the format's block function over blocks of
 * type pw__block_##block_ (block_values values each) against activation blocks `act`
 * (Q8_32 or Q8_256); rows_ and pairs_ as pw__rm_run's; runs_ PASSES or LONG, how
 * pw__rm_ibm_run reads the input-block-major views. */
#define PW__RM_ACT_BYTES_Q8_32 sizeof(pw__q8_32)
#define PW__RM_ACT_BYTES_Q8_256 sizeof(pw__q8_256)
#define PW__RM_DESC(id, fmt, act, kind_, layout_, lkey_)                                          \
    const pw__kernel PW__AVX2_SYM(pw__k_##id##_##kind_) = {                                        \
        .info = {.name = #id "_" #kind_ "_" PW__AVX2_ISA,                                          \
                 .key = PW__KEY(#id, lkey_, act, PW__AVX2_ISA),                                    \
                 .format = fmt,                                                                    \
                 .layout = layout_,                                                                \
                 .tile_rows = 1,                                                                   \
                 .tile_batch = 1,                                                                  \
                 .activation = PW_ACT_##act,                                                       \
                 .features = PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C),            \
                 .isa = PW__AVX2_ISA},                                                             \
        .run = id##_##kind_##_run,                                                                 \
        .priority = PW__AVX2_PRIO,                                                                 \
        .min_n = 1};
#define PW__RM_IBM_PASSES 0
#define PW__RM_IBM_LONG 1
#define PW__RM_KERNELS(id, fmt, block_, block_values, act, rows_, pairs_, runs_)                   \
    static void id##_rm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,             \
                            int64_t i1) {                                                          \
        pw__rm_run(c, o0, o1, i0, i1, rows_, pairs_, block_values, sizeof(pw__block_##block_),     \
                   PW__RM_ACT_BYTES_##act, 0, 0, id##_block);                                      \
    }                                                                                              \
    static void id##_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,            \
                             int64_t i1) {                                                         \
        pw__rm_ibm_run(c, o0, o1, i0, i1, rows_, pairs_, block_values, sizeof(pw__block_##block_), \
                       PW__RM_ACT_BYTES_##act, PW__RM_IBM_##runs_, id##_block);                    \
    }                                                                                              \
    PW__RM_DESC(id, fmt, act, rm, PW_LAYOUT_BLOCKED_ROW_MAJOR, "row_major")                        \
    PW__RM_DESC(id, fmt, act, ibm, PW_LAYOUT_BLOCKED_INPUT_MAJOR, "input_block_major")

#endif
