/*
 * Named conversions between block orders: pw_view_prepack and
 * pw_view_materialize. Each copies into a caller-given arena and emits an
 * adapter trace event with its byte count (rule 3). Free (same bytes, no event):
 * a view already in the target order, and a one-block-wide weight whose blocks lie
 * one after another, which every order lays out the same way.
 */
#include "base/internal.h"
#include "format/format_internal.h"
#include "layout/layout_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *view_name(const pw_view *v) { return v && v->name ? v->name : "(unnamed)"; }

pw_layout pw__layout_normalize(pw_layout l, int64_t rows) {
    if (l.order == PW_ORDER_ROW_TILED) {
        if (l.tile_rows == 1) return (pw_layout){PW_ORDER_ROW_MAJOR, 0};
        if (l.tile_rows == rows) return (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0};
    } else {
        l.tile_rows = 0;
    }
    return l;
}

void pw__view_set_dense(pw_view *v, pw_layout l, int64_t rows, int64_t bpr) {
    v->offset = 0;
    v->block_axis = 1;
    v->tile_rows = 0;
    v->tile_stride = 0;
    switch (l.order) {
    case PW_ORDER_INPUT_BLOCK_MAJOR:
        v->strides[0] = 1;
        v->strides[1] = rows;
        break;
    case PW_ORDER_ROW_TILED:
        v->tile_rows = l.tile_rows;
        v->tile_stride = l.tile_rows * bpr;
        v->strides[0] = 1;
        v->strides[1] = l.tile_rows;
        break;
    default:
        v->strides[0] = bpr;
        v->strides[1] = 1;
        break;
    }
}

static void trace_adapter(pw_context *ctx, const pw_view *src, pw_layout from, pw_layout to,
                          uint64_t bytes) {
    char f[32], t[32];
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_ADAPTER;
    e.tensor = src->name;
    e.bytes = bytes;
    e.from = pw_layout_name(from, f, sizeof f);
    e.to = pw_layout_name(to, t, sizeof t);
    pw__trace(ctx, &e);
}

pw_status pw__view_prepack(pw_context *ctx, const pw_view *src, pw_layout target, pw_arena *arena,
                           pw_view *out) {
    PW__FAIL_IF(out == NULL || arena == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_view_prepack: NULL argument");
    PW__TRY(pw_view_check(ctx, src));
    PW__FAIL_IF(src->rank != 2, ctx, PW_ERR_SHAPE,
                "pw_view_prepack '%s': needs a 2-D [out, in] weight, got rank %d", view_name(src),
                (int)src->rank);
    PW__FAIL_IF(src->block_axis != 1, ctx, PW_ERR_LAYOUT,
                "pw_view_prepack '%s': the view is transposed (its blocks tile axis 0, labelled "
                "[in, out]); a block-quantized weight cannot be relaid out along the other axis. "
                "Keep the weight as [out, in] (PW_ORIENT_OUT_IN) and use pw_matmul_wt for x*W^T",
                view_name(src));
    const pw__format_traits *t = pw__format(src->format);
    const int64_t rows = src->shape[0];
    const int64_t bpr = src->shape[1] / t->info.block_size;
    const int64_t bb = t->info.block_bytes;
    char who[160];
    snprintf(who, sizeof who, "pw_view_prepack '%.120s'", view_name(src));
    PW__TRY(pw__check_byte_layout(ctx, target, rows, who, "target"));
    const pw_layout to = pw__layout_normalize(target, rows);
    const pw_layout from = pw__layout_normalize(pw_view_layout(src), rows);
    if (from.order == to.order && from.tile_rows == to.tile_rows) {
        *out = *src;
        return PW_OK;
    }
    /* One block per row: every order puts block (o, 0) at flat index o, so a source whose
     * blocks lie one after another is already in the target layout: the same bytes,
     * relabelled, with no copy and no event. */
    const uint8_t *first = pw_view_block_ptr(src, 0, 0);
    if (bpr == 1 && (rows == 1 || (pw_view_block_ptr(src, 1, 0) == first + bb &&
                                   pw_view_block_ptr(src, rows - 1, 0) ==
                                       first + (uint64_t)(rows - 1) * (uint64_t)bb))) {
        bool dense = true;
        for (int64_t o = 2; o < rows - 1 && dense; ++o)
            dense = pw_view_block_ptr(src, o, 0) == first + (uint64_t)o * (uint64_t)bb;
        if (dense) {
            pw_view v = *src;
            pw__view_set_dense(&v, to, rows, 1);
            v.data = first;
            v.data_bytes = src->data_bytes - (uint64_t)(first - src->data);
            *out = v;
            return PW_OK;
        }
    }
    const uint64_t bytes = pw_view_bytes(src); /* fits int64: pw_view_check */
    PW__FAIL_IF(bytes > SIZE_MAX, ctx, PW_ERR_OVERFLOW,
                "pw_view_prepack '%s': %" PRIu64 " bytes do not fit this machine's address space", view_name(src),
                bytes);
    uint8_t *dst = pw_arena_alloc(arena, (size_t)bytes);
    PW__FAIL_IF(dst == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "pw_view_prepack '%s': cannot allocate %" PRIu64 " bytes in the arena",
                view_name(src), bytes);
    pw_view v = *src;
    pw__view_set_dense(&v, to, rows, bpr);
    v.data = dst;
    v.data_bytes = bytes;
    v.storage = PW_STORAGE_ARENA;
    v.source_id[0] = v.source_id[1] = 0; /* a copy: its identity is its content */
    /* Walk the source in its own order so reads stream; writes scatter. */
    const bool src_rows_first = from.order != PW_ORDER_INPUT_BLOCK_MAJOR;
    const int64_t n_outer = src_rows_first ? rows : bpr, n_inner = src_rows_first ? bpr : rows;
    for (int64_t i = 0; i < n_outer; ++i) {
        for (int64_t j = 0; j < n_inner; ++j) {
            const int64_t o = src_rows_first ? i : j, b = src_rows_first ? j : i;
            memcpy(dst + (uint64_t)pw_layout_flat_index(to, rows, bpr, o, b) * (uint64_t)bb,
                   pw_view_block_ptr(src, o, b), (size_t)bb);
        }
    }
    trace_adapter(ctx, src, from, to, bytes);
    *out = v;
    return PW_OK;
}

pw_status pw_view_materialize(pw_context *ctx, const pw_view *src, pw_arena *arena,
                              pw_view *out) {
    PW__FAIL_IF(out == NULL || arena == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_view_materialize: NULL argument");
    PW__TRY(pw_view_check(ctx, src));
    const pw__format_traits *t = pw__format(src->format);
    PW__FAIL_IF(src->block_axis != src->rank - 1 && t->info.block_size > 1, ctx, PW_ERR_LAYOUT,
                "pw_view_materialize '%s': materialising the transpose of a %s weight would need "
                "requantization along the other axis; to compute x*W^T keep W as [out, in] and "
                "call pw_matmul_wt",
                view_name(src), t->info.name);
    const uint64_t bytes = pw_view_bytes(src); /* fits int64: pw_view_check */
    PW__FAIL_IF(bytes > SIZE_MAX, ctx, PW_ERR_OVERFLOW,
                "pw_view_materialize '%s': %" PRIu64 " bytes do not fit this machine's address space",
                view_name(src), bytes);
    uint8_t *dst = pw_arena_alloc(arena, (size_t)bytes);
    PW__FAIL_IF(dst == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "pw_view_materialize '%s': cannot allocate %" PRIu64 " bytes", view_name(src),
                bytes);
    /* Dense row-major over the logical shape; for block size 1 the grid is the shape,
     * so a transposed float view is a plain element transpose. */
    pw_view v;
    PW__TRY(pw_view_init(ctx, &v, src->format, src->rank, src->shape, PW_LAYOUT_ROW_MAJOR, dst, bytes));
    v.name = src->name;
    v.storage = PW_STORAGE_ARENA;
    int64_t grid[PW_MAX_RANK];
    pw__view_grid(src, grid);
    const int64_t bb = t->info.block_bytes;
    int64_t c[PW_MAX_RANK] = {0, 0, 0, 0};
    uint8_t *p = dst;
    for (;;) {
        memcpy(p, src->data + (uint64_t)pw__view_block_index(src, c) * (uint64_t)bb, (size_t)bb);
        p += bb;
        int i = src->rank - 1;
        for (; i >= 0; --i) {
            if (++c[i] < grid[i]) break;
            c[i] = 0;
        }
        if (i < 0) break;
    }
    trace_adapter(ctx, src, pw_view_layout(src), (pw_layout){PW_ORDER_ROW_MAJOR, 0}, bytes);
    *out = v;
    return PW_OK;
}
