/*
 * Packer of the q6kx32k4 family (layout in q6kx.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level. Its priority is below the i8g scalar kernel of Q6_K
 * (the fastest policy's choice); the compact policy runs it where no SIMD kernel of
 * the family is usable (the scalar level, Arm without dotprod), so it is written to be
 * faster than the reference kernel there (pw__tile32_step_dots).
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q6kx.h"

#include <string.h>

static const pw__tile32_family q6kx_family = {
    PW__Q6KX_FAMILY, PW_FORMAT_Q6_K, PW__Q6KX_KR, 16, PW__Q6KX_VERSION, PW__Q6KX_RECORD};

pw_status pw__q6kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q6kx_family, format, out, in, d);
}

/* Where q6kx.h puts value e (0..255) of row r (0..31) in a record: the byte and
 * shift of its 4 low bits, and of its 2 high bits. */
static size_t q6kx_low_byte(int r, int e) {
    return (size_t)(PW__Q6KX_SUB * (e / 16) + 64 * (e % 16 / 4) + 4 * (r % 16) + e % 4);
}
static int q6kx_low_shift(int r) { return r < 16 ? 0 : 4; }
static size_t q6kx_high_byte(int r, int e) {
    return (size_t)(PW__Q6KX_SUB * (e / 16) + PW__Q6KX_HIGH + 64 * (e % 16 / 8) + 4 * (r % 16) +
                    e % 4);
}
static int q6kx_high_shift(int r, int e) { return (e % 8 < 4 ? 4 : 0) + (r < 16 ? 0 : 2); }

void pw__q6kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q6KX_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q6KX_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q6KX_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q6_K blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__Q6KX_RECORD;
                for (int e = 0; e < 256; ++e) {
                    /* blocks.h: half h, lane l, group g of value e */
                    const int h = e / 128, l = e % 32, g = e % 128 / 32;
                    const int ql = blk.ql[64 * h + 32 * (g % 2) + l];
                    const int low4 = g < 2 ? ql & 15 : ql >> 4;
                    const int high2 = blk.qh[32 * h + l] >> (2 * g) & 3;
                    rec[q6kx_low_byte(r, e)] |= (uint8_t)(low4 << q6kx_low_shift(r));
                    rec[q6kx_high_byte(r, e)] |= (uint8_t)(high2 << q6kx_high_shift(r, e));
                }
                for (int s = 0; s < 16; ++s)
                    rec[PW__Q6KX_SCALES + 32 * s + r] = (uint8_t)blk.scales[s];
                memcpy(rec + PW__Q6KX_D + 2 * r, &blk.d, 2);
            }
        }
    }
}

/* The 6-bit quant (0..63) of value e of row r in a record, as q6kx.h lays it out. */
/* The 6-bit quants (0..63) of one record: v[h][4s + u][j] of row 16h + j / 4 at value
 * 16s + 4u + j % 4, as q6kx.h lays them out: the low 4 bits in load u of sub-block s,
 * the high 2 in its high load u / 2 (the upper nibble for even u). */
static void q6kx_record_values(const uint8_t *rec, int8_t v[2][64][64]) {
    for (int s = 0; s < 16; ++s)
        for (int u = 0; u < 4; ++u) {
            const uint8_t *lo = rec + PW__Q6KX_SUB * s + 64 * u;
            const uint8_t *hi = rec + PW__Q6KX_SUB * s + PW__Q6KX_HIGH + 64 * (u / 2);
            const int sh = u % 2 == 0 ? 4 : 0;
            for (int j = 0; j < 64; ++j) {
                v[0][4 * s + u][j] = (int8_t)((lo[j] & 15) + 16 * (hi[j] >> sh & 3));
                v[1][4 * s + u][j] = (int8_t)((lo[j] >> 4) + 16 * (hi[j] >> (sh + 2) & 3));
            }
        }
}

/* The portable kernel: the readable reference of what the SIMD kernels compute, and what
 * compact dispatch runs where none of the family is usable. Each record is decoded once
 * for every row of X (q6kx_record_values), its dots taken over a step's bytes in address
 * order (pw__tile32_step_dots); y holds the f32 sums between records, which take the
 * same operations in the same order as one row at a time. Per sub-block: the scale times
 * the dot of the unsigned quants, then the -32 offset once from the activation sums. */
static void q6kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q6KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q6KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q6KX_NR ? (int)(o1 - t0) : PW__Q6KX_NR;
        for (int64_t i = i0; i < i1; ++i)
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = tile + (uint64_t)b * PW__Q6KX_RECORD;
            int8_t v[2][64][64];
            q6kx_record_values(rec, v);
            float dw[PW__Q6KX_NR];
            pw__tile32_f16_rows(rec + PW__Q6KX_D, dw);
            for (int64_t i = i0; i < i1; ++i) {
                const pw__q8_256 *x =
                    (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes) + b;
                int32_t isum[PW__Q6KX_NR] = {0};
                for (int s = 0; s < 16; ++s) {
                    int32_t dot[PW__Q6KX_NR];
                    pw__tile32_step_dots(v[0][4 * s], v[1][4 * s], 4, x->qs + 16 * s, dot);
                    for (int r = 0; r < PW__Q6KX_NR; ++r)
                        isum[r] += (int8_t)rec[PW__Q6KX_SCALES + 32 * s + r] *
                                   (dot[r] - 32 * x->bsums[s]);
                }
                float *y = c->y + i * c->ldy + t0;
                for (int r = 0; r < rows; ++r) y[r] += dw[r] * x->d * (float)isum[r];
            }
        }
    }
}

const pw__kernel pw__k_q6_k_q6kx32k4_scalar =
    PW__Q6KX_KERNEL("scalar", 0, q6kx_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q6kx.h), with blocks.h's names: ql dword D (chunk C = D / 4) holds
 * the low4 of sub-block 8 (C / 4) + 2 (C / 2 % 2) + C % 2 in its low nibbles, step
 * D % 4 of it, and of the sub-block 4 later in its high ones; qh dwords 4Q + 2p and
 * 4Q + 2p + 1 hold, at bits 2g, the high2 of high plane p of sub-block
 * 8 (Q / 2) + 2 g + Q % 2 (the first in the plane's upper nibble). */
void pw__q6kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q6_K);
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = src + r * bb, *b = src + (r + 16) * bb;
        for (int dw = 0; dw < 32; ++dw) {
            uint32_t x, y;
            memcpy(&x, a + offsetof(pw__block_q6_K, ql) + 4 * dw, 4);
            memcpy(&y, b + offsetof(pw__block_q6_K, ql) + 4 * dw, 4);
            uint32_t lo, hi;
            pw__tile32_nibble_pair(x, y, &lo, &hi);
            const int c = dw / 4, sb = 8 * (c / 4) + 2 * (c / 2 % 2) + c % 2;
            memcpy(rec + PW__Q6KX_SUB * sb + 64 * (dw % 4) + 4 * r, &lo, 4);
            memcpy(rec + PW__Q6KX_SUB * (sb + 4) + 64 * (dw % 4) + 4 * r, &hi, 4);
        }
        for (int q = 0; q < 4; ++q) {
            for (int p = 0; p < 2; ++p) {
                uint32_t x0, x1, y0, y1;
                memcpy(&x0, a + offsetof(pw__block_q6_K, qh) + 16 * q + 8 * p, 4);
                memcpy(&x1, a + offsetof(pw__block_q6_K, qh) + 16 * q + 8 * p + 4, 4);
                memcpy(&y0, b + offsetof(pw__block_q6_K, qh) + 16 * q + 8 * p, 4);
                memcpy(&y1, b + offsetof(pw__block_q6_K, qh) + 16 * q + 8 * p + 4, 4);
                for (int g = 0; g < 4; ++g) {
                    const uint32_t t0 = (x0 >> 2 * g & 0x03030303u) | (y0 >> 2 * g & 0x03030303u) << 2;
                    const uint32_t t1 = (x1 >> 2 * g & 0x03030303u) | (y1 >> 2 * g & 0x03030303u) << 2;
                    const uint32_t v = t0 << 4 | t1;
                    const int sb = 8 * (q / 2) + 2 * g + q % 2;
                    memcpy(rec + PW__Q6KX_SUB * sb + PW__Q6KX_HIGH + 64 * p + 4 * r, &v, 4);
                }
            }
        }
    }
    for (int r = 0; r < 32; ++r) {
        const uint8_t *a = src + r * bb;
        for (int s = 0; s < 16; ++s) rec[PW__Q6KX_SCALES + 32 * s + r] = a[offsetof(pw__block_q6_K, scales) + s];
        memcpy(rec + PW__Q6KX_D + 2 * r, a + offsetof(pw__block_q6_K, d), 2);
    }
}
