/*
 * libFuzzer target for the GGUF reader: parse the input as a GGUF image and
 * touch everything a caller could: every key and value (nested arrays and
 * strings included), every tensor record, view, read, decode, the
 * orientation check, both orientations; then re-write what was read and
 * check that the writer's file reads back the same (a property, not only
 * "no crash"). Also built into a plain replay driver (replay.c) so the corpus
 * and every input that ever crashed replay as an ordinary ctest test.
 */
#include "fuzz_input.h"
#include "packwise.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding that is not a crash: stop so libFuzzer records the input. */

/* Read a fixed-size value with its own getter (and check another getter refuses it). */
static uint64_t read_fixed(pw_context *ctx, const pw_gguf_value *v) {
    uint8_t u8;
    int8_t i8;
    uint16_t u16;
    int16_t i16;
    uint32_t u32;
    int32_t i32;
    uint64_t u64 = 0;
    int64_t i64;
    float f32;
    double f64;
    int b;
    switch (v->type) {
    case PW_GGUF_TYPE_UINT8: PROPERTY(pw_gguf_value_u8(ctx, v, &u8) == PW_OK); return u8;
    case PW_GGUF_TYPE_INT8: PROPERTY(pw_gguf_value_i8(ctx, v, &i8) == PW_OK); return (uint64_t)i8;
    case PW_GGUF_TYPE_UINT16: PROPERTY(pw_gguf_value_u16(ctx, v, &u16) == PW_OK); return u16;
    case PW_GGUF_TYPE_INT16:
        PROPERTY(pw_gguf_value_i16(ctx, v, &i16) == PW_OK);
        return (uint64_t)i16;
    case PW_GGUF_TYPE_UINT32: PROPERTY(pw_gguf_value_u32(ctx, v, &u32) == PW_OK); return u32;
    case PW_GGUF_TYPE_INT32:
        PROPERTY(pw_gguf_value_i32(ctx, v, &i32) == PW_OK);
        return (uint64_t)i32;
    case PW_GGUF_TYPE_UINT64: PROPERTY(pw_gguf_value_u64(ctx, v, &u64) == PW_OK); return u64;
    case PW_GGUF_TYPE_INT64:
        PROPERTY(pw_gguf_value_i64(ctx, v, &i64) == PW_OK);
        return (uint64_t)i64;
    case PW_GGUF_TYPE_FLOAT32:
        PROPERTY(pw_gguf_value_f32(ctx, v, &f32) == PW_OK);
        memcpy(&u32, &f32, sizeof u32);
        return u32;
    case PW_GGUF_TYPE_FLOAT64:
        PROPERTY(pw_gguf_value_f64(ctx, v, &f64) == PW_OK);
        memcpy(&u64, &f64, sizeof u64);
        return u64;
    case PW_GGUF_TYPE_BOOL:
        PROPERTY(pw_gguf_value_bool(ctx, v, &b) == PW_OK && (b == 0 || b == 1));
        PROPERTY(pw_gguf_value_u8(ctx, v, &u8) == PW_ERR_INVALID_ARGUMENT);
        return (uint64_t)b;
    default: PROPERTY(0); return 0;
    }
}

static uint64_t walk_value(pw_context *ctx, const pw_gguf_value *v) {
    uint64_t h = (uint64_t)v->type * 31u + v->count;
    const char *s = NULL;
    uint64_t len = 0;
    switch (v->type) {
    case PW_GGUF_TYPE_STRING:
        PROPERTY(pw_gguf_value_string(ctx, v, &s, &len) == PW_OK && len == v->count);
        PROPERTY(s[len] == '\0');
        for (uint64_t i = 0; i < len; ++i) h = h * 131u + (uint8_t)s[i];
        break;
    case PW_GGUF_TYPE_ARRAY: {
        const void *raw = NULL;
        const int fixed = pw_gguf_type_size(v->array_type) != 0;
        PROPERTY((pw_gguf_value_array_data(ctx, v, &raw) == PW_OK) == fixed);
        for (uint64_t i = 0; i < v->count; ++i) {
            pw_gguf_value e;
            PROPERTY(pw_gguf_value_element(ctx, v, i, &e) == PW_OK && e.type == v->array_type);
            h += walk_value(ctx, &e);
        }
        pw_gguf_value past;
        PROPERTY(pw_gguf_value_element(ctx, v, v->count, &past) != PW_OK);
        break;
    }
    default:
        h += read_fixed(ctx, v);
        break;
    }
    return h;
}

/* Decode at most this many elements per tensor, to keep runs fast. */
#define MAX_DECODE 65536

static void touch_tensors(pw_context *ctx, const pw_gguf *g) {
    for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
        pw_gguf_tensor_info info;
        PROPERTY(pw_gguf_tensor_info_get(ctx, g, i, &info) == PW_OK);
        int64_t found = -1;
        PROPERTY(pw_gguf_find_tensor(ctx, g, info.name, &found) == PW_OK && found == i);
        PROPERTY(info.offset + info.bytes <= pw_gguf_file_size(g));
        pw_view v;
        if (pw_gguf_tensor_view(ctx, g, i, &v) != PW_OK) continue;
        PROPERTY(v.data_bytes == info.bytes && pw_view_bytes(&v) == info.bytes);
        (void)pw_gguf_require_out_in(ctx, &v);
        const int64_t n = pw_view_elements(&v);
        if (n <= MAX_DECODE) {
            float *out = malloc((size_t)n * sizeof *out);
            if (out != NULL) PROPERTY(pw_view_to_float(ctx, &v, out, (size_t)n) == PW_OK);
            free(out);
        }
        uint8_t *copy = malloc(info.bytes ? info.bytes : 1);
        if (copy == NULL) continue;
        PROPERTY(pw_gguf_tensor_read(ctx, g, i, copy, info.bytes) == PW_OK);
        PROPERTY(memcmp(copy, v.data, info.bytes) == 0);
        free(copy);
    }
}

/* Re-write what was read; the result must open and say the same things. */
static void rewrite(pw_context *ctx, const pw_gguf *g, const uint8_t *data, size_t size) {
    pw_gguf_writer *w = NULL;
    if (pw_gguf_writer_create(ctx, &w) != PW_OK) return;
    int ok = 1;
    for (int64_t i = 0; i < pw_gguf_kv_count(g) && ok; ++i) {
        const char *key;
        pw_gguf_value v;
        PROPERTY(pw_gguf_kv_get(ctx, g, i, &key, NULL, &v) == PW_OK);
        PROPERTY(pw_gguf_writer_set_value(w, key, &v) == PW_OK);
    }
    for (int64_t i = 0; i < pw_gguf_tensor_count(g) && ok; ++i) {
        pw_gguf_tensor_info t;
        PROPERTY(pw_gguf_tensor_info_get(ctx, g, i, &t) == PW_OK);
        /* the writer refuses names ggml cannot read (64 bytes or more) */
        ok = pw_gguf_writer_add_tensor_raw(w, t.name, t.gguf_type, t.n_dims, t.ne,
                                           data + t.offset, t.bytes) == PW_OK;
        if (!ok) PROPERTY(strlen(t.name) > 63);
    }
    uint64_t out_size = 0;
    if (ok) PROPERTY(pw_gguf_writer_file_size(w, &out_size) == PW_OK);
    if (ok && out_size <= 4 * (uint64_t)size + (1u << 20)) {
        uint8_t *image = malloc(out_size);
        pw_gguf *g2 = NULL;
        if (image != NULL) {
            PROPERTY(pw_gguf_writer_write_memory(w, image, out_size) == PW_OK);
            PROPERTY(pw_gguf_open_memory(ctx, image, out_size, NULL, &g2) == PW_OK);
            PROPERTY(pw_gguf_kv_count(g2) == pw_gguf_kv_count(g));
            PROPERTY(pw_gguf_tensor_count(g2) == pw_gguf_tensor_count(g));
            PROPERTY(pw_gguf_alignment(g2) == pw_gguf_alignment(g));
            for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
                pw_gguf_tensor_info a, b;
                PROPERTY(pw_gguf_tensor_info_get(ctx, g, i, &a) == PW_OK);
                PROPERTY(pw_gguf_tensor_info_get(ctx, g2, i, &b) == PW_OK);
                PROPERTY(strcmp(a.name, b.name) == 0 && a.bytes == b.bytes &&
                         memcmp(data + a.offset, image + b.offset, a.bytes) == 0);
            }
            pw_gguf_close(g2);
        }
        free(image);
    }
    pw_gguf_writer_destroy(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static pw_context *ctx = NULL;
    if (ctx == NULL) {
        pw_context_options o;
        pw_context_options_init(&o);
        o.threads = 1;
        o.ignore_env = 1;
        if (pw_context_create(&o, &ctx) != PW_OK) abort();
    }
    pw_gguf_open_options opt;
    pw_gguf_open_options_init(&opt);
    opt.orientation = size % 2 ? PW_ORIENT_OUT_IN : PW_ORIENT_AS_STORED;
    pw_gguf *g = NULL;
    if (pw_gguf_open_memory(ctx, data, size, &opt, &g) != PW_OK) {
        PROPERTY(g == NULL && pw_context_message(ctx)[0] != '\0');
        return 0;
    }
    uint64_t h = 0;
    for (int64_t i = 0; i < pw_gguf_kv_count(g); ++i) {
        const char *key;
        uint64_t key_len;
        pw_gguf_value v;
        PROPERTY(pw_gguf_kv_get(ctx, g, i, &key, &key_len, &v) == PW_OK);
        PROPERTY(strlen(key) == key_len);
        int64_t found = -1;
        PROPERTY(pw_gguf_find_key(ctx, g, key, &found) == PW_OK && found == i);
        h += walk_value(ctx, &v);
    }
    touch_tensors(ctx, g);
    rewrite(ctx, g, data, size);
    pw_gguf_close(g);
    return (int)(h & 0);
}
