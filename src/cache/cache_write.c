/*
 * Cache-file writer (layout in cache_internal.h): records are declared up front
 * so the index and names can sit before the data; each entry's packed bytes
 * are then streamed in, checksummed on the way, and the file is committed by
 * writing the header and index, fsync, and renaming a temporary made in the
 * destination's folder over the destination (base/file_io.h). A kill or a
 * failed write at any moment leaves the previous file or the complete new one;
 * a destination that is not a regular file is refused, never replaced.
 */
#include "base/file_io.h"
#include "base/internal.h"
#include "cache/cache_internal.h"
#include "packwise.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#if defined(PW_HAVE_XXHASH)
#define XXH_INLINE_ALL
#include <xxhash.h>

struct pw__cache_writer {
    pw_context *ctx;
    pw__outfile out;
    int64_t count;
    uint8_t *head;      /* header page, index and names, written last */
    uint64_t head_bytes, index_bytes, strings, data_start, file_bytes;
    uint64_t *offsets;  /* data offset of each entry */
    uint64_t *sizes;
    XXH3_state_t state; /* checksum of the entry being written */
    int64_t current;
};

static void put_field(uint8_t *dst, size_t cap, const char *s) {
    const size_t n = strlen(s);
    memcpy(dst, s, n < cap - 1 ? n : cap - 1);
}

pw_status pw__cache_writer_open(pw_context *ctx, const char *path, const pw__cache_record *recs, int64_t n,
                                pw__cache_writer **out) {
    *out = NULL;
    uint64_t strings = 0;
    for (int64_t i = 0; i < n; ++i) {
        const size_t len = strlen(recs[i].name);
        PW__FAIL_IF(len == 0 || len > UINT32_MAX || strlen(recs[i].key.family) >= PW__CACHE_FAMILY_LEN ||
                        strlen(recs[i].kernel) >= PW__CACHE_KERNEL_LEN || recs[i].kernel[0] == '\0',
                    ctx, PW_ERR_INVALID_ARGUMENT, "cache writer: record %" PRId64 " has a bad name, family or kernel", i);
        strings += len;
    }
    pw__cache_writer *w = pw__calloc(ctx, 1, sizeof *w, 64);
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "cache writer: out of memory");
    w->ctx = ctx;
    w->out.fd = -1;
    w->out.tmp[0] = '\0';
    w->count = n;
    w->current = -1;
    w->index_bytes = (uint64_t)n * PW__CACHE_RECORD_BYTES;
    w->strings = strings;
    w->head_bytes = PW__CACHE_PAGE + w->index_bytes + strings;
    uint64_t off = (w->head_bytes + PW__CACHE_PAGE - 1) / PW__CACHE_PAGE * PW__CACHE_PAGE;
    w->data_start = off;
    w->head = pw__calloc(ctx, 1, (size_t)w->head_bytes, 64);
    w->offsets = pw__calloc(ctx, n ? (size_t)n : 1, sizeof *w->offsets, 16);
    w->sizes = pw__calloc(ctx, n ? (size_t)n : 1, sizeof *w->sizes, 16);
    if (w->head == NULL || w->offsets == NULL || w->sizes == NULL) {
        pw__cache_writer_abort(w);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "cache writer: out of memory");
    }
    uint64_t name_off = 0;
    for (int64_t i = 0; i < n; ++i) {
        const pw__cache_record *r = &recs[i];
        w->offsets[i] = off;
        w->sizes[i] = r->key.bytes;
        off = (off + r->key.bytes + PW__CACHE_PAGE - 1) / PW__CACHE_PAGE * PW__CACHE_PAGE;
        uint8_t *rec = w->head + PW__CACHE_PAGE + (uint64_t)i * PW__CACHE_RECORD_BYTES;
        const uint32_t len = (uint32_t)strlen(r->name);
        pw__wr64(rec, name_off);
        pw__wr32(rec + 8, len);
        pw__wr32(rec + 12, r->key.kind == PW_WEIGHT_QC4W   ? PW__CACHE_FORMAT_QC4W
                           : r->key.kind == PW_WEIGHT_QB4W ? PW__CACHE_FORMAT_QB4W
                                                           : (uint32_t)r->key.format);
        pw__wr64(rec + 16, (uint64_t)r->key.rows);
        pw__wr64(rec + 24, (uint64_t)r->key.in);
        put_field(rec + 32, PW__CACHE_FAMILY_LEN, r->key.family);
        put_field(rec + 64, PW__CACHE_KERNEL_LEN, r->kernel);
        pw__wr32(rec + 112, (uint32_t)r->key.nr);
        pw__wr32(rec + 116, (uint32_t)r->key.kr);
        pw__wr32(rec + 120, (uint32_t)r->key.sr);
        pw__wr32(rec + 124, (uint32_t)r->key.group);
        pw__wr32(rec + 128, (uint32_t)r->key.version);
        pw__wr64(rec + 136, r->key.source.lo);
        pw__wr64(rec + 144, r->key.source.hi);
        pw__wr64(rec + 160, w->offsets[i]);
        pw__wr64(rec + 168, r->key.bytes);
        pw__wr64(rec + 176, r->content.lo);
        pw__wr64(rec + 184, r->content.hi);
        memcpy(w->head + PW__CACHE_PAGE + w->index_bytes + name_off, r->name, len);
        name_off += len;
    }
    w->file_bytes = off;
    const pw_status st = pw__outfile_open(ctx, &w->out, path, 0, NULL, 0);
    if (st != PW_OK) {
        pw__cache_writer_abort(w);
        return st;
    }
    *out = w;
    return PW_OK;
}

pw_status pw__cache_writer_data(pw__cache_writer *w, int64_t i, uint64_t at, const void *data, uint64_t n) {
    PW__FAIL_IF(i < 0 || i >= w->count || at > w->sizes[i] || n > w->sizes[i] - at, w->ctx,
                PW_ERR_INVALID_ARGUMENT, "cache writer: entry %" PRId64 " bytes [%" PRIu64 ", +%" PRIu64 ") out of range",
                i, at, n);
    if (w->current != i) {
        XXH3_64bits_reset(&w->state);
        w->current = i;
    }
    XXH3_64bits_update(&w->state, data, (size_t)n);
    return pw__outfile_pwrite(w->ctx, &w->out, data, n, w->offsets[i] + at);
}

pw_status pw__cache_writer_end_entry(pw__cache_writer *w, int64_t i, const pw__digest *content) {
    if (w->current != i) {
        XXH3_64bits_reset(&w->state); /* an entry of 0 bytes */
        w->current = i;
    }
    uint8_t *rec = w->head + PW__CACHE_PAGE + (uint64_t)i * PW__CACHE_RECORD_BYTES;
    if (content != NULL) {
        pw__wr64(rec + 176, content->lo);
        pw__wr64(rec + 184, content->hi);
    }
    pw__wr64(rec + 152, XXH3_64bits_digest(&w->state));
    pw__wr64(rec + 248, XXH3_64bits(rec, 248));
    w->current = -1;
    return PW_OK;
}

pw_status pw__cache_writer_commit(pw__cache_writer *w) {
    uint8_t *h = w->head;
    memcpy(h, PW__CACHE_MAGIC, 8);
    pw__wr32(h + 8, PW_CACHE_FORMAT_VERSION);
    pw__wr32(h + 12, PW__CACHE_HEADER_BYTES);
    pw__wr64(h + 16, w->file_bytes);
    pw__wr64(h + 24, (uint64_t)w->count);
    pw__wr64(h + 32, PW__CACHE_PAGE);
    pw__wr64(h + 40, PW__CACHE_PAGE + w->index_bytes);
    pw__wr64(h + 48, w->strings);
    pw__wr64(h + 56, XXH3_64bits(h + PW__CACHE_PAGE + w->index_bytes, (size_t)w->strings));
    pw__wr64(h + 64, w->data_start);
    snprintf((char *)h + 72, 32, "packwise %s", pw_version());
    pw__wr64(h + 120, XXH3_64bits(h, 120));
    pw_context *ctx = w->ctx;
    pw_status st = pw__outfile_pwrite(ctx, &w->out, h, w->head_bytes, 0);
    if (st == PW_OK) st = pw__outfile_commit(ctx, &w->out, w->file_bytes);
    pw__cache_writer_abort(w);
    return st;
}

void pw__cache_writer_abort(pw__cache_writer *w) {
    if (w == NULL) return;
    pw__outfile_abort(&w->out);
    pw_context *ctx = w->ctx;
    pw__free(ctx, w->head);
    pw__free(ctx, w->offsets);
    pw__free(ctx, w->sizes);
    pw__free(ctx, w);
}
#else
/* Without xxHash no file can be checksummed: every writer call refuses. */
pw_status pw__cache_writer_open(pw_context *ctx, const char *path, const pw__cache_record *recs, int64_t n,
                                pw__cache_writer **out) {
    (void)path, (void)recs, (void)n;
    *out = NULL;
    return pw__fail(ctx, PW_ERR_UNSUPPORTED, "weights-cache files need xxHash (libxxhash-dev)");
}
pw_status pw__cache_writer_data(pw__cache_writer *w, int64_t i, uint64_t at, const void *data, uint64_t n) {
    (void)w, (void)i, (void)at, (void)data, (void)n;
    return PW_ERR_UNSUPPORTED;
}
pw_status pw__cache_writer_end_entry(pw__cache_writer *w, int64_t i, const pw__digest *content) {
    (void)w, (void)i, (void)content;
    return PW_ERR_UNSUPPORTED;
}
pw_status pw__cache_writer_commit(pw__cache_writer *w) {
    (void)w;
    return PW_ERR_UNSUPPORTED;
}
void pw__cache_writer_abort(pw__cache_writer *w) { (void)w; }
#endif
