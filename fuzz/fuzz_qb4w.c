/*
 * libFuzzer target for QB4W descriptors (packwise/qb4w.h): raw blockwise int4
 * weights of any shape, block size, scale type, zero-point kind (a constant,
 * U4 or U8 per block, values above 15 included), flags and NULL pointers;
 * scales (f32, f16, bf16) and biases with NaN, infinities, denormals and huge
 * values; options (policy, clamp, served batch classes, a forced kernel, a
 * bias in the options); the ISA cap; and activations with NaN or infinities
 * in some rows. It checks properties, not only "no crash":
 *
 * - pw_weight_create_qb4w() succeeds exactly when the descriptor is valid
 *   (N, K >= 1, B a power of two in 16 .. 256, scale type F32/F16/BF16, zero
 *   kind CONST (0 or 8), U4 or U8 (each <= 15), no unknown flag, non-NULL
 *   arrays, finite scales and biases, min <= max, not in place, not two
 *   biases); a forced kernel may refuse a valid one; a refusal leaves *out
 *   NULL and says why;
 * - every product agrees with a double-precision reference from the raw
 *   nibbles (read as the flags say: N x K or transposed), scales (decoded
 *   here, not by the library) and zero points, w = s * (u - z) (constant zero
 *   point 0: signed nibbles, u = nibble ^ 8 with z = 8), within QD8's own
 *   error bound (half a step of the row's range times sum |w|) plus the float
 *   slack of the documented f32 steps, then bias and clamp. Where those f32
 *   steps could pass FLT_MAX (huge scales: the per-block sums are taken
 *   before the activation scale), a non-finite result is accepted; elsewhere
 *   a result is infinite only where the answer leaves the float range;
 * - a row of X holding a NaN or an infinity gives a row of NaN in Y (the
 *   clamp does not hide it), and other rows are unaffected;
 * - an unserved batch class is refused;
 * - a second weight over the same raw weights through one pw_cache is served
 *   from the cache and gives the same bytes;
 * - the weight stays valid after the raw arrays are freed (they are borrowed
 *   only during the call: every buffer here is overwritten and freed first).
 * Sizes stay small (N <= 96, K <= 300, n <= 5) so a run does many inputs; the
 * overflow checks are reached with N past SIZE_MAX / 8 (refused before any
 * array is read: the arrays behind such a descriptor hold one value). Built
 * into the replay driver too (replay.c).
 */
#include "fuzz_int4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference's own half and bfloat16 decoders (not the library's). */
static double f16_value(uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 31) return m ? NAN : sign * INFINITY;
    if (e == 0) return sign * ldexp((double)m, -24);
    return sign * ldexp((double)(m | 1024), e - 25);
}
static double bf16_value(uint16_t b) {
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
}
/* f32 -> f16, truncating (the bits are what the weights hold; exactness does not matter). */
static uint16_t f16_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    const int e = (int)((u >> 23) & 255) - 127 + 15;
    const uint32_t m = u & 0x7fffff;
    if (((u >> 23) & 255) == 255) return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    if (e >= 31) return (uint16_t)(sign | 0x7bff);
    if (e <= 0) {
        if (e < -10) return sign;
        return (uint16_t)(sign | ((m | 0x800000) >> (14 - e)));
    }
    return (uint16_t)(sign | (e << 10) | (m >> 13));
}

/* A scale of the given type (0 F32, 1 F16, 2 BF16) written at `at`; returns its value. */
static double put_scale(input *in, void *scales, int type, int64_t at, int specials) {
    const unsigned sel = (unsigned)take(in, 1);
    if (specials && sel % 32 == 0 && type != 0) {
        static const uint16_t h[] = {0x7e00, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x0001, 0x03ff, 0x7bff, 0xfbff};
        static const uint16_t b[] = {0x7fc0, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001, 0x007f, 0x7f7f, 0xff7f};
        const unsigned i = (unsigned)(take(in, 1) % 9);
        ((uint16_t *)scales)[at] = type == 1 ? h[i] : b[i];
        return type == 1 ? f16_value(h[i]) : bf16_value(b[i]);
    }
    const float f = take_float(in, specials && sel % 32 == 1) * (sel & 32 ? 0.05f : 0.5f);
    if (type == 0) {
        ((float *)scales)[at] = f;
        return (double)f;
    }
    uint16_t bits;
    if (type == 1) {
        bits = f16_bits(f);
    } else {
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = (uint16_t)(u >> 16);
    }
    ((uint16_t *)scales)[at] = bits;
    return type == 1 ? f16_value(bits) : bf16_value(bits);
}

/* QB4W's bound: the reference weights carry their scales. */
typedef struct qb4w_ref {
    int64_t nb; /* blocks per row */
    const float *bias;
} qb4w_ref;

static void qb4w_bound(const int4_expect *e, int64_t c, double dot, double mag, double range,
                       double step, double *ref, double *tol, int *overflow) {
    const qb4w_ref *q = e->user;
    const int64_t nb = q->nb;
    *ref = dot + (double)q->bias[c];
    /* half a quantization step per value; the f32 steps (a fused multiply-add per
     * block, the zero-point correction, the activation scale, the bias) each round
     * within an ulp of at most range * sum |w|; float rounding of the result */
    *tol = e->absrow[c] * step * 0.5 + mag * 1e-5 + (double)(nb + 8) * 1.2e-7 * range * e->absrow[c] +
           fabs(*ref) * 1e-6 + 1e-30;
    /* the per-block sums and the zero-point correction come before the activation
     * scale: each is at most 256 * sum |w| */
    *overflow = 512.0 * e->absrow[c] >= 0.5 * FLT_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    const unsigned shape_sel = (unsigned)take(&in, 1);
    int64_t N = 1 + (int64_t)(take(&in, 1) % 96), K = 1 + (int64_t)(take(&in, 2) % 300);
    if (shape_sel % 64 == 0) N = 0;
    if (shape_sel % 64 == 1) K = -(int64_t)take(&in, 1);
    if (shape_sel % 64 == 2) N = (int64_t)(SIZE_MAX / 8 + 1 + take(&in, 1)); /* refused before reading */
    const int huge = N > 4096;

    /* block size: mostly a valid power of two, sometimes not */
    const unsigned bsel = (unsigned)take(&in, 1);
    static const int32_t bad_b[] = {0, -16, 1, 8, 24, 48, 512, 17, 255, 1024, INT32_MIN, -1};
    const int32_t B = bsel % 8 == 7 ? bad_b[take(&in, 1) % 12] : 16 << (bsel % 8 % 5);
    const int b_valid = B >= 16 && B <= 256 && (B & (B - 1)) == 0;

    /* scale type and zero kind */
    const unsigned tsel = (unsigned)take(&in, 1);
    const int type = (int)(tsel % 3);
    const int type_bad = tsel % 16 == 15;
    const int bad_type = (int)(take(&in, 1) % 8);
    const pw_dtype scale_type = !type_bad ? (pw_dtype)type : (pw_dtype)(tsel & 16 ? -1 - bad_type : 3 + bad_type);
    const unsigned zsel = (unsigned)take(&in, 1);
    int zero_kind = (int)(zsel % 3) + 1; /* CONST, U4, U8 (1, 2, 3; 0 names none) */
    int zp = zsel & 4 ? 8 : 0;
    if (zsel % 16 == 15) zero_kind = (int)(take(&in, 1) % 8) - 2; /* -2 .. 5: some invalid */
    if (zsel % 16 == 14) zp = (int)(take(&in, 1) % 24) - 4;        /* -4 .. 19: mostly invalid */
    const int u8_high = (zsel >> 5) & 1; /* U8 zero points may pass 15 */

    const unsigned mode = (unsigned)take(&in, 1);
    uint32_t flags = mode & 1 ? PW_QB4W_TRANSPOSED : 0;
    if (mode % 29 == 0) flags |= 1u << (take(&in, 1) % 31 + 1);
    const int has_bias = (mode >> 1) & 1, specials = (mode >> 2) & 1;
    const int isa_sel = (int)((mode >> 3) % 4);
    const int null_sel = mode >> 5 == 7 ? (int)(take(&in, 1) % 4) : 0; /* 1 data, 2 scales, 3 zeros */
    const unsigned opt = (unsigned)take(&in, 1);
    const int64_t n = 1 + (int64_t)(take(&in, 1) % 5);

    pw_context *ctx = int4_context(isa_sel);
    if (ctx == NULL) return 0;

    /* The raw arrays, laid out as the descriptor says (one value each for a huge N or a
     * bad shape or block size). */
    const int small = !huge && N >= 1 && K >= 1 && b_valid;
    const int transposed = (flags & PW_QB4W_TRANSPOSED) != 0;
    const int64_t rows = small ? (transposed ? K : N) : 1;
    const int64_t cols = small ? (transposed ? N : K) : 1;
    const int64_t row_bytes = (cols + 1) / 2;
    const int64_t data_bytes = rows * row_bytes;
    const int64_t nch = small ? N : 1;
    const int64_t nb = small ? (K + B - 1) / B : 1;
    const int64_t zrow = zero_kind == PW_QB4W_ZERO_U4 ? (nb + 1) / 2 : nb;
    uint8_t *w_bytes = malloc((size_t)data_bytes);
    void *scales = malloc(4 * (size_t)(nch * nb));
    uint8_t *zeros = malloc((size_t)(nch * zrow));
    float *bias = malloc(sizeof(float) * (size_t)nch);
    double *sv = malloc(sizeof(double) * (size_t)(nch * nb));
    PROPERTY(w_bytes && scales && zeros && bias && sv);
    for (int64_t i = 0; i < data_bytes; ++i) w_bytes[i] = (uint8_t)take(&in, 1);
    int finite = 1, zeros_ok = 1;
    for (int64_t i = 0; i < nch * nb; ++i) {
        sv[i] = put_scale(&in, scales, type, i, specials);
        finite &= isfinite(sv[i]);
    }
    for (int64_t i = 0; i < nch * zrow; ++i) {
        const uint8_t z = (uint8_t)take(&in, 1);
        zeros[i] = zero_kind == PW_QB4W_ZERO_U8 && !(u8_high && z % 8 == 0) ? z % 16 : z;
        if (zero_kind == PW_QB4W_ZERO_U8) zeros_ok &= zeros[i] <= 15;
    }
    for (int64_t i = 0; i < nch; ++i) {
        bias[i] = has_bias ? take_float(&in, specials) : 0.0f;
        finite &= isfinite(bias[i]);
    }

    pw_qb4w_weights w;
    pw_qb4w_weights_init(&w);
    w.out = N;
    w.in = K;
    w.block_size = B;
    w.data = null_sel == 1 ? NULL : w_bytes;
    w.scales = null_sel == 2 ? NULL : scales;
    w.scale_type = scale_type;
    w.zero_kind = (pw_qb4w_zero)zero_kind;
    w.zero_point = zp;
    w.zero_points = null_sel == 3 || (zero_kind == PW_QB4W_ZERO_CONST && !(zsel & 8)) ? NULL : zeros;
    w.bias = has_bias ? bias : NULL;
    w.flags = flags;
    w.name = "fuzz";

    pw_weight_options o;
    const int clamp = int4_options(&in, opt, &o);
    /* a bias in the options: alone it is the weight's; with the descriptor's, refused */
    const int opt_bias = (opt >> 6) & 1 && (shape_sel >> 6) & 1;
    float *obias = malloc(sizeof(float) * (size_t)nch);
    PROPERTY(obias);
    for (int64_t i = 0; i < nch; ++i) obias[i] = opt_bias ? take_float(&in, 0) : 0.0f;
    if (opt_bias) o.bias = obias;
    const int forced = (opt >> 6) & 1 && !opt_bias ? int4_force_kernel(&in, &o, PW_WEIGHT_QB4W) : 0;

    pw_weight *wt = (pw_weight *)&w; /* not NULL: a refusal must clear it */
    const pw_status st = pw_weight_create_qb4w(ctx, &w, &o, &wt);
    const int valid = N >= 1 && K >= 1 && !huge && b_valid &&
                      (scale_type == PW_DTYPE_F32 || scale_type == PW_DTYPE_F16 ||
                       scale_type == PW_DTYPE_BF16) &&
                      (zero_kind == PW_QB4W_ZERO_U4 || zero_kind == PW_QB4W_ZERO_U8 ||
                       (zero_kind == PW_QB4W_ZERO_CONST && (zp == 0 || zp == 8))) &&
                      (flags & ~(uint32_t)PW_QB4W_TRANSPOSED) == 0 && null_sel != 1 && null_sel != 2 &&
                      !(null_sel == 3 && zero_kind != PW_QB4W_ZERO_CONST) && finite &&
                      zeros_ok && !(clamp && !(o.min <= o.max)) && o.policy != PW_MEMORY_IN_PLACE &&
                      !(opt_bias && has_bias);
    if (st != PW_OK) {
        PROPERTY(wt == NULL && pw_context_message(ctx)[0] != '\0');
        /* a valid descriptor is refused only for a forced kernel that does not fit */
        PROPERTY(!valid || forced);
        free(w_bytes);
        free(scales);
        free(zeros);
        free(bias);
        free(obias);
        free(sv);
        pw_context_destroy(ctx);
        return 0;
    }
    PROPERTY(valid && wt != NULL);

    /* The reference, from the raw arrays, before they are freed: w = s * (u - z). */
    const int const_signed = zero_kind == PW_QB4W_ZERO_CONST && zp == 0;
    double *wd = malloc(sizeof(double) * (size_t)(N * K));
    double *absrow = malloc(sizeof(double) * (size_t)N);
    PROPERTY(wd && absrow);
    for (int64_t r = 0; r < N; ++r) {
        absrow[r] = 0;
        for (int64_t c = 0; c < K; ++c) {
            const int64_t rr = transposed ? c : r, cc = transposed ? r : c;
            const uint8_t byte = w_bytes[rr * row_bytes + cc / 2];
            int u = (cc & 1) ? byte >> 4 : byte & 15;
            const int64_t b = c / B;
            int z = 8;
            if (const_signed) u ^= 8;
            if (zero_kind == PW_QB4W_ZERO_U4) z = (zeros[r * zrow + b / 2] >> ((b & 1) * 4)) & 15;
            if (zero_kind == PW_QB4W_ZERO_U8) z = zeros[r * nb + b];
            wd[r * K + c] = sv[r * nb + b] * (double)(u - z);
            absrow[r] += fabs(wd[r * K + c]);
        }
    }
    float *bias_keep = malloc(sizeof(float) * (size_t)N);
    PROPERTY(bias_keep);
    for (int64_t r = 0; r < N; ++r) bias_keep[r] = has_bias ? bias[r] : opt_bias ? obias[r] : 0.0f;
    /* copies for the second weight (the cache's key hashes the raw arrays as given) */
    uint8_t *w_copy = malloc((size_t)data_bytes), *z_copy = malloc((size_t)(N * zrow));
    void *s_copy = malloc(4 * (size_t)(N * nb));
    PROPERTY(w_copy && z_copy && s_copy);
    memcpy(w_copy, w_bytes, (size_t)data_bytes);
    memcpy(z_copy, zeros, (size_t)(N * zrow));
    memcpy(s_copy, scales, 4 * (size_t)(N * nb));
    /* borrowed only during the call: overwrite, then free */
    memset(w_bytes, 0x5a, (size_t)data_bytes);
    memset(scales, 0xff, 4 * (size_t)(N * nb));
    memset(zeros, 0xa5, (size_t)(N * zrow));
    for (int64_t i = 0; i < N; ++i) bias[i] = obias[i] = NAN;
    free(w_bytes);
    free(scales);
    free(zeros);
    free(bias);
    free(obias);

    const qb4w_ref qr = {nb, bias_keep};
    const int4_expect e = {wd, absrow, qb4w_bound, &qr};
    int4_run run = int4_run_products(ctx, wt, &in, n, K, N, specials, &o, clamp, &e);
    float *const x = run.x, *const y = run.y, *const y2 = run.y2;
    const uint32_t serves = run.serves;

    /* A second weight over the same raw weights (the copies) through one cache: the
     * first packs, the second is served, and both give the same bytes. */
    pw_cache *cache = NULL;
    if ((opt >> 7) & 1 && (serves & PW_SERVE_GEMV) && pw_cache_create(ctx, &cache) == PW_OK) {
        pw_qb4w_weights w2 = w;
        w2.data = w_copy;
        w2.scales = s_copy;
        w2.zero_points = w.zero_points != NULL ? z_copy : NULL;
        w2.bias = has_bias ? bias_keep : NULL;
        pw_weight_options o2 = o;
        o2.bias = opt_bias ? bias_keep : NULL;
        o2.cache = cache;
        pw_weight *a = NULL, *b = NULL;
        PROPERTY(pw_weight_create_qb4w(ctx, &w2, &o2, &a) == PW_OK);
        PROPERTY(pw_weight_create_qb4w(ctx, &w2, &o2, &b) == PW_OK);
        pw_weight_info ib;
        memset(&ib, 0, sizeof ib);
        ib.struct_size = sizeof ib;
        PROPERTY(pw_weight_info_get(b, &ib) == PW_OK && ib.from_cache == 1);
        PROPERTY(pw_matmul_wt(ctx, x, 1, a, y) == PW_OK);
        PROPERTY(pw_matmul_wt(ctx, x, 1, b, y2) == PW_OK);
        PROPERTY(memcmp(y, y2, sizeof(float) * (size_t)N) == 0);
        /* the first weight (no cache, raw arrays freed): the same kernel gives the same bits */
        PROPERTY(pw_matmul_wt(ctx, x, 1, wt, y) == PW_OK);
        if (strcmp(ib.kernel_gemv, run.info.kernel_gemv) == 0)
            PROPERTY(memcmp(y, y2, sizeof(float) * (size_t)N) == 0);
        pw_weight_destroy(a);
        pw_weight_destroy(b);
        pw_cache_close(cache);
    }

    pw_weight_destroy(wt);
    free(w_copy);
    free(z_copy);
    free(s_copy);
    int4_run_free(&run);
    free(wd);
    free(absrow);
    free(bias_keep);
    free(sv);
    pw_context_destroy(ctx);
    return 0;
}
