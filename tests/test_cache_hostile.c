// pw-test: once
/*
 * Hostile weights-cache files (issue 13), built byte by byte with every
 * checksum recomputed so each one reaches the field checks behind them:
 * - index records that all name the whole names section (the reader once
 *   copied every record's name into a buffer sized for the section once,
 *   and wrote past it: ASan heap-buffer-overflow, Release "malloc(): invalid
 *   size"); also through pw_cache_open on a file;
 * - name offsets and lengths at the ends of their ranges (overflow);
 * - many records sharing one long name (the names copy stays bounded by the
 *   section, not by records x section).
 * Each must open with the bad records refused (a reason naming the record),
 * never crash, and serve the good records unchanged.
 */
#include "pw_test.h"
#include "cache/cache_internal.h"

#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* One record of a hand-made image: name given as bytes of the names section. */
typedef struct rec {
    uint64_t name_off;
    uint32_t name_len;
    const char *family;
} rec;

typedef struct image {
    uint8_t *b;
    size_t n;
    uint64_t str_off, str_bytes;
} image;

/* A valid cache image with `count` records over the names section `names`; record i
 * takes its name from recs[i] and owns one 32-byte data page of its own. */
static image make_image(const char *names, size_t names_len, const rec *recs, uint64_t count) {
    image im;
    im.str_off = PW__CACHE_PAGE + count * PW__CACHE_RECORD_BYTES;
    im.str_bytes = names_len;
    const uint64_t data_start = (im.str_off + names_len + PW__CACHE_PAGE - 1) / PW__CACHE_PAGE * PW__CACHE_PAGE;
    im.n = (size_t)(data_start + count * PW__CACHE_PAGE);
    im.b = calloc(1, im.n);
    REQUIRE(im.b != NULL, "calloc %zu", im.n);
    uint8_t *h = im.b;
    memcpy(h, PW__CACHE_MAGIC, 8);
    pw__wr32(h + 8, PW_CACHE_FORMAT_VERSION);
    pw__wr32(h + 12, PW__CACHE_HEADER_BYTES);
    pw__wr64(h + 16, im.n);
    pw__wr64(h + 24, count);
    pw__wr64(h + 32, PW__CACHE_PAGE);
    pw__wr64(h + 40, im.str_off);
    pw__wr64(h + 48, names_len);
    pw__wr64(h + 64, data_start);
    memcpy(h + im.str_off, names, names_len);
    for (uint64_t i = 0; i < count; ++i) {
        uint8_t *r = h + PW__CACHE_PAGE + i * PW__CACHE_RECORD_BYTES;
        const uint64_t off = data_start + i * PW__CACHE_PAGE;
        for (int j = 0; j < 32; ++j) h[off + (uint64_t)j] = (uint8_t)(i * 7 + (uint64_t)j);
        pw__wr64(r, recs[i].name_off);
        pw__wr32(r + 8, recs[i].name_len);
        pw__wr32(r + 12, PW_FORMAT_Q8_0);
        pw__wr64(r + 16, 1);
        pw__wr64(r + 24, 32);
        memcpy(r + 32, recs[i].family, strlen(recs[i].family));
        memcpy(r + 64, "ref_q8_0", 8);
        pw__wr64(r + 136, i + 1); /* a source key of its own (records of one key and family are one) */
        pw__wr64(r + 152, XXH3_64bits(h + off, 32));
        pw__wr64(r + 160, off);
        pw__wr64(r + 168, 32);
    }
    return im;
}

/* Recompute the record, names and header checksums (after a field was changed). */
static void seal(image *im) {
    const uint64_t count = pw__rd64(im->b + 24);
    for (uint64_t i = 0; i < count; ++i) {
        uint8_t *r = im->b + PW__CACHE_PAGE + i * PW__CACHE_RECORD_BYTES;
        pw__wr64(r + 248, XXH3_64bits(r, 248));
    }
    pw__wr64(im->b + 56, XXH3_64bits(im->b + im->str_off, (size_t)im->str_bytes));
    pw__wr64(im->b + 120, XXH3_64bits(im->b, 120));
}

static pw_cache *open_image(pw_context *ctx, const image *im) {
    pw_cache *c = NULL;
    CHECK_OK(pw_cache_open_memory(ctx, im->b, im->n, &c), ctx);
    return c;
}

static void check_entry(pw_context *ctx, const pw_cache *c, int64_t i, int refused, const char *name,
                        const char *reason_part) {
    pw_cache_entry_info e;
    CHECK_OK(pw_cache_entry_get(ctx, c, i, &e), ctx);
    CHECK(e.refused == refused, "entry %lld refused %d, expected %d (%s)", (long long)i, e.refused, refused,
          e.reason);
    if (name != NULL) CHECK(strcmp(e.name, name) == 0, "entry %lld name '%.40s...'", (long long)i, e.name);
    if (reason_part != NULL)
        CHECK(strstr(e.reason, reason_part) != NULL, "entry %lld reason '%s' lacks '%s'", (long long)i, e.reason,
              reason_part);
    if (!refused && !e.refused) {
        const pw__cache_entry *f = pw__cache_file_entry(pw__cache_file_of(c), i);
        CHECK(f != NULL && !f->info.refused, "entry %lld not usable", (long long)i);
        char why[256] = "";
        CHECK(f != NULL && pw__cache_file_data(pw__cache_file_of(c), f, why, sizeof why) != NULL,
              "entry %lld data: %s", (long long)i, why);
    }
}

/* The defect: every record names the whole names section. */
static void test_records_share_whole_section(pw_context *ctx) {
    static const char names[] = "blk.0.attn_q.weightblk.0.attn_k.weightblk.0.attn_v.weight";
    const uint32_t len = (uint32_t)strlen(names);
    const rec good[3] = {{0, 19, "q8_0_ibm"}, {19, 19, "q8_0_ibm"}, {38, 19, "q8_0_ibm"}};
    image im = make_image(names, len, good, 3);
    seal(&im);
    pw_cache *c = open_image(ctx, &im);
    REQUIRE(c != NULL, "a valid hand-made image must open");
    check_entry(ctx, c, 0, 0, "blk.0.attn_q.weight", NULL);
    check_entry(ctx, c, 1, 0, "blk.0.attn_k.weight", NULL);
    check_entry(ctx, c, 2, 0, "blk.0.attn_v.weight", NULL);
    pw_cache_close(c);

    /* Every record names all 57 bytes (distinct families, so no duplicate refusal). */
    const char *fam[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; ++i) {
        uint8_t *r = im.b + PW__CACHE_PAGE + (uint64_t)i * PW__CACHE_RECORD_BYTES;
        pw__wr64(r, 0);
        pw__wr32(r + 8, len);
        memset(r + 32, 0, PW__CACHE_FAMILY_LEN);
        memcpy(r + 32, fam[i], 1);
    }
    seal(&im);
    c = open_image(ctx, &im);
    REQUIRE(c != NULL, "an image whose records share names must open (bad records refused)");
    check_entry(ctx, c, 0, 0, names, NULL);
    check_entry(ctx, c, 1, 1, NULL, "names");
    check_entry(ctx, c, 2, 1, NULL, "names");
    pw_cache_close(c);

    /* The same bytes through pw_cache_open on a file. */
    char path[512];
    snprintf(path, sizeof path, "%s/test_cache_hostile_%d.pwc", PW_TEST_BINARY_DIR, (int)getpid());
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL, "cannot write %s", path);
    REQUIRE(fwrite(im.b, 1, im.n, f) == im.n, "short write %s", path);
    fclose(f);
    c = NULL;
    CHECK_OK(pw_cache_open(ctx, path, &c), ctx);
    if (c != NULL) {
        check_entry(ctx, c, 0, 0, names, NULL);
        check_entry(ctx, c, 1, 1, NULL, "names");
    }
    pw_cache_close(c);
    unlink(path);
    free(im.b);
}

/* Offsets and lengths at the ends of their ranges: each record refused on its own. */
static void test_name_ranges(pw_context *ctx) {
    static const char names[] = "abcdefgh";
    const struct {
        uint64_t off;
        uint32_t len;
        int refused;
    } cases[] = {
        {0, 8, 0},          {7, 1, 0},          {8, 1, 1},          {0, 9, 1},          {1, 8, 1},
        {0, 0, 1},          {UINT64_MAX, 1, 1}, {UINT64_MAX - 7, 8, 1}, {0, UINT32_MAX, 1}, {8, 0, 1},
        {(uint64_t)1 << 63, UINT32_MAX, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const rec r1[1] = {{cases[k].off, cases[k].len, "f"}};
        image im = make_image(names, 8, r1, 1);
        seal(&im);
        pw_cache *c = open_image(ctx, &im);
        if (c != NULL) check_entry(ctx, c, 0, cases[k].refused, NULL, cases[k].refused ? "name" : NULL);
        pw_cache_close(c);
        free(im.b);
    }
}

/* 4096 records all naming one 3000-byte name: the reader's names copy must stay
 * bounded by the section (once), every record after the first refused. */
static void test_many_records_one_name(pw_context *ctx) {
    enum { COUNT = 4096, LEN = 3000 };
    char *names = malloc(LEN);
    rec *recs = malloc(sizeof *recs * COUNT);
    REQUIRE(names != NULL && recs != NULL, "malloc");
    for (int i = 0; i < LEN; ++i) names[i] = (char)('a' + i % 26);
    char fam[COUNT][16]; /* "f4095"; room for any int, so no optimization level warns */
    for (int i = 0; i < COUNT; ++i) {
        snprintf(fam[i], sizeof fam[i], "f%d", i);
        recs[i] = (rec){0, LEN, fam[i]};
    }
    image im = make_image(names, LEN, recs, COUNT);
    seal(&im);
    pw_cache *c = open_image(ctx, &im);
    if (c != NULL) {
        CHECK(pw_cache_entry_count(c) == COUNT, "count %lld", (long long)pw_cache_entry_count(c));
        check_entry(ctx, c, 0, 0, NULL, NULL);
        int refused = 0;
        for (int64_t i = 1; i < COUNT; ++i) {
            pw_cache_entry_info e;
            CHECK_OK(pw_cache_entry_get(ctx, c, i, &e), ctx);
            refused += e.refused != 0;
        }
        CHECK(refused == COUNT - 1, "%d of %d records sharing one name refused", refused, COUNT - 1);
    }
    pw_cache_close(c);
    free(im.b);
    free(recs);
    free(names);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    test_records_share_whole_section(ctx);
    test_name_ranges(ctx);
    test_many_records_one_name(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
