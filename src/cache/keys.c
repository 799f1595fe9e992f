/*
 * Source keys (packwise/cache.h, Keys): a file tensor's identity when the view
 * has one, else a hash of the content. Content hashes cover what decides the
 * packed bytes and nothing else: the format and shape, and the blocks in
 * row-major order (so a view's order or narrowing does not split equal
 * weights); for QC4W, the raw form as given (an odd row's unused nibble taken
 * as 0, since it may hold anything), scales and bias.
 */
#include "cache/cache_internal.h"
#include "format/format_internal.h"

pw__digest pw__cache_view_content(const pw_view *w) {
    const pw__format_traits *t = pw__format(w->format);
    const int64_t rows = w->shape[0], bpr = w->shape[1] / t->info.block_size;
    pw__hash h;
    pw__hash_begin(&h);
    pw__hash_bytes(&h, "packwise-view", 13);
    pw__hash_u32(&h, (uint32_t)w->format);
    pw__hash_u64(&h, (uint64_t)rows);
    pw__hash_u64(&h, (uint64_t)w->shape[1]);
    const int row_contiguous = w->strides[1] == 1;
    for (int64_t o = 0; o < rows; ++o) {
        if (row_contiguous) {
            pw__hash_bytes(&h, pw_view_block_ptr(w, o, 0), (size_t)(bpr * t->info.block_bytes));
        } else {
            for (int64_t b = 0; b < bpr; ++b)
                pw__hash_bytes(&h, pw_view_block_ptr(w, o, b), (size_t)t->info.block_bytes);
        }
    }
    return pw__hash_end(&h);
}

pw__digest pw__cache_view_key(const pw_view *w) {
    if (w->source_id[0] != 0 || w->source_id[1] != 0) return (pw__digest){w->source_id[0], w->source_id[1]};
    return pw__cache_view_content(w);
}

/* Rows of `row_bytes` bytes whose last byte's high nibble is unused when `odd`. */
static void hash_nibble_rows(pw__hash *h, const uint8_t *p, uint64_t rows, uint64_t row_bytes, int odd) {
    if (!odd) {
        pw__hash_bytes(h, p, (size_t)(rows * row_bytes));
        return;
    }
    for (uint64_t r = 0; r < rows; ++r) {
        const uint8_t *row = p + r * row_bytes;
        const uint8_t last = row[row_bytes - 1] & 0x0F;
        pw__hash_bytes(h, row, (size_t)row_bytes - 1);
        pw__hash_bytes(h, &last, 1);
    }
}

pw__digest pw__cache_qc4w_content(const pw_qc4w_weights *w, uint64_t row_bytes) {
    const int transposed = (w->flags & PW_QC4W_TRANSPOSED) != 0;
    const uint64_t rows = (uint64_t)(transposed ? w->in : w->out);
    const int odd = ((transposed ? w->out : w->in) & 1) != 0;
    pw__hash h;
    pw__hash_begin(&h);
    pw__hash_bytes(&h, "packwise-qc4w", 13);
    pw__hash_u64(&h, (uint64_t)w->out);
    pw__hash_u64(&h, (uint64_t)w->in);
    pw__hash_u32(&h, (uint32_t)w->zero_point);
    pw__hash_u32(&h, w->flags);
    pw__hash_u32(&h, w->bias != NULL);
    hash_nibble_rows(&h, w->data, rows, row_bytes, odd);
    pw__hash_bytes(&h, w->scale, sizeof(float) * (size_t)w->out);
    if (w->bias != NULL) pw__hash_bytes(&h, w->bias, sizeof(float) * (size_t)w->out);
    return pw__hash_end(&h);
}

pw__digest pw__cache_qb4w_content(const pw_qb4w_weights *w) {
    const float *bias = w->bias;
    const int transposed = (w->flags & PW_QB4W_TRANSPOSED) != 0;
    const uint64_t rows = (uint64_t)(transposed ? w->in : w->out);
    const uint64_t cols = (uint64_t)(transposed ? w->out : w->in);
    const uint64_t nb = (uint64_t)pw_qb4w_blocks(w), n = (uint64_t)w->out;
    const size_t esz = w->scale_type == PW_DTYPE_F32 ? 4 : 2;
    pw__hash h;
    pw__hash_begin(&h);
    pw__hash_bytes(&h, "packwise-qb4w", 13);
    pw__hash_u64(&h, n);
    pw__hash_u64(&h, (uint64_t)w->in);
    pw__hash_u32(&h, (uint32_t)w->block_size);
    pw__hash_u32(&h, (uint32_t)w->scale_type);
    pw__hash_u32(&h, (uint32_t)w->zero_kind);
    pw__hash_u32(&h, w->zero_kind == PW_QB4W_ZERO_CONST ? (uint32_t)w->zero_point : 0u);
    pw__hash_u32(&h, w->flags);
    pw__hash_u32(&h, bias != NULL);
    hash_nibble_rows(&h, w->data, rows, (cols + 1) / 2, (cols & 1) != 0);
    pw__hash_bytes(&h, w->scales, esz * (size_t)(n * nb));
    if (w->zero_kind == PW_QB4W_ZERO_U4)
        hash_nibble_rows(&h, w->zero_points, n, (nb + 1) / 2, (nb & 1) != 0);
    else if (w->zero_kind == PW_QB4W_ZERO_U8)
        pw__hash_bytes(&h, w->zero_points, (size_t)(n * nb));
    if (bias != NULL) pw__hash_bytes(&h, bias, sizeof(float) * (size_t)n);
    return pw__hash_end(&h);
}
