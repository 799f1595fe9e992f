/*
 * The in-memory weights cache (qc4w/cache.c) and cache files share one key
 * scheme: a 128-bit content hash, then the packer's identity (family, nr, kr,
 * sr, version). pw_weights_cache_save writes a cache's entries as file
 * records under that key; pw_weights_cache_attach puts a file's QC4W records
 * back into a cache, so an operator created over the same weights finds them.
 */
#include "base/internal.h"
#include "cache/cache_format.h"
#include "qc4w/qc4w.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct saved {
    pw_context *ctx;
    pw__cache_record *recs;
    char (*names)[48];
    const uint8_t **data;
    int64_t n, cap;
} saved;

static void collect(void *user, const pw__qc4w_key *key, int64_t out, int64_t in, const uint8_t *bytes,
                    uint64_t size) {
    saved *s = user;
    if (s->n == s->cap) return;
    const int64_t i = s->n++;
    snprintf(s->names[i], sizeof s->names[i], "qc4w:%016" PRIx64 "%016" PRIx64, key->hi, key->lo);
    s->recs[i] = (pw__cache_record){s->names[i], PW__CACHE_FORMAT_QC4W, out, in, key->family, key->family,
                                    key->nr, key->kr, key->sr, 0, key->version, {key->lo, key->hi}, size};
    s->data[i] = bytes;
}

static void count(void *user, const pw__qc4w_key *key, int64_t out, int64_t in, const uint8_t *bytes, uint64_t size) {
    (void)key, (void)out, (void)in, (void)bytes, (void)size;
    ++*(int64_t *)user;
}

pw_status pw_weights_cache_save(pw_context *ctx, pw_weights_cache *cache, const char *path) {
    PW__FAIL_IF(ctx == NULL || cache == NULL || path == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weights_cache_save: NULL argument");
#if !defined(PW_HAVE_XXHASH)
    return pw__fail(ctx, PW_ERR_UNSUPPORTED, "weights-cache files need xxHash (libxxhash-dev)");
#else
    int64_t n = 0;
    pw__weights_cache_visit_all(cache, count, &n);
    saved s = {ctx, pw__calloc(ctx, n ? (size_t)n : 1, sizeof *s.recs, 64),
               pw__calloc(ctx, n ? (size_t)n : 1, sizeof *s.names, 16),
               pw__calloc(ctx, n ? (size_t)n : 1, sizeof *s.data, 16), 0, n};
    pw_status st = PW_OK;
    if (s.recs == NULL || s.names == NULL || s.data == NULL)
        st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_weights_cache_save: out of memory");
    /* Entries are never removed while the cache lives, so the bytes stay valid after the visit. */
    if (st == PW_OK) pw__weights_cache_visit_all(cache, collect, &s);
    pw__cache_writer *w = NULL;
    if (st == PW_OK) st = pw__cache_writer_open(ctx, path, s.recs, s.n, &w);
    for (int64_t i = 0; i < s.n && st == PW_OK; ++i) {
        st = pw__cache_writer_data(w, i, 0, s.data[i], s.recs[i].bytes);
        if (st == PW_OK) st = pw__cache_writer_end_entry(w, i, NULL);
    }
    if (st == PW_OK) {
        st = pw__cache_writer_commit(w);
        w = NULL;
    }
    pw__cache_writer_abort(w);
    pw__free(ctx, s.recs);
    pw__free(ctx, s.names);
    pw__free(ctx, s.data);
    return st;
#endif
}

pw_status pw_weights_cache_attach(pw_context *ctx, pw_weights_cache *cache, const pw_cache *file,
                                  int64_t *attached, int64_t *skipped) {
    PW__FAIL_IF(ctx == NULL || cache == NULL || file == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weights_cache_attach: NULL argument");
    int64_t a = 0, k = 0;
    for (int64_t i = 0; i < pw_cache_entry_count(file); ++i) {
        pw_cache_entry_info info;
        PW__TRY(pw_cache_entry_get(ctx, file, i, &info));
        if (!info.qc4w) continue;
        const pw__cache_entry *e = pw__cache_find(file, info.name, info.family);
        char why[256];
        const uint8_t *bytes = e != NULL ? pw__cache_entry_data(file, e, why, sizeof why) : NULL;
        if (bytes == NULL || strlen(info.family) >= sizeof(((pw__qc4w_key *)0)->family)) {
            ++k;
            continue;
        }
        pw__qc4w_key key;
        memset(&key, 0, sizeof key);
        key.lo = e->key.lo;
        key.hi = e->key.hi;
        memcpy(key.family, info.family, strlen(info.family));
        key.nr = info.nr;
        key.kr = info.kr;
        key.sr = info.sr;
        key.version = info.version;
        a += pw__weights_cache_add_borrowed(cache, &key, info.rows, info.in, bytes, info.bytes);
    }
    if (attached) *attached = a;
    if (skipped) *skipped = k;
    return PW_OK;
}
