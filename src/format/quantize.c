/*
 * Reference quantizers of the float formats, the 32-element block formats
 * and the ternary formats.
 *
 * These follow ggml's reference quantizers (quantize_row_*_ref, and the
 * IQ4_NL scale search without an importance matrix), so a file written by
 * packwise is what ggml would write: same scale choice, same rounding rule
 * per format (truncation of x + 8.5 for Q4_0, round-half-away for Q8_0 and
 * the ternary formats, nearest level for IQ4_NL). Everything is plain scalar
 * float arithmetic in a fixed order with no library calls other than the
 * exact fabsf/roundf, so the bytes are the same on every ISA and build.
 *
 * Input is finite (pw_format_quantize checks). Inputs so small that 1/d
 * overflows give scales that round to a zero fp16 anyway; the clamped
 * conversions below keep those cases defined.
 */
#include "format/blocks.h"
#include "format/format_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* (int)v for v in (0, hi), 0 below (and for NaN), hi above: ggml's
 * MIN(hi, (int8_t)v) on the values its quantizers produce. */
static inline int pw__trunc_clamped(float v, int hi) {
    if (!(v > 0.0f)) return 0;
    if (v >= (float)hi) return hi;
    return (int)v;
}

/* roundf(v) (half away from zero) clamped to [lo, hi]; NaN gives 0. */
static inline int pw__round_clamped(float v, int lo, int hi) {
    if (v != v) return 0;
    const float r = roundf(v);
    if (r <= (float)lo) return lo;
    if (r >= (float)hi) return hi;
    return (int)r;
}

/* The signed value of largest magnitude (the first one on ties). */
static inline float pw__signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

static inline float pw__absmax(const float *x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; ++j) amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    return amax;
}

void pw__quantize_f32(const float *src, size_t blocks, void *dst) {
    memcpy(dst, src, blocks * sizeof(float));
}

void pw__quantize_f16(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i) {
        const uint16_t h = pw__f32_to_f16(src[i]);
        memcpy(p + 2 * i, &h, sizeof h);
    }
}

void pw__quantize_bf16(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i) {
        const uint16_t h = pw__f32_to_bf16(src[i]);
        memcpy(p + 2 * i, &h, sizeof h);
    }
}

/* Q4_0: d = -max/8 where max is the signed value of largest magnitude, so
 * that value maps to level 0 (-8) exactly and the other side keeps 7 levels. */
void pw__quantize_q4_0(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK4_0, p += sizeof(pw__block_q4_0)) {
        pw__block_q4_0 b;
        const float d = pw__signed_absmax(src, PW__QK4_0) / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = pw__f32_to_f16(d);
        for (int j = 0; j < PW__QK4_0 / 2; ++j) {
            const int q0 = pw__trunc_clamped(src[j] * id + 8.5f, 15);
            const int q1 = pw__trunc_clamped(src[j + PW__QK4_0 / 2] * id + 8.5f, 15);
            b.qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
        memcpy(p, &b, sizeof b);
    }
}

/* min and max of n values, starting from +-FLT_MAX as ggml does. */
static inline void pw__min_max(const float *x, int n, float *min, float *max) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *min = lo;
    *max = hi;
}

/* Q4_1: affine, d = (max - min)/15 and m = min. */
void pw__quantize_q4_1(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK4_1, p += sizeof(pw__block_q4_1)) {
        pw__block_q4_1 b;
        float min, max;
        pw__min_max(src, PW__QK4_1, &min, &max);
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = pw__f32_to_f16(d);
        b.m = pw__f32_to_f16(min);
        for (int j = 0; j < PW__QK4_1 / 2; ++j) {
            const int q0 = pw__trunc_clamped((src[j] - min) * id + 0.5f, 15);
            const int q1 = pw__trunc_clamped((src[j + PW__QK4_1 / 2] - min) * id + 0.5f, 15);
            b.qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
        memcpy(p, &b, sizeof b);
    }
}

/* Store 32 five-bit quants: low nibbles as Q4_0, bit 4 of element e in bit e of qh. */
static inline void pw__pack_q5(const int q[32], uint8_t qs[16], uint8_t qh[4]) {
    uint32_t high = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = (uint8_t)((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
        high |= (uint32_t)((q[j] >> 4) & 1) << j;
        high |= (uint32_t)((q[j + 16] >> 4) & 1) << (j + 16);
    }
    for (int k = 0; k < 4; ++k) qh[k] = (uint8_t)(high >> (8 * k));
}

/* Q5_0: as Q4_0 with 32 levels, d = -max/16. */
void pw__quantize_q5_0(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK5_0, p += sizeof(pw__block_q5_0)) {
        pw__block_q5_0 b;
        const float d = pw__signed_absmax(src, PW__QK5_0) / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = pw__f32_to_f16(d);
        int q[PW__QK5_0];
        for (int j = 0; j < PW__QK5_0; ++j) q[j] = pw__trunc_clamped(src[j] * id + 16.5f, 31);
        pw__pack_q5(q, b.qs, b.qh);
        memcpy(p, &b, sizeof b);
    }
}

/* Q5_1: as Q4_1 with 32 levels. */
void pw__quantize_q5_1(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK5_1, p += sizeof(pw__block_q5_1)) {
        pw__block_q5_1 b;
        float min, max;
        pw__min_max(src, PW__QK5_1, &min, &max);
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = pw__f32_to_f16(d);
        b.m = pw__f32_to_f16(min);
        int q[PW__QK5_1];
        for (int j = 0; j < PW__QK5_1; ++j) q[j] = pw__trunc_clamped((src[j] - min) * id + 0.5f, 31);
        pw__pack_q5(q, b.qs, b.qh);
        memcpy(p, &b, sizeof b);
    }
}

/* Q8_0 and Q8_1 share the quants: d = absmax/127, q = round(x/d). Returns d
 * and the sum of the quants. */
static inline float pw__quantize_q8_32(const float *x, int8_t qs[32], int *sum) {
    const float d = pw__absmax(x, 32) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int s = 0;
    for (int j = 0; j < 32; ++j) {
        qs[j] = (int8_t)pw__round_clamped(x[j] * id, -127, 127);
        s += qs[j];
    }
    *sum = s;
    return d;
}

void pw__quantize_q8_0(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK8_0, p += sizeof(pw__block_q8_0)) {
        pw__block_q8_0 b;
        int sum;
        b.d = pw__f32_to_f16(pw__quantize_q8_32(src, b.qs, &sum));
        memcpy(p, &b, sizeof b);
    }
}

/* Q8_1 also stores s = sum(q) * d (unrounded d) for the min term of the
 * Q4_1/Q5_1 dot products. */
void pw__quantize_q8_1(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK8_1, p += sizeof(pw__block_q8_1)) {
        pw__block_q8_1 b;
        int sum;
        const float d = pw__quantize_q8_32(src, b.qs, &sum);
        b.d = pw__f32_to_f16(d);
        b.s = pw__f32_to_f16((float)sum * d);
        memcpy(p, &b, sizeof b);
    }
}

/* Index of the codebook entry nearest to v (the upper one on ties, as
 * ggml's bisection gives). The bracket t[lo] <= v < t[lo+1] is found by
 * counting entries <= v, which is branch-free and gives the same lo as a
 * bisection; the final float comparison is ggml's. */
static inline int pw__iq4nl_index(float v) {
    const int8_t *t = pw__iq4nl_values;
    if (!(v > (float)t[0])) return 0; /* also NaN */
    if (v >= (float)t[15]) return 15;
    int lo = 0;
    for (int k = 1; k < 15; ++k) lo += v >= (float)t[k];
    return v - (float)t[lo] < (float)t[lo + 1] - v ? lo : lo + 1;
}

/* Weighted least-squares fit of x ~ d * t[index(id * x)] with weights x^2:
 * accumulates sum(w q x) and sum(w q^2). */
static inline void pw__iq4nl_fit(const float *x, const float *w, float id, float *sumqx,
                                 float *sumq2) {
    float sqx = 0.0f, sq2 = 0.0f;
    for (int j = 0; j < PW__QK4_NL; ++j) {
        const float q = (float)pw__iq4nl_values[pw__iq4nl_index(id * x[j])];
        sqx += w[j] * q * x[j];
        sq2 += w[j] * q * q;
    }
    *sumqx = sqx;
    *sumq2 = sq2;
}

/* IQ4_NL: start from d = max/127 (the extreme value on the -127 entry), then
 * try 15 scales that put max on -127 + k for k in -7..7 and keep the one
 * whose least-squares d explains most of the weighted energy (maximises
 * sumqx^2/sumq2). */
void pw__quantize_iq4_nl(const float *src, size_t blocks, void *dst) {
    enum { ntry = 7 };
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK4_NL, p += sizeof(pw__block_iq4_nl)) {
        pw__block_iq4_nl b;
        float w[PW__QK4_NL];
        for (int j = 0; j < PW__QK4_NL; ++j) w[j] = src[j] * src[j];
        const float max = pw__signed_absmax(src, PW__QK4_NL);
        float d = 0.0f;
        if (fabsf(max) >= 1e-15f) {
            float sumqx, sumq2;
            pw__iq4nl_fit(src, w, 1.0f / (-max / (float)pw__iq4nl_values[0]), &sumqx, &sumq2);
            d = sumqx / sumq2;
            float best = d * sumqx;
            for (int t = -ntry; t <= ntry; ++t) {
                const float id = (float)(t + pw__iq4nl_values[0]) / max;
                pw__iq4nl_fit(src, w, id, &sumqx, &sumq2);
                if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                    d = sumqx / sumq2;
                    best = d * sumqx;
                }
            }
        }
        b.d = pw__f32_to_f16(d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < PW__QK4_NL / 2; ++j) {
            const int q0 = pw__iq4nl_index(id * src[j]);
            const int q1 = pw__iq4nl_index(id * src[j + PW__QK4_NL / 2]);
            b.qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
        memcpy(p, &b, sizeof b);
    }
}

/* Ternary formats: d = absmax, trit = round(x/d) + 1 in {0, 1, 2}. */
static inline float pw__ternary_scale(const float *x, float *id) {
    const float d = pw__absmax(x, PW__QK_K);
    *id = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}

static inline int pw__trit(float x, float id) { return pw__round_clamped(x * id, -1, 1) + 1; }

/* n trits (most significant first) as a TQ1_0 fixed-point byte: a base-3
 * number padded to five trits, then ceil(v * 256 / 243). */
static inline uint8_t pw__tq1_byte(const float *x, int stride, int n, float id) {
    unsigned v = 0;
    for (int k = 0; k < n; ++k) v = v * 3u + (unsigned)pw__trit(x[k * stride], id);
    for (int k = n; k < 5; ++k) v *= 3u;
    return (uint8_t)((v * 256u + 242u) / 243u);
}

void pw__quantize_tq1_0(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_tq1_0)) {
        pw__block_tq1_0 b;
        float id;
        b.d = pw__f32_to_f16(pw__ternary_scale(src, &id));
        for (int m = 0; m < 32; ++m) b.qs[m] = pw__tq1_byte(src + m, 32, 5, id);
        for (int m = 0; m < 16; ++m) b.qs[32 + m] = pw__tq1_byte(src + 160 + m, 16, 5, id);
        for (int j = 0; j < 4; ++j) b.qh[j] = pw__tq1_byte(src + 240 + j, 4, 4, id);
        memcpy(p, &b, sizeof b);
    }
}

void pw__quantize_tq2_0(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_tq2_0)) {
        pw__block_tq2_0 b;
        float id;
        b.d = pw__f32_to_f16(pw__ternary_scale(src, &id));
        for (int h = 0; h < 2; ++h) {
            for (int m = 0; m < 32; ++m) {
                unsigned v = 0;
                for (int g = 0; g < 4; ++g)
                    v |= (unsigned)pw__trit(src[128 * h + 32 * g + m], id) << (2 * g);
                b.qs[32 * h + m] = (uint8_t)v;
            }
        }
        memcpy(p, &b, sizeof b);
    }
}
