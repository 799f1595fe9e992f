/*
 * The QC4W oracle (unpacked: plain loops over the raw weights) and the
 * portable packed kernel, generic over the family's (nr, kr, sr). Both follow
 * the kernel contract of kernel/qc4w.h to the bit; the oracle computes its
 * integer sum as sum (q - zp) * w in int64, independently of the packer's
 * weight sums.
 */
#include "format/blocks.h"
#include "kernel/qc4w.h"

#include <string.h>


void pw__qc4w_reference(const pw_qc4w_weights *w, const uint8_t *lhs, size_t lhs_row_bytes,
                        int64_t batch, float min, float max, int f16, void *y, int64_t ldy,
                        int8_t *row) {
    for (int64_t n = 0; n < w->out; ++n) {
        for (int64_t k = 0; k < w->in; ++k) row[k] = (int8_t)pw__qc4w_raw_get(w, n, k);
        for (int64_t m = 0; m < batch; ++m) {
            const uint8_t *a = lhs + (size_t)m * lhs_row_bytes;
            const pw__qd8_header *h = pw__qd8_hdr(a);
            const int8_t *q = pw__qd8_q(a);
            const int64_t zp = -(int64_t)h->neg_zp;
            /* int32 over blocks of 2^16 terms (each |term| <= 255 * 8), int64 across them. */
            int64_t isum = 0;
            for (int64_t k0 = 0; k0 < w->in; k0 += 65536) {
                const int64_t k1 = w->in - k0 < 65536 ? w->in : k0 + 65536;
                int32_t part = 0;
                for (int64_t k = k0; k < k1; ++k) part += ((int32_t)q[k] - (int32_t)zp) * row[k];
                isum += part;
            }
            const float v = pw__qc4w_finish(isum, h->scale, w->scale[n], w->bias ? w->bias[n] : 0.0f,
                                            min, max);
            pw__int4_store(y, m * ldy + n, f16, v);
        }
    }
}

void pw__qc4w_run_scalar(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    void *yout = f16 ? (void *)c->y16 : (void *)c->y;
    const int32_t nr = d->nr, kr = d->kr, half = kr / 2;
    const int sr2 = d->sr == 2;
    const int64_t chunks = d->in_padded / kr;
    const uint64_t sums = pw__qc4w_sums_offset(d);
    for (int64_t t0 = n0; t0 < n1; t0 += nr) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / nr) * d->tile_bytes;
        const int32_t cols = n1 - t0 < nr ? (int32_t)(n1 - t0) : nr;
        for (int64_t m = m0; m < m1; ++m) {
            const uint8_t *row = c->xq + (size_t)m * c->xq_row_bytes;
            const pw__qd8_header *h = pw__qd8_hdr(row);
            const int8_t *q = pw__qd8_q(row);
            for (int32_t ch = 0; ch < cols; ++ch) {
                /* A chunk's sum fits int32 (kr <= 32 terms of |q * w| <= 1024). */
                int64_t acc = 0;
                for (int64_t j = 0; j < chunks; ++j) {
                    const uint8_t *b = tile + ((uint64_t)j * (uint64_t)nr + (uint64_t)ch) * (uint64_t)half;
                    const int8_t *a = q + j * kr;
                    int32_t part = 0;
                    if (sr2) {
                        for (int32_t i = 0; i < half; ++i)
                            part += (((b[i] & 15) ^ 8) - 8) * a[i] + (((b[i] >> 4) ^ 8) - 8) * a[i + half];
                    } else {
                        for (int32_t i = 0; i < half; ++i)
                            part += (((b[i] & 15) ^ 8) - 8) * a[2 * i] + (((b[i] >> 4) ^ 8) - 8) * a[2 * i + 1];
                    }
                    acc += part;
                }
                const int64_t isum = acc + (int64_t)h->neg_zp * pw__rd_i32(tile + sums + 4u * (uint64_t)ch);
                const float v = pw__qc4w_finish(isum, h->scale, pw__rd_f32(tile + sums + 4u * (uint64_t)(nr + ch)),
                                                pw__rd_f32(tile + sums + 4u * (uint64_t)(2 * nr + ch)),
                                                c->min, c->max);
                pw__int4_store(yout, m * c->ldy + t0 + ch, f16, v);
            }
        }
    }
}

/* One portable descriptor per family, so that every packer is exercised on
 * every machine and each family has a kernel at the scalar level. */
#define PW__QC4W_SCALAR(NR, KR, SR)                                                         \
    const pw__kernel pw__k_qc4w_n##NR##k##KR##s##SR##_scalar = PW__QC4W_KERNEL(             \
        NR, KR, SR, "scalar", 0, pw__qc4w_run_scalar, PW__PRIO_SCALAR, 1, INT64_MAX / 2048, 0);

PW__QC4W_SCALAR(16, 8, 2)
PW__QC4W_SCALAR(8, 8, 2)
PW__QC4W_SCALAR(4, 16, 2)
/* The spec's own tile for KleidiAI's SME2 kernel (kr = 4, sr = 1: the raw pairing). */
PW__QC4W_SCALAR(8, 4, 1)
