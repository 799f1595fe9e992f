/*
 * Packer of the q2kx32k4 family (layout in q2kx.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level. Its priority is below the i8g scalar kernel of
 * Q2_K (the fastest policy's choice) but above the reference kernel, so the
 * compact policy runs it where no SIMD kernel of the family is usable (the
 * scalar level, Arm without dotprod): it reads each record byte once for its
 * two rows and two steps (q2kx_record_dots).
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q2kx.h"

#include <stddef.h>
#include <string.h>

static const pw__tile32_family q2kx_family = {
    PW__Q2KX_FAMILY, PW_FORMAT_Q2_K, PW__Q2KX_KR, 16, PW__Q2KX_VERSION, PW__Q2KX_RECORD};

pw_status pw__q2kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q2kx_family, format, out, in, d);
}

/* Where q2kx.h puts value e (0..255) of row r (0..31) in a record: its byte (load
 * P_k with k = step u % 2) and the shift of its 2 bits (+2 for steps 2 and 3, +4 for
 * rows 16..31). */
static size_t q2kx_byte(int r, int e) {
    return (size_t)(PW__Q2KX_SUB * (e / 16) + 64 * (e % 16 / 4 % 2) + 4 * (r % 16) + e % 4);
}
static int q2kx_shift(int r, int e) { return (e % 16 < 8 ? 0 : 2) + (r < 16 ? 0 : 4); }

void pw__q2kx_place_quants(const uint8_t qs[64], int r, uint8_t *rec) {
    for (int e = 0; e < 256; ++e) {
        const int q = qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
        rec[q2kx_byte(r, e)] |= (uint8_t)(q << q2kx_shift(r, e));
    }
}

void pw__q2kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q2KX_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q2KX_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q2KX_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q2_K blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__Q2KX_RECORD;
                pw__q2kx_place_quants(blk.qs, r, rec);
                for (int s = 0; s < 16; ++s) rec[PW__Q2KX_SCALES + 32 * s + r] = blk.scales[s];
                memcpy(rec + PW__Q2KX_D + 2 * r, &blk.d, 2);
                memcpy(rec + PW__Q2KX_DMIN + 2 * r, &blk.dmin, 2);
            }
        }
    }
}

/* Record-making (q2kx.h) from the 32 blocks of a column, with blocks.h's names: qs dword
 * 8h + D (D = 0..7) holds at bits 2g of its byte j the quant of value 128h + 32g + 4D + j,
 * sub-block 8h + 2g + D / 4, step D % 4; steps u and u + 2 (u = D % 2) of rows r and
 * r + 16 make bits 0-1, 2-3, 4-5, 6-7 of lane r of load P_u. */
void pw__q2kx_record_quants(const uint8_t *qs, size_t bb, uint8_t *rec) {
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = qs + r * bb, *b = qs + (r + 16) * bb;
        for (int h = 0; h < 2; ++h) {
            uint32_t x[8], y[8];
            memcpy(x, a + 32 * h, 32);
            memcpy(y, b + 32 * h, 32);
            for (int g = 0; g < 4; ++g) {
                for (int D = 0; D < 8; D += D % 2 ? 3 : 1) { /* D = 0, 1, 4, 5 */
                    const uint32_t m = 0x03030303u;
                    const uint32_t v = (x[D] >> 2 * g & m) | (x[D + 2] >> 2 * g & m) << 2 |
                                       (y[D] >> 2 * g & m) << 4 | (y[D + 2] >> 2 * g & m) << 6;
                    const int s = 8 * h + 2 * g + D / 4;
                    memcpy(rec + PW__Q2KX_SUB * s + 64 * (D % 2) + 4 * r, &v, 4);
                }
            }
        }
    }
}

void pw__q2kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q2_K);
    pw__q2kx_record_quants(src + offsetof(pw__block_q2_K, qs), bb, rec);
    for (int r = 0; r < 32; ++r) {
        const uint8_t *blk = src + r * bb;
        for (int s = 0; s < 16; ++s)
            rec[PW__Q2KX_SCALES + 32 * s + r] = blk[offsetof(pw__block_q2_K, scales) + s];
        memcpy(rec + PW__Q2KX_D + 2 * r, blk + offsetof(pw__block_q2_K, d), 2);
        memcpy(rec + PW__Q2KX_DMIN + 2 * r, blk + offsetof(pw__block_q2_K, dmin), 2);
    }
}

static float q2kx_f16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pw__f16_to_f32(h);
}

/* A record's 32 rows at once with one activation block: isum[r] = sum_s sc_s * sum_e q
 * x.qs[e] and msum[r] = sum_s m_s * x.bsums[s], both exact in int32. Each byte of a
 * load is read once for its two rows and two steps (q2kx.h), so this kernel, which the
 * compact policy runs where no SIMD kernel of the family is usable (it ranks above the
 * reference kernel, which reads the file's bytes in place), is not slower than the
 * reference kernel it displaces there. */
static void q2kx_record_dots(const uint8_t *rec, const pw__q8_256 *x, int32_t isum[32],
                             int32_t msum[32]) {
    for (int r = 0; r < 32; ++r) isum[r] = msum[r] = 0;
    for (int s = 0; s < 16; ++s) {
        int32_t dot[32] = {0};
        for (int k = 0; k < 2; ++k) {
            const uint8_t *p = rec + PW__Q2KX_SUB * s + 64 * k;
            const int8_t *a = x->qs + 16 * s + 4 * k; /* step k at a[j], step k + 2 at a[8 + j] */
            for (int r = 0; r < 16; ++r)
                for (int j = 0; j < 4; ++j) {
                    const int v = p[4 * r + j];
                    dot[r] += (v & 3) * a[j] + (v >> 2 & 3) * a[8 + j];
                    dot[r + 16] += (v >> 4 & 3) * a[j] + (v >> 6) * a[8 + j];
                }
        }
        const uint8_t *sm = rec + PW__Q2KX_SCALES + 32 * s;
        for (int r = 0; r < 32; ++r) {
            isum[r] += (sm[r] & 15) * dot[r];
            msum[r] += (sm[r] >> 4) * x->bsums[s];
        }
    }
}

static void q2kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q2KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q2KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q2KX_NR ? (int)(o1 - t0) : PW__Q2KX_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            float acc[32] = {0};
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t *rec = tile + (uint64_t)b * PW__Q2KX_RECORD;
                int32_t isum[32], msum[32];
                q2kx_record_dots(rec, &x[b], isum, msum);
                for (int r = 0; r < 32; ++r) {
                    const float t = (float)isum[r] * q2kx_f16(rec + PW__Q2KX_D + 2 * r) -
                                    (float)msum[r] * q2kx_f16(rec + PW__Q2KX_DMIN + 2 * r);
                    acc[r] += t * x[b].d;
                }
            }
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = acc[r];
        }
    }
}

const pw__kernel pw__k_q2_k_q2kx32k4_scalar =
    PW__Q2KX_KERNEL("scalar", 0, q2kx_run_scalar, PW__PRIO_SCALAR - 1);
