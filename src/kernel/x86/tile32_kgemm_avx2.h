/*
 * The loop the AVX2 / AVX-VNNI GEMM kernels of the K-quant 32-row tilings run
 * (q4kx32k4, q6kx32k4; kernel/tile32.h): tile32_kgemm_avx512.h's record-major
 * loop at 256 bits, over the same packed bytes. The loop itself is ISA-neutral
 * except for the last stores; what changes with 16 ymm registers is the panel
 * height the families choose (below). A family brings two functions:
 *
 *   decode(rec, rs): record rec's scales into rs, the family's scratch (at
 *     most PW__T32KA_SCRATCH bytes, 64-byte aligned), once per (tile, record);
 *   panel(rec, rs, x, yb, pf, mr): yb[i][0..31] += the f32 dots of record rec
 *     with activation blocks x[i], i < mr (1 <= mr <= the family's mr <=
 *     PW__T32KA_MR_MAX; each height is the family's own constant instance,
 *     called through one switch in the family's file). yb is 32-byte aligned,
 *     32 floats a row. pf, unless NULL, is one record's bytes of the stream to
 *     prefetch into L1 while the panel runs.
 *
 * and calls pw__t32ka_run(c, o0, o1, i0, i1, record_bytes, mr, decode, panel)
 * from its run function (activations: one pw__q8_256 block per record).
 *
 * Loops, outermost first (the same as tile32_kgemm_avx512.h, whose comment
 * gives the measurements behind them):
 *   row blocks   at most PW__T32KA_MB rows of X, so that their activations stay
 *                in L2 while every tile of the range passes, and their partial
 *                sums (PW__T32KA_MB x 32 f32, 8 KiB) fit on the stack;
 *   tiles        32 outputs; the sums start at zero and end in stores of the
 *                live outputs, so a part tile (rows past o1) takes the same path;
 *   records      decoded once; the first panel prefetches the next record of
 *                the range's stream (tiles lie one after another);
 *   panels       ceil(rows / mr) of near-equal height (10 rows with mr 4:
 *                4, 3, 3), each the whole record.
 *
 * Panel height with 16 ymm registers: a 64-byte step is two ymm (rows 0..7 and
 * 16..23, then 8..15 and 24..31), so a panel that keeps one half's two nibble
 * dot chains per row of X in registers needs 2 x mr of them, plus the loaded
 * bytes, their nibbles, a mask and a broadcast: mr = 4 (13 registers) leaves
 * room for the scales; 6 is the most that can fit at all (16). The integer
 * sums per sub-block scale (another 2 x mr per half) then live in L1, as the
 * f32 sums do. PW__T32KA_MR_MAX bounds every family's mr (array sizes only).
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_KGEMM_AVX2_H
#define PACKWISE_KERNEL_X86_TILE32_KGEMM_AVX2_H

#include "kernel/tile32.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define PW__T32KA_MB 64          /* most rows of X per row block */
#define PW__T32KA_MR_MAX 6       /* most rows of X per panel, any family */
#define PW__T32KA_SCRATCH 12288  /* bytes of a family's decoded record (q6kx: 10.3 KiB) */

typedef void (*pw__t32ka_decode_fn)(const uint8_t *rec, void *rs);
typedef void (*pw__t32ka_panel_fn)(const uint8_t *rec, const void *rs, const uint8_t *const *x,
                                   float *yb, const uint8_t *pf, int mr);

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * pw__q8_256 activation block; panels of at most mr (<= PW__T32KA_MR_MAX) rows. */
static inline __attribute__((always_inline)) void
pw__t32ka_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
              uint64_t record_bytes, const int mr, pw__t32ka_decode_fn decode,
              pw__t32ka_panel_fn panel) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    float yb[PW__T32KA_MB * 32] __attribute__((aligned(64)));
    uint8_t rs[PW__T32KA_SCRATCH] __attribute__((aligned(64)));
    for (int64_t ib = i0; ib < i1; ib += PW__T32KA_MB) {
        const int64_t rows = i1 - ib < PW__T32KA_MB ? i1 - ib : PW__T32KA_MB;
        const int64_t panels = (rows + mr - 1) / mr;
        for (int64_t t0 = o0; t0 < o1; t0 += PW__TILE32_NR) {
            const uint64_t at = (uint64_t)(t0 / PW__TILE32_NR) * d->tile_bytes;
            memset(yb, 0, sizeof(float) * 32 * (size_t)rows);
            for (int64_t b = 0; b < nb; ++b) {
                const uint64_t rb = at + (uint64_t)b * record_bytes;
                const uint8_t *rec = c->packed + rb;
                const uint8_t *pf = rb + 2 * record_bytes <= d->bytes ? rec + record_bytes : NULL;
                decode(rec, rs);
                int64_t i = 0;
                for (int64_t p = 0; p < panels; ++p) {
                    /* the first rows % panels panels are one row taller */
                    const int h = (int)(rows / panels + (p < rows % panels));
                    const uint8_t *x[PW__T32KA_MR_MAX];
                    for (int r = 0; r < h; ++r)
                        x[r] = c->xq + (uint64_t)(ib + i + r) * c->xq_row_bytes +
                               (uint64_t)b * sizeof(pw__q8_256);
                    panel(rec, rs, x, yb + 32 * i, p == 0 ? pf : NULL, h);
                    i += h;
                }
            }
            /* no masked stores at 256 bits worth their cost here: full tiles store
             * four ymm a row, the last part tile copies its live outputs */
            const int live = o1 - t0 < PW__TILE32_NR ? (int)(o1 - t0) : PW__TILE32_NR;
            for (int64_t r = 0; r < rows; ++r) {
                float *y = c->y + (ib + r) * c->ldy + t0;
                if (live == PW__TILE32_NR)
                    for (int q = 0; q < 4; ++q)
                        _mm256_storeu_ps(y + 8 * q, _mm256_load_ps(yb + 32 * r + 8 * q));
                else
                    memcpy(y, yb + 32 * r, sizeof(float) * (size_t)live);
            }
        }
    }
}

#endif
