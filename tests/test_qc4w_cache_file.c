/*
 * One key scheme for the in-memory weights cache and cache files: QC4W
 * operators packed into a cache are saved to a file; a new cache attached to
 * that file serves an operator created over the same raw weights with no
 * packing (a hit, no adapter event) and bit-identical outputs. A corrupted
 * entry is skipped at attach and the operator packs again, same outputs.
 */
#include "pw_test.h"

#include <unistd.h>

enum { N = 37, K = 100, B = 5 };

typedef struct events {
    int adapters;
} events;

static void on_event(void *user, const pw_trace_event *e) {
    if (e->kind == PW_TRACE_ADAPTER) ((events *)user)->adapters++;
}

static uint8_t nibbles[N * ((K + 1) / 2)];
static float scale[N], bias[N], x[B * K];

static void run_op(pw_context *ctx, pw_weights_cache *cache, float *y) {
    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    w.out = N;
    w.in = K;
    w.data = nibbles;
    w.scale = scale;
    w.bias = bias;
    w.zero_point = 8;
    w.name = "fc";
    pw_qc4w_fc_options o;
    pw_qc4w_fc_options_init(&o);
    o.cache = cache;
    pw_qc4w_fc *op = NULL;
    CHECK_OK(pw_qc4w_fc_create(ctx, &w, &o, &op), ctx);
    CHECK_OK(pw_qc4w_fc_run(ctx, op, B, x, y), ctx);
    pw_qc4w_fc_destroy(op);
}

int main(void) {
    pw_rng r = {5};
    for (size_t i = 0; i < sizeof nibbles; ++i) nibbles[i] = (uint8_t)pw_rng_next(&r);
    for (int i = 0; i < N; ++i) {
        scale[i] = 0.01f + 0.001f * (float)i;
        bias[i] = 0.1f * (float)(i % 7) - 0.3f;
    }
    for (int i = 0; i < B * K; ++i) x[i] = (float)pw_rng_gauss(&r);
    events ev = {0};
    pw_context_options co;
    pw_context_options_init(&co);
    co.trace = on_event;
    co.trace_user = &ev;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&co, &ctx), NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/test_qc4w_cache_%d.pwc", PW_TEST_BINARY_DIR, (int)getpid());

    float y0[B * N], y1[B * N], y2[B * N];
    pw_weights_cache *a = NULL;
    CHECK_OK(pw_weights_cache_create(ctx, &a), ctx);
    run_op(ctx, a, y0);
    CHECK(ev.adapters >= 1, "first operator did not pack (%d adapters)", ev.adapters);
    CHECK_OK(pw_weights_cache_save(ctx, a, path), ctx);
    pw_weights_cache_destroy(a);

    /* A new process's view: open the file, attach it to a fresh cache. */
    pw_cache *file = NULL;
    CHECK_OK(pw_cache_open(ctx, path, &file), ctx);
    REQUIRE(file != NULL, "cannot open the saved cache");
    CHECK(pw_cache_entry_count(file) == 1, "saved %lld entries", (long long)pw_cache_entry_count(file));
    pw_cache_entry_info info;
    CHECK_OK(pw_cache_entry_get(ctx, file, 0, &info), ctx);
    const uint64_t data_offset = info.offset;
    CHECK(info.qc4w && info.rows == N && info.in == K && !info.refused && strncmp(info.name, "qc4w:", 5) == 0,
          "entry: %s qc4w=%d %lldx%lld", info.name, info.qc4w, (long long)info.rows, (long long)info.in);
    pw_weights_cache *b = NULL;
    CHECK_OK(pw_weights_cache_create(ctx, &b), ctx);
    int64_t attached = -1, skipped = -1;
    CHECK_OK(pw_weights_cache_attach(ctx, b, file, &attached, &skipped), ctx);
    CHECK(attached == 1 && skipped == 0, "attached %lld, skipped %lld", (long long)attached, (long long)skipped);
    ev.adapters = 0;
    run_op(ctx, b, y1);
    pw_weights_cache_stats st;
    pw_weights_cache_get_stats(b, &st);
    CHECK(st.hits == 1 && st.misses == 0 && ev.adapters == 0,
          "operator over the attached cache: %llu hits, %llu misses, %d adapters", (unsigned long long)st.hits,
          (unsigned long long)st.misses, ev.adapters);
    CHECK(memcmp(y0, y1, sizeof y0) == 0, "outputs differ between packed and file-served weights");
    pw_weights_cache_destroy(b);
    pw_cache_close(file);

    /* A flipped data byte: the entry is skipped, the operator packs again, same numbers. */
    size_t n;
    unsigned char *img = pw_test_read_file(path, &n);
    REQUIRE(img != NULL && n > data_offset + 10, "cannot read the saved cache");
    img[data_offset + 10] ^= 0x21;
    FILE *f = fopen(path, "wb");
    fwrite(img, 1, n, f);
    fclose(f);
    free(img);
    CHECK_OK(pw_cache_open(ctx, path, &file), ctx);
    CHECK_OK(pw_weights_cache_create(ctx, &b), ctx);
    CHECK_OK(pw_weights_cache_attach(ctx, b, file, &attached, &skipped), ctx);
    CHECK(attached == 0 && skipped == 1, "corrupt: attached %lld, skipped %lld", (long long)attached, (long long)skipped);
    ev.adapters = 0;
    run_op(ctx, b, y2);
    pw_weights_cache_get_stats(b, &st);
    CHECK(st.misses == 1 && ev.adapters >= 1, "corrupt: %llu misses, %d adapters", (unsigned long long)st.misses,
          ev.adapters);
    CHECK(memcmp(y0, y2, sizeof y0) == 0, "corrupt: outputs changed");
    pw_weights_cache_destroy(b);
    pw_cache_close(file);
    unlink(path);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
