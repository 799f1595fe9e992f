/*
 * The QC4W packer and its unpacker (layout in qc4w/qc4w.h), and the
 * transposed source's nibble-by-nibble conversion. One packer serves every
 * family: nr, kr and sr come from the kernel descriptor, so a packed buffer
 * and the kernel that reads it cannot disagree.
 */
#include "kernel/qc4w.h"

#include <inttypes.h>
#include <string.h>

pw_status pw__qc4w_raw_bytes(pw_context *ctx, const pw_qc4w_weights *w, uint64_t *row_bytes,
                             uint64_t *bytes) {
    const int transposed = (w->flags & PW_QC4W_TRANSPOSED) != 0;
    const uint64_t rows = (uint64_t)(transposed ? w->in : w->out);
    const uint64_t cols = (uint64_t)(transposed ? w->out : w->in);
    *row_bytes = cols / 2 + (cols & 1);
    PW__FAIL_IF(pw__mul_overflow_u64(rows, *row_bytes, bytes) || *bytes > SIZE_MAX, ctx,
                PW_ERR_OVERFLOW, "QC4W weights '%s': %" PRIu64 " rows of %" PRIu64 " bytes overflow",
                w->name ? w->name : "(unnamed)", rows, *row_bytes);
    return PW_OK;
}

void pw__qc4w_transpose_rows(const uint8_t *src, int64_t k, int64_t n, int64_t n0, int64_t n1,
                             uint8_t *dst) {
    const int64_t src_stride = (n + 1) / 2, dst_stride = (k + 1) / 2;
    for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t nn = n0; nn < n1; ++nn) {
            const uint8_t source = src[kk * src_stride + nn / 2];
            const uint8_t value = (uint8_t)((source >> ((nn & 1) * 4)) & 0x0F);
            dst[nn * dst_stride + kk / 2] |= (uint8_t)(value << ((kk & 1) * 4));
        }
    }
}

pw_status pw__qc4w_pack_plan(pw_context *ctx, const char *family, int32_t nr, int32_t kr,
                             int32_t sr, int64_t n, int64_t k, pw__pack_desc *d) {
    PW__FAIL_IF(n < 1 || k < 1, ctx, PW_ERR_SHAPE,
                "QC4W pack: N = %" PRId64 " and K = %" PRId64 " must both be >= 1", n, k);
    /* Chunks must tile the padded K and hold whole bytes per sub-block. */
    PW__FAIL_IF(nr < 1 || kr < 2 || PW__QC4W_K_ALIGN % kr != 0 || (sr != 1 && sr != 2) ||
                    (sr == 2 && kr % 4 != 0),
                ctx, PW_ERR_INVALID_ARGUMENT, "QC4W pack: unsupported tile nr=%d kr=%d sr=%d",
                (int)nr, (int)kr, (int)sr);
    PW__FAIL_IF(k > INT64_MAX - PW__QC4W_K_ALIGN, ctx, PW_ERR_OVERFLOW, "QC4W pack: K overflows");
    memset(d, 0, sizeof *d);
    d->family = family;
    d->kind = PW_WEIGHT_QC4W;
    d->format = PW_FORMAT_COUNT;
    d->nr = nr;
    d->kr = kr;
    d->sr = sr;
    d->group = 0;
    d->version = PW__QC4W_PACK_VERSION;
    d->out = n;
    d->in = k;
    d->in_padded = (k + PW__QC4W_K_ALIGN - 1) / PW__QC4W_K_ALIGN * PW__QC4W_K_ALIGN;
    d->tiles = n / nr + (n % nr != 0);
    uint64_t data, tile;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)d->in_padded, (uint64_t)nr, &data) ||
                    pw__add_overflow_u64(data / 2, 12u * (uint64_t)nr, &tile) ||
                    pw__mul_overflow_u64(tile, (uint64_t)d->tiles, &d->bytes) ||
                    d->bytes > SIZE_MAX,
                ctx, PW_ERR_OVERFLOW,
                "QC4W pack: %" PRId64 " x %" PRId64 " weights in tiles of %d overflow", n, k,
                (int)nr);
    d->tile_bytes = tile;
    return PW_OK;
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_f32(uint8_t *p, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    put_u32(p, v);
}

static float get_f32(const uint8_t *p) {
    const uint32_t v = get_u32(p);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

void pw__qc4w_pack(const pw__pack_desc *d, const uint8_t *nk, int zp, const float *scale,
                   const float *bias, int64_t n0, int64_t n1, uint8_t *dst) {
    const int32_t nr = d->nr, kr = d->kr, sr = d->sr, half = kr / 2;
    const int64_t k = d->in, chunks = d->in_padded / kr, stride = (k + 1) / 2;
    const uint64_t sums = pw__qc4w_sums_offset(d);
    /* Signed nibble of a raw nibble: zp 8 flips the top bit (v - 8 in 4-bit two's complement). */
    const uint8_t flip = zp == 8 ? 8 : 0;
    for (int64_t t0 = n0; t0 < n1; t0 += nr) {
        uint8_t *tile = dst + (uint64_t)(t0 / nr) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int32_t c = 0; c < nr && t0 + c < d->out; ++c) {
            const int64_t n = t0 + c;
            const uint8_t *row = nk + n * stride;
            int32_t wsum = 0;
            for (int64_t j = 0; j < chunks; ++j) {
                uint8_t *out = tile + ((uint64_t)j * (uint64_t)nr + (uint64_t)c) * (uint64_t)half;
                if ((j + 1) * kr <= k) {
                    /* A whole chunk of whole bytes (kr is even): byte operations only. */
                    const uint8_t *src = row + j * kr / 2;
                    for (int32_t b = 0; b < half; ++b) {
                        const uint8_t v = src[b] ^ (uint8_t)(flip * 0x11);
                        wsum += ((v & 15) ^ 8) + ((v >> 4) ^ 8) - 16;
                    }
                    if (sr == 1) {
                        for (int32_t b = 0; b < half; ++b) out[b] = src[b] ^ (uint8_t)(flip * 0x11);
                    } else {
                        /* Byte b pairs values b and b + half, which sit in the same nibble
                         * position of source bytes b/2 and (b + half)/2 (half is even). */
                        for (int32_t b = 0; b < half; ++b) {
                            const int sh = (b & 1) * 4;
                            const uint8_t lo = (uint8_t)(((src[b / 2] >> sh) & 15) ^ flip);
                            const uint8_t hi = (uint8_t)(((src[(b + half) / 2] >> sh) & 15) ^ flip);
                            out[b] = (uint8_t)(lo | hi << 4);
                        }
                    }
                    continue;
                }
                /* The chunk holding K's end: k in [K, Kp) stays 0 (signed zero, adding
                 * nothing to the sum). */
                uint8_t v[PW__QC4W_K_ALIGN];
                for (int32_t i = 0; i < kr; ++i) {
                    const int64_t kk = j * kr + i;
                    v[i] = kk < k ? (uint8_t)(((row[kk / 2] >> ((kk & 1) * 4)) & 15) ^ flip) : 0;
                    wsum += (v[i] ^ 8) - 8;
                }
                for (int32_t b = 0; b < half; ++b)
                    out[b] = sr == 1 ? (uint8_t)(v[2 * b] | v[2 * b + 1] << 4)
                                     : (uint8_t)(v[b] | v[b + half] << 4);
            }
            put_u32(tile + sums + 4u * (uint64_t)c, (uint32_t)wsum);
            put_f32(tile + sums + 4u * (uint64_t)(nr + c), scale[n]);
            put_f32(tile + sums + 4u * (uint64_t)(2 * nr + c), bias ? bias[n] : 0.0f);
        }
    }
}

void pw__qc4w_unpack(const pw__pack_desc *d, const uint8_t *packed, int zp, uint8_t *nk,
                     float *scale, float *bias) {
    const int32_t nr = d->nr, kr = d->kr, sr = d->sr;
    const int64_t k = d->in, stride = (k + 1) / 2;
    const uint64_t sums = pw__qc4w_sums_offset(d);
    const uint8_t flip = zp == 8 ? 8 : 0;
    for (int64_t n = 0; n < d->out; ++n) {
        const uint8_t *tile = packed + (uint64_t)(n / nr) * d->tile_bytes;
        const int32_t c = (int32_t)(n % nr);
        uint8_t *row = nk + n * stride;
        memset(row, 0, (size_t)stride);
        for (int64_t kk = 0; kk < k; ++kk) {
            int32_t byte;
            int hi;
            pw__qc4w_slot(kr, sr, (int32_t)(kk % kr), &byte, &hi);
            const uint64_t at = ((uint64_t)(kk / kr) * (uint64_t)nr + (uint64_t)c) *
                                    (uint64_t)(kr / 2) + (uint64_t)byte;
            const uint8_t nib = (uint8_t)(((tile[at] >> (4 * hi)) & 15) ^ flip);
            row[kk / 2] |= (uint8_t)(nib << ((kk & 1) * 4));
        }
        if (scale) scale[n] = get_f32(tile + sums + 4u * (uint64_t)(nr + c));
        if (bias) bias[n] = get_f32(tile + sums + 4u * (uint64_t)(2 * nr + c));
    }
}

pw_status pw__qc4w_plan(pw_context *ctx, const pw__kernel *k, pw_format format, int64_t out,
                        int64_t in, pw__pack_desc *desc) {
    (void)format;
    PW__TRY(pw__qc4w_pack_plan(ctx, k->info.family, k->nr, k->kr, k->sr, out, in, desc));
    desc->sme_bytes = k->sme_bytes; /* SME families: the vector length the tile is for */
    return PW_OK;
}

void pw__qc4w_pack_source(const pw__pack_desc *d, const pw__source *src, int64_t o0, int64_t o1,
                          uint8_t *dst) {
    const pw__qc4w_source *q = src->qc4w;
    /* dst is the tile of row o0; pw__qc4w_pack addresses tiles from the buffer's base */
    pw__qc4w_pack(d, q->nk, q->zero_point, q->scale, q->bias, o0, o1,
                  dst - (uint64_t)(o0 / d->nr) * d->tile_bytes);
}
