/*
 * Views: validation, narrowing, view-transpose, element access and decoding.
 * Every access goes through pw__view_block_index, so the block order lives
 * only in the strides (and, for row-tiled views, the tile fields): nothing
 * here branches on a named order.
 */
#include "base/internal.h"
#include "format/format_internal.h"
#include "layout/layout_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *view_name(const pw_view *v) { return v && v->name ? v->name : "(unnamed)"; }

void pw__view_grid(const pw_view *v, int64_t grid[PW_MAX_RANK]) {
    const int64_t bs = pw__format(v->format)->info.block_size;
    for (int i = 0; i < PW_MAX_RANK; ++i) grid[i] = i < v->rank ? v->shape[i] : 1;
    grid[v->block_axis] /= bs;
}

int64_t pw__view_block_index(const pw_view *v, const int64_t *c) {
    int64_t a = v->offset;
    if (v->tile_rows > 0) {
        const int ra = 1 - v->block_axis; /* tiling is 2-D only */
        const int64_t row = c[ra];
        return a + (row / v->tile_rows) * v->tile_stride + (row % v->tile_rows) * v->strides[ra] +
               c[v->block_axis] * v->strides[v->block_axis];
    }
    for (int i = 0; i < v->rank; ++i) a += c[i] * v->strides[i];
    return a;
}

/* Element count and dense byte size (blocks x block bytes) of a view whose rank and
 * format are valid; false when either does not fit int64 (a stride-0 broadcast view
 * can be that large while reading one block). */
static bool view_sizes(const pw_view *v, const pw__format_traits *t, int64_t *elements, int64_t *bytes) {
    int64_t n = 1;
    for (int i = 0; i < v->rank; ++i)
        if (v->shape[i] < 0 || pw__mul_overflow_i64(n, v->shape[i], &n)) return false;
    if (bytes != NULL && pw__mul_overflow_i64(n / t->info.block_size, (int64_t)t->info.block_bytes, bytes))
        return false;
    if (elements != NULL) *elements = n;
    return true;
}

pw_status pw_view_check(pw_context *ctx, const pw_view *v) {
    PW__FAIL_IF(v == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "view is NULL");
    const pw__format_traits *t = pw__format(v->format);
    PW__FAIL_IF(t == NULL, ctx, PW_ERR_UNSUPPORTED, "view '%s': unknown format %d", view_name(v),
                (int)v->format);
    PW__FAIL_IF(v->rank < 1 || v->rank > PW_MAX_RANK, ctx, PW_ERR_SHAPE,
                "view '%s': rank %d is outside 1..%d", view_name(v), (int)v->rank, PW_MAX_RANK);
    PW__FAIL_IF(v->block_axis < 0 || v->block_axis >= v->rank, ctx, PW_ERR_SHAPE,
                "view '%s': block_axis %d is outside 0..%d", view_name(v), (int)v->block_axis,
                (int)v->rank - 1);
    const int64_t bs = t->info.block_size;
    for (int i = 0; i < v->rank; ++i) {
        PW__FAIL_IF(v->shape[i] < 1, ctx, PW_ERR_SHAPE, "view '%s': shape[%d] is %" PRId64,
                    view_name(v), i, v->shape[i]);
        PW__FAIL_IF(v->strides[i] < 0, ctx, PW_ERR_SHAPE, "view '%s': strides[%d] is %" PRId64,
                    view_name(v), i, v->strides[i]);
    }
    int64_t elements, bytes;
    PW__FAIL_IF(!view_sizes(v, t, &elements, &bytes), ctx, PW_ERR_OVERFLOW,
                "view '%s': shape [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (rank %d) has more elements, "
                "or more bytes as %s, than int64 holds",
                view_name(v), v->shape[0], v->rank > 1 ? v->shape[1] : 1, v->rank > 2 ? v->shape[2] : 1,
                v->rank > 3 ? v->shape[3] : 1, (int)v->rank, t->info.name);
    PW__FAIL_IF(v->shape[v->block_axis] % bs != 0, ctx, PW_ERR_SHAPE,
                "view '%s': axis %d has %" PRId64 " elements, not a whole number of %s blocks (%" PRId64 ")",
                view_name(v), (int)v->block_axis, v->shape[v->block_axis], t->info.name, bs);
    PW__FAIL_IF(v->offset < 0, ctx, PW_ERR_SHAPE, "view '%s': offset %" PRId64 " is negative",
                view_name(v), v->offset);
    PW__FAIL_IF(v->data == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "view '%s': data is NULL",
                view_name(v));
    int64_t grid[PW_MAX_RANK];
    pw__view_grid(v, grid);
    int64_t last = v->offset;
    bool ovf = false;
    if (v->tile_rows != 0) {
        PW__FAIL_IF(v->rank != 2 || v->tile_rows < 0, ctx, PW_ERR_SHAPE,
                    "view '%s': row tiling needs a 2-D view and tile_rows > 0", view_name(v));
        const int ra = 1 - v->block_axis;
        PW__FAIL_IF(grid[ra] % v->tile_rows != 0 || v->tile_stride < 0, ctx, PW_ERR_SHAPE,
                    "view '%s': %" PRId64 " rows are not whole tiles of %" PRId64, view_name(v),
                    grid[ra], v->tile_rows);
        int64_t t1, t2, t3;
        ovf |= pw__mul_overflow_i64(grid[ra] / v->tile_rows - 1, v->tile_stride, &t1);
        ovf |= pw__mul_overflow_i64(v->tile_rows - 1, v->strides[ra], &t2);
        ovf |= pw__mul_overflow_i64(grid[v->block_axis] - 1, v->strides[v->block_axis], &t3);
        ovf |= pw__add_overflow_i64(last, t1, &last);
        ovf |= pw__add_overflow_i64(last, t2, &last);
        ovf |= pw__add_overflow_i64(last, t3, &last);
    } else {
        for (int i = 0; i < v->rank; ++i) {
            int64_t t1;
            ovf |= pw__mul_overflow_i64(grid[i] - 1, v->strides[i], &t1);
            ovf |= pw__add_overflow_i64(last, t1, &last);
        }
    }
    uint64_t need;
    ovf |= pw__mul_overflow_u64((uint64_t)last + 1, (uint64_t)t->info.block_bytes, &need);
    PW__FAIL_IF(ovf, ctx, PW_ERR_OVERFLOW, "view '%s': the last block's address overflows",
                view_name(v));
    PW__FAIL_IF(need > v->data_bytes, ctx, PW_ERR_SHAPE,
                "view '%s': needs %" PRIu64 " bytes of storage but has %" PRIu64, view_name(v),
                need, v->data_bytes);
    return PW_OK;
}

pw_status pw_view_init(pw_context *ctx, pw_view *out, pw_format format, int32_t rank,
                       const int64_t *shape, pw_layout layout, const void *data, uint64_t bytes) {
    PW__FAIL_IF(out == NULL || shape == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_view_init: NULL argument");
    const pw__format_traits *t = pw__format(format);
    PW__FAIL_IF(t == NULL, ctx, PW_ERR_UNSUPPORTED, "pw_view_init: unknown format %d", (int)format);
    PW__FAIL_IF(rank < 1 || rank > PW_MAX_RANK, ctx, PW_ERR_SHAPE,
                "pw_view_init: rank %d is outside 1..%d", (int)rank, PW_MAX_RANK);
    pw_view v;
    memset(&v, 0, sizeof v);
    v.format = format;
    v.rank = rank;
    v.block_axis = rank - 1;
    v.data = data;
    v.data_bytes = bytes;
    v.storage = PW_STORAGE_BORROWED;
    for (int i = 0; i < rank; ++i) {
        PW__FAIL_IF(shape[i] < 1, ctx, PW_ERR_SHAPE, "pw_view_init: shape[%d] is %" PRId64, i,
                    shape[i]);
        v.shape[i] = shape[i];
    }
    PW__FAIL_IF(shape[rank - 1] % t->info.block_size != 0, ctx, PW_ERR_SHAPE,
                "pw_view_init: the last axis has %" PRId64
                " elements, not a whole number of %s blocks (%d)",
                shape[rank - 1], t->info.name, (int)t->info.block_size);
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; --i) {
        v.strides[i] = stride;
        int64_t g = i == rank - 1 ? shape[i] / t->info.block_size : shape[i];
        PW__FAIL_IF(pw__mul_overflow_i64(stride, g, &stride), ctx, PW_ERR_OVERFLOW,
                    "pw_view_init: the number of blocks overflows");
    }
    for (int i = rank; i < PW_MAX_RANK; ++i) {
        v.shape[i] = 1;
        v.strides[i] = 0;
    }
    /* The order the bytes are in, named by the caller: never assumed. */
    PW__TRY(pw__check_byte_layout(ctx, layout, rank == 2 ? shape[0] : 1, "pw_view_init", "given"));
    if (layout.order != PW_ORDER_ROW_MAJOR) {
        PW__FAIL_IF(rank != 2, ctx, PW_ERR_SHAPE,
                    "pw_view_init: the %s order is a 2-D [out, in] weight's; this view has rank %d",
                    pw_order_name(layout.order), (int)rank);
        pw__view_set_dense(&v, layout, shape[0], shape[1] / t->info.block_size);
    }
    PW__TRY(pw_view_check(ctx, &v));
    *out = v;
    return PW_OK;
}

pw_order pw_view_order(const pw_view *v) {
    if (v == NULL || v->rank < 2) return PW_ORDER_ROW_MAJOR;
    const int r0 = v->rank - 2, r1 = v->rank - 1;
    if (v->block_axis != r1) return PW_ORDER_STRIDED;
    if (v->tile_rows > 0) return PW_ORDER_ROW_TILED;
    const pw__format_traits *t = pw__format(v->format);
    if (t == NULL) return PW_ORDER_STRIDED;
    const int64_t out = v->shape[r0], bpr = v->shape[r1] / t->info.block_size;
    const int64_t s0 = v->strides[r0], s1 = v->strides[r1];
    if ((bpr == 1 || s1 == 1) && (out == 1 || s0 >= bpr)) return PW_ORDER_ROW_MAJOR;
    if ((out == 1 || s0 == 1) && (bpr == 1 || s1 >= out)) return PW_ORDER_INPUT_BLOCK_MAJOR;
    return PW_ORDER_STRIDED;
}

pw_layout pw_view_layout(const pw_view *v) {
    pw_layout l = {pw_view_order(v), 0};
    if (l.order == PW_ORDER_ROW_TILED) l.tile_rows = v->tile_rows;
    return l;
}

const char *pw_order_name(pw_order order) {
    switch (order) {
    case PW_ORDER_ROW_MAJOR: return "row_major";
    case PW_ORDER_INPUT_BLOCK_MAJOR: return "input_block_major";
    case PW_ORDER_ROW_TILED: return "row_tiled";
    case PW_ORDER_STRIDED: return "strided";
    }
    return order == 0 ? "none" : "unknown";
}

const char *pw_layout_name(pw_layout l, char *buffer, size_t capacity) {
    if (buffer == NULL || capacity == 0) return "";
    if (l.order == PW_ORDER_ROW_TILED)
        snprintf(buffer, capacity, "row_tiled_%" PRId64, l.tile_rows);
    else
        pw__strlcpy(buffer, pw_order_name(l.order), capacity);
    return buffer;
}

int64_t pw_view_elements(const pw_view *v) {
    if (v == NULL) return 0;
    const pw__format_traits *t = pw__format(v->format);
    int64_t n;
    if (t == NULL || v->rank < 1 || v->rank > PW_MAX_RANK || !view_sizes(v, t, &n, NULL)) return -1;
    return n;
}

int64_t pw_view_blocks(const pw_view *v) {
    const pw__format_traits *t = v ? pw__format(v->format) : NULL;
    if (t == NULL) return 0;
    const int64_t n = pw_view_elements(v);
    return n < 0 ? -1 : n / t->info.block_size;
}

uint64_t pw_view_bytes(const pw_view *v) {
    const pw__format_traits *t = v ? pw__format(v->format) : NULL;
    int64_t bytes;
    if (t == NULL) return 0;
    if (v->rank < 1 || v->rank > PW_MAX_RANK || !view_sizes(v, t, NULL, &bytes)) return UINT64_MAX;
    return (uint64_t)bytes;
}

pw_status pw_view_narrow(pw_context *ctx, const pw_view *src, int32_t axis, int64_t start,
                         int64_t length, pw_view *out) {
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_view_narrow: out is NULL");
    PW__TRY(pw_view_check(ctx, src));
    PW__FAIL_IF(axis < 0 || axis >= src->rank, ctx, PW_ERR_SHAPE,
                "pw_view_narrow '%s': axis %d is outside 0..%d", view_name(src), (int)axis,
                (int)src->rank - 1);
    PW__FAIL_IF(start < 0 || length < 1 || start > src->shape[axis] - length, ctx, PW_ERR_SHAPE,
                "pw_view_narrow '%s': range of %" PRId64 " elements from %" PRId64 " is outside axis %d of "
                "size %" PRId64,
                view_name(src), length, start, (int)axis, src->shape[axis]);
    const pw__format_traits *t = pw__format(src->format);
    pw_view v = *src;
    if (axis == src->block_axis) {
        const int64_t bs = t->info.block_size;
        PW__FAIL_IF(start % bs != 0 || length % bs != 0, ctx, PW_ERR_SHAPE,
                    "pw_view_narrow '%s': range [%" PRId64 ", %" PRId64 ") of axis %d splits a "
                    "%s block: start and length must be multiples of %" PRId64,
                    view_name(src), start, start + length, (int)axis, t->info.name, bs);
        v.offset += (start / bs) * src->strides[axis];
    } else if (src->tile_rows > 0) {
        PW__FAIL_IF(start % src->tile_rows != 0 || length % src->tile_rows != 0, ctx, PW_ERR_SHAPE,
                    "pw_view_narrow '%s': a row-tiled view narrows by whole tiles of %" PRId64
                    " rows; [%" PRId64 ", %" PRId64 ") is not",
                    view_name(src), src->tile_rows, start, start + length);
        v.offset += (start / src->tile_rows) * src->tile_stride;
    } else {
        v.offset += start * src->strides[axis];
    }
    v.shape[axis] = length;
    if (start != 0 || length != src->shape[axis]) v.source_id[0] = v.source_id[1] = 0; /* other bytes */
    PW__TRY(pw_view_check(ctx, &v));
    *out = v;
    return PW_OK;
}

pw_status pw_view_select(pw_context *ctx, const pw_view *src, int32_t axis, int64_t index,
                         pw_view *out) {
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_view_select: out is NULL");
    PW__TRY(pw_view_check(ctx, src));
    PW__FAIL_IF(src->rank < 2, ctx, PW_ERR_SHAPE,
                "pw_view_select '%s': a rank-1 view has no axis to drop", view_name(src));
    PW__FAIL_IF(axis < 0 || axis >= src->rank, ctx, PW_ERR_SHAPE,
                "pw_view_select '%s': axis %d is outside 0..%d", view_name(src), (int)axis,
                (int)src->rank - 1);
    PW__FAIL_IF(axis == src->block_axis, ctx, PW_ERR_SHAPE,
                "pw_view_select '%s': axis %d is the one the %s blocks tile; one element of it "
                "would cut blocks (narrow it by whole blocks instead)",
                view_name(src), (int)axis, pw__format(src->format)->info.name);
    PW__FAIL_IF(src->tile_rows > 0, ctx, PW_ERR_SHAPE,
                "pw_view_select '%s': a row-tiled view keeps both its axes", view_name(src));
    PW__FAIL_IF(index < 0 || index >= src->shape[axis], ctx, PW_ERR_SHAPE,
                "pw_view_select '%s': index %" PRId64 " is outside axis %d of size %" PRId64,
                view_name(src), index, (int)axis, src->shape[axis]);
    pw_view v = *src;
    v.offset += index * src->strides[axis];
    for (int i = axis; i + 1 < src->rank; ++i) {
        v.shape[i] = src->shape[i + 1];
        v.strides[i] = src->strides[i + 1];
    }
    v.shape[src->rank - 1] = 0;
    v.strides[src->rank - 1] = 0;
    v.rank = src->rank - 1;
    if (src->block_axis > axis) v.block_axis = src->block_axis - 1;
    if (src->shape[axis] != 1) v.source_id[0] = v.source_id[1] = 0; /* other bytes */
    PW__TRY(pw_view_check(ctx, &v));
    *out = v;
    return PW_OK;
}

pw_status pw_view_transpose(pw_context *ctx, const pw_view *src, pw_view *out) {
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_view_transpose: out is NULL");
    PW__TRY(pw_view_check(ctx, src));
    PW__FAIL_IF(src->rank < 2, ctx, PW_ERR_SHAPE,
                "pw_view_transpose '%s': a rank-1 view has nothing to transpose", view_name(src));
    const int a = src->rank - 2, b = src->rank - 1;
    pw_view v = *src;
    v.shape[a] = src->shape[b];
    v.shape[b] = src->shape[a];
    v.strides[a] = src->strides[b];
    v.strides[b] = src->strides[a];
    if (src->block_axis == a)
        v.block_axis = b;
    else if (src->block_axis == b)
        v.block_axis = a;
    v.source_id[0] = v.source_id[1] = 0; /* another matrix over the same bytes */
    *out = v;
    return PW_OK;
}

const uint8_t *pw_view_block_ptr(const pw_view *v, int64_t row, int64_t block) {
    if (v == NULL || v->rank < 1) return NULL;
    const pw__format_traits *t = pw__format(v->format);
    if (t == NULL) return NULL;
    int64_t c[PW_MAX_RANK] = {0, 0, 0, 0};
    if (v->rank == 1) {
        c[0] = block;
    } else {
        const int ba = v->block_axis;
        const int ra = ba == v->rank - 1 ? v->rank - 2 : v->rank - 1;
        c[ra] = row;
        c[ba] = block;
    }
    return v->data + (uint64_t)pw__view_block_index(v, c) * (uint64_t)t->info.block_bytes;
}

pw_status pw_view_get(pw_context *ctx, const pw_view *v, const int64_t *index, float *value) {
    PW__FAIL_IF(index == NULL || value == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_view_get: NULL argument");
    PW__TRY(pw_view_check(ctx, v));
    const pw__format_traits *t = pw__format(v->format);
    int64_t c[PW_MAX_RANK] = {0, 0, 0, 0};
    for (int i = 0; i < v->rank; ++i) {
        PW__FAIL_IF(index[i] < 0 || index[i] >= v->shape[i], ctx, PW_ERR_SHAPE,
                    "pw_view_get '%s': index %" PRId64 " is outside axis %d of size %" PRId64,
                    view_name(v), index[i], i, v->shape[i]);
        c[i] = index[i];
    }
    const int64_t bs = t->info.block_size;
    c[v->block_axis] = index[v->block_axis] / bs;
    float block[256];
    const int64_t a = pw__view_block_index(v, c);
    t->decode(v->data + (uint64_t)a * (uint64_t)t->info.block_bytes, 1, block);
    *value = block[index[v->block_axis] % bs];
    return PW_OK;
}

pw_status pw_view_to_float(pw_context *ctx, const pw_view *v, float *dst, size_t count) {
    PW__FAIL_IF(dst == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_view_to_float: dst is NULL");
    PW__TRY(pw_view_check(ctx, v));
    const pw__format_traits *t = pw__format(v->format);
    const int64_t n = pw_view_elements(v);
    PW__FAIL_IF((uint64_t)n > (uint64_t)count, ctx, PW_ERR_SHAPE,
                "pw_view_to_float '%s': needs %" PRId64 " floats, dst holds %zu", view_name(v), n,
                count);
    const int64_t bs = t->info.block_size;
    const int64_t bb = t->info.block_bytes;
    int64_t grid[PW_MAX_RANK];
    pw__view_grid(v, grid);
    /* Row-major strides of the logical output, in elements. */
    int64_t ostride[PW_MAX_RANK];
    int64_t s = 1;
    for (int i = v->rank - 1; i >= 0; --i) {
        ostride[i] = s;
        s *= v->shape[i];
    }
    const int ba = v->block_axis;
    const bool contiguous_rows =
        ba == v->rank - 1 && v->tile_rows == 0 && (v->strides[ba] == 1 || grid[ba] == 1);
    float block[256];
    int64_t c[PW_MAX_RANK] = {0, 0, 0, 0};
    /* Walk every grid cell; with contiguous rows, a whole row is one decode call. */
    for (;;) {
        int64_t o = 0;
        for (int i = 0; i < v->rank; ++i) o += (i == ba ? c[i] * bs : c[i]) * ostride[i];
        const uint8_t *p = v->data + (uint64_t)pw__view_block_index(v, c) * (uint64_t)bb;
        if (contiguous_rows) {
            t->decode(p, (size_t)grid[ba], dst + o);
            c[ba] = grid[ba] - 1;
        } else if (ostride[ba] == 1) {
            t->decode(p, 1, dst + o);
        } else {
            t->decode(p, 1, block);
            for (int64_t k = 0; k < bs; ++k) dst[o + k * ostride[ba]] = block[k];
        }
        int i = v->rank - 1;
        for (; i >= 0; --i) {
            if (++c[i] < grid[i]) break;
            c[i] = 0;
        }
        if (i < 0) break;
    }
    return PW_OK;
}

pw_status pw_require_out_in(pw_context *ctx, int64_t rows, int64_t in, pw_format format) {
    const pw__format_traits *t = pw__format(format);
    PW__FAIL_IF(t == NULL, ctx, PW_ERR_UNSUPPORTED, "pw_require_out_in: unknown format %d",
                (int)format);
    PW__FAIL_IF(rows < 1 || in < 1, ctx, PW_ERR_SHAPE,
                "pw_require_out_in: shape [%" PRId64 ", %" PRId64 "] is empty", rows, in);
    const int64_t bs = t->info.block_size;
    PW__FAIL_IF(rows % bs == 0 && in % bs != 0, ctx, PW_ERR_ORIENTATION,
                "weight described as [%" PRId64 ", %" PRId64 "] looks transposed: the first dim "
                "is a whole number of %s blocks (%" PRId64 ") and the second is not, which is "
                "GGUF's ne order [in, out]; open the file with PW_ORIENT_OUT_IN (or reverse the "
                "dims) so the weight is labelled [out, in]",
                rows, in, t->info.name, bs);
    PW__FAIL_IF(in % bs != 0, ctx, PW_ERR_SHAPE,
                "weight [%" PRId64 ", %" PRId64 "]: in is not a whole number of %s blocks (%" PRId64 ")",
                rows, in, t->info.name, bs);
    return PW_OK;
}
