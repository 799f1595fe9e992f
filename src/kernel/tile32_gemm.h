/*
 * The GEMM loop of the 32-row tilings (kernel/tile32.h) whose panels keep their f32
 * sums in an L1 buffer, ISA-neutral C: the AVX2 / AVX-VNNI kernels (x86/tile32_avx2.h)
 * and the NEON dotprod ones (arm/tile32_neon.h) run it. With 16 ymm or 32 q registers
 * the 32 sums of a row do not stay in registers beside a record's unpacked bytes and
 * integer dots, so the record function loads, updates and stores them once per record,
 * after its integer work (the AVX-512 loop, x86/tile32_gemm_avx512.h, keeps them in
 * zmm registers). A family brings only its record function:
 *
 *   block(rec, x, acc, mr): acc[r][o] (row r < mr of the panel, output o < 32 of the
 *   tile) += the f32 dots of record rec with activation block x[r] (mr a constant at
 *   every call: each panel height is its own instance).
 *
 * Loops, outermost first (tile32_gemm_avx512.h's, whose comment gives the reasons):
 * row blocks of at most PW__T32L_MB rows of X; passes over ranges of blocks whose
 * activations fit the level's budget (a pass after the first adds to the sums it left
 * in Y); tiles; panels of near-equal height, at most the level's mr_max rows (AVX2 4,
 * NEON 6: x86/tile32_avx2.h, arm/tile32_neon.h). Where `prefetch`
 * is set, each tile fetches the records read after its own into L2 a few lines per
 * record read (pw__tile32_gemm_next); where records are made (fill), on every ISA, the
 * blocks the next fill reads (pw__tile32_fill_next). Part tiles store their live
 * outputs only.
 */
#ifndef PACKWISE_KERNEL_TILE32_GEMM_H
#define PACKWISE_KERNEL_TILE32_GEMM_H

#include "kernel/tile32.h"

#include <stdint.h>
#include <string.h>

#define PW__T32L_MR_MAX 6 /* the most rows of X per panel any level asks for (mr_max) */
#define PW__T32L_MB 128 /* most rows of X per row block */

#define PW__T32L_INLINE static inline __attribute__((always_inline))

typedef void (*pw__t32l_block_fn)(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr);

/* One panel of mr rows (a constant) over records [b1, b2) of a tile; the sums start
 * from Y (from_y) or zero and end in the first `live` outputs of each row of Y. */
PW__T32L_INLINE void pw__t32l_panel(const uint8_t *recs, uint64_t record_bytes, int64_t b1,
                                    int64_t b2, const uint8_t *xrow, size_t xq_row_bytes,
                                    size_t xb_bytes, float *y, int64_t ldy, int live, int from_y,
                                    pw__tile32_next *nx, pw__t32l_block_fn block, const int mr) {
    float acc[PW__T32L_MR_MAX][PW__TILE32_NR] __attribute__((aligned(32)));
    const uint8_t *x[PW__T32L_MR_MAX];
    for (int r = 0; r < mr; ++r) {
        x[r] = xrow + r * xq_row_bytes + (size_t)b1 * xb_bytes;
        memset(acc[r], 0, sizeof acc[r]);
        if (from_y) memcpy(acc[r], y + r * ldy, sizeof(float) * (size_t)live);
    }
    const uint8_t *rec = recs;
    for (int64_t b = b1; b < b2; ++b, rec += record_bytes) {
        block(rec, x, acc, mr);
        pw__tile32_next_fetch(nx);
        for (int r = 0; r < mr; ++r) x[r] += xb_bytes;
    }
    for (int r = 0; r < mr; ++r) memcpy(y + r * ldy, acc[r], sizeof(float) * (size_t)live);
}

/* The loop of pw__t32l_run and pw__t32l_run_fill: with fill NULL the records are the
 * packed form's, else fill writes each tile's records of a pass to scratch (max_kb
 * records at most) and the panels read them there. Panels are at most mr_max rows (a
 * constant, 1 .. PW__T32L_MR_MAX). */
PW__T32L_INLINE void pw__t32l_loop(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                   int64_t i1, int64_t block_values, uint64_t record_bytes,
                                   size_t xb_bytes, uint64_t budget, const int prefetch,
                                   pw__t32l_block_fn block, pw__tile32_fill_fn fill,
                                   uint8_t *scratch, int64_t max_kb, const int mr_max) {
    const int64_t nb = c->in / block_values;
    for (int64_t ib = i0; ib < i1; ib += PW__T32L_MB) {
        const int64_t rows = i1 - ib < PW__T32L_MB ? i1 - ib : PW__T32L_MB;
        const int64_t panels = (rows + mr_max - 1) / mr_max;
        const int64_t kb = pw__tile32_pass_blocks(
            rows, xb_bytes, nb, pw__tile32_fill_budget(budget, fill, max_kb, rows, xb_bytes));
        const int64_t npass = (nb + kb - 1) / kb, ntile = (o1 - o0 + PW__TILE32_NR - 1) / PW__TILE32_NR;
        for (int64_t u = 0; u < npass * ntile; ++u) { /* pw__tile32_pass_tile: the order */
            int64_t pass, tile;
            pw__tile32_pass_tile(u, npass, ntile, fill != NULL, &pass, &tile);
            const int64_t b1 = pass * kb, b2 = nb - b1 < kb ? nb : b1 + kb;
            const int64_t t0 = o0 + tile * PW__TILE32_NR;
            const int live = o1 - t0 < PW__TILE32_NR ? (int)(o1 - t0) : PW__TILE32_NR;
            const uint8_t *recs = pw__tile32_pass_records(c, t0, b1, b2, record_bytes, fill, scratch);
            pw__tile32_next nx = PW__TILE32_NEXT_NONE;
            if (fill != NULL) /* the blocks of the next fill, on every ISA */
                nx = pw__tile32_fill_next(c, o1, t0, b1, b2, nb, kb, panels);
            else if (prefetch)
                nx = pw__tile32_gemm_next(c, o0, o1, t0, i1, ib, rows, b1, b2, nb, kb, panels,
                                          record_bytes);
            int64_t i = ib;
            for (int64_t p = 0; p < panels; ++p) {
                /* near-equal panels: the first rows % panels are one row taller */
                const int h = (int)(rows / panels + (p < rows % panels));
                const uint8_t *xrow = c->xq + (uint64_t)i * c->xq_row_bytes;
                float *y = c->y + i * c->ldy + t0;
                switch (h) {
#define PW__T32L_CASE(h_)                                                                        \
    case h_:                                                                                   \
        if (h_ <= mr_max)                                                                      \
            pw__t32l_panel(recs, record_bytes, b1, b2, xrow, c->xq_row_bytes, xb_bytes, y,     \
                           c->ldy, live, b1 > 0, &nx, block, h_);                              \
        break;
                    PW__T32L_CASE(1)
                    PW__T32L_CASE(2)
                    PW__T32L_CASE(3)
                    PW__T32L_CASE(4)
                    PW__T32L_CASE(5)
                    PW__T32L_CASE(6) /* PW__T32L_MR_MAX */
#undef PW__T32L_CASE
                }
                i += h; /* the next panel prefetches on from where this one stopped */
            }
        }
    }
}

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per activation
 * block of xb_bytes (block_values k values each), read once per panel of up to mr_max
 * rows; a row block's activations per pass within budget bytes; prefetch (a constant)
 * as above. */
PW__T32L_INLINE void pw__t32l_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                  int64_t i1, int64_t block_values, uint64_t record_bytes,
                                  size_t xb_bytes, uint64_t budget, const int prefetch,
                                  pw__t32l_block_fn block, const int mr_max) {
    pw__t32l_loop(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, budget, prefetch, block,
                  NULL, NULL, 0, mr_max);
}

/* The same over records that fill makes from another layout (the input-block-major
 * GEMM kernels), at most PW__TILE32_FILL_BYTES of them per tile and pass, made once per
 * tile and pass and read by every panel from L1/L2. */
PW__T32L_INLINE void pw__t32l_run_fill(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                       int64_t i1, int64_t block_values, uint64_t record_bytes,
                                       size_t xb_bytes, uint64_t budget, pw__t32l_block_fn block,
                                       pw__tile32_fill_fn fill, const int mr_max) {
    _Alignas(64) uint8_t scratch[PW__TILE32_FILL_BYTES];
    pw__t32l_loop(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, budget, 0, block, fill,
                  scratch, (int64_t)(PW__TILE32_FILL_BYTES / record_bytes), mr_max);
}

#endif
