/*
 * Layout fixtures and disagreement (issue: conformance for converters).
 * For every format and every order (canonical, kernel = input-block-major,
 * row-tiled 4): the fixture agrees with itself; swapping two blocks, changing
 * one byte inside a block and dropping the last byte are each reported with
 * the right block and position; bytes in the other order are reported as
 * such, naming the expected flat index and the order. Value fixtures decode
 * to their known values exactly, and the i8g splitter re-expresses them
 * exactly (scale * q + min).
 */
#include "pw_test.h"

#include "kernel/i8g.h"

enum { ROWS = 8, BLOCKS = 3 };

static const pw_layout layouts[] = {
    {PW_ORDER_ROW_MAJOR, 0}, {PW_ORDER_INPUT_BLOCK_MAJOR, 0}, {PW_ORDER_ROW_TILED, 4}};

static void check_tags(pw_context *ctx, pw_format f, pw_layout l) {
    const pw_format_info *fi = pw_format_get(f);
    char lname[32];
    pw_layout_name(l, lname, sizeof lname);
    uint64_t n;
    CHECK_OK(pw_fixture_bytes(ctx, f, ROWS, BLOCKS, &n), ctx);
    const int64_t bb = fi->block_bytes;
    unsigned char *buf = malloc((size_t)n + 1);
    CHECK_OK(pw_fixture_tags(ctx, f, ROWS, BLOCKS, l, buf, n), ctx);
    pw_disagreement_report r;
    CHECK_OK(pw_disagreement(ctx, buf, n, f, ROWS, BLOCKS, l, &r), ctx);
    CHECK(r.kind == PW_AGREE && r.message[0] == '\0', "%s %s: fixture disagrees with itself: %s",
          fi->name, lname, r.message);

    /* Swap the blocks at flat slots 4 and 7: the first bad slot is 4, holding slot 7's block. */
    unsigned char *tmp = malloc((size_t)bb);
    memcpy(tmp, buf + 4 * bb, (size_t)bb);
    memcpy(buf + 4 * bb, buf + 7 * bb, (size_t)bb);
    memcpy(buf + 7 * bb, tmp, (size_t)bb);
    int64_t o4 = -1, b4 = -1, o7 = -1, b7 = -1;
    for (int64_t o = 0; o < ROWS; ++o)
        for (int64_t b = 0; b < BLOCKS; ++b) {
            const int64_t fl = pw_layout_flat_index(l, ROWS, BLOCKS, o, b);
            if (fl == 4) o4 = o, b4 = b;
            if (fl == 7) o7 = o, b7 = b;
        }
    CHECK_OK(pw_disagreement(ctx, buf, n, f, ROWS, BLOCKS, l, &r), ctx);
    CHECK(r.kind == PW_WRONG_BLOCK && r.row == o4 && r.block == b4 && r.expected_flat == 4 &&
              r.found_row == o7 && r.found_block == b7,
          "%s %s swap: kind %d (%lld,%lld) flat %lld found (%lld,%lld): %s", fi->name, lname, r.kind,
          (long long)r.row, (long long)r.block, (long long)r.expected_flat, (long long)r.found_row,
          (long long)r.found_block, r.message);
    char expect[128];
    snprintf(expect, sizeof expect, "block (%lld,%lld) expected at flat index 4 (%s)", (long long)o4,
             (long long)b4, lname);
    CHECK(strstr(r.message, expect) != NULL, "%s %s swap message lacks '%s': %s", fi->name, lname,
          expect, r.message);
    memcpy(buf + 7 * bb, buf + 4 * bb, (size_t)bb);
    memcpy(buf + 4 * bb, tmp, (size_t)bb);
    free(tmp);

    /* One byte inside block slot 5, at the last byte and at byte 0. A block of 4 bytes or
     * fewer is all index (no room for more), so there a changed byte spells another block,
     * and is reported as that block's bytes at the right slot. */
    const int64_t positions[2] = {bb - 1, 0};
    for (int k = 0; k < 2; ++k) {
        const int64_t p = positions[k];
        buf[5 * bb + p] ^= 0x10;
        CHECK_OK(pw_disagreement(ctx, buf, n, f, ROWS, BLOCKS, l, &r), ctx);
        const int tiny_block_ok = bb <= 4 && r.kind == PW_WRONG_BLOCK;
        CHECK(r.expected_flat == 5 && (tiny_block_ok || (r.byte_index == p &&
                  (r.kind == PW_WRONG_BYTE || r.kind == PW_UNKNOWN_BYTES))),
              "%s %s byte %lld: kind %d flat %lld byte %lld: %s", fi->name, lname, (long long)p,
              r.kind, (long long)r.expected_flat, (long long)r.byte_index, r.message);
        buf[5 * bb + p] ^= 0x10;
    }

    /* Short and long buffers. */
    CHECK_OK(pw_disagreement(ctx, buf, n - 1, f, ROWS, BLOCKS, l, &r), ctx);
    CHECK(r.kind == PW_SHORT && r.expected_flat == ROWS * BLOCKS - 1 && strstr(r.message, "short"),
          "%s %s short: %s", fi->name, lname, r.message);
    buf[n] = 0;
    CHECK_OK(pw_disagreement(ctx, buf, n + 1, f, ROWS, BLOCKS, l, &r), ctx);
    CHECK(r.kind == PW_LONG && strstr(r.message, "long"), "%s %s long: %s", fi->name, lname, r.message);

    /* A wrong row or block count: the lengths come first (both, and the whole blocks), not
     * a misplaced block. */
    {
        char given[32], expected[32];
        const int64_t more = l.order == PW_ORDER_ROW_TILED ? l.tile_rows : 1; /* whole tiles */
        snprintf(given, sizeof given, "%llu bytes given", (unsigned long long)n);
        snprintf(expected, sizeof expected, "%llu expected",
                 (unsigned long long)(n + (uint64_t)(more * BLOCKS * bb)));
        CHECK_OK(pw_disagreement(ctx, buf, n, f, ROWS + more, BLOCKS, l, &r), ctx);
        CHECK(r.kind == PW_SHORT && strstr(r.message, given) && strstr(r.message, expected) &&
                  strstr(r.message, "whole blocks") &&
                  strstr(r.message, given) < strstr(r.message, "block ("),
              "%s %s rows + 1: %s", fi->name, lname, r.message);
        snprintf(expected, sizeof expected, "%llu expected",
                 (unsigned long long)(n - (uint64_t)(ROWS * bb)));
        CHECK_OK(pw_disagreement(ctx, buf, n, f, ROWS, BLOCKS - 1, l, &r), ctx);
        CHECK(r.kind == PW_LONG && strstr(r.message, given) && strstr(r.message, expected) &&
                  strstr(r.message, "row and block counts"),
              "%s %s blocks - 1: %s", fi->name, lname, r.message);
    }

    /* The other order: named as such, with the expected flat index and the order. */
    if (l.order != PW_ORDER_ROW_TILED) {
        const pw_layout other = {l.order == PW_ORDER_ROW_MAJOR ? PW_ORDER_INPUT_BLOCK_MAJOR
                                                               : PW_ORDER_ROW_MAJOR, 0};
        CHECK_OK(pw_fixture_tags(ctx, f, ROWS, BLOCKS, other, buf, n), ctx);
        CHECK_OK(pw_disagreement(ctx, buf, n, f, ROWS, BLOCKS, l, &r), ctx);
        char oname[32];
        pw_layout_name(other, oname, sizeof oname);
        CHECK(r.kind == PW_WRONG_BLOCK && r.other_layout && r.expected_flat == 1 &&
                  strstr(r.message, "other order") && strstr(r.message, oname) &&
                  strstr(r.message, "flat index 1"),
              "%s %s given %s bytes: %s", fi->name, lname, oname, r.message);
    }
    free(buf);
}

static void check_values(pw_context *ctx, pw_format f) {
    const pw_format_info *fi = pw_format_get(f);
    uint64_t bytes = 0, count = 0;
    int64_t rows, blocks;
    CHECK_OK(pw_fixture_values(ctx, f, NULL, &bytes, NULL, &count, &rows, &blocks), ctx);
    CHECK(rows >= 2 && blocks >= 3, "%s value fixture is %lldx%lld", fi->name, (long long)rows, (long long)blocks);
    unsigned char *b = malloc((size_t)bytes);
    float *v = malloc(sizeof(float) * (size_t)count), *dec = malloc(sizeof(float) * (size_t)count);
    CHECK_OK(pw_fixture_values(ctx, f, b, &bytes, v, &count, &rows, &blocks), ctx);
    CHECK_OK(pw_format_decode(ctx, f, b, (size_t)(rows * blocks), dec), ctx);
    int bad = -1;
    for (uint64_t i = 0; i < count && bad < 0; ++i)
        if (memcmp(&v[i], &dec[i], sizeof(float)) != 0) bad = (int)i;
    CHECK(bad < 0, "%s value fixture: element %d decodes to %g, expected %g", fi->name, bad,
          bad >= 0 ? dec[bad] : 0.0, bad >= 0 ? v[bad] : 0.0);
    /* Not all values equal: the fixture exercises distinct quants. */
    int distinct = 0;
    for (uint64_t i = 1; i < count; ++i) distinct += v[i] != v[0];
    CHECK(count == (uint64_t)(rows * blocks) || distinct > (int)count / 2, "%s: values too uniform", fi->name);
    /* The i8g splitter re-expresses each block exactly. */
    int has_min = 0;
    const int g = pw__i8g_group(f, &has_min, NULL);
    if (g > 0) {
        int8_t q[256];
        float s[16], m[16];
        for (int64_t k = 0; k < rows * blocks; ++k) {
            memset(m, 0, sizeof m);
            pw__i8g_split(f, b + k * fi->block_bytes, q, s, m);
            for (int e = 0; e < fi->block_size; ++e) {
                const float w = s[e / g] * (float)q[e] + m[e / g];
                if (w != v[k * fi->block_size + e]) { /* +0 and -0 are the same weight */
                    CHECK(0, "%s i8g split block %lld element %d: %g != %g", fi->name, (long long)k, e,
                          w, v[k * fi->block_size + e]);
                    k = rows * blocks;
                    break;
                }
            }
        }
    }
    free(b);
    free(v);
    free(dec);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; ++l) check_tags(ctx, (pw_format)f, layouts[l]);
        check_values(ctx, (pw_format)f);
    }
    /* Limits: F16 tags (2 bytes) hold 65536 blocks; beyond, refused. */
    uint64_t n;
    CHECK_OK(pw_fixture_bytes(ctx, PW_FORMAT_F16, 256, 256, &n), ctx);
    CHECK_STATUS(pw_fixture_bytes(ctx, PW_FORMAT_F16, 257, 256, &n), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_fixture_bytes(ctx, PW_FORMAT_Q4_0, 0, 3, &n), PW_ERR_SHAPE, ctx);
    pw_disagreement_report r;
    CHECK_STATUS(pw_disagreement(ctx, "x", 1, PW_FORMAT_Q4_0, 5, 3, (pw_layout){PW_ORDER_ROW_TILED, 2}, &r),
                 PW_ERR_SHAPE, ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
