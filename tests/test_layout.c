/*
 * Views and the two block orders (spec: packed-weight-layout).
 *
 * For every format: to_float of a ROW_MAJOR view, of its INPUT_BLOCK_MAJOR
 * and row-tiled prepacks, and of narrowed sub-views of each (row ranges and
 * block ranges) are identical; get() agrees with to_float everywhere; prepack
 * emits exactly one adapter event with the right byte count when the orders
 * differ and none when they match; bytes converted there and back are the
 * original bytes; converting to the order the bytes are in is the identity.
 * Shapes: 19 rows (odd, above 16) x 3 and 5 blocks per row, because at one
 * block per row the two orders coincide and such a test proves nothing.
 */
#include "pw_test.h"

#include <math.h>

typedef struct trace_log {
    int adapters;
    int others;
    int warnings;
    char last_warning[1024];
    uint64_t last_bytes;
    char last_from[32], last_to[32], last_tensor[64];
} trace_log;

static void on_trace(void *user, const pw_trace_event *e) {
    trace_log *t = user;
    if (e->kind == PW_TRACE_WARNING) {
        t->warnings++;
        snprintf(t->last_warning, sizeof t->last_warning, "%s", e->reason ? e->reason : "");
    }
    if (e->kind != PW_TRACE_ADAPTER) {
        t->others++;
        return;
    }
    t->adapters++;
    t->last_bytes = e->bytes;
    snprintf(t->last_from, sizeof t->last_from, "%s", e->from ? e->from : "");
    snprintf(t->last_to, sizeof t->last_to, "%s", e->to ? e->to : "");
    snprintf(t->last_tensor, sizeof t->last_tensor, "%s", e->tensor ? e->tensor : "");
}

/* A weight of `rows` x `in` Gaussian values quantized with the reference quantizer. */
static unsigned char *make_weight(pw_context *ctx, pw_format f, int64_t rows, int64_t in,
                                  uint64_t seed, uint64_t *bytes) {
    const pw_format_info *fi = pw_format_get(f);
    pw_rng rng = {seed};
    float *x = malloc(sizeof(float) * (size_t)(rows * in));
    for (int64_t i = 0; i < rows * in; ++i) x[i] = (float)pw_rng_gauss(&rng);
    *bytes = (uint64_t)(rows * in / fi->block_size * fi->block_bytes);
    unsigned char *w = malloc((size_t)*bytes);
    CHECK_OK(pw_format_quantize(ctx, f, x, (size_t)(rows * in / fi->block_size), w), ctx);
    free(x);
    return w;
}

static float *decode_all(pw_context *ctx, const pw_view *v) {
    size_t n = (size_t)pw_view_elements(v);
    float *y = malloc(sizeof(float) * n);
    CHECK_OK(pw_view_to_float(ctx, v, y, n), ctx);
    return y;
}

/* Bitwise equality of two float arrays (NaN-safe, and -0 != +0 counts). */
static int same_bits(const float *a, const float *b, size_t n) {
    return memcmp(a, b, n * sizeof(float)) == 0;
}

/* Every sub-view narrowed by rows [r0, r0+nr) and blocks [b0, b0+nb) decodes to the
 * corresponding window of the reference matrix, and get() agrees. */
static void check_window(pw_context *ctx, const pw_view *v, const float *ref, int64_t in,
                         int64_t r0, int64_t nr, int64_t b0, int64_t nb, const char *what) {
    const int64_t bs = pw_format_get(v->format)->block_size;
    pw_view a, b;
    CHECK_OK(pw_view_narrow(ctx, v, 0, r0, nr, &a), ctx);
    CHECK_OK(pw_view_narrow(ctx, &a, 1, b0 * bs, nb * bs, &b), ctx);
    float *y = decode_all(ctx, &b);
    int bad = 0;
    for (int64_t r = 0; r < nr && !bad; ++r) {
        if (!same_bits(y + r * nb * bs, ref + (r0 + r) * in + b0 * bs, (size_t)(nb * bs))) bad = 1;
    }
    CHECK(!bad, "%s %s: window rows [%lld,+%lld) blocks [%lld,+%lld) differs from row-major",
          pw_format_get(v->format)->name, what, (long long)r0, (long long)nr, (long long)b0,
          (long long)nb);
    /* get() on a sample of positions, including the window's last element. */
    for (int64_t k = 0; k < 7; ++k) {
        int64_t idx[2] = {(k * 5) % nr, (k * 37 + 3) % (nb * bs)};
        if (k == 6) {
            idx[0] = nr - 1;
            idx[1] = nb * bs - 1;
        }
        float g = 0;
        CHECK_OK(pw_view_get(ctx, &b, idx, &g), ctx);
        float e = ref[(r0 + idx[0]) * in + b0 * bs + idx[1]];
        CHECK(memcmp(&g, &e, sizeof g) == 0, "%s %s get(%lld,%lld) = %g, expected %g",
              pw_format_get(v->format)->name, what, (long long)idx[0], (long long)idx[1], g, e);
    }
    free(y);
}

static void check_format(pw_context *ctx, trace_log *log, pw_format f, int64_t rows,
                         int64_t bpr) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t bs = fi->block_size, in = bpr * bs;
    uint64_t bytes;
    unsigned char *w = make_weight(ctx, f, rows, in, 1000 + (uint64_t)f * 7 + (uint64_t)bpr, &bytes);
    pw_view rm;
    const int64_t shape[2] = {rows, in};
    CHECK_OK(pw_view_init(ctx, &rm, f, 2, shape, PW_LAYOUT_ROW_MAJOR, w, bytes), ctx);
    rm.name = "w";
    CHECK(pw_view_order(&rm) == PW_ORDER_ROW_MAJOR, "%s init order", fi->name);
    float *ref = decode_all(ctx, &rm);

    pw_arena *arena = NULL;
    CHECK_OK(pw_arena_create(ctx, &arena), ctx);

    /* Same order: same view, no copy, no event. */
    memset(log, 0, sizeof *log);
    pw_view same;
    CHECK_OK(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, arena, &same), ctx);
    CHECK(log->adapters == 0 && same.data == rm.data, "%s: row_major -> row_major copied", fi->name);

    /* A prepack to a layout that no usable kernel reads as it is warns, naming what kernels
     * read; to one that a kernel reads, it does not: each order warns exactly when no
     * non-reference kernel of the format reading it is usable here (input-block-major ones
     * exist for most block formats from AVX2 and dotprod on; none at the scalar level). */
    {
        int rm_kernel = 0, ibm_kernel = 0;
        for (size_t i = 0; i < pw_kernel_count(); ++i) {
            const pw_kernel_info *k = pw_kernel_info_get(i);
            const int ok = k->kind == PW_WEIGHT_BLOCKS && k->format == f && !k->is_reference &&
                           pw_kernel_usable(ctx, i);
            rm_kernel |= ok && k->layout == PW_LAYOUT_BLOCKED_ROW_MAJOR;
            ibm_kernel |= ok && k->layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR;
        }
        pw_view tmp;
        memset(log, 0, sizeof *log);
        CHECK_OK(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, arena, &tmp), ctx);
        CHECK(log->warnings == !rm_kernel, "%s: row_major prepack: %d warnings, row-major kernel %d: %s",
              fi->name, log->warnings, rm_kernel, log->last_warning);
        memset(log, 0, sizeof *log);
        CHECK_OK(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &tmp), ctx);
        CHECK(log->warnings == !ibm_kernel, "%s: input_block_major prepack: %d warnings, "
              "input-block-major kernel %d: %s", fi->name, log->warnings, ibm_kernel,
              log->last_warning);
        if (!ibm_kernel)
            CHECK(strstr(log->last_warning, "input_block_major") &&
                      strstr(log->last_warning, "reference kernel") &&
                      strstr(log->last_warning, "pw_weight_create"),
                  "%s: input_block_major prepack warning: %s", fi->name, log->last_warning);
        if (rm_kernel && !ibm_kernel)
            CHECK(strstr(log->last_warning, "row_major") != NULL, "%s: the warning does not name "
                  "row_major, which a kernel reads: %s", fi->name, log->last_warning);
    }

    /* To INPUT_BLOCK_MAJOR: one event, the whole weight's bytes. */
    pw_view ibm;
    memset(log, 0, sizeof *log);
    CHECK_OK(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &ibm), ctx);
    CHECK(log->adapters == 1, "%s: %d adapter events, expected 1", fi->name, log->adapters);
    CHECK(log->last_bytes == bytes, "%s: adapter bytes %llu, expected %llu", fi->name,
          (unsigned long long)log->last_bytes, (unsigned long long)bytes);
    CHECK(strcmp(log->last_from, "row_major") == 0 && strcmp(log->last_to, "input_block_major") == 0 &&
              strcmp(log->last_tensor, "w") == 0,
          "%s: adapter %s -> %s tensor %s", fi->name, log->last_from, log->last_to, log->last_tensor);
    CHECK(pw_view_order(&ibm) == PW_ORDER_INPUT_BLOCK_MAJOR, "%s: prepacked order %s", fi->name,
          pw_order_name(pw_view_order(&ibm)));
    CHECK(ibm.strides[0] == 1 && ibm.strides[1] == rows, "%s: IBM strides [%lld, %lld]", fi->name,
          (long long)ibm.strides[0], (long long)ibm.strides[1]);
    /* Prepacking an IBM view to IBM again is free. */
    memset(log, 0, sizeof *log);
    pw_view ibm2;
    CHECK_OK(pw_view_prepack(ctx, &ibm, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &ibm2), ctx);
    CHECK(log->adapters == 0 && ibm2.data == ibm.data, "%s: ibm -> ibm copied", fi->name);

    float *y = decode_all(ctx, &ibm);
    CHECK(same_bits(y, ref, (size_t)(rows * in)), "%s: to_float(ibm) != to_float(row_major)", fi->name);
    free(y);

    /* The bug this library exists to prevent: IBM bytes read as ROW_MAJOR differ. */
    if (bpr > 1) {
        pw_view wrong;
        CHECK_OK(pw_view_init(ctx, &wrong, f, 2, shape, PW_LAYOUT_ROW_MAJOR, ibm.data, bytes), ctx);
        float *z = decode_all(ctx, &wrong);
        CHECK(!same_bits(z, ref, (size_t)(rows * in)),
              "%s: IBM bytes read as row-major decode the same; the test cannot see block order",
              fi->name);
        free(z);
    }

    /* Narrowed windows of both orders. */
    const int64_t windows[][4] = {{0, rows, 0, bpr}, {1, 3, 1, bpr - 1}, {rows - 2, 2, bpr - 1, 1},
                                  {5, 11, 0, 2},     {7, 1, 1, 1}};
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; ++k) {
        const int64_t *wd = windows[k];
        check_window(ctx, &rm, ref, in, wd[0], wd[1], wd[2], wd[3], "row_major");
        check_window(ctx, &ibm, ref, in, wd[0], wd[1], wd[2], wd[3], "input_block_major");
    }

    /* Prepack a narrowed row-major view: a dense IBM copy of just that window. */
    pw_view nar, nar_ibm;
    CHECK_OK(pw_view_narrow(ctx, &rm, 0, 3, rows - 4, &nar), ctx);
    CHECK_OK(pw_view_narrow(ctx, &nar, 1, bs, (bpr - 1) * bs, &nar), ctx);
    memset(log, 0, sizeof *log);
    CHECK_OK(pw_view_prepack(ctx, &nar, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &nar_ibm), ctx);
    CHECK(log->adapters == 1 && log->last_bytes == (uint64_t)((rows - 4) * (bpr - 1) * fi->block_bytes),
          "%s: narrowed prepack bytes %llu", fi->name, (unsigned long long)log->last_bytes);
    check_window(ctx, &nar_ibm, ref + 3 * in + bs, in, 0, rows - 4, 0, bpr - 1, "narrowed ibm");

    /* Back to row-major: the original bytes. */
    pw_view back;
    memset(log, 0, sizeof *log);
    CHECK_OK(pw_view_prepack(ctx, &ibm, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, arena, &back), ctx);
    CHECK(log->adapters == 1 && strcmp(log->last_from, "input_block_major") == 0,
          "%s: ibm -> row_major events %d from %s", fi->name, log->adapters, log->last_from);
    CHECK(memcmp(back.data, w, (size_t)bytes) == 0, "%s: row_major -> ibm -> row_major changed bytes",
          fi->name);

    /* Bytes-level converters: there and back, and identity to the current order. */
    pw_block_grid grid = {rows, bpr, fi->block_bytes, {PW_ORDER_ROW_MAJOR, 0}};
    unsigned char *k1 = malloc((size_t)bytes), *k2 = malloc((size_t)bytes);
    CHECK_OK(pw_bytes_to_kernel_order(ctx, &grid, w, bytes, k1, bytes), ctx);
    CHECK(memcmp(k1, ibm.data, (size_t)bytes) == 0, "%s: bytes->kernel order != prepack", fi->name);
    grid.layout.order = PW_ORDER_INPUT_BLOCK_MAJOR;
    CHECK_OK(pw_bytes_to_kernel_order(ctx, &grid, k1, bytes, k2, bytes), ctx);
    CHECK(memcmp(k1, k2, (size_t)bytes) == 0, "%s: kernel-order bytes to kernel order changed them",
          fi->name);
    CHECK_OK(pw_bytes_to_canonical_order(ctx, &grid, k1, bytes, k2, bytes), ctx);
    CHECK(memcmp(k2, w, (size_t)bytes) == 0, "%s: there and back changed the bytes", fi->name);
    grid.layout.order = PW_ORDER_ROW_MAJOR;
    CHECK_OK(pw_bytes_to_canonical_order(ctx, &grid, w, bytes, k2, bytes), ctx);
    CHECK(memcmp(k2, w, (size_t)bytes) == 0, "%s: canonical to canonical changed bytes", fi->name);
    CHECK_STATUS(pw_bytes_to_kernel_order(ctx, &grid, w, bytes - 1, k2, bytes), PW_ERR_SHAPE, ctx);
    CHECK(strstr(pw_context_message(ctx), "short") != NULL, "%s: short buffer message: %s", fi->name,
          pw_context_message(ctx));

    /* Transposed view: reads the transposed matrix; prepack/materialize refuse block formats. */
    pw_view tr;
    CHECK_OK(pw_view_transpose(ctx, &rm, &tr), ctx);
    CHECK(pw_view_order(&tr) == PW_ORDER_STRIDED && tr.shape[0] == in && tr.shape[1] == rows,
          "%s: transposed view order/shape", fi->name);
    float *yt = decode_all(ctx, &tr);
    int tbad = 0;
    for (int64_t i = 0; i < in && !tbad; ++i)
        for (int64_t j = 0; j < rows; ++j)
            if (memcmp(&yt[i * rows + j], &ref[j * in + i], sizeof(float)) != 0) tbad = 1;
    CHECK(!tbad, "%s: to_float of the transposed view is not the transpose", fi->name);
    free(yt);
    pw_view m;
    if (bs > 1) {
        CHECK_STATUS(pw_view_materialize(ctx, &tr, arena, &m), PW_ERR_LAYOUT, ctx);
        CHECK(strstr(pw_context_message(ctx), "pw_matmul_wt") != NULL, "%s: message: %s", fi->name,
              pw_context_message(ctx));
    } else {
        CHECK_OK(pw_view_materialize(ctx, &tr, arena, &m), ctx);
        float *ym = decode_all(ctx, &m);
        float *yt2 = decode_all(ctx, &tr);
        CHECK(same_bits(ym, yt2, (size_t)(rows * in)), "%s: materialized transpose differs", fi->name);
        free(ym);
        free(yt2);
    }
    CHECK_STATUS(pw_view_prepack(ctx, &tr, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &m),
                 PW_ERR_LAYOUT, ctx);

    free(k1);
    free(k2);
    free(ref);
    pw_arena_destroy(arena);
    free(w);
}

/* Row-tiled orders (nr = 4, 8): same values, bytes match the documented flat index. */
static void check_tiled(pw_context *ctx, trace_log *log, pw_format f) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t rows = 24, bpr = 3, in = bpr * fi->block_size;
    uint64_t bytes;
    unsigned char *w = make_weight(ctx, f, rows, in, 77 + (uint64_t)f, &bytes);
    pw_view rm;
    const int64_t shape[2] = {rows, in};
    CHECK_OK(pw_view_init(ctx, &rm, f, 2, shape, PW_LAYOUT_ROW_MAJOR, w, bytes), ctx);
    float *ref = decode_all(ctx, &rm);
    pw_arena *arena = NULL;
    CHECK_OK(pw_arena_create(ctx, &arena), ctx);
    for (int64_t nr = 4; nr <= 8; nr += 4) {
        pw_view t;
        memset(log, 0, sizeof *log);
        CHECK_OK(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_ROW_TILED, nr}, arena, &t), ctx);
        char expect[32];
        snprintf(expect, sizeof expect, "row_tiled_%lld", (long long)nr);
        CHECK(log->adapters == 1 && log->last_bytes == bytes && strcmp(log->last_to, expect) == 0,
              "%s nr=%lld: events %d bytes %llu to %s", fi->name, (long long)nr, log->adapters,
              (unsigned long long)log->last_bytes, log->last_to);
        CHECK(pw_view_order(&t) == PW_ORDER_ROW_TILED, "%s: tiled order", fi->name);
        float *y = decode_all(ctx, &t);
        CHECK(same_bits(y, ref, (size_t)(rows * in)), "%s nr=%lld: tiled values differ", fi->name,
              (long long)nr);
        free(y);
        /* Block (o, b) sits at (o/nr)*nr*bpr + b*nr + o%nr. */
        const int64_t o = 13, b = 2;
        const int64_t flat = (o / nr) * nr * bpr + b * nr + o % nr;
        CHECK(memcmp(t.data + flat * fi->block_bytes, w + (o * bpr + b) * fi->block_bytes,
                     (size_t)fi->block_bytes) == 0,
              "%s nr=%lld: block (13,2) not at flat %lld", fi->name, (long long)nr, (long long)flat);
        check_window(ctx, &t, ref, in, nr, nr, 1, 2, "row_tiled");
        pw_view bad;
        CHECK_STATUS(pw_view_narrow(ctx, &t, 0, 1, nr, &bad), PW_ERR_SHAPE, ctx);
        /* Bytes converters agree with prepack, and come back. */
        pw_block_grid g = {rows, bpr, fi->block_bytes, {PW_ORDER_ROW_MAJOR, 0}};
        unsigned char *k = malloc((size_t)bytes), *k2 = malloc((size_t)bytes);
        CHECK_OK(pw_bytes_reorder(ctx, &g, w, bytes, (pw_layout){PW_ORDER_ROW_TILED, nr}, k, bytes), ctx);
        CHECK(memcmp(k, t.data, (size_t)bytes) == 0, "%s: bytes tiled != prepack tiled", fi->name);
        g.layout = (pw_layout){PW_ORDER_ROW_TILED, nr};
        CHECK_OK(pw_bytes_to_canonical_order(ctx, &g, k, bytes, k2, bytes), ctx);
        CHECK(memcmp(k2, w, (size_t)bytes) == 0, "%s: tiled there and back", fi->name);
        free(k);
        free(k2);
    }
    pw_view t;
    CHECK_STATUS(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_ROW_TILED, 5}, arena, &t), PW_ERR_SHAPE, ctx);
    free(ref);
    pw_arena_destroy(arena);
    free(w);
}

static void check_bad_input(pw_context *ctx) {
    unsigned char buf[18 * 9] = {0};
    pw_view v;
    const int64_t partial[2] = {3, 33};
    CHECK_STATUS(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, partial, PW_LAYOUT_ROW_MAJOR, buf, sizeof buf), PW_ERR_SHAPE, ctx);
    CHECK(strstr(pw_context_message(ctx), "33") && strstr(pw_context_message(ctx), "Q4_0"),
          "partial block message: %s", pw_context_message(ctx));
    const int64_t shape[2] = {3, 96};
    CHECK_STATUS(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, buf, sizeof buf - 1), PW_ERR_SHAPE, ctx);
    CHECK(strstr(pw_context_message(ctx), "162") && strstr(pw_context_message(ctx), "161"),
          "too few bytes message: %s", pw_context_message(ctx));
    CHECK_STATUS(pw_view_init(ctx, &v, (pw_format)99, 2, shape, PW_LAYOUT_ROW_MAJOR, buf, sizeof buf), PW_ERR_UNSUPPORTED, ctx);
    CHECK_STATUS(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 5, shape, PW_LAYOUT_ROW_MAJOR, buf, sizeof buf), PW_ERR_SHAPE, ctx);
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, buf, sizeof buf), ctx);
    pw_view n;
    CHECK_STATUS(pw_view_narrow(ctx, &v, 1, 16, 32, &n), PW_ERR_SHAPE, ctx);
    CHECK(strstr(pw_context_message(ctx), "splits"), "narrow message: %s", pw_context_message(ctx));
    CHECK_STATUS(pw_view_narrow(ctx, &v, 0, 2, 2, &n), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_view_narrow(ctx, &v, 0, -1, 1, &n), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_view_narrow(ctx, &v, 2, 0, 1, &n), PW_ERR_SHAPE, ctx);
    int64_t idx[2] = {3, 0};
    float x;
    CHECK_STATUS(pw_view_get(ctx, &v, idx, &x), PW_ERR_SHAPE, ctx);
    /* A hand-made view whose strides reach past the storage is refused, overflow included. */
    pw_view h = v;
    h.strides[0] = INT64_MAX / 2;
    CHECK_STATUS(pw_view_check(ctx, &h), PW_ERR_OVERFLOW, ctx);
    h = v;
    h.offset = 1;
    CHECK_STATUS(pw_view_check(ctx, &h), PW_ERR_SHAPE, ctx);
    float out[3 * 96];
    CHECK_STATUS(pw_view_to_float(ctx, &v, out, 3 * 96 - 1), PW_ERR_SHAPE, ctx);
    /* Orientation heuristic. */
    CHECK_STATUS(pw_require_out_in(ctx, 4096, 11000, PW_FORMAT_Q4_0), PW_ERR_ORIENTATION, ctx);
    CHECK(strstr(pw_context_message(ctx), "PW_ORIENT_OUT_IN"), "orientation message: %s",
          pw_context_message(ctx));
    CHECK_OK(pw_require_out_in(ctx, 11008, 4096, PW_FORMAT_Q4_0), ctx);
    CHECK_OK(pw_require_out_in(ctx, 4096, 4096, PW_FORMAT_Q4_K), ctx); /* cannot tell: quiet */
    CHECK_STATUS(pw_require_out_in(ctx, 40, 100, PW_FORMAT_Q4_K), PW_ERR_SHAPE, ctx);
    /* Overlapping converter buffers are refused. */
    pw_block_grid g = {3, 3, 18, {PW_ORDER_ROW_MAJOR, 0}};
    CHECK_STATUS(pw_bytes_to_kernel_order(ctx, &g, buf, 162, buf, 162), PW_ERR_INVALID_ARGUMENT, ctx);
}

/* One block per row: every order lays the blocks out the same way, so a dense view is in
 * every layout already: prepack gives the same bytes (same pointer) relabelled, no event.
 * A one-block-wide window of a wider weight is not dense: it is copied, with its event. */
static void check_one_block_wide(pw_context *ctx, trace_log *log, pw_format f) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t rows = 12, bs = fi->block_size;
    uint64_t bytes;
    unsigned char *w = make_weight(ctx, f, rows, bs, 77 + (uint64_t)f, &bytes);
    pw_view rm;
    const int64_t shape[2] = {rows, bs};
    CHECK_OK(pw_view_init(ctx, &rm, f, 2, shape, PW_LAYOUT_ROW_MAJOR, w, bytes), ctx);
    rm.name = "narrow";
    float *ref = decode_all(ctx, &rm);
    pw_arena *arena = NULL;
    CHECK_OK(pw_arena_create(ctx, &arena), ctx);
    const pw_layout targets[3] = {{PW_ORDER_INPUT_BLOCK_MAJOR, 0}, {PW_ORDER_ROW_TILED, 4},
                                  {PW_ORDER_ROW_MAJOR, 0}};
    pw_view cur = rm;
    for (int k = 0; k < 3; ++k) {
        memset(log, 0, sizeof *log);
        pw_view out;
        CHECK_OK(pw_view_prepack(ctx, &cur, targets[k], arena, &out), ctx);
        CHECK(log->adapters == 0 && out.data == rm.data, "%s one block wide -> %s: %d events, %s pointer",
              fi->name, pw_order_name(targets[k].order), log->adapters,
              out.data == rm.data ? "same" : "another");
        /* labelled as asked (the order functions cannot tell them apart at one block wide:
         * the strides say which) */
        const int labelled = targets[k].order == PW_ORDER_INPUT_BLOCK_MAJOR
                                 ? out.strides[0] == 1 && out.strides[1] == rows && out.tile_rows == 0
                             : targets[k].order == PW_ORDER_ROW_TILED
                                 ? out.tile_rows == targets[k].tile_rows
                                 : out.strides[1] == 1 && out.tile_rows == 0;
        CHECK(labelled, "%s one block wide as %s: strides [%lld, %lld], tile %lld", fi->name,
              pw_order_name(targets[k].order), (long long)out.strides[0], (long long)out.strides[1],
              (long long)out.tile_rows);
        float *got = decode_all(ctx, &out);
        CHECK(memcmp(got, ref, sizeof(float) * (size_t)(rows * bs)) == 0, "%s one block wide as %s: values",
              fi->name, pw_order_name(targets[k].order));
        free(got);
        cur = out;
    }
    /* Not dense: block 1 of a three-block-wide weight. */
    uint64_t wide_bytes;
    unsigned char *wide = make_weight(ctx, f, rows, 3 * bs, 91 + (uint64_t)f, &wide_bytes);
    pw_view wv, win, wout;
    const int64_t wshape[2] = {rows, 3 * bs};
    CHECK_OK(pw_view_init(ctx, &wv, f, 2, wshape, PW_LAYOUT_ROW_MAJOR, wide, wide_bytes), ctx);
    wv.name = "window";
    CHECK_OK(pw_view_narrow(ctx, &wv, 1, bs, bs, &win), ctx);
    memset(log, 0, sizeof *log);
    CHECK_OK(pw_view_prepack(ctx, &win, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, arena, &wout), ctx);
    CHECK(log->adapters == 1 && log->last_bytes == (uint64_t)rows * (uint64_t)fi->block_bytes,
          "%s a one-block window: %d events of %llu bytes", fi->name, log->adapters,
          (unsigned long long)log->last_bytes);
    float *wr = decode_all(ctx, &win), *wg = decode_all(ctx, &wout);
    CHECK(memcmp(wr, wg, sizeof(float) * (size_t)(rows * bs)) == 0, "%s window values", fi->name);
    free(wr);
    free(wg);
    free(wide);
    free(ref);
    free(w);
    pw_arena_destroy(arena);
}

/* Raw bytes always name their order: a zeroed layout (no order) is refused by every entry
 * point that takes caller bytes; kernel-order bytes named as such read right; a rank other
 * than 2 cannot be in a 2-D order. */
static void check_named_orders(pw_context *ctx, pw_format f) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t rows = 8, bpr = 3, in = bpr * fi->block_size, bb = fi->block_bytes;
    uint64_t bytes;
    unsigned char *w = make_weight(ctx, f, rows, in, 555 + (uint64_t)f, &bytes);
    const int64_t shape[2] = {rows, in};
    const pw_layout none = {0, 0};
    pw_view v;
    CHECK(pw_view_init(ctx, &v, f, 2, shape, none, w, bytes) == PW_ERR_INVALID_ARGUMENT &&
              strstr(pw_context_message(ctx), "names no order"),
          "%s: pw_view_init with no order: %s", fi->name, pw_context_message(ctx));
    const pw_block_grid zero_grid = {rows, bpr, bb, none};
    unsigned char *k = malloc((size_t)bytes), *back = malloc((size_t)bytes);
    REQUIRE(k && back, "malloc");
    CHECK(pw_bytes_reorder(ctx, &zero_grid, w, bytes, PW_LAYOUT_INPUT_BLOCK_MAJOR, k, bytes) ==
              PW_ERR_INVALID_ARGUMENT,
          "%s: pw_bytes_reorder from no order", fi->name);
    const pw_block_grid grid = {rows, bpr, bb, PW_LAYOUT_ROW_MAJOR};
    CHECK(pw_bytes_reorder(ctx, &grid, w, bytes, none, k, bytes) == PW_ERR_INVALID_ARGUMENT,
          "%s: pw_bytes_reorder to no order", fi->name);
    CHECK(pw_fixture_tags(ctx, f, rows, bpr, none, k, bytes) == PW_ERR_INVALID_ARGUMENT,
          "%s: pw_fixture_tags in no order", fi->name);
    pw_disagreement_report r;
    CHECK(pw_disagreement(ctx, w, bytes, f, rows, bpr, none, &r) == PW_ERR_INVALID_ARGUMENT,
          "%s: pw_disagreement in no order", fi->name);
    pw_arena *arena = NULL;
    CHECK_OK(pw_arena_create(ctx, &arena), ctx);
    pw_view rm, kv, prep;
    CHECK_OK(pw_view_init(ctx, &rm, f, 2, shape, PW_LAYOUT_ROW_MAJOR, w, bytes), ctx);
    CHECK(pw_view_prepack(ctx, &rm, none, arena, &prep) == PW_ERR_INVALID_ARGUMENT,
          "%s: pw_view_prepack to no order", fi->name);
    /* kernel-order bytes, named: the same matrix */
    CHECK_OK(pw_bytes_reorder(ctx, &grid, w, bytes, PW_LAYOUT_INPUT_BLOCK_MAJOR, k, bytes), ctx);
    CHECK_OK(pw_view_init(ctx, &kv, f, 2, shape, PW_LAYOUT_INPUT_BLOCK_MAJOR, k, bytes), ctx);
    CHECK(pw_view_order(&kv) == PW_ORDER_INPUT_BLOCK_MAJOR, "%s: labelled %s", fi->name,
          pw_order_name(pw_view_order(&kv)));
    float *want = decode_all(ctx, &rm), *got = decode_all(ctx, &kv);
    CHECK(memcmp(want, got, sizeof(float) * (size_t)(rows * in)) == 0,
          "%s: kernel-order bytes named as such decode to other values", fi->name);
    free(got);
    const pw_layout tiled = {PW_ORDER_ROW_TILED, 4};
    const pw_block_grid kgrid = {rows, bpr, bb, PW_LAYOUT_INPUT_BLOCK_MAJOR};
    CHECK_OK(pw_bytes_reorder(ctx, &kgrid, k, bytes, tiled, back, bytes), ctx);
    pw_view tv;
    CHECK_OK(pw_view_init(ctx, &tv, f, 2, shape, tiled, back, bytes), ctx);
    got = decode_all(ctx, &tv);
    CHECK(memcmp(want, got, sizeof(float) * (size_t)(rows * in)) == 0,
          "%s: row_tiled_4 bytes named as such decode to other values", fi->name);
    free(got);
    /* the same bytes named wrongly: the tag fixture says which order they are in */
    CHECK_OK(pw_fixture_tags(ctx, f, rows, bpr, PW_LAYOUT_INPUT_BLOCK_MAJOR, k, bytes), ctx);
    CHECK_OK(pw_disagreement(ctx, k, bytes, f, rows, bpr, PW_LAYOUT_ROW_MAJOR, &r), ctx);
    CHECK(r.kind == PW_WRONG_BLOCK && r.other_layout, "%s: kernel-order tags read as canonical: %s",
          fi->name, r.message);
    /* 2-D orders need a 2-D view; a bad tile is refused */
    const int64_t shape3[3] = {2, rows / 2, in};
    CHECK(pw_view_init(ctx, &v, f, 3, shape3, PW_LAYOUT_INPUT_BLOCK_MAJOR, k, bytes) == PW_ERR_SHAPE,
          "%s: a 3-D view in the kernel order", fi->name);
    CHECK(pw_view_init(ctx, &v, f, 2, shape, (pw_layout){PW_ORDER_ROW_TILED, 3}, k, bytes) ==
              PW_ERR_SHAPE,
          "%s: row_tiled_3 over 8 rows", fi->name);
    CHECK(pw_view_init(ctx, &v, f, 2, shape, (pw_layout){PW_ORDER_STRIDED, 0}, k, bytes) ==
              PW_ERR_INVALID_ARGUMENT,
          "%s: strided is not an order bytes are in", fi->name);
    free(want);
    free(k);
    free(back);
    free(w);
    pw_arena_destroy(arena);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    trace_log log;
    pw_context_set_trace(ctx, on_trace, &log);
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        check_format(ctx, &log, (pw_format)f, 19, 3);
        check_format(ctx, &log, (pw_format)f, 21, 5);
        check_tiled(ctx, &log, (pw_format)f);
        check_one_block_wide(ctx, &log, (pw_format)f);
        check_named_orders(ctx, (pw_format)f);
    }
    check_bad_input(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
