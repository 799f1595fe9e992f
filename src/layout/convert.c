/*
 * Bytes-level converters for converter authors who hold raw block bytes.
 * The caller names the layout the bytes are in and the one it wants, so a
 * conversion to the current layout is a copy and a double permutation
 * cannot happen.
 */
#include "base/internal.h"
#include "layout/layout_internal.h"

#include <inttypes.h>
#include <string.h>

int64_t pw_layout_flat_index(pw_layout l, int64_t rows, int64_t bpr, int64_t o, int64_t b) {
    int64_t blocks;
    if (rows < 1 || bpr < 1 || o < 0 || o >= rows || b < 0 || b >= bpr) return -1;
    /* Every index below is under rows * bpr, so no step overflows once that fits. */
    if (pw__mul_overflow_i64(rows, bpr, &blocks)) return -1;
    switch (l.order) {
    case PW_ORDER_ROW_MAJOR: return o * bpr + b;
    case PW_ORDER_INPUT_BLOCK_MAJOR: return b * rows + o;
    case PW_ORDER_ROW_TILED: {
        const int64_t nr = l.tile_rows;
        if (nr < 1 || rows % nr != 0) return -1;
        return (o / nr) * nr * bpr + b * nr + o % nr;
    }
    case PW_ORDER_STRIDED: return -1;
    }
    return -1;
}

pw_status pw__check_byte_layout(pw_context *ctx, pw_layout l, int64_t rows, const char *who,
                                const char *which) {
    PW__FAIL_IF(l.order == 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "%s: the %s layout names no order (a zeroed layout): name the order the bytes are "
                "in, PW_ORDER_ROW_MAJOR (canonical, what files hold) or PW_ORDER_INPUT_BLOCK_MAJOR "
                "(the kernel order); packwise never assumes one",
                who, which);
    if (l.order == PW_ORDER_ROW_MAJOR || l.order == PW_ORDER_INPUT_BLOCK_MAJOR) return PW_OK;
    PW__FAIL_IF(l.order != PW_ORDER_ROW_TILED, ctx, PW_ERR_INVALID_ARGUMENT,
                "%s: %s layout %s is not a byte order", who, which, pw_order_name(l.order));
    PW__FAIL_IF(l.tile_rows < 1 || rows % l.tile_rows != 0, ctx, PW_ERR_SHAPE,
                "%s: %s layout row_tiled_%" PRId64 " needs rows (%" PRId64
                ") to be a whole number of tiles",
                who, which, l.tile_rows, rows);
    return PW_OK;
}

pw_status pw_bytes_reorder(pw_context *ctx, const pw_block_grid *g, const void *src,
                           uint64_t src_bytes, pw_layout target, void *dst, uint64_t dst_bytes) {
    PW__FAIL_IF(g == NULL || src == NULL || dst == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_bytes_reorder: NULL argument");
    PW__FAIL_IF(g->rows < 1 || g->blocks_per_row < 1 || g->block_bytes < 1, ctx, PW_ERR_SHAPE,
                "pw_bytes_reorder: grid %" PRId64 " rows x %" PRId64 " blocks x %" PRId64
                " bytes is empty",
                g->rows, g->blocks_per_row, g->block_bytes);
    uint64_t total;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)g->rows, (uint64_t)g->blocks_per_row, &total) ||
                    pw__mul_overflow_u64(total, (uint64_t)g->block_bytes, &total) ||
                    total > SIZE_MAX || total > INT64_MAX,
                ctx, PW_ERR_OVERFLOW, "pw_bytes_reorder: rows x blocks x bytes overflows");
    PW__FAIL_IF(src_bytes != total, ctx, PW_ERR_SHAPE,
                "pw_bytes_reorder: source holds %" PRIu64 " bytes but %" PRId64 " rows x %" PRId64
                " blocks x %" PRId64 " bytes is %" PRIu64 " (%s)",
                src_bytes, g->rows, g->blocks_per_row, g->block_bytes, total,
                src_bytes < total ? "short" : "long");
    PW__FAIL_IF(dst_bytes != total, ctx, PW_ERR_SHAPE,
                "pw_bytes_reorder: destination holds %" PRIu64 " bytes, needs %" PRIu64, dst_bytes,
                total);
    const uint8_t *s = src;
    uint8_t *d = dst;
    PW__FAIL_IF(s < d + total && d < s + total, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_bytes_reorder: source and destination overlap");
    PW__TRY(pw__check_byte_layout(ctx, g->layout, g->rows, "pw_bytes_reorder", "source"));
    PW__TRY(pw__check_byte_layout(ctx, target, g->rows, "pw_bytes_reorder", "target"));
    const pw_layout from = pw__layout_normalize(g->layout, g->rows);
    const pw_layout to = pw__layout_normalize(target, g->rows);
    if (from.order == to.order && from.tile_rows == to.tile_rows) {
        memcpy(d, s, (size_t)total);
        return PW_OK;
    }
    const size_t bb = (size_t)g->block_bytes;
    for (int64_t o = 0; o < g->rows; ++o)
        for (int64_t b = 0; b < g->blocks_per_row; ++b)
            memcpy(d + (size_t)pw_layout_flat_index(to, g->rows, g->blocks_per_row, o, b) * bb,
                   s + (size_t)pw_layout_flat_index(from, g->rows, g->blocks_per_row, o, b) * bb,
                   bb);
    return PW_OK;
}

pw_status pw_bytes_to_kernel_order(pw_context *ctx, const pw_block_grid *g, const void *src,
                                   uint64_t src_bytes, void *dst, uint64_t dst_bytes) {
    return pw_bytes_reorder(ctx, g, src, src_bytes, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0},
                            dst, dst_bytes);
}

pw_status pw_bytes_to_canonical_order(pw_context *ctx, const pw_block_grid *g, const void *src,
                                      uint64_t src_bytes, void *dst, uint64_t dst_bytes) {
    return pw_bytes_reorder(ctx, g, src, src_bytes, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, dst,
                            dst_bytes);
}
