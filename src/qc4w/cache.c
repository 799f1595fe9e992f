/*
 * The weights cache: packed QC4W weights keyed by content and packer
 * identity (the key's byte stream is documented in qc4w/qc4w.h), shared by
 * the operators created over the same weights. One mutex guards the entries
 * and the counters; a miss packs under it, so equal weights are packed once
 * even when several threads create operators at the same time. The cache is
 * reference-counted: its owner and every operator holding one of its entries.
 */
#include "qc4w/qc4w.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(PW_HAVE_XXHASH)
#define XXH_INLINE_ALL
#include <xxhash.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the weights-cache key hashes floats and nibbles as little-endian memory"
#endif

typedef struct cache_entry {
    pw__qc4w_key key;
    int64_t out, in;
    uint8_t *bytes;
    uint64_t size;
    int borrowed; /* bytes of an attached cache file's mapping: never freed here */
    struct cache_entry *next;
} cache_entry;

struct pw_weights_cache {
    pthread_mutex_t lock;
    pw_allocator allocator;
    uint64_t refs; /* the owner's hold (until destroy) + one per operator */
    uint64_t hits, misses, entries, bytes;
    cache_entry *head;
};

static void *cache_alloc(const pw_allocator *a, size_t bytes, size_t alignment) {
    return a->alloc(a->user, bytes, alignment);
}

static void cache_free(const pw_allocator *a, void *p) {
    if (p != NULL) a->free(a->user, p);
}

#if defined(PW_HAVE_XXHASH)
static void put_u32(XXH3_state_t *s, uint32_t v) {
    uint8_t b[4];
    for (int i = 0; i < 4; ++i) b[i] = (uint8_t)(v >> (8 * i));
    XXH3_128bits_update(s, b, 4);
}

static void put_u64(XXH3_state_t *s, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = (uint8_t)(v >> (8 * i));
    XXH3_128bits_update(s, b, 8);
}
#endif

pw_status pw__qc4w_key_compute(pw_context *ctx, const pw_qc4w_weights *w, const char *family,
                               int32_t nr, int32_t kr, int32_t sr, int32_t version,
                               pw__qc4w_key *key) {
    memset(key, 0, sizeof *key);
    const size_t flen = strlen(family);
    PW__FAIL_IF(flen >= sizeof key->family, ctx, PW_ERR_INVALID_ARGUMENT,
                "weights cache: family name '%s' is too long", family);
    memcpy(key->family, family, flen);
    key->nr = nr;
    key->kr = kr;
    key->sr = sr;
    key->version = version;
#if defined(PW_HAVE_XXHASH)
    uint64_t row_bytes, bytes;
    PW__TRY(pw__qc4w_raw_bytes(ctx, w, &row_bytes, &bytes));
    const int transposed = (w->flags & PW_QC4W_TRANSPOSED) != 0;
    const uint64_t rows = (uint64_t)(transposed ? w->in : w->out);
    const int odd = ((transposed ? w->out : w->in) & 1) != 0;
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    XXH3_128bits_update(&state, "packwise-qc4w-key", 17);
    put_u32(&state, 1);
    put_u64(&state, (uint64_t)w->out);
    put_u64(&state, (uint64_t)w->in);
    put_u32(&state, (uint32_t)w->zero_point);
    put_u32(&state, w->flags);
    put_u32(&state, w->bias != NULL);
    if (!odd) {
        XXH3_128bits_update(&state, w->data, (size_t)bytes);
    } else {
        /* The unused nibble may hold anything; it must not split equal weights. */
        for (uint64_t r = 0; r < rows; ++r) {
            const uint8_t *row = w->data + r * row_bytes;
            const uint8_t last = row[row_bytes - 1] & 0x0F;
            XXH3_128bits_update(&state, row, (size_t)row_bytes - 1);
            XXH3_128bits_update(&state, &last, 1);
        }
    }
    XXH3_128bits_update(&state, w->scale, sizeof(float) * (size_t)w->out);
    if (w->bias != NULL) XXH3_128bits_update(&state, w->bias, sizeof(float) * (size_t)w->out);
    put_u32(&state, (uint32_t)flen);
    XXH3_128bits_update(&state, family, flen);
    put_u32(&state, (uint32_t)nr);
    put_u32(&state, (uint32_t)kr);
    put_u32(&state, (uint32_t)sr);
    put_u32(&state, (uint32_t)version);
    const XXH128_hash_t h = XXH3_128bits_digest(&state);
    key->lo = h.low64;
    key->hi = h.high64;
    return PW_OK;
#else
    (void)w;
    return pw__fail(ctx, PW_ERR_UNSUPPORTED,
                    "the weights cache needs xxHash, and this build has none (install "
                    "libxxhash-dev and reconfigure)");
#endif
}

static int same_key(const pw__qc4w_key *a, const pw__qc4w_key *b) {
    return a->lo == b->lo && a->hi == b->hi && strcmp(a->family, b->family) == 0 &&
           a->nr == b->nr && a->kr == b->kr && a->sr == b->sr && a->version == b->version;
}

pw_status pw_weights_cache_create(pw_context *ctx, pw_weights_cache **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weights_cache_create: ctx and out must be non-NULL");
    *out = NULL;
#if !defined(PW_HAVE_XXHASH)
    return pw__fail(ctx, PW_ERR_UNSUPPORTED,
                    "pw_weights_cache_create: the cache key needs xxHash, and this build has "
                    "none (install libxxhash-dev and reconfigure)");
#else
    pw_weights_cache *c = pw__calloc(ctx, 1, sizeof *c, 64);
    PW__FAIL_IF(c == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_weights_cache_create: out of memory");
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        pw__free(ctx, c);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_weights_cache_create: no mutex");
    }
    c->allocator = ctx->allocator;
    c->refs = 1;
    *out = c;
    return PW_OK;
#endif
}

static void cache_drop(pw_weights_cache *c) {
    pthread_mutex_lock(&c->lock);
    const uint64_t left = --c->refs;
    pthread_mutex_unlock(&c->lock);
    if (left != 0) return;
    const pw_allocator a = c->allocator;
    for (cache_entry *e = c->head; e != NULL;) {
        cache_entry *next = e->next;
        if (!e->borrowed) cache_free(&a, e->bytes);
        cache_free(&a, e);
        e = next;
    }
    pthread_mutex_destroy(&c->lock);
    cache_free(&a, c);
}

void pw_weights_cache_destroy(pw_weights_cache *cache) {
    if (cache != NULL) cache_drop(cache);
}

void pw__weights_cache_release(pw_weights_cache *cache) {
    if (cache != NULL) cache_drop(cache);
}

void pw_weights_cache_get_stats(pw_weights_cache *cache, pw_weights_cache_stats *stats) {
    if (stats == NULL) return;
    memset(stats, 0, sizeof *stats);
    if (cache == NULL) return;
    pthread_mutex_lock(&cache->lock);
    stats->hits = cache->hits;
    stats->misses = cache->misses;
    stats->entries = cache->entries;
    stats->bytes = cache->bytes;
    pthread_mutex_unlock(&cache->lock);
}

void pw__weights_cache_visit_all(pw_weights_cache *c, pw__weights_cache_visit visit, void *user) {
    pthread_mutex_lock(&c->lock);
    for (const cache_entry *e = c->head; e != NULL; e = e->next) visit(user, &e->key, e->out, e->in, e->bytes, e->size);
    pthread_mutex_unlock(&c->lock);
}

int pw__weights_cache_add_borrowed(pw_weights_cache *c, const pw__qc4w_key *key, int64_t out, int64_t in,
                                   const uint8_t *bytes, uint64_t size) {
    pthread_mutex_lock(&c->lock);
    for (const cache_entry *e = c->head; e != NULL; e = e->next) {
        if (same_key(&e->key, key)) {
            pthread_mutex_unlock(&c->lock);
            return 0;
        }
    }
    cache_entry *e = cache_alloc(&c->allocator, sizeof *e, 64);
    if (e != NULL) {
        memset(e, 0, sizeof *e);
        e->key = *key;
        e->out = out;
        e->in = in;
        e->bytes = (uint8_t *)(uintptr_t)bytes;
        e->size = size;
        e->borrowed = 1;
        e->next = c->head;
        c->head = e;
        ++c->entries;
    }
    pthread_mutex_unlock(&c->lock);
    return e != NULL;
}

pw_status pw__weights_cache_get(pw_context *ctx, pw_weights_cache *c, const pw__qc4w_key *key,
                                const pw__pack_desc *desc, pw__qc4w_pack_cb pack, void *user,
                                const uint8_t **bytes, int *hit) {
    pthread_mutex_lock(&c->lock);
    for (cache_entry *e = c->head; e != NULL; e = e->next) {
        if (!same_key(&e->key, key)) continue;
        if (e->out != desc->out || e->in != desc->in || e->size != desc->bytes) {
            pthread_mutex_unlock(&c->lock);
            return pw__fail(ctx, PW_ERR_CHECKSUM,
                            "weights cache: an entry with the same content hash holds %" PRId64
                            " x %" PRId64 " weights, not %" PRId64 " x %" PRId64,
                            e->out, e->in, desc->out, desc->in);
        }
        ++c->hits;
        ++c->refs;
        pthread_mutex_unlock(&c->lock);
        *bytes = e->bytes;
        *hit = 1;
        return PW_OK;
    }
    ++c->misses;
    cache_entry *e = cache_alloc(&c->allocator, sizeof *e, 64);
    uint8_t *b = cache_alloc(&c->allocator, (size_t)desc->bytes, 64);
    pw_status st = PW_OK;
    if (e == NULL || b == NULL) {
        st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                      "weights cache: cannot allocate %" PRIu64 " bytes of packed weights",
                      desc->bytes);
    } else {
        st = pack(ctx, user, b);
    }
    if (st != PW_OK) {
        cache_free(&c->allocator, b);
        cache_free(&c->allocator, e);
        pthread_mutex_unlock(&c->lock);
        return st;
    }
    memset(e, 0, sizeof *e);
    e->key = *key;
    e->out = desc->out;
    e->in = desc->in;
    e->bytes = b;
    e->size = desc->bytes;
    e->next = c->head;
    c->head = e;
    ++c->entries;
    c->bytes += desc->bytes;
    ++c->refs;
    pthread_mutex_unlock(&c->lock);
    *bytes = b;
    *hit = 0;
    return PW_OK;
}
