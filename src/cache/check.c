/* The full content check of a cache file against its GGUF (pw_cache_check_gguf). */
#include "cache/cache_internal.h"

#include <inttypes.h>
#include <stdio.h>

pw_status pw_cache_check_gguf(pw_context *ctx, const pw_cache *cache, const pw_gguf *gguf,
                              int64_t *checked, int64_t *mismatched) {
    PW__FAIL_IF(ctx == NULL || cache == NULL || gguf == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_check_gguf: NULL argument");
    const pw__cache_file *f = pw__cache_file_of(cache);
    int64_t nc = 0, nm = 0;
    char first[256] = "";
    for (int64_t t = 0; t < pw_gguf_tensor_count(gguf); ++t) {
        pw_gguf_tensor_info info;
        PW__TRY(pw_gguf_tensor_info_get(ctx, gguf, t, &info));
        if (!info.format_known || info.rank != 2) continue;
        pw_view v;
        PW__TRY(pw_gguf_tensor_view(ctx, gguf, t, &v));
        const pw__digest key = pw__cache_view_key(&v);
        pw__digest content = {0, 0};
        int hashed = 0;
        for (int64_t i = 0; i < pw__cache_file_count(f); ++i) {
            const pw__cache_entry *e = pw__cache_file_entry(f, i);
            if (e->info.refused || e->key.lo != key.lo || e->key.hi != key.hi) continue;
            if (!hashed) {
                /* A view labelled [in, out] (AS_STORED) has its blocks on axis 0;
                 * the hash reads blocks in [out, in] order, so label it so. */
                if (v.block_axis != 1) PW__TRY(pw_view_transpose(ctx, &v, &v));
                content = pw__cache_view_content(&v);
                hashed = 1;
            }
            ++nc;
            if (e->content.lo != content.lo || e->content.hi != content.hi) {
                if (nm++ == 0)
                    snprintf(first, sizeof first, "'%s' (%s): the tensor's bytes differ from those "
                             "the entry was packed from", info.name, e->family);
            }
        }
    }
    if (checked) *checked = nc;
    if (mismatched) *mismatched = nm;
    if (nm > 0)
        (void)pw__fail(ctx, PW_ERR_CHECKSUM, "%" PRId64 " of %" PRId64 " cache entries do not match "
                       "their tensors; first: %s", nm, nc, first);
    return PW_OK;
}
