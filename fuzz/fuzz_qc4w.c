/*
 * libFuzzer target for QC4W descriptors (packwise/qc4w.h): raw weights of any
 * shape, zero point, flags, scales and biases (NaN, infinities, denormals and
 * huge values included), options (policy, clamp, served batch classes, a
 * forced kernel), the ISA cap, and activations with NaN or infinities in some
 * rows. It checks properties, not only "no crash":
 *
 * - pw_weight_create_qc4w() succeeds exactly when the descriptor is valid
 *   (N, K >= 1, zero point 0 or 8, no unknown flag, finite scales and biases,
 *   min <= max, not in place); a refusal leaves *out NULL and says why;
 * - every product agrees with a double-precision reference from the raw
 *   nibbles (read as the flags say: N x K or transposed) and the quantized
 *   activations' own error bound (QD8: half a step of the row's range), then
 *   the epilogue (bias, clamp); where the f32 product before the bias could pass
 *   FLT_MAX (huge scales), a result that is not finite is accepted, elsewhere a result
 *   is infinite only where the answer leaves the float range;
 * - a row of X holding a NaN or an infinity gives a row of NaN in Y (the
 *   clamp does not hide it), and other rows are unaffected;
 * - a second weight over the same raw weights through one pw_cache is served
 *   from the cache and gives the same bytes;
 * - the weight stays valid after the raw arrays are freed (they are borrowed
 *   only during the call: every buffer here is freed, or overwritten, first).
 * Sizes stay small (N <= 96, K <= 300, n <= 5) so a run does many inputs; the
 * overflow checks on huge N are reached with N past SIZE_MAX / 8 (refused
 * before any array is read). Built into the replay driver too (replay.c).
 */
#include "fuzz_int4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t nibble(const uint8_t *d, int64_t row_bytes, int64_t r, int64_t c, int zp) {
    const uint8_t b = d[r * row_bytes + c / 2];
    const int v = (c & 1) ? b >> 4 : b & 15;
    return zp == 8 ? v - 8 : (v >= 8 ? v - 16 : v);
}

/* QC4W's bound: the reference weights are the nibbles, scaled per channel here. */
typedef struct qc4w_ref {
    const float *scale, *bias;
} qc4w_ref;

static void qc4w_bound(const int4_expect *e, int64_t c, double dot, double mag, double range,
                       double step, double *ref, double *tol, int *overflow) {
    const qc4w_ref *q = e->user;
    (void)range;
    *ref = dot * (double)q->scale[c] + (double)q->bias[c];
    /* half a quantization step per value, plus float rounding of the result */
    *tol = fabs((double)q->scale[c]) * (e->absrow[c] * step * 0.5 + mag * 1e-5) + fabs(*ref) * 1e-5 + 1e-30;
    /* the contract's f32 steps scale the integer sum before adding the bias: with a huge
     * scale that product may leave the float range though the answer, after a bias of the
     * other sign, does not */
    *overflow = fabs((double)q->scale[c]) * (mag + e->absrow[c] * step) >= 0.5 * FLT_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    const unsigned shape_sel = (unsigned)take(&in, 1);
    int64_t N = 1 + (int64_t)(take(&in, 1) % 96), K = 1 + (int64_t)(take(&in, 2) % 300);
    if (shape_sel % 64 == 0) N = 0;
    if (shape_sel % 64 == 1) K = -(int64_t)take(&in, 1);
    if (shape_sel % 64 == 2) N = (int64_t)(SIZE_MAX / 8 + 1 + take(&in, 1)); /* refused before reading */
    const unsigned mode = (unsigned)take(&in, 1);
    const int zp = mode % 16 == 0 ? (int)(take(&in, 1) % 10) : (mode & 1 ? 8 : 0);
    uint32_t flags = (mode >> 1) & 1 ? PW_QC4W_TRANSPOSED : 0;
    if (mode % 29 == 0) flags |= 1u << (take(&in, 1) % 31 + 1);
    const int has_bias = (mode >> 2) & 1, specials = (mode >> 3) & 1;
    const int isa_sel = (int)((mode >> 4) % 4);
    const unsigned opt = (unsigned)take(&in, 1);
    const int64_t n = 1 + (int64_t)(take(&in, 1) % 5);

    pw_context *ctx = int4_context(isa_sel);
    if (ctx == NULL) return 0;

    const int huge = N > 4096;
    const int64_t rows = flags & PW_QC4W_TRANSPOSED ? (huge ? 1 : K) : (huge ? 1 : N);
    const int64_t cols = flags & PW_QC4W_TRANSPOSED ? (huge ? 1 : N) : (huge ? 1 : K);
    const int64_t row_bytes = cols > 0 ? (cols + 1) / 2 : 0;
    const int64_t nb = rows > 0 && row_bytes > 0 ? rows * row_bytes : 1;
    const int64_t nch = huge || N < 1 ? 1 : N;
    uint8_t *w_bytes = malloc((size_t)nb);
    float *scale = malloc(sizeof(float) * (size_t)nch);
    float *bias = malloc(sizeof(float) * (size_t)nch);
    PROPERTY(w_bytes && scale && bias);
    for (int64_t i = 0; i < nb; ++i) w_bytes[i] = (uint8_t)take(&in, 1);
    int finite = 1;
    for (int64_t i = 0; i < nch; ++i) {
        scale[i] = take_float(&in, specials) * 0.05f;
        bias[i] = has_bias ? take_float(&in, specials) : 0.0f;
        finite &= isfinite(scale[i]) && isfinite(bias[i]);
    }

    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    w.out = N;
    w.in = K;
    w.data = w_bytes;
    w.scale = scale;
    w.bias = has_bias ? bias : NULL;
    w.zero_point = zp;
    w.flags = flags;
    w.name = "fuzz";

    pw_weight_options o;
    const int clamp = int4_options(&in, opt, &o);
    const int forced = (opt >> 6) & 1 ? int4_force_kernel(&in, &o, PW_WEIGHT_QC4W) : 0;

    pw_weight *wt = NULL;
    const pw_status st = pw_weight_create_qc4w(ctx, &w, &o, &wt);
    const int valid = N >= 1 && K >= 1 && !huge && (zp == 0 || zp == 8) &&
                      (flags & ~(uint32_t)PW_QC4W_TRANSPOSED) == 0 && finite &&
                      !(clamp && !(o.min <= o.max)) && o.policy != PW_MEMORY_IN_PLACE;
    if (st != PW_OK) {
        PROPERTY(wt == NULL && pw_context_message(ctx)[0] != '\0');
        /* a valid descriptor is refused only for a forced kernel that does not fit */
        PROPERTY(!valid || forced);
        free(w_bytes);
        free(scale);
        free(bias);
        pw_context_destroy(ctx);
        return 0;
    }
    PROPERTY(valid && wt != NULL);

    /* The reference, from the raw nibbles, before they are freed. */
    double *wd = malloc(sizeof(double) * (size_t)(N * K));
    double *absrow = malloc(sizeof(double) * (size_t)N);
    PROPERTY(wd && absrow);
    for (int64_t r = 0; r < N; ++r) {
        absrow[r] = 0;
        for (int64_t c = 0; c < K; ++c) {
            const int64_t q = flags & PW_QC4W_TRANSPOSED ? nibble(w_bytes, row_bytes, c, r, zp)
                                                         : nibble(w_bytes, row_bytes, r, c, zp);
            wd[r * K + c] = (double)q;
            absrow[r] += fabs((double)q);
        }
    }
    const float *bias_used = has_bias ? bias : NULL;
    float *scale_keep = malloc(sizeof(float) * (size_t)N), *bias_keep = malloc(sizeof(float) * (size_t)N);
    PROPERTY(scale_keep && bias_keep);
    memcpy(scale_keep, scale, sizeof(float) * (size_t)N);
    for (int64_t r = 0; r < N; ++r) bias_keep[r] = bias_used ? bias_used[r] : 0.0f;
    /* borrowed only during the call: overwrite, then free */
    memset(w_bytes, 0x5a, (size_t)nb);
    for (int64_t i = 0; i < N; ++i) scale[i] = bias[i] = NAN;
    free(w_bytes);
    free(scale);
    free(bias);

    const qc4w_ref qr = {scale_keep, bias_keep};
    const int4_expect e = {wd, absrow, qc4w_bound, &qr};
    int4_run run = int4_run_products(ctx, wt, &in, n, K, N, specials, &o, clamp, &e);
    float *const x = run.x, *const y = run.y, *const y2 = run.y2;
    const uint32_t serves = run.serves;

    /* A second weight over the same raw weights through one cache: served, the same bytes.
     * (The raw arrays are gone, so the first weight's are rebuilt from the reference.) */
    pw_cache *cache = NULL;
    if ((opt >> 7) & 1 && !forced && (serves & PW_SERVE_GEMV) && pw_cache_create(ctx, &cache) == PW_OK) {
        uint8_t *nib = calloc((size_t)(N * ((K + 1) / 2)), 1);
        PROPERTY(nib);
        for (int64_t r = 0; r < N; ++r)
            for (int64_t c = 0; c < K; ++c) {
                const int v = (int)wd[r * K + c] + (zp == 8 ? 8 : 0);
                nib[r * ((K + 1) / 2) + c / 2] |= (uint8_t)((v & 15) << ((c & 1) * 4));
            }
        pw_qc4w_weights w2 = w;
        w2.data = nib;
        w2.flags = 0;
        w2.scale = scale_keep;
        w2.bias = has_bias ? bias_keep : NULL;
        pw_weight_options o2 = o;
        o2.cache = cache;
        pw_weight *a = NULL, *b = NULL;
        PROPERTY(pw_weight_create_qc4w(ctx, &w2, &o2, &a) == PW_OK);
        PROPERTY(pw_weight_create_qc4w(ctx, &w2, &o2, &b) == PW_OK);
        pw_weight_info ib;
        memset(&ib, 0, sizeof ib);
        ib.struct_size = sizeof ib;
        PROPERTY(pw_weight_info_get(b, &ib) == PW_OK && ib.from_cache == 1);
        PROPERTY(pw_matmul_wt(ctx, x, 1, wt, y) == PW_OK);
        PROPERTY(pw_matmul_wt(ctx, x, 1, b, y2) == PW_OK);
        /* the same kernel over the same packed bytes: the same answer, bit for bit */
        if (strcmp(ib.kernel_gemv, run.info.kernel_gemv) == 0)
            PROPERTY(memcmp(y, y2, sizeof(float) * (size_t)N) == 0);
        pw_weight_destroy(a);
        pw_weight_destroy(b);
        pw_cache_close(cache);
        free(nib);
    }

    pw_weight_destroy(wt);
    int4_run_free(&run);
    free(wd);
    free(absrow);
    free(scale_keep);
    free(bias_keep);
    pw_context_destroy(ctx);
    return 0;
}
