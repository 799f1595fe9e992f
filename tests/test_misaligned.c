// pw-test: once
/*
 * Block bytes at odd addresses (issue 13). A valid GGUF with
 * general.alignment = 1 puts tensor data at any address, and caller buffers
 * passed as void * may start anywhere; block structs hold uint16_t scales, so
 * reading one through a cast pointer at an odd address is undefined
 * behaviour (UBSan: "member access within misaligned address"), and on some
 * targets a fault. Every entry point that reads or writes block bytes must
 * work at any address and give the same bits as at an aligned one:
 *
 * - a GGUF written with alignment 1 and an odd data offset, opened with mmap:
 *   for every format, the tensor's view decodes (to_float, get), prepacks to
 *   every order, and multiplies through EVERY kernel usable on this machine
 *   for that format (forced by name through a pw_weight handle, n = 1 and
 *   n = 5, so every packer runs on the odd source) and through dispatch on the
 *   view as it is (the row-major kernels read the mapping in place);
 * - pw_format_quantize into, pw_format_decode from, pw_fixture_values and
 *   pw_fixture_tags into, and pw_disagreement and pw_bytes_reorder over
 *   buffers at odd addresses;
 * - pw_cache_prepack over the alignment-1 GGUF.
 * Results are compared bit for bit with the same calls on aligned copies.
 * Run under UBSan (the ASan+UBSan build) this fails at the first misaligned
 * struct access.
 */
#include "pw_test.h"

#include <stdint.h>
#include <unistd.h>

enum { OUT = 64, IN = 768, NX = 5 };

static char gguf_path[512], cache_path[512];

static int is_odd(const void *p) { return ((uintptr_t)p & 1u) != 0; }

/* Reference-quantized weight of OUT x IN for format f, aligned (malloc). */
static uint8_t *weight_bytes(pw_context *ctx, pw_format f, uint64_t *bytes) {
    const pw_format_info *fi = pw_format_get(f);
    const size_t blocks = (size_t)(OUT * IN / fi->block_size);
    *bytes = (uint64_t)blocks * (uint64_t)fi->block_bytes;
    float *x = malloc(sizeof(float) * OUT * IN);
    uint8_t *w = malloc((size_t)*bytes);
    REQUIRE(x != NULL && w != NULL, "malloc");
    pw_rng r = {1000u + (uint64_t)f};
    for (int i = 0; i < OUT * IN; ++i) x[i] = (float)(0.1 * pw_rng_gauss(&r));
    CHECK_OK(pw_format_quantize(ctx, f, x, blocks, w), ctx);
    /* The same quantization into an odd address: same bytes. */
    uint8_t *raw = malloc((size_t)*bytes + 1);
    REQUIRE(raw != NULL, "malloc");
    CHECK_OK(pw_format_quantize(ctx, f, x, blocks, raw + 1), ctx);
    CHECK(memcmp(raw + 1, w, (size_t)*bytes) == 0, "%s: quantize into an odd address differs", fi->name);
    /* Decode from an odd address: same floats. */
    float *ya = malloc(sizeof(float) * OUT * IN), *yo = malloc(sizeof(float) * OUT * IN);
    REQUIRE(ya != NULL && yo != NULL, "malloc");
    CHECK_OK(pw_format_decode(ctx, f, w, blocks, ya), ctx);
    CHECK_OK(pw_format_decode(ctx, f, raw + 1, blocks, yo), ctx);
    CHECK(memcmp(ya, yo, sizeof(float) * OUT * IN) == 0, "%s: decode from an odd address differs", fi->name);
    free(ya);
    free(yo);
    free(raw);
    free(x);
    return w;
}

static void write_gguf(pw_context *ctx, uint8_t *bufs[PW_FORMAT_COUNT]) {
    /* The pad key's length makes the data offset odd (the header is otherwise fixed). */
    for (int pad = 0; pad < 2; ++pad) {
        pw_gguf_writer *w = NULL;
        CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
        CHECK_OK(pw_gguf_writer_set_alignment(w, 1), ctx);
        CHECK_OK(pw_gguf_writer_set_string(w, "test.pad", "xx", (uint64_t)(1 + pad)), ctx);
        for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
            uint64_t bytes;
            if (bufs[f] == NULL) bufs[f] = weight_bytes(ctx, (pw_format)f, &bytes);
            const pw_format_info *fi = pw_format_get((pw_format)f);
            bytes = (uint64_t)(OUT * IN / fi->block_size) * (uint64_t)fi->block_bytes;
            char name[64];
            snprintf(name, sizeof name, "w.%s", fi->name);
            const int64_t ne[2] = {IN, OUT};
            CHECK_OK(pw_gguf_writer_add_tensor(w, name, (pw_format)f, 2, ne, bufs[f], bytes), ctx);
        }
        CHECK_OK(pw_gguf_writer_write(w, gguf_path), ctx);
        pw_gguf_writer_destroy(w);
        pw_gguf *g = NULL;
        CHECK_OK(pw_gguf_open(ctx, gguf_path, NULL, &g), ctx);
        const int odd = g != NULL && pw_gguf_data_offset(g) % 2 == 1;
        pw_gguf_close(g);
        if (odd) return;
    }
    REQUIRE(0, "no pad length gave an odd data offset");
}

/* y = x * W^T through kernel k (NULL: dispatch through a handle) on view w; status returned. */
static pw_status run_weight(pw_context *ctx, const pw_view *w, const char *kernel, const float *x, int64_t n,
                            float *y) {
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.kernel = kernel;
    pw_weight *h = NULL;
    pw_status st = pw_weight_create(ctx, w, &o, &h);
    if (st == PW_OK) st = pw_matmul_wt(ctx, x, n, h, y);
    pw_weight_destroy(h);
    return st;
}

static void check_format(pw_context *ctx, pw_arena *arena, pw_format f, const pw_view *vo, const uint8_t *aligned,
                         const float *x, int *kernels_run) {
    const pw_format_info *fi = pw_format_get(f);
    CHECK(is_odd(vo->data), "%s: the GGUF view is at an even address", fi->name);
    pw_view va;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &va, f, 2, shape, PW_LAYOUT_ROW_MAJOR, aligned, vo->data_bytes), ctx);
    CHECK(memcmp(aligned, vo->data, (size_t)vo->data_bytes) == 0, "%s: file bytes differ", fi->name);

    float *ya = malloc(sizeof(float) * OUT * IN), *yo = malloc(sizeof(float) * OUT * IN);
    REQUIRE(ya != NULL && yo != NULL, "malloc");
    CHECK_OK(pw_view_to_float(ctx, &va, ya, OUT * IN), ctx);
    CHECK_OK(pw_view_to_float(ctx, vo, yo, OUT * IN), ctx);
    CHECK(memcmp(ya, yo, sizeof(float) * OUT * IN) == 0, "%s: to_float at an odd address differs", fi->name);
    const int64_t at[2] = {OUT - 1, IN - 1};
    float g = 0;
    CHECK_OK(pw_view_get(ctx, vo, at, &g), ctx);
    CHECK(memcmp(&g, &ya[OUT * IN - 1], sizeof g) == 0, "%s: get", fi->name);
    const pw_layout targets[] = {{PW_ORDER_INPUT_BLOCK_MAJOR, 0}, {PW_ORDER_ROW_TILED, 8}, {PW_ORDER_ROW_TILED, 32}};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
        pw_view p;
        CHECK_OK(pw_view_prepack(ctx, vo, targets[t], arena, &p), ctx);
        CHECK_OK(pw_view_to_float(ctx, &p, yo, OUT * IN), ctx);
        CHECK(memcmp(ya, yo, sizeof(float) * OUT * IN) == 0, "%s: prepack %zu differs", fi->name, t);
    }

    float *oa = malloc(sizeof(float) * NX * OUT), *oo = malloc(sizeof(float) * NX * OUT);
    REQUIRE(oa != NULL && oo != NULL, "malloc");
    /* Dispatch on the views as they are: row-major kernels read the (odd) mapping in place. */
    const pw_status sa = pw_matmul_view(ctx, x, NX, &va, oa), so = pw_matmul_view(ctx, x, NX, vo, oo);
    CHECK(sa == so, "%s: matmul_view statuses %s vs %s", fi->name, pw_status_name(sa), pw_status_name(so));
    if (sa == PW_OK && so == PW_OK)
        CHECK(memcmp(oa, oo, sizeof(float) * NX * OUT) == 0, "%s: matmul_view at an odd address differs", fi->name);
    /* Every usable kernel of this format, forced by name, n = 1 and n = NX. */
    for (size_t k = 0; k < pw_kernel_count(); ++k) {
        const pw_kernel_info *ki = pw_kernel_info_get(k);
        if (ki->format != f || !pw_kernel_usable(ctx, k)) continue;
        for (int64_t n = 1; n <= NX; n += NX - 1) {
            const pw_status a = run_weight(ctx, &va, ki->name, x, n, oa);
            const pw_status o = run_weight(ctx, vo, ki->name, x, n, oo);
            CHECK(a == o, "%s n=%lld: statuses %s vs %s (%s)", ki->name, (long long)n, pw_status_name(a),
                  pw_status_name(o), pw_context_message(ctx));
            if (a != PW_OK || o != PW_OK) continue;
            ++*kernels_run;
            CHECK(memcmp(oa, oo, sizeof(float) * (size_t)(n * OUT)) == 0, "%s n=%lld: odd address differs",
                  ki->name, (long long)n);
        }
    }
    free(oa);
    free(oo);
    free(ya);
    free(yo);
}

/* Fixtures, disagreement and the bytes-level converter over odd buffers. */
static void check_fixtures(pw_context *ctx) {
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *fi = pw_format_get((pw_format)f);
        uint64_t bytes = 0, count = 0;
        int64_t rows = 0, blocks = 0;
        if (pw_fixture_values(ctx, (pw_format)f, NULL, &bytes, NULL, &count, &rows, &blocks) != PW_OK) continue;
        uint8_t *a = malloc((size_t)bytes), *raw = malloc((size_t)bytes + 1);
        float *va = malloc(sizeof(float) * (size_t)count), *vo = malloc(sizeof(float) * (size_t)count);
        REQUIRE(a != NULL && raw != NULL && va != NULL && vo != NULL, "malloc");
        uint64_t b1 = bytes, c1 = count, b2 = bytes, c2 = count;
        CHECK_OK(pw_fixture_values(ctx, (pw_format)f, a, &b1, va, &c1, &rows, &blocks), ctx);
        CHECK_OK(pw_fixture_values(ctx, (pw_format)f, raw + 1, &b2, vo, &c2, &rows, &blocks), ctx);
        CHECK(memcmp(a, raw + 1, (size_t)bytes) == 0 && memcmp(va, vo, sizeof(float) * (size_t)count) == 0,
              "%s: value fixture at an odd address differs", fi->name);
        free(a);
        free(raw);
        free(va);
        free(vo);

        const pw_layout l = {PW_ORDER_INPUT_BLOCK_MAJOR, 0};
        CHECK_OK(pw_fixture_bytes(ctx, (pw_format)f, 7, 3, &bytes), ctx);
        a = malloc((size_t)bytes);
        raw = malloc((size_t)bytes + 1);
        uint8_t *raw2 = malloc((size_t)bytes + 1), *back = malloc((size_t)bytes);
        REQUIRE(a != NULL && raw != NULL && raw2 != NULL && back != NULL, "malloc");
        CHECK_OK(pw_fixture_tags(ctx, (pw_format)f, 7, 3, l, a, bytes), ctx);
        CHECK_OK(pw_fixture_tags(ctx, (pw_format)f, 7, 3, l, raw + 1, bytes), ctx);
        CHECK(memcmp(a, raw + 1, (size_t)bytes) == 0, "%s: tag fixture at an odd address differs", fi->name);
        pw_disagreement_report rep;
        CHECK_OK(pw_disagreement(ctx, raw + 1, bytes, (pw_format)f, 7, 3, l, &rep), ctx);
        CHECK(rep.kind == PW_AGREE, "%s: odd-address fixture disagrees: %s", fi->name, rep.message);
        const pw_block_grid grid = {7, 3, fi->block_bytes, l};
        CHECK_OK(pw_bytes_to_canonical_order(ctx, &grid, raw + 1, bytes, raw2 + 1, bytes), ctx);
        const pw_block_grid grid2 = {7, 3, fi->block_bytes, {PW_ORDER_ROW_MAJOR, 0}};
        CHECK_OK(pw_bytes_to_kernel_order(ctx, &grid2, raw2 + 1, bytes, back, bytes), ctx);
        CHECK(memcmp(back, a, (size_t)bytes) == 0, "%s: reorder round trip at odd addresses", fi->name);
        free(a);
        free(raw);
        free(raw2);
        free(back);
    }
}

int main(void) {
    pw_context *ctx = pw_test_context();
    snprintf(gguf_path, sizeof gguf_path, "%s/test_misaligned_%d.gguf", PW_TEST_BINARY_DIR, (int)getpid());
    snprintf(cache_path, sizeof cache_path, "%s/test_misaligned_%d.pwc", PW_TEST_BINARY_DIR, (int)getpid());
    uint8_t *bufs[PW_FORMAT_COUNT] = {0};
    write_gguf(ctx, bufs);

    pw_gguf_open_options oo;
    pw_gguf_open_options_init(&oo);
    oo.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, gguf_path, &oo, &g), ctx);
    REQUIRE(g != NULL, "cannot open %s", gguf_path);
    CHECK(pw_gguf_alignment(g) == 1, "alignment %llu", (unsigned long long)pw_gguf_alignment(g));
    pw_arena *arena = NULL;
    CHECK_OK(pw_arena_create(ctx, &arena), ctx);
    float *x = malloc(sizeof(float) * NX * IN);
    REQUIRE(x != NULL, "malloc");
    pw_rng r = {7};
    for (int i = 0; i < NX * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    int kernels_run = 0;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        char name[64];
        snprintf(name, sizeof name, "w.%s", pw_format_get((pw_format)f)->name);
        int64_t i = -1;
        CHECK_OK(pw_gguf_find_tensor(ctx, g, name, &i), ctx);
        pw_view v;
        CHECK_OK(pw_gguf_tensor_view(ctx, g, i, &v), ctx);
        check_format(ctx, arena, (pw_format)f, &v, bufs[f], x, &kernels_run);
        pw_arena_reset(arena);
    }
    printf("%d kernel runs at odd addresses\n", kernels_run);
    CHECK(kernels_run >= 2 * PW_FORMAT_COUNT / 2, "only %d kernel runs", kernels_run);
    pw_gguf_close(g);

    /* Every 2-D weight of the alignment-1 file packed into a cache file. */
    CHECK_OK(pw_cache_prepack(ctx, gguf_path, cache_path, NULL), ctx);

    check_fixtures(ctx);
    unlink(gguf_path);
    unlink(cache_path);
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) free(bufs[f]);
    free(x);
    pw_arena_destroy(arena);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
