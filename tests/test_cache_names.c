// pw-test: once
/*
 * Long tensor names in weights-cache files (issue 13: names of 96 bytes or
 * more never hit the cache). GGUF allows names of any length (packwise's own
 * writer keeps to ggml's 63, so the test writes a GGUF with 63-byte names and
 * lengthens them in place: alignment 1 keeps every data offset valid). For
 * names of 63, 95, 96, 200 and 1000 bytes, sharing their first 95 bytes:
 * - pw_gguf_open reads each name whole;
 * - pw_cache_prepack writes each name whole into its index record;
 * - pw_cache_open reads it back whole;
 * - a weight over the tensor's GGUF view, given the cache, keeps the whole
 *   name and is served every form from the file (the entry's bytes pass their
 *   checksum; a lookup goes by the tensor's source identity, which hashes the
 *   whole name, so a name cut short would miss).
 */
#include "pw_test.h"

#include <unistd.h>

enum { OUT = 32, IN = 256, NAMES = 5 };
static const size_t lengths[NAMES] = {63, 95, 96, 200, 1000};

static char gguf_path[512], cache_path[512];

/* Name i: a shared 95-byte stem, then a tail telling the names apart. */
static void make_name(size_t i, char *out) {
    const size_t n = lengths[i];
    for (size_t k = 0; k < n; ++k) out[k] = (char)('a' + (k * 7 + (k >= 95 ? i : 0)) % 26);
    out[n - 1] = (char)('0' + i);
    out[n] = '\0';
}

static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static unsigned char *slurp(const char *path, size_t *n) { return pw_test_read_file(path, n); }

static void spit(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL && fwrite(b, 1, n, f) == n, "cannot write %s", path);
    fclose(f);
}

/* A GGUF of NAMES Q8_0 weights named by make_name: written with 63-byte placeholders
 * ("%062zu" + 'p'), then each placeholder's length prefix and bytes replaced. */
static void write_long_name_gguf(pw_context *ctx) {
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    CHECK_OK(pw_gguf_writer_set_alignment(w, 1), ctx);
    const pw_format_info *fi = pw_format_get(PW_FORMAT_Q8_0);
    const size_t bytes = (size_t)(OUT * IN / fi->block_size * fi->block_bytes);
    float *x = malloc(sizeof(float) * OUT * IN);
    unsigned char *q[NAMES];
    char placeholder[NAMES][64];
    pw_rng r = {42};
    for (size_t i = 0; i < NAMES; ++i) {
        for (int k = 0; k < OUT * IN; ++k) x[k] = (float)pw_rng_gauss(&r);
        q[i] = malloc(bytes);
        CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q8_0, x, (size_t)(OUT * IN / fi->block_size), q[i]), ctx);
        snprintf(placeholder[i], sizeof placeholder[i], "%062zup", i);
        const int64_t ne[2] = {IN, OUT};
        CHECK_OK(pw_gguf_writer_add_tensor(w, placeholder[i], PW_FORMAT_Q8_0, 2, ne, q[i], bytes), ctx);
    }
    CHECK_OK(pw_gguf_writer_write(w, gguf_path), ctx);
    pw_gguf_writer_destroy(w);
    size_t n = 0;
    unsigned char *b = slurp(gguf_path, &n);
    REQUIRE(b != NULL, "cannot read %s", gguf_path);
    size_t extra = 0;
    for (size_t i = 0; i < NAMES; ++i) extra += lengths[i] - 63;
    unsigned char *o = malloc(n + extra);
    REQUIRE(o != NULL, "malloc");
    size_t at = 0, out = 0;
    for (size_t i = 0; i < NAMES; ++i) {
        /* The record: u64 length 63, then the placeholder's bytes. */
        unsigned char *hit = memmem(b + at, n - at, placeholder[i], 63);
        REQUIRE(hit != NULL && hit - b >= 8, "placeholder %zu not found", i);
        const size_t len_at = (size_t)(hit - b) - 8;
        memcpy(o + out, b + at, len_at - at);
        out += len_at - at;
        char name[1001];
        make_name(i, name);
        put64(o + out, lengths[i]);
        memcpy(o + out + 8, name, lengths[i]);
        out += 8 + lengths[i];
        at = len_at + 8 + 63;
    }
    memcpy(o + out, b + at, n - at);
    out += n - at;
    spit(gguf_path, o, out);
    free(o);
    free(b);
    for (size_t i = 0; i < NAMES; ++i) free(q[i]);
    free(x);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    snprintf(gguf_path, sizeof gguf_path, "%s/test_cache_names_%d.gguf", PW_TEST_BINARY_DIR, (int)getpid());
    snprintf(cache_path, sizeof cache_path, "%s/test_cache_names_%d.pwc", PW_TEST_BINARY_DIR, (int)getpid());
    write_long_name_gguf(ctx);

    pw_gguf_open_options oo;
    pw_gguf_open_options_init(&oo);
    oo.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, gguf_path, &oo, &g), ctx);
    REQUIRE(g != NULL, "the lengthened GGUF must open");
    char name[1001];
    for (size_t i = 0; i < NAMES; ++i) {
        make_name(i, name);
        int64_t t = -1;
        CHECK_OK(pw_gguf_find_tensor(ctx, g, name, &t), ctx);
        pw_gguf_tensor_info info;
        if (t >= 0) {
            CHECK_OK(pw_gguf_tensor_info_get(ctx, g, t, &info), ctx);
            CHECK(strlen(info.name) == lengths[i], "GGUF name %zu read as %zu bytes", lengths[i], strlen(info.name));
        }
    }
    pw_cache_prepack_options po;
    pw_cache_prepack_options_init(&po);
    po.policy = PW_MEMORY_FASTEST;
    CHECK_OK(pw_cache_prepack(ctx, gguf_path, cache_path, &po), ctx);
    pw_cache *c = NULL;
    CHECK_OK(pw_cache_open(ctx, cache_path, &c), ctx);
    REQUIRE(c != NULL, "the cache must open");
    const int64_t n = pw_cache_entry_count(c);
    CHECK(n >= NAMES, "%lld entries for %d tensors", (long long)n, NAMES);
    for (size_t i = 0; i < NAMES; ++i) {
        make_name(i, name);
        int found = 0;
        for (int64_t k = 0; k < n; ++k) {
            pw_cache_entry_info e;
            CHECK_OK(pw_cache_entry_get(ctx, c, k, &e), ctx);
            CHECK(!e.refused, "entry %lld refused: %s", (long long)k, e.reason);
            found += strcmp(e.name, name) == 0;
        }
        CHECK(found >= 1, "no entry holds the %zu-byte name whole", lengths[i]);
        int64_t t = -1;
        CHECK_OK(pw_gguf_find_tensor(ctx, g, name, &t), ctx);
        if (t < 0) continue;
        pw_view v;
        CHECK_OK(pw_gguf_tensor_view(ctx, g, t, &v), ctx);
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.cache = c;
        wo.policy = PW_MEMORY_FASTEST;
        pw_weight *w = NULL;
        CHECK_OK(pw_weight_create(ctx, &v, &wo, &w), ctx);
        if (w == NULL) continue;
        CHECK_OK(pw_weight_prepare(ctx, w), ctx);
        const pw_weight_info info = pw_test_weight_info(w);
        CHECK(strcmp(info.name, name) == 0, "the weight keeps %zu of the name's %zu bytes",
              strlen(info.name), lengths[i]);
        CHECK(info.forms >= 1 && info.from_cache == info.forms,
              "%zu-byte name: %d of %d forms served from the cache file", lengths[i],
              (int)info.from_cache, (int)info.forms);
        pw_weight_destroy(w);
    }
    pw_gguf_close(g);
    pw_cache_close(c);
    unlink(gguf_path);
    unlink(cache_path);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
