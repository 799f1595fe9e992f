/*
 * libFuzzer target for the weights-cache reader behind its checksums: every
 * input is first sealed (each packed range's checksum, then each index
 * record's, the names' and the header's are recomputed, as a writer would), so
 * every mutation reaches the field checks instead of failing a checksum. A
 * custom mutator also writes interesting values into header and record
 * fields (name ranges within the names section, page-aligned data offsets,
 * the ends of each field's range) half of the time.
 *
 * Properties, for a sealed image pw_cache_open_memory accepts:
 * - an accepted entry lies inside the image, page-aligned, overlapping no other
 *   accepted entry; its name is non-empty, no longer than the names section,
 *   and lookup by (name, family) finds a usable entry whose bytes pass their
 *   checksum (every checksum was recomputed, so a failure there is the reader
 *   misreading a range);
 * - a refused entry has a reason and is never served;
 * - pw_weights_cache_attach attaches or skips every QC4W entry, nothing else.
 * Built into the replay driver too (replay.c), so the corpus and crash folder
 * replay in ctest (under ASan+UBSan in a PW_SANITIZE=ON build).
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


/* Records sealed at most (an image this fuzzer builds holds far fewer). */
#define MAX_SEALED_RECORDS 65536u

static int inside(uint64_t off, uint64_t bytes, size_t n) { return off <= n && bytes <= n - off; }

/* Recompute every checksum whose covered range lies inside the image: packed bytes
 * first (their sums live in the records), then records, names, header. */
static void seal(uint8_t *b, size_t n) {
    if (n < PW__CACHE_HEADER_BYTES) return;
    const uint64_t count = pw__rd64(b + 24), index = pw__rd64(b + 32);
    const uint64_t str_off = pw__rd64(b + 40), str_bytes = pw__rd64(b + 48);
    for (uint64_t i = 0; i < count && i < MAX_SEALED_RECORDS; ++i) {
        const uint64_t r = index + i * PW__CACHE_RECORD_BYTES;
        if (!inside(index, 0, n) || !inside(r, PW__CACHE_RECORD_BYTES, n)) break;
        const uint64_t off = pw__rd64(b + r + 160), bytes = pw__rd64(b + r + 168);
        if (inside(off, bytes, n)) pw__wr64(b + r + 152, XXH3_64bits(b + off, (size_t)bytes));
        pw__wr64(b + r + 248, XXH3_64bits(b + r, 248));
    }
    if (inside(str_off, str_bytes, n)) pw__wr64(b + 56, XXH3_64bits(b + str_off, (size_t)str_bytes));
    pw__wr64(b + 120, XXH3_64bits(b, 120));
}

static void check_cache(pw_context *ctx, pw_cache *c, const uint8_t *img, size_t size) {
    const int64_t n = pw_cache_entry_count(c);
    PROPERTY(n >= 0 && (uint64_t)n == pw__rd64(img + 24));
    const uint64_t str_bytes = pw__rd64(img + 48);
    int64_t qc4w = 0;
    for (int64_t i = 0; i < n; ++i) {
        pw_cache_entry_info e;
        PROPERTY(pw_cache_entry_get(ctx, c, i, &e) == PW_OK);
        PROPERTY(e.name != NULL && e.family != NULL && e.kernel != NULL && e.reason != NULL);
        if (e.refused) {
            PROPERTY(e.reason[0] != '\0');
            continue;
        }
        qc4w += e.kind == PW_WEIGHT_QC4W;
        const size_t len = strlen(e.name);
        PROPERTY(len > 0 && len <= str_bytes);
        PROPERTY(e.rows >= 1 && e.in >= 1);
        PROPERTY(inside(e.offset, e.bytes, size) && e.offset % PW__CACHE_PAGE == 0);
        for (int64_t j = 0; j < i; ++j) {
            pw_cache_entry_info f;
            PROPERTY(pw_cache_entry_get(ctx, c, j, &f) == PW_OK);
            if (!f.refused) PROPERTY(e.offset >= f.offset + f.bytes || f.offset >= e.offset + e.bytes);
        }
        const pw__cache_entry *found = pw__cache_file_entry(pw__cache_file_of(c), i);
        PROPERTY(found != NULL && !found->info.refused);
        char why[256];
        PROPERTY(pw__cache_file_data(pw__cache_file_of(c), found, why, sizeof why) != NULL);
    }
    for (int64_t i = 0; i < n; ++i) {
        pw_cache_entry_info e;
        PROPERTY(pw_cache_entry_get(ctx, c, i, &e) == PW_OK);
        if (!e.refused) continue;
        const pw__cache_entry *found = pw__cache_file_entry(pw__cache_file_of(c), i);
        char why[256];
        PROPERTY(found != NULL && found->info.refused &&
                 pw__cache_file_data(pw__cache_file_of(c), found, why, sizeof why) == NULL);
    }
    pw_cache_entry_info e;
    PROPERTY(pw_cache_entry_get(ctx, c, n, &e) == PW_ERR_NOT_FOUND);
    PROPERTY(pw_cache_entry_get(ctx, c, -1, &e) == PW_ERR_NOT_FOUND);
    /* Saving what the cache holds re-reads every usable entry's bytes (checksummed). */
    (void)qc4w;
    (void)pw_cache_save(ctx, c, "/dev/null");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *img = malloc(size ? size : 1);
    if (img == NULL) return 0;
    memcpy(img, data, size);
    seal(img, size);
    pw_context_options o;
    pw_context_options_init(&o);
    o.ignore_env = 1;
    o.threads = 1;
    pw_context *ctx = NULL;
    if (pw_context_create(&o, &ctx) == PW_OK) {
        pw_cache *c = NULL;
        if (pw_cache_open_memory(ctx, img, size, &c) == PW_OK) {
            check_cache(ctx, c, img, size);
            pw_cache_close(c);
        }
        pw_context_destroy(ctx);
    }
    free(img);
    return 0;
}

#if defined(PW_LIBFUZZER)
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A value for a size or offset field: the ends of ranges, values near the
 * file's own sizes (names section, image size, page), and small changes. */
static uint64_t interesting(uint64_t *s, uint64_t old, uint64_t str_bytes, size_t size, int bits) {
    const uint64_t max = bits == 32 ? UINT32_MAX : UINT64_MAX;
    switch (next(s) % 12) {
    case 0: return 0;
    case 1: return 1;
    case 2: return max;
    case 3: return max - next(s) % 16;
    case 4: return (uint64_t)1 << (next(s) % (unsigned)bits);
    case 5: return str_bytes;
    case 6: return str_bytes < UINT64_MAX ? next(s) % (str_bytes + 1) : next(s);
    case 7: return (uint64_t)size;
    case 8: return (next(s) % (size / PW__CACHE_PAGE + 2)) * PW__CACHE_PAGE;
    case 9: return old + 1 + next(s) % 64;
    case 10: return old - 1 - next(s) % 64;
    default: return next(s) & max;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    uint64_t s = seed;
    if (size < PW__CACHE_PAGE + PW__CACHE_RECORD_BYTES || next(&s) % 2 == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    const uint64_t count = pw__rd64(data + 24), str_bytes = pw__rd64(data + 48);
    const uint64_t records = (size - PW__CACHE_PAGE) / PW__CACHE_RECORD_BYTES;
    const uint64_t usable = count < records ? count : records;
    const int changes = 1 + (int)(next(&s) % 3);
    for (int k = 0; k < changes; ++k) {
        if (usable == 0 || next(&s) % 5 == 0) {
            /* Header: entry count, index/names offsets, names bytes, data start, file bytes. */
            static const int fields[] = {16, 24, 32, 40, 48, 64};
            const int f = fields[next(&s) % 6];
            pw__wr64(data + f, interesting(&s, pw__rd64(data + f), str_bytes, size, 64));
            continue;
        }
        uint8_t *r = data + PW__CACHE_PAGE + (next(&s) % usable) * PW__CACHE_RECORD_BYTES;
        switch (next(&s) % 9) {
        case 0: pw__wr64(r, interesting(&s, pw__rd64(r), str_bytes, size, 64)); break;           /* name offset */
        case 1: pw__wr32(r + 8, (uint32_t)interesting(&s, pw__rd32(r + 8), str_bytes, size, 32)); break; /* name length */
        case 2: /* the whole names section, or a range of it */
            pw__wr64(r, 0);
            pw__wr32(r + 8, (uint32_t)(next(&s) % 2 || str_bytes == UINT64_MAX ? str_bytes : next(&s) % (str_bytes + 1)));
            break;
        case 3: pw__wr32(r + 12, (uint32_t)interesting(&s, pw__rd32(r + 12), str_bytes, size, 32)); break; /* format */
        case 4: pw__wr64(r + 16 + 8 * (next(&s) % 2), interesting(&s, pw__rd64(r + 16), str_bytes, size, 64)); break;
        case 5: pw__wr64(r + 160, interesting(&s, pw__rd64(r + 160), str_bytes, size, 64)); break; /* data offset */
        case 6: pw__wr64(r + 168, interesting(&s, pw__rd64(r + 168), str_bytes, size, 64)); break; /* data bytes */
        case 7: pw__wr32(r + 112 + 4 * (next(&s) % 5), (uint32_t)interesting(&s, 0, str_bytes, size, 32)); break;
        default: { /* copy another record over this one (duplicates, shared ranges) */
            const uint8_t *o = data + PW__CACHE_PAGE + (next(&s) % usable) * PW__CACHE_RECORD_BYTES;
            if (o != r) memcpy(r, o, PW__CACHE_RECORD_BYTES);
            break;
        }
        }
    }
    return size;
}
#endif
