/*
 * One cache, two sides: QC4W weights packed into a cache's memory side are
 * saved to a file; a cache opened on that file serves a weight created over
 * the same raw weights with no packing (a hit from the file side, no adapter
 * event) and bit-identical outputs. A corrupted entry fails its checksum when
 * first served: the weight packs again, same outputs. The same for QB4W (blocks
 * of 32, 4-bit zero points), where a weight over the same nibbles in blocks of
 * 16 is another source: never served the first one's bytes.
 */
// pw-test: tsan
#include "pw_test.h"

#include <unistd.h>

enum { N = 37, K = 100, B = 5 };

typedef struct events {
    int adapters;
} events;

static void on_event(void *user, const pw_trace_event *e) {
    if (e->kind == PW_TRACE_ADAPTER) ((events *)user)->adapters++;
}

static uint8_t nibbles[N * ((K + 1) / 2)], zp[N * 4];
static float scale[N], bias[N], x[B * K], bscale[N * 7];

/* kind 0: QC4W; otherwise QB4W in blocks of `kind` (32 or 16) */
static void run_op(pw_context *ctx, pw_cache *cache, float *y, int kind) {
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.cache = cache;
    pw_weight *op = NULL;
    if (kind != 0) {
        pw_qb4w_weights w;
        pw_qb4w_weights_init(&w);
        w.out = N;
        w.in = K;
        w.block_size = kind;
        w.data = nibbles;
        w.scales = bscale;
        w.zero_kind = PW_QB4W_ZERO_U4;
        w.zero_points = zp;
        w.bias = bias;
        w.name = "fc";
        CHECK_OK(pw_weight_create_qb4w(ctx, &w, &o, &op), ctx);
        if (op != NULL) CHECK_OK(pw_matmul_wt(ctx, x, B, op, y), ctx);
        pw_weight_destroy(op);
        return;
    }
    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    w.out = N;
    w.in = K;
    w.data = nibbles;
    w.scale = scale;
    w.bias = bias;
    w.zero_point = 8;
    w.name = "fc";
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &op), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, B, op, y), ctx);
    pw_weight_destroy(op);
}

static void one_kind(pw_context *ctx, events *evp, int kind) {
    events *const ev = evp;
    char path[512];
    snprintf(path, sizeof path, "%s/test_qc4w_cache_%d_%d.pwc", PW_TEST_BINARY_DIR, (int)getpid(), kind);

    float y0[B * N], y1[B * N], y2[B * N];
    pw_cache *a = NULL;
    CHECK_OK(pw_cache_create(ctx, &a), ctx);
    ev->adapters = 0;
    run_op(ctx, a, y0, kind);
    CHECK(ev->adapters >= 1, "first weight did not pack (%d adapters)", ev->adapters);
    CHECK_OK(pw_cache_save(ctx, a, path), ctx);
    pw_cache_close(a);

    /* A new process's view: open the file as a cache. */
    pw_cache *file = NULL;
    CHECK_OK(pw_cache_open(ctx, path, &file), ctx);
    REQUIRE(file != NULL, "cannot open the saved cache");
    CHECK(pw_cache_entry_count(file) == 1, "saved %lld entries", (long long)pw_cache_entry_count(file));
    pw_cache_entry_info info;
    CHECK_OK(pw_cache_entry_get(ctx, file, 0, &info), ctx);
    const uint64_t data_offset = info.offset;
    const char *prefix = kind ? "qb4w:" : "qc4w:";
    CHECK(info.kind == (kind ? PW_WEIGHT_QB4W : PW_WEIGHT_QC4W) && info.rows == N && info.in == K &&
              !info.refused && strncmp(info.name, prefix, 5) == 0,
          "entry: %s kind=%d %lldx%lld", info.name, (int)info.kind, (long long)info.rows, (long long)info.in);
    ev->adapters = 0;
    run_op(ctx, file, y1, kind);
    pw_cache_stats st;
    pw_cache_get_stats(file, &st);
    CHECK(st.hits == 1 && st.file_served == 1 && st.misses == 0 && ev->adapters == 0,
          "weight over the file: %llu hits (%llu from the file), %llu misses, %d adapters",
          (unsigned long long)st.hits, (unsigned long long)st.file_served, (unsigned long long)st.misses,
          ev->adapters);
    CHECK(memcmp(y0, y1, sizeof y0) == 0, "outputs differ between packed and file-served weights");
    if (kind != 0) {
        /* the same nibbles and scales in blocks of 16: another source, packed anew */
        float y3[B * N];
        ev->adapters = 0;
        run_op(ctx, file, y3, 16);
        pw_cache_get_stats(file, &st);
        CHECK(st.misses == 1 && ev->adapters >= 1 && memcmp(y0, y3, sizeof y0) != 0,
              "blocks of 16 over a file of blocks of 32: %llu misses, %d adapters",
              (unsigned long long)st.misses, ev->adapters);
    }
    pw_cache_close(file);

    /* A flipped data byte: the entry fails its checksum, the weight packs again, same numbers. */
    size_t n;
    unsigned char *img = pw_test_read_file(path, &n);
    REQUIRE(img != NULL && n > data_offset + 10, "cannot read the saved cache");
    img[data_offset + 10] ^= 0x21;
    FILE *f = fopen(path, "wb");
    fwrite(img, 1, n, f);
    fclose(f);
    free(img);
    CHECK_OK(pw_cache_open(ctx, path, &file), ctx);
    ev->adapters = 0;
    run_op(ctx, file, y2, kind);
    pw_cache_get_stats(file, &st);
    CHECK(st.misses == 1 && st.file_served == 0 && ev->adapters >= 1, "corrupt: %llu misses, %d adapters",
          (unsigned long long)st.misses, ev->adapters);
    CHECK(memcmp(y0, y2, sizeof y0) == 0, "corrupt: outputs changed");
    pw_cache_close(file);
    unlink(path);
}

int main(void) {
    pw_rng r = {5};
    for (size_t i = 0; i < sizeof nibbles; ++i) nibbles[i] = (uint8_t)pw_rng_next(&r);
    for (size_t i = 0; i < sizeof zp; ++i) zp[i] = (uint8_t)pw_rng_next(&r);
    for (int i = 0; i < N; ++i) {
        scale[i] = 0.01f + 0.001f * (float)i;
        bias[i] = 0.1f * (float)(i % 7) - 0.3f;
    }
    for (int i = 0; i < N * 7; ++i) bscale[i] = 0.01f + 0.0003f * (float)i;
    for (int i = 0; i < B * K; ++i) x[i] = (float)pw_rng_gauss(&r);
    events ev = {0};
    pw_context_options co;
    pw_context_options_init(&co);
    co.trace = on_event;
    co.trace_user = &ev;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&co, &ctx), NULL);
    one_kind(ctx, &ev, 0);
    one_kind(ctx, &ev, 32);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
