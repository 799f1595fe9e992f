/*
 * What engines pass in (weight.h: pw_run_args, pw_matmul_wt_experts; issue 17), for every
 * weight format and QC4W at every ISA level, each checked bit for bit against the plain
 * f32 call it must equal:
 * - f16 and bf16 X equal f32 X holding the same values;
 * - row strides (ldx, ldy) equal dense rows, and Y's padding is left alone;
 * - beta: Y = beta * Y + the product (bias and clamp on the product), f32 and f16 Y;
 * - experts: rows routed to 4 experts (one gets no rows, some rows none) equal each
 *   expert's gathered rows multiplied alone, and unrouted rows of Y are untouched;
 * - refusals: an unknown x_type, a NaN beta, experts of other shapes, a bad route.
 */
#include "pw_test.h"

#include <math.h>

enum { OUT = 40, IN = 512, N = 5, E = 4, NE = 13 };

static uint16_t to_bf16(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return (uint16_t)(b >> 16); /* truncation: any bf16 value will do */
}

static pw_weight *make_weight(pw_context *ctx, int kind, uint64_t seed, uint8_t **keep) {
    pw_rng r = {seed};
    pw_weight_options o;
    pw_weight_options_init(&o);
    float bias[OUT];
    for (int i = 0; i < OUT; ++i) bias[i] = 0.01f * (float)(i % 7) - 0.03f;
    o.min = -2.0f;
    o.max = 2.5f;
    pw_weight *w = NULL;
    if (kind == PW_FORMAT_COUNT) { /* QC4W */
        uint8_t nib[OUT * IN / 2];
        float scale[OUT];
        for (size_t i = 0; i < sizeof nib; ++i) nib[i] = (uint8_t)pw_rng_next(&r);
        for (int i = 0; i < OUT; ++i) scale[i] = 0.01f + 0.0005f * (float)i;
        pw_qc4w_weights q;
        pw_qc4w_weights_init(&q);
        q.out = OUT;
        q.in = IN;
        q.data = nib;
        q.scale = scale;
        q.bias = bias;
        q.name = "qc4w";
        CHECK_OK(pw_weight_create_qc4w(ctx, &q, &o, &w), ctx);
        *keep = NULL;
        return w;
    }
    const pw_format f = (pw_format)kind;
    const pw_format_info *fi = pw_format_get(f);
    const size_t blocks = (size_t)(OUT * IN / fi->block_size);
    float *wf = malloc(sizeof(float) * OUT * IN);
    uint8_t *wb = malloc(blocks * (size_t)fi->block_bytes);
    REQUIRE(wf && wb, "malloc");
    for (int i = 0; i < OUT * IN; ++i) wf[i] = (float)pw_rng_gauss(&r) * 0.1f;
    CHECK_OK(pw_format_quantize(ctx, f, wf, blocks, wb), ctx);
    free(wf);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, f, 2, shape, PW_LAYOUT_ROW_MAJOR, wb, blocks * (size_t)fi->block_bytes), ctx);
    v.name = fi->name;
    o.bias = bias;
    CHECK_OK(pw_weight_create(ctx, &v, &o, &w), ctx);
    *keep = wb;
    return w;
}

static const char *kind_name(int kind) {
    return kind == PW_FORMAT_COUNT ? "QC4W" : pw_format_get((pw_format)kind)->name;
}

static void check_inputs(pw_context *ctx, const pw_weight *w, const char *name) {
    float x[N * IN], xr[N * IN], y0[N * OUT], y1[N * OUT];
    uint16_t x16[N * IN];
    pw_rng r = {3};
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    pw_run_args a;
    for (int t = 0; t < 2; ++t) { /* f16, then bf16 X */
        for (int i = 0; i < N * IN; ++i) {
            x16[i] = t == 0 ? pw_f32_to_f16(x[i]) : to_bf16(x[i]);
            xr[i] = t == 0 ? pw_f16_to_f32(x16[i]) : pw_bf16_to_f32(x16[i]);
        }
        CHECK_OK(pw_matmul_wt(ctx, xr, N, w, y0), ctx);
        pw_run_args_init(&a);
        a.n = N;
        a.x = x16;
        a.x_type = t == 0 ? PW_DTYPE_F16 : PW_DTYPE_BF16;
        a.y = y1;
        CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
        CHECK(memcmp(y0, y1, sizeof y0) == 0, "%s: %s X differs from f32 X of the same values", name,
              t == 0 ? "f16" : "bf16");
        pw_run_args_init(&a); /* n = 1 too */
        a.n = 1;
        a.x = x16 + IN;
        a.x_type = t == 0 ? PW_DTYPE_F16 : PW_DTYPE_BF16;
        a.y = y1;
        CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
        CHECK_OK(pw_matmul_wt(ctx, xr + IN, 1, w, y0), ctx);
        CHECK(memcmp(y0, y1, sizeof(float) * OUT) == 0, "%s: %s X at n = 1", name, t == 0 ? "f16" : "bf16");
    }
    /* strides */
    enum { LDX = IN + 7, LDY = OUT + 3 };
    static float xs[N * LDX], ys[N * LDY];
    for (int i = 0; i < N; ++i) memcpy(xs + i * LDX, x + i * IN, sizeof(float) * IN);
    for (int i = 0; i < N * LDY; ++i) ys[i] = -9.0f;
    CHECK_OK(pw_matmul_wt(ctx, x, N, w, y0), ctx);
    pw_run_args_init(&a);
    a.n = N;
    a.x = xs;
    a.ldx = LDX;
    a.y = ys;
    a.ldy = LDY;
    CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
    int same = 1, pad = 1;
    for (int i = 0; i < N; ++i) {
        same &= memcmp(ys + i * LDY, y0 + i * OUT, sizeof(float) * OUT) == 0;
        for (int o = OUT; o < LDY; ++o) pad &= ys[i * LDY + o] == -9.0f;
    }
    CHECK(same && pad, "%s: strided rows (same %d, padding kept %d)", name, same, pad);
    /* beta, f32 and f16 Y */
    float yb[N * OUT];
    uint16_t y16[N * OUT], want16[N * OUT];
    for (int i = 0; i < N * OUT; ++i) {
        yb[i] = (float)(i % 9) - 4.0f;
        y16[i] = pw_f32_to_f16(yb[i] * 0.5f);
        want16[i] = pw_f32_to_f16(-0.75f * pw_f16_to_f32(y16[i]) + y0[i]);
        y1[i] = 0.5f * yb[i] + y0[i];
    }
    pw_run_args_init(&a);
    a.n = N;
    a.x = x;
    a.y = yb;
    a.beta = 0.5f;
    CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
    CHECK(memcmp(yb, y1, sizeof yb) == 0, "%s: beta = 0.5 is not 0.5 * Y + the product", name);
    a.y = y16;
    a.y_type = PW_DTYPE_F16;
    a.beta = -0.75f;
    CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
    CHECK(memcmp(y16, want16, sizeof y16) == 0, "%s: beta with f16 Y", name);
    /* refusals */
    pw_run_args_init(&a);
    a.n = N;
    a.x = x;
    a.y = y1;
    a.x_type = (pw_dtype)9;
    CHECK(pw_weight_run(ctx, w, &a) == PW_ERR_INVALID_ARGUMENT, "%s: x_type 9", name);
    a.x_type = PW_DTYPE_F32;
    a.beta = NAN;
    CHECK(pw_weight_run(ctx, w, &a) == PW_ERR_INVALID_ARGUMENT, "%s: NaN beta", name);
}

static void check_experts(pw_context *ctx, int kind) {
    pw_weight *ex[E];
    uint8_t *keep[E];
    for (int e = 0; e < E; ++e) ex[e] = make_weight(ctx, kind, 50 + (uint64_t)e, &keep[e]);
    float x[NE * IN], y[NE * OUT], want[NE * OUT], xg[NE * IN], yg[NE * OUT];
    /* expert 3 gets no rows; rows 4 and 9 go nowhere */
    const int32_t route[NE] = {0, 1, 0, 2, -1, 1, 1, 0, 2, -1, 0, 2, 1};
    pw_rng r = {8};
    for (int i = 0; i < NE * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    for (int i = 0; i < NE * OUT; ++i) y[i] = want[i] = 123.0f;
    for (int e = 0; e < E; ++e) {
        int m = 0, rows[NE];
        for (int i = 0; i < NE; ++i)
            if (route[i] == e) {
                memcpy(xg + m * IN, x + i * IN, sizeof(float) * IN);
                rows[m++] = i;
            }
        if (m == 0) continue;
        CHECK_OK(pw_matmul_wt(ctx, xg, m, ex[e], yg), ctx);
        for (int k = 0; k < m; ++k) memcpy(want + rows[k] * OUT, yg + k * OUT, sizeof(float) * OUT);
    }
    CHECK_OK(pw_matmul_wt_experts(ctx, x, NE, 0, (const pw_weight *const *)ex, E, route, y, 0), ctx);
    CHECK(memcmp(y, want, sizeof y) == 0, "%s: experts differ from their gathered products", kind_name(kind));
    CHECK(y[4 * OUT] == 123.0f && y[9 * OUT + OUT - 1] == 123.0f, "%s: an unrouted row was written",
          kind_name(kind));
    const int32_t bad_route[NE] = {0, 7};
    CHECK(pw_matmul_wt_experts(ctx, x, NE, 0, (const pw_weight *const *)ex, E, bad_route, y, 0) ==
              PW_ERR_INVALID_ARGUMENT,
          "%s: route 7 of 4 experts", kind_name(kind));
    for (int e = 0; e < E; ++e) {
        pw_weight_destroy(ex[e]);
        free(keep[e]);
    }
}

int main(void) {
    pw_context *ctx = pw_test_context();
    for (int kind = 0; kind <= PW_FORMAT_COUNT; ++kind) {
        uint8_t *keep = NULL;
        pw_weight *w = make_weight(ctx, kind, 7 + (uint64_t)kind, &keep);
        if (w != NULL) check_inputs(ctx, w, kind_name(kind));
        pw_weight_destroy(w);
        free(keep);
    }
    const int kinds[3] = {PW_FORMAT_Q4_0, PW_FORMAT_Q4_K, PW_FORMAT_COUNT};
    for (int k = 0; k < 3; ++k) check_experts(ctx, kinds[k]);
    /* experts of two shapes */
    uint8_t *k0 = NULL, *k1 = NULL;
    pw_weight *a = make_weight(ctx, PW_FORMAT_Q8_0, 1, &k0), *b = NULL;
    {
        uint8_t blk[8 * 2 * 34];
        float wf[8 * 64] = {0};
        CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q8_0, wf, 16, blk), ctx);
        pw_view v;
        const int64_t shape[2] = {8, 64};
        CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q8_0, 2, shape, PW_LAYOUT_ROW_MAJOR, blk, sizeof blk), ctx);
        CHECK_OK(pw_weight_create(ctx, &v, NULL, &b), ctx);
        const pw_weight *two[2] = {a, b};
        const int32_t route[2] = {0, 1};
        float x[2 * IN] = {0}, y[2 * OUT];
        CHECK(pw_matmul_wt_experts(ctx, x, 2, 0, two, 2, route, y, 0) == PW_ERR_SHAPE,
              "experts of two shapes: %s", pw_context_message(ctx));
    }
    pw_weight_destroy(a);
    pw_weight_destroy(b);
    free(k0);
    free(k1);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
