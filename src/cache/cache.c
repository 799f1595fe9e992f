/*
 * The weights cache (packwise/cache.h): a memory side of packed forms shared
 * by weights, and an optional file side (a parsed, mapped cache file). One
 * mutex guards the entries and the counters; a miss packs under it, so a form
 * is packed once even when several threads prepare weights at the same time.
 * The cache is reference-counted: its owner and every weight holding one of
 * its forms.
 */
#include "cache/cache_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct cache_entry {
    pw__cache_key key;
    const char *name;          /* the first weight's name, for pw_cache_save (owned) */
    uint8_t *bytes;
    int borrowed;              /* the file side's mapping: never freed here */
    struct cache_entry *next;
} cache_entry;

struct pw_cache {
    pthread_mutex_t lock;
    pw_allocator allocator;
    uint64_t refs; /* the owner's hold (until close) + one per get */
    uint64_t hits, misses, entries, bytes, file_served;
    cache_entry *head;
    pw__cache_file *file; /* or NULL */
};

static void *cache_alloc(const pw_allocator *a, size_t bytes, size_t alignment) {
    return a->alloc(a->user, bytes, alignment);
}

static void cache_free(const pw_allocator *a, void *p) {
    if (p != NULL) a->free(a->user, p);
}

static int same_key(const pw__cache_key *a, const pw__cache_key *b) {
    return a->source.lo == b->source.lo && a->source.hi == b->source.hi && a->kind == b->kind &&
           a->format == b->format && a->rows == b->rows && a->in == b->in &&
           strcmp(a->family, b->family) == 0 && a->nr == b->nr && a->kr == b->kr && a->sr == b->sr &&
           a->group == b->group && a->version == b->version && a->bytes == b->bytes;
}

static pw_status cache_new(pw_context *ctx, pw_cache **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_create: ctx and out must be non-NULL");
    *out = NULL;
    PW__FAIL_IF(!pw__hash_available(), ctx, PW_ERR_UNSUPPORTED,
                "the weights cache keys forms by XXH3 hashes, and this build has no xxHash "
                "(install libxxhash-dev and reconfigure)");
    pw_cache *c = pw__calloc(ctx, 1, sizeof *c, 64);
    PW__FAIL_IF(c == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_create: out of memory");
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        pw__free(ctx, c);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_create: no mutex");
    }
    c->allocator = ctx->allocator;
    c->refs = 1;
    *out = c;
    return PW_OK;
}

pw_status pw_cache_create(pw_context *ctx, pw_cache **out) { return cache_new(ctx, out); }

pw_status pw_cache_open(pw_context *ctx, const char *path, pw_cache **out) {
    PW__FAIL_IF(path == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_cache_open: path is NULL");
    PW__TRY(cache_new(ctx, out));
    pw_status st = pw__cache_file_open(ctx, path, &(*out)->file);
    if (st != PW_OK) {
        pw_cache_close(*out);
        *out = NULL;
    }
    return st;
}

pw_status pw_cache_open_memory(pw_context *ctx, const void *data, uint64_t size, pw_cache **out) {
    PW__TRY(cache_new(ctx, out));
    pw_status st = pw__cache_file_open_memory(ctx, data, size, &(*out)->file);
    if (st != PW_OK) {
        pw_cache_close(*out);
        *out = NULL;
    }
    return st;
}

static void cache_drop(pw_cache *c) {
    pthread_mutex_lock(&c->lock);
    const uint64_t left = --c->refs;
    pthread_mutex_unlock(&c->lock);
    if (left != 0) return;
    const pw_allocator a = c->allocator;
    for (cache_entry *e = c->head; e != NULL;) {
        cache_entry *next = e->next;
        if (!e->borrowed) cache_free(&a, e->bytes);
        cache_free(&a, (void *)(uintptr_t)e->name);
        cache_free(&a, e);
        e = next;
    }
    pw__cache_file_close(c->file);
    pthread_mutex_destroy(&c->lock);
    cache_free(&a, c);
}

void pw_cache_close(pw_cache *cache) {
    if (cache != NULL) cache_drop(cache);
}

void pw__cache_retain(pw_cache *cache) {
    pthread_mutex_lock(&cache->lock);
    ++cache->refs;
    pthread_mutex_unlock(&cache->lock);
}

void pw__cache_release(pw_cache *cache) {
    if (cache != NULL) cache_drop(cache);
}

void pw_cache_get_stats(pw_cache *cache, pw_cache_stats *stats) {
    if (stats == NULL) return;
    memset(stats, 0, sizeof *stats);
    if (cache == NULL) return;
    pthread_mutex_lock(&cache->lock);
    stats->hits = cache->hits;
    stats->misses = cache->misses;
    stats->entries = cache->entries;
    stats->bytes = cache->bytes;
    stats->file_served = cache->file_served;
    pthread_mutex_unlock(&cache->lock);
}

int64_t pw_cache_entry_count(const pw_cache *c) { return c ? pw__cache_file_count(c->file) : 0; }

pw_status pw_cache_entry_get(pw_context *ctx, const pw_cache *c, int64_t index,
                             pw_cache_entry_info *out) {
    PW__FAIL_IF(c == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_entry_get: NULL argument");
    const pw__cache_entry *e = pw__cache_file_entry(c->file, index);
    PW__FAIL_IF(e == NULL, ctx, PW_ERR_NOT_FOUND,
                "pw_cache_entry_get: index %" PRId64 " outside 0..%" PRId64, index,
                pw_cache_entry_count(c) - 1);
    *out = e->info;
    return PW_OK;
}

const pw__cache_file *pw__cache_file_of(const pw_cache *c) { return c ? c->file : NULL; }

/* A new entry at the head of the list (under the lock). */
static cache_entry *add_entry(pw_cache *c, const pw__cache_key *key, const char *name, uint8_t *bytes,
                              int borrowed) {
    cache_entry *e = cache_alloc(&c->allocator, sizeof *e, 64);
    if (e == NULL) return NULL;
    memset(e, 0, sizeof *e);
    e->key = *key;
    const size_t n = name ? strlen(name) : 0;
    char *copy = cache_alloc(&c->allocator, n + 1, 16);
    if (copy == NULL) {
        cache_free(&c->allocator, e);
        return NULL;
    }
    if (n) memcpy(copy, name, n);
    copy[n] = '\0';
    e->name = copy;
    e->bytes = bytes;
    e->borrowed = borrowed;
    e->next = c->head;
    c->head = e;
    ++c->entries;
    if (!borrowed) c->bytes += key->bytes;
    return e;
}

pw_status pw__cache_get(pw_context *ctx, pw_cache *c, const pw__cache_key *key, const char *name,
                        pw__cache_pack_fn pack, void *user, const uint8_t **bytes, pw__cache_how *how,
                        char *why, size_t why_capacity) {
    if (why_capacity) why[0] = '\0';
    pthread_mutex_lock(&c->lock);
    for (cache_entry *e = c->head; e != NULL; e = e->next) {
        if (!same_key(&e->key, key)) continue;
        ++c->hits;
        ++c->refs;
        pthread_mutex_unlock(&c->lock);
        *bytes = e->bytes;
        *how = PW__CACHE_MEMORY;
        return PW_OK;
    }
    const pw__cache_entry *fe = pw__cache_file_find(c->file, key, why, why_capacity);
    if (fe != NULL) {
        /* The checksum is verified once, as the form is first served; from then on the
         * memory side holds the mapping's bytes. */
        const uint8_t *d = pw__cache_file_data(c->file, fe, why, why_capacity);
        if (d != NULL && add_entry(c, key, fe->info.name, (uint8_t *)(uintptr_t)d, 1) != NULL) {
            ++c->hits;
            ++c->file_served;
            ++c->refs;
            pthread_mutex_unlock(&c->lock);
            *bytes = d;
            *how = PW__CACHE_FILE;
            return PW_OK;
        }
    }
    ++c->misses;
    uint8_t *b = key->bytes <= SIZE_MAX ? cache_alloc(&c->allocator, (size_t)key->bytes, 64) : NULL;
    pw_status st = b == NULL ? pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                                        "weights cache: cannot allocate %" PRIu64
                                        " bytes of packed weights for '%s'",
                                        key->bytes, name ? name : "(unnamed)")
                             : pack(ctx, user, b);
    if (st == PW_OK && add_entry(c, key, name, b, 0) == NULL)
        st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "weights cache: out of memory");
    if (st != PW_OK) {
        cache_free(&c->allocator, b);
        pthread_mutex_unlock(&c->lock);
        return st;
    }
    ++c->refs;
    pthread_mutex_unlock(&c->lock);
    *bytes = b;
    *how = PW__CACHE_PACKED;
    return PW_OK;
}

/* ------------------------------------------------------------------------ */
/* Saving                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct saved {
    pw__cache_record rec;
    char name[48];
    const uint8_t *data;
} saved;

pw_status pw_cache_save(pw_context *ctx, pw_cache *c, const char *path) {
    PW__FAIL_IF(ctx == NULL || c == NULL || path == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_save: NULL argument");
    /* Entries are never removed while the cache lives and the caller holds it, so
     * their bytes stay valid after the lock is dropped. Forms of the file side not
     * yet served are written from the mapping (checksummed again on the way). */
    pthread_mutex_lock(&c->lock);
    int64_t n = 0;
    for (const cache_entry *e = c->head; e != NULL; e = e->next) ++n;
    n += pw__cache_file_count(c->file);
    saved *s = pw__calloc(ctx, n ? (size_t)n : 1, sizeof *s, 64);
    if (s == NULL) {
        pthread_mutex_unlock(&c->lock);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_save: out of memory");
    }
    int64_t k = 0;
    for (const cache_entry *e = c->head; e != NULL; e = e->next, ++k) {
        s[k].rec.key = e->key;
        s[k].rec.kernel = e->key.family;
        s[k].data = e->bytes;
        if (e->key.kind != PW_WEIGHT_BLOCKS || e->name[0] == '\0')
            snprintf(s[k].name, sizeof s[k].name, "%s:%016" PRIx64 "%016" PRIx64,
                     e->key.kind == PW_WEIGHT_QC4W   ? "qc4w"
                     : e->key.kind == PW_WEIGHT_QB4W ? "qb4w"
                                                     : "view",
                     e->key.source.hi,
                     e->key.source.lo);
        s[k].rec.name = s[k].name[0] ? s[k].name : e->name;
    }
    for (int64_t i = 0; i < pw__cache_file_count(c->file); ++i) {
        const pw__cache_entry *fe = pw__cache_file_entry(c->file, i);
        if (fe->info.refused) continue;
        pw__cache_key key;
        memset(&key, 0, sizeof key);
        key.source = fe->key;
        key.kind = fe->info.kind;
        key.format = fe->info.format;
        key.rows = fe->info.rows;
        key.in = fe->info.in;
        memcpy(key.family, fe->family, sizeof key.family);
        key.nr = fe->info.nr;
        key.kr = fe->info.kr;
        key.sr = fe->info.sr;
        key.group = fe->info.group;
        key.version = fe->info.version;
        key.bytes = fe->info.bytes;
        int dup = 0;
        for (int64_t j = 0; j < k && !dup; ++j) dup = same_key(&s[j].rec.key, &key);
        if (dup) continue;
        char why[256];
        const uint8_t *d = pw__cache_file_data(c->file, fe, why, sizeof why);
        if (d == NULL) continue;
        s[k].rec.key = key;
        s[k].rec.content = fe->content;
        s[k].rec.kernel = fe->kernel;
        s[k].rec.name = fe->info.name;
        s[k].data = d;
        ++k;
    }
    pthread_mutex_unlock(&c->lock);
    pw__cache_record *recs = pw__calloc(ctx, k ? (size_t)k : 1, sizeof *recs, 64);
    pw_status st = recs == NULL ? pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_save: out of memory")
                                : PW_OK;
    for (int64_t i = 0; i < k && st == PW_OK; ++i) recs[i] = s[i].rec;
    pw__cache_writer *w = NULL;
    if (st == PW_OK) st = pw__cache_writer_open(ctx, path, recs, k, &w);
    for (int64_t i = 0; i < k && st == PW_OK; ++i) {
        st = pw__cache_writer_data(w, i, 0, s[i].data, s[i].rec.key.bytes);
        if (st == PW_OK) st = pw__cache_writer_end_entry(w, i, NULL);
    }
    if (st == PW_OK) {
        st = pw__cache_writer_commit(w);
        w = NULL;
    }
    pw__cache_writer_abort(w);
    pw__free(ctx, recs);
    pw__free(ctx, s);
    return st;
}
