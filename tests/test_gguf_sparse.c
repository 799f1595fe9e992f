// pw-test: once
/*
 * 64-bit offsets end to end: the writer lays out a sparse GGUF file of more
 * than 4 GiB (a zero tensor of 4 GiB + 64 bytes written as a hole, then a
 * Q8_0 weight three blocks wide whose data starts past 2^32), and the last
 * tensor reads back exactly through mmap and through streaming pread. The
 * file lives in the test's binary directory and is deleted afterwards.
 */
#include "pw_test.h"

#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    pw_context *ctx = pw_test_context();
    char path[512];
    snprintf(path, sizeof path, "%s/gguf_sparse_over_4g.gguf", PW_TEST_BINARY_DIR);

    const int64_t hole_ne[1] = {(INT64_C(1) << 30) + 16}; /* f32: 4 GiB + 64 bytes */
    const int64_t last_ne[2] = {96, 5};                   /* q8_0: 3 blocks per row, 5 rows */
    const uint64_t last_bytes = 3 * 5 * 34;
    uint8_t last[3 * 5 * 34];
    pw_rng rng = {42};
    for (int b = 0; b < 15; ++b) {
        float v[32];
        for (int i = 0; i < 32; ++i) v[i] = (float)pw_rng_gauss(&rng);
        CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q8_0, v, 1, last + 34 * b), ctx);
    }

    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    CHECK_OK(pw_gguf_writer_set_string(w, "general.architecture", "sparse", 6), ctx);
    CHECK_OK(pw_gguf_writer_add_tensor(w, "hole", PW_FORMAT_F32, 1, hole_ne, NULL,
                                       (uint64_t)hole_ne[0] * 4),
             ctx);
    CHECK_OK(pw_gguf_writer_add_tensor(w, "last", PW_FORMAT_Q8_0, 2, last_ne, last, last_bytes),
             ctx);
    uint64_t size = 0;
    CHECK_OK(pw_gguf_writer_file_size(w, &size), ctx);
    CHECK(size > (UINT64_C(1) << 32), "file of %llu bytes is over 4 GiB", (unsigned long long)size);
    CHECK_OK(pw_gguf_writer_write(w, path), ctx);
    pw_gguf_writer_destroy(w);

    struct stat sb;
    REQUIRE(stat(path, &sb) == 0, "stat %s", path);
    CHECK((uint64_t)sb.st_size == size, "size on disk");
    printf("sparse file: %llu bytes, %llu bytes allocated\n", (unsigned long long)sb.st_size,
           (unsigned long long)sb.st_blocks * 512);

    for (int streaming = 0; streaming < 2; ++streaming) {
        pw_gguf_open_options o;
        pw_gguf_open_options_init(&o);
        o.orientation = PW_ORIENT_OUT_IN;
        o.no_mmap = streaming;
        pw_gguf *g = NULL;
        CHECK_OK(pw_gguf_open(ctx, path, &o, &g), ctx);
        if (g == NULL) continue;
        CHECK(pw_gguf_file_size(g) == size, "file size");
        int64_t i = -1;
        CHECK_OK(pw_gguf_find_tensor(ctx, g, "last", &i), ctx);
        pw_gguf_tensor_info info;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, g, i, &info), ctx);
        CHECK(info.offset > (UINT64_C(1) << 32) && info.bytes == last_bytes,
              "last tensor at byte %llu, past 4 GiB", (unsigned long long)info.offset);
        uint8_t got[sizeof last];
        CHECK_OK(pw_gguf_tensor_read(ctx, g, i, got, sizeof got), ctx);
        CHECK(memcmp(got, last, sizeof last) == 0, "%s read of the last tensor",
              streaming ? "streaming" : "mmap handle");
        pw_view v;
        if (streaming) {
            CHECK_OK(pw_gguf_tensor_view_over(ctx, g, i, got, sizeof got, &v), ctx);
        } else {
            CHECK_OK(pw_gguf_tensor_view(ctx, g, i, &v), ctx);
            CHECK(v.storage == PW_STORAGE_MAPPED && memcmp(v.data, last, sizeof last) == 0,
                  "mapped view of the last tensor");
            /* the hole reads as zeros through the mapping, at its far end too */
            int64_t h = -1;
            pw_view hv;
            CHECK_OK(pw_gguf_find_tensor(ctx, g, "hole", &h), ctx);
            CHECK_OK(pw_gguf_tensor_view(ctx, g, h, &hv), ctx);
            const int64_t idx[1] = {hole_ne[0] - 1};
            float z = 1.0f;
            CHECK_OK(pw_view_get(ctx, &hv, idx, &z), ctx);
            CHECK(z == 0.0f, "hole reads as zero");
        }
        CHECK(v.shape[0] == 5 && v.shape[1] == 96, "last labelled [out, in]");
        float dec[5 * 96], want[5 * 96];
        CHECK_OK(pw_view_to_float(ctx, &v, dec, 5 * 96), ctx);
        CHECK_OK(pw_format_decode(ctx, PW_FORMAT_Q8_0, last, 15, want), ctx);
        CHECK(memcmp(dec, want, sizeof dec) == 0, "decoded last tensor");
        pw_gguf_close(g);
    }
    CHECK(unlink(path) == 0, "delete %s", path);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
