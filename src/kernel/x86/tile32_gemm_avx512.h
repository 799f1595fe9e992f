/*
 * The loop every AVX-512 GEMM kernel of a 32-row tiling runs (kernel/tile32.h):
 * the GEMV kernels' records, read once per panel of up to PW__T32G_MR rows of X
 * instead of once per row, with the 32 f32 sums of each row of a panel in an L1
 * buffer across a pass. A family brings only its record function:
 *
 *   block(rec, x, acc, mr): acc[r][0..15] (rows 0..15 of the tile), acc[r][16..31]
 *   (rows 16..31) += the f32 dots of record rec with activation block x[r], r < mr
 *   (mr a constant at every call: each panel height is its own instance).
 *
 * Loops, outermost first:
 *   row blocks    at most PW__T32G_MB rows of X;
 *   passes        ranges of blocks whose activations for the row block fit in
 *                 PW__T32G_XL2 bytes (4 MiB: one pass up to in = 10.9K at
 *                 128 rows; test_kernels_large's in = 12288 takes two), so
 *                 that each pass finds them in L3 for every tile. Every pass
 *                 streams the whole weight range again and re-reads and
 *                 re-writes Y: passes sized for L2 (512 KiB: 3 at [4096, 4096]
 *                 n = 128, 9 at [4096, 11008]) measured 10-25% slower;
 *   tiles         32 outputs;
 *   panels        the row block cut into ceil(rows / PW__T32G_MR) panels of
 *                 near-equal height (16 rows: 8, 8), each a pass over the
 *                 tile's records of this pass, which stay in L1/L2 for the next.
 * The first pass starts the sums at zero, the others from Y; every pass ends
 * with masked stores, so a part tile (rows past o1) takes the same path.
 *
 * The weight range is one stream from memory read tile by tile; the records
 * that come next (the next tile of the pass, else the next pass's or row
 * block's first, else the tile after the range, which the same thread most
 * often runs next) are prefetched into L2 a few lines per record read, spread
 * over every panel of the tile. [11008, 4096] n = 16, 1 thread: 442 GFLOP/s
 * without, 502 with (same run, medians of 5).
 *
 * Panels of 10 rows, their f32 sums in L1 (loaded, updated and stored once per
 * record and row: load and store ports, not the vector ones), against 6 rows with
 * every sum in registers: a record's unpacking is shared by more rows, and on a core
 * with two 512-bit ports (Intel Xeon, Sapphire Rapids class) each operation beside
 * a vpdpbusd takes one of their slots. One process, 10 and 6 rows in turn (best of 10
 * calls each, 9-21 rounds, medians of the per-round ratio), 1 thread: Q4_0 [2048,
 * 4096] n = 128 1.04-1.05x, [11008, 4096] n = 128 1.03x, [4096, 4096] n = 32 1.07x;
 * Q8_0 1.05x, 1.03x and n = 16 1.04x.
 *
 * Measured and not kept (A/B in one process, many interleaved rounds on the
 * shared machine): panels of at most 5 or 4 rows (no faster than 6 at n = 16
 * or 128, with the sums in registers); chunks of 256 to 1024 input values per tile with the sums in an L1
 * buffer between them, as the i8g kernel does, so that a chunk's records stay
 * in L1 for every panel (no faster for q4x, and for q8x, whose records are
 * twice the bytes, 0.95-1.01x of whole passes at n = 16, 32, 128).
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_GEMM_AVX512_H
#define PACKWISE_KERNEL_X86_TILE32_GEMM_AVX512_H

#include "kernel/tile32.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PW__T32G_MR 10 /* most rows of X per panel: 2 x 10 int32 chains, the f32 sums in L1 */
#define PW__T32G_MB 128 /* most rows of X per row block */
#define PW__T32G_XL2 (4096u << 10) /* activation bytes of a row block per pass */

typedef void (*pw__t32g_block_fn)(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr);

/* The end of a record function: acc[r][0..15] += f32(lo[r]) * d[0..15] * x_r.d and
 * acc[r][16..31] += f32(hi[r]) * d[16..31] * x_r.d for the panel's mr rows, d the
 * record's 32 fp16 scales, x_r a pw__q8_32 or (m NULL) pw__q8_256 block (x_r.d their
 * first field alike); where m is not NULL (the record's 32 fp16 minima: Q4_1, Q5_1),
 * then acc[r] += f32(m) * x_r.dsum. */
_Static_assert(offsetof(pw__q8_32, d) == 0 && offsetof(pw__q8_256, d) == 0,
               "an activation block's d is its first field");
static inline __attribute__((always_inline)) void
pw__t32g_scale_min_add(const uint8_t *d, const uint8_t *m, const uint8_t *const *x,
                       const __m512i *lo, const __m512i *hi, float acc[][PW__TILE32_NR],
                       const int mr) {
    const __m512 dl = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)d));
    const __m512 dh = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)d + 1));
    const __m512 ml = m ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)m)) : dl;
    const __m512 mh = m ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)m + 1)) : dh;
#pragma GCC unroll 10
    for (int r = 0; r < mr; ++r) {
        float d1;
        memcpy(&d1, x[r], sizeof d1);
        const __m512 xd = _mm512_set1_ps(d1);
        __m512 al = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo[r]), _mm512_mul_ps(dl, xd),
                                    _mm512_load_ps(acc[r]));
        __m512 ah = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi[r]), _mm512_mul_ps(dh, xd),
                                    _mm512_load_ps(acc[r] + 16));
        if (m) {
            const __m512 xm = _mm512_set1_ps(((const pw__q8_32 *)x[r])->dsum);
            al = _mm512_fmadd_ps(ml, xm, al);
            ah = _mm512_fmadd_ps(mh, xm, ah);
        }
        _mm512_store_ps(acc[r], al);
        _mm512_store_ps(acc[r] + 16, ah);
    }
}
static inline __attribute__((always_inline)) void
pw__t32g_scale_add(const uint8_t *d, const uint8_t *const *x, const __m512i *lo, const __m512i *hi,
                   float acc[][PW__TILE32_NR], const int mr) {
    pw__t32g_scale_min_add(d, NULL, x, lo, hi, acc, mr);
}

/* One panel of mr rows (a constant) over records [b1, b2) of a tile. */
static inline __attribute__((always_inline)) void
pw__t32g_panel(const uint8_t *recs, uint64_t record_bytes, int64_t b1, int64_t b2,
               const uint8_t *xrow, size_t xq_row_bytes, size_t xb_bytes, float *y, int64_t ldy,
               __mmask16 m0, __mmask16 m1, int from_y, pw__tile32_next *nx,
               pw__t32g_block_fn block, const int mr) {
    float acc[PW__T32G_MR][PW__TILE32_NR] __attribute__((aligned(64)));
    const uint8_t *x[PW__T32G_MR];
#pragma GCC unroll 10
    for (int r = 0; r < mr; ++r) {
        x[r] = xrow + r * xq_row_bytes + (size_t)b1 * xb_bytes;
        _mm512_store_ps(acc[r], from_y ? _mm512_maskz_loadu_ps(m0, y + r * ldy) : _mm512_setzero_ps());
        _mm512_store_ps(acc[r] + 16,
                        from_y ? _mm512_maskz_loadu_ps(m1, y + r * ldy + 16) : _mm512_setzero_ps());
    }
    const uint8_t *rec = recs;
    for (int64_t b = b1; b < b2; ++b, rec += record_bytes) {
        block(rec, x, acc, mr);
        pw__tile32_next_fetch(nx);
#pragma GCC unroll 10
        for (int r = 0; r < mr; ++r) x[r] += xb_bytes;
    }
#pragma GCC unroll 10
    for (int r = 0; r < mr; ++r) {
        _mm512_mask_storeu_ps(y + r * ldy, m0, _mm512_load_ps(acc[r]));
        _mm512_mask_storeu_ps(y + r * ldy + 16, m1, _mm512_load_ps(acc[r] + 16));
    }
}

/* The loop of pw__t32g_run and pw__t32g_run_fill: with fill NULL the records are
 * the packed form's, else fill writes each tile's records of a pass to scratch
 * (max_kb records at most) and the panels read them there. */
static inline __attribute__((always_inline)) void
pw__t32g_loop(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
              int64_t block_values, uint64_t record_bytes, size_t xb_bytes,
              pw__t32g_block_fn block, pw__tile32_fill_fn fill, uint8_t *scratch, int64_t max_kb) {
    const int64_t nb = c->in / block_values;
    for (int64_t ib = i0; ib < i1; ib += PW__T32G_MB) {
        const int64_t rows = i1 - ib < PW__T32G_MB ? i1 - ib : PW__T32G_MB;
        const int64_t panels = (rows + PW__T32G_MR - 1) / PW__T32G_MR;
        /* passes of near-equal length whose activations fit in PW__T32G_XL2 (and
         * whose records fit in the scratch) */
        const int64_t kb = pw__tile32_pass_blocks(
            rows, xb_bytes, nb, pw__tile32_fill_budget(PW__T32G_XL2, fill, max_kb, rows, xb_bytes));
        const int64_t npass = (nb + kb - 1) / kb, ntile = (o1 - o0 + PW__TILE32_NR - 1) / PW__TILE32_NR;
        for (int64_t u = 0; u < npass * ntile; ++u) { /* kernel/tile32.h: the order */
            int64_t pass, tile;
            pw__tile32_pass_tile(u, npass, ntile, fill != NULL, &pass, &tile);
            const int64_t b1 = pass * kb, b2 = nb - b1 < kb ? nb : b1 + kb;
            const int64_t t0 = o0 + tile * PW__TILE32_NR;
            const int live = o1 - t0 < PW__TILE32_NR ? (int)(o1 - t0) : PW__TILE32_NR;
            const uint32_t keep = live == 32 ? 0xFFFFFFFFu : (1u << live) - 1;
            const __mmask16 m0 = (__mmask16)keep, m1 = (__mmask16)(keep >> 16);
            const uint8_t *recs = pw__tile32_pass_records(c, t0, b1, b2, record_bytes, fill, scratch);
            /* the records read after these (made: the blocks the next fill reads) come
             * from memory: fetched into L2 a few lines per record read, spread over every
             * panel of this tile */
            pw__tile32_next nx =
                fill == NULL ? pw__tile32_gemm_next(c, o0, o1, t0, i1, ib, rows, b1, b2, nb, kb,
                                                    panels, record_bytes)
                             : pw__tile32_fill_next(c, o1, t0, b1, b2, nb, kb, panels);
            int64_t i = ib;
            for (int64_t p = 0; p < panels; ++p) {
                /* near-equal panels: the first rows % panels are one row taller */
                const int h = (int)(rows / panels + (p < rows % panels));
                const uint8_t *xrow = c->xq + (uint64_t)i * c->xq_row_bytes;
                float *y = c->y + i * c->ldy + t0;
                switch (h) {
#define PW__T32G_CASE(h_)                                                                        \
    case h_:                                                                                   \
        pw__t32g_panel(recs, record_bytes, b1, b2, xrow, c->xq_row_bytes, xb_bytes, y, c->ldy, \
                       m0, m1, b1 > 0, &nx, block, h_);                                           \
        break;
                    PW__T32G_CASE(1)
                    PW__T32G_CASE(2)
                    PW__T32G_CASE(3)
                    PW__T32G_CASE(4)
                    PW__T32G_CASE(5)
                    PW__T32G_CASE(6)
                    PW__T32G_CASE(7)
                    PW__T32G_CASE(8)
                    PW__T32G_CASE(9)
                    PW__T32G_CASE(10) /* PW__T32G_MR */
#undef PW__T32G_CASE
                }
                i += h; /* the next panel prefetches on from where this one stopped */
            }
        }
    }
}

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * activation block of xb_bytes (block_values k values each). */
static inline __attribute__((always_inline)) void
pw__t32g_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
             int64_t block_values, uint64_t record_bytes, size_t xb_bytes,
             pw__t32g_block_fn block) {
    pw__t32g_loop(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, block, NULL, NULL, 0);
}

/* The same over records that fill makes from another layout (the input-block-major
 * kernels), PW__TILE32_FILL_BYTES of them at most per tile and pass: they are made
 * once per tile and pass and read by every panel of the pass from L1/L2. */
static inline __attribute__((always_inline)) void
pw__t32g_run_fill(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                  int64_t block_values, uint64_t record_bytes, size_t xb_bytes,
                  pw__t32g_block_fn block, pw__tile32_fill_fn fill) {
    _Alignas(64) uint8_t scratch[PW__TILE32_FILL_BYTES];
    pw__t32g_loop(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, block, fill, scratch,
                  (int64_t)(PW__TILE32_FILL_BYTES / record_bytes));
}

#endif
