/*
 * The loop the GEMM kernels of the K-quant 32-row tilings run at every x86 level
 * (AVX-512: q4kx_gemm_avx512.c, q6kx_gemm_avx512.c; AVX2 and AVX-VNNI: q4kx_avx2.c,
 * q6kx_avx2.c) over q4kx32k4 and q6kx32k4 (kernel/tile32.h): record-major, so
 * that each record's per-row sub-block scales are decoded once and serve every
 * panel of rows of X while the record's bytes stay in L1. It is ISA-neutral C;
 * the families' panels hold the intrinsics. A family brings two functions:
 *
 *   decode(rec, rs): record rec's scales into rs, the family's scratch (at
 *     most PW__T32K_SCRATCH bytes, 64-byte aligned), once per (tile, record);
 *   panel(rec, rs, x, yb, pf, mr): yb[i][0..31] += the f32 dots of record rec
 *     with activation blocks x[i], i < mr (1 <= mr <= the family's mr; each
 *     height is the family's own constant instance). pf, unless NULL, is one
 *     record's bytes of the stream to prefetch into L1 while it runs.
 *
 * Loops, outermost first:
 *   row blocks   at most PW__T32K_MB rows of X, so that their activations (5
 *                lines per block and row: header and qs) stay in L2 while
 *                every tile of the range passes, and their partial sums
 *                (PW__T32K_MB x 32 f32) fit on the stack;
 *   tiles        32 outputs; the sums start at zero and end in copies of the live outputs,
 *                so a part tile (rows past o1) takes the same path;
 *   records      decoded once; the first panel prefetches the next record of
 *                the range's stream (tiles lie one after another), or where
 *                records are made the blocks the next fill reads (not the fill
 *                itself before each record, as a burst: [11008, 4096] n = 128, 1
 *                thread, Zen 4, three rounds in turn, the IBM GEMM's fraction of
 *                the int8 peak over the packed one's: Q4_K 0.87-0.91x ->
 *                0.97-0.99x, Q6_K 0.89-0.91x -> 0.97-0.98x);
 *   panels       ceil(rows / mr) of near-equal height (20 rows with mr 8:
 *                7, 7, 6), each the whole record.
 *
 * Why record-major (the Q4_0 and Q8_0 GEMM kernels of tile32_gemm_avx512.h
 * run panel-major over the records with f32 sums in registers): decoding the
 * packed scales costs about a tenth of a panel's work, and the integer sums
 * a K-quant panel keeps per sub-block take the registers the f32 sums would
 * need. Row-block sizes 32 to 128 measured alike (n = 128, [4096, 4096] and
 * [11008, 4096], within 2%).
 *
 * Panel height with 16 ymm registers: a 64-byte step is two ymm (rows 0..7 and
 * 16..23, then 8..15 and 24..31), so a panel that keeps one half's two nibble
 * dot chains per row of X in registers needs 2 x mr of them, plus the loaded
 * bytes, their nibbles, a mask and a broadcast: mr = 4 (13 registers) leaves
 * room for the scales; 6 is the most that can fit at all (16). The integer
 * sums per sub-block scale (another 2 x mr per half) then live in L1, as the
 * f32 sums do. PW__T32K_MR_MAX bounds every family's mr (array sizes only).
 */
#ifndef PACKWISE_KERNEL_TILE32_KGEMM_H
#define PACKWISE_KERNEL_TILE32_KGEMM_H

#include "kernel/tile32.h"
#include "quant/act.h"

#include <stdint.h>
#include <string.h>

#define PW__T32K_MB 64           /* most rows of X per row block */
#define PW__T32K_MR_MAX 8        /* most rows of X per panel, any family (array sizes) */
#define PW__T32K_SCRATCH 12288   /* bytes of a family's decoded record (q6kx AVX2: 10.3 KiB) */

typedef void (*pw__t32k_decode_fn)(const uint8_t *rec, void *rs);
typedef void (*pw__t32k_panel_fn)(const uint8_t *rec, const void *rs, const uint8_t *const *x,
                                  float *yb, const uint8_t *pf, int mr);

#define PW__T32K_RECORD_MAX 6720 /* bytes of the largest record (q6kx32k4) */
#define PW__T32K_FILL_MB 128     /* rows of X per row block where records are made: each is
                                    made once per row block */

/* The loop of pw__t32k_run and pw__t32k_run_fill: with fill NULL the records are the
 * packed form's, else fill makes each one from another layout in an L1 buffer. */
static inline __attribute__((always_inline)) void
pw__t32k_loop(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
              uint64_t record_bytes, const int mr, pw__t32k_decode_fn decode,
              pw__t32k_panel_fn panel, pw__tile32_fill_fn fill, uint8_t *made, float *yb,
              const int64_t mb) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = c->in / 256;
    uint8_t rs[PW__T32K_SCRATCH] __attribute__((aligned(64)));
    for (int64_t ib = i0; ib < i1; ib += mb) {
        const int64_t rows = i1 - ib < mb ? i1 - ib : mb;
        const int64_t panels = (rows + mr - 1) / mr;
        for (int64_t t0 = o0; t0 < o1; t0 += PW__TILE32_NR) {
            memset(yb, 0, sizeof(float) * 32 * (size_t)rows);
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t *rec = pw__tile32_pass_records(c, t0, b, b + 1, record_bytes, fill, made);
                const uint8_t *pf = NULL;
                if (fill == NULL) {
                    const uint64_t rb =
                        (uint64_t)(t0 / PW__TILE32_NR) * d->tile_bytes + (uint64_t)b * record_bytes;
                    if (rb + 2 * record_bytes <= d->bytes) pf = rec + record_bytes;
                } else {
                    /* the blocks the next fill reads, 32 rows' (a record's bytes), spread
                     * over the first panel as a packed record's next one is */
                    size_t bb;
                    pf = b + 1 < nb ? pw__tile32_ibm_blocks(c, o1, t0, b + 1, &bb)
                                    : pw__tile32_ibm_blocks(c, o1, t0 + PW__TILE32_NR, 0, &bb);
                }
                decode(rec, rs);
                int64_t i = 0;
                for (int64_t p = 0; p < panels; ++p) {
                    /* the first rows % panels panels are one row taller */
                    const int h = (int)(rows / panels + (p < rows % panels));
                    const uint8_t *x[PW__T32K_MR_MAX];
                    for (int r = 0; r < h; ++r)
                        x[r] = c->xq + (uint64_t)(ib + i + r) * c->xq_row_bytes +
                               (uint64_t)b * sizeof(pw__q8_256);
                    panel(rec, rs, x, yb + 32 * i, p == 0 ? pf : NULL, h);
                    i += h;
                }
            }
            const int live = o1 - t0 < PW__TILE32_NR ? (int)(o1 - t0) : PW__TILE32_NR;
            for (int64_t r = 0; r < rows; ++r)
                memcpy(c->y + (ib + r) * c->ldy + t0, yb + 32 * r, sizeof(float) * (size_t)live);
        }
    }
}

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * pw__q8_256 activation block; panels of at most mr (<= PW__T32K_MR_MAX) rows. The
 * sums of a tile end in copies of its live outputs (a part tile takes the same path). */
static inline __attribute__((always_inline)) void
pw__t32k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
             uint64_t record_bytes, const int mr, pw__t32k_decode_fn decode,
             pw__t32k_panel_fn panel) {
    float yb[PW__T32K_MB * 32] __attribute__((aligned(64)));
    pw__t32k_loop(c, o0, o1, i0, i1, record_bytes, mr, decode, panel, NULL, NULL, yb, PW__T32K_MB);
}

/* The same over records that fill makes one at a time (fill(c, t0, b, b + 1, buf))
 * from another layout: the input-block-major GEMM kernels. */
static inline __attribute__((always_inline)) void
pw__t32k_run_fill(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                  uint64_t record_bytes, const int mr, pw__t32k_decode_fn decode,
                  pw__t32k_panel_fn panel, pw__tile32_fill_fn fill) {
    _Alignas(64) uint8_t made[PW__T32K_RECORD_MAX];
    float yb[PW__T32K_FILL_MB * 32] __attribute__((aligned(64)));
    pw__t32k_loop(c, o0, o1, i0, i1, record_bytes, mr, decode, panel, fill, made, yb,
                  PW__T32K_FILL_MB);
}

#endif
