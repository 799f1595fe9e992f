// pw-test: once
/*
 * Every file in tests/data/gguf-malformed (made by its generate.py) is
 * opened three ways (mmap, streaming, memory image) and must give the status
 * INDEX.txt lists, with a message naming the field and its byte offset; files
 * that open must then load (view + read) every tensor with the listed status.
 * A counting allocator checks that memory stays bounded by the file size
 * whatever the header claims (2^60 tensors must not allocate).
 */
#include "pw_test.h"

#include <stdlib.h>

typedef struct counting {
    uint64_t live, peak;
} counting;

typedef struct block_header {
    uint64_t bytes;
    uint64_t pad[7]; /* keeps the caller's block 64-byte aligned */
} block_header;

static void *count_alloc(void *user, size_t bytes, size_t alignment) {
    counting *c = user;
    if (alignment > 64) return NULL;
    block_header *h = NULL;
    if (posix_memalign((void **)&h, 64, sizeof *h + bytes) != 0) return NULL;
    h->bytes = bytes;
    c->live += bytes;
    if (c->live > c->peak) c->peak = c->live;
    return h + 1;
}

static void count_free(void *user, void *p) {
    if (p == NULL) return;
    counting *c = user;
    block_header *h = (block_header *)p - 1;
    c->live -= h->bytes;
    free(h);
}

/* First non-OK status of loading every tensor (view, read, view_over), walking the metadata. */
static pw_status load_all(pw_context *ctx, const pw_gguf *mapped, const pw_gguf *streamed,
                          const char *file) {
    pw_status first = PW_OK;
    for (int64_t i = 0; i < pw_gguf_kv_count(mapped); ++i) {
        const char *key = NULL;
        pw_gguf_value v;
        CHECK_OK(pw_gguf_kv_get(ctx, mapped, i, &key, NULL, &v), ctx);
        CHECK(key != NULL, "%s: key %lld", file, (long long)i);
    }
    for (int64_t i = 0; i < pw_gguf_tensor_count(mapped); ++i) {
        pw_gguf_tensor_info info;
        CHECK_OK(pw_gguf_tensor_info_get(ctx, mapped, i, &info), ctx);
        pw_view v;
        pw_status st = pw_gguf_tensor_view(ctx, mapped, i, &v);
        if (st == PW_ERR_UNSUPPORTED)
            CHECK(strstr(pw_context_message(ctx), info.name) != NULL &&
                      strstr(pw_context_message(ctx), "type id") != NULL,
                  "%s: refusal names tensor and type id: %s", file, pw_context_message(ctx));
        if (first == PW_OK) first = st;
        unsigned char *buf = malloc(info.bytes + 1);
        REQUIRE(buf != NULL, "malloc");
        st = pw_gguf_tensor_read(ctx, streamed, i, buf, info.bytes + 1);
        if (st == PW_OK) {
            CHECK(v.data == NULL || info.bytes == 0 || memcmp(v.data, buf, info.bytes) == 0,
                  "%s: tensor %s streamed == mapped", file, info.name);
            pw_view over;
            st = pw_gguf_tensor_view_over(ctx, streamed, i, buf, info.bytes + 1, &over);
        }
        if (first == PW_OK) first = st;
        free(buf);
    }
    return first;
}

static void check_file(const char *name, pw_status want_open, pw_status want_load) {
    char rel[256];
    snprintf(rel, sizeof rel, "gguf-malformed/%s", name);
    const char *path = pw_test_data_path(rel);
    size_t size = 0;
    unsigned char *image = pw_test_read_file(path, &size);
    REQUIRE(image != NULL || size == 0, "read %s", path);

    counting c = {0, 0};
    pw_context_options o;
    pw_context_options_init(&o);
    o.allocator.alloc = count_alloc;
    o.allocator.free = count_free;
    o.allocator.user = &c;
    pw_context *ctx = NULL;
    REQUIRE(pw_context_create(&o, &ctx) == PW_OK, "context");

    pw_gguf_open_options stream_opt;
    pw_gguf_open_options_init(&stream_opt);
    stream_opt.no_mmap = 1;
    pw_gguf *mapped = NULL, *streamed = NULL, *mem = NULL;
    const uint64_t base_live = c.live;
    c.peak = c.live;
    pw_status s1 = pw_gguf_open(ctx, path, NULL, &mapped);
    CHECK(s1 == want_open, "%s: open (mmap) gave %s, expected %s: %s", name, pw_status_name(s1),
          pw_status_name(want_open), pw_context_message(ctx));
    if (s1 != PW_OK) {
        const char *msg = pw_context_message(ctx);
        CHECK(strstr(msg, "byte offset") != NULL && strstr(msg, name) != NULL,
              "%s: message names the file and a byte offset: %s", name, msg);
        CHECK(strchr(msg, '\n') == NULL, "%s: one-line message", name);
    }
    pw_status s2 = pw_gguf_open(ctx, path, &stream_opt, &streamed);
    CHECK(s2 == want_open, "%s: open (streaming) gave %s: %s", name, pw_status_name(s2),
          pw_context_message(ctx));
    pw_status s3 = pw_gguf_open_memory(ctx, image, size, NULL, &mem);
    CHECK(s3 == want_open, "%s: open (memory) gave %s: %s", name, pw_status_name(s3),
          pw_context_message(ctx));
    /* Generous but linear: the tables, the pool and the streamed header copy. */
    const uint64_t bound = 256 * 1024 + 64 * (uint64_t)size;
    CHECK(c.peak - base_live <= bound, "%s: opening used %llu bytes for a %zu-byte file", name,
          (unsigned long long)(c.peak - base_live), size);
    if (s1 == PW_OK && s2 == PW_OK) {
        const pw_status l = load_all(ctx, mapped, streamed, name);
        CHECK(l == want_load, "%s: loading gave %s, expected %s: %s", name, pw_status_name(l),
              pw_status_name(want_load), pw_context_message(ctx));
    }
    pw_gguf_close(mapped);
    pw_gguf_close(streamed);
    pw_gguf_close(mem);
    CHECK(c.live == base_live, "%s: %llu bytes leaked", name,
          (unsigned long long)(c.live - base_live));
    pw_context_destroy(ctx);
    free(image);
}

static pw_status status_named(const char *s) {
#define PW__NAME_TO_STATUS(name, value, text)                                               \
    if (strcmp(s, #name) == 0) return name;
    PW_STATUS_LIST(PW__NAME_TO_STATUS)
#undef PW__NAME_TO_STATUS
    return (pw_status)-1;
}

int main(void) {
    size_t size = 0;
    unsigned char *raw = pw_test_read_file(pw_test_data_path("gguf-malformed/INDEX.txt"), &size);
    REQUIRE(raw != NULL, "INDEX.txt");
    char *index = malloc(size + 1); /* the file has no terminating NUL */
    REQUIRE(index != NULL, "malloc");
    memcpy(index, raw, size);
    index[size] = '\0';
    free(raw);
    int files = 0, refused = 0;
    for (char *line = strtok(index, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || line[0] == '\0') continue;
        char name[128], open_st[64], load_st[64];
        REQUIRE(sscanf(line, "%127s %63s %63s", name, open_st, load_st) == 3, "line: %s", line);
        const pw_status o = status_named(open_st), l = status_named(load_st);
        REQUIRE((int)o >= 0 && (int)l >= 0, "statuses in: %s", line);
        check_file(name, o, l);
        ++files;
        refused += o != PW_OK || l != PW_OK;
    }
    CHECK(files >= 30, "only %d malformed files", files);
    printf("%d files, %d refused at open or load\n", files, refused);
    free(index);
    return pw_test_finish();
}
