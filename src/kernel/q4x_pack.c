/*
 * Packer of the q4x32k4 family (layout in q4x.h) and its portable kernel:
 * the readable reference of what the SIMD kernels compute, so the packer is
 * tested at every ISA level. Dispatch never prefers the portable kernel (its
 * priority is below the i8g scalar kernel of Q4_0); tests force it by name.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q4x.h"

#include <string.h>

static const pw__tile32_family q4x_family = {
    PW__Q4X_FAMILY, PW_FORMAT_Q4_0, PW__Q4X_KR, 32, PW__Q4X_VERSION, PW__Q4X_RECORD};

pw_status pw__q4x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q4x_family, format, out, in, d);
}

void pw__q4x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 32;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4X_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q4X_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q4X_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q4_0 blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__Q4X_RECORD;
                for (int k = 0; k < 32; ++k) {
                    /* Q4_0: byte j holds element j (low) and j + 16 (high) */
                    const int q = k < 16 ? blk.qs[k] & 15 : blk.qs[k - 16] >> 4;
                    uint8_t *byte = rec + 64 * (k / 4) + 4 * (r % 16) + k % 4;
                    *byte |= (uint8_t)(r < 16 ? q : q << 4);
                }
                memcpy(rec + PW__Q4X_SCALES + 2 * r, &blk.d, 2);
            }
        }
    }
}

/* Nibble k (0..31) of row r (0..31) in a record, as q4x.h lays it out. */
static int q4x_nibble(const uint8_t *rec, int r, int k) {
    const uint8_t byte = rec[64 * (k / 4) + 4 * (r % 16) + k % 4];
    return r < 16 ? byte & 15 : byte >> 4;
}

static void q4x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 32;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4X_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q4X_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q4X_NR ? (int)(o1 - t0) : PW__Q4X_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_32 *x = (const pw__q8_32 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            for (int r = 0; r < rows; ++r) {
                float acc = 0.0f;
                for (int64_t b = 0; b < nb; ++b) {
                    const uint8_t *rec = tile + (uint64_t)b * PW__Q4X_RECORD;
                    /* unsigned nibbles times the activations, then the -8 offset once */
                    int32_t idot = -8 * x[b].sum;
                    for (int k = 0; k < 32; ++k) idot += q4x_nibble(rec, r, k) * x[b].qs[k];
                    uint16_t h;
                    memcpy(&h, rec + PW__Q4X_SCALES + 2 * r, 2);
                    acc += pw__f16_to_f32(h) * x[b].d * (float)idot;
                }
                c->y[i * c->ldy + t0 + r] = acc;
            }
        }
    }
}

const pw__kernel pw__k_q4_0_q4x32k4_scalar =
    PW__Q4X_KERNEL("scalar", 0, q4x_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q4x.h): per row pair r, r + 16 and dword s of Q4_0's qs, step s
 * takes the low nibbles (rows r low, r + 16 high) and step s + 4 the high ones. */
void pw__q4x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q4_0);
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = src + r * bb, *b = src + (r + 16) * bb;
        for (int s = 0; s < 4; ++s) {
            uint32_t x, y;
            memcpy(&x, a + offsetof(pw__block_q4_0, qs) + 4 * s, 4);
            memcpy(&y, b + offsetof(pw__block_q4_0, qs) + 4 * s, 4);
            uint32_t lo, hi;
            pw__tile32_nibble_pair(x, y, &lo, &hi);
            memcpy(rec + 64 * s + 4 * r, &lo, 4);
            memcpy(rec + 64 * (s + 4) + 4 * r, &hi, 4);
        }
        memcpy(rec + PW__Q4X_SCALES + 2 * r, a, 2);
        memcpy(rec + PW__Q4X_SCALES + 2 * (r + 16), b, 2);
    }
}
