/*
 * The QB4W kernels this PACKWISE_ISA level checks (at native every usable one, at a
 * forced level its own: pw_test_forced_level, kernel_oracle.h) against the oracle
 * (pw__qb4w_reference: plain loops over the raw weights, each block's integer
 * sum from (q - zp) * (u - z) without stored sums), bit for bit, over
 *   K in {32, 96, 4096, and 37, 300: a partial last block},
 *   B in {16, 32, 128, 256}, N in {1, nr-1, nr, nr+1, 3nr+5} (and 2037, 2053 at batch 1),
 *   batch in {1, mr+1, 37, 2mr+2},
 * each zero-point kind (constant 8, constant 0 = signed nibbles, 4-bit and
 * 8-bit per block), f32, f16 and bf16 scales, transposed source and not,
 * bias and clamp, f32 and f16 out, on 1 and 2 threads (the variants rotate
 * over the shapes so that each meets every K, B, N and batch).
 *
 * Exact integers: an extreme case (q = -128 with zp = 127, u = 15 with z = 0,
 * unit scales) makes y the exact integer sum, computed here in int64, which
 * is below 2^24 and so exact in f32 through every kernel's float steps.
 *
 * Then the packer: the round trip to each raw form (zero kind, scale type)
 * is bit-exact, and the packed bytes equal golden files written by an
 * independent Python packer (tests/data/qb4w/make_golden.py) for every family.
 * And Q4_0: pw_qb4w_from_q4_0 gives weights whose values equal the Q4_0
 * decode bit for bit, and whose products agree with the Q4_0 weight's within
 * the activation quantizations' tolerance. Refusals: bad block size, zero
 * point above 15, NaN scale, in-place policy.
 */
// pw-test: tsan tunes
#include "kernel_oracle.h"
#include "pw_test.h"

#include "format/blocks.h"
#include "kernel/qb4w.h"

#include <math.h>

static int g_cases;

typedef struct weights {
    pw_qb4w_weights w;
    uint8_t *data, *zp;
    void *scales;
    float *bias;
} weights;

static void make_weights(weights *t, int64_t n, int64_t k, int32_t bsz, int zkind, int stype,
                         int transposed, int with_bias, int unit, pw_rng *r) {
    pw_qb4w_weights_init(&t->w);
    t->w.out = n;
    t->w.in = k;
    t->w.block_size = bsz;
    t->w.flags = transposed ? PW_QB4W_TRANSPOSED : 0;
    const int64_t nb = pw_qb4w_blocks(&t->w);
    const int64_t rows = transposed ? k : n, stride = transposed ? (n + 1) / 2 : (k + 1) / 2;
    t->data = malloc((size_t)(rows * stride));
    for (int64_t i = 0; i < rows * stride; ++i) t->data[i] = (uint8_t)pw_rng_next(r);
    /* zkind: 0 constant 8, 1 constant 0, 2 U4, 3 U8 */
    t->w.zero_kind = zkind >= 2 ? (zkind == 2 ? PW_QB4W_ZERO_U4 : PW_QB4W_ZERO_U8) : PW_QB4W_ZERO_CONST;
    t->w.zero_point = zkind == 1 ? 0 : 8;
    const int64_t zbytes = zkind == 2 ? n * ((nb + 1) / 2) : zkind == 3 ? n * nb : 0;
    t->zp = zbytes ? malloc((size_t)zbytes) : NULL;
    for (int64_t i = 0; i < zbytes; ++i) t->zp[i] = (uint8_t)(pw_rng_next(r) & (zkind == 2 ? 0xFF : 0x0F));
    t->w.zero_points = t->zp;
    t->w.scale_type = stype == 0 ? PW_DTYPE_F32 : stype == 1 ? PW_DTYPE_F16 : PW_DTYPE_BF16;
    t->scales = malloc(4 * (size_t)(n * nb));
    for (int64_t i = 0; i < n * nb; ++i) {
        const float s = unit ? 1.0f : (float)(pw_rng_gauss(r) * 0.02);
        if (stype == 0) ((float *)t->scales)[i] = s;
        else if (stype == 1) ((uint16_t *)t->scales)[i] = pw__f32_to_f16(s);
        else ((uint16_t *)t->scales)[i] = pw__f32_to_bf16(s);
    }
    t->w.scales = t->scales;
    t->bias = NULL;
    if (with_bias) {
        t->bias = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; ++i) t->bias[i] = (float)(pw_rng_gauss(r) * 0.1);
    }
    t->w.bias = t->bias;
    t->w.data = t->data;
}

static void free_weights(weights *t) {
    free(t->data);
    free(t->zp);
    free(t->scales);
    free(t->bias);
}

/* N x K rows for the packer (a transposed source moved nibble by nibble). */
static uint8_t *nk_rows(const weights *t) {
    const int64_t n = t->w.out, k = t->w.in, stride = (k + 1) / 2;
    uint8_t *nk = calloc((size_t)(n * stride), 1);
    if (t->w.flags & PW_QB4W_TRANSPOSED)
        pw__qc4w_transpose_rows(t->data, k, n, 0, n, nk);
    else
        memcpy(nk, t->data, (size_t)(n * stride));
    return nk;
}

static pw_status plan(pw_context *ctx, const pw__kernel *k, const pw_qb4w_weights *w, pw__pack_desc *d) {
    d->group = w->block_size; /* read on entry (kernel.h) */
    return k->pack_plan(ctx, k, PW_FORMAT_COUNT, w->out, w->in, d);
}

/* Pack for kernel k, run it, compare with `want` bit for bit; returns mismatches. */
static int check_kernel(pw_context *ctx, const pw__kernel *k, const weights *t, const uint8_t *lhs,
                        int64_t batch, float mn, float mx, int f16, const void *want, const char *what) {
    const int64_t n = t->w.out, kk = t->w.in;
    pw__pack_desc d;
    CHECK_OK(plan(ctx, k, &t->w, &d), ctx);
    uint8_t *p = aligned_alloc(64, (size_t)(d.bytes + 63) / 64 * 64);
    uint8_t *nk = nk_rows(t);
    const pw__qb4w_source src = {nk, &t->w, t->w.bias};
    pw__qb4w_pack(&d, &src, 0, n, p);
    free(nk);
    const size_t esz = f16 ? 2 : 4;
    uint8_t *y = malloc(esz * (size_t)(batch * n));
    memset(y, 0xFF, esz * (size_t)(batch * n)); /* NaN in both widths */
    const int64_t kq = pw__qd8_k_padded(kk);
    const size_t rb = pw__qd8_row_bytes(kq);
    uint8_t *panels = NULL;
    if (k->xq_panel > 0) {
        panels = malloc(pw__qd8_panels_bytes(batch, kq, k->xq_panel));
        pw__qd8_panel_rows(lhs, rb, kq, k->xq_panel, 0, batch, panels);
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
            const int ok = memcmp(y + at * esz, (const uint8_t *)want + at * esz, esz) == 0;
            if (!ok) {
                ++bad;
                const double got = f16 ? pw__f16_to_f32(((const uint16_t *)(const void *)y)[at])
                                       : ((const float *)(const void *)y)[at];
                const double ref = f16 ? pw__f16_to_f32(((const uint16_t *)want)[at]) : ((const float *)want)[at];
                CHECK(0, "%s %s: N=%lld K=%lld B=%d batch=%lld zero kind %d/%d scales %d%s%s%s y[%lld,%lld] = %.9g, oracle %.9g",
                      k->info.name, what, (long long)n, (long long)kk, (int)t->w.block_size,
                      (long long)batch, (int)t->w.zero_kind, (int)t->w.zero_point, (int)t->w.scale_type,
                      t->w.flags ? " transposed" : "", t->w.bias ? " bias" : "", f16 ? " f16" : "",
                      (long long)m, (long long)o, got, ref);
            }
        }
    }
    ++g_cases;
    free(p);
    free(y);
    return bad;
}

static void matrix_case(pw_context *ctx, const pw__kernel *k, int64_t n, int64_t kk, int32_t bsz,
                        int64_t batch, int v, pw_rng *r) {
    const int zkind = v % 4, stype = (v / 4) % 3, tr = (v / 3) % 2, bias = (v / 2) % 2;
    const int f16 = (v / 5) % 2, clamp = (v / 7) % 2;
    weights t;
    make_weights(&t, n, kk, bsz, zkind, stype, tr, bias, 0, r);
    uint8_t *lhs = pw_test_qd8_rows(batch, kk, pw__qd8_k_padded(kk), r);
    const size_t rb = pw__qd8_row_bytes(pw__qd8_k_padded(kk));
    float mn = -INFINITY, mx = INFINITY;
    if (clamp) {
        /* A clamp that bites: the oracle's middle half of |y|. */
        float *y0 = malloc(sizeof(float) * (size_t)(batch * n));
        pw__qb4w_reference(&t.w, t.w.bias, lhs, rb, batch, -INFINITY, INFINITY, 0, y0, n);
        double s = 0;
        for (int64_t i = 0; i < batch * n; ++i) s += fabs(y0[i]);
        mx = (float)(s / (double)(batch * n) * 0.5);
        mn = -mx * 0.5f;
        free(y0);
    }
    void *want = malloc((f16 ? 2 : 4) * (size_t)(batch * n));
    pw__qb4w_reference(&t.w, t.w.bias, lhs, rb, batch, mn, mx, f16, want, n);
    check_kernel(ctx, k, &t, lhs, batch, mn, mx, f16, want, "matrix");
    free(want);
    free(lhs);
    free_weights(&t);
}

/* The largest sums: every q = -128 with zp = 127 against u = 15, z = 0 (U8 zero points),
 * unit scales: y is exactly -255 * 15 * K. */
static void extreme_case(pw_context *ctx, const pw__kernel *k, int32_t bsz) {
    const int64_t n = k->nr + 1, kk = 4096, batch = 3;
    pw_rng r = {5};
    weights t;
    make_weights(&t, n, kk, bsz, 3, 0, 0, 0, 1, &r);
    memset(t.data, 0xFF, (size_t)(n * kk / 2));
    memset(t.zp, 0, (size_t)(n * (kk / bsz)));
    const int64_t kp = pw__qd8_k_padded(kk);
    const size_t rb = pw__qd8_row_bytes(kp);
    uint8_t *lhs = aligned_alloc(64, rb * (size_t)batch);
    memset(lhs, 0, rb * (size_t)batch);
    for (int64_t m = 0; m < batch; ++m) {
        uint8_t *row = lhs + (size_t)m * rb;
        pw__qd8_header *h = (pw__qd8_header *)(void *)row;
        h->scale = 1.0f;
        h->neg_zp = m == 0 ? -127 : 128;
        for (int64_t i = 0; i < kp; ++i) {
            const int q = i < kk ? (m == 0 ? -128 : 127) : 0;
            ((int8_t *)(row + sizeof *h))[i] = (int8_t)q;
            row[sizeof *h + (size_t)kp + (size_t)i] = (uint8_t)(q + 128);
        }
    }
    float *want = malloc(sizeof(float) * (size_t)(batch * n));
    for (int64_t m = 0; m < batch; ++m)
        for (int64_t o = 0; o < n; ++o)
            want[m * n + o] = (float)(int64_t)(m == 0 ? -255 * 15 * kk : 255 * 15 * kk);
    check_kernel(ctx, k, &t, lhs, batch, -INFINITY, INFINITY, 0, want, "extreme sums");
    free(want);
    free(lhs);
    free_weights(&t);
}

/* ------------------------------------------------------------------------ */
/* The packer                                                               */
/* ------------------------------------------------------------------------ */

static void round_trip(pw_context *ctx) {
    pw_rng r = {11};
    const pw__kernel *k = NULL;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i)
        if (pw__kernel_list_get(i)->info.kind == PW_WEIGHT_QB4W) {
            k = pw__kernel_list_get(i);
            /* every family's tile */
            for (int v = 0; v < 24; ++v) {
                const int64_t n = 2 * k->nr + 3, kk = v % 2 ? 301 : 256;
                const int32_t bsz = 16 << (v % 5);
                weights t;
                make_weights(&t, n, kk, bsz > 256 ? 256 : bsz, v % 4, (v / 4) % 3, 0, v % 3 == 0, 0, &r);
                const int64_t nb = pw_qb4w_blocks(&t.w), stride = (kk + 1) / 2;
                if (v % 4 == 2)
                    for (int64_t row = 0; row < n && (nb & 1); ++row) t.zp[row * ((nb + 1) / 2) + nb / 2] &= 0x0F;
                for (int64_t row = 0; row < n && (kk & 1); ++row) t.data[row * stride + stride - 1] &= 0x0F;
                pw__pack_desc d;
                CHECK_OK(plan(ctx, k, &t.w, &d), ctx);
                uint8_t *p = aligned_alloc(64, (size_t)(d.bytes + 63) / 64 * 64);
                const pw__qb4w_source src = {t.data, &t.w, t.bias};
                pw__qb4w_pack(&d, &src, 0, n, p);
                const size_t esz = t.w.scale_type == PW_DTYPE_F32 ? 4 : 2;
                const size_t zb = v % 4 == 2 ? (size_t)(n * ((nb + 1) / 2)) : v % 4 == 3 ? (size_t)(n * nb) : 0;
                uint8_t *data = malloc((size_t)(n * stride)), *zp = malloc(zb + 1);
                void *scales = malloc(esz * (size_t)(n * nb));
                float *bias = malloc(sizeof(float) * (size_t)n);
                pw__qb4w_unpack(&d, p, &t.w, data, scales, zp, bias);
                CHECK(memcmp(data, t.data, (size_t)(n * stride)) == 0, "%s round trip v%d: nibbles differ",
                      k->info.name, v);
                CHECK(memcmp(scales, t.scales, esz * (size_t)(n * nb)) == 0, "%s round trip v%d: scales differ",
                      k->info.name, v);
                CHECK(zb == 0 || memcmp(zp, t.zp, zb) == 0, "%s round trip v%d: zero points differ",
                      k->info.name, v);
                for (int64_t row = 0; row < n; ++row)
                    CHECK(bias[row] == (t.bias ? t.bias[row] : 0.0f), "%s round trip v%d: bias[%lld]",
                          k->info.name, v, (long long)row);
                free(data);
                free(zp);
                free(scales);
                free(bias);
                free(p);
                free_weights(&t);
            }
        }
    CHECK(k != NULL, "no QB4W family");
}

static uint8_t *read_data(const char *name, size_t *size) {
    uint8_t *b = pw_test_read_file(pw_test_data_path(name), size);
    REQUIRE(b != NULL, "cannot read tests/data/%s (made by tests/data/qb4w/make_golden.py)", name);
    return b;
}

/* golden_input.bin: u32 N, K, B, then N x ceil(K/2) nibble bytes, N x nb f16 scales,
 * N x ceil(nb/2) U4 zero-point bytes, N f32 biases. */
static void golden(pw_context *ctx) {
    size_t isz;
    uint8_t *in = read_data("qb4w/golden_input.bin", &isz);
    const int64_t n = (int64_t)pw__rd_u32(in), k = (int64_t)pw__rd_u32(in + 4);
    const int32_t bsz = (int32_t)pw__rd_u32(in + 8);
    const int64_t nb = (k + bsz - 1) / bsz, stride = (k + 1) / 2, zrow = (nb + 1) / 2;
    REQUIRE(isz == 12 + (size_t)(n * stride + 2 * n * nb + n * zrow + 4 * n), "golden_input.bin is %zu bytes", isz);
    pw_qb4w_weights w;
    pw_qb4w_weights_init(&w);
    w.out = n;
    w.in = k;
    w.block_size = bsz;
    w.data = in + 12;
    w.scales = in + 12 + n * stride;
    w.scale_type = PW_DTYPE_F16;
    w.zero_kind = PW_QB4W_ZERO_U4;
    w.zero_points = in + 12 + n * stride + 2 * n * nb;
    float *bias = malloc(sizeof(float) * (size_t)n);
    memcpy(bias, in + 12 + n * stride + 2 * n * nb + n * zrow, sizeof(float) * (size_t)n);
    int families = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *kd = pw__kernel_list_get(i);
        if (kd->info.kind != PW_WEIGHT_QB4W || strcmp(kd->info.isa, "scalar") != 0) continue;
        pw__pack_desc d;
        CHECK_OK(plan(ctx, kd, &w, &d), ctx);
        uint8_t *p = aligned_alloc(64, (size_t)(d.bytes + 63) / 64 * 64);
        const pw__qb4w_source src = {w.data, &w, bias};
        pw__qb4w_pack(&d, &src, 0, n, p);
        char name[128];
        snprintf(name, sizeof name, "qb4w/golden_%s.bin", kd->info.family);
        size_t gsz;
        uint8_t *g = read_data(name, &gsz);
        CHECK(gsz == d.bytes, "%s: golden has %zu bytes, packer %llu", kd->info.family, gsz,
              (unsigned long long)d.bytes);
        if (gsz == d.bytes) {
            size_t at = 0;
            while (at < gsz && g[at] == p[at]) ++at;
            CHECK(at == gsz, "%s: packed bytes differ from the golden file at byte %zu", kd->info.family, at);
        }
        ++families;
        free(g);
        free(p);
    }
    CHECK(families == 3, "%d QB4W families checked against golden bytes, want 3", families);
    free(bias);
    free(in);
}

/* ------------------------------------------------------------------------ */
/* Q4_0 as QB4W, and refusals                                               */
/* ------------------------------------------------------------------------ */

static void q4_0_case(pw_context *ctx) {
    const int64_t n = 45, k = 32 * 7, batch = 5;
    pw_rng r = {3};
    float *wf = malloc(sizeof(float) * (size_t)(n * k)), *x = malloc(sizeof(float) * (size_t)(batch * k));
    for (int64_t i = 0; i < n * k; ++i) wf[i] = (float)pw_rng_gauss(&r);
    for (int64_t i = 0; i < batch * k; ++i) x[i] = (float)pw_rng_gauss(&r);
    const size_t qbytes = (size_t)(n * (k / 32) * 18);
    uint8_t *q = malloc(qbytes);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_0, wf, (size_t)(n * k / 32), q), ctx);
    pw_view v;
    const int64_t shape[2] = {n, k};
    const pw_layout rm = {.order = PW_ORDER_ROW_MAJOR};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, rm, q, qbytes), ctx);
    v.name = "q4_0";
    uint8_t *data = malloc((size_t)(n * k / 2));
    uint16_t *scales = malloc(2 * (size_t)(n * k / 32));
    pw_qb4w_weights w;
    CHECK(pw_qb4w_from_q4_0(ctx, &v, data, (size_t)(n * k / 2), scales, (size_t)(n * k / 32) - 1, &w) ==
              PW_ERR_INVALID_ARGUMENT,
          "a scales buffer one short is refused");
    CHECK_OK(pw_qb4w_from_q4_0(ctx, &v, data, (size_t)(n * k / 2), scales, (size_t)(n * k / 32), &w), ctx);
    /* The values: s * (u - 8) equals the Q4_0 decode, bit for bit. */
    float *all = malloc(sizeof(float) * (size_t)(n * k));
    CHECK_OK(pw_format_decode(ctx, PW_FORMAT_Q4_0, q, (size_t)(n * k / 32), all), ctx);
    int bad = 0;
    for (int64_t row = 0; row < n; ++row) {
        const float *dec = all + row * k;
        for (int64_t i = 0; i < k; ++i) {
            const int u = (data[row * k / 2 + i / 2] >> ((i & 1) * 4)) & 15;
            const float s = pw__f16_to_f32(scales[row * (k / 32) + i / 32]);
            const float got = s * (float)(u - 8);
            if (memcmp(&got, &dec[i], 4) != 0 && bad++ < 3)
                CHECK(0, "Q4_0 as QB4W: w[%lld, %lld] = %g, Q4_0 decodes %g", (long long)row, (long long)i,
                      (double)got, (double)dec[i]);
        }
    }
    /* The products: both weights against the exact product of the decoded values. */
    pw_weight *wq = NULL, *wb = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &wq), ctx);
    CHECK_OK(pw_weight_create_qb4w(ctx, &w, NULL, &wb), ctx);
    float *yq = malloc(sizeof(float) * (size_t)(batch * n)), *yb = malloc(sizeof(float) * (size_t)(batch * n));
    CHECK_OK(pw_matmul_wt(ctx, x, batch, wq, yq), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, batch, wb, yb), ctx);
    for (int64_t m = 0; m < batch; ++m)
        for (int64_t row = 0; row < n; ++row) {
            double exact = 0, mag = 0;
            const float *dec = all + row * k;
            for (int64_t i = 0; i < k; ++i) {
                exact += (double)dec[i] * x[m * k + i];
                mag += fabs((double)dec[i] * x[m * k + i]);
            }
            /* int8 activations: each product within 1% of the sum of |w x| */
            const double tol = 0.01 * mag;
            CHECK(fabs(yq[m * n + row] - exact) <= tol && fabs(yb[m * n + row] - exact) <= tol &&
                      fabs(yq[m * n + row] - yb[m * n + row]) <= tol,
                  "y[%lld, %lld]: Q4_0 %g, QB4W %g, exact %g (tolerance %g)", (long long)m, (long long)row,
                  (double)yq[m * n + row], (double)yb[m * n + row], exact, tol);
        }
    pw_weight_destroy(wq);
    pw_weight_destroy(wb);
    free(yq);
    free(yb);
    free(all);
    free(data);
    free(scales);
    free(q);
    free(wf);
    free(x);
}

static void refusals(pw_context *ctx) {
    pw_rng r = {9};
    weights t;
    make_weights(&t, 5, 64, 32, 3, 0, 0, 0, 0, &r);
    pw_weight *w = NULL;
    t.w.zero_kind = (pw_qb4w_zero)0;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w) == PW_ERR_INVALID_ARGUMENT &&
              strstr(pw_context_message(ctx), "not named") != NULL,
          "unnamed zero points refused: %s", pw_context_message(ctx));
    t.w.zero_kind = PW_QB4W_ZERO_U8;
    t.w.block_size = 48;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w) == PW_ERR_INVALID_ARGUMENT && w == NULL, "B = 48 refused");
    t.w.block_size = 512;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w) == PW_ERR_INVALID_ARGUMENT, "B = 512 refused");
    t.w.block_size = 32;
    t.zp[7] = 16;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w) == PW_ERR_INVALID_ARGUMENT &&
              strstr(pw_context_message(ctx), "row 3, block 1") != NULL,
          "a U8 zero point of 16 is refused, naming its row and block: %s", pw_context_message(ctx));
    t.zp[7] = 15;
    ((float *)t.scales)[4] = NAN;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w) == PW_ERR_INVALID_ARGUMENT &&
              strstr(pw_context_message(ctx), "row 2, block 0") != NULL,
          "a NaN scale is refused, naming its row and block: %s", pw_context_message(ctx));
    ((float *)t.scales)[4] = 1.0f;
    t.w.zero_points = NULL;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w) == PW_ERR_INVALID_ARGUMENT, "U8 without zero points refused");
    t.w.zero_points = t.zp;
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.policy = PW_MEMORY_IN_PLACE;
    CHECK(pw_weight_create_qb4w(ctx, &t.w, &o, &w) == PW_ERR_UNSUPPORTED, "in_place refused");
    CHECK_OK(pw_weight_create_qb4w(ctx, &t.w, NULL, &w), ctx);
    pw_weight_destroy(w);
    free_weights(&t);
}

#if defined(__x86_64__)
#include "base/x86_tune.h" /* pw__x86_hw_streams: the GEMVs' streams left to the hardware */
#endif

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_rng r = {2026};
    const int64_t ks[] = {32, 96, 4096, 37, 300};
    const int32_t bsz[] = {16, 32, 128, 256};
    int kernels = 0, v = 0;
    const char *level = pw_test_forced_level(ctx, PW_WEIGHT_QB4W);
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.kind != PW_WEIGHT_QB4W || !pw__kernel_usable(ctx, k) || !pw_test_at_level(level, k))
            continue;
        ++kernels;
        printf("%s\n", k->info.name);
        extreme_case(ctx, k, 32);
        extreme_case(ctx, k, 256);
        const int64_t nr = k->nr, mr = k->info.tile_batch;
        const int64_t ns[] = {1, nr - 1, nr, nr + 1, 3 * nr + 5};
        const int64_t bs[] = {1, mr + 1, 37, 2 * mr + 2};
        for (size_t a = 0; a < 5; ++a)
            for (size_t b = 0; b < 4; ++b)
                for (size_t c = 0; c < 5; ++c)
                    for (size_t d = 0; d < 4; ++d) {
                        /* 4096 x 37 or 2mr + 2 rows only for the larger tiles' N, to keep qemu
                         * and ASan quick */
                        if (ks[a] == 4096 && d >= 2 && c != 4) continue;
                        CHECK_OK(pw_context_set_threads(ctx, 1 + (v % 2)), ctx);
                        matrix_case(ctx, k, ns[c], ks[a], bsz[b], bs[d], v++, &r);
                    }
        /* Batch 1 reads a thread's tiles as several streams (kernel/tile32.h,
         * pw__streams_plan): on one thread, 2037 and 2053 outputs make tasks of 8 and 9
         * tiles of 16, every stream live (the last tile partial) or the last part short. */
        CHECK_OK(pw_context_set_threads(ctx, 1), ctx);
#if defined(__x86_64__)
        /* The x86 GEMVs read a tile in address order, a record's block sums kept until its
         * scales, where the hardware prefetcher is left the stream (AMD Zen 4), and block
         * by block elsewhere: both ways on every x86 CPU. */
        const int saved = __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED);
        for (int hw = 0; hw < 2; ++hw) {
            __atomic_store_n(&pw__x86_hw_streams, hw, __ATOMIC_RELAXED);
            matrix_case(ctx, k, 2037, 300, 32, 1, v++, &r);
            matrix_case(ctx, k, 2053, 96, 16, 1, v++, &r);
            matrix_case(ctx, k, 3 * nr + 5, 4096, 128, 1, v++, &r);
        }
        __atomic_store_n(&pw__x86_hw_streams, saved, __ATOMIC_RELAXED);
#else
        matrix_case(ctx, k, 2037, 300, 32, 1, v++, &r);
        matrix_case(ctx, k, 2053, 96, 16, 1, v++, &r);
#endif
    }
    CHECK_OK(pw_context_set_threads(ctx, 1), ctx);
    printf("%d kernels, %d cases\n", kernels, g_cases);
    if (level == NULL)
        CHECK(kernels >= 3, "%d usable QB4W kernels; every level has the three portable ones", kernels);
    else
        CHECK(kernels >= 1, "no QB4W kernel of level %s checked", level);
    round_trip(ctx);
    golden(ctx);
    q4_0_case(ctx);
    refusals(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
