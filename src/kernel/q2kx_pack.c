/*
 * Packer of the q2kx32k4 family (layout in q2kx.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level. Dispatch never prefers the portable kernel (its
 * priority is below the i8g scalar kernel of Q2_K); tests force it by name.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q2kx.h"

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
                for (int e = 0; e < 256; ++e) {
                    const int q = blk.qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
                    rec[q2kx_byte(r, e)] |= (uint8_t)(q << q2kx_shift(r, e));
                }
                for (int s = 0; s < 16; ++s) rec[PW__Q2KX_SCALES + 32 * s + r] = blk.scales[s];
                memcpy(rec + PW__Q2KX_D + 2 * r, &blk.d, 2);
                memcpy(rec + PW__Q2KX_DMIN + 2 * r, &blk.dmin, 2);
            }
        }
    }
}

static float q2kx_f16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pw__f16_to_f32(h);
}

static void q2kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q2KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q2KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q2KX_NR ? (int)(o1 - t0) : PW__Q2KX_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            for (int r = 0; r < rows; ++r) {
                float acc = 0.0f;
                for (int64_t b = 0; b < nb; ++b) {
                    const uint8_t *rec = tile + (uint64_t)b * PW__Q2KX_RECORD;
                    /* per sub-block: the scale times the dot of unsigned quants, and the
                     * min times the sub-block's activation sum, both exact in int32 */
                    int32_t isum = 0, msum = 0;
                    for (int s = 0; s < 16; ++s) {
                        const int sm = rec[PW__Q2KX_SCALES + 32 * s + r];
                        int32_t dot = 0;
                        for (int e = 16 * s; e < 16 * s + 16; ++e)
                            dot += (rec[q2kx_byte(r, e)] >> q2kx_shift(r, e) & 3) * x[b].qs[e];
                        isum += (sm & 15) * dot;
                        msum += (sm >> 4) * x[b].bsums[s];
                    }
                    const float t = (float)isum * q2kx_f16(rec + PW__Q2KX_D + 2 * r) -
                                    (float)msum * q2kx_f16(rec + PW__Q2KX_DMIN + 2 * r);
                    acc += t * x[b].d;
                }
                c->y[i * c->ldy + t0 + r] = acc;
            }
        }
    }
}

const pw__kernel pw__k_q2_k_q2kx32k4_scalar =
    PW__Q2KX_KERNEL("scalar", 0, q2kx_run_scalar, PW__PRIO_SCALAR - 1);
