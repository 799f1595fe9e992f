/*
 * QD8: per-row asymmetric int8 quantization of the activations (layout of a
 * row in quant/act.h). The range is the row's [min, max] widened to hold 0,
 * so that 0 is exactly representable (q = zp); zp is the nearest integer to
 * -128 - min / scale, nudged into [-128, 127].
 *
 * Rounding uses the 1.5 * 2^23 addition trick (round to nearest even for
 * |v| < 2^22) on values already clamped to [-256, 256], which SIMD versions
 * (quant/x86/qd8_avx512.c) repeat lane by lane: every
 * quantizer gives these bits.
 */
#include "quant/act.h"

#include <float.h>
#include <string.h>

void pw__qd8_params(float lo, float hi, float *scale, float *inv, int32_t *zp) {
    /* Divided first so that hi - lo cannot overflow; an all-zero row keeps
     * scale 1 and zp 0 (every q is 0). */
    float s = hi / 255.0f - lo / 255.0f;
    if (!(s >= FLT_MIN)) s = 1.0f;
    *scale = s;
    *inv = 1.0f / s;
    float zpf = pw__qd8_round_even(-128.0f - lo * *inv);
    zpf = zpf < -128.0f ? -128.0f : (zpf > 127.0f ? 127.0f : zpf);
    *zp = (int32_t)zpf;
}

void pw__qd8_scan(const float *x, int64_t k, int64_t base, pw__qd8_range *r) {
    for (int64_t i = 0; i < k; ++i) {
        const float v = x[i];
        /* inf - inf and NaN - NaN are NaN */
        if (r->bad_k < 0 && (v - v) != 0.0f) r->bad_k = base + i;
        r->lo = v < r->lo ? v : r->lo;
        r->hi = v > r->hi ? v : r->hi;
    }
}

int pw__qd8_begin(uint8_t *row, const pw__qd8_range *r, float *inv, int32_t *zp) {
    pw__qd8_header *h = (pw__qd8_header *)(void *)row;
    memset(h, 0, sizeof *h);
    if (r->bad_k >= 0) {
        h->bad = 1;
        h->bad_k = r->bad_k;
        return 0;
    }
    float scale;
    pw__qd8_params(r->lo, r->hi, &scale, inv, zp);
    h->scale = scale;
    h->neg_zp = -*zp;
    return 1;
}

int32_t pw__qd8_fill(const float *x, int64_t k, float inv, int32_t zp, int8_t *q, uint8_t *u) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
        const int32_t iv = pw__qd8_value(x[i], inv, zp);
        q[i] = (int8_t)iv;
        u[i] = (uint8_t)(iv + 128);
        sum += iv;
    }
    return sum;
}

void pw__qd8_end(uint8_t *row, int64_t k, int64_t k_padded, int32_t sum) {
    pw__qd8_header *h = (pw__qd8_header *)(void *)row;
    int8_t *q = (int8_t *)(row + sizeof *h);
    uint8_t *u = row + sizeof *h + (size_t)k_padded;
    for (int64_t i = k; i < k_padded; ++i) {
        q[i] = 0;
        u[i] = 128;
    }
    h->sum = sum;
}

void pw__qd8_quantize_row(const float *x, int64_t k, int64_t k_padded, uint8_t *row) {
    pw__qd8_range r = {0.0f, 0.0f, -1};
    pw__qd8_scan(x, k, 0, &r);
    float inv;
    int32_t zp;
    if (!pw__qd8_begin(row, &r, &inv, &zp)) return;
    const int32_t sum = pw__qd8_fill(x, k, inv, zp, (int8_t *)(row + sizeof(pw__qd8_header)),
                                     row + sizeof(pw__qd8_header) + (size_t)k_padded);
    pw__qd8_end(row, k, k_padded, sum);
}

void pw__qd8_panel_rows(const uint8_t *lhs, size_t row_bytes, int64_t k_padded, int32_t p,
                        int64_t m0, int64_t m1, uint8_t *panels) {
    for (int64_t m = m0; m < m1; ++m) {
        const uint8_t *u = pw__qd8_u(lhs + (size_t)m * row_bytes, k_padded);
        uint8_t *dst = panels + (size_t)(m / p) * (size_t)p * (size_t)k_padded + (size_t)(m % p) * 8;
        for (int64_t j = 0; j < k_padded; j += 8, dst += (size_t)p * 8) memcpy(dst, u + j, 8);
    }
}
