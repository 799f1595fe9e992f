/*
 * The GGUF handle: opening (mmap, streaming, or a memory image), closing, and
 * tensor access. Views point straight into the mapping or image (no copy);
 * the handle owns the mapping, so it outlives every view until
 * pw_gguf_close(). Streaming handles read tensors with pread into caller
 * buffers and never hold tensor bytes.
 */
#include "base/file_io.h"
#include "gguf/gguf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void pw_gguf_open_options_init(pw_gguf_open_options *options) {
    if (options == NULL) return;
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->orientation = PW_ORIENT_AS_STORED;
}

static pw_status take_options(pw_context *ctx, const pw_gguf_open_options *in,
                              pw_gguf_open_options *o) {
    pw_gguf_open_options_init(o);
    if (in == NULL) return PW_OK;
    PW__FAIL_IF(in->struct_size == 0 || in->struct_size > sizeof *o, ctx,
                PW_ERR_INVALID_ARGUMENT,
                "GGUF open: options.struct_size is %zu; initialise options with "
                "pw_gguf_open_options_init",
                in->struct_size);
    memcpy(o, in, in->struct_size);
    PW__FAIL_IF(o->orientation != PW_ORIENT_AS_STORED && o->orientation != PW_ORIENT_OUT_IN, ctx,
                PW_ERR_INVALID_ARGUMENT,
                "GGUF open: orientation %d is neither PW_ORIENT_AS_STORED nor PW_ORIENT_OUT_IN",
                (int)o->orientation);
    return PW_OK;
}

static pw_status handle_new(pw_context *ctx, const pw_gguf_open_options *o, pw_gguf **out) {
    pw_allocator a = pw__gguf_allocator(ctx);
    pw_gguf *g = pw__gguf_alloc(&a, sizeof *g);
    PW__FAIL_IF(g == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "GGUF open: out of memory");
    memset(g, 0, sizeof *g);
    g->alloc = a;
    g->orientation = o->orientation;
    g->alignment = PW__GGUF_DEFAULT_ALIGNMENT;
    g->fd = -1;
    *out = g;
    return PW_OK;
}

void pw__gguf_free_tables(pw_gguf *g) {
    pw__gguf_free(&g->alloc, g->tensors);
    pw__gguf_free(&g->alloc, g->kvs);
    pw__gguf_free(&g->alloc, g->nodes);
    pw__gguf_free(&g->alloc, g->pool);
    pw__gguf_free(&g->alloc, g->tensor_index.entries);
    pw__gguf_free(&g->alloc, g->key_index.entries);
}

void pw_gguf_close(pw_gguf *g) {
    if (g == NULL) return;
    pw__gguf_free_tables(g);
    pw__gguf_free(&g->alloc, g->header);
    if (g->mapping != NULL) munmap(g->mapping, g->mapping_bytes);
    if (g->fd >= 0) close(g->fd);
    pw_allocator a = g->alloc;
    pw__gguf_free(&a, g);
}

pw_status pw_gguf_open_memory(pw_context *ctx, const void *data, uint64_t size,
                              const pw_gguf_open_options *options, pw_gguf **out) {
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_open_memory: out is NULL");
    *out = NULL;
    PW__FAIL_IF(data == NULL && size != 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_open_memory: data is NULL but size is %" PRIu64, size);
    pw_gguf_open_options o;
    PW__TRY(take_options(ctx, options, &o));
    pw_gguf *g = NULL;
    PW__TRY(handle_new(ctx, &o, &g));
    g->base = data;
    g->base_size = size;
    g->file_size = size;
    g->whole_file = 1;
    pw_status st = pw__gguf_parse(ctx, g);
    if (st != PW_OK) {
        pw_gguf_close(g);
        return st;
    }
    *out = g;
    return PW_OK;
}

/* Put "path: " in front of the parser's message, so the CLI and logs name the file. */
static void prefix_path(pw_context *ctx, const char *path) {
    if (ctx == NULL) return;
    char msg[PW__MESSAGE_CAPACITY];
    snprintf(msg, sizeof msg, "%.300s: %.700s", path, ctx->message);
    memcpy(ctx->message, msg, sizeof msg);
}

pw_status pw_gguf_open(pw_context *ctx, const char *path, const pw_gguf_open_options *options,
                       pw_gguf **out) {
    PW__FAIL_IF(out == NULL || path == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_open: path and out must not be NULL");
    *out = NULL;
    pw_gguf_open_options o;
    PW__TRY(take_options(ctx, options, &o));
    /* Without blocking in open() on a FIFO; a GGUF is mapped or read at offsets, so it must
     * be a regular file. */
    int fd = -1;
    struct stat sb;
    PW__TRY(pw__input_open(ctx, path, PW__IN_REGULAR, &fd, &sb));
    pw_gguf *g = NULL;
    pw_status st = handle_new(ctx, &o, &g);
    if (st != PW_OK) {
        close(fd);
        return st;
    }
    g->file_size = (uint64_t)sb.st_size;
    g->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
    if (!o.no_mmap && g->file_size > 0) {
        if (g->file_size > SIZE_MAX) {
            close(fd);
            pw_gguf_close(g);
            return pw__fail(ctx, PW_ERR_IO, "%s: %" PRIu64 " bytes do not fit the address space",
                            path, (uint64_t)sb.st_size);
        }
        void *m = mmap(NULL, (size_t)g->file_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            const int e = errno;
            close(fd);
            pw_gguf_close(g);
            return pw__fail(ctx, PW_ERR_IO, "%s: mmap of %" PRIu64 " bytes failed: %s", path,
                            (uint64_t)sb.st_size, strerror(e));
        }
        close(fd);
        /* Read the header with no readahead: a weight served from a cache file never reads
         * its tensor, and the readahead of the header's faults would pull the first
         * tensors' pages in (megabytes where the device's readahead is large). Tensor
         * reads stream with normal readahead again after the parse. */
        (void)madvise(m, (size_t)g->file_size, MADV_RANDOM);
        g->mapping = m;
        g->mapping_bytes = (size_t)g->file_size;
        g->base = m;
        g->base_size = g->file_size;
        g->whole_file = 1;
    } else if (!o.no_mmap) {
        close(fd);
        g->whole_file = 1; /* an empty file: the parse refuses it without reading */
    } else {
        g->fd = fd;
    }
    st = pw__gguf_parse(ctx, g);
    if (g->mapping != NULL) (void)madvise(g->mapping, g->mapping_bytes, MADV_NORMAL);
    if (st != PW_OK) {
        prefix_path(ctx, path);
        pw_gguf_close(g);
        return st;
    }
    /* A streaming handle keeps only the header, and only up to the data section. */
    *out = g;
    return PW_OK;
}

uint32_t pw_gguf_version(const pw_gguf *g) { return g ? g->version : 0; }
uint64_t pw_gguf_alignment(const pw_gguf *g) { return g ? g->alignment : 0; }
uint64_t pw_gguf_data_offset(const pw_gguf *g) { return g ? g->data_offset : 0; }
uint64_t pw_gguf_file_size(const pw_gguf *g) { return g ? g->file_size : 0; }
pw_gguf_orientation pw_gguf_orientation_of(const pw_gguf *g) {
    return g ? g->orientation : PW_ORIENT_AS_STORED;
}
int64_t pw_gguf_tensor_count(const pw_gguf *g) { return g ? g->n_tensors : 0; }

static pw_status check_index(pw_context *ctx, const pw_gguf *g, int64_t index, const char *fn) {
    PW__FAIL_IF(g == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "%s: gguf is NULL", fn);
    PW__FAIL_IF(index < 0 || index >= g->n_tensors, ctx, PW_ERR_INVALID_ARGUMENT,
                "%s: tensor index %" PRId64 " is outside 0..%" PRId64, fn, index,
                g->n_tensors - 1);
    return PW_OK;
}

static const char *name_at(const pw_gguf *g, const pw__gguf_tensor *t) {
    return g->pool + t->name.at;
}

pw_status pw_gguf_tensor_info_get(pw_context *ctx, const pw_gguf *g, int64_t index,
                                  pw_gguf_tensor_info *out) {
    PW__TRY(check_index(ctx, g, index, "pw_gguf_tensor_info_get"));
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_tensor_info_get: out is NULL");
    const pw__gguf_tensor *t = &g->tensors[index];
    memset(out, 0, sizeof *out);
    out->name = name_at(g, t);
    out->gguf_type = t->gguf_type;
    out->format_known = t->format_known;
    out->format = t->format_known ? t->format : PW_FORMAT_COUNT; /* not a format */
    out->n_dims = t->n_dims;
    out->rank = t->n_dims;
    for (int d = 0; d < PW_MAX_RANK; ++d) out->ne[d] = out->shape[d] = t->ne[d];
    if (t->n_dims == 2 && g->orientation == PW_ORIENT_OUT_IN) {
        out->shape[0] = t->ne[1];
        out->shape[1] = t->ne[0];
    }
    out->offset = g->data_offset + t->rel_offset; /* checked at open */
    out->bytes = t->bytes;
    out->info_offset = t->info_offset;
    return PW_OK;
}

pw_status pw_gguf_find_tensor(pw_context *ctx, const pw_gguf *g, const char *name,
                              int64_t *index) {
    PW__FAIL_IF(g == NULL || name == NULL || index == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_find_tensor: NULL argument");
    const int64_t i = pw__gguf_index_find(g, &g->tensor_index, name, strlen(name));
    PW__FAIL_IF(i < 0, ctx, PW_ERR_NOT_FOUND, "no tensor named '%.200s' in the file", name);
    *index = i;
    return PW_OK;
}

static pw_status require_known(pw_context *ctx, const pw_gguf *g, const pw__gguf_tensor *t) {
    if (t->format_known) return PW_OK;
    const char *ggml = pw_gguf_tensor_type_name(t->gguf_type);
    return pw__fail(ctx, PW_ERR_UNSUPPORTED,
                    "tensor '%.200s' (record at byte offset %" PRIu64 ") has GGUF type id %" PRIu32
                    " (%s), which packwise cannot decode",
                    name_at(g, t), t->info_offset, t->gguf_type, ggml ? ggml : "not a ggml type");
}

/* Label bytes of tensor t as the open orientation says. ROW_MAJOR either way:
 * only the labels differ (rule 1: a loader never relayouts). */
static pw_status label(pw_context *ctx, const pw_gguf *g, const pw__gguf_tensor *t,
                       const uint8_t *data, uint64_t bytes, pw_view *out) {
    PW__TRY(require_known(ctx, g, t));
    PW__FAIL_IF(t->elements == 0, ctx, PW_ERR_SHAPE,
                "tensor '%.200s' (record at byte offset %" PRIu64 ") has no elements",
                name_at(g, t), t->info_offset);
    pw_view v;
    if (t->n_dims == 1 || (t->n_dims == 2 && g->orientation == PW_ORIENT_OUT_IN)) {
        const int64_t shape[2] = {t->ne[t->n_dims - 1], t->ne[0]};
        PW__TRY(pw_view_init(ctx, &v, t->format, t->n_dims, t->n_dims == 1 ? t->ne : shape, PW_LAYOUT_ROW_MAJOR, data,
                             bytes));
    } else {
        /* ne order: blocks tile axis 0, which is the fastest in memory. */
        memset(&v, 0, sizeof v);
        v.format = t->format;
        v.rank = t->n_dims;
        v.block_axis = 0;
        v.data = data;
        v.data_bytes = bytes;
        int64_t stride = 1;
        const int64_t bs = pw_format_get(t->format)->block_size;
        for (int d = 0; d < PW_MAX_RANK; ++d) {
            v.shape[d] = t->ne[d];
            v.strides[d] = d < t->n_dims ? stride : 0;
            stride *= d == 0 ? t->ne[0] / bs : t->ne[d]; /* <= elements: no overflow */
        }
        PW__TRY(pw_view_check(ctx, &v));
    }
    v.name = name_at(g, t);
    *out = v;
    return PW_OK;
}

pw_status pw_gguf_tensor_view(pw_context *ctx, const pw_gguf *g, int64_t index, pw_view *out) {
    PW__TRY(check_index(ctx, g, index, "pw_gguf_tensor_view"));
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_tensor_view: out is NULL");
    const pw__gguf_tensor *t = &g->tensors[index];
    PW__FAIL_IF(!g->whole_file, ctx, PW_ERR_INVALID_ARGUMENT,
                "tensor '%.200s': the file was opened with no_mmap; read it with "
                "pw_gguf_tensor_read and label it with pw_gguf_tensor_view_over",
                name_at(g, t));
    PW__TRY(label(ctx, g, t, g->base + g->data_offset + t->rel_offset, t->bytes, out));
    out->storage = g->mapping != NULL ? PW_STORAGE_MAPPED : PW_STORAGE_BORROWED;
    /* A file's tensor has an identity a cache can find it by; caller memory does not. */
    if (g->mapping != NULL) pw__gguf_tensor_source_id(g, index, out->source_id);
    return PW_OK;
}

pw_status pw_gguf_tensor_view_over(pw_context *ctx, const pw_gguf *g, int64_t index,
                                   const void *data, uint64_t bytes, pw_view *out) {
    PW__TRY(check_index(ctx, g, index, "pw_gguf_tensor_view_over"));
    PW__FAIL_IF(out == NULL || data == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_tensor_view_over: NULL argument");
    const pw__gguf_tensor *t = &g->tensors[index];
    PW__TRY(require_known(ctx, g, t));
    PW__FAIL_IF(bytes < t->bytes, ctx, PW_ERR_SHAPE,
                "tensor '%.200s' needs %" PRIu64 " bytes but the buffer has %" PRIu64,
                name_at(g, t), t->bytes, bytes);
    PW__TRY(label(ctx, g, t, data, bytes, out));
    out->storage = PW_STORAGE_BORROWED;
    return PW_OK;
}

pw_status pw_gguf_tensor_read(pw_context *ctx, const pw_gguf *g, int64_t index, void *dst,
                              uint64_t dst_bytes) {
    PW__TRY(check_index(ctx, g, index, "pw_gguf_tensor_read"));
    const pw__gguf_tensor *t = &g->tensors[index];
    PW__TRY(require_known(ctx, g, t));
    PW__FAIL_IF(dst_bytes < t->bytes || (dst == NULL && t->bytes > 0), ctx,
                PW_ERR_INVALID_ARGUMENT,
                "tensor '%.200s' needs %" PRIu64 " bytes but the buffer has %" PRIu64,
                name_at(g, t), t->bytes, dst == NULL ? 0 : dst_bytes);
    const uint64_t at = g->data_offset + t->rel_offset;
    if (g->whole_file) {
        if (t->bytes) memcpy(dst, g->base + at, (size_t)t->bytes);
        return PW_OK;
    }
    uint8_t *d = dst;
    uint64_t done = 0;
    while (done < t->bytes) {
        uint64_t chunk = t->bytes - done;
        if (chunk > (1u << 30)) chunk = 1u << 30;
        const ssize_t r = pread(g->fd, d + done, (size_t)chunk, (off_t)(at + done));
        if (r < 0 && errno == EINTR) continue;
        PW__FAIL_IF(r < 0, ctx, PW_ERR_IO,
                    "tensor '%.200s': read at byte offset %" PRIu64 " failed: %s",
                    name_at(g, t), at + done, strerror(errno));
        PW__FAIL_IF(r == 0, ctx, PW_ERR_TRUNCATED,
                    "tensor '%.200s': the file ends at byte offset %" PRIu64
                    ", inside the tensor's data (did it shrink after opening?)",
                    name_at(g, t), at + done);
        done += (uint64_t)r;
    }
    return PW_OK;
}

pw_status pw_gguf_require_out_in(pw_context *ctx, const pw_view *w) {
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_require_out_in: weight is NULL");
    if (w->rank < 2 || w->block_axis == w->rank - 1) return PW_OK;
    return pw__fail(ctx, PW_ERR_ORIENTATION,
                    "weight '%.200s' is labelled [in, out] = [%" PRId64 ", %" PRId64
                    "] (its blocks tile axis %d, not the last): open the GGUF file with "
                    "PW_ORIENT_OUT_IN, which labels the same bytes [out, in]",
                    w->name ? w->name : "(unnamed)", w->shape[0], w->shape[1],
                    (int)w->block_axis);
}
