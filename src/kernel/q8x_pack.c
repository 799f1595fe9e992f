/*
 * Packer of the q8x32k4 family (layout in q8x.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level and on Arm. Its priority is below the i8g scalar kernel
 * of Q8_0 (the fastest policy's choice); the compact policy runs it where no SIMD
 * kernel of the family is usable (the scalar level, Arm without dotprod), so it is
 * written to be faster than the reference kernel there (pw__tile32_step_dots).
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q8x.h"

#include <string.h>

static const pw__tile32_family q8x_family = {
    PW__Q8X_FAMILY, PW_FORMAT_Q8_0, PW__Q8X_KR, 32, PW__Q8X_VERSION, PW__Q8X_RECORD};

pw_status pw__q8x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q8x_family, format, out, in, d);
}

/* Where q8x.h puts value k (0..31) of row r (0..31) inside a record. */
static size_t q8x_at(int r, int k) {
    return (size_t)(PW__Q8X_STEP * (k / 4) + 64 * (r / 16) + 4 * (r % 16) + k % 4);
}

void pw__q8x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    static const pw__block_q8_0 zero; /* the block of a row past `out`: q = 0, d = 0 */
    const int64_t nb = d->in / 32;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q8X_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q8X_NR) * d->tile_bytes;
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t *rec = tile + (uint64_t)b * PW__Q8X_RECORD;
            for (int r = 0; r < PW__Q8X_NR; ++r) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q8_0 blk = zero;
                if (t0 + r < d->out) memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                /* 4 values a step: one 32-bit word, each byte's sign bit flipped */
                for (int k = 0; k < 32; k += 4) {
                    uint32_t v;
                    memcpy(&v, blk.qs + k, 4);
                    v ^= 0x80808080u;
                    memcpy(rec + q8x_at(r, k), &v, 4);
                }
                memcpy(rec + PW__Q8X_SCALES + 2 * r, &blk.d, 2);
            }
        }
    }
}

/* The portable kernel: the readable reference of what the SIMD kernels compute, and
 * what compact dispatch runs where none of the family is usable. Each record is decoded
 * once for every row of X (q = u XOR 0x80, so no offset term), its dots taken over a
 * step's bytes in address order (pw__tile32_step_dots); y holds the f32 sums between
 * records, which take the same operations in the same order as one row at a time. */
static void q8x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 32;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q8X_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q8X_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q8X_NR ? (int)(o1 - t0) : PW__Q8X_NR;
        for (int64_t i = i0; i < i1; ++i)
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = tile + (uint64_t)b * PW__Q8X_RECORD;
            int8_t v[16][64]; /* steps of rows 0..15, then of rows 16..31 */
            for (int s = 0; s < 8; ++s)
                for (int j = 0; j < 64; ++j) {
                    v[s][j] = (int8_t)(rec[PW__Q8X_STEP * s + j] ^ 0x80);
                    v[8 + s][j] = (int8_t)(rec[PW__Q8X_STEP * s + 64 + j] ^ 0x80);
                }
            float dw[PW__Q8X_NR];
            pw__tile32_f16_rows(rec + PW__Q8X_SCALES, dw);
            for (int64_t i = i0; i < i1; ++i) {
                const pw__q8_32 *x =
                    (const pw__q8_32 *)(c->xq + (uint64_t)i * c->xq_row_bytes) + b;
                int32_t dot[PW__Q8X_NR];
                pw__tile32_step_dots(v[0], v[8], 8, x->qs, dot);
                float *y = c->y + i * c->ldy + t0;
                for (int r = 0; r < rows; ++r) y[r] += dw[r] * x->d * (float)dot[r];
            }
        }
    }
}

const pw__kernel pw__k_q8_0_q8x32k4_scalar =
    PW__Q8X_KERNEL("scalar", 0, q8x_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q8x.h): dword s of row r's qs, XOR 0x80 in each byte, at step s. */
void pw__q8x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q8_0);
    for (int r = 0; r < 32; ++r) {
        const uint8_t *a = src + r * bb;
        for (int s = 0; s < 8; ++s) {
            uint32_t x;
            memcpy(&x, a + offsetof(pw__block_q8_0, qs) + 4 * s, 4);
            x ^= 0x80808080u;
            memcpy(rec + PW__Q8X_STEP * s + 64 * (r / 16) + 4 * (r % 16), &x, 4);
        }
        memcpy(rec + PW__Q8X_SCALES + 2 * r, a, 2);
    }
}
