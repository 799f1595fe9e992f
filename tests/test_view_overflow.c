// pw-test: once
/*
 * Views and layout arithmetic at the ends of int64 (issue 13). A stride-0
 * broadcast view of one float with shape 2^32 x 2^32 has 2^64 elements
 * (wraps to 0) and one of 2^31 x 2^31 has 2^62 elements of 4 bytes (2^64
 * bytes, wraps to 0): pw_view_check once accepted both, and pw_view_to_float
 * and pw_view_prepack then wrote far past their buffers (ASan heap overflow).
 * pw_layout_flat_index computed o * bpr + b for grids of more than 2^63
 * blocks, and pw_view_narrow's message added start + length, both signed
 * overflow (UBSan). Each must now be a status (PW_ERR_OVERFLOW or
 * PW_ERR_SHAPE) or -1, never a write and never a wrapped value; the largest
 * grids that do fit still give exact answers.
 */
#include "pw_test.h"

#include <stdint.h>

/* Refuses every allocation above 16 MiB, so a view whose bytes are valid but huge
 * fails with a status instead of asking the system for exabytes. */
static void *small_alloc(void *user, size_t bytes, size_t alignment) {
    (void)user;
    if (bytes > ((size_t)1 << 24)) return NULL;
    void *p = NULL;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, bytes ? bytes : 1) == 0
               ? p
               : NULL;
}
static void small_free(void *user, void *p) {
    (void)user;
    free(p);
}

static pw_context *small_context(void) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.allocator.alloc = small_alloc;
    o.allocator.free = small_free;
    pw_context *ctx = NULL;
    REQUIRE(pw_context_create(&o, &ctx) == PW_OK, "context: %s", pw_last_create_message());
    return ctx;
}

/* A 2-D F32 view of one float repeated over [rows, cols] (every stride 0). */
static pw_view broadcast(const float *one, int64_t rows, int64_t cols) {
    pw_view v;
    memset(&v, 0, sizeof v);
    v.format = PW_FORMAT_F32;
    v.rank = 2;
    v.shape[0] = rows;
    v.shape[1] = cols;
    v.shape[2] = v.shape[3] = 1;
    v.block_axis = 1;
    v.data = (const uint8_t *)one;
    v.data_bytes = sizeof *one;
    v.name = "broadcast";
    return v;
}

static void test_broadcast_views(pw_context *ctx) {
    static const float one = 1.5f;
    pw_arena *arena = NULL;
    CHECK_OK(pw_arena_create(ctx, &arena), ctx);
    const struct {
        int64_t rows, cols;
    } wraps[] = {
        {(int64_t)1 << 32, (int64_t)1 << 32},       /* 2^64 elements: wraps to 0 */
        {(int64_t)1 << 31, (int64_t)1 << 31},       /* 2^62 elements, 2^64 bytes: wraps to 0 */
        {(int64_t)1 << 31, ((int64_t)1 << 31) + 1}, /* bytes wrap to a small number */
        {INT64_MAX, 2},
        {(int64_t)3 << 61, 1}, /* 2^62 * 3 elements fit, bytes (x4) do not */
    };
    for (size_t k = 0; k < sizeof wraps / sizeof wraps[0]; ++k) {
        const pw_view v = broadcast(&one, wraps[k].rows, wraps[k].cols);
        CHECK_STATUS(pw_view_check(ctx, &v), PW_ERR_OVERFLOW, ctx);
        CHECK(strstr(pw_context_message(ctx), "broadcast") != NULL, "message names the view: %s",
              pw_context_message(ctx));
        float *dst = malloc(16 * sizeof(float));
        REQUIRE(dst != NULL, "malloc");
        CHECK(pw_view_to_float(ctx, &v, dst, 16) == PW_ERR_OVERFLOW, "to_float of %lld x %lld: %s",
              (long long)wraps[k].rows, (long long)wraps[k].cols, pw_context_message(ctx));
        free(dst);
        pw_view out;
        CHECK(pw_view_prepack(ctx, &v, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, arena, &out) == PW_ERR_OVERFLOW,
              "prepack of %lld x %lld: %s", (long long)wraps[k].rows, (long long)wraps[k].cols,
              pw_context_message(ctx));
        CHECK(pw_view_materialize(ctx, &v, arena, &out) == PW_ERR_OVERFLOW, "materialize: %s",
              pw_context_message(ctx));
        CHECK(pw_view_elements(&v) == -1 || pw_view_bytes(&v) == UINT64_MAX,
              "elements %lld, bytes %llu of a view that does not fit", (long long)pw_view_elements(&v),
              (unsigned long long)pw_view_bytes(&v));
    }
    /* 2^30 x 2^30 floats (2^62 bytes) fit int64: valid, but too big to decode into 16
     * floats or to copy into a 16 MiB-limited arena: a status each, no write. */
    const pw_view big = broadcast(&one, (int64_t)1 << 30, (int64_t)1 << 30);
    CHECK_OK(pw_view_check(ctx, &big), ctx);
    CHECK(pw_view_elements(&big) == (int64_t)1 << 60, "elements %lld", (long long)pw_view_elements(&big));
    CHECK(pw_view_bytes(&big) == (uint64_t)1 << 62, "bytes %llu", (unsigned long long)pw_view_bytes(&big));
    float dst[16];
    CHECK_STATUS(pw_view_to_float(ctx, &big, dst, 16), PW_ERR_SHAPE, ctx);
    pw_view out;
    CHECK(pw_view_prepack(ctx, &big, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, arena, &out) != PW_OK,
          "prepack of 2^62 bytes into a 16 MiB-limited arena succeeded");
    const int64_t at[2] = {((int64_t)1 << 30) - 1, ((int64_t)1 << 30) - 1};
    float value = 0;
    CHECK_OK(pw_view_get(ctx, &big, at, &value), ctx);
    CHECK(value == one, "last element %g", (double)value);

    /* A small broadcast works end to end: 3 x 5 copies of one float. */
    const pw_view small = broadcast(&one, 3, 5);
    CHECK_OK(pw_view_check(ctx, &small), ctx);
    float y[15];
    CHECK_OK(pw_view_to_float(ctx, &small, y, 15), ctx);
    for (int i = 0; i < 15; ++i) CHECK(y[i] == one, "y[%d] = %g", i, (double)y[i]);
    CHECK_OK(pw_view_prepack(ctx, &small, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &out), ctx);
    CHECK_OK(pw_view_to_float(ctx, &out, y, 15), ctx);
    for (int i = 0; i < 15; ++i) CHECK(y[i] == one, "prepacked y[%d] = %g", i, (double)y[i]);
    pw_arena_destroy(arena);
}

/* Block formats: Q8_0 (32 elements in 34 bytes) with element counts that wrap. */
static void test_block_view_sizes(pw_context *ctx) {
    static uint8_t block[34];
    pw_view v;
    memset(&v, 0, sizeof v);
    v.format = PW_FORMAT_Q8_0;
    v.rank = 2;
    v.shape[0] = (int64_t)1 << 32;
    v.shape[1] = (int64_t)1 << 36; /* 2^68 elements */
    v.shape[2] = v.shape[3] = 1;
    v.block_axis = 1;
    v.data = block;
    v.data_bytes = sizeof block;
    CHECK_STATUS(pw_view_check(ctx, &v), PW_ERR_OVERFLOW, ctx);
    v.shape[0] = (int64_t)1 << 31;
    v.shape[1] = (int64_t)1 << 32; /* 2^63 elements: one past INT64_MAX */
    CHECK_STATUS(pw_view_check(ctx, &v), PW_ERR_OVERFLOW, ctx);
    v.shape[0] = (int64_t)1 << 30; /* 2^62 elements, 2^57 blocks, 2^57 * 34 bytes: fits */
    CHECK_OK(pw_view_check(ctx, &v), ctx);
    CHECK(pw_view_bytes(&v) == ((uint64_t)1 << 57) * 34, "bytes %llu", (unsigned long long)pw_view_bytes(&v));
    /* Rank 4, each axis 2^16: 2^64 elements. */
    memset(&v, 0, sizeof v);
    v.format = PW_FORMAT_F16;
    v.rank = 4;
    for (int i = 0; i < 4; ++i) v.shape[i] = (int64_t)1 << 16;
    v.block_axis = 3;
    v.data = block;
    v.data_bytes = 2;
    CHECK_STATUS(pw_view_check(ctx, &v), PW_ERR_OVERFLOW, ctx);
    v.shape[0] = (int64_t)1 << 14; /* 2^62 elements of 2 bytes = 2^63 bytes: does not fit int64 */
    CHECK_STATUS(pw_view_check(ctx, &v), PW_ERR_OVERFLOW, ctx);
    v.shape[0] = (int64_t)1 << 13;
    CHECK_OK(pw_view_check(ctx, &v), ctx);
}

static void test_flat_index(void) {
    const int64_t big = (int64_t)1 << 40;
    const pw_layout rm = {PW_ORDER_ROW_MAJOR, 0}, ibm = {PW_ORDER_INPUT_BLOCK_MAJOR, 0};
    const pw_layout tiled = {PW_ORDER_ROW_TILED, (int64_t)1 << 20};
    /* 2^80 blocks: no flat index fits. */
    CHECK(pw_layout_flat_index(rm, big, big, big - 1, big - 1) == -1, "row-major 2^40 x 2^40");
    CHECK(pw_layout_flat_index(ibm, big, big, big - 1, big - 1) == -1, "input-block-major 2^40 x 2^40");
    CHECK(pw_layout_flat_index(tiled, big, big, big - 1, big - 1) == -1, "row-tiled 2^40 x 2^40");
    CHECK(pw_layout_flat_index(rm, INT64_MAX, INT64_MAX, 1, 1) == -1, "INT64_MAX squared");
    CHECK(pw_layout_flat_index(rm, INT64_MAX, 2, INT64_MAX - 1, 1) == -1, "2^64 - 2 blocks");
    /* The largest grids that fit give exact indices: 2^31 x 2^31 = 2^62 blocks. */
    const int64_t h = (int64_t)1 << 31;
    CHECK(pw_layout_flat_index(rm, h, h, h - 1, h - 1) == ((int64_t)1 << 62) - 1, "row-major last");
    CHECK(pw_layout_flat_index(ibm, h, h, h - 1, 0) == h - 1, "input-block-major row h-1, block 0");
    CHECK(pw_layout_flat_index(ibm, h, h, 0, h - 1) == ((int64_t)1 << 62) - h, "input-block-major block h-1");
    CHECK(pw_layout_flat_index((pw_layout){PW_ORDER_ROW_TILED, 8}, h, h, h - 1, h - 1) == ((int64_t)1 << 62) - 1,
          "row-tiled 8 last");
    CHECK(pw_layout_flat_index(rm, INT64_MAX, 1, INT64_MAX - 1, 0) == INT64_MAX - 1, "INT64_MAX rows");
    /* Arguments outside the grid, and bad tiles. */
    CHECK(pw_layout_flat_index(rm, 4, 4, 4, 0) == -1, "row outside");
    CHECK(pw_layout_flat_index(rm, 4, 4, 0, -1) == -1, "negative block");
    CHECK(pw_layout_flat_index((pw_layout){PW_ORDER_ROW_TILED, 0}, 4, 4, 0, 0) == -1, "nr 0");
    CHECK(pw_layout_flat_index((pw_layout){PW_ORDER_ROW_TILED, INT64_MIN}, 4, 4, 0, 0) == -1, "nr INT64_MIN");
    CHECK(pw_layout_flat_index((pw_layout){(pw_order)77, 0}, 4, 4, 0, 0) == -1, "unknown order");
}

static void test_bytes_reorder_sizes(pw_context *ctx) {
    uint8_t src[8], dst[8];
    /* rows * blocks fits uint64 (2^63 + ...) but not int64: refused, not indexed. */
    pw_block_grid g = {(int64_t)1 << 62, 3, 1, {PW_ORDER_ROW_MAJOR, 0}};
    const uint64_t claimed = ((uint64_t)1 << 62) * 3;
    CHECK_STATUS(pw_bytes_to_kernel_order(ctx, &g, src, claimed, dst, claimed), PW_ERR_OVERFLOW, ctx);
    g = (pw_block_grid){INT64_MAX, INT64_MAX, INT64_MAX, {PW_ORDER_ROW_MAJOR, 0}};
    CHECK_STATUS(pw_bytes_to_kernel_order(ctx, &g, src, 8, dst, 8), PW_ERR_OVERFLOW, ctx);
}

static void test_narrow_extremes(pw_context *ctx) {
    static float data[6 * 64];
    const int64_t shape[2] = {6, 64};
    pw_view v;
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_F32, 2, shape, PW_LAYOUT_ROW_MAJOR, data, sizeof data), ctx);
    pw_view out;
    const int64_t extremes[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, 5, 6, INT64_MAX - 1, INT64_MAX};
    const int n = (int)(sizeof extremes / sizeof extremes[0]);
    for (int axis = -1; axis <= 2; ++axis)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const int64_t start = extremes[i], length = extremes[j];
                const pw_status st = pw_view_narrow(ctx, &v, axis, start, length, &out);
                const int ok = axis >= 0 && axis < 2 && start >= 0 && length >= 1 && start <= v.shape[axis] &&
                               length <= v.shape[axis] - start;
                CHECK(ok ? st == PW_OK : st == PW_ERR_SHAPE, "narrow axis %d [%lld, +%lld): %s (%s)", axis,
                      (long long)start, (long long)length, pw_status_name(st), pw_context_message(ctx));
            }
    /* A row-tiled view narrows by whole tiles; extreme starts are refused, not multiplied. */
    static uint8_t q[8 * 2 * 34];
    pw_view t;
    memset(&t, 0, sizeof t);
    t.format = PW_FORMAT_Q8_0;
    t.rank = 2;
    t.shape[0] = 8;
    t.shape[1] = 64;
    t.shape[2] = t.shape[3] = 1;
    t.block_axis = 1;
    t.tile_rows = 4;
    t.tile_stride = 8;
    t.strides[0] = 1;
    t.strides[1] = 4;
    t.data = q;
    t.data_bytes = sizeof q;
    CHECK_OK(pw_view_check(ctx, &t), ctx);
    CHECK_OK(pw_view_narrow(ctx, &t, 0, 4, 4, &out), ctx);
    CHECK(out.offset == 8, "offset of the second tile %lld", (long long)out.offset);
    CHECK_STATUS(pw_view_narrow(ctx, &t, 0, INT64_MAX - 3, 4, &out), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_view_narrow(ctx, &t, 1, INT64_MIN, INT64_MAX, &out), PW_ERR_SHAPE, ctx);
}

int main(void) {
    pw_context *ctx = small_context();
    test_broadcast_views(ctx);
    test_block_view_sizes(ctx);
    test_flat_index();
    test_bytes_reorder_sizes(ctx);
    test_narrow_extremes(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
