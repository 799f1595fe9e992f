/*
 * The QB4W oracle (unpacked: plain loops over the raw weights) and the
 * portable packed kernel, generic over the family's (nr, kr, sr) and the
 * block size. Both follow the contract of kernel/qb4w.h to the bit; the
 * oracle computes each block's integer sum and F from the raw weights,
 * independently of the packer.
 */
#include "format/blocks.h"
#include "kernel/qb4w.h"

#include <string.h>


/* u of w[n, k] in the raw form (either orientation), 0 .. 15. */
static int64_t raw_u(const pw_qb4w_weights *w, int64_t n, int64_t k, int flip) {
    const int transposed = (w->flags & PW_QB4W_TRANSPOSED) != 0;
    const int64_t row = transposed ? k : n, col = transposed ? n : k;
    const int64_t stride = transposed ? (w->out + 1) / 2 : (w->in + 1) / 2;
    return ((w->data[row * stride + col / 2] >> ((col & 1) * 4)) & 15) ^ flip;
}

void pw__qb4w_reference(const pw_qb4w_weights *w, const float *bias, const uint8_t *lhs,
                        size_t lhs_row_bytes, int64_t batch, float min, float max, int f16, void *y,
                        int64_t ldy) {
    const int64_t nb = pw_qb4w_blocks(w), bsz = w->block_size;
    const int flip = w->zero_kind == PW_QB4W_ZERO_CONST && w->zero_point == 0 ? 8 : 0;
    for (int64_t n = 0; n < w->out; ++n) {
        /* F = sum_b ws_b * s_b, in block order, fused */
        float fsum = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const int64_t z = pw__qb4w_zero_at(w, n, b);
            int64_t ws = 0;
            for (int64_t k = b * bsz; k < (b + 1) * bsz && k < w->in; ++k) ws += raw_u(w, n, k, flip) - z;
            fsum = fmaf((float)ws, pw__qb4w_scale_at(w, n, b), fsum);
        }
        for (int64_t m = 0; m < batch; ++m) {
            const uint8_t *a = lhs + (size_t)m * lhs_row_bytes;
            const pw__qd8_header *h = pw__qd8_hdr(a);
            const int8_t *q = pw__qd8_q(a);
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                const int64_t z = pw__qb4w_zero_at(w, n, b);
                int64_t d = 0;
                for (int64_t k = b * bsz; k < (b + 1) * bsz && k < w->in; ++k)
                    d += ((int64_t)q[k] + 128) * (raw_u(w, n, k, flip) - z);
                acc = pw__qb4w_block_step(acc, (int32_t)d, pw__qb4w_scale_at(w, n, b));
            }
            const float v = pw__qb4w_finish(acc, h->neg_zp, fsum, h->scale, bias ? bias[n] : 0.0f, min, max);
            pw__int4_store(y, m * ldy + n, f16, v);
        }
    }
}

void pw__qb4w_run_scalar(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    void *yout = f16 ? (void *)c->y16 : (void *)c->y;
    const int32_t nr = d->nr, kr = d->kr, half = kr / 2, bsz = d->group;
    const int sr2 = d->sr == 2;
    const int64_t nb = pw__qb4w_blocks_of(d);
    const uint64_t fsum_at = pw__qb4w_fsum_offset(d), bias_at = pw__qb4w_bias_offset(d);
    for (int64_t t0 = n0; t0 < n1; t0 += nr) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / nr) * d->tile_bytes;
        const int32_t cols = n1 - t0 < nr ? (int32_t)(n1 - t0) : nr;
        for (int64_t m = m0; m < m1; ++m) {
            const uint8_t *row = c->xq + (size_t)m * c->xq_row_bytes;
            const pw__qd8_header *h = pw__qd8_hdr(row);
            const int8_t *q = pw__qd8_q(row);
            for (int32_t ch = 0; ch < cols; ++ch) {
                float acc = 0.0f;
                for (int64_t b = 0; b < nb; ++b) {
                    const pw__qb4w_at at = pw__qb4w_block_at(d, b);
                    const int32_t z = tile[at.zero + (uint64_t)ch];
                    const int64_t chunks = pw__qb4w_block_values(d, b) / kr;
                    /* |sum| <= 256 * 255 * 15: int32 */
                    int32_t part = 0;
                    for (int64_t jj = 0; jj < chunks; ++jj) {
                        const uint8_t *w =
                            tile + at.data + ((uint64_t)jj * (uint64_t)nr + (uint64_t)ch) * (uint64_t)half;
                        const int8_t *a = q + b * bsz + jj * kr;
                        for (int32_t i = 0; i < half; ++i) {
                            const int32_t lo = (w[i] & 15) - z, hi = (w[i] >> 4) - z;
                            part += sr2 ? lo * (a[i] + 128) + hi * (a[i + half] + 128)
                                        : lo * (a[2 * i] + 128) + hi * (a[2 * i + 1] + 128);
                        }
                    }
                    acc = pw__qb4w_block_step(acc, part, pw__rd_f32(tile + at.scale + 4u * (uint64_t)ch));
                }
                const float v = pw__qb4w_finish(acc, h->neg_zp, pw__rd_f32(tile + fsum_at + 4u * (uint64_t)ch),
                                                h->scale, pw__rd_f32(tile + bias_at + 4u * (uint64_t)ch),
                                                c->min, c->max);
                pw__int4_store(yout, m * c->ldy + t0 + ch, f16, v);
            }
        }
    }
}

/* One portable descriptor per family, so that every packer is exercised on every machine
 * and each family has a kernel at the scalar level. */
#define PW__QB4W_SCALAR(NR, KR, SR)                                                         \
    const pw__kernel pw__k_qb4w_n##NR##k##KR##s##SR##_scalar = PW__QB4W_KERNEL(             \
        NR, KR, SR, "scalar", 0, pw__qb4w_run_scalar, PW__PRIO_SCALAR, 1, 0);

PW__QB4W_SCALAR(16, 8, 2)
PW__QB4W_SCALAR(8, 8, 2)
PW__QB4W_SCALAR(4, 16, 2)
