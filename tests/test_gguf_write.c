// pw-test: once
/*
 * GGUF writer: every metadata type (nested arrays included) and tensors of
 * every format and rank survive write -> read -> write byte for byte; the
 * files ggml wrote (tests/data/ggml) are reproduced exactly; version 2 files
 * read like version 3; the writer refuses what ggml could not read.
 */
#include "pw_test.h"

#include <unistd.h>

#define ALIGN 64

/* Block bytes per tensor buffer, filled from a fixed seed; 3 blocks per row. */
typedef struct tensor_case {
    char name[32];
    pw_format format;
    int32_t n_dims;
    int64_t ne[4];
    unsigned char *data;
    uint64_t bytes;
} tensor_case;

static int make_tensors(tensor_case *tc, pw_rng *rng) {
    int n = 0;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *info = pw_format_get((pw_format)f);
        if (info == NULL || info->gguf_type < 0) continue;
        for (int rank = 1; rank <= 4; ++rank) {
            if (rank != 2 && f % 3 != 0) continue; /* all formats 2-D; other ranks for some */
            tensor_case *t = &tc[n++];
            snprintf(t->name, sizeof t->name, "t%d.%s.r%d", n, info->name, rank);
            t->format = (pw_format)f;
            t->n_dims = rank;
            const int64_t dims[4] = {3 * info->block_size, 5, 2, 3};
            int64_t elements = 1;
            for (int d = 0; d < rank; ++d) elements *= (t->ne[d] = dims[d]);
            t->bytes = (uint64_t)(elements / info->block_size) * (uint64_t)info->block_bytes;
            t->data = malloc(t->bytes);
            REQUIRE(t->data != NULL, "malloc");
            for (uint64_t i = 0; i < t->bytes; ++i) t->data[i] = (unsigned char)pw_rng_next(rng);
        }
    }
    return n;
}

static void set_all_metadata(pw_context *ctx, pw_gguf_writer *w) {
    CHECK_OK(pw_gguf_writer_set_string(w, "general.architecture", "test", 4), ctx);
    CHECK_OK(pw_gguf_writer_set_u8(w, "t.u8", 250), ctx);
    CHECK_OK(pw_gguf_writer_set_i8(w, "t.i8", -7), ctx);
    CHECK_OK(pw_gguf_writer_set_u16(w, "t.u16", 65000), ctx);
    CHECK_OK(pw_gguf_writer_set_i16(w, "t.i16", -32000), ctx);
    CHECK_OK(pw_gguf_writer_set_u32(w, "t.u32", 4000000000u), ctx);
    CHECK_OK(pw_gguf_writer_set_i32(w, "t.i32", -2000000000), ctx);
    CHECK_OK(pw_gguf_writer_set_u64(w, "t.u64", 0xFEDCBA9876543210ull), ctx);
    CHECK_OK(pw_gguf_writer_set_i64(w, "t.i64", -0x123456789ABCDEFll), ctx);
    CHECK_OK(pw_gguf_writer_set_f32(w, "t.f32", -1.5e-3f), ctx);
    CHECK_OK(pw_gguf_writer_set_f64(w, "t.f64", 3.141592653589793), ctx);
    CHECK_OK(pw_gguf_writer_set_bool(w, "t.bool", 1), ctx);
    CHECK_OK(pw_gguf_writer_set_alignment(w, ALIGN), ctx);
    /* string values are bytes: an embedded NUL and a non-UTF-8 byte survive */
    CHECK_OK(pw_gguf_writer_set_string(w, "t.bytes", "a\0b\xff", 4), ctx);
    CHECK_OK(pw_gguf_writer_set_string(w, "t.empty", "", 0), ctx);
    const int16_t i16s[3] = {-1, 2, -3};
    const float f32s[4] = {1.0f, -2.5f, 0.0f, 1e30f};
    const uint64_t u64s[2] = {1, UINT64_MAX};
    const uint8_t bools[3] = {1, 0, 1};
    const double f64s[2] = {-0.0, 2.5};
    CHECK_OK(pw_gguf_writer_set_array(w, "t.a.i16", PW_GGUF_TYPE_INT16, i16s, 3), ctx);
    CHECK_OK(pw_gguf_writer_set_array(w, "t.a.f32", PW_GGUF_TYPE_FLOAT32, f32s, 4), ctx);
    CHECK_OK(pw_gguf_writer_set_array(w, "t.a.u64", PW_GGUF_TYPE_UINT64, u64s, 2), ctx);
    CHECK_OK(pw_gguf_writer_set_array(w, "t.a.bool", PW_GGUF_TYPE_BOOL, bools, 3), ctx);
    CHECK_OK(pw_gguf_writer_set_array(w, "t.a.f64", PW_GGUF_TYPE_FLOAT64, f64s, 2), ctx);
    CHECK_OK(pw_gguf_writer_set_array(w, "t.a.empty", PW_GGUF_TYPE_UINT8, NULL, 0), ctx);
    const char *strs[3] = {"x", "", "\xc3\xa9t\xc3\xa9"};
    CHECK_OK(pw_gguf_writer_set_string_array(w, "t.a.str", strs, NULL, 3), ctx);
    /* nested arrays: [[1, 2], [3]] of uint32 and [[["deep", "er"]], []] of strings */
    CHECK_OK(pw_gguf_writer_array_begin(w, "t.a.nested", PW_GGUF_TYPE_ARRAY), ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, NULL, PW_GGUF_TYPE_UINT32), ctx);
    const uint32_t one_two[2] = {1, 2}, three = 3;
    CHECK_OK(pw_gguf_writer_array_push(w, one_two, 2), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, NULL, PW_GGUF_TYPE_UINT32), ctx);
    CHECK_OK(pw_gguf_writer_array_push(w, &three, 1), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, "t.a.deep", PW_GGUF_TYPE_ARRAY), ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, NULL, PW_GGUF_TYPE_ARRAY), ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, NULL, PW_GGUF_TYPE_STRING), ctx);
    CHECK_OK(pw_gguf_writer_array_push_string(w, "deep", 4), ctx);
    CHECK_OK(pw_gguf_writer_array_push_string(w, "er", 2), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, NULL, PW_GGUF_TYPE_ARRAY), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);
}

static void check_all_metadata(pw_context *ctx, const pw_gguf *g) {
    pw_gguf_value v, e, e2;
    uint8_t u8 = 0;
    int8_t i8 = 0;
    uint16_t u16 = 0;
    int16_t i16 = 0;
    uint32_t u32 = 0;
    int32_t i32 = 0;
    uint64_t u64 = 0;
    int64_t i64 = 0;
    float f32 = 0;
    double f64 = 0;
    int b = 0;
    CHECK(pw_gguf_kv_count(g) == 24, "kv count %lld", (long long)pw_gguf_kv_count(g));
    CHECK(pw_gguf_alignment(g) == ALIGN, "alignment");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.u8", &v), ctx);
    CHECK_OK(pw_gguf_value_u8(ctx, &v, &u8), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.i8", &v), ctx);
    CHECK_OK(pw_gguf_value_i8(ctx, &v, &i8), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.u16", &v), ctx);
    CHECK_OK(pw_gguf_value_u16(ctx, &v, &u16), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.i16", &v), ctx);
    CHECK_OK(pw_gguf_value_i16(ctx, &v, &i16), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.u32", &v), ctx);
    CHECK_OK(pw_gguf_value_u32(ctx, &v, &u32), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.i32", &v), ctx);
    CHECK_OK(pw_gguf_value_i32(ctx, &v, &i32), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.u64", &v), ctx);
    CHECK_OK(pw_gguf_value_u64(ctx, &v, &u64), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.i64", &v), ctx);
    CHECK_OK(pw_gguf_value_i64(ctx, &v, &i64), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.f32", &v), ctx);
    CHECK_OK(pw_gguf_value_f32(ctx, &v, &f32), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.f64", &v), ctx);
    CHECK_OK(pw_gguf_value_f64(ctx, &v, &f64), ctx);
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.bool", &v), ctx);
    CHECK_OK(pw_gguf_value_bool(ctx, &v, &b), ctx);
    CHECK(u8 == 250 && i8 == -7 && u16 == 65000 && i16 == -32000 && u32 == 4000000000u &&
              i32 == -2000000000 && u64 == 0xFEDCBA9876543210ull &&
              i64 == -0x123456789ABCDEFll && f32 == -1.5e-3f && f64 == 3.141592653589793 && b == 1,
          "scalars");
    const char *s = NULL;
    uint64_t len = 0;
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.bytes", &v), ctx);
    CHECK_OK(pw_gguf_value_string(ctx, &v, &s, &len), ctx);
    CHECK(len == 4 && memcmp(s, "a\0b\xff", 5) == 0, "string bytes with NUL and 0xff");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.a.f32", &v), ctx);
    CHECK(v.array_type == PW_GGUF_TYPE_FLOAT32 && v.count == 4, "f32 array");
    CHECK_OK(pw_gguf_value_element(ctx, &v, 3, &e), ctx);
    CHECK_OK(pw_gguf_value_f32(ctx, &e, &f32), ctx);
    CHECK(f32 == 1e30f, "f32[3]");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.a.bool", &v), ctx);
    CHECK_OK(pw_gguf_value_element(ctx, &v, 1, &e), ctx);
    CHECK_OK(pw_gguf_value_bool(ctx, &e, &b), ctx);
    CHECK(b == 0, "bool[1]");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.a.empty", &v), ctx);
    CHECK(v.type == PW_GGUF_TYPE_ARRAY && v.count == 0, "empty array");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.a.str", &v), ctx);
    CHECK_OK(pw_gguf_value_element(ctx, &v, 2, &e), ctx);
    CHECK_OK(pw_gguf_value_string(ctx, &e, &s, &len), ctx);
    CHECK(len == 5 && strcmp(s, "\xc3\xa9t\xc3\xa9") == 0, "str[2]");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.a.nested", &v), ctx);
    CHECK(v.array_type == PW_GGUF_TYPE_ARRAY && v.count == 2, "nested");
    CHECK_OK(pw_gguf_value_element(ctx, &v, 1, &e), ctx);
    CHECK(e.type == PW_GGUF_TYPE_ARRAY && e.array_type == PW_GGUF_TYPE_UINT32 && e.count == 1,
          "nested[1]");
    CHECK_OK(pw_gguf_value_element(ctx, &e, 0, &e2), ctx);
    CHECK_OK(pw_gguf_value_u32(ctx, &e2, &u32), ctx);
    CHECK(u32 == 3, "nested[1][0]");
    CHECK_OK(pw_gguf_find_value(ctx, g, "t.a.deep", &v), ctx);
    CHECK_OK(pw_gguf_value_element(ctx, &v, 0, &e), ctx);
    CHECK_OK(pw_gguf_value_element(ctx, &e, 0, &e2), ctx);
    CHECK(e2.array_type == PW_GGUF_TYPE_STRING && e2.count == 2, "deep[0][0]");
    CHECK_OK(pw_gguf_value_element(ctx, &e2, 1, &e), ctx);
    CHECK_OK(pw_gguf_value_string(ctx, &e, &s, &len), ctx);
    CHECK(len == 2 && strcmp(s, "er") == 0, "deep[0][0][1]");
}

/* Copy everything a reader sees into a new writer. */
static pw_gguf_writer *copy_of(pw_context *ctx, const pw_gguf *g, const unsigned char *image) {
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    REQUIRE(w != NULL, "writer");
    for (int64_t i = 0; i < pw_gguf_kv_count(g); ++i) {
        const char *key;
        pw_gguf_value v;
        CHECK_OK(pw_gguf_kv_get(ctx, g, i, &key, NULL, &v), ctx);
        CHECK_OK(pw_gguf_writer_set_value(w, key, &v), ctx);
    }
    for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
        pw_gguf_tensor_info t;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, g, i, &t), ctx);
        CHECK_OK(pw_gguf_writer_add_tensor(w, t.name, t.format, t.n_dims, t.ne, image + t.offset,
                                           t.bytes),
                 ctx);
    }
    return w;
}

static unsigned char *write_image(pw_context *ctx, pw_gguf_writer *w, uint64_t *size) {
    CHECK_OK(pw_gguf_writer_file_size(w, size), ctx);
    unsigned char *image = malloc(*size);
    REQUIRE(image != NULL, "malloc");
    CHECK_OK(pw_gguf_writer_write_memory(w, image, *size), ctx);
    return image;
}

static void test_round_trip(pw_context *ctx) {
    pw_rng rng = {20250601};
    tensor_case tc[128];
    const int n = make_tensors(tc, &rng);
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    set_all_metadata(ctx, w);
    for (int i = 0; i < n; ++i)
        CHECK_OK(pw_gguf_writer_add_tensor(w, tc[i].name, tc[i].format, tc[i].n_dims, tc[i].ne,
                                           tc[i].data, tc[i].bytes),
                 ctx);
    uint64_t size = 0;
    unsigned char *image = write_image(ctx, w, &size);
    char path[512];
    snprintf(path, sizeof path, "%s/gguf_write_round_trip.gguf", PW_TEST_BINARY_DIR);
    CHECK_OK(pw_gguf_writer_write(w, path), ctx);
    size_t fsize = 0;
    unsigned char *file = pw_test_read_file(path, &fsize);
    CHECK(file != NULL && fsize == size && memcmp(file, image, size) == 0,
          "file and memory image agree");
    free(file);

    pw_gguf_open_options opt;
    pw_gguf_open_options_init(&opt);
    opt.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, path, &opt, &g), ctx);
    REQUIRE(g != NULL, "reopen");
    check_all_metadata(ctx, g);
    CHECK(pw_gguf_tensor_count(g) == n, "tensor count");
    for (int i = 0; i < n && i < pw_gguf_tensor_count(g); ++i) {
        pw_gguf_tensor_info t;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, g, i, &t), ctx);
        CHECK(strcmp(t.name, tc[i].name) == 0 && t.format == tc[i].format &&
                  t.n_dims == tc[i].n_dims && t.bytes == tc[i].bytes,
              "record %s", tc[i].name);
        CHECK((t.offset - pw_gguf_data_offset(g)) % ALIGN == 0, "aligned %s", t.name);
        CHECK(memcmp(image + t.offset, tc[i].data, t.bytes) == 0, "bytes of %s", t.name);
        pw_view v;
        CHECK_OK(pw_gguf_tensor_view(ctx, g, i, &v), ctx);
        /* OUT_IN reverses 2-D only; other ranks stay in ne order, blocks on axis 0 */
        if (t.n_dims == 2)
            CHECK(v.shape[0] == t.ne[1] && v.shape[1] == t.ne[0] && v.block_axis == 1,
                  "2-D OUT_IN %s", t.name);
        else
            CHECK(v.shape[0] == t.ne[0] && v.block_axis == 0 && v.shape[t.n_dims - 1] ==
                      t.ne[t.n_dims - 1], "rank %d keeps ne order %s", (int)t.n_dims, t.name);
    }
    /* read -> write again: identical bytes */
    pw_gguf_writer *w2 = copy_of(ctx, g, image);
    uint64_t size2 = 0;
    unsigned char *image2 = write_image(ctx, w2, &size2);
    CHECK(size2 == size && memcmp(image, image2, size) == 0, "re-written file is identical");
    pw_gguf_writer_destroy(w2);
    free(image2);
    pw_gguf_close(g);

    /* Version 2 has the same little-endian layout: patch the version field. */
    image[4] = 2;
    CHECK_OK(pw_gguf_open_memory(ctx, image, size, &opt, &g), ctx);
    CHECK(pw_gguf_version(g) == 2, "v2");
    if (g) check_all_metadata(ctx, g);
    pw_gguf_close(g);
    g = NULL;
    unlink(path);
    free(image);
    pw_gguf_writer_destroy(w);
    for (int i = 0; i < n; ++i) free(tc[i].data);
}

/* ggml's own files come out of our writer byte for byte. */
static void test_rewrite_ggml(pw_context *ctx) {
    const char *files[2] = {"ggml/fixture_s1_in768_out40.gguf",
                            "ggml/fixture_s2_in1280_out64_align128.gguf"};
    for (int f = 0; f < 2; ++f) {
        size_t size = 0;
        unsigned char *orig = pw_test_read_file(pw_test_data_path(files[f]), &size);
        REQUIRE(orig != NULL, "read %s", files[f]);
        pw_gguf *g = NULL;
        CHECK_OK(pw_gguf_open_memory(ctx, orig, size, NULL, &g), ctx);
        REQUIRE(g != NULL, "open %s", files[f]);
        pw_gguf_writer *w = copy_of(ctx, g, orig);
        uint64_t size2 = 0;
        unsigned char *again = write_image(ctx, w, &size2);
        uint64_t first_diff = 0;
        while (first_diff < size && first_diff < size2 && orig[first_diff] == again[first_diff])
            ++first_diff;
        CHECK(size2 == size && first_diff == size,
              "%s re-written: %llu vs %llu bytes, first difference at byte %llu", files[f],
              (unsigned long long)size2, (unsigned long long)size,
              (unsigned long long)first_diff);
        pw_gguf_writer_destroy(w);
        pw_gguf_close(g);
        free(again);
        free(orig);
    }
}

static void test_refusals(pw_context *ctx) {
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    CHECK_OK(pw_gguf_writer_set_u32(w, "k", 1), ctx);
    CHECK_STATUS(pw_gguf_writer_set_u32(w, "k", 2), PW_ERR_DUPLICATE, ctx);
    CHECK_STATUS(pw_gguf_writer_set_u8(w, "bad\xff", 1), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_gguf_writer_set_u8(w, "", 1), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_gguf_writer_set_u64(w, "general.alignment", 64), PW_ERR_INVALID_ARGUMENT,
                 ctx);
    CHECK_STATUS(pw_gguf_writer_set_alignment(w, 48), PW_ERR_INVALID_ARGUMENT, ctx);
    const uint8_t bad_bool[2] = {0, 2};
    CHECK_STATUS(pw_gguf_writer_set_array(w, "b", PW_GGUF_TYPE_BOOL, bad_bool, 2),
                 PW_ERR_INVALID_ARGUMENT, ctx);
    /* the failed setter left nothing behind: "b" is still free */
    CHECK_OK(pw_gguf_writer_set_array(w, "b", PW_GGUF_TYPE_BOOL, bad_bool, 1), ctx);
    CHECK_STATUS(pw_gguf_writer_array_end(w), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_OK(pw_gguf_writer_array_begin(w, "arr", PW_GGUF_TYPE_STRING), ctx);
    const uint32_t one = 1;
    CHECK_STATUS(pw_gguf_writer_array_push(w, &one, 1), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_gguf_writer_set_u32(w, "other", 1), PW_ERR_INVALID_ARGUMENT, ctx);
    uint64_t size;
    CHECK_STATUS(pw_gguf_writer_file_size(w, &size), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_OK(pw_gguf_writer_array_end(w), ctx);

    uint8_t q[3 * 18] = {0};
    const int64_t ne_ok[2] = {96, 1}, ne_bad[2] = {80, 1};
    CHECK_STATUS(pw_gguf_writer_add_tensor(w, "q", PW_FORMAT_Q4_0, 2, ne_bad, q, sizeof q),
                 PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_gguf_writer_add_tensor(w, "q", PW_FORMAT_Q4_0, 2, ne_ok, q, sizeof q - 1),
                 PW_ERR_SHAPE, ctx);
    CHECK_OK(pw_gguf_writer_add_tensor(w, "q", PW_FORMAT_Q4_0, 2, ne_ok, q, sizeof q), ctx);
    CHECK_STATUS(pw_gguf_writer_add_tensor(w, "q", PW_FORMAT_Q4_0, 2, ne_ok, q, sizeof q),
                 PW_ERR_DUPLICATE, ctx);
    char long_name[80];
    memset(long_name, 'n', 64);
    long_name[64] = '\0';
    CHECK_STATUS(pw_gguf_writer_add_tensor(w, long_name, PW_FORMAT_Q4_0, 2, ne_ok, q, sizeof q),
                 PW_ERR_INVALID_ARGUMENT, ctx);
    long_name[63] = '\0';
    CHECK_OK(pw_gguf_writer_add_tensor(w, long_name, PW_FORMAT_Q4_0, 2, ne_ok, q, sizeof q), ctx);
    CHECK_STATUS(pw_gguf_writer_add_tensor(w, "r", PW_FORMAT_Q4_0, 5, ne_ok, q, sizeof q),
                 PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_gguf_writer_write(w, "/nonexistent-dir/x.gguf"), PW_ERR_IO, ctx);
    pw_gguf_writer_destroy(w);
    pw_gguf_writer_destroy(NULL);
}

/* Duplicate checks over many names (hashed), and after a rolled-back setter. */
static void test_many_names(pw_context *ctx) {
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    char name[32];
    const float one = 1.0f;
    const int64_t ne[1] = {1};
    for (int i = 0; i < 3000; ++i) {
        snprintf(name, sizeof name, "k.%d", i);
        CHECK_OK(pw_gguf_writer_set_i32(w, name, i), ctx);
        snprintf(name, sizeof name, "t.%d", i);
        CHECK_OK(pw_gguf_writer_add_tensor(w, name, PW_FORMAT_F32, 1, ne, &one, 4), ctx);
    }
    CHECK_STATUS(pw_gguf_writer_set_u8(w, "k.1777", 1), PW_ERR_DUPLICATE, ctx);
    CHECK_STATUS(pw_gguf_writer_add_tensor(w, "t.2999", PW_FORMAT_F32, 1, ne, &one, 4),
                 PW_ERR_DUPLICATE, ctx);
    const char *bad[2] = {"fine", NULL};
    const uint64_t lens[2] = {4, 3};
    CHECK_STATUS(pw_gguf_writer_set_string_array(w, "k.new", bad, lens, 2),
                 PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_OK(pw_gguf_writer_set_u8(w, "k.new", 1), ctx);
    CHECK_STATUS(pw_gguf_writer_set_u8(w, "k.2", 1), PW_ERR_DUPLICATE, ctx);
    uint64_t size = 0;
    unsigned char *image = write_image(ctx, w, &size);
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open_memory(ctx, image, size, NULL, &g), ctx);
    CHECK(pw_gguf_kv_count(g) == 3001 && pw_gguf_tensor_count(g) == 3000, "counts");
    pw_gguf_close(g);
    free(image);
    pw_gguf_writer_destroy(w);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    test_round_trip(ctx);
    test_rewrite_ggml(ctx);
    test_refusals(ctx);
    test_many_names(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
