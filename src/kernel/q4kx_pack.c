/*
 * Packer of the q4kx32k4 family (layout in q4kx.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level. Dispatch never prefers the portable kernel (its
 * priority is below the i8g scalar kernel of Q4_K); tests force it by name.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q4kx.h"

#include <string.h>

static const pw__tile32_family q4kx_family = {
    PW__Q4KX_FAMILY, PW_FORMAT_Q4_K, PW__Q4KX_KR, 32, PW__Q4KX_VERSION, PW__Q4KX_RECORD};

pw_status pw__q4kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q4kx_family, format, out, in, d);
}

void pw__q4kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / PW__QK_K;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4KX_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q4KX_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q4KX_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q4_K blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__Q4KX_RECORD;
                for (int e = 0; e < PW__QK_K; ++e) {
                    /* Q4_K: 64-element chunk e / 64 in bytes [32 (e / 64), +32), its first
                     * 32 elements in the low nibbles, its last 32 in the high nibbles */
                    const uint8_t src = blk.qs[32 * (e / 64) + e % 32];
                    const int q = e % 64 < 32 ? src & 15 : src >> 4;
                    uint8_t *byte = rec + 64 * (e / 4) + 4 * (r % 16) + e % 4;
                    *byte |= (uint8_t)(r < 16 ? q : q << 4);
                }
                memcpy(rec + PW__Q4KX_D + 2 * r, &blk.d, 2);
                memcpy(rec + PW__Q4KX_DMIN + 2 * r, &blk.dmin, 2);
                for (int i = 0; i < PW__K_SCALE_SIZE; ++i)
                    rec[PW__Q4KX_SCALES + 192 * (r / 16) + 16 * i + r % 16] = blk.scales[i];
            }
        }
    }
}

/* Nibble e (0..255) of row r (0..31) in a record, as q4kx.h lays it out. */
static int q4kx_nibble(const uint8_t *rec, int r, int e) {
    const uint8_t byte = rec[64 * (e / 4) + 4 * (r % 16) + e % 4];
    return r < 16 ? byte & 15 : byte >> 4;
}

static float q4kx_f16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pw__f16_to_f32(h);
}

static void q4kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / PW__QK_K;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q4KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q4KX_NR ? (int)(o1 - t0) : PW__Q4KX_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            for (int r = 0; r < rows; ++r) {
                float acc = 0.0f;
                for (int64_t b = 0; b < nb; ++b) {
                    const uint8_t *rec = tile + (uint64_t)b * PW__Q4KX_RECORD;
                    uint8_t packed[PW__K_SCALE_SIZE];
                    for (int k = 0; k < PW__K_SCALE_SIZE; ++k)
                        packed[k] = rec[PW__Q4KX_SCALES + 192 * (r / 16) + 16 * k + r % 16];
                    /* per sub-block: the scale times the dot of unsigned nibbles, and the
                     * min times the sub-block's activation sum, both exact in int32 */
                    int32_t isum = 0, msum = 0;
                    for (int j = 0; j < 8; ++j) {
                        uint8_t sc, m;
                        pw__k4_scale_min(j, packed, &sc, &m);
                        int32_t dot = 0;
                        for (int t = 0; t < 32; ++t)
                            dot += q4kx_nibble(rec, r, 32 * j + t) * x[b].qs[32 * j + t];
                        isum += sc * dot;
                        msum += m * (x[b].bsums[2 * j] + x[b].bsums[2 * j + 1]);
                    }
                    const float t = (float)isum * q4kx_f16(rec + PW__Q4KX_D + 2 * r) -
                                    (float)msum * q4kx_f16(rec + PW__Q4KX_DMIN + 2 * r);
                    acc += t * x[b].d;
                }
                c->y[i * c->ldy + t0 + r] = acc;
            }
        }
    }
}

const pw__kernel pw__k_q4_k_q4kx32k4_scalar =
    PW__Q4KX_KERNEL("scalar", 0, q4kx_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q4kx.h): per row pair r, r + 16 and dword D of Q4_K's qs (64-value
 * chunk D / 8), step 16 (D / 8) + D % 8 takes the low nibbles and 8 steps later the
 * high ones; d, dmin and the scale bytes are copied to their places. */
void pw__q4kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q4_K);
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = src + r * bb, *b = src + (r + 16) * bb;
        for (int dw = 0; dw < 32; ++dw) {
            uint32_t x, y;
            memcpy(&x, a + offsetof(pw__block_q4_K, qs) + 4 * dw, 4);
            memcpy(&y, b + offsetof(pw__block_q4_K, qs) + 4 * dw, 4);
            uint32_t lo, hi;
            pw__tile32_nibble_pair(x, y, &lo, &hi);
            const int s = 16 * (dw / 8) + dw % 8;
            memcpy(rec + 64 * s + 4 * r, &lo, 4);
            memcpy(rec + 64 * (s + 8) + 4 * r, &hi, 4);
        }
    }
    for (int r = 0; r < 32; ++r) {
        const uint8_t *a = src + r * bb;
        memcpy(rec + PW__Q4KX_D + 2 * r, a + offsetof(pw__block_q4_K, d), 2);
        memcpy(rec + PW__Q4KX_DMIN + 2 * r, a + offsetof(pw__block_q4_K, dmin), 2);
        for (int i = 0; i < PW__K_SCALE_SIZE; ++i)
            rec[PW__Q4KX_SCALES + 192 * (r / 16) + 16 * i + r % 16] =
                a[offsetof(pw__block_q4_K, scales) + i];
    }
}
