/*
 * Packer of the q3kx32k4 family (layout in q3kx.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level. Dispatch never prefers the portable kernel (its
 * priority is below the i8g scalar kernel of Q3_K); tests force it by name.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q3kx.h"

#include <string.h>

static const pw__tile32_family q3kx_family = {
    PW__Q3KX_FAMILY, PW_FORMAT_Q3_K, PW__Q3KX_KR, 16, PW__Q3KX_VERSION, PW__Q3KX_RECORD};

pw_status pw__q3kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q3kx_family, format, out, in, d);
}

/* Where q3kx.h puts value e (0..255) of row r (0..31) in a record: the byte of its
 * load P_k (k = 0..2) and the nibble's shift. Step u = e % 16 / 4 < 3 keeps its
 * quant in bits 0-2 of the nibble of P_u, step 3 bit k of it in bit 3 of P_k's. */
static size_t q3kx_byte(int r, int e, int k) {
    return (size_t)(PW__Q3KX_SUB * (e / 16) + 64 * k + 4 * (r % 16) + e % 4);
}
static int q3kx_shift(int r) { return r < 16 ? 0 : 4; }

/* The 3-bit quant q (0..7) of value e of a Q3_K block: low2 + 4 * (hmask bit). */
static int q3k_quant(const pw__block_q3_K *blk, int e) {
    const int low2 = blk->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
    const int high = blk->hmask[e % 32] >> (e / 32) & 1;
    return low2 + 4 * high;
}

void pw__q3kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q3KX_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q3KX_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q3KX_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q3_K blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__Q3KX_RECORD;
                for (int e = 0; e < 256; ++e) {
                    const int q = q3k_quant(&blk, e), u = e % 16 / 4;
                    if (u < 3) {
                        rec[q3kx_byte(r, e, u)] |= (uint8_t)(q << q3kx_shift(r));
                    } else {
                        for (int k = 0; k < 3; ++k) /* bit k at bit 3 of the nibble of P_k */
                            rec[q3kx_byte(r, e, k)] |=
                                (uint8_t)((q >> k & 1) << (3 + q3kx_shift(r)));
                    }
                }
                for (int i = 0; i < 12; ++i)
                    rec[PW__Q3KX_SCALES + 192 * (r / 16) + 16 * i + r % 16] = blk.scales[i];
                memcpy(rec + PW__Q3KX_D + 2 * r, &blk.d, 2);
            }
        }
    }
}

/* The 3-bit quant (0..7) of value e of row r in a record, as q3kx.h lays it out. */
static int q3kx_quant(const uint8_t *rec, int r, int e) {
    const int u = e % 16 / 4, sh = q3kx_shift(r);
    if (u < 3) return rec[q3kx_byte(r, e, u)] >> sh & 7;
    int q = 0;
    for (int k = 0; k < 3; ++k) q |= (rec[q3kx_byte(r, e, k)] >> (3 + sh) & 1) << k;
    return q;
}

static void q3kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q3KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q3KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q3KX_NR ? (int)(o1 - t0) : PW__Q3KX_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            for (int r = 0; r < rows; ++r) {
                float acc = 0.0f;
                for (int64_t b = 0; b < nb; ++b) {
                    const uint8_t *rec = tile + (uint64_t)b * PW__Q3KX_RECORD;
                    uint8_t packed[12];
                    for (int k = 0; k < 12; ++k)
                        packed[k] = rec[PW__Q3KX_SCALES + 192 * (r / 16) + 16 * k + r % 16];
                    int8_t sc[16];
                    pw__q3k_unpack_scales(packed, sc);
                    int32_t isum = 0;
                    for (int s = 0; s < 16; ++s) {
                        /* unsigned quants times the activations, then the -4 offset once */
                        int32_t dot = -4 * x[b].bsums[s];
                        for (int e = 16 * s; e < 16 * s + 16; ++e)
                            dot += q3kx_quant(rec, r, e) * x[b].qs[e];
                        isum += (sc[s] - 32) * dot;
                    }
                    uint16_t h;
                    memcpy(&h, rec + PW__Q3KX_D + 2 * r, 2);
                    acc += pw__f16_to_f32(h) * x[b].d * (float)isum;
                }
                c->y[i * c->ldy + t0 + r] = acc;
            }
        }
    }
}

const pw__kernel pw__k_q3_k_q3kx32k4_scalar =
    PW__Q3KX_KERNEL("scalar", 0, q3kx_run_scalar, PW__PRIO_SCALAR - 1);
