/*
 * Decoders of the 256-element super-block formats: the K-quants, Q8_K and
 * the ternary TQ1_0/TQ2_0.
 *
 * Bit-exact with ggml's dequantize_row_*: the sub-block scale is formed
 * first (d * scale, dmin * min, each a rounded float multiply) and then
 * applied as ggml does, e.g. Q4_K is (d*sc)*q - (dmin*m) and Q6_K is
 * (d*sc)*q. The library is compiled with -ffp-contract=off so none of these
 * becomes a fused multiply-add. Each loop runs over one sub-block with its
 * scale hoisted, which keeps it vectorizable.
 */
#include "format/blocks.h"
#include "format/format_internal.h"

#include <string.h>

void pw__decode_q2_K(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q2_K)) {
        pw__block_q2_K b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        const float dmin = pw__f16_to_f32(b.dmin);
        /* 16-element sub-block s: half h = s/8 uses qs[32h .. 32h+32), shift
         * 2*((s%8)/2), bytes l + 16*(s%2). */
        for (int s = 0; s < PW__QK_K / 16; ++s, dst += 16) {
            const uint8_t *q = b.qs + 32 * (s / 8) + 16 * (s % 2);
            const int shift = 2 * ((s % 8) / 2);
            const float dl = d * (float)(b.scales[s] & 0xF);
            const float ml = dmin * (float)(b.scales[s] >> 4);
            for (int l = 0; l < 16; ++l) dst[l] = dl * (float)((q[l] >> shift) & 3) - ml;
        }
    }
}

void pw__decode_q3_K(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q3_K)) {
        pw__block_q3_K b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        int8_t scales[16];
        pw__q3k_unpack_scales(b.scales, scales);
        for (int s = 0; s < PW__QK_K / 16; ++s, dst += 16) {
            const int offset = 16 * (s % 2); /* element e%32 of the first */
            const uint8_t *q = b.qs + 32 * (s / 8) + offset;
            const uint8_t *hm = b.hmask + offset;
            const int shift = 2 * ((s % 8) / 2);
            const uint8_t bit = (uint8_t)(1u << (s / 2)); /* e/32 */
            const float dl = d * (float)(scales[s] - 32);
            for (int l = 0; l < 16; ++l) {
                const int v = ((q[l] >> shift) & 3) - ((hm[l] & bit) ? 0 : 4);
                dst[l] = dl * (float)v;
            }
        }
    }
}

/* The eight sub-block factors of Q4_K/Q5_K: d * scale and dmin * min, each
 * one rounded multiply as in ggml. */
static inline void pw__k4_sub_scales(const uint16_t *d16, const uint16_t *dmin16,
                                     const uint8_t packed[12], float dl[8], float ml[8]) {
    const float d = pw__f16_to_f32(*d16), dmin = pw__f16_to_f32(*dmin16);
    for (int s = 0; s < 8; ++s) {
        uint8_t sc, m;
        pw__k4_scale_min(s, packed, &sc, &m);
        dl[s] = d * (float)sc;
        ml[s] = dmin * (float)m;
    }
}

void pw__decode_q4_K(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q4_K)) {
        pw__block_q4_K b;
        memcpy(&b, p, sizeof b);
        float dl[8], ml[8];
        pw__k4_sub_scales(&b.d, &b.dmin, b.scales, dl, ml);
        /* 64-element chunk c: low nibbles are sub-block 2c, high 2c+1. */
        for (int c = 0; c < 4; ++c, dst += 64) {
            const uint8_t *q = b.qs + 32 * c;
            for (int l = 0; l < 32; ++l) {
                dst[l] = dl[2 * c] * (float)(q[l] & 0xF) - ml[2 * c];
                dst[l + 32] = dl[2 * c + 1] * (float)(q[l] >> 4) - ml[2 * c + 1];
            }
        }
    }
}

void pw__decode_q5_K(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q5_K)) {
        pw__block_q5_K b;
        memcpy(&b, p, sizeof b);
        float dl[8], ml[8];
        pw__k4_sub_scales(&b.d, &b.dmin, b.scales, dl, ml);
        for (int c = 0; c < 4; ++c, dst += 64) {
            const uint8_t *q = b.qs + 32 * c;
            const uint8_t lo_bit = (uint8_t)(1u << (2 * c)), hi_bit = (uint8_t)(2u << (2 * c));
            for (int l = 0; l < 32; ++l) {
                const int v0 = (q[l] & 0xF) + ((b.qh[l] & lo_bit) ? 16 : 0);
                const int v1 = (q[l] >> 4) + ((b.qh[l] & hi_bit) ? 16 : 0);
                dst[l] = dl[2 * c] * (float)v0 - ml[2 * c];
                dst[l + 32] = dl[2 * c + 1] * (float)v1 - ml[2 * c + 1];
            }
        }
    }
}

void pw__decode_q6_K(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q6_K)) {
        pw__block_q6_K b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        for (int s = 0; s < PW__QK_K / 16; ++s, dst += 16) {
            /* Sub-block s: half h = s/8, group g = (s%8)/2, l from 16*(s%2). */
            const int h = s / 8, g = (s % 8) / 2, l0 = 16 * (s % 2);
            const uint8_t *ql = b.ql + 64 * h + 32 * (g % 2) + l0;
            const uint8_t *qh = b.qh + 32 * h + l0;
            const int lshift = 4 * (g / 2), hshift = 2 * g;
            const float dl = d * (float)b.scales[s];
            for (int l = 0; l < 16; ++l) {
                const int v = (((ql[l] >> lshift) & 0xF) | (((qh[l] >> hshift) & 3) << 4)) - 32;
                dst[l] = dl * (float)v;
            }
        }
    }
}

void pw__decode_q8_K(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q8_K), dst += PW__QK_K) {
        float d;
        int8_t qs[PW__QK_K];
        memcpy(&d, p + offsetof(pw__block_q8_K, d), sizeof d);
        memcpy(qs, p + offsetof(pw__block_q8_K, qs), sizeof qs);
        for (int j = 0; j < PW__QK_K; ++j) dst[j] = d * (float)qs[j];
    }
}

/* Trit k (0 = most significant) of a TQ1_0 byte, as 0, 1 or 2. */
static inline int pw__tq1_trit(uint8_t byte, int k) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const uint8_t shifted = (uint8_t)(byte * pow3[k]);
    return (int)(((uint16_t)shifted * 3u) >> 8);
}

void pw__decode_tq1_0(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_tq1_0)) {
        pw__block_tq1_0 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        for (int k = 0; k < 5; ++k, dst += 32)
            for (int m = 0; m < 32; ++m) dst[m] = (float)(pw__tq1_trit(b.qs[m], k) - 1) * d;
        for (int k = 0; k < 5; ++k, dst += 16)
            for (int m = 0; m < 16; ++m) dst[m] = (float)(pw__tq1_trit(b.qs[32 + m], k) - 1) * d;
        for (int k = 0; k < 4; ++k, dst += 4)
            for (int j = 0; j < 4; ++j) dst[j] = (float)(pw__tq1_trit(b.qh[j], k) - 1) * d;
    }
}

void pw__decode_tq2_0(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_tq2_0)) {
        pw__block_tq2_0 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        for (int h = 0; h < 2; ++h)
            for (int g = 0; g < 4; ++g, dst += 32)
                for (int m = 0; m < 32; ++m)
                    dst[m] = (float)(((b.qs[32 * h + m] >> (2 * g)) & 3) - 1) * d;
    }
}
