/*
 * Decode against ggml itself. The fixtures in tests/data/ggml were written by
 * ggml (see MANIFEST.txt there): W.<type> is a weight quantized by
 * ggml_quantize_chunk without an importance matrix, deq.<type> is ggml's own
 * dequantization of it. pw_format_decode must reproduce deq.<type> bit for
 * bit, for every type; on a mismatch the test prints the first differing
 * element, both values and the largest ULP distance.
 *
 * It also quantizes W.f32 (fixture S1) with packwise's reference quantizers
 * and compares the bytes with W.<type>: packwise writes what ggml writes.
 *
 * Runs under every PACKWISE_ISA level, so an ISA-specific decoder added
 * behind pw_format_decode would be held to the same bits.
 */
#include "pw_test.h"

#include <math.h>

static const char *const k_types[] = {"f32",  "f16",  "bf16", "q4_0", "q4_1", "q5_0",
                                      "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K",
                                      "q6_K", "iq4_nl", "tq1_0", "tq2_0"};

/* Read tensor `name` of the file into a new buffer; fills *info. */
static unsigned char *read_tensor(pw_context *ctx, pw_gguf *g, const char *name,
                                  pw_gguf_tensor_info *info) {
    int64_t index = -1;
    pw_status st = pw_gguf_find_tensor(ctx, g, name, &index);
    if (st != PW_OK) return NULL;
    CHECK_OK(pw_gguf_tensor_info_get(ctx, g, index, info), ctx);
    unsigned char *data = malloc(info->bytes ? info->bytes : 1);
    REQUIRE(data != NULL, "out of memory for %s", name);
    CHECK_OK(pw_gguf_tensor_read(ctx, g, index, data, info->bytes), ctx);
    return data;
}

/* Distance in units in the last place between two floats of the same sign
 * class (ordered as sign-magnitude integers). */
static uint64_t ulp_distance(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t ka = ia < 0 ? (int64_t)INT32_MIN - ia : ia;
    int64_t kb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return (uint64_t)(ka > kb ? ka - kb : kb - ka);
}

/* Decode W.<type> and compare with deq.<type>; returns 1 when bit-exact. */
static int check_decode(pw_context *ctx, pw_gguf *g, const char *file, const char *type) {
    char wname[64], dname[64];
    snprintf(wname, sizeof wname, "W.%s", type);
    snprintf(dname, sizeof dname, "deq.%s", type);
    pw_gguf_tensor_info wi, di;
    unsigned char *w = read_tensor(ctx, g, wname, &wi);
    unsigned char *deq = read_tensor(ctx, g, dname, &di);
    REQUIRE(w != NULL && deq != NULL, "%s: %s or %s missing", file, wname, dname);
    CHECK(wi.format_known, "%s: %s has GGUF type %u, which packwise does not know", file, wname,
          wi.gguf_type);
    const pw_format_info *fi = pw_format_get(wi.format);
    REQUIRE(fi != NULL, "%s: no format for %s", file, wname);
    const int64_t elements = wi.ne[0] * wi.ne[1];
    const size_t blocks = (size_t)(elements / fi->block_size);
    CHECK(di.bytes == (uint64_t)elements * sizeof(float), "%s: %s has %llu bytes, expected %lld",
          file, dname, (unsigned long long)di.bytes, (long long)(elements * 4));
    CHECK(wi.bytes == blocks * (uint64_t)fi->block_bytes, "%s: %s size", file, wname);

    float *ours = malloc((size_t)elements * sizeof(float));
    REQUIRE(ours != NULL, "out of memory");
    CHECK_OK(pw_format_decode(ctx, wi.format, w, blocks, ours), ctx);

    const float *ref = (const float *)deq;
    int64_t first = -1, mismatches = 0;
    uint64_t max_ulp = 0;
    for (int64_t i = 0; i < elements; ++i) {
        if (memcmp(&ours[i], &ref[i], sizeof(float)) != 0) {
            if (first < 0) first = i;
            ++mismatches;
            const uint64_t u = ulp_distance(ours[i], ref[i]);
            if (u > max_ulp) max_ulp = u;
        }
    }
    CHECK(mismatches == 0,
          "%s %s: %lld of %lld decoded values differ from ggml; first at element %lld "
          "(row %lld, column %lld, block %lld): packwise %.9g, ggml %.9g; max %llu ULP",
          file, fi->name, (long long)mismatches, (long long)elements, (long long)first,
          (long long)(first / wi.ne[0]), (long long)(first % wi.ne[0]),
          (long long)(first / fi->block_size), first >= 0 ? ours[first] : 0.0,
          first >= 0 ? ref[first] : 0.0, (unsigned long long)max_ulp);
    free(ours);
    free(w);
    free(deq);
    return mismatches == 0;
}

/* Quantize W.f32 with packwise and compare the bytes with W.<type>. Returns
 * the number of blocks that differ. */
static int64_t check_quantize(pw_context *ctx, pw_gguf *g, const char *file, const char *type) {
    char wname[64];
    snprintf(wname, sizeof wname, "W.%s", type);
    pw_gguf_tensor_info fi32, wi;
    unsigned char *src = read_tensor(ctx, g, "W.f32", &fi32);
    unsigned char *w = read_tensor(ctx, g, wname, &wi);
    REQUIRE(src != NULL && w != NULL, "%s: W.f32 or %s missing", file, wname);
    const pw_format_info *fi = pw_format_get(wi.format);
    REQUIRE(fi != NULL, "%s: no format for %s", file, wname);
    const size_t blocks = (size_t)(wi.ne[0] * wi.ne[1] / fi->block_size);
    unsigned char *ours = malloc(wi.bytes);
    REQUIRE(ours != NULL, "out of memory");
    CHECK_OK(pw_format_quantize(ctx, wi.format, (const float *)src, blocks, ours), ctx);
    int64_t differing = 0, first = -1;
    for (size_t b = 0; b < blocks; ++b) {
        if (memcmp(ours + b * fi->block_bytes, w + b * fi->block_bytes, (size_t)fi->block_bytes)) {
            if (first < 0) first = (int64_t)b;
            ++differing;
        }
    }
    CHECK(differing == 0, "%s %s: %lld of %zu blocks quantized by packwise differ from ggml's "
          "(first: block %lld)", file, fi->name, (long long)differing, blocks, (long long)first);
    free(ours);
    free(w);
    free(src);
    return differing;
}

int main(void) {
    pw_context *ctx = pw_test_context();

    const char *s1 = "ggml/fixture_s1_in768_out40.gguf";
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, pw_test_data_path(s1), NULL, &g), ctx);
    REQUIRE(g != NULL, "cannot open %s", s1);
    printf("%-8s %-12s %-14s\n", "type", "decode", "quantize");
    for (size_t t = 0; t < sizeof k_types / sizeof k_types[0]; ++t) {
        const int exact = check_decode(ctx, g, s1, k_types[t]);
        const int64_t qdiff = check_quantize(ctx, g, s1, k_types[t]);
        printf("%-8s %-12s %s\n", k_types[t], exact ? "bit-exact" : "MISMATCH",
               qdiff == 0 ? "same bytes" : "DIFFERENT");
    }
    pw_gguf_close(g);

    /* The second file has a 128-byte alignment and rows of five super-blocks. */
    const char *s2 = "ggml/fixture_s2_in1280_out64_align128.gguf";
    g = NULL;
    CHECK_OK(pw_gguf_open(ctx, pw_test_data_path(s2), NULL, &g), ctx);
    REQUIRE(g != NULL, "cannot open %s", s2);
    const char *s2_types[] = {"q4_K", "q6_K"};
    for (int t = 0; t < 2; ++t) {
        const int exact = check_decode(ctx, g, s2, s2_types[t]);
        printf("%-8s %-12s (S2: no W.f32 in this file)\n", s2_types[t],
               exact ? "bit-exact" : "MISMATCH");
    }
    pw_gguf_close(g);

    pw_context_destroy(ctx);
    return pw_test_finish();
}
