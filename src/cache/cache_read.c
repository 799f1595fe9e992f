/*
 * Cache-file reader: validates the header (the whole file is refused on a
 * bad magic, version, checksum or size) and every index record (a bad record,
 * an out-of-file or overlapping data range, or a second record for the same
 * source and packer refuses that record only). Packed bytes are checked
 * against their checksum when first served.
 */
#include "base/internal.h"
#include "cache/cache_internal.h"

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

struct pw__cache_file {
    pw_allocator alloc;    /* the opening context's */
    const uint8_t *data;   /* mapping or borrowed memory */
    uint64_t size;         /* actual bytes available */
    int mapped;
    int64_t count;
    pw__cache_entry *entries;
    char *strings;         /* NUL-terminated copies of the names */
};

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

static pw_status parse(pw_context *ctx, pw__cache_file *c) {
    const uint8_t *p = c->data;
    PW__FAIL_IF(c->size < PW__CACHE_HEADER_BYTES, ctx, PW_ERR_TRUNCATED,
                "cache file: %" PRIu64 " bytes, shorter than its 128-byte header", c->size);
    PW__FAIL_IF(memcmp(p, PW__CACHE_MAGIC, 8) != 0, ctx, PW_ERR_BAD_FILE,
                "cache file: bad magic at offset 0 (not a packwise weights cache)");
    const uint32_t version = pw__rd32(p + 8);
    PW__FAIL_IF(version != PW_CACHE_FORMAT_VERSION, ctx, PW_ERR_VERSION,
                "cache file: format version %u at offset 8; this library reads version %d%s",
                version, PW_CACHE_FORMAT_VERSION,
                version < PW_CACHE_FORMAT_VERSION ? " (made by an older packwise: run packwise "
                                                    "prepack again)"
                                                  : "");
    PW__FAIL_IF(pw__rd32(p + 12) != PW__CACHE_HEADER_BYTES, ctx, PW_ERR_BAD_FILE,
                "cache file: header bytes %u at offset 12, expected 128", pw__rd32(p + 12));
    PW__FAIL_IF(!pw__hash_available(), ctx, PW_ERR_UNSUPPORTED,
                "weights-cache files need xxHash (libxxhash-dev)");
    PW__FAIL_IF(pw__checksum64(p, 120) != pw__rd64(p + 120), ctx, PW_ERR_CHECKSUM,
                "cache file: header checksum at offset 120 does not match");
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
    PW__FAIL_IF(pw__checksum64(p + str_off, (size_t)str_bytes) != pw__rd64(p + 56), ctx, PW_ERR_CHECKSUM,
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
        if (pw__checksum64(r, 248) != pw__rd64(r + 248)) {
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
        const int qc4w = fmt == PW__CACHE_FORMAT_QC4W, qb4w = fmt == PW__CACHE_FORMAT_QB4W;
        if ((fmt >= PW_FORMAT_COUNT && !qc4w && !qb4w) || e->info.rows < 1 || e->info.in < 1) {
            refuse(e, "index record at offset %s: format or shape out of range", where);
            continue;
        }
        e->info.kind = qc4w ? PW_WEIGHT_QC4W : qb4w ? PW_WEIGHT_QB4W : PW_WEIGHT_BLOCKS;
        e->info.format = qc4w || qb4w ? PW_FORMAT_COUNT : (pw_format)fmt;
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
        e->content.lo = pw__rd64(r + 176);
        e->content.hi = pw__rd64(r + 184);
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
    /* Overlapping data ranges and duplicate (source, packer) pairs: the later record is
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
            if (!c->entries[j].info.refused && c->entries[i].key.lo == c->entries[j].key.lo &&
                c->entries[i].key.hi == c->entries[j].key.hi &&
                strcmp(c->entries[i].info.family, c->entries[j].info.family) == 0)
                refuse(&c->entries[i], "second entry for tensor '%s' in the same packed family",
                       c->entries[i].info.name);
    return PW_OK;
}

static pw__cache_file *file_new(pw_context *ctx, const void *data, uint64_t size, int mapped) {
    pw__cache_file *c = pw__calloc(ctx, 1, sizeof *c, 64);
    if (c == NULL) return NULL;
    c->alloc = ctx->allocator;
    c->data = data;
    c->size = size;
    c->mapped = mapped;
    return c;
}

static void file_free(const pw_allocator *a, void *p) {
    if (p != NULL) a->free(a->user, p);
}

pw_status pw__cache_file_open_memory(pw_context *ctx, const void *data, uint64_t size,
                                     pw__cache_file **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL || (data == NULL && size > 0), ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_open_memory: NULL argument");
    *out = NULL;
    pw__cache_file *c = file_new(ctx, data, size, 0);
    PW__FAIL_IF(c == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_open_memory: out of memory");
    pw_status st = parse(ctx, c);
    if (st != PW_OK) {
        pw__cache_file_close(c);
        return st;
    }
    *out = c;
    return PW_OK;
}

pw_status pw__cache_file_open(pw_context *ctx, const char *path, pw__cache_file **out) {
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
    pw__cache_file *c = file_new(ctx, m, (uint64_t)sb.st_size, m != NULL);
    if (c == NULL) {
        if (m) munmap(m, (size_t)sb.st_size);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_open: out of memory");
    }
    pw_status st = parse(ctx, c);
    if (st != PW_OK) {
        pw__cache_file_close(c);
        char msg[PW__MESSAGE_CAPACITY];
        pw__strlcpy(msg, pw_context_message(ctx), sizeof msg);
        return pw__fail(ctx, st, "%s: %s", path, msg);
    }
    *out = c;
    return PW_OK;
}

void pw__cache_file_close(pw__cache_file *c) {
    if (c == NULL) return;
    if (c->mapped) munmap((void *)(uintptr_t)c->data, (size_t)c->size);
    const pw_allocator a = c->alloc;
    file_free(&a, c->entries);
    file_free(&a, c->strings);
    file_free(&a, c);
}

int64_t pw__cache_file_count(const pw__cache_file *c) { return c ? c->count : 0; }

const pw__cache_entry *pw__cache_file_entry(const pw__cache_file *c, int64_t i) {
    return c != NULL && i >= 0 && i < c->count ? &c->entries[i] : NULL;
}

const pw__cache_entry *pw__cache_file_find(const pw__cache_file *c, const pw__cache_key *k,
                                           char *why, size_t cap) {
    if (cap) why[0] = '\0';
    const pw__cache_entry *same = NULL, *other = NULL, *unkeyed = NULL;
    int64_t nunkeyed = 0;
    for (int64_t i = 0; c != NULL && i < c->count; ++i) {
        const pw__cache_entry *e = &c->entries[i];
        if (e->key.lo == 0 && e->key.hi == 0) {
            /* refused before its key could be read: it may be the one looked for */
            if (e->info.refused && nunkeyed++ == 0) unkeyed = e;
            continue;
        }
        if (e->key.lo != k->source.lo || e->key.hi != k->source.hi) continue;
        const int packer = strcmp(e->family, k->family) == 0 && e->info.nr == k->nr &&
                           e->info.kr == k->kr && e->info.sr == k->sr && e->info.group == k->group &&
                           e->info.version == k->version;
        const int shape = e->info.kind == k->kind &&
                          (k->kind != PW_WEIGHT_BLOCKS || e->info.format == k->format) &&
                          e->info.rows == k->rows && e->info.in == k->in && e->info.bytes == k->bytes;
        if (packer && shape && !e->info.refused) return e;
        if (packer && same == NULL) same = e;
        else if (!packer && other == NULL) other = e;
    }
    if (cap == 0) return NULL;
    if (same != NULL && same->info.refused)
        snprintf(why, cap, "the cache file's entry for '%s' is refused: %s", same->info.name, same->reason);
    else if (same != NULL)
        snprintf(why, cap, "the cache file's entry for '%s' is for another shape or format", same->info.name);
    else if (unkeyed != NULL)
        snprintf(why, cap, "no usable entry of the cache file for this source; %" PRId64
                 " index record%s refused: %s", nunkeyed, nunkeyed > 1 ? "s" : "", unkeyed->reason);
    else if (other != NULL)
        snprintf(why, cap, "the cache file holds '%s' as %s v%d, the kernel reads %s v%d",
                 other->info.name, other->family, (int)other->info.version, k->family, (int)k->version);
    else if (c != NULL)
        snprintf(why, cap, "no entry of the cache file is for this source (a cache made from another "
                 "file, or from this file before it changed)");
    return NULL;
}

const uint8_t *pw__cache_file_data(const pw__cache_file *c, const pw__cache_entry *e, char *why,
                                   size_t cap) {
    if (e->info.refused) {
        snprintf(why, cap, "%s", e->reason);
        return NULL;
    }
    const uint8_t *d = c->data + e->info.offset;
    if (pw__checksum64(d, (size_t)e->info.bytes) != e->checksum) {
        snprintf(why, cap, "packed bytes of '%s' do not match their checksum", e->info.name);
        return NULL;
    }
    return d;
}
