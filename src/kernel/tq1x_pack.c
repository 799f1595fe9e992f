/*
 * Packer of the tq1x32k4 family (layout in tq1x.h) and its portable kernel: the
 * readable reference of what the SIMD kernels compute, so the packer is tested at
 * every ISA level. Its priority is below the i8g scalar kernel of TQ1_0 (the fastest
 * policy's choice) but above the reference kernel, so the compact policy runs it where
 * no SIMD kernel of the family is usable (the scalar level, Arm without dotprod): it
 * decodes each record once into the trits of its 32 rows in k order, for up to
 * TQ1X_ROWS rows of X, and takes the dots in the loop the compiler vectorizes
 * (pw__tile32_step_dots). Measured (PACKWISE_ISA=scalar packwise bench --formats TQ1_0
 * --shapes 4096x4096 --batch 1,8 --threads 1 --kernel K --quick, the shared 2-core VM,
 * load 3): n = 1 3.2 ms against the reference kernel's 16.3 ms, n = 8 19.7 ms against 93.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/tq1x.h"
#include "quant/act.h"

#include <stddef.h>
#include <string.h>

static const pw__tile32_family tq1x_family = {PW__TQ1X_FAMILY, PW_FORMAT_TQ1_0, PW__TQ1X_KR,
                                              256, PW__TQ1X_VERSION, PW__TQ1X_RECORD};

pw_status pw__tq1x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &tq1x_family, format, out, in, d);
}

/* Row r's block blk (54 bytes, any alignment) into its places in record rec. */
static void tq1x_place_row(const uint8_t *blk, int r, uint8_t *rec) {
    uint8_t *lane = rec + 64 * (r / 16) + 4 * (r % 16);
    for (int g = 0; g < PW__TQ1X_DWORDS; ++g) memcpy(lane + PW__TQ1X_GROUP * g, blk + 4 * g, 4);
    memcpy(rec + PW__TQ1X_D + 2 * r, blk + offsetof(pw__block_tq1_0, d), 2);
}

void pw__tq1x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__TQ1X_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__TQ1X_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__TQ1X_NR && t0 + r < d->out; ++r)
            for (int64_t b = 0; b < nb; ++b)
                tq1x_place_row(pw_view_block_ptr(w, t0 + r, b), r,
                               tile + (uint64_t)b * PW__TQ1X_RECORD);
    }
}

void pw__tq1x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    for (int r = 0; r < PW__TQ1X_NR; ++r)
        tq1x_place_row(src + (size_t)r * sizeof(pw__block_tq1_0), r, rec);
}

/* A record's trits, rows 0..15 in lo and 16..31 in hi, in the steps of value order:
 * lo[64 s + 4 r + j] = the trit (0..2) of value 4s + j of row r. */
static void tq1x_decode(const uint8_t *rec, int8_t lo[64 * 64], int8_t hi[64 * 64]) {
    for (int g = 0; g < PW__TQ1X_DWORDS; ++g)
        for (int h = 0; h < 2; ++h) {
            uint8_t v[64];
            memcpy(v, rec + PW__TQ1X_GROUP * g + 64 * h, 64);
            int8_t *half = h ? hi : lo;
            for (int k = 0; k < pw__tq1x_trits(g); ++k) {
                int8_t *step = half + 64 * (pw__tq1x_e0(g, k) / 4);
                for (int i = 0; i < 64; ++i) {
                    step[i] = (int8_t)pw__tq1x_trit(v[i]);
                    v[i] = (uint8_t)(v[i] * 3u);
                }
            }
        }
}

#define TQ1X_ROWS 16 /* rows of X per decoded record */

static void tq1x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    int8_t lo[64 * 64], hi[64 * 64];
    for (int64_t t0 = o0; t0 < o1; t0 += PW__TQ1X_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__TQ1X_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__TQ1X_NR ? (int)(o1 - t0) : PW__TQ1X_NR;
        for (int64_t ib = i0; ib < i1; ib += TQ1X_ROWS) {
            const int n = i1 - ib < TQ1X_ROWS ? (int)(i1 - ib) : TQ1X_ROWS;
            float acc[TQ1X_ROWS][32] = {{0}};
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t *rec = tile + (uint64_t)b * PW__TQ1X_RECORD;
                float dw[32];
                pw__tile32_f16_rows(rec + PW__TQ1X_D, dw);
                tq1x_decode(rec, lo, hi);
                for (int i = 0; i < n; ++i) {
                    const pw__q8_256 *x =
                        (const pw__q8_256 *)(c->xq + (uint64_t)(ib + i) * c->xq_row_bytes) + b;
                    int32_t dot[32];
                    pw__tile32_step_dots(lo, hi, 64, x->qs, dot);
                    for (int r = 0; r < 32; ++r)
                        acc[i][r] += (float)(dot[r] - x->sum) * dw[r] * x->d;
                }
            }
            for (int i = 0; i < n; ++i)
                for (int r = 0; r < rows; ++r) c->y[(ib + i) * c->ldy + t0 + r] = acc[i][r];
        }
    }
}

const pw__kernel pw__k_tq1_0_tq1x32k4_scalar =
    PW__TQ1X_KERNEL("scalar", 0, tq1x_run_scalar, PW__PRIO_SCALAR - 1);
