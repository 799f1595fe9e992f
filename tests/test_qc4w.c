/*
 * The QC4W kernels this PACKWISE_ISA level checks (at native every usable one, at a
 * forced level its own: pw_test_forced_level, kernel_oracle.h) against the oracle
 * (pw__qc4w_reference: plain loops over the raw weights, integer sum from
 * (q - zp) * w without weight sums), over the matrix:
 *   K in {1, 31, 32, 33, 100, 4096}, N in {1, nr-1, nr, nr+1, 3nr+5},
 *   batch in {1, mr-1, mr, mr+1, 37, 2mr+2}, zero point 0 and 8, transposed and
 *   not, with and without bias, clamp active; f32 or f16 out (alternating
 *   over the shapes, so each variant meets both).
 *
 * Integer accumulation: with unit scales, zero bias and no clamp, y is the
 * integer sum itself (|sum| <= 255 * 8 * 4096 < 2^24, so exact in f32) and
 * must equal the sum computed here in int64 from the raw nibbles.
 * Float result: tolerance 0. Every kernel performs the contract's f32 steps
 * (scale product, multiply, add bias, clamp; no fused multiply-add) in the
 * same order as the oracle, so equal integer sums give equal bits; f16 out
 * rounds the same f32 to nearest even.
 * The packed bytes come from the library's packer (tested separately in
 * test_qc4w_pack.c), a transposed source through its nibble conversion.
 *
 * PW_TEST_QC4W_KERNEL=<name> (tests/sme.cmake: the SME families, each under
 * qemu at its own streaming vector length) makes the run fail unless that
 * kernel was usable and tested; for an SME kernel, also unless its tile ran
 * as outer products (not the portable fallback).
 */
// pw-test: tsan tunes
#include "kernel_oracle.h"
#include "pw_test.h"

#include "format/blocks.h"
#include "kernel/qc4w.h"

#include <math.h>

static int g_cases;

typedef struct weights {
    pw_qc4w_weights w;
    uint8_t *data, *nk; /* as given; N x K form for the packer */
    float *scale, *bias;
} weights;

static void make_weights(weights *t, int64_t n, int64_t k, int zp, int transposed, int with_bias,
                         int unit, pw_rng *r) {
    pw_qc4w_weights_init(&t->w);
    t->w.out = n;
    t->w.in = k;
    t->w.zero_point = zp;
    t->w.flags = transposed ? PW_QC4W_TRANSPOSED : 0;
    const int64_t rows = transposed ? k : n, stride = transposed ? (n + 1) / 2 : (k + 1) / 2;
    t->data = malloc((size_t)(rows * stride));
    for (int64_t i = 0; i < rows * stride; ++i) t->data[i] = (uint8_t)pw_rng_next(r);
    const int64_t nk_stride = (k + 1) / 2;
    t->nk = calloc((size_t)(n * nk_stride), 1);
    if (transposed)
        pw__qc4w_transpose_rows(t->data, k, n, 0, n, t->nk);
    else
        memcpy(t->nk, t->data, (size_t)(n * nk_stride));
    t->scale = malloc(sizeof(float) * (size_t)n);
    t->bias = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        t->scale[i] = unit ? 1.0f : (float)(pw_rng_gauss(r) * 0.02);
        t->bias[i] = unit ? 0.0f : (float)pw_rng_gauss(r);
    }
    t->w.data = t->data;
    t->w.scale = t->scale;
    t->w.bias = with_bias ? t->bias : NULL;
}

static void free_weights(weights *t) {
    free(t->data);
    free(t->nk);
    free(t->scale);
    free(t->bias);
}

/* QD8 rows made directly: scale 1, random q and zero point (the integer test). */
static uint8_t *make_lhs_int(int64_t batch, int64_t k, int64_t kp, pw_rng *r) {
    const size_t rb = pw__qd8_row_bytes(kp);
    uint8_t *lhs = aligned_alloc(64, rb * (size_t)batch);
    memset(lhs, 0, rb * (size_t)batch);
    for (int64_t m = 0; m < batch; ++m) {
        uint8_t *row = lhs + (size_t)m * rb;
        pw__qd8_header *h = (pw__qd8_header *)(void *)row;
        int8_t *q = (int8_t *)(row + sizeof *h);
        uint8_t *u = row + sizeof *h + kp;
        h->scale = 1.0f;
        /* Extremes included: all q = -128 with zp = 127 is the largest |sum|. */
        h->neg_zp = m == 0 ? -127 : (int32_t)(pw_rng_next(r) % 256) - 127;
        int32_t sum = 0;
        for (int64_t i = 0; i < kp; ++i) {
            const int v = i >= k ? 0 : (m == 0 ? -128 : (int)(pw_rng_next(r) % 256) - 128);
            q[i] = (int8_t)v;
            u[i] = (uint8_t)(v + 128);
            sum += v;
        }
        h->sum = sum;
    }
    return lhs;
}

static int same_f32(float a, float b) { return memcmp(&a, &b, 4) == 0; }

/* Pack for kernel k, run it, compare with the oracle; returns mismatches. */
static int check_kernel(pw_context *ctx, const pw__kernel *k, const weights *t, const uint8_t *lhs,
                        int64_t batch, float mn, float mx, int f16, const void *want,
                        const char *what) {
    const int64_t n = t->w.out, kk = t->w.in;
    pw__pack_desc d;
    CHECK_OK(k->pack_plan(ctx, k, PW_FORMAT_COUNT, n, kk, &d), ctx);
    uint8_t *p = aligned_alloc(64, (size_t)(d.bytes + 63) / 64 * 64);
    pw__qc4w_pack(&d, t->nk, t->w.zero_point, t->w.scale, t->w.bias, 0, n, p);
    const size_t esz = f16 ? 2 : 4;
    uint8_t *y = malloc(esz * (size_t)(batch * n));
    memset(y, 0xFF, esz * (size_t)(batch * n)); /* NaN in both widths */
    const size_t rb = pw__qd8_row_bytes(d.in_padded);
    uint8_t *panels = NULL;
    if (k->xq_panel > 0) {
        panels = malloc(pw__qd8_panels_bytes(batch, d.in_padded, k->xq_panel));
        pw__qd8_panel_rows(lhs, rb, d.in_padded, k->xq_panel, 0, batch, panels);
    }
    pw__mm_call c = {.out = n, .in = kk, .n = batch, .packed = p, .pack_desc = &d, .xq = lhs,
                     .xq_row_bytes = rb, .xq_panels = panels, .y = f16 ? NULL : (float *)(void *)y,
                     .y16 = f16 ? (uint16_t *)(void *)y : NULL, .ldy = n, .min = mn, .max = mx};
    CHECK_OK(pw__kernel_check_family(ctx, k, &d), ctx);
    pw__kernel_run(ctx, k, &c, NULL, NULL);
    free(panels);
    int bad = 0;
    for (int64_t m = 0; m < batch && bad < 3; ++m) {
        for (int64_t o = 0; o < n && bad < 3; ++o) {
            const size_t at = (size_t)(m * n + o);
            int ok;
            double got, ref;
            if (f16) {
                const uint16_t g = ((const uint16_t *)y)[at], w = ((const uint16_t *)want)[at];
                ok = g == w;
                got = pw__f16_to_f32(g);
                ref = pw__f16_to_f32(w);
            } else {
                const float g = ((const float *)y)[at], w = ((const float *)want)[at];
                ok = same_f32(g, w);
                got = g;
                ref = w;
            }
            if (!ok) {
                ++bad;
                CHECK(0, "%s %s: N=%lld K=%lld batch=%lld zp=%d%s%s%s y[%lld,%lld] = %.9g, oracle %.9g",
                      k->info.name, what, (long long)n, (long long)kk, (long long)batch,
                      (int)t->w.zero_point, t->w.flags ? " transposed" : "",
                      t->w.bias ? " bias" : "", f16 ? " f16" : "", (long long)m, (long long)o, got, ref);
            }
        }
    }
    ++g_cases;
    free(p);
    free(y);
    return bad;
}

/* Integer sums: unit scales, zero bias, no clamp -> y is the exact sum. */
static void integer_case(pw_context *ctx, const pw__kernel *k, int64_t n, int64_t kk,
                         int64_t batch, int zp, int transposed, pw_rng *r) {
    weights t;
    make_weights(&t, n, kk, zp, transposed, 0, 1, r);
    const int64_t kp = (kk + 31) / 32 * 32;
    uint8_t *lhs = make_lhs_int(batch, kk, kp, r);
    const size_t rb = pw__qd8_row_bytes(kp);
    float *want = malloc(sizeof(float) * (size_t)(batch * n));
    for (int64_t m = 0; m < batch; ++m) {
        const uint8_t *row = lhs + (size_t)m * rb;
        const int64_t zpa = -(int64_t)pw__qd8_hdr(row)->neg_zp;
        for (int64_t o = 0; o < n; ++o) {
            int64_t s = 0;
            for (int64_t q = 0; q < kk; ++q) {
                /* Decoded here from the raw bytes, in the given orientation. */
                const int64_t rr = transposed ? q : o, cc = transposed ? o : q;
                const int64_t stride = transposed ? (n + 1) / 2 : (kk + 1) / 2;
                const int nib = (t.data[rr * stride + cc / 2] >> (4 * (cc & 1))) & 15;
                const int w = zp == 8 ? nib - 8 : (nib >= 8 ? nib - 16 : nib);
                s += (pw__qd8_q(row)[q] - zpa) * w;
            }
            want[m * n + o] = (float)s;
        }
    }
    check_kernel(ctx, k, &t, lhs, batch, -INFINITY, INFINITY, 0, want, "integer");
    free(want);
    free(lhs);
    free_weights(&t);
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* One case of the matrix against every kernel with this nr and mr. */
static void matrix_case(pw_context *ctx, const pw__kernel *k, int64_t n, int64_t kk,
                        int64_t batch, int zp, int transposed, int with_bias, int f16, pw_rng *r) {
    weights t;
    make_weights(&t, n, kk, zp, transposed, with_bias, 0, r);
    const int64_t kp = (kk + 31) / 32 * 32;
    uint8_t *lhs = pw_test_qd8_rows(batch, kk, kp, r);
    const size_t rb = pw__qd8_row_bytes(kp);
    const size_t count = (size_t)(batch * n);
    float *free_y = malloc(sizeof(float) * count), *want = malloc(sizeof(float) * count);
    uint16_t *want16 = malloc(sizeof(uint16_t) * count);
    int8_t *scratch = malloc((size_t)kk);
    pw__qc4w_reference(&t.w, lhs, rb, batch, -INFINITY, INFINITY, 0, free_y, n, scratch);
    /* Clamp between the 20th and 80th percentiles so that it is active when there is a spread. */
    float *sorted = malloc(sizeof(float) * count);
    memcpy(sorted, free_y, sizeof(float) * count);
    qsort(sorted, count, sizeof(float), cmp_float);
    /* The bounds are values above the smallest and below the largest output, when there are. */
    size_t lo_at = count / 5, hi_at = count - 1 - count / 5;
    while (lo_at + 1 < count && sorted[lo_at] == sorted[0]) ++lo_at;
    while (hi_at > 0 && sorted[hi_at] == sorted[count - 1]) --hi_at;
    const float mn = sorted[lo_at], mx = sorted[hi_at] >= mn ? sorted[hi_at] : mn;
    /* The oracle's clamp and half conversion, applied here to its unclamped f32 result
     * (the contract clamps the same f32 value, then rounds it to half). */
    for (size_t i = 0; i < count; ++i) {
        const float v = free_y[i] < mn ? mn : free_y[i];
        want[i] = v > mx ? mx : v;
        want16[i] = pw__f32_to_f16(want[i]);
    }
    if (count >= 10 && sorted[0] < mn && mx < sorted[count - 1]) {
        int lo = 0, hi = 0;
        for (size_t i = 0; i < count; ++i) {
            lo += free_y[i] < mn && want[i] == mn;
            hi += free_y[i] > mx && want[i] == mx;
        }
        CHECK(lo > 0 && hi > 0, "clamp inactive: N=%lld K=%lld batch=%lld", (long long)n,
              (long long)kk, (long long)batch);
    }
    check_kernel(ctx, k, &t, lhs, batch, mn, mx, f16, f16 ? (const void *)want16 : want,
                 f16 ? "f16" : "f32");
    free(sorted);
    free(scratch);
    free(free_y);
    free(want);
    free(want16);
    free(lhs);
    free_weights(&t);
}

/*
 * The largest sums a kernel must hold: K = max_k (65536 for the SIMD kernels)
 * with every product at its extreme, u = 255 against w = -8 and u = 0 against
 * w = 7 (q = 127 and -128; zero points -128 and 127), so that 16 * sum u w
 * reaches -2^31 + 2^23 and the int32 lanes are used to the edge.
 */
static void extreme_case(pw_context *ctx, const pw__kernel *k) {
    const int64_t kk = k->max_in < 65536 ? k->max_in : 65536, n = k->nr, batch = 3;
    weights t;
    pw_qc4w_weights_init(&t.w);
    t.w.out = n;
    t.w.in = kk;
    const int64_t stride = kk / 2;
    t.data = malloc((size_t)(n * stride));
    /* Channel 0: all -8; channel 1: all 7; the rest alternate. */
    for (int64_t c = 0; c < n; ++c)
        memset(t.data + c * stride, c == 0 ? 0x88 : c == 1 ? 0x77 : 0x87, (size_t)stride);
    t.nk = t.data;
    t.scale = malloc(sizeof(float) * (size_t)n);
    t.bias = NULL;
    for (int64_t c = 0; c < n; ++c) t.scale[c] = 1.0f;
    t.w.data = t.data;
    t.w.scale = t.scale;
    const size_t rb = pw__qd8_row_bytes(kk);
    uint8_t *lhs = aligned_alloc(64, rb * (size_t)batch);
    memset(lhs, 0, rb * (size_t)batch);
    const int qv[3] = {127, -128, 127}, zp[3] = {-128, 127, 127};
    for (int m = 0; m < batch; ++m) {
        pw__qd8_header *h = (pw__qd8_header *)(void *)(lhs + (size_t)m * rb);
        h->scale = 1.0f;
        h->neg_zp = -zp[m];
        h->sum = (int32_t)(qv[m] * kk);
        memset(lhs + (size_t)m * rb + sizeof *h, (uint8_t)(int8_t)qv[m], (size_t)kk);
        memset(lhs + (size_t)m * rb + sizeof *h + kk, (uint8_t)(qv[m] + 128), (size_t)kk);
    }
    float *want = malloc(sizeof(float) * (size_t)(batch * n));
    for (int m = 0; m < batch; ++m)
        for (int64_t c = 0; c < n; ++c) {
            const int64_t w = c == 0 ? -8 : c == 1 ? 7 : 0; /* 0x87: -8 and 7 alternate */
            const int64_t s = c < 2 ? (qv[m] - zp[m]) * w * kk : (qv[m] - zp[m]) * (-1) * (kk / 2);
            want[m * n + c] = (float)s;
        }
    check_kernel(ctx, k, &t, lhs, batch, -INFINITY, INFINITY, 0, want, "extreme sums");
    free(want);
    free(lhs);
    free(t.data);
    free(t.scale);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_rng r = {2024};
    const int64_t ks[] = {1, 31, 32, 33, 100, 4096};
    int kernels = 0, expected_seen = 0;
    const char *expect = getenv("PW_TEST_QC4W_KERNEL");
    const char *level = pw_test_forced_level(ctx, PW_WEIGHT_QC4W);
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.kind != PW_WEIGHT_QC4W || !pw__kernel_usable(ctx, k) || !pw_test_at_level(level, k))
            continue;
        ++kernels;
        printf("%s\n", k->info.name);
        if (expect != NULL && strcmp(expect, k->info.name) == 0) expected_seen = 1;
#if defined(__aarch64__)
        if (k->sme_bytes != 0) {
            const int form = pw__qc4w_sme_mopa_form(k->sme_bytes);
            printf("  %d-bit SVL, outer products: %s\n", 8 * (int)k->sme_bytes,
                   form == 1 ? "the architecture's" : form == 2 ? "pairwise (qemu 7.2), half panels" : "none");
            CHECK(form == 1 || form == 2, "%s: the SME tile does not run here (form %d)", k->info.name, form);
        }
#endif
        extreme_case(ctx, k);
        const int64_t nr = k->nr, mr = k->info.tile_batch;
        const int64_t ns[] = {1, nr - 1 > 0 ? nr - 1 : 1, nr, nr + 1, 3 * nr + 5};
        const int64_t bs[] = {1, mr - 1 > 0 ? mr - 1 : 1, mr, mr + 1, 37, 2 * mr + 2};
        for (int threads = 1; threads <= 2; ++threads) {
            CHECK_OK(pw_context_set_threads(ctx, threads), ctx);
            for (size_t a = 0; a < 6; ++a)
                for (size_t b = 0; b < 5; ++b)
                    for (size_t c = 0; c < 6; ++c)
                        for (int v = 0; v < 8; ++v) {
                            /* Each thread count takes half of the variants, all of them together. */
                            if ((v + (int)(a + b + c)) % 2 != threads - 1) continue;
                            const int zp = (v & 1) ? 8 : 0, tr = (v >> 1) & 1, bias = (v >> 2) & 1;
                            /* f16 out on every other case of each variant. */
                            const int f16 = (int)((a + b + c) / 2 % 2);
                            matrix_case(ctx, k, ns[b], ks[a], bs[c], zp, tr, bias, f16, &r);
                            if (v < 2) integer_case(ctx, k, ns[b], ks[a], bs[c], zp, tr, &r);
                        }
        }
    }
    printf("%d kernels, %d cases\n", kernels, g_cases);
    CHECK(kernels >= 1, "no usable QC4W kernel");
    CHECK(expect == NULL || expected_seen, "PW_TEST_QC4W_KERNEL=%s was not usable here", expect);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
