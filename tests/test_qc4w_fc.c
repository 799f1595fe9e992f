/*
 * QC4W weights through the one operator (pw_weight_create_qc4w) and the
 * weights cache:
 * - end to end against f64 math on the dequantized weights, within the QD8
 *   activation error: |y - ref| <= sum_k |w_real| * a_scale / 2 * 1.001
 *   + 1e-5 * (|ref| + |bias|) (f32 rounding of K-term sums is far below it);
 * - bit-exact agreement of the operator with the oracle on the same QD8 rows,
 *   of the transposed and zero-point-8 encodings with the plain one, of f16
 *   out with f32 out rounded, and of 1 and 2 threads;
 * - QD8 rows: zero exact, |dequantized - x| <= scale / 2, zero point in range;
 * - two operators over the same weights with one cache pack once (counted,
 *   one packed copy), other bias / packer / content miss, a stray nibble past
 *   an odd K does not; operators outlive the cache's owner;
 * - 100 runs allocate nothing and pack nothing (counting allocator, trace);
 * - four threads creating weights over one cache at once pack once;
 * - bad input: a status, a message naming the field, nothing written;
 * - a row of X with a NaN or an infinity gives a row of NaN, the others are
 *   the clean run's bits (the operator's policy for every weight kind);
 * - a weight runs from another context with the same bits (weights are shared).
 */
// pw-test: tsan
#include "pw_test.h"

#include "format/blocks.h"
#include "kernel/qc4w.h"
#include "op/op.h"

#include <math.h>
#include <pthread.h>

typedef struct counts {
    int allocs, adapters, caches, kernels;
} counts;

static void *count_alloc(void *user, size_t bytes, size_t alignment) {
    ((counts *)user)->allocs++;
    void *p = NULL;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, bytes ? bytes : 1))
        return NULL;
    return p;
}

static void count_free(void *user, void *p) {
    (void)user;
    free(p);
}

static void count_trace(void *user, const pw_trace_event *e) {
    counts *c = user;
    c->adapters += e->kind == PW_TRACE_ADAPTER;
    c->caches += e->kind == PW_TRACE_CACHE;
    c->kernels += e->kind == PW_TRACE_KERNEL;
}

static pw_context *counting_context(counts *c) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.allocator.alloc = count_alloc;
    o.allocator.free = count_free;
    o.allocator.user = c;
    o.trace = count_trace;
    o.trace_user = c;
    pw_context *ctx = NULL;
    REQUIRE(pw_context_create(&o, &ctx) == PW_OK, "%s", pw_last_create_message());
    return ctx;
}

typedef struct raw {
    int64_t n, k;
    uint8_t *nk;   /* signed nibbles, N x ceil(K/2) */
    uint8_t *zp8;  /* the same weights with zero point 8 */
    uint8_t *kn;   /* the same, transposed K x ceil(N/2) */
    float *scale, *bias;
} raw;

static void make_raw(raw *r, int64_t n, int64_t k, uint64_t seed) {
    pw_rng g = {seed};
    r->n = n;
    r->k = k;
    const int64_t s = (k + 1) / 2, ts = (n + 1) / 2;
    r->nk = calloc((size_t)(n * s), 1);
    r->zp8 = calloc((size_t)(n * s), 1);
    r->kn = calloc((size_t)(k * ts), 1);
    for (int64_t a = 0; a < n; ++a)
        for (int64_t b = 0; b < k; ++b) {
            const int w = (int)(pw_rng_next(&g) % 16) - 8;
            r->nk[a * s + b / 2] |= (uint8_t)((w & 15) << (4 * (b & 1)));
            r->zp8[a * s + b / 2] |= (uint8_t)((w + 8) << (4 * (b & 1)));
            r->kn[b * ts + a / 2] |= (uint8_t)((w & 15) << (4 * (a & 1)));
        }
    r->scale = malloc(sizeof(float) * (size_t)n);
    r->bias = malloc(sizeof(float) * (size_t)n);
    for (int64_t a = 0; a < n; ++a) {
        r->scale[a] = (float)(0.01 + 0.02 * pw_rng_uniform(&g)) * (a % 3 ? 1.0f : -1.0f);
        r->bias[a] = (float)pw_rng_gauss(&g);
    }
}

static void free_raw(raw *r) {
    free(r->nk);
    free(r->zp8);
    free(r->kn);
    free(r->scale);
    free(r->bias);
}

static pw_qc4w_weights weights_of(const raw *r, int form) {
    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    w.out = r->n;
    w.in = r->k;
    w.data = form == 1 ? r->zp8 : form == 2 ? r->kn : r->nk;
    w.zero_point = form == 1 ? 8 : 0;
    w.flags = form == 2 ? PW_QC4W_TRANSPOSED : 0;
    w.scale = r->scale;
    w.bias = r->bias;
    w.name = "fc.weight";
    return w;
}

static float *make_x(int64_t batch, int64_t k, uint64_t seed) {
    pw_rng g = {seed};
    float *x = malloc(sizeof(float) * (size_t)(batch * k));
    for (int64_t i = 0; i < batch * k; ++i) x[i] = (float)(pw_rng_gauss(&g) * (1 + i / k % 3));
    return x;
}

static int same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

static pw_status run_f16(pw_context *ctx, const pw_weight *w, int64_t batch, const float *x, uint16_t *y) {
    pw_run_args a;
    pw_run_args_init(&a);
    a.n = batch;
    a.x = x;
    a.y = y;
    a.y_type = PW_DTYPE_F16;
    return pw_weight_run(ctx, w, &a);
}

static const pw__kernel *kernel_named(const char *name) {
    size_t i;
    return pw_kernel_find(NULL, name, &i) == PW_OK ? pw__kernel_list_get(i) : NULL;
}

static void end_to_end(pw_context *ctx) {
    const int64_t n = 37, k = 300, batch = 13;
    raw r;
    make_raw(&r, n, k, 5);
    float *x = make_x(batch, k, 6);
    pw_weight *op[3] = {NULL, NULL, NULL};
    float *y[3];
    for (int form = 0; form < 3; ++form) {
        const pw_qc4w_weights w = weights_of(&r, form);
        CHECK_OK(pw_weight_create_qc4w(ctx, &w, NULL, &op[form]), ctx);
        y[form] = malloc(sizeof(float) * (size_t)(batch * n));
        CHECK_OK(pw_matmul_wt(ctx, x, batch, op[form], y[form]), ctx);
    }
    REQUIRE(op[0] != NULL, "create failed");
    CHECK(same_bits(y[0], y[1], sizeof(float) * (size_t)(batch * n)), "zero point 8 form differs");
    CHECK(same_bits(y[0], y[2], sizeof(float) * (size_t)(batch * n)), "transposed form differs");

    /* The oracle on the same QD8 rows, and the activations' own error bound. */
    const int64_t kp = (k + 31) / 32 * 32;
    const size_t rb = pw__qd8_row_bytes(kp);
    uint8_t *lhs = aligned_alloc(64, rb * (size_t)batch);
    for (int64_t m = 0; m < batch; ++m) pw__qd8_quantize_row(x + m * k, k, kp, lhs + (size_t)m * rb);
    float *want = malloc(sizeof(float) * (size_t)(batch * n));
    int8_t *scratch = malloc((size_t)k);
    const pw_qc4w_weights w0 = weights_of(&r, 0);
    pw__qc4w_reference(&w0, lhs, rb, batch, -INFINITY, INFINITY, 0, want, n, scratch);
    CHECK(same_bits(y[0], want, sizeof(float) * (size_t)(batch * n)), "operator differs from the oracle");
    int bad = 0;
    for (int64_t m = 0; m < batch; ++m) {
        const pw__qd8_header *h = pw__qd8_hdr(lhs + (size_t)m * rb);
        const int8_t *q = pw__qd8_q(lhs + (size_t)m * rb);
        CHECK(h->neg_zp >= -127 && h->neg_zp <= 128 && h->scale > 0, "row %lld: zp %d scale %g",
              (long long)m, -h->neg_zp, (double)h->scale);
        for (int64_t i = 0; i < k; ++i) {
            const double back = ((double)q[i] + h->neg_zp) * h->scale;
            if (!(fabs(back - x[m * k + i]) <= h->scale * 0.5 * 1.0001) && bad++ < 3)
                CHECK(0, "x[%lld,%lld] = %g dequantizes to %g (scale %g)", (long long)m,
                      (long long)i, (double)x[m * k + i], back, (double)h->scale);
        }
        for (int64_t o = 0; o < n; ++o) {
            double ref = r.bias[o], mag = 0;
            for (int64_t i = 0; i < k; ++i) {
                const double wv = r.scale[o] * (double)pw__qc4w_raw_get(&w0, o, i);
                ref += wv * x[m * k + i];
                mag += fabs(wv);
            }
            const double tol = mag * h->scale * 0.5 * 1.001 + 1e-5 * (fabs(ref) + fabs(r.bias[o]));
            if (!(fabs(y[0][m * n + o] - ref) <= tol) && bad++ < 3)
                CHECK(0, "y[%lld,%lld] = %.7g, f64 %.7g (tol %.3g)", (long long)m, (long long)o,
                      (double)y[0][m * n + o], ref, tol);
        }
    }
    /* A zero in X is exact: the QD8 value of 0 is the zero point itself. */
    float zx[300];
    for (int i = 0; i < 300; ++i) zx[i] = i % 2 ? 0.0f : (float)i * 0.1f - 7.0f;
    pw__qd8_quantize_row(zx, k, kp, lhs);
    for (int i = 1; i < 300; i += 2) CHECK(pw__qd8_q(lhs)[i] == -pw__qd8_hdr(lhs)->neg_zp, "zero not exact");

    /* f16 out is the f32 result rounded; threads do not change bits. */
    uint16_t *h16 = malloc(sizeof(uint16_t) * (size_t)(batch * n));
    CHECK_OK(run_f16(ctx, op[0], batch, x, h16), ctx);
    int f16_ok = 1;
    for (int64_t i = 0; i < batch * n; ++i) f16_ok &= h16[i] == pw__f32_to_f16(y[0][i]);
    CHECK(f16_ok, "f16 out is not the f32 out rounded to nearest even");
    const int threads = pw_context_threads(ctx);
    CHECK_OK(pw_context_set_threads(ctx, threads == 1 ? 2 : 1), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, batch, op[0], y[1]), ctx);
    CHECK(same_bits(y[0], y[1], sizeof(float) * (size_t)(batch * n)), "thread count changes bits");
    /* A smaller batch after a larger one reuses the scratch and gives the same rows. */
    CHECK_OK(pw_matmul_wt(ctx, x + 2 * k, 1, op[0], y[1]), ctx);
    CHECK(same_bits(y[0] + 2 * n, y[1], sizeof(float) * (size_t)n), "batch 1 differs from row 2");
    CHECK_OK(pw_context_set_threads(ctx, threads), ctx);
    for (int form = 0; form < 3; ++form) {
        pw_weight_destroy(op[form]);
        free(y[form]);
    }
    free(h16);
    free(scratch);
    free(want);
    free(lhs);
    free(x);
    free_raw(&r);
}

static void cache_and_steady_state(void) {
    counts cnt = {0, 0, 0, 0};
    pw_context *ctx = counting_context(&cnt);
    pw_cache *cache = NULL;
    CHECK_OK(pw_cache_create(ctx, &cache), ctx);
    REQUIRE(cache != NULL, "no cache");
    const int64_t n = 45, k = 129, batch = 7;
    raw r;
    make_raw(&r, n, k, 9);
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.cache = cache;
    o.min = -1.0f;
    o.max = 1.0f;
    pw_qc4w_weights w = weights_of(&r, 0);
    pw_weight *a = NULL, *b = NULL;
    cnt.adapters = 0;
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &a), ctx);
    CHECK(cnt.adapters == 1 && cnt.caches == 1 && cnt.kernels == 1, "first create: %d adapters, %d "
          "cache events, %d kernel events", cnt.adapters, cnt.caches, cnt.kernels);
    /* The same content in another buffer, with a stray bit in the unused nibble past odd K. */
    uint8_t *copy = malloc((size_t)(n * ((k + 1) / 2)));
    memcpy(copy, r.nk, (size_t)(n * ((k + 1) / 2)));
    copy[(k + 1) / 2 - 1] |= 0x50;
    w.data = copy;
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &b), ctx);
    pw_cache_stats st;
    pw_cache_get_stats(cache, &st);
    CHECK(st.misses == 1 && st.hits == 1 && st.entries == 1, "stats: %llu misses %llu hits %llu entries",
          (unsigned long long)st.misses, (unsigned long long)st.hits, (unsigned long long)st.entries);
    CHECK(cnt.adapters == 1, "the second operator packed (%d adapter events)", cnt.adapters);
    CHECK(a && b && pw__weight_form_data(a, 0) == pw__weight_form_data(b, 0), "two packed copies");
    CHECK(st.bytes == pw_test_weight_info(a).packed_bytes && pw_weight_bytes(a) == 0, "cache bytes %llu",
          (unsigned long long)st.bytes);

    /* Misses: other bias, other packer, other content. */
    pw_weight *c1 = NULL, *c2 = NULL, *c3 = NULL;
    w.data = r.nk;
    w.bias = NULL;
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &c1), ctx);
    w.bias = r.bias;
    /* A kernel of another family than the one chosen: another packer identity. */
    for (size_t i = 0; i < pw__kernel_list_count() && o.kernel == NULL; ++i) {
        const pw__kernel *kd = pw__kernel_list_get(i);
        if (kd->info.kind == PW_WEIGHT_QC4W &&
            strcmp(kd->info.family, kernel_named(pw_test_weight_info(a).kernel_gemm)->info.family) != 0 &&
            pw__kernel_usable(ctx, kd))
            o.kernel = kd->info.name;
    }
    REQUIRE(o.kernel != NULL, "no second family");
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &c2), ctx);
    o.kernel = NULL;
    copy[3] ^= 0x01;
    w.data = copy;
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &c3), ctx);
    pw_cache_get_stats(cache, &st);
    CHECK(st.misses == 4 && st.hits == 1 && st.entries == 4, "after misses: %llu misses %llu hits",
          (unsigned long long)st.misses, (unsigned long long)st.hits);

    /* Steady state: 100 runs allocate nothing, pack nothing, touch no cache counter. */
    float *x = make_x(batch, k, 10), *y = malloc(sizeof(float) * (size_t)(batch * n));
    float *y1 = malloc(sizeof(float) * (size_t)(batch * n));
    CHECK_OK(pw_matmul_wt(ctx, x, batch, a, y1), ctx);
    const int allocs = cnt.allocs, adapters = cnt.adapters;
    int same = 1;
    for (int i = 0; i < 100; ++i) {
        CHECK_OK(pw_matmul_wt(ctx, x, batch - i % 3, i % 2 ? a : b, y), ctx);
        if (i % 3 == 0) same &= same_bits(y, y1, sizeof(float) * (size_t)(batch * n));
    }
    CHECK(cnt.allocs == allocs, "100 runs made %d allocations (the context's scratch serves both "
          "weights)", cnt.allocs - allocs);
    CHECK(cnt.adapters == adapters, "runs packed (%d adapter events)", cnt.adapters - adapters);
    CHECK(same, "runs over the shared copy differ");
    int clamped = 0;
    for (int64_t i = 0; i < batch * n; ++i) clamped += y1[i] == 1.0f || y1[i] == -1.0f;
    CHECK(clamped > 0, "the clamp [-1, 1] never applied");
    pw_cache_get_stats(cache, &st);
    CHECK(st.misses == 4 && st.hits == 1, "runs touched the cache");

    /* The owner lets go first; the weights keep working. */
    pw_cache_close(cache);
    CHECK_OK(pw_matmul_wt(ctx, x, batch, b, y), ctx);
    CHECK(same_bits(y, y1, sizeof(float) * (size_t)(batch * n)), "run after cache destroy differs");
    pw_weight_destroy(a);
    pw_weight_destroy(b);
    pw_weight_destroy(c1);
    pw_weight_destroy(c2);
    pw_weight_destroy(c3);
    free(copy);
    free(x);
    free(y);
    free(y1);
    free_raw(&r);
    pw_context_destroy(ctx);
}

typedef struct racer {
    pw_cache *cache;
    const raw *r;
    const uint8_t *packed;
    pw_status st;
} racer;

static void *race(void *p) {
    racer *rc = p;
    pw_context *ctx = NULL;
    if (pw_context_create(NULL, &ctx) != PW_OK) return NULL;
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.cache = rc->cache;
    const pw_qc4w_weights w = weights_of(rc->r, 2);
    pw_weight *op = NULL;
    rc->st = pw_weight_create_qc4w(ctx, &w, &o, &op);
    if (rc->st == PW_OK) rc->packed = pw__weight_form_data(op, 0);
    pw_weight_destroy(op);
    pw_context_destroy(ctx);
    return NULL;
}

static void cache_threads(pw_context *ctx) {
    pw_cache *cache = NULL;
    CHECK_OK(pw_cache_create(ctx, &cache), ctx);
    raw r;
    make_raw(&r, 300, 512, 11);
    racer rc[4];
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) {
        rc[i] = (racer){cache, &r, NULL, PW_ERR_IO};
        REQUIRE(pthread_create(&t[i], NULL, race, &rc[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
    pw_cache_stats st;
    pw_cache_get_stats(cache, &st);
    CHECK(st.misses == 1 && st.hits == 3 && st.entries == 1, "4 threads: %llu misses %llu hits",
          (unsigned long long)st.misses, (unsigned long long)st.hits);
    for (int i = 0; i < 4; ++i)
        CHECK(rc[i].st == PW_OK && rc[i].packed == rc[0].packed, "thread %d: %s", i,
              pw_status_name(rc[i].st));
    pw_cache_close(cache);
    free_raw(&r);
}

/* A refused create names the field; a refused run writes nothing. */
static void bad_input(pw_context *ctx) {
    raw r;
    make_raw(&r, 5, 7, 12);
    pw_weight *op = NULL;
    pw_qc4w_weights w = weights_of(&r, 0);
#define REFUSED(status, needle)                                                             \
    do {                                                                                    \
        CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, NULL, &op), status, ctx);                   \
        CHECK(op == NULL && strstr(pw_context_message(ctx), needle) != NULL,                \
              "message '%s' lacks '%s'", pw_context_message(ctx), needle);                  \
        w = weights_of(&r, 0);                                                              \
    } while (0)
    w.zero_point = 4;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "zero point 4");
    w.zero_point = -8;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "zero point -8");
    w.in = 0;
    REFUSED(PW_ERR_SHAPE, "K (in) = 0");
    w.out = 0;
    REFUSED(PW_ERR_SHAPE, "N (out) = 0");
    w.out = -3;
    REFUSED(PW_ERR_SHAPE, "N (out) = -3");
    r.scale[3] = NAN;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "scale[3]");
    r.scale[3] = -INFINITY;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "scale[3]");
    r.scale[3] = 0.5f;
    r.bias[4] = INFINITY;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "bias[4]");
    r.bias[4] = 0.5f;
    w.data = NULL;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "data and scale");
    w.scale = NULL;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "data and scale");
    w.flags = 6;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "unknown flags");
    w.out = INT64_MAX / 2;
    w.in = INT64_MAX / 2;
    REFUSED(PW_ERR_OVERFLOW, "overflow");
    w.struct_size = 0;
    REFUSED(PW_ERR_INVALID_ARGUMENT, "struct_size");
#undef REFUSED
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.min = 2.0f;
    o.max = 1.0f;
    CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, &o, &op), PW_ERR_INVALID_ARGUMENT, ctx);
    o.min = NAN;
    CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, &o, &op), PW_ERR_INVALID_ARGUMENT, ctx);
    pw_weight_options_init(&o);
    o.kernel = "qc4w_nope";
    CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, &o, &op), PW_ERR_NOT_FOUND, ctx);
    CHECK_STATUS(pw_weight_create_qc4w(ctx, NULL, NULL, &op), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, NULL, NULL), PW_ERR_INVALID_ARGUMENT, ctx);

    CHECK_OK(pw_weight_create_qc4w(ctx, &w, NULL, &op), ctx);
    float x[3 * 7], y[3 * 5], clean[3 * 5];
    for (int i = 0; i < 21; ++i) x[i] = (float)i;
    CHECK_OK(pw_matmul_wt(ctx, x, 3, op, clean), ctx);
    /* A row with a NaN (then an infinity) gives a row of NaN; the other rows are the clean
     * run's bits, f32 and f16 alike. */
    for (int bad = 0; bad < 2; ++bad) {
        x[15] = bad ? -INFINITY : NAN;
        for (int i = 0; i < 15; ++i) y[i] = -123.0f;
        CHECK_OK(pw_matmul_wt(ctx, x, 3, op, y), ctx);
        int row2_nan = 1, others = 1;
        for (int i = 0; i < 15; ++i) {
            if (i >= 10) row2_nan &= isnan(y[i]);
            else others &= same_bits(&y[i], &clean[i], sizeof(float));
        }
        CHECK(row2_nan && others, "x[2, 1] = %g: row 2 must be NaN, rows 0-1 unchanged", (double)x[15]);
        uint16_t h[15];
        CHECK_OK(run_f16(ctx, op, 3, x, h), ctx);
        int h_nan = 1;
        for (int i = 10; i < 15; ++i) h_nan &= (h[i] & 0x7C00) == 0x7C00 && (h[i] & 0x03FF) != 0;
        CHECK(h_nan, "f16 out: row 2 is not NaN");
    }
    x[15] = 15.0f;
    for (int i = 0; i < 15; ++i) y[i] = -123.0f;
    CHECK_STATUS(pw_matmul_wt(ctx, x, 0, op, y), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_matmul_wt(ctx, NULL, 3, op, y), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_matmul_wt(ctx, x, 3, op, NULL), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_matmul_wt(ctx, x, 3, NULL, y), PW_ERR_INVALID_ARGUMENT, ctx);
    int untouched = 1;
    for (int i = 0; i < 15; ++i) untouched &= y[i] == -123.0f;
    CHECK(untouched, "a refused run wrote output");
    /* Another context runs the same weight: weights are shared, read-only. */
    pw_context *other = pw_test_context();
    CHECK_OK(pw_matmul_wt(other, x, 3, op, y), other);
    CHECK(same_bits(y, clean, sizeof y), "another context's run differs");
    pw_context_destroy(other);
    /* A best kernel at this ISA level (among equals, the plan takes the smaller form), the same
     * for every batch size. */
    const pw__kernel *best = pw__kernel_pick(ctx, PW_WEIGHT_QC4W, PW_FORMAT_COUNT, 7, 1, NULL, NULL);
    const pw__kernel *chosen = kernel_named(pw_test_weight_info(op).kernel_gemv);
    CHECK(best != NULL && chosen != NULL && chosen->priority == best->priority &&
              strcmp(pw_test_weight_info(op).kernel_gemm, chosen->info.name) == 0,
          "kernel %s, the best is %s", pw_test_weight_info(op).kernel_gemv, best ? best->info.name : "none");
    pw_weight_options o2;
    pw_weight_options_init(&o2);
    o2.policy = PW_MEMORY_IN_PLACE;
    pw_weight *refused = NULL;
    CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, &o2, &refused), PW_ERR_UNSUPPORTED, ctx);
    CHECK(refused == NULL && strstr(pw_context_message(ctx), "in_place") != NULL,
          "names the policy: %s", pw_context_message(ctx));
    pw_weight_options_init(&o2);
    o2.bias = r.bias;
    CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, &o2, &refused), PW_ERR_INVALID_ARGUMENT, ctx);
    pw_weight_destroy(op);
    pw_weight_destroy(NULL);
    pw_cache_close(NULL);
    free_raw(&r);
}

/* Every SIMD QD8 quantizer gives the portable one's bytes (header, q, u). */
static void quantizers(pw_context *ctx) {
    pw_rng g = {21};
    const int64_t ks[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 4099};
    int compared = 0;
    pw__qd8_row_fn simds[2] = {NULL, NULL};
#if defined(__x86_64__)
    const uint32_t need = PW_CPU_AVX512F | PW_CPU_AVX512BW;
    if ((pw_context_usable_features(ctx) & need) == need) simds[0] = pw__qd8_quantize_row_avx512;
    if (pw_context_usable_features(ctx) & PW_CPU_AVX2) simds[1] = pw__qd8_quantize_row_avx2;
#else
    (void)ctx;
#endif
    for (int si = 0; si < 2; ++si) {
        const pw__qd8_row_fn simd = simds[si];
        for (size_t a = 0; simd != NULL && a < sizeof ks / sizeof ks[0]; ++a) {
            const int64_t k = ks[a], kp = (k + 31) / 32 * 32;
            const size_t rb = pw__qd8_row_bytes(kp);
            float *x = malloc(sizeof(float) * (size_t)k);
            uint8_t *r1 = malloc(rb), *r2 = malloc(rb);
            for (int kind = 0; kind < 9; ++kind) {
                for (int64_t j = 0; j < k; ++j) {
                    const double v = (double)(int32_t)(pw_rng_next(&g) >> 32) * 0x1p-31;
                    x[j] = kind == 0   ? 0.0f
                           : kind == 1 ? (float)fabs(v) * 3.0f                 /* all >= 0 */
                           : kind == 2 ? -(float)fabs(v) * 1e-3f               /* all <= 0 */
                           : kind == 3 ? (float)v * 1e30f                      /* huge */
                           : kind == 4 ? (float)v * 1e-40f                     /* subnormal */
                           : kind == 5 ? (j % 2 ? -0.0f : 0.5f)                /* signed zeros */
                           : kind == 6 ? (float)((int)(v * 300) / 2) * 0.5f   /* exact halves */
                                       : (float)v * 7.0f;
                }
                if (kind == 8) x[k / 2] = (k % 2) ? NAN : INFINITY; /* a bad row */
                memset(r1, 0xAB, rb);
                memset(r2, 0xCD, rb);
                pw__qd8_quantize_row(x, k, kp, r1);
                simd(x, k, kp, r2);
                const size_t cmp = pw__qd8_hdr(r1)->bad ? sizeof(pw__qd8_header) : rb;
                CHECK(memcmp(r1, r2, cmp) == 0, "SIMD QD8 quantizer %d differs: K=%lld kind %d", si,
                      (long long)k, kind);
                ++compared;
            }
            free(x);
            free(r1);
            free(r2);
        }
    }
    printf("%d rows compared with the portable quantizer\n", compared);
}

/* K past what the SIMD kernels sum exactly in int32: the best kernel that can, or a refusal. */
static void long_k(pw_context *ctx) {
    const int64_t n = 3, k = 70001, batch = 2;
    raw r;
    make_raw(&r, n, k, 13);
    const pw_qc4w_weights w = weights_of(&r, 0);
    pw_weight *op = NULL;
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, NULL, &op), ctx);
    REQUIRE(op != NULL, "create");
    const pw__kernel *chosen = kernel_named(pw_test_weight_info(op).kernel_gemm);
    CHECK(chosen != NULL && (chosen->max_in == 0 || chosen->max_in >= k), "%s cannot sum K = 70001",
          pw_test_weight_info(op).kernel_gemm);
    float *x = make_x(batch, k, 14), y[6], want[6];
    CHECK_OK(pw_matmul_wt(ctx, x, batch, op, y), ctx);
    const int64_t kp = (k + 31) / 32 * 32;
    const size_t rb = pw__qd8_row_bytes(kp);
    uint8_t *lhs = aligned_alloc(64, rb * (size_t)batch);
    for (int64_t m = 0; m < batch; ++m) pw__qd8_quantize_row(x + m * k, k, kp, lhs + (size_t)m * rb);
    int8_t *scratch = malloc((size_t)k);
    pw__qc4w_reference(&w, lhs, rb, batch, -INFINITY, INFINITY, 0, want, n, scratch);
    CHECK(same_bits(y, want, sizeof y), "K = 70001 differs from the oracle");
    pw_weight_destroy(op);
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *kd = pw__kernel_list_get(i);
        if (kd->info.kind != PW_WEIGHT_QC4W || kd->max_in == 0 || kd->max_in >= k ||
            !pw__kernel_usable(ctx, kd))
            continue;
        pw_weight_options o;
        pw_weight_options_init(&o);
        o.kernel = kd->info.name;
        CHECK_STATUS(pw_weight_create_qc4w(ctx, &w, &o, &op), PW_ERR_UNSUPPORTED, ctx);
    }
    free(scratch);
    free(lhs);
    free(x);
    free_raw(&r);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    end_to_end(ctx);
    cache_and_steady_state();
    cache_threads(ctx);
    bad_input(ctx);
    long_k(ctx);
    quantizers(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
