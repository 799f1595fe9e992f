/*
 * Decoders of the float formats and the 32-element block formats.
 *
 * Each reproduces ggml's dequantize_row_* bit for bit: the library is built
 * with -ffp-contract=off, and every expression keeps ggml's operand order and
 * types (for example Q4_1 is (float)q * d + m: a rounded multiply, then a
 * rounded add). Blocks are copied into an aligned local struct first, so the
 * source needs no alignment; the element loops are plain enough to vectorize.
 */
#include "format/blocks.h"
#include "format/format_internal.h"

#include <string.h>

void pw__decode_f32(const void *src, size_t blocks, float *dst) {
    memcpy(dst, src, blocks * sizeof(float));
}

void pw__decode_f16(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i) {
        uint16_t h;
        memcpy(&h, p + 2 * i, sizeof h);
        dst[i] = pw__f16_to_f32(h);
    }
}

void pw__decode_bf16(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i) {
        uint16_t h;
        memcpy(&h, p + 2 * i, sizeof h);
        dst[i] = pw__bf16_to_f32(h);
    }
}

void pw__decode_q4_0(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q4_0), dst += PW__QK4_0) {
        pw__block_q4_0 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        for (int j = 0; j < PW__QK4_0 / 2; ++j) {
            dst[j] = (float)((b.qs[j] & 0x0F) - 8) * d;
            dst[j + PW__QK4_0 / 2] = (float)((b.qs[j] >> 4) - 8) * d;
        }
    }
}

void pw__decode_q4_1(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q4_1), dst += PW__QK4_1) {
        pw__block_q4_1 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        const float m = pw__f16_to_f32(b.m);
        for (int j = 0; j < PW__QK4_1 / 2; ++j) {
            dst[j] = (float)(b.qs[j] & 0x0F) * d + m;
            dst[j + PW__QK4_1 / 2] = (float)(b.qs[j] >> 4) * d + m;
        }
    }
}

/* Bit e of a Q5_0/Q5_1 qh word, for e = 0..31. Testing qh against this
 * table instead of shifting by e keeps the element loops free of per-lane
 * shifts, which baseline SSE2 does not have, so they vectorize. */
static const uint32_t pw__q5_bit[32] = {
    1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
    1u << 8,  1u << 9,  1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15,
    1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23,
    1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

static inline uint32_t pw__load_qh(const uint8_t qh[4]) {
    return (uint32_t)qh[0] | ((uint32_t)qh[1] << 8) | ((uint32_t)qh[2] << 16) |
           ((uint32_t)qh[3] << 24);
}

void pw__decode_q5_0(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q5_0), dst += PW__QK5_0) {
        pw__block_q5_0 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        const uint32_t qh = pw__load_qh(b.qh);
        for (int j = 0; j < PW__QK5_0 / 2; ++j) {
            const int hi0 = (qh & pw__q5_bit[j]) ? 16 : 0;
            const int hi1 = (qh & pw__q5_bit[j + 16]) ? 16 : 0;
            dst[j] = (float)(((b.qs[j] & 0x0F) | hi0) - 16) * d;
            dst[j + PW__QK5_0 / 2] = (float)(((b.qs[j] >> 4) | hi1) - 16) * d;
        }
    }
}

void pw__decode_q5_1(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q5_1), dst += PW__QK5_1) {
        pw__block_q5_1 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        const float m = pw__f16_to_f32(b.m);
        const uint32_t qh = pw__load_qh(b.qh);
        for (int j = 0; j < PW__QK5_1 / 2; ++j) {
            const int hi0 = (qh & pw__q5_bit[j]) ? 16 : 0;
            const int hi1 = (qh & pw__q5_bit[j + 16]) ? 16 : 0;
            dst[j] = (float)((b.qs[j] & 0x0F) | hi0) * d + m;
            dst[j + PW__QK5_1 / 2] = (float)((b.qs[j] >> 4) | hi1) * d + m;
        }
    }
}

void pw__decode_q8_0(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q8_0), dst += PW__QK8_0) {
        pw__block_q8_0 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        for (int j = 0; j < PW__QK8_0; ++j) dst[j] = (float)b.qs[j] * d;
    }
}

void pw__decode_q8_1(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_q8_1), dst += PW__QK8_1) {
        pw__block_q8_1 b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        for (int j = 0; j < PW__QK8_1; ++j) dst[j] = (float)b.qs[j] * d;
    }
}

void pw__decode_iq4_nl(const void *src, size_t blocks, float *dst) {
    const uint8_t *p = src;
    for (size_t i = 0; i < blocks; ++i, p += sizeof(pw__block_iq4_nl), dst += PW__QK4_NL) {
        pw__block_iq4_nl b;
        memcpy(&b, p, sizeof b);
        const float d = pw__f16_to_f32(b.d);
        /* The 16 possible outputs, each the single product ggml computes. */
        float value[16];
        for (int k = 0; k < 16; ++k) value[k] = d * (float)pw__iq4nl_values[k];
        for (int j = 0; j < PW__QK4_NL / 2; ++j) {
            dst[j] = value[b.qs[j] & 0x0F];
            dst[j + PW__QK4_NL / 2] = value[b.qs[j] >> 4];
        }
    }
}
