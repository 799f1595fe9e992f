/*
 * The loop the AVX-512 GEMM kernels of the K-quant 32-row tilings run
 * (q4kx32k4, q6kx32k4; kernel/tile32.h): record-major, so that each record's
 * per-row sub-block scales are decoded once and serve every panel of rows of
 * X while the record's bytes stay in L1. A family brings two functions:
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
 *   tiles        32 outputs; the sums start at zero and end in masked stores,
 *                so a part tile (rows past o1) takes the same path;
 *   records      decoded once; the first panel prefetches the next record of
 *                the range's stream (tiles lie one after another);
 *   panels       ceil(rows / mr) of near-equal height (20 rows with mr 8:
 *                7, 7, 6), each the whole record.
 *
 * Why record-major (the Q4_0 and Q8_0 GEMM kernels of tile32_gemm_avx512.h
 * run panel-major over the records with f32 sums in registers): decoding the
 * packed scales costs about a tenth of a panel's work, and the integer sums
 * a K-quant panel keeps per sub-block take the registers the f32 sums would
 * need. Row-block sizes 32 to 128 measured alike (n = 128, [4096, 4096] and
 * [11008, 4096], within 2%).
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_KGEMM_AVX512_H
#define PACKWISE_KERNEL_X86_TILE32_KGEMM_AVX512_H

#include "kernel/tile32.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define PW__T32K_MB 64           /* most rows of X per row block */
#define PW__T32K_MR_MAX 8        /* most rows of X per panel, any family */
#define PW__T32K_SCRATCH 4096    /* bytes of a family's decoded record */

typedef void (*pw__t32k_decode_fn)(const uint8_t *rec, void *rs);
typedef void (*pw__t32k_panel_fn)(const uint8_t *rec, const void *rs, const uint8_t *const *x,
                                  float *yb, const uint8_t *pf, int mr);

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * pw__q8_256 activation block; panels of at most mr rows. */
static inline __attribute__((always_inline)) void
pw__t32k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
             uint64_t record_bytes, const int mr, pw__t32k_decode_fn decode,
             pw__t32k_panel_fn panel) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    float yb[PW__T32K_MB * 32] __attribute__((aligned(64)));
    uint8_t rs[PW__T32K_SCRATCH] __attribute__((aligned(64)));
    for (int64_t ib = i0; ib < i1; ib += PW__T32K_MB) {
        const int64_t rows = i1 - ib < PW__T32K_MB ? i1 - ib : PW__T32K_MB;
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
                    const uint8_t *x[PW__T32K_MR_MAX];
                    for (int r = 0; r < h; ++r)
                        x[r] = c->xq + (uint64_t)(ib + i + r) * c->xq_row_bytes +
                               (uint64_t)b * sizeof(pw__q8_256);
                    panel(rec, rs, x, yb + 32 * i, p == 0 ? pf : NULL, h);
                    i += h;
                }
            }
            const int live = o1 - t0 < PW__TILE32_NR ? (int)(o1 - t0) : PW__TILE32_NR;
            const uint32_t keep = live == 32 ? 0xFFFFFFFFu : (1u << live) - 1;
            for (int64_t r = 0; r < rows; ++r) {
                float *y = c->y + (ib + r) * c->ldy + t0;
                _mm512_mask_storeu_ps(y, (__mmask16)keep, _mm512_load_ps(yb + 32 * r));
                _mm512_mask_storeu_ps(y + 16, (__mmask16)(keep >> 16),
                                      _mm512_load_ps(yb + 32 * r + 16));
            }
        }
    }
}

#endif
