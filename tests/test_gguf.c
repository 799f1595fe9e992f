// pw-test: once
/*
 * GGUF reader against files written by ggml itself (tests/data/ggml): header
 * fields and metadata as MANIFEST.txt lists them, tensor records, views in
 * both orientations over the same bytes, mmap vs streaming vs memory image,
 * the recorded-orientation check, and decode through the view against
 * ggml's own dequantization (deq.* tensors) bit for bit.
 */
#include "pw_test.h"


static const char *S1 = "ggml/fixture_s1_in768_out40.gguf";
static const char *S2 = "ggml/fixture_s2_in1280_out64_align128.gguf";

static pw_gguf *open_file(pw_context *ctx, const char *rel, pw_gguf_orientation o, int no_mmap) {
    pw_gguf_open_options opt;
    pw_gguf_open_options_init(&opt);
    opt.orientation = o;
    opt.no_mmap = no_mmap;
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, pw_test_data_path(rel), &opt, &g), ctx);
    REQUIRE(g != NULL, "cannot open %s", rel);
    return g;
}

static void test_header(pw_context *ctx) {
    pw_gguf *g = open_file(ctx, S1, PW_ORIENT_AS_STORED, 0);
    CHECK(pw_gguf_version(g) == 3, "version %u", pw_gguf_version(g));
    CHECK(pw_gguf_alignment(g) == 32, "alignment");
    CHECK(pw_gguf_data_offset(g) == 4448, "data offset %llu",
          (unsigned long long)pw_gguf_data_offset(g));
    CHECK(pw_gguf_file_size(g) == 2474304, "file size");
    CHECK(pw_gguf_tensor_count(g) == 86, "tensors %lld", (long long)pw_gguf_tensor_count(g));
    CHECK(pw_gguf_kv_count(g) == 12, "kv %lld", (long long)pw_gguf_kv_count(g));
    CHECK(pw_gguf_orientation_of(g) == PW_ORIENT_AS_STORED, "orientation");
    pw_gguf_close(g);

    g = open_file(ctx, S2, PW_ORIENT_OUT_IN, 1);
    CHECK(pw_gguf_alignment(g) == 128, "S2 alignment");
    CHECK(pw_gguf_tensor_count(g) == 60, "S2 tensors");
    CHECK(pw_gguf_kv_count(g) == 13, "S2 kv");
    CHECK(pw_gguf_data_offset(g) % 128 == 0 && pw_gguf_data_offset(g) >= 944, "S2 data offset");
    for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
        pw_gguf_tensor_info info;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, g, i, &info), ctx);
        CHECK((info.offset - pw_gguf_data_offset(g)) % 128 == 0, "S2 tensor %s offset", info.name);
    }
    pw_gguf_close(g);
}

static void test_metadata(pw_context *ctx) {
    pw_gguf *g = open_file(ctx, S1, PW_ORIENT_AS_STORED, 0);
    const char *key = NULL;
    uint64_t key_len = 0;
    pw_gguf_value v;
    CHECK_OK(pw_gguf_kv_get(ctx, g, 0, &key, &key_len, &v), ctx);
    CHECK(strcmp(key, "general.architecture") == 0 && key_len == 20, "first key %s", key);
    const char *s = NULL;
    uint64_t len = 0;
    CHECK_OK(pw_gguf_value_string(ctx, &v, &s, &len), ctx);
    CHECK(len == 7 && strcmp(s, "fixture") == 0, "architecture '%s'", s);
    CHECK(v.offset == 71 - 7, "string payload offset %llu", (unsigned long long)v.offset);

    uint32_t u32 = 0;
    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.u32", &v), ctx);
    CHECK_OK(pw_gguf_value_u32(ctx, &v, &u32), ctx);
    CHECK(u32 == 3000000000u, "fixture.u32 %u", u32);
    int32_t i32 = 0;
    CHECK_STATUS(pw_gguf_value_i32(ctx, &v, &i32), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK(strstr(pw_context_message(ctx), "uint32") != NULL, "type mismatch names the type: %s",
          pw_context_message(ctx));

    float f32 = 0;
    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.f32", &v), ctx);
    CHECK_OK(pw_gguf_value_f32(ctx, &v, &f32), ctx);
    CHECK(f32 == -0.0015f, "fixture.f32 %g", (double)f32);
    uint64_t u64 = 0;
    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.seed", &v), ctx);
    CHECK_OK(pw_gguf_value_u64(ctx, &v, &u64), ctx);
    CHECK(u64 == 20250102u, "seed");
    int b = 0;
    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.bool", &v), ctx);
    CHECK_OK(pw_gguf_value_bool(ctx, &v, &b), ctx);
    CHECK(b == 1, "bool");

    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.i32_array", &v), ctx);
    CHECK(v.type == PW_GGUF_TYPE_ARRAY && v.array_type == PW_GGUF_TYPE_INT32 && v.count == 4,
          "i32 array");
    const int32_t want_i32[4] = {-1, 0, 1, 2147483647};
    for (uint64_t i = 0; i < v.count; ++i) {
        pw_gguf_value e;
        CHECK_OK(pw_gguf_value_element(ctx, &v, i, &e), ctx);
        CHECK_OK(pw_gguf_value_i32(ctx, &e, &i32), ctx);
        CHECK(i32 == want_i32[i], "i32_array[%llu] = %d", (unsigned long long)i, i32);
    }
    const void *raw = NULL;
    CHECK_OK(pw_gguf_value_array_data(ctx, &v, &raw), ctx);
    CHECK(raw != NULL && memcmp(raw, want_i32, sizeof want_i32) == 0, "raw i32 array");
    pw_gguf_value e;
    CHECK_STATUS(pw_gguf_value_element(ctx, &v, 4, &e), PW_ERR_INVALID_ARGUMENT, ctx);

    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.strings", &v), ctx);
    const char *want_s[5] = {"alpha", "beta", "", "gamma delta", "utf8:\xc3\xa9\xe2\x82\xac"};
    CHECK(v.array_type == PW_GGUF_TYPE_STRING && v.count == 5, "string array");
    for (uint64_t i = 0; i < 5 && i < v.count; ++i) {
        CHECK_OK(pw_gguf_value_element(ctx, &v, i, &e), ctx);
        CHECK_OK(pw_gguf_value_string(ctx, &e, &s, &len), ctx);
        CHECK(len == strlen(want_s[i]) && strcmp(s, want_s[i]) == 0, "strings[%llu] '%s'",
              (unsigned long long)i, s);
    }
    CHECK_STATUS(pw_gguf_value_array_data(ctx, &v, &raw), PW_ERR_INVALID_ARGUMENT, ctx);

    CHECK_OK(pw_gguf_find_value(ctx, g, "fixture.types", &v), ctx);
    CHECK(v.count == 16, "types count");
    int64_t idx = -1;
    CHECK_STATUS(pw_gguf_find_key(ctx, g, "no.such.key", &idx), PW_ERR_NOT_FOUND, ctx);
    CHECK(strstr(pw_context_message(ctx), "no.such.key") != NULL, "names the key");
    pw_gguf_close(g);

    g = open_file(ctx, S2, PW_ORIENT_AS_STORED, 1); /* streaming: metadata from the header copy */
    CHECK_OK(pw_gguf_kv_get(ctx, g, 0, &key, NULL, &v), ctx);
    CHECK(strcmp(key, "general.alignment") == 0, "S2 first key %s", key);
    CHECK_OK(pw_gguf_value_u32(ctx, &v, &u32), ctx);
    CHECK(u32 == 128, "S2 alignment value");
    CHECK_OK(pw_gguf_find_value(ctx, g, "general.name", &v), ctx);
    CHECK_OK(pw_gguf_value_string(ctx, &v, &s, &len), ctx);
    CHECK(strcmp(s, "fixture-S2") == 0, "S2 name %s", s);
    pw_gguf_close(g);
}

/* The same bytes labelled [in, out] and [out, in]; nothing moves. */
static void test_orientation(pw_context *ctx) {
    pw_gguf *as = open_file(ctx, S1, PW_ORIENT_AS_STORED, 0);
    pw_gguf *oi = open_file(ctx, S1, PW_ORIENT_OUT_IN, 0);
    int64_t i = -1;
    CHECK_OK(pw_gguf_find_tensor(ctx, as, "W.q4_K", &i), ctx);
    pw_gguf_tensor_info ia, io;
    CHECK_OK(pw_gguf_tensor_info_get(ctx, as, i, &ia), ctx);
    CHECK_OK(pw_gguf_tensor_info_get(ctx, oi, i, &io), ctx);
    CHECK(ia.gguf_type == 12 && ia.format_known && ia.format == PW_FORMAT_Q4_K, "W.q4_K type");
    CHECK(ia.ne[0] == 768 && ia.ne[1] == 40 && io.ne[0] == 768 && io.ne[1] == 40,
          "record keeps ne order either way");
    CHECK(ia.shape[0] == 768 && ia.shape[1] == 40, "AS_STORED labels [in, out]");
    CHECK(io.shape[0] == 40 && io.shape[1] == 768, "OUT_IN labels [out, in]");
    CHECK(ia.bytes == 17280 && ia.offset == io.offset, "bytes/offset");

    pw_view va, vo;
    CHECK_OK(pw_gguf_tensor_view(ctx, as, i, &va), ctx);
    CHECK_OK(pw_gguf_tensor_view(ctx, oi, i, &vo), ctx);
    CHECK(va.shape[0] == 768 && va.shape[1] == 40 && va.block_axis == 0, "AS_STORED view");
    CHECK(va.strides[0] == 1 && va.strides[1] == 3, "AS_STORED strides [1, bpr]");
    CHECK(vo.shape[0] == 40 && vo.shape[1] == 768 && vo.block_axis == 1, "OUT_IN view");
    CHECK(vo.strides[0] == 3 && vo.strides[1] == 1, "OUT_IN strides [bpr, 1]");
    CHECK(pw_view_order(&vo) == PW_ORDER_ROW_MAJOR, "OUT_IN view is ROW_MAJOR");
    CHECK(va.storage == PW_STORAGE_MAPPED && vo.storage == PW_STORAGE_MAPPED, "mapped");
    CHECK(strcmp(vo.name, "W.q4_K") == 0, "view name");
    CHECK(memcmp(va.data, vo.data, 17280) == 0 && va.data_bytes == vo.data_bytes,
          "identical bytes under both labels");

    /* A weight whose both dims are whole blocks: the heuristic cannot tell, the
     * recorded orientation can. */
    pw_gguf *as2 = open_file(ctx, S2, PW_ORIENT_AS_STORED, 0);
    pw_gguf *oi2 = open_file(ctx, S2, PW_ORIENT_OUT_IN, 0);
    int64_t j = -1;
    CHECK_OK(pw_gguf_find_tensor(ctx, as2, "W.q8_0", &j), ctx);
    pw_view wa, wo;
    CHECK_OK(pw_gguf_tensor_view(ctx, as2, j, &wa), ctx);
    CHECK_OK(pw_gguf_tensor_view(ctx, oi2, j, &wo), ctx);
    CHECK(wa.shape[0] == 1280 && wa.shape[1] == 64 && wa.shape[0] % 32 == 0 &&
              wa.shape[1] % 32 == 0,
          "both dims block-aligned");
    CHECK_OK(pw_require_out_in(ctx, wa.shape[0], wa.shape[1], PW_FORMAT_Q8_0), ctx);
    CHECK_STATUS(pw_gguf_require_out_in(ctx, &wa), PW_ERR_ORIENTATION, ctx);
    CHECK(strstr(pw_context_message(ctx), "PW_ORIENT_OUT_IN") != NULL &&
              strstr(pw_context_message(ctx), "W.q8_0") != NULL,
          "message names the fix and the tensor: %s", pw_context_message(ctx));
    CHECK_OK(pw_gguf_require_out_in(ctx, &wo), ctx);
    /* The matmul entry point reads the recorded orientation the same way. */
    float x[1280], y[64];
    for (int k = 0; k < 1280; ++k) x[k] = (float)(k % 7) - 3.0f;
    CHECK_STATUS(pw_matmul_view(ctx, x, 1, &wa, y), PW_ERR_ORIENTATION, ctx);
    CHECK(strstr(pw_context_message(ctx), "PW_ORIENT_OUT_IN") != NULL,
          "matmul refusal names OUT_IN: %s", pw_context_message(ctx));
    CHECK_OK(pw_matmul_view(ctx, x, 1, &wo, y), ctx);
    CHECK_STATUS(pw_gguf_require_out_in(ctx, &va), PW_ERR_ORIENTATION, ctx);
    CHECK_OK(pw_gguf_require_out_in(ctx, &vo), ctx);
    pw_view vx;
    CHECK_OK(pw_gguf_find_tensor(ctx, oi, "x", &i), ctx);
    CHECK_OK(pw_gguf_tensor_view(ctx, oi, i, &vx), ctx);
    CHECK(vx.rank == 1 && vx.shape[0] == 768, "1-D unchanged");
    CHECK_OK(pw_gguf_require_out_in(ctx, &vx), ctx);
    pw_gguf_close(as2);
    pw_gguf_close(oi2);
    pw_gguf_close(as);
    pw_gguf_close(oi);
}

/* mmap, streaming and a memory image give the same bytes for every tensor. */
static void test_access_paths(pw_context *ctx) {
    size_t size = 0;
    unsigned char *image = pw_test_read_file(pw_test_data_path(S1), &size);
    REQUIRE(image != NULL, "read S1");
    pw_gguf *mm = open_file(ctx, S1, PW_ORIENT_OUT_IN, 0);
    pw_gguf *st = open_file(ctx, S1, PW_ORIENT_OUT_IN, 1);
    pw_gguf *me = NULL;
    pw_gguf_open_options opt;
    pw_gguf_open_options_init(&opt);
    opt.orientation = PW_ORIENT_OUT_IN;
    CHECK_OK(pw_gguf_open_memory(ctx, image, size, &opt, &me), ctx);
    REQUIRE(me != NULL, "open memory");
    for (int64_t i = 0; i < pw_gguf_tensor_count(mm); ++i) {
        pw_gguf_tensor_info info;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, st, i, &info), ctx);
        unsigned char *buf = malloc(info.bytes);
        REQUIRE(buf != NULL, "malloc");
        CHECK_OK(pw_gguf_tensor_read(ctx, st, i, buf, info.bytes), ctx);
        CHECK(memcmp(buf, image + info.offset, info.bytes) == 0, "streamed %s", info.name);
        pw_view vm, ve, vs;
        CHECK_OK(pw_gguf_tensor_view(ctx, mm, i, &vm), ctx);
        CHECK_OK(pw_gguf_tensor_view(ctx, me, i, &ve), ctx);
        CHECK(ve.data == image + info.offset && ve.storage == PW_STORAGE_BORROWED,
              "memory view %s points into the image", info.name);
        CHECK(memcmp(vm.data, buf, info.bytes) == 0, "mapped %s", info.name);
        CHECK_STATUS(pw_gguf_tensor_view(ctx, st, i, &vs), PW_ERR_INVALID_ARGUMENT, ctx);
        CHECK_OK(pw_gguf_tensor_view_over(ctx, st, i, buf, info.bytes, &vs), ctx);
        CHECK(vs.rank == vm.rank && vs.shape[0] == vm.shape[0] && vs.shape[1] == vm.shape[1] &&
                  vs.block_axis == vm.block_axis && vs.strides[0] == vm.strides[0],
              "view_over labels %s like the mapped view", info.name);
        CHECK_STATUS(pw_gguf_tensor_read(ctx, st, i, buf, info.bytes - 1),
                     PW_ERR_INVALID_ARGUMENT, ctx);
        free(buf);
    }
    int64_t idx;
    CHECK_STATUS(pw_gguf_find_tensor(ctx, mm, "W.q4_Z", &idx), PW_ERR_NOT_FOUND, ctx);
    CHECK(strstr(pw_context_message(ctx), "W.q4_Z") != NULL, "names the tensor");
    pw_gguf_tensor_info info;
    CHECK_STATUS(pw_gguf_tensor_info_get(ctx, mm, 86, &info), PW_ERR_INVALID_ARGUMENT, ctx);
    pw_gguf_close(me);
    pw_gguf_close(mm);
    pw_gguf_close(st);
    free(image);
}

/* Decoding W.T through its OUT_IN view reproduces ggml's deq.T bit for bit. */
static void test_decode_matches_ggml(pw_context *ctx) {
    pw_gguf *g = open_file(ctx, S1, PW_ORIENT_OUT_IN, 0);
    int compared = 0;
    for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
        pw_gguf_tensor_info info;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, g, i, &info), ctx);
        if (strncmp(info.name, "W.", 2) != 0) continue;
        char deq_name[64];
        snprintf(deq_name, sizeof deq_name, "deq.%s", info.name + 2);
        int64_t d;
        CHECK_OK(pw_gguf_find_tensor(ctx, g, deq_name, &d), ctx);
        pw_view w, dq;
        CHECK_OK(pw_gguf_tensor_view(ctx, g, i, &w), ctx);
        CHECK_OK(pw_gguf_tensor_view(ctx, g, d, &dq), ctx);
        const size_t n = (size_t)pw_view_elements(&w);
        CHECK(n == 40 * 768 && dq.format == PW_FORMAT_F32 && pw_view_elements(&dq) == (int64_t)n,
              "%s shape", info.name);
        float *out = malloc(n * sizeof *out);
        REQUIRE(out != NULL, "malloc");
        CHECK_OK(pw_view_to_float(ctx, &w, out, n), ctx);
        CHECK(memcmp(out, dq.data, n * sizeof *out) == 0, "%s decodes to ggml's %s bit for bit",
              info.name, deq_name);
        free(out);
        ++compared;
    }
    CHECK(compared == 16, "compared %d weights", compared);
    pw_gguf_close(g);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    test_header(ctx);
    test_metadata(ctx);
    test_orientation(ctx);
    test_access_paths(ctx);
    test_decode_matches_ggml(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
