/*
 * The QB4W packer and its unpacker (layout in kernel/qb4w.h) and the raw
 * form's helpers. One packer serves every family: nr, kr and sr come from the
 * kernel descriptor and B from the weights, so a packed buffer and the kernel
 * that reads it cannot disagree.
 */
#include "kernel/qb4w.h"

#include "format/blocks.h"

#include <inttypes.h>
#include <string.h>

pw_status pw__qb4w_raw_sizes(pw_context *ctx, const pw_qb4w_weights *w, uint64_t *data_bytes,
                             uint64_t *scale_count, uint64_t *zero_bytes) {
    const int transposed = (w->flags & PW_QB4W_TRANSPOSED) != 0;
    const uint64_t rows = (uint64_t)(transposed ? w->in : w->out);
    const uint64_t cols = (uint64_t)(transposed ? w->out : w->in);
    const uint64_t nb = (uint64_t)pw_qb4w_blocks(w);
    const uint64_t zrow = w->zero_kind == PW_QB4W_ZERO_U4 ? (nb + 1) / 2
                          : w->zero_kind == PW_QB4W_ZERO_U8 ? nb : 0;
    /* No C object is larger than PTRDIFF_MAX bytes: an array that would be is refused
     * before anything is read (the biases' N floats too). */
    const uint64_t most = (uint64_t)PTRDIFF_MAX;
    uint64_t sbytes, bbytes;
    PW__FAIL_IF(pw__mul_overflow_u64(rows, cols / 2 + (cols & 1), data_bytes) || *data_bytes > most ||
                    pw__mul_overflow_u64((uint64_t)w->out, nb, scale_count) ||
                    pw__mul_overflow_u64(*scale_count, 4, &sbytes) || sbytes > most ||
                    pw__mul_overflow_u64((uint64_t)w->out, 4, &bbytes) || bbytes > most ||
                    pw__mul_overflow_u64((uint64_t)w->out, zrow, zero_bytes) || *zero_bytes > most,
                ctx, PW_ERR_OVERFLOW, "QB4W weights '%s': %" PRId64 " x %" PRId64 " in blocks of %d overflow",
                w->name ? w->name : "(unnamed)", w->out, w->in, (int)w->block_size);
    return PW_OK;
}

int pw__qb4w_zero_at(const pw_qb4w_weights *w, int64_t n, int64_t b) {
    const int64_t nb = pw_qb4w_blocks(w);
    switch (w->zero_kind) {
    case PW_QB4W_ZERO_U4: return (w->zero_points[n * ((nb + 1) / 2) + b / 2] >> ((b & 1) * 4)) & 15;
    case PW_QB4W_ZERO_U8: return w->zero_points[n * nb + b];
    default: return 8; /* CONST: 8 as given; 0 is signed nibbles, flipped to u = v + 8 */
    }
}

float pw__qb4w_scale_at(const pw_qb4w_weights *w, int64_t n, int64_t b) {
    const int64_t at = n * pw_qb4w_blocks(w) + b;
    switch (w->scale_type) {
    case PW_DTYPE_F16: return pw__f16_to_f32(((const uint16_t *)w->scales)[at]);
    case PW_DTYPE_BF16: return pw__bf16_to_f32(((const uint16_t *)w->scales)[at]);
    default: return ((const float *)w->scales)[at];
    }
}

pw_status pw__qb4w_pack_plan(pw_context *ctx, const char *family, int32_t nr, int32_t kr, int32_t sr,
                             int32_t block, int64_t n, int64_t k, pw__pack_desc *d) {
    PW__FAIL_IF(n < 1 || k < 1, ctx, PW_ERR_SHAPE,
                "QB4W pack: N = %" PRId64 " and K = %" PRId64 " must both be >= 1", n, k);
    PW__FAIL_IF(block < PW__QB4W_MIN_B || block > PW__QB4W_MAX_B || (block & (block - 1)) != 0, ctx,
                PW_ERR_INVALID_ARGUMENT, "QB4W pack: block size %d is not a power of two in %d .. %d",
                (int)block, PW__QB4W_MIN_B, PW__QB4W_MAX_B);
    /* Chunks tile a block (and the QD8 padding) and hold whole bytes per sub-block. */
    /* nr divides 64: a record of 64 / nr blocks holds whole cache lines (kernel/qb4w.h) */
    PW__FAIL_IF(nr < 4 || nr > 64 || 64 % nr != 0 || kr < 2 || PW__QB4W_MIN_B % kr != 0 ||
                    (sr != 1 && sr != 2) || (sr == 2 && kr % 4 != 0),
                ctx, PW_ERR_INVALID_ARGUMENT, "QB4W pack: unsupported tile nr=%d kr=%d sr=%d",
                (int)nr, (int)kr, (int)sr);
    PW__FAIL_IF(k > (INT64_C(1) << 40), ctx, PW_ERR_OVERFLOW, "QB4W pack: K = %" PRId64 " is too large", k);
    memset(d, 0, sizeof *d);
    d->family = family;
    d->kind = PW_WEIGHT_QB4W;
    d->format = PW_FORMAT_COUNT;
    d->nr = nr;
    d->kr = kr;
    d->sr = sr;
    d->group = block;
    d->version = PW__QB4W_PACK_VERSION;
    d->out = n;
    d->in = k;
    const int64_t nb = (k + block - 1) / block;
    d->in_padded = nb * block;
    d->tiles = n / nr + (n % nr != 0);
    uint64_t data, meta, tile;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)d->in_padded, (uint64_t)nr, &data) ||
                    pw__mul_overflow_u64((uint64_t)nb, 5u * (uint64_t)nr, &meta) ||
                    pw__add_overflow_u64(data / 2, meta, &tile) ||
                    pw__add_overflow_u64(tile, 8u * (uint64_t)nr + 63u, &tile) ||
                    pw__mul_overflow_u64(tile / 64u * 64u, (uint64_t)d->tiles, &d->bytes) ||
                    d->bytes > SIZE_MAX,
                ctx, PW_ERR_OVERFLOW, "QB4W pack: %" PRId64 " x %" PRId64 " weights in tiles of %d overflow",
                n, k, (int)nr);
    d->tile_bytes = tile / 64u * 64u;
    return PW_OK;
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f32(uint8_t *p, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    put_u32(p, v);
}

void pw__qb4w_pack(const pw__pack_desc *d, const pw__qb4w_source *src, int64_t n0, int64_t n1,
                   uint8_t *dst) {
    const pw_qb4w_weights *w = src->w;
    const int32_t nr = d->nr, kr = d->kr, sr = d->sr, half = kr / 2, bsz = d->group;
    const int64_t k = d->in, nb = pw__qb4w_blocks_of(d);
    const int flip = w->zero_kind == PW_QB4W_ZERO_CONST && w->zero_point == 0 ? 8 : 0;
    const uint64_t fsum_at = pw__qb4w_fsum_offset(d), bias_at = pw__qb4w_bias_offset(d);
    for (int64_t t0 = n0; t0 < n1; t0 += nr) {
        uint8_t *tile = dst + (uint64_t)(t0 / nr) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int32_t c = 0; c < nr && t0 + c < d->out; ++c) {
            const int64_t n = t0 + c;
            float fsum = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                const int z = pw__qb4w_zero_at(w, n, b);
                int32_t wsum = 0;
                uint8_t v[PW__QB4W_MAX_B];
                for (int32_t i = 0; i < bsz; ++i) {
                    const int64_t kk = b * bsz + i;
                    v[i] = (uint8_t)(kk < k ? pw__qb4w_nibble(src->nk, k, n, kk, flip) : z);
                    wsum += v[i] - z;
                }
                for (int32_t j = 0; j < bsz / kr; ++j) {
                    uint8_t *out = tile + pw__qb4w_data_offset(d, b) +
                                   ((uint64_t)j * (uint64_t)nr + (uint64_t)c) * (uint64_t)half;
                    const uint8_t *vv = v + j * kr;
                    for (int32_t i = 0; i < half; ++i)
                        out[i] = sr == 1 ? (uint8_t)(vv[2 * i] | vv[2 * i + 1] << 4)
                                         : (uint8_t)(vv[i] | vv[i + half] << 4);
                }
                const float s = pw__qb4w_scale_at(w, n, b);
                fsum = fmaf((float)wsum, s, fsum);
                put_f32(tile + pw__qb4w_scale_offset(d, b) + 4u * (uint64_t)c, s);
                tile[pw__qb4w_zero_offset(d, b) + (uint64_t)c] = (uint8_t)z;
            }
            put_f32(tile + fsum_at + 4u * (uint64_t)c, fsum);
            put_f32(tile + bias_at + 4u * (uint64_t)c, src->bias ? src->bias[n] : 0.0f);
        }
    }
}

void pw__qb4w_unpack(const pw__pack_desc *d, const uint8_t *packed, const pw_qb4w_weights *like,
                     uint8_t *data, void *scales, uint8_t *zero_points, float *bias) {
    const int32_t nr = d->nr, kr = d->kr, sr = d->sr;
    const int64_t k = d->in, stride = (k + 1) / 2, nb = pw__qb4w_blocks_of(d);
    const int flip = like->zero_kind == PW_QB4W_ZERO_CONST && like->zero_point == 0 ? 8 : 0;
    const uint64_t bias_at = pw__qb4w_bias_offset(d);
    const int64_t zrow = like->zero_kind == PW_QB4W_ZERO_U4 ? (nb + 1) / 2 : nb;
    for (int64_t n = 0; n < d->out; ++n) {
        const uint8_t *tile = packed + (uint64_t)(n / nr) * d->tile_bytes;
        const int32_t c = (int32_t)(n % nr);
        uint8_t *row = data + n * stride;
        memset(row, 0, (size_t)stride);
        for (int64_t kk = 0; kk < k; ++kk) {
            int32_t byte;
            int hi;
            pw__qc4w_slot(kr, sr, (int32_t)(kk % kr), &byte, &hi);
            const int64_t b = kk / d->group, j = kk % d->group / kr;
            const uint64_t at = pw__qb4w_data_offset(d, b) +
                                ((uint64_t)j * (uint64_t)nr + (uint64_t)c) * (uint64_t)(kr / 2) +
                                (uint64_t)byte;
            const uint8_t nib = (uint8_t)(((tile[at] >> (4 * hi)) & 15) ^ flip);
            row[kk / 2] |= (uint8_t)(nib << ((kk & 1) * 4));
        }
        if (zero_points != NULL && like->zero_kind != PW_QB4W_ZERO_CONST) {
            uint8_t *zr = zero_points + n * zrow;
            if (like->zero_kind == PW_QB4W_ZERO_U4) memset(zr, 0, (size_t)zrow);
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t z = tile[pw__qb4w_zero_offset(d, b) + (uint64_t)c];
                if (like->zero_kind == PW_QB4W_ZERO_U4)
                    zr[b / 2] |= (uint8_t)(z << ((b & 1) * 4));
                else
                    zr[b] = z;
            }
        }
        for (int64_t b = 0; b < nb && scales != NULL; ++b) {
            const float s = pw__rd_f32(tile + pw__qb4w_scale_offset(d, b) + 4u * (uint64_t)c);
            const int64_t at = n * nb + b;
            if (like->scale_type == PW_DTYPE_F16)
                ((uint16_t *)scales)[at] = pw__f32_to_f16(s);
            else if (like->scale_type == PW_DTYPE_BF16)
                ((uint16_t *)scales)[at] = pw__f32_to_bf16(s);
            else
                ((float *)scales)[at] = s;
        }
        if (bias) bias[n] = pw__rd_f32(tile + bias_at + 4u * (uint64_t)c);
    }
}

pw_status pw__qb4w_plan(pw_context *ctx, const pw__kernel *k, pw_format format, int64_t out,
                        int64_t in, pw__pack_desc *desc) {
    (void)format;
    /* B arrives in desc->group (kernel.h: the plan's in-out field for QB4W). */
    return pw__qb4w_pack_plan(ctx, k->info.family, k->nr, k->kr, k->sr, desc->group, out, in, desc);
}

void pw__qb4w_pack_source(const pw__pack_desc *d, const pw__source *src, int64_t o0, int64_t o1,
                          uint8_t *dst) {
    /* dst is the tile of row o0; pw__qb4w_pack addresses tiles from the buffer's base */
    pw__qb4w_pack(d, src->qb4w, o0, o1, dst - (uint64_t)(o0 / d->nr) * d->tile_bytes);
}
