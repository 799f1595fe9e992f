// pw-test: tsan
/*
 * pw_matmul_wt_many (weight.h): several weights over one X, quantized once per
 * activation form and run in one dispatch, give each Y bit for bit as pw_matmul_wt
 * gives it alone. Weights of every kind a layer mixes (Q4_0, Q4_K, Q6_K, Q8_0, F16 and
 * QC4W: four activation forms), some with bias and clamp, one with a padded ldy; n = 1,
 * 3 and 37 (a NaN row in one case); one and two threads (the products split across the
 * pool in one dispatch). Refusals: another row length, an unserved batch class, NULL
 * arguments, and Y untouched then.
 */
#include "pw_test.h"

#include <math.h>

enum { IN = 1024, NW = 6, MAXN = 37 };

typedef struct layer {
    pw_weight *w[NW];
    int64_t out[NW];
    uint8_t *bytes[NW];
} layer;

static pw_weight *block_weight(pw_context *ctx, pw_format f, int64_t out, uint64_t seed, int bias_clamp,
                               uint8_t **keep) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t blocks = out * IN / fi->block_size;
    float *wf = malloc(sizeof(float) * (size_t)(out * IN));
    uint8_t *wb = malloc((size_t)blocks * (size_t)fi->block_bytes);
    REQUIRE(wf && wb, "malloc");
    pw_rng r = {seed};
    for (int64_t i = 0; i < out * IN; ++i) wf[i] = (float)pw_rng_gauss(&r) * 0.05f;
    CHECK_OK(pw_format_quantize(ctx, f, wf, (size_t)blocks, wb), ctx);
    free(wf);
    pw_view v;
    const int64_t shape[2] = {out, IN};
    CHECK_OK(pw_view_init(ctx, &v, f, 2, shape, PW_LAYOUT_ROW_MAJOR, wb,
                          (uint64_t)blocks * (uint64_t)fi->block_bytes), ctx);
    v.name = fi->name;
    pw_weight_options o;
    pw_weight_options_init(&o);
    float *bias = NULL;
    if (bias_clamp) {
        bias = malloc(sizeof(float) * (size_t)out);
        REQUIRE(bias, "malloc");
        for (int64_t i = 0; i < out; ++i) bias[i] = 0.01f * (float)(i % 11) - 0.05f;
        o.bias = bias;
        o.min = -0.3f;
        o.max = 0.4f;
    }
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, &o, &w), ctx);
    CHECK_OK(pw_weight_prepare(ctx, w), ctx);
    free(bias);
    *keep = wb; /* a plan may read the source in place */
    return w;
}

static pw_weight *qc4w_weight(pw_context *ctx, int64_t out) {
    const int64_t rb = IN / 2;
    uint8_t *nib = malloc((size_t)(out * rb));
    float *scale = malloc(sizeof(float) * (size_t)out), *bias = malloc(sizeof(float) * (size_t)out);
    REQUIRE(nib && scale && bias, "malloc");
    pw_rng r = {4242};
    for (int64_t i = 0; i < out * rb; ++i) nib[i] = (uint8_t)pw_rng_next(&r);
    for (int64_t i = 0; i < out; ++i) {
        scale[i] = 0.002f + 0.0001f * (float)(i % 13);
        bias[i] = 0.02f * (float)(i % 3);
    }
    pw_qc4w_weights q;
    pw_qc4w_weights_init(&q);
    q.out = out;
    q.in = IN;
    q.data = nib;
    q.scale = scale;
    q.bias = bias;
    q.zero_point = 8;
    q.name = "qc4w";
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create_qc4w(ctx, &q, NULL, &w), ctx);
    free(nib);
    free(scale);
    free(bias);
    return w;
}

static void make_layer(pw_context *ctx, layer *l) {
    static const pw_format formats[5] = {PW_FORMAT_Q4_0, PW_FORMAT_Q4_K, PW_FORMAT_Q6_K,
                                         PW_FORMAT_Q8_0, PW_FORMAT_F16};
    static const int64_t outs[NW] = {96, 64, 33, 130, 40, 75};
    memset(l, 0, sizeof *l);
    for (int i = 0; i < 5; ++i) {
        l->out[i] = outs[i];
        l->w[i] = block_weight(ctx, formats[i], outs[i], 100 + (uint64_t)i, i % 2, &l->bytes[i]);
    }
    l->out[5] = outs[5];
    l->w[5] = qc4w_weight(ctx, outs[5]);
}

static void free_layer(layer *l) {
    for (int i = 0; i < NW; ++i) {
        pw_weight_destroy(l->w[i]);
        free(l->bytes[i]);
    }
}

static void check_many(pw_context *ctx, const layer *l, int64_t n, int nan_row) {
    float *x = malloc(sizeof(float) * (size_t)(n * IN));
    REQUIRE(x, "malloc");
    pw_rng r = {7 + (uint64_t)n};
    for (int64_t i = 0; i < n * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    if (nan_row) x[(n - 1) * IN + 9] = NAN;
    pw_product p[NW];
    float *want[NW];
    for (int k = 0; k < NW; ++k) {
        const int64_t ldy = k == 2 ? l->out[k] + 5 : 0; /* one padded output */
        const int64_t rows_y = ldy ? ldy : l->out[k];
        p[k].weight = l->w[k];
        p[k].ldy = ldy;
        p[k].y = malloc(sizeof(float) * (size_t)(n * rows_y));
        want[k] = malloc(sizeof(float) * (size_t)(n * l->out[k]));
        REQUIRE(p[k].y && want[k], "malloc");
        for (int64_t i = 0; i < n * rows_y; ++i) p[k].y[i] = -7.0f; /* padding stays */
        CHECK_OK(pw_matmul_wt(ctx, x, n, l->w[k], want[k]), ctx);
    }
    CHECK_OK(pw_matmul_wt_many(ctx, x, n, 0, p, NW), ctx);
    for (int k = 0; k < NW; ++k) {
        const int64_t ldy = p[k].ldy ? p[k].ldy : l->out[k];
        int same = 1, pad = 1;
        for (int64_t i = 0; i < n; ++i) {
            same &= memcmp(p[k].y + i * ldy, want[k] + i * l->out[k], sizeof(float) * (size_t)l->out[k]) == 0;
            for (int64_t o = l->out[k]; o < ldy; ++o) pad &= p[k].y[i * ldy + o] == -7.0f;
        }
        pw_weight_info info = pw_test_weight_info(l->w[k]);
        CHECK(same, "product %d (%s, kernel %s) at n = %lld, %d threads: not the single call's bytes", k,
              info.name, n == 1 ? info.kernel_gemv : info.kernel_gemm, (long long)n,
              pw_context_threads(ctx));
        CHECK(pad, "product %d: the padding between rows was written", k);
        if (nan_row) CHECK(isnan(p[k].y[(n - 1) * ldy]), "product %d: the NaN row is not NaN", k);
        free(p[k].y);
        free(want[k]);
    }
    free(x);
}

static void check_refusals(pw_context *ctx, const layer *l) {
    float x[IN] = {0}, y[256];
    for (int i = 0; i < 256; ++i) y[i] = 3.0f;
    /* another row length */
    pw_format_info const *fi = pw_format_get(PW_FORMAT_Q8_0);
    uint8_t blk[2 * 64 / 32 * 34];
    float wf[2 * 64] = {0};
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q8_0, wf, 4, blk), ctx);
    pw_view v;
    const int64_t shape[2] = {2, 64};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q8_0, 2, shape, PW_LAYOUT_ROW_MAJOR, blk, sizeof blk), ctx);
    (void)fi;
    pw_weight *other = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &other), ctx);
    pw_product p[2] = {{l->w[0], y, 0}, {other, y + 128, 0}};
    CHECK(pw_matmul_wt_many(ctx, x, 1, 0, p, 2) == PW_ERR_SHAPE &&
              strstr(pw_context_message(ctx), "in = 64"),
          "another row length: %s", pw_context_message(ctx));
    int untouched = 1;
    for (int i = 0; i < 256; ++i) untouched &= y[i] == 3.0f;
    CHECK(untouched, "a refused call wrote Y");
    CHECK(pw_matmul_wt_many(ctx, x, 1, 0, NULL, 1) == PW_ERR_INVALID_ARGUMENT, "NULL products");
    CHECK(pw_matmul_wt_many(ctx, x, 0, 0, p, 1) == PW_ERR_INVALID_ARGUMENT, "n = 0");
    CHECK_OK(pw_matmul_wt_many(ctx, NULL, 1, 0, NULL, 0), ctx);
    pw_product bad = {l->w[0], NULL, 0};
    CHECK(pw_matmul_wt_many(ctx, x, 1, 0, &bad, 1) == PW_ERR_INVALID_ARGUMENT, "NULL y");
    pw_product many[PW_MATMUL_MANY_MAX + 1];
    for (int i = 0; i <= PW_MATMUL_MANY_MAX; ++i) many[i] = (pw_product){l->w[0], y, 0};
    CHECK(pw_matmul_wt_many(ctx, x, 1, 0, many, PW_MATMUL_MANY_MAX + 1) == PW_ERR_INVALID_ARGUMENT,
          "%d products in one call", PW_MATMUL_MANY_MAX + 1);
    pw_product shortld = {l->w[0], y, 3};
    CHECK(pw_matmul_wt_many(ctx, x, 1, 0, &shortld, 1) == PW_ERR_SHAPE, "ldy below out");
    pw_weight_destroy(other);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    layer l;
    make_layer(ctx, &l);
    for (int t = 1; t <= 2; ++t) {
        CHECK_OK(pw_context_set_threads(ctx, t), ctx);
        const int64_t ns[3] = {1, 3, MAXN};
        for (int i = 0; i < 3; ++i) check_many(ctx, &l, ns[i], 0);
        check_many(ctx, &l, MAXN, 1);
        check_many(ctx, &l, 1, 1);
    }
    check_refusals(ctx, &l);
    free_layer(&l);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
