/*
 * pw_cache_prepack: pack every 2-D weight of a GGUF for this CPU's GEMM
 * kernel into a weights-cache file, streaming. Each tensor is hashed, then
 * packed a chunk of tiles at a time on the context's threads; each chunk is
 * written out and checksummed, and the source pages it came from are released
 * (madvise), so resident memory stays near one chunk. The file is written as
 * a temporary in the destination's folder, synced and renamed over the
 * destination: a kill at any moment leaves the previous cache or the new one.
 */
#include "base/internal.h"
#include "cache/cache_format.h"
#include "format/format_internal.h"
#include "packwise.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(PW_HAVE_XXHASH)
#define XXH_INLINE_ALL
#include <xxhash.h>
#endif

void pw_cache_prepack_options_init(pw_cache_prepack_options *o) {
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

typedef struct plan_entry {
    int64_t tensor;
    pw_view view;
    const pw__kernel *kernel;
    pw__pack_desc desc;
    uint64_t offset;
    uint64_t name_offset;
    uint32_t name_len;
} plan_entry;

/* The packed GEMM kernel dispatch would choose for this format, or NULL. */
static const pw__kernel *gemm_kernel(const pw_context *ctx, pw_format f) {
    const pw__kernel *best = NULL;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference || k->info.format != f || !pw__kernel_usable(ctx, k) || k->min_n > 2) continue;
        if (best == NULL || k->priority > best->priority) best = k;
    }
    return best != NULL && best->info.layout == PW_LAYOUT_PACKED && best->pack != NULL ? best : NULL;
}

static pw_status write_all(pw_context *ctx, int fd, const void *p, uint64_t n, uint64_t off, const char *path) {
    const uint8_t *b = p;
    while (n > 0) {
        const ssize_t w = pwrite(fd, b, n > (1u << 30) ? (1u << 30) : (size_t)n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        PW__FAIL_IF(w <= 0, ctx, PW_ERR_IO, "writing '%s' at offset %" PRIu64 ": %s", path, off,
                    w < 0 ? strerror(errno) : "no progress");
        b += w;
        n -= (uint64_t)w;
        off += (uint64_t)w;
    }
    return PW_OK;
}

/* Drop the resident pages of [p, p + n) of a read-only file mapping (whole pages inside). */
static void release_pages(const void *p, uint64_t n) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

typedef struct chunk_task {
    const pw__kernel *k;
    const pw__pack_desc *d;
    const pw_view *w;
    uint8_t *buf;
    int64_t t0;     /* first tile of the chunk */
    int64_t per;    /* tiles per task */
    int64_t t_end;  /* one past the chunk's last tile */
} chunk_task;

static void pack_chunk_task(void *p, size_t i) {
    const chunk_task *c = p;
    const int64_t a = c->t0 + (int64_t)i * c->per;
    const int64_t b = a + c->per < c->t_end ? a + c->per : c->t_end;
    const int64_t nr = c->d->nr;
    const int64_t o1 = b * nr < c->d->out ? b * nr : c->d->out;
    c->k->pack(c->d, c->w, a * nr, o1, c->buf + (uint64_t)(a - c->t0) * c->d->tile_bytes);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(PW_HAVE_XXHASH)
/* Pack one tensor chunk by chunk into the file at e->offset; returns the packed checksum. */
static pw_status pack_entry(pw_context *ctx, int fd, const char *tmp, const plan_entry *e, uint64_t chunk_bytes,
                            uint8_t *buf, uint64_t *checksum) {
    const pw__pack_desc *d = &e->desc;
    int64_t tiles_per_chunk = (int64_t)(chunk_bytes / d->tile_bytes);
    if (tiles_per_chunk < 1) tiles_per_chunk = 1;
    XXH3_state_t s;
    XXH3_64bits_reset(&s);
    const pw__format_traits *t = pw__format(e->view.format);
    const uint64_t row_bytes = (uint64_t)(e->view.shape[1] / t->info.block_size) * (uint64_t)t->info.block_bytes;
    for (int64_t t0 = 0; t0 < d->tiles; t0 += tiles_per_chunk) {
        const int64_t t1 = t0 + tiles_per_chunk < d->tiles ? t0 + tiles_per_chunk : d->tiles;
        const int64_t threads = pw_context_threads(ctx);
        chunk_task ct = {e->kernel, d, &e->view, buf, t0, (t1 - t0 + 4 * threads - 1) / (4 * threads), t1};
        if (ct.per < 1) ct.per = 1;
        pw__parallel_for(ctx, pack_chunk_task, &ct, (size_t)((t1 - t0 + ct.per - 1) / ct.per));
        const uint64_t n = (uint64_t)(t1 - t0) * d->tile_bytes;
        XXH3_64bits_update(&s, buf, (size_t)n);
        PW__TRY(write_all(ctx, fd, buf, n, e->offset + (uint64_t)t0 * d->tile_bytes, tmp));
        /* The source rows of these tiles are done with. */
        const int64_t o0 = t0 * d->nr, o1 = t1 * d->nr < d->out ? t1 * d->nr : d->out;
        release_pages(pw_view_block_ptr(&e->view, o0, 0), (uint64_t)(o1 - o0) * row_bytes);
    }
    *checksum = XXH3_64bits_digest(&s);
    return PW_OK;
}
#endif

static void put_field(uint8_t *dst, size_t cap, const char *s) {
    const size_t n = strlen(s);
    memcpy(dst, s, n < cap - 1 ? n : cap - 1);
}

pw_status pw_cache_prepack(pw_context *ctx, const char *gguf_path, const char *cache_path,
                           const pw_cache_prepack_options *options) {
    PW__FAIL_IF(ctx == NULL || gguf_path == NULL || cache_path == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_prepack: NULL argument");
#if !defined(PW_HAVE_XXHASH)
    (void)options;
    return pw__fail(ctx, PW_ERR_UNSUPPORTED, "weights-cache files need xxHash (libxxhash-dev)");
#else
    pw_cache_prepack_options o;
    pw_cache_prepack_options_init(&o);
    if (options != NULL) {
        PW__FAIL_IF(options->struct_size == 0 || options->struct_size > sizeof o, ctx, PW_ERR_INVALID_ARGUMENT,
                    "pw_cache_prepack: options.struct_size is %zu; use pw_cache_prepack_options_init",
                    options->struct_size);
        memcpy(&o, options, options->struct_size);
    }
    const uint64_t chunk = o.chunk_bytes ? o.chunk_bytes : (16u << 20);
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    PW__TRY(pw_gguf_open(ctx, gguf_path, &go, &g));
    pw_status st = PW_OK;
    const int64_t nt = pw_gguf_tensor_count(g);
    plan_entry *plan = pw__calloc(ctx, nt ? (size_t)nt : 1, sizeof *plan, 64);
    uint8_t *buf = NULL, *head = NULL;
    int fd = -1;
    char tmp[4096] = "";
    int64_t n = 0;
    uint64_t strings = 0, max_tile = 0;
    if (plan == NULL) st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_prepack: out of memory");
    for (int64_t i = 0; i < nt && st == PW_OK; ++i) {
        pw_gguf_tensor_info info;
        st = pw_gguf_tensor_info_get(ctx, g, i, &info);
        if (st != PW_OK || !info.format_known || info.rank != 2) continue;
        const pw__kernel *k = gemm_kernel(ctx, info.format);
        if (k == NULL || strlen(info.name) == 0) continue;
        plan_entry *e = &plan[n];
        st = pw_gguf_tensor_view(ctx, g, i, &e->view);
        if (st == PW_OK) st = k->pack_plan(ctx, info.format, info.shape[0], info.shape[1], &e->desc);
        if (st != PW_OK) break;
        e->tensor = i;
        e->kernel = k;
        e->name_offset = strings;
        e->name_len = (uint32_t)strlen(info.name);
        strings += e->name_len;
        if (e->desc.tile_bytes > max_tile) max_tile = e->desc.tile_bytes;
        ++n;
    }
    /* Offsets: header page, index, names, then page-aligned data. */
    const uint64_t index_bytes = (uint64_t)n * PW__CACHE_RECORD_BYTES;
    const uint64_t head_bytes = PW__CACHE_PAGE + index_bytes + strings;
    uint64_t off = (head_bytes + PW__CACHE_PAGE - 1) / PW__CACHE_PAGE * PW__CACHE_PAGE;
    const uint64_t data_start = off;
    for (int64_t i = 0; i < n && st == PW_OK; ++i) {
        plan[i].offset = off;
        off = (off + plan[i].desc.bytes + PW__CACHE_PAGE - 1) / PW__CACHE_PAGE * PW__CACHE_PAGE;
    }
    const uint64_t file_bytes = off;
    if (st == PW_OK) {
        head = pw__calloc(ctx, 1, (size_t)head_bytes, 64);
        const uint64_t buf_bytes = chunk > max_tile ? chunk : max_tile;
        buf = pw__alloc(ctx, (size_t)buf_bytes, 64);
        if (head == NULL || buf == NULL) st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_prepack: out of memory");
    }
    if (st == PW_OK) {
        snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", cache_path);
        fd = mkstemp(tmp);
        if (fd < 0) st = pw__fail(ctx, PW_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
        else {
            /* mkstemp makes the file 0600; a cache is as readable as any file the user writes. */
            const mode_t mask = umask(0);
            umask(mask);
            fchmod(fd, 0666 & ~mask);
        }
    }
    for (int64_t i = 0; i < n && st == PW_OK; ++i) {
        plan_entry *e = &plan[i];
        const double t0 = now_s();
        pw__weights_key key;
        uint64_t checksum = 0;
        st = pw__gguf_weight_key(ctx, &e->view, &e->desc, &key);
        if (st == PW_OK) st = pack_entry(ctx, fd, tmp, e, chunk, buf, &checksum);
        if (st != PW_OK) break;
        uint8_t *r = head + PW__CACHE_PAGE + (uint64_t)i * PW__CACHE_RECORD_BYTES;
        pw__wr64(r, e->name_offset);
        pw__wr32(r + 8, e->name_len);
        pw__wr32(r + 12, (uint32_t)e->view.format);
        pw__wr64(r + 16, (uint64_t)e->view.shape[0]);
        pw__wr64(r + 24, (uint64_t)e->view.shape[1]);
        put_field(r + 32, PW__CACHE_FAMILY_LEN, e->desc.family);
        put_field(r + 64, PW__CACHE_KERNEL_LEN, e->kernel->info.name);
        pw__wr32(r + 112, (uint32_t)e->desc.nr);
        pw__wr32(r + 116, (uint32_t)e->desc.kr);
        pw__wr32(r + 120, (uint32_t)e->desc.sr);
        pw__wr32(r + 124, (uint32_t)e->desc.group);
        pw__wr32(r + 128, (uint32_t)e->desc.version);
        pw__wr64(r + 136, key.lo);
        pw__wr64(r + 144, key.hi);
        pw__wr64(r + 152, checksum);
        pw__wr64(r + 160, e->offset);
        pw__wr64(r + 168, e->desc.bytes);
        pw__wr64(r + 248, XXH3_64bits(r, 248));
        memcpy(head + PW__CACHE_PAGE + index_bytes + e->name_offset, e->view.name, e->name_len);
        if (o.progress)
            o.progress(o.progress_user, e->view.name, i, n, pw_view_bytes(&e->view), e->desc.bytes, now_s() - t0);
    }
    if (st == PW_OK) {
        memcpy(head, PW__CACHE_MAGIC, 8);
        pw__wr32(head + 8, PW_CACHE_FORMAT_VERSION);
        pw__wr32(head + 12, PW__CACHE_HEADER_BYTES);
        pw__wr64(head + 16, file_bytes);
        pw__wr64(head + 24, (uint64_t)n);
        pw__wr64(head + 32, PW__CACHE_PAGE);
        pw__wr64(head + 40, PW__CACHE_PAGE + index_bytes);
        pw__wr64(head + 48, strings);
        pw__wr64(head + 56, XXH3_64bits(head + PW__CACHE_PAGE + index_bytes, (size_t)strings));
        pw__wr64(head + 64, data_start);
        snprintf((char *)head + 72, 32, "packwise %s", pw_version());
        pw__wr64(head + 120, XXH3_64bits(head, 120));
        st = write_all(ctx, fd, head, head_bytes, 0, tmp);
        if (st == PW_OK && ftruncate(fd, (off_t)file_bytes) != 0)
            st = pw__fail(ctx, PW_ERR_IO, "cannot size '%s': %s", tmp, strerror(errno));
        if (st == PW_OK && fsync(fd) != 0) st = pw__fail(ctx, PW_ERR_IO, "fsync '%s': %s", tmp, strerror(errno));
    }
    if (fd >= 0 && close(fd) != 0 && st == PW_OK) st = pw__fail(ctx, PW_ERR_IO, "close '%s': %s", tmp, strerror(errno));
    if (st == PW_OK && rename(tmp, cache_path) != 0)
        st = pw__fail(ctx, PW_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, cache_path, strerror(errno));
    if (st == PW_OK) {
        /* Make the rename itself durable. */
        char dir[4096];
        pw__strlcpy(dir, cache_path, sizeof dir);
        char *slash = strrchr(dir, '/');
        if (slash == NULL) pw__strlcpy(dir, ".", sizeof dir);
        else if (slash == dir) dir[1] = '\0';
        else *slash = '\0';
        const int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    } else if (tmp[0] != '\0' && fd >= 0) {
        unlink(tmp);
    }
    pw__free(ctx, buf);
    pw__free(ctx, head);
    pw__free(ctx, plan);
    pw_gguf_close(g);
    return st;
#endif
}
