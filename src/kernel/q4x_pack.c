/*
 * Packers of the q4x32k4 family (layout in q4x.h) and of the families whose records
 * begin as its (q5x32k4 for Q5_0, q5x.h; iq4x32k4 for IQ4_NL, iq4x.h; q41x32k4 and
 * q51x32k4 for Q4_1 and Q5_1, q41x.h), and their
 * portable kernels: the readable reference of what the SIMD kernels compute, so the
 * packers are tested at every ISA level. Their priority is below the format's i8g
 * scalar kernel (the fastest policy's choice); the compact policy runs them where no
 * SIMD kernel of the family is usable (the scalar level, Arm without dotprod), so they
 * are written to be faster than the reference kernel there (pw__tile32_step_dots).
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q4x.h"
#include "kernel/iq4x.h"
#include "kernel/q41x.h"
#include "kernel/q5x.h"

#include <string.h>

static const pw__tile32_family q4x_family = {
    PW__Q4X_FAMILY, PW_FORMAT_Q4_0, PW__Q4X_KR, 32, PW__Q4X_VERSION, PW__Q4X_RECORD};
static const pw__tile32_family q5x_family = {
    PW__Q5X_FAMILY, PW_FORMAT_Q5_0, PW__Q4X_KR, 32, PW__Q5X_VERSION, PW__Q5X_RECORD};
static const pw__tile32_family iq4x_family = {
    PW__IQ4X_FAMILY, PW_FORMAT_IQ4_NL, PW__Q4X_KR, 32, PW__IQ4X_VERSION, PW__Q4X_RECORD};
static const pw__tile32_family q41x_family = {
    PW__Q41X_FAMILY, PW_FORMAT_Q4_1, PW__Q4X_KR, 32, PW__Q41X_VERSION, PW__Q41X_RECORD};
static const pw__tile32_family q51x_family = {
    PW__Q51X_FAMILY, PW_FORMAT_Q5_1, PW__Q4X_KR, 32, PW__Q51X_VERSION, PW__Q51X_RECORD};

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

pw_status pw__q41x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q41x_family, format, out, in, d);
}

pw_status pw__q51x_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q51x_family, format, out, in, d);
}

/* Where a block of format f (PW__Q4X_*) holds its nibbles and its qh (Q5_0, Q5_1), and
 * its bytes. Every block has d first; Q4_1 and Q5_1 then m. */
static size_t q4x_block_bytes(int f) {
    return f == PW__Q4X_Q5_0   ? sizeof(pw__block_q5_0)
           : f == PW__Q4X_Q4_1 ? sizeof(pw__block_q4_1)
           : f == PW__Q4X_Q5_1 ? sizeof(pw__block_q5_1)
                               : sizeof(pw__block_q4_0);
}
static size_t q4x_qs_at(int f) {
    return f == PW__Q4X_Q5_0   ? offsetof(pw__block_q5_0, qs)
           : f == PW__Q4X_Q4_1 ? offsetof(pw__block_q4_1, qs)
           : f == PW__Q4X_Q5_1 ? offsetof(pw__block_q5_1, qs)
                               : offsetof(pw__block_q4_0, qs);
}
static size_t q4x_qh_at(int f) {
    return f == PW__Q4X_Q5_1 ? offsetof(pw__block_q5_1, qh) : offsetof(pw__block_q5_0, qh);
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

/* Rows [o0, o1) (whole tiles from o0) of a weight of format f (PW__Q4X_*) as records.
 * The blocks hold byte j's low nibble as element j and its high one as element j + 16,
 * after d (and m, and qh); IQ4_NL's are laid out as Q4_0's. */
static void q4x_pack_any(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1,
                         uint8_t *dst, int f) {
    _Static_assert(sizeof(pw__block_iq4_nl) == sizeof(pw__block_q4_0) &&
                       offsetof(pw__block_iq4_nl, qs) == offsetof(pw__block_q4_0, qs),
                   "IQ4_NL blocks are laid out as Q4_0's");
    _Static_assert(offsetof(pw__block_q4_1, m) == 2 && offsetof(pw__block_q5_1, m) == 2,
                   "m follows d");
    const uint64_t record_bytes = PW__Q4X_RECORD_OF(f);
    const int64_t nb = d->in / 32;
    const size_t bb = q4x_block_bytes(f), qs_at = q4x_qs_at(f);
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4X_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q4X_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q4X_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                uint8_t blk[sizeof(pw__block_q5_1)];
                memcpy(blk, pw_view_block_ptr(w, t0 + r, b), bb);
                uint8_t *rec = tile + (uint64_t)b * record_bytes;
                for (int k = 0; k < 32; ++k) {
                    const int q = k < 16 ? blk[qs_at + k] & 15 : blk[qs_at + k - 16] >> 4;
                    uint8_t *byte = rec + 64 * (k / 4) + 4 * (r % 16) + k % 4;
                    *byte |= (uint8_t)(r < 16 ? q : q << 4);
                }
                memcpy(rec + PW__Q4X_SCALES + 2 * r, blk, 2); /* d, first in all */
                if (PW__Q4X_BIT4(f)) q5x_planes(blk + q4x_qh_at(f), r, rec);
                if (PW__Q4X_MIN(f)) memcpy(rec + record_bytes - 64 + 2 * r, blk + 2, 2);
            }
        }
    }
}

void pw__q4x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_Q4_0);
}

void pw__q5x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_Q5_0);
}

void pw__iq4x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_IQ4_NL);
}

void pw__q41x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_Q4_1);
}

void pw__q51x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    q4x_pack_any(d, w, o0, o1, dst, PW__Q4X_Q5_1);
}

/* The values of one record of format f, its offset not included: v[s][i] of row i / 4
 * and v[8 + s][i] of row 16 + i / 4 at element 4s + i % 4: the nibble as q4x.h lays it
 * out (byte i of step s) plus 16 times its bit 4 (q5x.h: Q5_0, Q5_1), or through the
 * codebook (IQ4_NL). */
static void q4x_record_values(const uint8_t *rec, int f, int8_t v[16][64]) {
    const uint8_t *pl = rec + PW__Q5X_BITS, *ph = pl + 64; /* the planes (Q5_0, Q5_1) */
    for (int s = 0; s < 8; ++s) {
        const uint8_t *b = rec + 64 * s;
        for (int i = 0; i < 64; ++i) {
            int ql = b[i] & 15, qh = b[i] >> 4;
            if (PW__Q4X_BIT4(f)) {
                ql |= (pl[i] >> s & 1) << 4;
                qh |= (ph[i] >> s & 1) << 4;
            }
            if (f == PW__Q4X_IQ4_NL) {
                ql = pw__iq4nl_values[ql];
                qh = pw__iq4nl_values[qh];
            }
            v[s][i] = (int8_t)ql;
            v[8 + s][i] = (int8_t)qh;
        }
    }
}

/* The portable kernels of the families (f: PW__Q4X_*), the readable reference of what
 * the SIMD kernels compute, and what compact dispatch runs where none of the family is
 * usable: each record decoded once for every row of X (q4x_record_values), its dots
 * over a step's bytes in address order (pw__tile32_step_dots); y holds the f32 sums
 * between records, which take the same operations in the same order as one row at a
 * time. The integer dot of row r with block b is sum_k value(r, k) * x.qs[k] + offset
 * * x.sum. */
static void q4x_run_any(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                        int f) {
    const uint64_t record_bytes = PW__Q4X_RECORD_OF(f);
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 32;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4X_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q4X_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q4X_NR ? (int)(o1 - t0) : PW__Q4X_NR;
        for (int64_t i = i0; i < i1; ++i)
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = tile + (uint64_t)b * record_bytes;
            int8_t v[16][64];
            q4x_record_values(rec, f, v);
            float dw[PW__Q4X_NR], mw[PW__Q4X_NR] = {0};
            pw__tile32_f16_rows(rec + PW__Q4X_SCALES, dw);
            if (PW__Q4X_MIN(f)) pw__tile32_f16_rows(rec + record_bytes - 64, mw);
            for (int64_t i = i0; i < i1; ++i) {
                const pw__q8_32 *x =
                    (const pw__q8_32 *)(c->xq + (uint64_t)i * c->xq_row_bytes) + b;
                int32_t dot[PW__Q4X_NR];
                pw__tile32_step_dots(v[0], v[8], 8, x->qs, dot);
                float *y = c->y + i * c->ldy + t0;
                for (int r = 0; r < rows; ++r) {
                    y[r] += dw[r] * x->d * (float)(dot[r] + PW__Q4X_OFFSET(f) * x->sum);
                    if (PW__Q4X_MIN(f)) y[r] += mw[r] * x->dsum;
                }
            }
        }
    }
}

static void q4x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_Q4_0);
}

static void q5x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_Q5_0);
}

static void iq4x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_IQ4_NL);
}

static void q41x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_Q4_1);
}

static void q51x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    q4x_run_any(c, o0, o1, i0, i1, PW__Q4X_Q5_1);
}

const pw__kernel pw__k_q4_0_q4x32k4_scalar =
    PW__Q4X_KERNEL("scalar", 0, q4x_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_q5_0_q5x32k4_scalar =
    PW__Q5X_KERNEL("scalar", 0, q5x_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_iq4_nl_iq4x32k4_scalar =
    PW__IQ4X_KERNEL("scalar", 0, iq4x_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_q4_1_q41x32k4_scalar =
    PW__Q41X_KERNEL("scalar", 0, q41x_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_q5_1_q51x32k4_scalar =
    PW__Q51X_KERNEL("scalar", 0, q51x_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q4x.h): per row pair r, r + 16 and dword s of the blocks' qs (at qs_at
 * in blocks of bb bytes, d first in all), step s takes the low nibbles (rows r low,
 * r + 16 high) and step s + 4 the high ones. */
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

/* The record of format f (Q5_0, Q4_1, Q5_1): q4x_record_any's, then bit 4's planes and
 * the rows' m where f has them. */
static void q4x_record_more(const uint8_t *src, uint8_t *rec, int f) {
    const size_t bb = q4x_block_bytes(f);
    q4x_record_any(src, rec, bb, q4x_qs_at(f));
    for (int r = 0; r < 32; ++r) {
        if (PW__Q4X_BIT4(f)) q5x_planes(src + (size_t)r * bb + q4x_qh_at(f), r, rec);
        if (PW__Q4X_MIN(f))
            memcpy(rec + PW__Q4X_RECORD_OF(f) - 64 + 2 * r, src + (size_t)r * bb + 2, 2);
    }
}

void pw__q5x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    q4x_record_more(src, rec, PW__Q4X_Q5_0);
}

void pw__q41x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    q4x_record_more(src, rec, PW__Q4X_Q4_1);
}

void pw__q51x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    q4x_record_more(src, rec, PW__Q4X_Q5_1);
}
