/*
 * Packer of the i8g family (layout in i8g.h) and the block splitters that
 * re-express each integer format as int8 values with per-group scale and
 * min. The splitters follow the byte layouts documented in format/blocks.h;
 * scale and min are computed exactly as the decoders compute them, so
 * scale * q + min reproduces the decoded value.
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "format/format_internal.h"
#include "kernel/i8g.h"

#include <inttypes.h>
#include <string.h>

int pw__i8g_group(pw_format f, int *has_min, pw_activation *act) {
    int g = 0, m = 0;
    switch (f) {
    case PW_FORMAT_Q4_0: case PW_FORMAT_Q5_0: case PW_FORMAT_Q8_0: case PW_FORMAT_IQ4_NL:
    case PW_FORMAT_TQ1_0: case PW_FORMAT_TQ2_0:
        g = 32;
        break;
    case PW_FORMAT_Q4_1: case PW_FORMAT_Q5_1: case PW_FORMAT_Q4_K: case PW_FORMAT_Q5_K:
        g = 32;
        m = 1;
        break;
    case PW_FORMAT_Q3_K: case PW_FORMAT_Q6_K:
        g = 16;
        break;
    case PW_FORMAT_Q2_K:
        g = 16;
        m = 1;
        break;
    default:
        return 0;
    }
    if (has_min) *has_min = m;
    if (act) *act = g == 32 ? PW_ACT_Q8_32 : PW_ACT_Q8_256;
    return g;
}

static int nib32(const uint8_t *qs, int e) { return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4; }

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 2-bit field of element e in the Q2_K/Q3_K/TQ2_0 layout. */
static int two_bits(const uint8_t *qs, int e) {
    return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

static int tq1_trit(const pw__block_tq1_0 *b, int e) {
    uint8_t byte;
    int k;
    if (e < 160) {
        k = e / 32;
        byte = b->qs[e % 32];
    } else if (e < 240) {
        k = (e - 160) / 16;
        byte = b->qs[32 + (e - 160) % 16];
    } else {
        k = (e - 240) / 4;
        byte = b->qh[(e - 240) % 4];
    }
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const uint8_t v = (uint8_t)(byte * pow3[k]);
    return (int)(((uint16_t)v * 3) >> 8);
}

/* Q4_K and Q5_K: eight 32-value sub-blocks with 6-bit scale and min; qh (Q5_K only)
 * holds bit 4 of every value. */
static void k4_split(uint16_t d16, uint16_t dmin16, const uint8_t *scales, const uint8_t *qs,
                     const uint8_t *qh, int8_t *q, float *s, float *m) {
    const float d = pw__f16_to_f32(d16), dmin = pw__f16_to_f32(dmin16);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, mn;
        pw__k4_scale_min(j, scales, &sc, &mn);
        s[j] = d * (float)sc;
        m[j] = -(dmin * (float)mn);
        for (int l = 0; l < 32; ++l) {
            const uint8_t byte = qs[32 * (j / 2) + l];
            const int low = j % 2 ? byte >> 4 : byte & 15;
            const int high = qh ? (qh[l] >> j) & 1 : 0;
            q[32 * j + l] = (int8_t)(low + 16 * high);
        }
    }
}

void pw__i8g_split(pw_format f, const void *block, int8_t *q, float *s, float *m) {
    /* Read a copy: the block may sit at any address (a GGUF with alignment 1), and its
     * struct's uint16_t fields need 2-byte alignment. The largest block is Q8_K's. */
    union {
        pw__block_q8_K largest;
        uint8_t bytes[sizeof(pw__block_q8_K)];
    } copy;
    const pw__format_traits *t = pw__format(f);
    if (t == NULL || (size_t)t->info.block_bytes > sizeof copy) return;
    memcpy(copy.bytes, block, (size_t)t->info.block_bytes);
    const void *blk = copy.bytes;
    switch (f) {
    case PW_FORMAT_Q4_0: {
        const pw__block_q4_0 *b = blk;
        for (int e = 0; e < 32; ++e) q[e] = (int8_t)(nib32(b->qs, e) - 8);
        s[0] = pw__f16_to_f32(b->d);
        break;
    }
    case PW_FORMAT_Q4_1: {
        const pw__block_q4_1 *b = blk;
        for (int e = 0; e < 32; ++e) q[e] = (int8_t)nib32(b->qs, e);
        s[0] = pw__f16_to_f32(b->d);
        m[0] = pw__f16_to_f32(b->m);
        break;
    }
    case PW_FORMAT_Q5_0: {
        const pw__block_q5_0 *b = blk;
        const uint32_t qh = le32(b->qh);
        for (int e = 0; e < 32; ++e) q[e] = (int8_t)((nib32(b->qs, e) | (int)((qh >> e) & 1) << 4) - 16);
        s[0] = pw__f16_to_f32(b->d);
        break;
    }
    case PW_FORMAT_Q5_1: {
        const pw__block_q5_1 *b = blk;
        const uint32_t qh = le32(b->qh);
        for (int e = 0; e < 32; ++e) q[e] = (int8_t)(nib32(b->qs, e) | (int)((qh >> e) & 1) << 4);
        s[0] = pw__f16_to_f32(b->d);
        m[0] = pw__f16_to_f32(b->m);
        break;
    }
    case PW_FORMAT_Q8_0: {
        const pw__block_q8_0 *b = blk;
        memcpy(q, b->qs, 32);
        s[0] = pw__f16_to_f32(b->d);
        break;
    }
    case PW_FORMAT_IQ4_NL: {
        const pw__block_iq4_nl *b = blk;
        for (int e = 0; e < 32; ++e) q[e] = pw__iq4nl_values[nib32(b->qs, e)];
        s[0] = pw__f16_to_f32(b->d);
        break;
    }
    case PW_FORMAT_Q2_K: {
        const pw__block_q2_K *b = blk;
        const float d = pw__f16_to_f32(b->d), dmin = pw__f16_to_f32(b->dmin);
        for (int e = 0; e < 256; ++e) q[e] = (int8_t)two_bits(b->qs, e);
        for (int j = 0; j < 16; ++j) {
            s[j] = d * (float)(b->scales[j] & 0xF);
            m[j] = -(dmin * (float)(b->scales[j] >> 4));
        }
        break;
    }
    case PW_FORMAT_Q3_K: {
        const pw__block_q3_K *b = blk;
        const float d = pw__f16_to_f32(b->d);
        int8_t sc[16];
        pw__q3k_unpack_scales(b->scales, sc);
        for (int e = 0; e < 256; ++e) {
            const int high = (b->hmask[e % 32] >> (e / 32)) & 1;
            q[e] = (int8_t)(two_bits(b->qs, e) - (high ? 0 : 4));
        }
        for (int j = 0; j < 16; ++j) s[j] = d * (float)(sc[j] - 32);
        break;
    }
    case PW_FORMAT_Q4_K: {
        const pw__block_q4_K *b = blk;
        k4_split(b->d, b->dmin, b->scales, b->qs, NULL, q, s, m);
        break;
    }
    case PW_FORMAT_Q5_K: {
        const pw__block_q5_K *b = blk;
        k4_split(b->d, b->dmin, b->scales, b->qs, b->qh, q, s, m);
        break;
    }
    case PW_FORMAT_Q6_K: {
        const pw__block_q6_K *b = blk;
        const float d = pw__f16_to_f32(b->d);
        for (int e = 0; e < 256; ++e) {
            const int h = e / 128, l = e % 32, g = (e % 128) / 32;
            const uint8_t lb = b->ql[64 * h + 32 * (g % 2) + l];
            const int low4 = g < 2 ? lb & 15 : lb >> 4;
            const int high2 = (b->qh[32 * h + l] >> (2 * g)) & 3;
            q[e] = (int8_t)((low4 | high2 << 4) - 32);
        }
        for (int j = 0; j < 16; ++j) s[j] = d * (float)b->scales[j];
        break;
    }
    case PW_FORMAT_TQ1_0: {
        const pw__block_tq1_0 *b = blk;
        for (int e = 0; e < 256; ++e) q[e] = (int8_t)(tq1_trit(b, e) - 1);
        for (int j = 0; j < 8; ++j) s[j] = pw__f16_to_f32(b->d);
        break;
    }
    case PW_FORMAT_TQ2_0: {
        const pw__block_tq2_0 *b = blk;
        for (int e = 0; e < 256; ++e) q[e] = (int8_t)(two_bits(b->qs, e) - 1);
        for (int j = 0; j < 8; ++j) s[j] = pw__f16_to_f32(b->d);
        break;
    }
    default:
        break;
    }
}

pw_status pw__i8g_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                            pw__pack_desc *d) {
    int has_min = 0;
    const int g = pw__i8g_group(format, &has_min, NULL);
    PW__FAIL_IF(g == 0, ctx, PW_ERR_UNSUPPORTED, "the i8g family has no form for %s",
                pw_format_get(format) ? pw_format_get(format)->name : "this format");
    PW__FAIL_IF(out < 1 || in < 1 || in % pw_format_get(format)->block_size != 0, ctx, PW_ERR_SHAPE,
                "i8g pack: weight [%" PRId64 ", %" PRId64 "] is not whole %s blocks", out, in,
                pw_format_get(format)->name);
    memset(d, 0, sizeof *d);
    d->family = g == 32 ? "i8g32x16k4" : "i8g16x16k4";
    d->format = format;
    d->nr = PW__I8G_NR;
    d->kr = PW__I8G_KR;
    d->sr = 1;
    d->group = g;
    d->version = PW__I8G_VERSION;
    d->out = out;
    d->in = in;
    d->in_padded = in; /* every i8g format's block is a whole number of groups */
    d->tiles = (out + PW__I8G_NR - 1) / PW__I8G_NR;
    uint64_t tb;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)(in / g), pw__i8g_group_bytes(g, has_min), &tb) ||
                    pw__mul_overflow_u64(tb, (uint64_t)d->tiles, &d->bytes),
                ctx, PW_ERR_OVERFLOW, "i8g pack: packed size overflows");
    d->tile_bytes = tb;
    return PW_OK;
}

void pw__i8g_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1,
                  uint8_t *dst) {
    int has_min = 0;
    const int g = pw__i8g_group(d->format, &has_min, NULL);
    const pw__format_traits *t = pw__format(d->format);
    const int bs = t->info.block_size;
    const int64_t bpr = d->in / bs;
    const int groups_per_block = bs / g;
    const uint64_t rec = pw__i8g_group_bytes(g, has_min);
    int8_t q[256];
    float s[16], m[16];
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8G_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__I8G_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__I8G_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < bpr; ++b) {
                memset(m, 0, sizeof m);
                pw__i8g_split(d->format, pw_view_block_ptr(w, t0 + r, b), q, s, m);
                for (int j = 0; j < groups_per_block; ++j) {
                    uint8_t *gr = tile + (uint64_t)(b * groups_per_block + j) * rec;
                    int32_t sum = 0;
                    for (int k = 0; k < g; ++k) {
                        const int8_t v = q[j * g + k];
                        gr[(k / 4) * 64 + r * 4 + k % 4] = (uint8_t)v;
                        sum += v;
                    }
                    const int32_t corr = -128 * sum;
                    uint8_t *meta = gr + (uint64_t)g * PW__I8G_NR;
                    memcpy(meta + 4 * r, &corr, 4);
                    memcpy(meta + 64 + 4 * r, &s[j], 4);
                    if (has_min) memcpy(meta + 128 + 4 * r, &m[j], 4);
                }
            }
        }
    }
}
