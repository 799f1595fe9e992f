/*
 * Cache-file reader: validates the header (the whole file is refused on a
 * bad magic, version, checksum or size) and every index record (a bad record,
 * an out-of-file or overlapping data range, or a second entry for the same
 * tensor and packed family refuses that entry only). Packed bytes are checked against their checksum when used.
 */
#include "base/internal.h"
#include "cache/cache_format.h"
#include "format/format_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(PW_HAVE_XXHASH)
#define XXH_INLINE_ALL
#include <xxhash.h>
#endif

struct pw_cache {
    pw_context *ctx;       /* allocator only */
    const uint8_t *data;   /* mapping or borrowed memory */
    uint64_t size;         /* actual bytes available */
    int mapped;
    int64_t count;
    pw__cache_entry *entries;
    char *strings;         /* NUL-terminated copies of the names */
};

uint64_t pw__cache_checksum(const void *data, uint64_t bytes) {
#if defined(PW_HAVE_XXHASH)
    return XXH3_64bits(data, (size_t)bytes);
#else
    (void)data;
    (void)bytes;
    return 0;
#endif
}

#if defined(PW_HAVE_XXHASH)
static void key_u32(XXH3_state_t *s, uint32_t v) {
    uint8_t b[4];
    pw__wr32(b, v);
    XXH3_128bits_update(s, b, 4);
}
static void key_u64(XXH3_state_t *s, uint64_t v) {
    uint8_t b[8];
    pw__wr64(b, v);
    XXH3_128bits_update(s, b, 8);
}
#endif

pw_status pw__gguf_weight_key(pw_context *ctx, const pw_view *w, const pw__pack_desc *d,
                              pw__weights_key *key) {
#if defined(PW_HAVE_XXHASH)
    (void)ctx;
    const pw__format_traits *t = pw__format(w->format);
    const int64_t rows = w->shape[0], bpr = w->shape[1] / t->info.block_size;
    XXH3_state_t s;
    XXH3_128bits_reset(&s);
    /* Same scheme as the QC4W key (qc4w/cache.c): a tag and version, the shape, the
     * canonical content row by row, then the packer's identity. */
    XXH3_128bits_update(&s, "packwise-gguf-key", 17);
    key_u32(&s, 1);
    key_u32(&s, (uint32_t)w->format);
    key_u64(&s, (uint64_t)rows);
    key_u64(&s, (uint64_t)w->shape[1]);
    const int row_contiguous = pw_view_order(w) == PW_ORDER_ROW_MAJOR;
    for (int64_t o = 0; o < rows; ++o) {
        if (row_contiguous) {
            XXH3_128bits_update(&s, pw_view_block_ptr(w, o, 0), (size_t)(bpr * t->info.block_bytes));
        } else {
            for (int64_t b = 0; b < bpr; ++b)
                XXH3_128bits_update(&s, pw_view_block_ptr(w, o, b), (size_t)t->info.block_bytes);
        }
    }
    const size_t flen = strlen(d->family);
    key_u32(&s, (uint32_t)flen);
    XXH3_128bits_update(&s, d->family, flen);
    key_u32(&s, (uint32_t)d->nr);
    key_u32(&s, (uint32_t)d->kr);
    key_u32(&s, (uint32_t)d->sr);
    key_u32(&s, (uint32_t)d->version);
    const XXH128_hash_t h = XXH3_128bits_digest(&s);
    key->lo = h.low64;
    key->hi = h.high64;
    return PW_OK;
#else
    (void)w;
    (void)d;
    (void)key;
    return pw__fail(ctx, PW_ERR_UNSUPPORTED, "weights-cache files need xxHash (libxxhash-dev)");
#endif
}

/* A fixed-size char field must hold a NUL and printable ASCII before it. */
static int copy_field(const uint8_t *p, size_t n, char *dst) {
    size_t len = 0;
    while (len < n && p[len] != 0) {
        if (p[len] < 0x20 || p[len] > 0x7e) return -1;
        ++len;
    }
    if (len == n || len == 0) return -1;
    memcpy(dst, p, len);
    dst[len] = '\0';
    return 0;
}

static void refuse(pw__cache_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(pw__cache_entry *e, const char *fmt, ...) {
    e->info.refused = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
    e->info.reason = e->reason;
}

static int cmp_offset(const void *a, const void *b) {
    const pw__cache_entry *x = *(pw__cache_entry *const *)a, *y = *(pw__cache_entry *const *)b;
    return (x->info.offset > y->info.offset) - (x->info.offset < y->info.offset);
}

static pw_status parse(pw_context *ctx, pw_cache *c) {
    const uint8_t *p = c->data;
    PW__FAIL_IF(c->size < PW__CACHE_HEADER_BYTES, ctx, PW_ERR_TRUNCATED,
                "cache file: %" PRIu64 " bytes, shorter than its 128-byte header", c->size);
    PW__FAIL_IF(memcmp(p, PW__CACHE_MAGIC, 8) != 0, ctx, PW_ERR_BAD_FILE,
                "cache file: bad magic at offset 0 (not a packwise weights cache)");
    const uint32_t version = pw__rd32(p + 8);
    PW__FAIL_IF(version != PW_CACHE_FORMAT_VERSION, ctx, PW_ERR_VERSION,
                "cache file: format version %u at offset 8; this library reads version %d",
                version, PW_CACHE_FORMAT_VERSION);
    PW__FAIL_IF(pw__rd32(p + 12) != PW__CACHE_HEADER_BYTES, ctx, PW_ERR_BAD_FILE,
                "cache file: header bytes %u at offset 12, expected 128", pw__rd32(p + 12));
#if defined(PW_HAVE_XXHASH)
    PW__FAIL_IF(XXH3_64bits(p, 120) != pw__rd64(p + 120), ctx, PW_ERR_CHECKSUM,
                "cache file: header checksum at offset 120 does not match");
#else
    return pw__fail(ctx, PW_ERR_UNSUPPORTED, "weights-cache files need xxHash (libxxhash-dev)");
#endif
    const uint64_t file_bytes = pw__rd64(p + 16), count = pw__rd64(p + 24);
    const uint64_t index_off = pw__rd64(p + 32), str_off = pw__rd64(p + 40), str_bytes = pw__rd64(p + 48);
    const uint64_t data_start = pw__rd64(p + 64);
    uint64_t index_bytes, index_end, str_end;
    PW__FAIL_IF(count > (1u << 24) || pw__mul_overflow_u64(count, PW__CACHE_RECORD_BYTES, &index_bytes) ||
                    pw__add_overflow_u64(index_off, index_bytes, &index_end) ||
                    pw__add_overflow_u64(str_off, str_bytes, &str_end),
                ctx, PW_ERR_OVERFLOW, "cache file: entry count %" PRIu64 " at offset 24 overflows the index",
                count);
    PW__FAIL_IF(index_off != PW__CACHE_PAGE || str_off != index_end || data_start < str_end ||
                    data_start % PW__CACHE_PAGE != 0 || file_bytes < data_start,
                ctx, PW_ERR_BAD_FILE,
                "cache file: index at %" PRIu64 ", strings [%" PRIu64 ", %" PRIu64 "), data from %" PRIu64
                " in a %" PRIu64 "-byte file are inconsistent (header offsets 32..71)",
                index_off, str_off, str_end, data_start, file_bytes);
    PW__FAIL_IF(str_end > c->size, ctx, PW_ERR_TRUNCATED,
                "cache file: %" PRIu64 " bytes, but its index and names end at %" PRIu64, c->size, str_end);
    PW__FAIL_IF(XXH3_64bits(p + str_off, (size_t)str_bytes) != pw__rd64(p + 56), ctx, PW_ERR_CHECKSUM,
                "cache file: names checksum (header offset 56) does not match");
    /* Every accepted name is copied once, NUL-terminated, into `strings`. A writer stores
     * each name once, so the names of all records add up to at most the names section;
     * records whose names would add up to more share name bytes and are refused. That
     * bounds the copies by the section (plus one NUL per record), never by records x
     * section. */
    uint64_t strings_bytes;
    PW__FAIL_IF(pw__add_overflow_u64(str_bytes, count + 1, &strings_bytes) || strings_bytes > SIZE_MAX, ctx,
                PW_ERR_OVERFLOW, "cache file: names section of %" PRIu64 " bytes at offset 48 is too large",
                str_bytes);
    c->count = (int64_t)count;
    c->entries = pw__calloc(ctx, count ? (size_t)count : 1, sizeof *c->entries, 64);
    c->strings = pw__alloc(ctx, (size_t)strings_bytes, 16);
    PW__FAIL_IF(c->entries == NULL || c->strings == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "cache file: cannot allocate the index of %" PRIu64 " entries", count);
    char *names = c->strings;
    uint64_t names_taken = 0; /* name bytes copied so far; at most str_bytes */
    for (uint64_t i = 0; i < count; ++i) {
        const uint8_t *r = p + index_off + i * PW__CACHE_RECORD_BYTES;
        pw__cache_entry *e = &c->entries[i];
        e->info.reason = "";
        e->info.name = "";
        e->info.family = e->family;
        e->info.kernel = e->kernel;
        char where[32];
        snprintf(where, sizeof where, "%" PRIu64, index_off + i * PW__CACHE_RECORD_BYTES);
        if (XXH3_64bits(r, 248) != pw__rd64(r + 248)) {
            refuse(e, "index record at offset %s: checksum does not match", where);
            continue;
        }
        const uint64_t noff = pw__rd64(r), nlen = pw__rd32(r + 8);
        if (nlen == 0 || noff > str_bytes || nlen > str_bytes - noff) {
            refuse(e, "index record at offset %s: name outside the names section", where);
            continue;
        }
        if (nlen > str_bytes - names_taken) {
            refuse(e,
                   "index record at offset %s: its name of %" PRIu64 " bytes makes the records' names add up "
                   "to more than the %" PRIu64 "-byte names section (records share name bytes)",
                   where, nlen, str_bytes);
            continue;
        }
        names_taken += nlen;
        memcpy(names, p + str_off + noff, (size_t)nlen);
        names[nlen] = '\0';
        e->info.name = names;
        names += nlen + 1;
        if (strlen(e->info.name) != nlen) {
            refuse(e, "index record at offset %s: name holds a NUL byte", where);
            continue;
        }
        const uint32_t fmt = pw__rd32(r + 12);
        e->info.rows = (int64_t)pw__rd64(r + 16);
        e->info.in = (int64_t)pw__rd64(r + 24);
        e->info.qc4w = fmt == PW__CACHE_FORMAT_QC4W;
        if ((fmt >= PW_FORMAT_COUNT && !e->info.qc4w) || e->info.rows < 1 || e->info.in < 1) {
            refuse(e, "index record at offset %s: format or shape out of range", where);
            continue;
        }
        e->info.format = e->info.qc4w ? PW_FORMAT_COUNT : (pw_format)fmt;
        if (copy_field(r + 32, PW__CACHE_FAMILY_LEN, e->family) != 0 ||
            copy_field(r + 64, PW__CACHE_KERNEL_LEN, e->kernel) != 0) {
            refuse(e, "index record at offset %s: family or kernel name is not a string", where);
            continue;
        }
        e->info.nr = (int32_t)pw__rd32(r + 112);
        e->info.kr = (int32_t)pw__rd32(r + 116);
        e->info.sr = (int32_t)pw__rd32(r + 120);
        e->info.group = (int32_t)pw__rd32(r + 124);
        e->info.version = (int32_t)pw__rd32(r + 128);
        e->key.lo = pw__rd64(r + 136);
        e->key.hi = pw__rd64(r + 144);
        e->checksum = pw__rd64(r + 152);
        e->info.offset = pw__rd64(r + 160);
        e->info.bytes = pw__rd64(r + 168);
        uint64_t end;
        if (e->info.offset % PW__CACHE_PAGE != 0 || e->info.offset < data_start ||
            pw__add_overflow_u64(e->info.offset, e->info.bytes, &end) || end > file_bytes) {
            refuse(e, "index record at offset %s: data range outside the file's data section", where);
            continue;
        }
        if (end > c->size) {
            refuse(e, "data of index record at offset %s lies past the end of a truncated file", where);
            continue;
        }
    }
    /* Overlapping data ranges and duplicate (name, family) pairs: the later record is
     * refused. */
    pw__cache_entry **by_off = pw__calloc(ctx, count ? (size_t)count : 1, sizeof *by_off, 16);
    PW__FAIL_IF(by_off == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "cache file: out of memory");
    size_t n = 0;
    for (uint64_t i = 0; i < count; ++i)
        if (!c->entries[i].info.refused) by_off[n++] = &c->entries[i];
    qsort(by_off, n, sizeof *by_off, cmp_offset);
    for (size_t i = 1; i < n; ++i)
        if (by_off[i]->info.offset < by_off[i - 1]->info.offset + by_off[i - 1]->info.bytes)
            refuse(by_off[i], "data of '%s' overlaps another entry's", by_off[i]->info.name);
    pw__free(ctx, by_off);
    for (uint64_t i = 0; i < count; ++i)
        for (uint64_t j = 0; j < i && !c->entries[i].info.refused; ++j)
            if (!c->entries[j].info.refused &&
                strcmp(c->entries[i].info.name, c->entries[j].info.name) == 0 &&
                strcmp(c->entries[i].info.family, c->entries[j].info.family) == 0)
                refuse(&c->entries[i], "second entry for tensor '%s' in the same packed family",
                       c->entries[i].info.name);
    return PW_OK;
}

static pw_status open_common(pw_context *ctx, pw_cache *c, pw_cache **out) {
    pw_status st = parse(ctx, c);
    if (st != PW_OK) {
        pw_cache_close(c);
        return st;
    }
    *out = c;
    return PW_OK;
}

pw_status pw_cache_open_memory(pw_context *ctx, const void *data, uint64_t size, pw_cache **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL || (data == NULL && size > 0), ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_open_memory: NULL argument");
    *out = NULL;
    pw_cache *c = pw__calloc(ctx, 1, sizeof *c, 64);
    PW__FAIL_IF(c == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_open_memory: out of memory");
    c->ctx = ctx;
    c->data = data;
    c->size = size;
    return open_common(ctx, c, out);
}

pw_status pw_cache_open(pw_context *ctx, const char *path, pw_cache **out) {
    PW__FAIL_IF(ctx == NULL || path == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_open: NULL argument");
    *out = NULL;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    PW__FAIL_IF(fd < 0, ctx, PW_ERR_IO, "cannot open cache file '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return pw__fail(ctx, PW_ERR_IO, "cache file '%s' is not a regular file", path);
    }
    void *m = NULL;
    if (sb.st_size > 0) {
        m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            const int err = errno;
            close(fd);
            return pw__fail(ctx, PW_ERR_IO, "cannot map cache file '%s': %s", path, strerror(err));
        }
    }
    close(fd);
    pw_cache *c = pw__calloc(ctx, 1, sizeof *c, 64);
    if (c == NULL) {
        if (m) munmap(m, (size_t)sb.st_size);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_open: out of memory");
    }
    c->ctx = ctx;
    c->data = m;
    c->size = (uint64_t)sb.st_size;
    c->mapped = m != NULL;
    pw_status st = open_common(ctx, c, out);
    if (st != PW_OK) {
        char msg[PW__MESSAGE_CAPACITY];
        pw__strlcpy(msg, pw_context_message(ctx), sizeof msg);
        return pw__fail(ctx, st, "%s: %s", path, msg);
    }
    return PW_OK;
}

void pw_cache_close(pw_cache *c) {
    if (c == NULL) return;
    if (c->mapped) munmap((void *)c->data, (size_t)c->size);
    pw__free(c->ctx, c->entries);
    pw__free(c->ctx, c->strings);
    pw__free(c->ctx, c);
}

int64_t pw_cache_entry_count(const pw_cache *c) { return c ? c->count : 0; }

pw_status pw_cache_entry_get(pw_context *ctx, const pw_cache *c, int64_t index, pw_cache_entry_info *out) {
    PW__FAIL_IF(c == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_cache_entry_get: NULL argument");
    PW__FAIL_IF(index < 0 || index >= c->count, ctx, PW_ERR_NOT_FOUND,
                "pw_cache_entry_get: index %" PRId64 " outside 0..%" PRId64, index, c->count - 1);
    *out = c->entries[index].info;
    return PW_OK;
}

const pw__cache_entry *pw__cache_find(const pw_cache *c, const char *name, const char *family) {
    if (c == NULL || name == NULL || family == NULL) return NULL;
    const pw__cache_entry *refused = NULL;
    for (int64_t i = 0; i < c->count; ++i) {
        const pw__cache_entry *e = &c->entries[i];
        if (strcmp(e->info.name, name) != 0) continue;
        if (!e->info.refused && strcmp(e->info.family, family) == 0) return e;
        if (e->info.refused && refused == NULL) refused = e;
    }
    return refused;
}

void pw__cache_refused_summary(const pw_cache *c, char *buf, size_t cap) {
    int64_t n = 0;
    const char *first = "";
    for (int64_t i = 0; c && i < c->count; ++i)
        if (c->entries[i].info.refused) {
            if (n++ == 0) first = c->entries[i].reason;
        }
    if (n == 0) snprintf(buf, cap, "%s", "");
    else snprintf(buf, cap, "; %" PRId64 " index record%s refused: %s", n, n > 1 ? "s" : "", first);
}

const uint8_t *pw__cache_entry_data(const pw_cache *c, const pw__cache_entry *e, char *why, size_t cap) {
    if (e->info.refused) {
        snprintf(why, cap, "%s", e->reason);
        return NULL;
    }
    const uint8_t *d = c->data + e->info.offset;
    if (pw__cache_checksum(d, e->info.bytes) != e->checksum) {
        snprintf(why, cap, "packed bytes of '%s' do not match their checksum", e->info.name);
        return NULL;
    }
    return d;
}
