/*
 * Reference quantizers of the K-quants (Q2_K .. Q6_K) and of Q8_K.
 *
 * A K-quant super-block has 16 or 8 sub-blocks, each with its own scale (and
 * min), and those scales are themselves quantized to 4 or 6 bits against one
 * fp16 super-scale. The quality of the format depends on how the sub-block
 * scales are chosen, so each sub-block runs a small search, the same ones
 * ggml's reference quantizers use (no importance matrix):
 *   - pw__fit_affine: scale and min for Q2_K, Q4_K, Q5_K. Tries a range of
 *     scales, refits scale and min by weighted least squares for the levels
 *     each gives, and keeps the lowest weighted error.
 *   - pw__fit_signed_greedy: symmetric scale for Q3_K; starts from the
 *     absmax scale and moves single quants while that raises the weighted
 *     fit quality.
 *   - pw__fit_signed_search: symmetric scale for Q6_K; tries 19 scales around
 *     absmax/nmax with x^2 weights and keeps the best least-squares fit.
 * After the super-scale is fixed, every element is re-rounded against its
 * final (fp16-rounded) sub-block scale.
 *
 * All arithmetic is float, in a fixed order, with rounding done by
 * pw__nearest_int (round half to even); the bytes are the same on every ISA.
 */
#include "format/blocks.h"
#include "format/format_internal.h"

#include <math.h>
#include <string.h>

/* Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 moves
 * the integer part into the low mantissa bits. Defined (if meaningless) for
 * any float, so degenerate scales cannot trigger undefined behaviour. */
static inline int pw__nearest_int(float v) {
    const float shifted = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

static inline int pw__clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Values below this magnitude count as an all-zero group. */
#define PW__GROUP_EPS 1e-15f

/* Fit x ~ scale * L + min (min <= 0, L in 0..nmax) with weights w. Tries
 * nstep + 1 candidate inverse scales (rmin + rdelta*k + nmax)/(max - min),
 * solves the 2x2 least-squares problem for each level assignment, and keeps
 * the best by weighted squared (or absolute, use_mad) error. Returns the
 * scale; *neg_min receives -min (>= 0). */
static float pw__fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
                            float *neg_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                            int use_mad) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        memset(L, 0, (size_t)n);
        *neg_min = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1.0f / iscale;
    float best_error = 0.0f;
    for (int i = 0; i < n; ++i) {
        L[i] = (uint8_t)pw__clamp_int(pw__nearest_int(iscale * (x[i] - min)), 0, nmax);
        float diff = scale * (float)L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_error += w[i] * diff;
    }
    for (int k = 0; k <= nstep; ++k) {
        iscale = (rmin + rdelta * (float)k + (float)nmax) / (max - min);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = pw__clamp_int(pw__nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t)l;
            sum_l += w[i] * (float)l;
            sum_l2 += w[i] * (float)l * (float)l;
            sum_xl += w[i] * (float)l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (!(D > 0.0f)) continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        if (this_min > 0.0f) {
            this_min = 0.0f;
            this_scale = sum_xl / sum_l2;
        }
        float error = 0.0f;
        for (int i = 0; i < n; ++i) {
            float diff = this_scale * (float)Laux[i] + this_min - x[i];
            diff = use_mad ? fabsf(diff) : diff * diff;
            error += w[i] * diff;
        }
        if (error < best_error) {
            memcpy(L, Laux, (size_t)n);
            best_error = error;
            scale = this_scale;
            min = this_min;
        }
    }
    *neg_min = -min;
    return scale;
}

/* Symmetric fit with levels -nmax .. nmax-1 and weights x^2, starting from
 * the scale that maps the extreme value onto -nmax, then up to five passes
 * that move one quant at a time to its best level given the others, while
 * that increases sumlx^2/suml2. L receives level + nmax. Returns the scale
 * (signed: it has the sign that maps the extreme value to -nmax). */
static float pw__fit_signed_greedy(int n, int nmax, const float *x, int8_t *L) {
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    if (amax < PW__GROUP_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    const float iscale = (float)-nmax / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = pw__clamp_int(pw__nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)l;
        const float w = x[i] * x[i];
        sumlx += w * x[i] * (float)l;
        suml2 += w * (float)l * (float)l;
    }
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * (float)L[i];
            if (!(slx > 0.0f)) continue;
            float sl2 = suml2 - w * (float)L[i] * (float)L[i];
            const int l = pw__clamp_int(pw__nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (l == L[i]) continue;
            slx += w * x[i] * (float)l;
            sl2 += w * (float)l * (float)l;
            if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (int8_t)l;
                sumlx = slx;
                suml2 = sl2;
                ++changed;
            }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Weighted (x^2) least-squares fit of the levels given by inverse scale
 * iscale; returns sum(w x l) and sum(w l^2). */
static inline void pw__signed_sums(int n, int nmax, const float *x, float iscale, float *sumlx,
                                   float *suml2) {
    float slx = 0.0f, sl2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = pw__clamp_int(pw__nearest_int(iscale * x[i]), -nmax, nmax - 1);
        const float w = x[i] * x[i];
        slx += w * x[i] * (float)l;
        sl2 += w * (float)l * (float)l;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

static inline void pw__signed_levels(int n, int nmax, const float *x, float iscale, int8_t *L) {
    for (int i = 0; i < n; ++i)
        L[i] = (int8_t)(nmax + pw__clamp_int(pw__nearest_int(iscale * x[i]), -nmax, nmax - 1));
}

/* Symmetric fit with levels -nmax .. nmax-1 and weights x^2: tries the
 * inverse scales -(nmax + 0.1k)/max for k in -9..9 and keeps the level
 * assignment with the best least-squares fit. L receives level + nmax. */
static float pw__fit_signed_search(int n, int nmax, const float *x, int8_t *L) {
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    if (amax < PW__GROUP_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = (float)-nmax / max;
    float sumlx, suml2;
    pw__signed_levels(n, nmax, x, iscale, L);
    pw__signed_sums(n, nmax, x, iscale, &sumlx, &suml2);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int k = -9; k <= 9; ++k) {
        if (k == 0) continue;
        iscale = -((float)nmax + 0.1f * (float)k) / max;
        pw__signed_sums(n, nmax, x, iscale, &sumlx, &suml2);
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            pw__signed_levels(n, nmax, x, iscale, L);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* Pack 256 two-bit values as Q2_K/Q3_K/TQ2_0 do: element e goes to byte
 * 32*(e/128) + e%32 at bits 2*((e%128)/32). */
static void pw__pack_2bit(const uint8_t *L, uint8_t *qs) {
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const uint8_t *v = L + 128 * h + l;
            qs[32 * h + l] = (uint8_t)(v[0] | (v[32] << 2) | (v[64] << 4) | (v[96] << 6));
        }
}

void pw__quantize_q2_K(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_q2_K)) {
        pw__block_q2_K b;
        uint8_t L[PW__QK_K], Laux[16];
        float w[16], scales[16], mins[16];
        float max_scale = 0.0f, max_min = 0.0f;
        for (int j = 0; j < 16; ++j) {
            const float *x = src + 16 * j;
            for (int l = 0; l < 16; ++l) w[l] = fabsf(x[l]);
            scales[j] = pw__fit_affine(16, 3, x, w, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, 1);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        /* Sub-block scales and mins as 4-bit multiples of d and dmin. The clamps
         * only matter for degenerate input (subnormal ranges make iscale
         * infinite); normal values already land in 0..15. */
        memset(b.scales, 0, sizeof b.scales);
        b.d = 0;
        b.dmin = 0;
        if (max_scale > 0.0f) {
            const float iscale = 15.0f / max_scale;
            for (int j = 0; j < 16; ++j)
                b.scales[j] = (uint8_t)pw__clamp_int(pw__nearest_int(iscale * scales[j]), 0, 15);
            b.d = pw__f32_to_f16(max_scale / 15.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = 15.0f / max_min;
            for (int j = 0; j < 16; ++j)
                b.scales[j] |= (uint8_t)(pw__clamp_int(pw__nearest_int(iscale * mins[j]), 0, 15) << 4);
            b.dmin = pw__f32_to_f16(max_min / 15.0f);
        }
        const float d = pw__f16_to_f32(b.d), dmin = pw__f16_to_f32(b.dmin);
        for (int j = 0; j < 16; ++j) {
            const float dl = d * (float)(b.scales[j] & 0xF);
            if (dl == 0.0f) continue;
            const float ml = dmin * (float)(b.scales[j] >> 4);
            for (int l = 0; l < 16; ++l)
                L[16 * j + l] =
                    (uint8_t)pw__clamp_int(pw__nearest_int((src[16 * j + l] + ml) / dl), 0, 3);
        }
        pw__pack_2bit(L, b.qs);
        memcpy(p, &b, sizeof b);
    }
}

void pw__quantize_q3_K(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_q3_K)) {
        pw__block_q3_K b;
        int8_t L[PW__QK_K];
        float scales[16];
        float amax = 0.0f, max_scale = 0.0f;
        for (int j = 0; j < 16; ++j) {
            scales[j] = pw__fit_signed_greedy(16, 4, src + 16 * j, L + 16 * j);
            if (fabsf(scales[j]) > amax) {
                amax = fabsf(scales[j]);
                max_scale = scales[j];
            }
        }
        /* Sub-block scales as 6-bit signed multiples of d (offset 32). */
        memset(b.scales, 0, sizeof b.scales);
        b.d = 0;
        if (max_scale != 0.0f) {
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < 16; ++j) {
                const int l = pw__clamp_int((int8_t)pw__nearest_int(iscale * scales[j]), -32, 31) + 32;
                b.scales[j % 8] |= (uint8_t)((l & 0xF) << (j < 8 ? 0 : 4));
                b.scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
            }
            b.d = pw__f32_to_f16(1.0f / iscale);
        }
        const float d = pw__f16_to_f32(b.d);
        int8_t sc[16];
        pw__q3k_unpack_scales(b.scales, sc);
        for (int j = 0; j < 16; ++j) {
            const float dl = d * (float)(sc[j] - 32);
            if (dl == 0.0f) continue;
            for (int l = 0; l < 16; ++l)
                L[16 * j + l] = (int8_t)(pw__clamp_int(pw__nearest_int(src[16 * j + l] / dl), -4, 3) + 4);
        }
        /* Levels 0..7: bit 2 goes to the hmask, the low two bits to qs. */
        uint8_t low[PW__QK_K];
        memset(b.hmask, 0, sizeof b.hmask);
        for (int e = 0; e < PW__QK_K; ++e) {
            if (L[e] > 3) b.hmask[e % 32] |= (uint8_t)(1u << (e / 32));
            low[e] = (uint8_t)(L[e] & 3);
        }
        pw__pack_2bit(low, b.qs);
        memcpy(p, &b, sizeof b);
    }
}

/* Q4_K/Q5_K scale packing: 6-bit scale ls and min lm of sub-block j. */
static void pw__k4_pack(uint8_t packed[12], int j, uint8_t ls, uint8_t lm) {
    if (j < 4) {
        packed[j] = ls;
        packed[j + 4] = lm;
    } else {
        packed[j + 4] = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
        packed[j - 4] |= (uint8_t)((ls >> 4) << 6);
        packed[j] |= (uint8_t)((lm >> 4) << 6);
    }
}

/* Shared by Q4_K (nmax 15) and Q5_K (nmax 31): eight 32-element sub-blocks
 * with affine fits weighted by rms + |x|, 6-bit scales and mins against fp16
 * d and dmin, then every element re-rounded to levels 0..nmax in L. */
static void pw__quantize_k4_levels(const float *x, int nmax, float rmin, int nstep,
                                   uint8_t packed[12], uint16_t *d16, uint16_t *dmin16,
                                   uint8_t L[PW__QK_K]) {
    uint8_t Laux[32];
    float w[32], scales[8], mins[8];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; ++j) {
        const float *xs = x + 32 * j;
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
        const float av_x = sqrtf(sum_x2 / 32.0f);
        for (int l = 0; l < 32; ++l) w[l] = av_x + fabsf(xs[l]);
        scales[j] = pw__fit_affine(32, nmax, xs, w, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, 0);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; ++j) {
        const int ls = pw__clamp_int(pw__nearest_int(inv_scale * scales[j]), 0, 63);
        const int lm = pw__clamp_int(pw__nearest_int(inv_min * mins[j]), 0, 63);
        pw__k4_pack(packed, j, (uint8_t)ls, (uint8_t)lm);
    }
    *d16 = pw__f32_to_f16(max_scale / 63.0f);
    *dmin16 = pw__f32_to_f16(max_min / 63.0f);
    const float d = pw__f16_to_f32(*d16), dmin = pw__f16_to_f32(*dmin16);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        pw__k4_scale_min(j, packed, &sc, &m);
        const float dl = d * (float)sc;
        if (dl == 0.0f) continue;
        const float ml = dmin * (float)m;
        for (int l = 0; l < 32; ++l)
            L[32 * j + l] =
                (uint8_t)pw__clamp_int(pw__nearest_int((x[32 * j + l] + ml) / dl), 0, nmax);
    }
}

void pw__quantize_q4_K(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_q4_K)) {
        pw__block_q4_K b;
        uint8_t L[PW__QK_K];
        pw__quantize_k4_levels(src, 15, -1.0f, 20, b.scales, &b.d, &b.dmin, L);
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l)
                b.qs[32 * c + l] = (uint8_t)(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
        memcpy(p, &b, sizeof b);
    }
}

void pw__quantize_q5_K(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_q5_K)) {
        pw__block_q5_K b;
        uint8_t L[PW__QK_K];
        pw__quantize_k4_levels(src, 31, -0.5f, 15, b.scales, &b.d, &b.dmin, L);
        memset(b.qh, 0, sizeof b.qh);
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) {
                const int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
                b.qs[32 * c + l] = (uint8_t)((lo & 0xF) | ((hi & 0xF) << 4));
                b.qh[l] |= (uint8_t)(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
            }
        memcpy(p, &b, sizeof b);
    }
}

void pw__quantize_q6_K(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_q6_K)) {
        pw__block_q6_K b;
        int8_t L[PW__QK_K];
        float scales[16];
        float amax = 0.0f, max_scale = 0.0f;
        for (int j = 0; j < 16; ++j) {
            scales[j] = pw__fit_signed_search(16, 32, src + 16 * j, L + 16 * j);
            if (fabsf(scales[j]) > amax) {
                amax = fabsf(scales[j]);
                max_scale = scales[j];
            }
        }
        if (amax < PW__GROUP_EPS) {
            memset(&b, 0, sizeof b);
            memcpy(p, &b, sizeof b);
            continue;
        }
        /* 8-bit signed sub-block scales; the largest maps to -128. */
        const float iscale = -128.0f / max_scale;
        b.d = pw__f32_to_f16(1.0f / iscale);
        for (int j = 0; j < 16; ++j) {
            const int s = pw__nearest_int(iscale * scales[j]);
            b.scales[j] = (int8_t)(s < 127 ? s : 127);
        }
        const float d = pw__f16_to_f32(b.d);
        for (int j = 0; j < 16; ++j) {
            const float dl = d * (float)b.scales[j];
            if (dl == 0.0f) continue;
            for (int l = 0; l < 16; ++l)
                L[16 * j + l] =
                    (int8_t)(pw__clamp_int(pw__nearest_int(src[16 * j + l] / dl), -32, 31) + 32);
        }
        for (int h = 0; h < 2; ++h) {
            const int8_t *v = L + 128 * h;
            for (int l = 0; l < 32; ++l) {
                b.ql[64 * h + l] = (uint8_t)((v[l] & 0xF) | ((v[l + 64] & 0xF) << 4));
                b.ql[64 * h + l + 32] = (uint8_t)((v[l + 32] & 0xF) | ((v[l + 96] & 0xF) << 4));
                b.qh[32 * h + l] = (uint8_t)((v[l] >> 4) | ((v[l + 32] >> 4) << 2) |
                                             ((v[l + 64] >> 4) << 4) | ((v[l + 96] >> 4) << 6));
            }
        }
        memcpy(p, &b, sizeof b);
    }
}

/* Q8_K: one float scale per 256 values, d = max/-127 for the signed extreme
 * (so it maps to -127), plus the 16-element sums the dot products use. */
void pw__quantize_q8_K(const float *src, size_t blocks, void *dst) {
    uint8_t *p = dst;
    for (size_t i = 0; i < blocks; ++i, src += PW__QK_K, p += sizeof(pw__block_q8_K)) {
        pw__block_q8_K b;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < PW__QK_K; ++j) {
            if (fabsf(src[j]) > amax) {
                amax = fabsf(src[j]);
                max = src[j];
            }
        }
        memset(&b, 0, sizeof b);
        if (amax != 0.0f) {
            const float iscale = -127.0f / max;
            for (int j = 0; j < PW__QK_K; ++j) {
                const int v = pw__nearest_int(iscale * src[j]);
                b.qs[j] = (int8_t)pw__clamp_int(v, -128, 127);
            }
            for (int j = 0; j < 16; ++j) {
                int sum = 0;
                for (int l = 0; l < 16; ++l) sum += b.qs[16 * j + l];
                b.bsums[j] = (int16_t)sum;
            }
            b.d = 1.0f / iscale;
        }
        memcpy(p, &b, sizeof b);
    }
}
