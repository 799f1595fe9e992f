/* Activation quantizers: f32 rows to the int8 block forms kernels consume (see act.h). */
#include "quant/act.h"

#include <math.h>
#include <string.h>

int64_t pw__act_block_size(pw_activation a) {
    switch (a) {
    case PW_ACT_Q8_32: return 32;
    case PW_ACT_Q8_256: return 256;
    case PW_ACT_F32: return 1;
    }
    return 1;
}

size_t pw__act_block_bytes(pw_activation a) {
    switch (a) {
    case PW_ACT_Q8_32: return sizeof(pw__q8_32);
    case PW_ACT_Q8_256: return sizeof(pw__q8_256);
    case PW_ACT_F32: return sizeof(float);
    }
    return sizeof(float);
}

/* Quantize n (a multiple of 16) values with one scale; returns d, fills qs/qu. */
static float quantize_block(const float *x, int n, int8_t *qs, uint8_t *qu) {
    float amax = 0.0f;
    for (int k = 0; k < n; ++k) {
        float a = fabsf(x[k]);
        amax = a > amax ? a : amax;
    }
    const float d = amax / 127.0f;
    const float id = d > 0.0f ? 1.0f / d : 0.0f;
    for (int k = 0; k < n; ++k) {
        /* id is +inf when amax is below ~127 / FLT_MAX: then 0 * id is NaN, which
         * becomes 0 here rather than an undefined conversion (quant/x86 agrees). */
        float v = nearbyintf(x[k] * id);
        v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : (v == v ? v : 0.0f));
        qs[k] = (int8_t)v;
        qu[k] = (uint8_t)(qs[k] + 128);
    }
    return d;
}

void pw__act_quantize_row(pw_activation a, const float *x, int64_t in, void *dst) {
    if (a == PW_ACT_Q8_32) {
        pw__q8_32 *b = dst;
        for (int64_t j = 0; j < in / 32; ++j, x += 32) {
            memset(&b[j], 0, offsetof(pw__q8_32, qs));
            b[j].d = quantize_block(x, 32, b[j].qs, b[j].qu);
            int32_t s = 0;
            for (int k = 0; k < 32; ++k) s += b[j].qs[k];
            b[j].sum = s;
            b[j].dsum = b[j].d * (float)s;
        }
    } else if (a == PW_ACT_Q8_256) {
        pw__q8_256 *b = dst;
        for (int64_t j = 0; j < in / 256; ++j, x += 256) {
            memset(&b[j], 0, offsetof(pw__q8_256, qs));
            b[j].d = quantize_block(x, 256, b[j].qs, b[j].qu);
            int32_t s = 0;
            for (int g = 0; g < 16; ++g) {
                int32_t gs = 0;
                for (int k = 0; k < 16; ++k) gs += b[j].qs[g * 16 + k];
                b[j].bsums[g] = (int16_t)gs;
                s += gs;
            }
            b[j].sum = s;
        }
    } else {
        memcpy(dst, x, sizeof(float) * (size_t)in);
    }
}

void pw__act_quantize_rows(const pw_context *ctx, pw_activation a, const float *x, int64_t ldx,
                           int64_t n, int64_t in, void *dst, size_t row_bytes) {
    void (*row)(pw_activation, const float *, int64_t, void *) = pw__act_quantize_row;
#if defined(__x86_64__)
    const uint32_t need = PW_CPU_AVX512F | PW_CPU_AVX512BW;
    if ((pw_context_usable_features(ctx) & need) == need) row = pw__act_quantize_row_avx512;
#else
    (void)ctx;
#endif
    for (int64_t i = 0; i < n; ++i) row(a, x + i * ldx, in, (uint8_t *)dst + (size_t)i * row_bytes);
}

void pw__act_dequantize_row(pw_activation a, const void *src, int64_t in, float *dst) {
    if (a == PW_ACT_Q8_32) {
        const pw__q8_32 *b = src;
        for (int64_t j = 0; j < in / 32; ++j)
            for (int k = 0; k < 32; ++k) dst[j * 32 + k] = b[j].d * (float)b[j].qs[k];
    } else if (a == PW_ACT_Q8_256) {
        const pw__q8_256 *b = src;
        for (int64_t j = 0; j < in / 256; ++j)
            for (int k = 0; k < 256; ++k) dst[j * 256 + k] = b[j].d * (float)b[j].qs[k];
    } else {
        memcpy(dst, src, sizeof(float) * (size_t)in);
    }
}
