/*
 * Packers of the q4x32k4 family (layout in q4x.h) and of the families whose records
 * begin as its (q5x32k4 for Q5_0, q5x.h; iq4x32k4 for IQ4_NL, iq4x.h), and their
 * portable kernels: the readable reference of what the SIMD kernels compute, so the
 * packers are tested at every ISA level. Dispatch never prefers a portable kernel
 * (its priority is below the format's i8g scalar kernel); tests force them by name.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q4x.h"
#include "kernel/iq4x.h"
#include "kernel/q5x.h"

#include <string.h>

static const pw__tile32_family q4x_family = {
    PW__Q4X_FAMILY, PW_FORMAT_Q4_0, PW__Q4X_KR, 32, PW__Q4X_VERSION, PW__Q4X_RECORD};
static const pw__tile32_family q5x_family = {
    PW__Q5X_FAMILY, PW_FORMAT_Q5_0, PW__Q4X_KR, 32, PW__Q5X_VERSION, PW__Q5X_RECORD};
static const pw__tile32_family iq4x_family = {
    PW__IQ4X_FAMILY, PW_FORMAT_IQ4_NL, PW__Q4X_KR, 32, PW__IQ4X_VERSION, PW__Q4X_RECORD};

pw_status pw__q4x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q4x_family, format, out, in, d);
}

pw_status pw__q5x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q5x_family, format, out, in, d);
}

pw_status pw__iq4x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &iq4x_family, format, out, in, d);
}

/* Row r's plane bytes (q5x.h) from its Q5_0 block's qh (a little-endian uint32 whose
 * bit k is bit 4 of element k): byte 4 (r % 16) + j of L (H for rows 16..31) has as bit
 * s the bit of element 4s + j. */
static void q5x_planes(const uint8_t *qh4, int r, uint8_t *rec) {
    const uint32_t qh = (uint32_t)qh4[0] | (uint32_t)qh4[1] << 8 | (uint32_t)qh4[2] << 16 |
                        (uint32_t)qh4[3] << 24;
    for (int j = 0; j < 4; ++j) {
        uint8_t byte = 0;
        for (int s = 0; s < 8; ++s) byte |= (uint8_t)((qh >> (4 * s + j) & 1u) << s);
        rec[PW__Q5X_BITS + 64 * (r / 16) + 4 * (r % 16) + j] = byte;
    }
}

/* Rows [o0, o1) (whole tiles from o0) of a weight of format f (PW__Q4X_*) as records of
 * record_bytes. The three blocks hold byte j's low nibble as element j and its high one
 * as element j + 16, after d (and Q5_0's qh); IQ4_NL's are laid out as Q4_0's. */
static void q4x_pack_any(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1,
                         uint8_t *dst, uint64_t record_bytes, int f) {
    _Static_assert(sizeof(pw__block_iq4_nl) == sizeof(pw__block_q4_0) &&
                       offsetof(pw__block_iq4_nl, qs) == offsetof(pw__block_q4_0, qs),
                   "IQ4_NL blocks are laid out as Q4_0's");
    const int q5 = f == PW__Q4X_Q5_0;
    const int64_t nb = d->in / 32;
    const size_t bb = q5 ? sizeof(pw__block_q5_0) : sizeof(pw__block_q4_0);
    const size_t qs_at = q5 ? offsetof(pw__block_q5_0, qs) : offsetof(pw__block_q4_0, qs);
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4X_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q4X_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q4X_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                uint8_t blk[sizeof(pw__block_q5_0)];
                memcpy(blk, pw_view_block_ptr(w, t0 + r, b), bb);
                uint8_t *rec = tile + (uint64_t)b * record_bytes;
                for (int k = 0; k < 32; ++k) {
                    const int q = k < 16 ? blk[qs_at + k] & 15 : blk[qs_at + k - 16] >> 4;
                    uint8_t *byte = rec + 64 * (k / 4) + 4 * (r % 16) + k % 4;
                    *byte |= (uint8_t)(r < 16 ? q : q << 4);
                }
                memcpy(rec + PW__Q4X_SCALES + 2 * r, blk, 2); /* d, first in both */
                if (q5) q5x_planes(blk + offsetof(pw__block_q5_0, qh), r, rec);
            }
        }
    }
}

void pw__q4x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_RECORD, PW__Q4X_Q4_0);
}

void pw__q5x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q5X_RECORD, PW__Q4X_Q5_0);
}

void pw__iq4x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_RECORD, PW__Q4X_IQ4_NL);
}

/* Value k (0..31) of row r (0..31) in a record of format f, its offset included but not
 * its scale: the nibble as q4x.h lays it out, minus 8 (Q4_0); plus 16 times its bit 4
 * (q5x.h), minus 16 (Q5_0); through the codebook (IQ4_NL). */
static int q4x_value(const uint8_t *rec, int r, int k, int f) {
    const uint8_t byte = rec[64 * (k / 4) + 4 * (r % 16) + k % 4];
    const int q = r < 16 ? byte & 15 : byte >> 4;
    if (f == PW__Q4X_IQ4_NL) return pw__iq4nl_values[q];
    if (f == PW__Q4X_Q4_0) return q - 8;
    return q + 16 * (rec[PW__Q5X_BITS + 64 * (r / 16) + 4 * (r % 16) + k % 4] >> (k / 4) & 1) - 16;
}

/* The portable kernels of the three families (f: PW__Q4X_*). */
static void q4x_run_any(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                        uint64_t record_bytes, int f) {
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
                    const uint8_t *rec = tile + (uint64_t)b * record_bytes;
                    int32_t idot = 0;
                    for (int k = 0; k < 32; ++k) idot += q4x_value(rec, r, k, f) * x[b].qs[k];
                    uint16_t h;
                    memcpy(&h, rec + PW__Q4X_SCALES + 2 * r, 2);
                    acc += pw__f16_to_f32(h) * x[b].d * (float)idot;
                }
                c->y[i * c->ldy + t0 + r] = acc;
            }
        }
    }
}

static void q4x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_RECORD, PW__Q4X_Q4_0);
}

static void q5x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q5X_RECORD, PW__Q4X_Q5_0);
}

static void iq4x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_RECORD, PW__Q4X_IQ4_NL);
}

const pw__kernel pw__k_q4_0_q4x32k4_scalar =
    PW__Q4X_KERNEL("scalar", 0, q4x_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_q5_0_q5x32k4_scalar =
    PW__Q5X_KERNEL("scalar", 0, q5x_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_iq4_nl_iq4x32k4_scalar =
    PW__IQ4X_KERNEL("scalar", 0, iq4x_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q4x.h): per row pair r, r + 16 and dword s of the blocks' qs (at qs_at
 * in blocks of bb bytes: Q4_0's or Q5_0's, d first in both), step s takes the low
 * nibbles (rows r low, r + 16 high) and step s + 4 the high ones. */
static void q4x_record_any(const uint8_t *src, uint8_t *rec, size_t bb, size_t qs_at) {
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = src + r * bb, *b = src + (r + 16) * bb;
        for (int s = 0; s < 4; ++s) {
            uint32_t x, y;
            memcpy(&x, a + qs_at + 4 * s, 4);
            memcpy(&y, b + qs_at + 4 * s, 4);
            uint32_t lo, hi;
            pw__tile32_nibble_pair(x, y, &lo, &hi);
            memcpy(rec + 64 * s + 4 * r, &lo, 4);
            memcpy(rec + 64 * (s + 4) + 4 * r, &hi, 4);
        }
        memcpy(rec + PW__Q4X_SCALES + 2 * r, a, 2);
        memcpy(rec + PW__Q4X_SCALES + 2 * (r + 16), b, 2);
    }
}

void pw__q4x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    q4x_record_any(src, rec, sizeof(pw__block_q4_0), offsetof(pw__block_q4_0, qs));
}

void pw__q5x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q5_0);
    q4x_record_any(src, rec, bb, offsetof(pw__block_q5_0, qs));
    for (int r = 0; r < 32; ++r)
        q5x_planes(src + (size_t)r * bb + offsetof(pw__block_q5_0, qh), r, rec);
}
