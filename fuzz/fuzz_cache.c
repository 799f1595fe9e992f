/*
 * libFuzzer target for the weights-cache reader: parse the input as a cache
 * image, read every index record, and check every usable entry's packed bytes
 * against their checksum (which reads every byte the index points at, so an
 * out-of-bounds range shows up under ASan). Property: an entry the reader
 * accepts lies inside the image and does not overlap another accepted entry.
 * Every input runs twice: as given, and with its header, names and record
 * checksums recomputed, so mutations get past the checksums to the field
 * checks behind them (the library itself is never weakened for fuzzing).
 * Built into the replay driver too (replay.c), so the corpus replays in ctest.
 */
#include "fuzz_input.h"
#include "packwise.h"
#include "cache/cache_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/* Recompute every checksum whose covered range lies inside the image. */
static void fix_checksums(uint8_t *b, size_t n) {
    if (n < PW__CACHE_HEADER_BYTES) return;
    const uint64_t count = pw__rd64(b + 24), index = pw__rd64(b + 32);
    const uint64_t str_off = pw__rd64(b + 40), str_bytes = pw__rd64(b + 48);
    for (uint64_t i = 0; i < count && i < 4096; ++i) {
        const uint64_t r = index + i * PW__CACHE_RECORD_BYTES;
        if (index > n || r > n || n - r < PW__CACHE_RECORD_BYTES) break;
        pw__wr64(b + r + 248, XXH3_64bits(b + r, 248));
    }
    if (str_off <= n && str_bytes <= n - str_off) pw__wr64(b + 56, XXH3_64bits(b + str_off, (size_t)str_bytes));
    pw__wr64(b + 120, XXH3_64bits(b, 120));
}

static void run_one(const uint8_t *data, size_t size) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.ignore_env = 1;
    o.threads = 1;
    pw_context *ctx = NULL;
    if (pw_context_create(&o, &ctx) != PW_OK) return;
    pw_cache *c = NULL;
    if (pw_cache_open_memory(ctx, data, size, &c) == PW_OK) {
        const int64_t n = pw_cache_entry_count(c);
        for (int64_t i = 0; i < n; ++i) {
            pw_cache_entry_info e;
            PROPERTY(pw_cache_entry_get(ctx, c, i, &e) == PW_OK);
            if (e.refused) continue;
            PROPERTY(e.offset <= size && e.bytes <= size - e.offset && e.offset % 4096 == 0);
            for (int64_t j = 0; j < i; ++j) {
                pw_cache_entry_info f;
                PROPERTY(pw_cache_entry_get(ctx, c, j, &f) == PW_OK);
                if (!f.refused) PROPERTY(e.offset >= f.offset + f.bytes || f.offset >= e.offset + e.bytes);
            }
            const pw__cache_entry *found = pw__cache_file_entry(pw__cache_file_of(c), i);
            PROPERTY(found != NULL && !found->info.refused);
            char why[256];
            (void)pw__cache_file_data(pw__cache_file_of(c), found, why, sizeof why);
        }
        pw_cache_entry_info e;
        PROPERTY(pw_cache_entry_get(ctx, c, n, &e) == PW_ERR_NOT_FOUND);
        pw_cache_close(c);
    }
    pw_context_destroy(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    run_one(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (copy == NULL) return 0;
    memcpy(copy, data, size);
    fix_checksums(copy, size);
    run_one(copy, size);
    free(copy);
    return 0;
}
