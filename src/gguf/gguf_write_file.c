/*
 * GGUF writer, second half: tensors, layout, and output to a file (through a
 * temporary renamed into place only when every byte is written, base/file_io.h;
 * a destination that is not a regular file is refused) or to memory. Offsets and padding follow
 * ggml's writer exactly: the data section starts at the header's size rounded
 * up to the alignment, and every tensor, the last included, is padded with
 * zeros to the alignment.
 */
#include "base/file_io.h"
#include "gguf/gguf_writer_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static pw_status add(pw_gguf_writer *w, const char *name, uint32_t gguf_type, int32_t n_dims,
                     const int64_t *ne, const void *data, uint64_t bytes) {
    pw_context *ctx = w->ctx;
    PW__FAIL_IF(name == NULL || ne == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: tensor name and ne must not be NULL");
    const size_t len = strlen(name);
    PW__FAIL_IF(len > PW__GGUF_MAX_NAME, ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: tensor name '%.80s...' has %zu bytes; ggml reads at most %u", name,
                len, PW__GGUF_MAX_NAME);
    PW__FAIL_IF(!pw__utf8_valid((const uint8_t *)name, len), ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: tensor name '%s' is not valid UTF-8", name);
    PW__FAIL_IF(n_dims < 1 || n_dims > PW_MAX_RANK, ctx, PW_ERR_SHAPE,
                "GGUF writer: tensor '%s' has n_dims %d; GGUF allows 1..%d", name, (int)n_dims,
                PW_MAX_RANK);
    for (int d = 0; d < n_dims; ++d)
        PW__FAIL_IF(ne[d] < 0, ctx, PW_ERR_SHAPE, "GGUF writer: tensor '%s' has ne[%d] = %" PRId64,
                    name, d, ne[d]);
    PW__FAIL_IF(pw__gguf_nameset_find(w, PW__GGUF_TENSOR_SET, name, len) >= 0, ctx,
                PW_ERR_DUPLICATE, "GGUF writer: tensor '%s' is already added", name);
    if (w->n_tensors == w->tensor_cap) {
        const int64_t cap = w->tensor_cap ? w->tensor_cap * 2 : 16;
        PW__FAIL_IF((uint64_t)cap > SIZE_MAX / sizeof(pw__gguf_wtensor), ctx, PW_ERR_OVERFLOW,
                    "GGUF writer: too many tensors");
        pw__gguf_wtensor *t = pw__gguf_alloc(&w->alloc, (size_t)cap * sizeof *t);
        PW__FAIL_IF(t == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "GGUF writer: out of memory");
        if (w->n_tensors) memcpy(t, w->tensors, (size_t)w->n_tensors * sizeof *t);
        pw__gguf_free(&w->alloc, w->tensors);
        w->tensors = t;
        w->tensor_cap = cap;
    }
    pw__gguf_wtensor *t = &w->tensors[w->n_tensors];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, len + 1);
    t->gguf_type = gguf_type;
    t->n_dims = n_dims;
    for (int d = 0; d < PW_MAX_RANK; ++d) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->data = data;
    t->bytes = bytes;
    PW__TRY(pw__gguf_nameset_add(w, PW__GGUF_TENSOR_SET, w->n_tensors));
    ++w->n_tensors;
    return PW_OK;
}

pw_status pw_gguf_writer_add_tensor_raw(pw_gguf_writer *w, const char *name, uint32_t gguf_type,
                                        int32_t n_dims, const int64_t *ne, const void *data,
                                        uint64_t bytes) {
    if (w == NULL) return PW_ERR_INVALID_ARGUMENT;
    return add(w, name, gguf_type, n_dims, ne, data, bytes);
}

pw_status pw_gguf_writer_add_tensor(pw_gguf_writer *w, const char *name, pw_format format,
                                    int32_t n_dims, const int64_t *ne, const void *data,
                                    uint64_t bytes) {
    if (w == NULL) return PW_ERR_INVALID_ARGUMENT;
    pw_context *ctx = w->ctx;
    const pw_format_info *info = pw_format_get(format);
    PW__FAIL_IF(info == NULL || info->gguf_type < 0, ctx, PW_ERR_UNSUPPORTED,
                "GGUF writer: format %d has no GGUF type id", (int)format);
    PW__FAIL_IF(ne == NULL || n_dims < 1 || n_dims > PW_MAX_RANK, ctx, PW_ERR_SHAPE,
                "GGUF writer: tensor '%s' needs 1..%d dims in ne", name ? name : "(null)",
                PW_MAX_RANK);
    int64_t elements = 1;
    for (int d = 0; d < n_dims; ++d)
        PW__FAIL_IF(ne[d] < 0 || pw__mul_overflow_i64(elements, ne[d], &elements), ctx,
                    PW_ERR_SHAPE, "GGUF writer: tensor '%s': ne[%d] = %" PRId64
                    " is negative or overflows the element count",
                    name ? name : "(null)", d, ne[d]);
    PW__FAIL_IF(ne[0] % info->block_size != 0, ctx, PW_ERR_SHAPE,
                "GGUF writer: tensor '%s': a row of ne[0] = %" PRId64
                " elements is not a whole number of %s blocks (%d)",
                name ? name : "(null)", ne[0], info->name, (int)info->block_size);
    uint64_t want;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)(elements / info->block_size),
                                     (uint64_t)info->block_bytes, &want),
                ctx, PW_ERR_OVERFLOW, "GGUF writer: tensor '%s' is larger than 2^64 bytes",
                name ? name : "(null)");
    PW__FAIL_IF(bytes != want, ctx, PW_ERR_SHAPE,
                "GGUF writer: tensor '%s' of %" PRId64 " %s elements takes %" PRIu64
                " bytes, not %" PRIu64,
                name ? name : "(null)", elements, info->name, want, bytes);
    return add(w, name, (uint32_t)info->gguf_type, n_dims, ne, data, bytes);
}

static uint64_t record_bytes(const pw__gguf_wtensor *t) {
    return 8 + strlen(t->name) + 4 + 8 * (uint64_t)t->n_dims + 4 + 8;
}

typedef struct layout {
    uint64_t header_bytes; /* up to the end of the tensor records */
    uint64_t data_offset;
    uint64_t file_size;
} layout;

static bool align_up(uint64_t v, uint64_t a, uint64_t *out) {
    uint64_t t;
    if (pw__add_overflow_u64(v, a - 1, &t)) return false;
    *out = t & ~(a - 1);
    return true;
}

static pw_status compute_layout(pw_gguf_writer *w, layout *l) {
    pw_context *ctx = w->ctx;
    PW__FAIL_IF(w->depth != 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: %d array(s) still open; end them before writing", w->depth);
    uint64_t h = 24 + w->kv.len; /* magic, version, two counts */
    for (int64_t i = 0; i < w->n_tensors; ++i) h += record_bytes(&w->tensors[i]);
    l->header_bytes = h;
    uint64_t pos = 0;
    bool ok = align_up(h, w->alignment, &pos);
    l->data_offset = pos;
    for (int64_t i = 0; i < w->n_tensors && ok; ++i) {
        uint64_t padded = 0;
        ok = align_up(w->tensors[i].bytes, w->alignment, &padded) &&
             !pw__add_overflow_u64(pos, padded, &pos);
    }
    PW__FAIL_IF(!ok || pos > (uint64_t)INT64_MAX, ctx, PW_ERR_OVERFLOW,
                "GGUF writer: the file would be larger than 2^63 bytes");
    l->file_size = pos;
    return PW_OK;
}

pw_status pw_gguf_writer_file_size(pw_gguf_writer *w, uint64_t *bytes) {
    if (w == NULL) return PW_ERR_INVALID_ARGUMENT;
    PW__FAIL_IF(bytes == NULL, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_writer_file_size: bytes is NULL");
    layout l;
    PW__TRY(compute_layout(w, &l));
    *bytes = l.file_size;
    return PW_OK;
}

/* Where the bytes go: a memory image or a file. */
typedef struct sink {
    pw_gguf_writer *w;
    uint8_t *mem;
    pw__outfile *f;
    uint64_t pos;
} sink;

static pw_status sink_write(sink *s, const void *src, uint64_t n) {
    if (n == 0) return PW_OK;
    if (s->mem) memcpy(s->mem + s->pos, src, (size_t)n);
    else PW__TRY(pw__outfile_write(s->w->ctx, s->f, src, n));
    s->pos += n;
    return PW_OK;
}

/* n zero bytes: a hole in a file (reads back as zeros), memset in memory. */
static pw_status sink_zeros(sink *s, uint64_t n) {
    if (n == 0) return PW_OK;
    if (s->mem) {
        memset(s->mem + s->pos, 0, (size_t)n);
    } else if (n <= 4096) {
        static const uint8_t zeros[4096];
        return sink_write(s, zeros, n);
    } else {
        PW__TRY(pw__outfile_skip(s->w->ctx, s->f, n));
    }
    s->pos += n;
    return PW_OK;
}

static pw_status emit(pw_gguf_writer *w, const layout *l, sink *s) {
    uint8_t head[24];
    memcpy(head, "GGUF", 4);
    pw__gguf_le_bytes(head + 4, 3, 4);
    pw__gguf_le_bytes(head + 8, (uint64_t)w->n_tensors, 8);
    pw__gguf_le_bytes(head + 16, (uint64_t)w->n_kv, 8);
    PW__TRY(sink_write(s, head, sizeof head));
    PW__TRY(sink_write(s, w->kv.p, w->kv.len));
    uint64_t offset = 0;
    for (int64_t i = 0; i < w->n_tensors; ++i) {
        const pw__gguf_wtensor *t = &w->tensors[i];
        uint8_t rec[8 + PW__GGUF_MAX_NAME + 4 + 8 * PW_MAX_RANK + 4 + 8];
        const size_t len = strlen(t->name);
        uint8_t *p = rec;
        pw__gguf_le_bytes(p, len, 8);
        memcpy(p + 8, t->name, len);
        p += 8 + len;
        pw__gguf_le_bytes(p, (uint64_t)t->n_dims, 4);
        p += 4;
        for (int d = 0; d < t->n_dims; ++d, p += 8) pw__gguf_le_bytes(p, (uint64_t)t->ne[d], 8);
        pw__gguf_le_bytes(p, t->gguf_type, 4);
        pw__gguf_le_bytes(p + 4, offset, 8);
        p += 12;
        PW__TRY(sink_write(s, rec, (uint64_t)(p - rec)));
        uint64_t padded = 0;
        align_up(t->bytes, w->alignment, &padded); /* checked by compute_layout */
        offset += padded;
    }
    PW__TRY(sink_zeros(s, l->data_offset - l->header_bytes));
    for (int64_t i = 0; i < w->n_tensors; ++i) {
        const pw__gguf_wtensor *t = &w->tensors[i];
        if (t->data != NULL)
            PW__TRY(sink_write(s, t->data, t->bytes));
        else
            PW__TRY(sink_zeros(s, t->bytes));
        uint64_t padded = 0;
        align_up(t->bytes, w->alignment, &padded);
        PW__TRY(sink_zeros(s, padded - t->bytes));
    }
    return PW_OK;
}

pw_status pw_gguf_writer_write_memory(pw_gguf_writer *w, void *dst, uint64_t capacity) {
    if (w == NULL) return PW_ERR_INVALID_ARGUMENT;
    layout l;
    PW__TRY(compute_layout(w, &l));
    PW__FAIL_IF(dst == NULL || capacity < l.file_size, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: the file takes %" PRIu64 " bytes but the buffer has %" PRIu64,
                l.file_size, dst == NULL ? 0 : capacity);
    sink s = {w, dst, NULL, 0};
    return emit(w, &l, &s);
}

pw_status pw_gguf_writer_write(pw_gguf_writer *w, const char *path) {
    if (w == NULL) return PW_ERR_INVALID_ARGUMENT;
    pw_context *ctx = w->ctx;
    PW__FAIL_IF(path == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "GGUF writer: path is NULL");
    layout l;
    PW__TRY(compute_layout(w, &l));
    /* Tensor bytes may live in a mapping of the file being replaced: it stays intact
     * (and mapped) until the rename, which swaps the name only. */
    pw__outfile *f = pw__gguf_alloc(&w->alloc, sizeof *f);
    PW__FAIL_IF(f == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "GGUF writer: out of memory");
    pw_status st = pw__outfile_open(ctx, f, path, 0, NULL, 0);
    if (st == PW_OK) {
        sink s = {w, NULL, f, 0};
        st = emit(w, &l, &s);
    }
    /* Holes at the end do not extend a file by themselves: commit sizes it. */
    if (st == PW_OK) st = pw__outfile_commit(ctx, f, l.file_size);
    if (st != PW_OK) {
        pw__outfile_abort(f);
        char msg[PW__MESSAGE_CAPACITY];
        snprintf(msg, sizeof msg, "GGUF writer: %.900s", ctx != NULL ? pw_context_message(ctx) : "");
        if (ctx != NULL) pw__strlcpy(ctx->message, msg, sizeof ctx->message);
    }
    pw__gguf_free(&w->alloc, f);
    return st;
}
