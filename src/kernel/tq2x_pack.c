/*
 * Packer of the tq2x32k4 family (layout in tq2x.h; its quant bytes are
 * q2kx32k4's, placed by q2kx's code) and its portable kernel: the readable
 * reference of what the SIMD kernels compute, so the packer is tested at every
 * ISA level. Its priority is below the i8g scalar kernel of TQ2_0 (the fastest
 * policy's choice) but above the reference kernel, so the compact policy runs it
 * where no SIMD kernel of the family is usable (the scalar level, Arm without
 * dotprod): it decodes a record once for every row of X and takes the dots in
 * the loop order the compiler vectorizes (pw__tile32_step_dots). packwise bench
 * --formats TQ2_0 --shapes 4096x4096 --batch 1,8 --threads 1 --kernel K at
 * PACKWISE_ISA=scalar, single runs on the shared 2-vCPU VM (load 4): GEMV 2.60 ms
 * against the reference kernel's 13.5 ms, n = 8 18.9 ms against 92.1 ms.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/tq2x.h"

#include <stddef.h>
#include <string.h>

static const pw__tile32_family tq2x_family = {
    PW__TQ2X_FAMILY, PW_FORMAT_TQ2_0, PW__TQ2X_KR, 256, PW__TQ2X_VERSION, PW__TQ2X_RECORD};

pw_status pw__tq2x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &tq2x_family, format, out, in, d);
}

void pw__tq2x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__TQ2X_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__TQ2X_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__TQ2X_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_tq2_0 blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__TQ2X_RECORD;
                pw__q2kx_place_quants(blk.qs, r, rec);
                memcpy(rec + PW__TQ2X_D + 2 * r, &blk.d, 2);
            }
        }
    }
}

void pw__tq2x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_tq2_0);
    pw__q2kx_record_quants(src + offsetof(pw__block_tq2_0, qs), bb, rec);
    for (int r = 0; r < 32; ++r)
        memcpy(rec + PW__TQ2X_D + 2 * r, src + r * bb + offsetof(pw__block_tq2_0, d), 2);
}

/* A record's trits as int8, step t (values 4t .. 4t + 3) at v[h][64 t + 4 r + j]
 * for row 16 h + r: the layout pw__tile32_step_dots reads. */
static void tq2x_record_values(const uint8_t *rec, int8_t v[2][64 * 64]) {
    for (int s = 0; s < 16; ++s)
        for (int k = 0; k < 2; ++k) {
            const uint8_t *p = rec + PW__TQ2X_SUB * s + 64 * k;
            int8_t *a0 = v[0] + 64 * (4 * s + k), *a1 = v[1] + 64 * (4 * s + k);
            for (int i = 0; i < 64; ++i) {
                a0[i] = (int8_t)(p[i] & 3);
                a0[128 + i] = (int8_t)(p[i] >> 2 & 3); /* step u = k + 2 */
                a1[i] = (int8_t)(p[i] >> 4 & 3);
                a1[128 + i] = (int8_t)(p[i] >> 6);
            }
        }
}

/* y holds the f32 sums between records, which take the same order as the SIMD
 * kernels': one integer dot per (row, block), exact in int32 (|t| <= 3, |qs| <= 127:
 * 256 * 3 * 127 < 2^17). */
static void tq2x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__TQ2X_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__TQ2X_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__TQ2X_NR ? (int)(o1 - t0) : PW__TQ2X_NR;
        for (int64_t i = i0; i < i1; ++i)
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = tile + (uint64_t)b * PW__TQ2X_RECORD;
            int8_t v[2][64 * 64];
            tq2x_record_values(rec, v);
            float dw[PW__TQ2X_NR];
            pw__tile32_f16_rows(rec + PW__TQ2X_D, dw);
            for (int64_t i = i0; i < i1; ++i) {
                const pw__q8_256 *x =
                    (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes) + b;
                int32_t dot[PW__TQ2X_NR];
                pw__tile32_step_dots(v[0], v[1], 64, x->qs, dot);
                float *y = c->y + i * c->ldy + t0;
                for (int r = 0; r < rows; ++r) y[r] += dw[r] * x->d * (float)(dot[r] - x->sum);
            }
        }
    }
}

const pw__kernel pw__k_tq2_0_tq2x32k4_scalar =
    PW__TQ2X_KERNEL("scalar", 0, tq2x_run_scalar, PW__PRIO_SCALAR - 1);
