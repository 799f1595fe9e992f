/*
 * Packers of the q4kx32k4 family (layout in q4kx.h) and of its 5-bit sibling
 * q5kx32k4 (q5kx.h: a q4kx32k4 record of Q5_K's low 4 bits, then the bit-4
 * masks), and their portable kernels: the readable reference of what the SIMD
 * kernels compute, so the packers are tested at every ISA level. Their priority
 * is below the format's i8g scalar kernel (the fastest policy's choice); the compact
 * policy runs them where no SIMD kernel of the family is usable (the scalar level,
 * Arm without dotprod), so they are written to be faster than the reference kernel
 * there (pw__tile32_step_dots).
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q4kx.h"
#include "kernel/q5kx.h"

#include <string.h>

static const pw__tile32_family q4kx_family = {
    PW__Q4KX_FAMILY, PW_FORMAT_Q4_K, PW__Q4KX_KR, 32, PW__Q4KX_VERSION, PW__Q4KX_RECORD};
static const pw__tile32_family q5kx_family = {
    PW__Q5KX_FAMILY, PW_FORMAT_Q5_K, PW__Q4KX_KR, 32, PW__Q5KX_VERSION, PW__Q5KX_RECORD};

pw_status pw__q4kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q4kx_family, format, out, in, d);
}

pw_status pw__q5kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q5kx_family, format, out, in, d);
}

/* Row r's share of a q5kx32k4 record's bit planes (q5kx.h) from its Q5_K block's qh:
 * byte 4 (r % 16) + j of L_t (H_t for rows 16..31) has as bit u bit 4 of element
 * 4 (8t + u) + j, which is bit t of qh[4u + j]. q holds qh[4u + j] as its byte u; the
 * multiply gathers bit t of its eight bytes (bit 8u + t) into bits 56 + u (every other
 * product lands below bit 56 or past bit 63). */
static void k4x_planes(const uint8_t *qh, int r, uint8_t *rec) {
    for (int j = 0; j < 4; ++j) {
        uint64_t q = 0;
        for (int u = 0; u < 8; ++u) q |= (uint64_t)qh[4 * u + j] << (8 * u);
        for (int t = 0; t < 8; ++t)
            rec[PW__Q5KX_BITS + 128 * t + 64 * (r / 16) + 4 * (r % 16) + j] =
                (uint8_t)(((q >> t & 0x0101010101010101u) * 0x0102040810204080u) >> 56);
    }
}

/* Rows [o0, o1) (whole tiles from o0) of a Q4_K (q5 0) or Q5_K (q5 1) weight as
 * records of record_bytes: row r of block b puts its nibbles, d, dmin and scale bytes
 * where q4kx.h says, and for Q5_K the bit 4 of each element where q5kx.h says. The two
 * blocks share their layout but for Q5_K's qh before the nibbles: d, dmin, 12 scale
 * bytes, [qh,] then 64-element chunk e / 64 in bytes [32 (e / 64), +32) of qs, its
 * first 32 elements in the low nibbles, its last 32 in the high nibbles; Q5_K's bit 4
 * of element e is bit e / 32 of qh[e % 32]. */
static void k4x_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1,
                     uint8_t *dst, uint64_t record_bytes, int q5) {
    const int64_t nb = d->in / PW__QK_K;
    const size_t qh_at = offsetof(pw__block_q5_K, qh);
    const size_t qs_at = q5 ? offsetof(pw__block_q5_K, qs) : offsetof(pw__block_q4_K, qs);
    const size_t bb = q5 ? sizeof(pw__block_q5_K) : sizeof(pw__block_q4_K);
    _Static_assert(offsetof(pw__block_q5_K, scales) == offsetof(pw__block_q4_K, scales) &&
                       offsetof(pw__block_q5_K, dmin) == offsetof(pw__block_q4_K, dmin),
                   "Q4_K and Q5_K begin alike");
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4KX_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q4KX_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q4KX_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                uint8_t blk[sizeof(pw__block_q5_K)];
                memcpy(blk, pw_view_block_ptr(w, t0 + r, b), bb);
                uint8_t *rec = tile + (uint64_t)b * record_bytes;
                for (int e = 0; e < PW__QK_K; ++e) {
                    const uint8_t src = blk[qs_at + 32 * (e / 64) + e % 32];
                    const int q = e % 64 < 32 ? src & 15 : src >> 4;
                    uint8_t *byte = rec + 64 * (e / 4) + 4 * (r % 16) + e % 4;
                    *byte |= (uint8_t)(r < 16 ? q : q << 4);
                }
                if (q5) k4x_planes(blk + qh_at, r, rec);
                memcpy(rec + PW__Q4KX_D + 2 * r, blk + offsetof(pw__block_q4_K, d), 2);
                memcpy(rec + PW__Q4KX_DMIN + 2 * r, blk + offsetof(pw__block_q4_K, dmin), 2);
                for (int i = 0; i < PW__K_SCALE_SIZE; ++i)
                    rec[PW__Q4KX_SCALES + 192 * (r / 16) + 16 * i + r % 16] =
                        blk[offsetof(pw__block_q4_K, scales) + i];
            }
        }
    }
}

void pw__q4kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    k4x_pack(d, w, o0, o1, dst, PW__Q4KX_RECORD, 0);
}

void pw__q5kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    k4x_pack(d, w, o0, o1, dst, PW__Q5KX_RECORD, 1);
}

/* The values of one record without their scales: v[h][s][j] of row 16h + j / 4 at
 * element 4s + j % 4, the nibble as q4kx.h lays it out (byte j of step s), plus 16 times
 * its bit 4 where q5 (q5kx.h: bit s % 8 of byte j of plane h of sub-block s / 8). */
static void k4x_record_values(const uint8_t *rec, int q5, int8_t v[2][64][64]) {
    for (int s = 0; s < 64; ++s) {
        const uint8_t *b = rec + 64 * s;
        const uint8_t *pl = rec + PW__Q5KX_BITS + 128 * (s / 8), *ph = pl + 64;
        for (int j = 0; j < 64; ++j) {
            int ql = b[j] & 15, qh = b[j] >> 4;
            if (q5) {
                ql |= (pl[j] >> (s % 8) & 1) << 4;
                qh |= (ph[j] >> (s % 8) & 1) << 4;
            }
            v[0][s][j] = (int8_t)ql;
            v[1][s][j] = (int8_t)qh;
        }
    }
}

/* The portable kernels of both families (q5: Q5_K's): the readable reference of what the
 * SIMD kernels compute, and what compact dispatch runs where none of the family is
 * usable. Each record is decoded once for every row of X (k4x_record_values, the scales
 * and mins too), its dots taken over a step's bytes in address order
 * (pw__tile32_step_dots); y holds the f32 sums between records, which take the same
 * operations in the same order as one row at a time. Per sub-block: the scale times the
 * dot of the unsigned values and the min times the sub-block's activation sum, both
 * exact in int32. */
static void k4x_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                           uint64_t record_bytes, int q5) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / PW__QK_K;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q4KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q4KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q4KX_NR ? (int)(o1 - t0) : PW__Q4KX_NR;
        for (int64_t i = i0; i < i1; ++i)
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = tile + (uint64_t)b * record_bytes;
            int8_t v[2][64][64];
            k4x_record_values(rec, q5, v);
            uint8_t sc[PW__Q4KX_NR][8], mn[PW__Q4KX_NR][8];
            float dw[PW__Q4KX_NR], dmw[PW__Q4KX_NR];
            for (int r = 0; r < PW__Q4KX_NR; ++r) {
                uint8_t packed[PW__K_SCALE_SIZE];
                for (int k = 0; k < PW__K_SCALE_SIZE; ++k)
                    packed[k] = rec[PW__Q4KX_SCALES + 192 * (r / 16) + 16 * k + r % 16];
                for (int j = 0; j < 8; ++j) pw__k4_scale_min(j, packed, &sc[r][j], &mn[r][j]);
            }
            pw__tile32_f16_rows(rec + PW__Q4KX_D, dw);
            pw__tile32_f16_rows(rec + PW__Q4KX_DMIN, dmw);
            for (int64_t i = i0; i < i1; ++i) {
                const pw__q8_256 *x =
                    (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes) + b;
                int32_t isum[PW__Q4KX_NR] = {0}, msum[PW__Q4KX_NR] = {0};
                for (int j = 0; j < 8; ++j) {
                    int32_t dot[PW__Q4KX_NR];
                    pw__tile32_step_dots(v[0][8 * j], v[1][8 * j], 8, x->qs + 32 * j, dot);
                    const int32_t bs = x->bsums[2 * j] + x->bsums[2 * j + 1];
                    for (int r = 0; r < PW__Q4KX_NR; ++r) {
                        isum[r] += sc[r][j] * dot[r];
                        msum[r] += mn[r][j] * bs;
                    }
                }
                float *y = c->y + i * c->ldy + t0;
                for (int r = 0; r < rows; ++r)
                    y[r] += ((float)isum[r] * dw[r] - (float)msum[r] * dmw[r]) * x->d;
            }
        }
    }
}

static void q4kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    k4x_run_scalar(c, o0, o1, i0, i1, PW__Q4KX_RECORD, 0);
}

static void q5kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    k4x_run_scalar(c, o0, o1, i0, i1, PW__Q5KX_RECORD, 1);
}

const pw__kernel pw__k_q4_k_q4kx32k4_scalar =
    PW__Q4KX_KERNEL("scalar", 0, q4kx_run_scalar, PW__PRIO_SCALAR - 1);
const pw__kernel pw__k_q5_k_q5kx32k4_scalar =
    PW__Q5KX_KERNEL("scalar", 0, q5kx_run_scalar, PW__PRIO_SCALAR - 1);

/* Record-making (q4kx.h): per row pair r, r + 16 and dword D of the blocks' qs (at qs_at
 * in blocks of bb bytes; 64-value chunk D / 8), step 16 (D / 8) + D % 8 takes the low
 * nibbles and 8 steps later the high ones; d, dmin and the scale bytes are copied to
 * their places (Q4_K and Q5_K begin alike: k4x_pack). */
static void k4x_record(const uint8_t *src, uint8_t *rec, size_t bb, size_t qs_at) {
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = src + r * bb, *b = src + (r + 16) * bb;
        for (int dw = 0; dw < 32; ++dw) {
            uint32_t x, y;
            memcpy(&x, a + qs_at + 4 * dw, 4);
            memcpy(&y, b + qs_at + 4 * dw, 4);
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

void pw__q4kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    k4x_record(src, rec, sizeof(pw__block_q4_K), offsetof(pw__block_q4_K, qs));
}

void pw__q5kx_planes_from_blocks(const uint8_t *src, uint8_t *rec) {
    for (int r = 0; r < 32; ++r)
        k4x_planes(src + (size_t)r * sizeof(pw__block_q5_K) + offsetof(pw__block_q5_K, qh), r, rec);
}

void pw__q5kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    k4x_record(src, rec, sizeof(pw__block_q5_K), offsetof(pw__block_q5_K, qs));
    pw__q5kx_planes_from_blocks(src, rec);
}
