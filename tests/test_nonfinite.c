/*
 * Non-finite activations, every kernel (weight.h, "Non-finite activations"; issue 13):
 * a row of X holding a NaN or an infinity gives a row of NaN in Y, for every kernel
 * this ISA level checks (at native every usable one, at a forced level its own:
 * pw_test_forced_level, kernel_oracle.h) and every weight kind, clamp or not; the other rows are
 * bit for bit what they are with the bad values replaced by finite ones. int8
 * kernels would otherwise quantize a NaN into finite, plausible numbers (0.1 did).
 *
 * Each kernel is forced on a weight of its kind (block formats: 37 rows, 4 blocks of
 * 256 values per row, so a tile and a part tile and several blocks per row; QC4W: 37
 * channels, K = 300) and run at n = 3 (row 0 finite, row 1 with a NaN, row 2 with
 * +Inf) and at n = 1 (a -Inf), the latter where the kernel serves one row.
 */
#include "kernel_oracle.h"
#include "pw_test.h"

#include <math.h>

enum { OUT = 37, IN = 1024, QK = 300, N = 3 };

static void fill(float *x, int64_t count, uint64_t seed) {
    pw_rng r = {seed};
    for (int64_t i = 0; i < count; ++i) x[i] = (float)pw_rng_gauss(&r);
}

/* Run w at n = 3 with bad values in rows 1 and 2, and again with them replaced; check. */
static int check_weight(pw_context *ctx, const pw_weight *w, const char *kernel, int64_t in,
                        int64_t out) {
    float *x = malloc(sizeof(float) * (size_t)(N * in)), *clean = malloc(sizeof(float) * (size_t)(N * in));
    float *y = malloc(sizeof(float) * (size_t)(N * out)), *yc = malloc(sizeof(float) * (size_t)(N * out));
    REQUIRE(x && clean && y && yc, "malloc");
    fill(clean, N * in, 11);
    memcpy(x, clean, sizeof(float) * (size_t)(N * in));
    x[1 * in + 5] = NAN;
    x[2 * in + in - 3] = INFINITY;
    int checked = 0;
    const pw_status st = pw_matmul_wt(ctx, x, N, w, y);
    if (st == PW_OK) {
        CHECK_OK(pw_matmul_wt(ctx, clean, N, w, yc), ctx);
        CHECK(memcmp(y, yc, sizeof(float) * (size_t)out) == 0,
              "%s: the finite row changed when other rows held NaN or Inf", kernel);
        int nan_rows = 0;
        for (int64_t i = 1; i < N; ++i) {
            int all = 1;
            for (int64_t o = 0; o < out; ++o) all &= isnan(y[i * out + o]) != 0;
            nan_rows += all;
        }
        CHECK(nan_rows == 2, "%s: %d of the 2 rows with NaN or Inf in X are NaN in Y", kernel,
              nan_rows);
        ++checked;
    }
    /* one row: -Inf */
    x[0 * in + 17] = -INFINITY;
    const pw_status s1 = pw_matmul_wt(ctx, x, 1, w, y);
    if (s1 == PW_OK) {
        int all = 1;
        for (int64_t o = 0; o < out; ++o) all &= isnan(y[o]) != 0;
        CHECK(all, "%s: a row with -Inf at n = 1 is not all NaN", kernel);
        ++checked;
    }
    CHECK(st == PW_OK || s1 == PW_OK, "%s serves neither n = 1 nor n = 3: %s", kernel,
          pw_context_message(ctx));
    free(x);
    free(clean);
    free(y);
    free(yc);
    return checked;
}

static int block_kernel(pw_context *ctx, const pw_kernel_info *k, int clamp) {
    const pw_format_info *fi = pw_format_get(k->format);
    const int64_t blocks = (int64_t)OUT * IN / fi->block_size;
    float *wf = malloc(sizeof(float) * (size_t)(OUT * IN));
    uint8_t *wb = malloc((size_t)blocks * (size_t)fi->block_bytes);
    REQUIRE(wf && wb, "malloc");
    fill(wf, OUT * IN, 5 + (uint64_t)k->format);
    CHECK_OK(pw_format_quantize(ctx, k->format, wf, (size_t)blocks, wb), ctx);
    pw_view v;
    pw_test_view_for(ctx, k->layout, k->format, OUT, IN, wb, (uint64_t)blocks * (uint64_t)fi->block_bytes, &v);
    v.name = "w";
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.kernel = k->name;
    o.policy = PW_MEMORY_FASTEST;
    if (clamp) {
        o.min = -0.5f;
        o.max = 0.5f;
    }
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, &o, &w), ctx);
    const int n = w ? check_weight(ctx, w, k->name, IN, OUT) : 0;
    pw_weight_destroy(w);
    free(wf);
    free(wb);
    return n;
}

/* The raw int4 kinds' options: kernel k forced, the clamp when asked. */
static void raw_options(pw_weight_options *o, const pw_kernel_info *k, int clamp) {
    pw_weight_options_init(o);
    o->kernel = k->name;
    if (clamp) {
        o->min = -0.5f;
        o->max = 0.5f;
    }
}

static int qc4w_kernel(pw_context *ctx, const pw_kernel_info *k, int clamp) {
    const int64_t rb = (QK + 1) / 2;
    uint8_t *nib = malloc((size_t)(OUT * rb));
    float scale[OUT], bias[OUT];
    REQUIRE(nib, "malloc");
    pw_rng r = {99};
    for (int64_t i = 0; i < OUT * rb; ++i) nib[i] = (uint8_t)pw_rng_next(&r);
    for (int i = 0; i < OUT; ++i) {
        scale[i] = 0.01f + 0.001f * (float)i;
        bias[i] = 0.1f * (float)(i % 5) - 0.2f;
    }
    pw_qc4w_weights q;
    pw_qc4w_weights_init(&q);
    q.out = OUT;
    q.in = QK;
    q.data = nib;
    q.scale = scale;
    q.bias = bias;
    q.zero_point = 8;
    q.name = "qc4w";
    pw_weight_options o;
    raw_options(&o, k, clamp);
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create_qc4w(ctx, &q, &o, &w), ctx);
    const int n = w ? check_weight(ctx, w, k->name, QK, OUT) : 0;
    pw_weight_destroy(w);
    free(nib);
    return n;
}

/* QB4W: blocks of 16 with 4-bit zero points, so a row holds several blocks and a part one. */
static int qb4w_kernel(pw_context *ctx, const pw_kernel_info *k, int clamp) {
    const int64_t rb = (QK + 1) / 2, nb = (QK + 15) / 16;
    uint8_t *nib = malloc((size_t)(OUT * rb)), *zp = malloc((size_t)(OUT * ((nb + 1) / 2)));
    float *scale = malloc(sizeof(float) * (size_t)(OUT * nb)), bias[OUT];
    REQUIRE(nib && zp && scale, "malloc");
    pw_rng r = {77};
    for (int64_t i = 0; i < OUT * rb; ++i) nib[i] = (uint8_t)pw_rng_next(&r);
    for (int64_t i = 0; i < OUT * ((nb + 1) / 2); ++i) zp[i] = (uint8_t)pw_rng_next(&r);
    for (int64_t i = 0; i < OUT * nb; ++i) scale[i] = 0.01f + 0.0001f * (float)i;
    for (int i = 0; i < OUT; ++i) bias[i] = 0.1f * (float)(i % 5) - 0.2f;
    pw_qb4w_weights q;
    pw_qb4w_weights_init(&q);
    q.out = OUT;
    q.in = QK;
    q.block_size = 16;
    q.data = nib;
    q.scales = scale;
    q.zero_kind = PW_QB4W_ZERO_U4;
    q.zero_points = zp;
    q.bias = bias;
    q.name = "qb4w";
    pw_weight_options o;
    raw_options(&o, k, clamp);
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create_qb4w(ctx, &q, &o, &w), ctx);
    const int n = w ? check_weight(ctx, w, k->name, QK, OUT) : 0;
    pw_weight_destroy(w);
    free(nib);
    free(zp);
    free(scale);
    return n;
}

int main(void) {
    pw_context *ctx = pw_test_context();
    int kernels = 0, blocks_seen = 0, qc4w_seen = 0, checks = 0;
    const char *level[PW_WEIGHT_QB4W + 1]; /* per weight kind (pw_weight_kind 0 .. QB4W) */
    for (int kind = 0; kind <= PW_WEIGHT_QB4W; ++kind)
        level[kind] = pw_test_forced_level(ctx, (pw_weight_kind)kind);
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        if (k == NULL || !pw_kernel_usable(ctx, i) || !pw_test_at_level(level[k->kind], pw__kernel_list_get(i)))
            continue;
        ++kernels;
        for (int clamp = 0; clamp < 2; ++clamp) {
            if (k->kind == PW_WEIGHT_QC4W) {
                checks += qc4w_kernel(ctx, k, clamp);
                qc4w_seen = 1;
            } else if (k->kind == PW_WEIGHT_QB4W) {
                checks += qb4w_kernel(ctx, k, clamp);
            } else {
                checks += block_kernel(ctx, k, clamp);
                blocks_seen = 1;
            }
        }
    }
    CHECK(kernels > 0 && blocks_seen && qc4w_seen, "%d kernels checked (block formats %d, QC4W %d)",
          kernels, blocks_seen, qc4w_seen);
    printf("%d kernels checked at %s, %d runs checked\n", kernels, pw_isa_name(pw_context_isa(ctx)),
           checks);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
