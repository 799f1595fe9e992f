/*
 * GGUF v3 writer. The metadata section is encoded as it is set (so the file
 * keeps the caller's key order, which is what makes a byte-exact rewrite of a
 * ggml file possible); tensor records and data are laid out at write time the
 * way ggml's own writer does it:
 *
 *   header | KVs | tensor records | zeros to `alignment` |
 *   tensor 0 data | zeros to `alignment` | tensor 1 data | zeros ... (the last one too)
 *
 * A tensor added with NULL data is zeros, written as a hole (sparse file).
 */
#include "gguf/gguf_writer_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char ALIGNMENT_KEY[] = "general.alignment";

pw_status pw__gguf_dbuf_reserve(pw_gguf_writer *w, pw__gguf_dbuf *b, uint64_t extra) {
    uint64_t need;
    PW__FAIL_IF(pw__add_overflow_u64(b->len, extra, &need) || need > SIZE_MAX / 2, w->ctx,
                PW_ERR_OVERFLOW, "GGUF writer: metadata larger than memory");
    if (need <= b->cap) return PW_OK;
    uint64_t cap = b->cap ? b->cap : 1024;
    while (cap < need) cap *= 2;
    uint8_t *p = pw__gguf_alloc(&w->alloc, (size_t)cap);
    PW__FAIL_IF(p == NULL, w->ctx, PW_ERR_OUT_OF_MEMORY,
                "GGUF writer: cannot allocate %" PRIu64 " bytes of metadata", cap);
    if (b->len) memcpy(p, b->p, (size_t)b->len);
    pw__gguf_free(&w->alloc, b->p);
    b->p = p;
    b->cap = cap;
    return PW_OK;
}

pw_status pw__gguf_dbuf_put(pw_gguf_writer *w, pw__gguf_dbuf *b, const void *src, uint64_t n) {
    PW__TRY(pw__gguf_dbuf_reserve(w, b, n));
    if (n) memcpy(b->p + b->len, src, (size_t)n);
    b->len += n;
    return PW_OK;
}

void pw__gguf_le_bytes(uint8_t *dst, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) dst[i] = (uint8_t)(v >> (8 * i));
}

pw_status pw__gguf_dbuf_put_le(pw_gguf_writer *w, pw__gguf_dbuf *b, uint64_t v, size_t n) {
    uint8_t tmp[8];
    /* n is a fixed type size (1..8); saying so keeps gcc 12 for aarch64 from
     * warning (-Wstringop-overflow) about a vectorized loop past tmp. */
    if (n > sizeof tmp) n = sizeof tmp;
    pw__gguf_le_bytes(tmp, v, n);
    return pw__gguf_dbuf_put(w, b, tmp, n);
}

static const char *name_of(const pw_gguf_writer *w, pw__gguf_set_kind kind, int64_t i,
                           uint64_t *len) {
    if (kind == PW__GGUF_TENSOR_SET) {
        *len = strlen(w->tensors[i].name);
        return w->tensors[i].name;
    }
    *len = pw__le64(w->keys.p + 16 * i + 8);
    return (const char *)w->kv.p + pw__le64(w->keys.p + 16 * i);
}

static pw__gguf_nameset *set_of(pw_gguf_writer *w, pw__gguf_set_kind kind) {
    return kind == PW__GGUF_KEY_SET ? &w->key_set : &w->tensor_set;
}

int64_t pw__gguf_nameset_find(const pw_gguf_writer *w, pw__gguf_set_kind kind, const char *s,
                              uint64_t len) {
    const pw__gguf_nameset *set = kind == PW__GGUF_KEY_SET ? &w->key_set : &w->tensor_set;
    if (set->slots == NULL) return -1;
    for (uint64_t h = pw__gguf_hash(s, len) & set->mask;; h = (h + 1) & set->mask) {
        const int64_t slot = set->slots[h];
        if (slot == 0) return -1;
        uint64_t n;
        const char *name = name_of(w, kind, slot - 1, &n);
        if (n == len && memcmp(name, s, (size_t)len) == 0) return slot - 1;
    }
}

static void set_insert(const pw_gguf_writer *w, pw__gguf_set_kind kind, pw__gguf_nameset *set,
                       int64_t i) {
    uint64_t len;
    const char *name = name_of(w, kind, i, &len);
    uint64_t h = pw__gguf_hash(name, len) & set->mask;
    while (set->slots[h] != 0) h = (h + 1) & set->mask;
    set->slots[h] = i + 1;
    ++set->count;
}

pw_status pw__gguf_nameset_add(pw_gguf_writer *w, pw__gguf_set_kind kind, int64_t i) {
    pw__gguf_nameset *set = set_of(w, kind);
    if ((uint64_t)(set->count + 1) * 2 > set->mask) { /* keep the load under one half */
        const uint64_t cap = set->mask ? (set->mask + 1) * 2 : 64;
        PW__FAIL_IF(cap > SIZE_MAX / sizeof(int64_t), w->ctx, PW_ERR_OVERFLOW,
                    "GGUF writer: too many names");
        int64_t *slots = pw__gguf_alloc(&w->alloc, (size_t)cap * sizeof *slots);
        PW__FAIL_IF(slots == NULL, w->ctx, PW_ERR_OUT_OF_MEMORY, "GGUF writer: out of memory");
        memset(slots, 0, (size_t)cap * sizeof *slots);
        pw__gguf_nameset grown = {slots, cap - 1, 0};
        for (uint64_t k = 0; set->slots && k <= set->mask; ++k)
            if (set->slots[k]) set_insert(w, kind, &grown, set->slots[k] - 1);
        pw__gguf_free(&w->alloc, set->slots);
        *set = grown;
    }
    set_insert(w, kind, set, i);
    return PW_OK;
}

pw_status pw_gguf_writer_create(pw_context *ctx, pw_gguf_writer **out) {
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_writer_create: out is NULL");
    pw_allocator a = pw__gguf_allocator(ctx);
    pw_gguf_writer *w = pw__gguf_alloc(&a, sizeof *w);
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_gguf_writer_create: out of memory");
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->alloc = a;
    w->alignment = PW__GGUF_DEFAULT_ALIGNMENT;
    w->alignment_at = -1;
    *out = w;
    return PW_OK;
}

void pw_gguf_writer_destroy(pw_gguf_writer *w) {
    if (w == NULL) return;
    pw__gguf_free(&w->alloc, w->kv.p);
    pw__gguf_free(&w->alloc, w->keys.p);
    pw__gguf_free(&w->alloc, w->key_set.slots);
    pw__gguf_free(&w->alloc, w->tensor_set.slots);
    pw__gguf_free(&w->alloc, w->tensors);
    pw_allocator a = w->alloc;
    pw__gguf_free(&a, w);
}

/* A new top-level key: valid, not set before, no array open. */
static pw_status check_key(pw_gguf_writer *w, const char *key) {
    PW__FAIL_IF(w->depth != 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: cannot set key '%.200s' while an array is open (end it first)",
                key ? key : "(null)");
    PW__FAIL_IF(key == NULL, w->ctx, PW_ERR_INVALID_ARGUMENT, "GGUF writer: key is NULL");
    const uint64_t len = strlen(key);
    PW__FAIL_IF(len == 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: a key must not be empty (ggml cannot read it)");
    PW__FAIL_IF(!pw__utf8_valid((const uint8_t *)key, len), w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: key '%.200s' is not valid UTF-8", key);
    PW__FAIL_IF(pw__gguf_nameset_find(w, PW__GGUF_KEY_SET, key, len) >= 0, w->ctx,
                PW_ERR_DUPLICATE, "GGUF writer: key '%.200s' is already set", key);
    return PW_OK;
}

/* Append key + type; the value follows. */
static pw_status begin_kv(pw_gguf_writer *w, const char *key, pw_gguf_type type) {
    PW__TRY(check_key(w, key));
    const uint64_t len = strlen(key);
    PW__TRY(pw__gguf_dbuf_put_le(w, &w->kv, len, 8));
    const uint64_t key_at = w->kv.len;
    PW__TRY(pw__gguf_dbuf_put(w, &w->kv, key, len));
    PW__TRY(pw__gguf_dbuf_put_le(w, &w->kv, (uint64_t)type, 4));
    PW__TRY(pw__gguf_dbuf_put_le(w, &w->keys, key_at, 8));
    PW__TRY(pw__gguf_dbuf_put_le(w, &w->keys, len, 8));
    PW__TRY(pw__gguf_nameset_add(w, PW__GGUF_KEY_SET, w->n_kv));
    ++w->n_kv;
    return PW_OK;
}

/* Undo a partly written pair (a failed setter leaves nothing behind). */
typedef struct mark {
    uint64_t kv_len, keys_len;
    int64_t n_kv;
    int depth;
} mark;

static mark mark_of(const pw_gguf_writer *w) {
    mark m = {w->kv.len, w->keys.len, w->n_kv, w->depth};
    return m;
}

static pw_status rollback(pw_gguf_writer *w, mark m, pw_status st) {
    w->kv.len = m.kv_len;
    w->keys.len = m.keys_len;
    w->depth = m.depth;
    if (w->n_kv != m.n_kv) {
        /* The failed pair's key may be in the set: rebuild it from the keys
         * that remain (an error path; it cannot grow, so it cannot fail). */
        w->n_kv = m.n_kv;
        if (w->key_set.slots) memset(w->key_set.slots, 0, (w->key_set.mask + 1) * sizeof(int64_t));
        w->key_set.count = 0;
        for (int64_t i = 0; i < w->n_kv; ++i) set_insert(w, PW__GGUF_KEY_SET, &w->key_set, i);
    }
    return st;
}

/* Every scalar goes through here, so general.alignment is always honoured. */
static pw_status set_fixed(pw_gguf_writer *w, const char *key, pw_gguf_type type, uint64_t bits) {
    const bool is_alignment = key != NULL && strcmp(key, ALIGNMENT_KEY) == 0;
    if (is_alignment) {
        PW__FAIL_IF(type != PW_GGUF_TYPE_UINT32, w->ctx, PW_ERR_INVALID_ARGUMENT,
                    "GGUF writer: %s must be uint32, not %s", ALIGNMENT_KEY,
                    pw_gguf_type_name(type));
        PW__FAIL_IF(bits == 0 || (bits & (bits - 1)) != 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                    "GGUF writer: alignment %" PRIu64 " is not a power of two", bits);
    }
    const mark m = mark_of(w);
    pw_status st = begin_kv(w, key, type);
    if (st == PW_OK)
        st = pw__gguf_dbuf_put_le(w, &w->kv, bits, pw__gguf_fixed_size((uint32_t)type));
    if (st != PW_OK) return rollback(w, m, st);
    if (is_alignment) {
        w->alignment_at = (int64_t)(w->kv.len - 4);
        w->alignment = (uint32_t)bits;
    }
    return PW_OK;
}

pw_status pw_gguf_writer_set_alignment(pw_gguf_writer *w, uint32_t alignment) {
    if (w == NULL) return PW_ERR_INVALID_ARGUMENT;
    if (w->alignment_at < 0) return set_fixed(w, ALIGNMENT_KEY, PW_GGUF_TYPE_UINT32, alignment);
    PW__FAIL_IF(alignment == 0 || (alignment & (alignment - 1)) != 0, w->ctx,
                PW_ERR_INVALID_ARGUMENT, "GGUF writer: alignment %" PRIu32 " is not a power of two",
                alignment);
    pw__gguf_le_bytes(w->kv.p + w->alignment_at, alignment, 4);
    w->alignment = alignment;
    return PW_OK;
}

#define PW__WRITER_NULL_CHECK(w)                                                            \
    do {                                                                                    \
        if ((w) == NULL) return PW_ERR_INVALID_ARGUMENT;                                    \
    } while (0)

pw_status pw_gguf_writer_set_u8(pw_gguf_writer *w, const char *key, uint8_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_UINT8, v);
}
pw_status pw_gguf_writer_set_i8(pw_gguf_writer *w, const char *key, int8_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_INT8, (uint8_t)v);
}
pw_status pw_gguf_writer_set_u16(pw_gguf_writer *w, const char *key, uint16_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_UINT16, v);
}
pw_status pw_gguf_writer_set_i16(pw_gguf_writer *w, const char *key, int16_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_INT16, (uint16_t)v);
}
pw_status pw_gguf_writer_set_u32(pw_gguf_writer *w, const char *key, uint32_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_UINT32, v);
}
pw_status pw_gguf_writer_set_i32(pw_gguf_writer *w, const char *key, int32_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_INT32, (uint32_t)v);
}
pw_status pw_gguf_writer_set_u64(pw_gguf_writer *w, const char *key, uint64_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_UINT64, v);
}
pw_status pw_gguf_writer_set_i64(pw_gguf_writer *w, const char *key, int64_t v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_INT64, (uint64_t)v);
}
pw_status pw_gguf_writer_set_f32(pw_gguf_writer *w, const char *key, float v) {
    PW__WRITER_NULL_CHECK(w);
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return set_fixed(w, key, PW_GGUF_TYPE_FLOAT32, u);
}
pw_status pw_gguf_writer_set_f64(pw_gguf_writer *w, const char *key, double v) {
    PW__WRITER_NULL_CHECK(w);
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return set_fixed(w, key, PW_GGUF_TYPE_FLOAT64, u);
}
pw_status pw_gguf_writer_set_bool(pw_gguf_writer *w, const char *key, int v) {
    PW__WRITER_NULL_CHECK(w);
    return set_fixed(w, key, PW_GGUF_TYPE_BOOL, v != 0);
}

pw_status pw_gguf_writer_set_string(pw_gguf_writer *w, const char *key, const char *s,
                                    uint64_t len) {
    PW__WRITER_NULL_CHECK(w);
    PW__FAIL_IF(s == NULL && len != 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: string for '%.200s' is NULL", key ? key : "(null)");
    const mark m = mark_of(w);
    pw_status st = begin_kv(w, key, PW_GGUF_TYPE_STRING);
    if (st == PW_OK) st = pw__gguf_dbuf_put_le(w, &w->kv, len, 8);
    if (st == PW_OK) st = pw__gguf_dbuf_put(w, &w->kv, s, len);
    return st == PW_OK ? PW_OK : rollback(w, m, st);
}

pw_status pw_gguf_writer_array_begin(pw_gguf_writer *w, const char *key, pw_gguf_type element) {
    PW__WRITER_NULL_CHECK(w);
    PW__FAIL_IF((unsigned)element > PW_GGUF_TYPE_FLOAT64, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: element type %d is not a GGUF type", (int)element);
    PW__FAIL_IF(w->depth >= PW__GGUF_MAX_DEPTH - 1 && element == PW_GGUF_TYPE_ARRAY, w->ctx,
                PW_ERR_INVALID_ARGUMENT, "GGUF writer: arrays nest deeper than %d levels",
                PW__GGUF_MAX_DEPTH);
    PW__FAIL_IF(w->depth >= PW__GGUF_MAX_DEPTH, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: arrays nest deeper than %d levels", PW__GGUF_MAX_DEPTH);
    const mark m = mark_of(w);
    pw_status st;
    if (w->depth == 0) {
        st = begin_kv(w, key, PW_GGUF_TYPE_ARRAY);
    } else {
        pw__gguf_frame *top = &w->stack[w->depth - 1];
        PW__FAIL_IF(key != NULL || top->element != PW_GGUF_TYPE_ARRAY, w->ctx,
                    PW_ERR_INVALID_ARGUMENT,
                    "GGUF writer: a nested array needs key NULL inside an array of arrays (the "
                    "open array holds %s)",
                    pw_gguf_type_name(top->element));
        st = PW_OK;
    }
    if (st == PW_OK) st = pw__gguf_dbuf_put_le(w, &w->kv, (uint64_t)element, 4);
    const uint64_t count_at = w->kv.len;
    if (st == PW_OK) st = pw__gguf_dbuf_put_le(w, &w->kv, 0, 8);
    if (st != PW_OK) return rollback(w, m, st);
    if (w->depth > 0) ++w->stack[w->depth - 1].count;
    w->stack[w->depth++] = (pw__gguf_frame){count_at, 0, element};
    return PW_OK;
}

static pw_status open_frame(pw_gguf_writer *w, pw_gguf_type want, pw__gguf_frame **out) {
    PW__FAIL_IF(w->depth == 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: no array is open (call pw_gguf_writer_array_begin)");
    pw__gguf_frame *top = &w->stack[w->depth - 1];
    const bool ok = want == PW_GGUF_TYPE_STRING ? top->element == PW_GGUF_TYPE_STRING
                                                : pw__gguf_fixed_size(top->element) != 0;
    PW__FAIL_IF(!ok, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: the open array holds %s elements",
                pw_gguf_type_name(top->element));
    *out = top;
    return PW_OK;
}

pw_status pw_gguf_writer_array_push(pw_gguf_writer *w, const void *elements, uint64_t count) {
    PW__WRITER_NULL_CHECK(w);
    pw__gguf_frame *top = NULL;
    PW__TRY(open_frame(w, PW_GGUF_TYPE_UINT8, &top));
    PW__FAIL_IF(elements == NULL && count != 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: elements is NULL");
    const size_t es = pw__gguf_fixed_size(top->element);
    uint64_t bytes;
    PW__FAIL_IF(pw__mul_overflow_u64(count, es, &bytes), w->ctx, PW_ERR_OVERFLOW,
                "GGUF writer: %" PRIu64 " elements overflow", count);
    const uint8_t *src = elements;
    if (top->element == PW_GGUF_TYPE_BOOL)
        for (uint64_t i = 0; i < count; ++i)
            PW__FAIL_IF(src[i] > 1, w->ctx, PW_ERR_INVALID_ARGUMENT,
                        "GGUF writer: bool element %" PRIu64 " is %u, not 0 or 1", i, src[i]);
    PW__TRY(pw__gguf_dbuf_reserve(w, &w->kv, bytes));
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t v = 0;
        switch (es) {
        case 1: v = src[i]; break;
        case 2: { uint16_t t; memcpy(&t, src + 2 * i, 2); v = t; break; }
        case 4: { uint32_t t; memcpy(&t, src + 4 * i, 4); v = t; break; }
        default: memcpy(&v, src + 8 * i, 8); break;
        }
        pw__gguf_le_bytes(w->kv.p + w->kv.len, v, es);
        w->kv.len += es;
    }
    top->count += count;
    return PW_OK;
}

pw_status pw_gguf_writer_array_push_string(pw_gguf_writer *w, const char *s, uint64_t len) {
    PW__WRITER_NULL_CHECK(w);
    pw__gguf_frame *top = NULL;
    PW__TRY(open_frame(w, PW_GGUF_TYPE_STRING, &top));
    PW__FAIL_IF(s == NULL && len != 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: string is NULL");
    uint64_t need;
    PW__FAIL_IF(pw__add_overflow_u64(len, 8, &need), w->ctx, PW_ERR_OVERFLOW,
                "GGUF writer: string length overflows");
    PW__TRY(pw__gguf_dbuf_reserve(w, &w->kv, need));
    PW__TRY(pw__gguf_dbuf_put_le(w, &w->kv, len, 8));
    PW__TRY(pw__gguf_dbuf_put(w, &w->kv, s, len));
    ++top->count;
    return PW_OK;
}

pw_status pw_gguf_writer_array_end(pw_gguf_writer *w) {
    PW__WRITER_NULL_CHECK(w);
    PW__FAIL_IF(w->depth == 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: no array is open to end");
    const pw__gguf_frame *top = &w->stack[--w->depth];
    pw__gguf_le_bytes(w->kv.p + top->count_at, top->count, 8);
    return PW_OK;
}

pw_status pw_gguf_writer_set_array(pw_gguf_writer *w, const char *key, pw_gguf_type type,
                                   const void *elements, uint64_t count) {
    PW__WRITER_NULL_CHECK(w);
    PW__FAIL_IF(pw__gguf_fixed_size((uint32_t)type) == 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: set_array takes fixed-size elements, not %s (use "
                "set_string_array or array_begin)",
                pw_gguf_type_name(type));
    const mark m = mark_of(w);
    pw_status st = pw_gguf_writer_array_begin(w, key, type);
    if (st == PW_OK) st = pw_gguf_writer_array_push(w, elements, count);
    if (st == PW_OK) st = pw_gguf_writer_array_end(w);
    return st == PW_OK ? PW_OK : rollback(w, m, st);
}

pw_status pw_gguf_writer_set_string_array(pw_gguf_writer *w, const char *key,
                                          const char *const *strings, const uint64_t *lengths,
                                          uint64_t count) {
    PW__WRITER_NULL_CHECK(w);
    PW__FAIL_IF(strings == NULL && count != 0, w->ctx, PW_ERR_INVALID_ARGUMENT,
                "GGUF writer: strings is NULL");
    const mark m = mark_of(w);
    pw_status st = pw_gguf_writer_array_begin(w, key, PW_GGUF_TYPE_STRING);
    for (uint64_t i = 0; i < count && st == PW_OK; ++i) {
        const uint64_t len = lengths ? lengths[i] : (strings[i] ? strlen(strings[i]) : 0);
        st = pw_gguf_writer_array_push_string(w, strings[i], len);
    }
    if (st == PW_OK) st = pw_gguf_writer_array_end(w);
    return st == PW_OK ? PW_OK : rollback(w, m, st);
}

/* Copy the elements of a read value into the open array (recursively). */
static pw_status copy_elements(pw_gguf_writer *w, const pw_gguf_value *v) {
    pw_context *ctx = w->ctx;
    if (pw__gguf_fixed_size(v->array_type) != 0) {
        const void *data = NULL;
        PW__TRY(pw_gguf_value_array_data(ctx, v, &data));
        const size_t es = pw__gguf_fixed_size(v->array_type);
        /* count * es cannot overflow: those bytes are in the source file */
        PW__TRY(pw__gguf_dbuf_reserve(w, &w->kv, v->count * es));
        PW__TRY(pw__gguf_dbuf_put(w, &w->kv, data, v->count * es));
        w->stack[w->depth - 1].count += v->count;
        return PW_OK;
    }
    for (uint64_t i = 0; i < v->count; ++i) {
        pw_gguf_value e;
        PW__TRY(pw_gguf_value_element(ctx, v, i, &e));
        if (e.type == PW_GGUF_TYPE_STRING) {
            const char *s = NULL;
            uint64_t len = 0;
            PW__TRY(pw_gguf_value_string(ctx, &e, &s, &len));
            PW__TRY(pw_gguf_writer_array_push_string(w, s, len));
        } else {
            PW__TRY(pw_gguf_writer_array_begin(w, NULL, e.array_type));
            PW__TRY(copy_elements(w, &e));
            PW__TRY(pw_gguf_writer_array_end(w));
        }
    }
    return PW_OK;
}

pw_status pw_gguf_writer_set_value(pw_gguf_writer *w, const char *key,
                                   const pw_gguf_value *value) {
    PW__WRITER_NULL_CHECK(w);
    PW__FAIL_IF(value == NULL, w->ctx, PW_ERR_INVALID_ARGUMENT, "GGUF writer: value is NULL");
    pw_context *ctx = w->ctx;
    if (value->type == PW_GGUF_TYPE_STRING) {
        const char *s = NULL;
        uint64_t len = 0;
        PW__TRY(pw_gguf_value_string(ctx, value, &s, &len));
        return pw_gguf_writer_set_string(w, key, s, len);
    }
    if (value->type == PW_GGUF_TYPE_ARRAY) {
        const mark m = mark_of(w);
        pw_status st = pw_gguf_writer_array_begin(w, key, value->array_type);
        if (st == PW_OK) st = copy_elements(w, value);
        if (st == PW_OK) st = pw_gguf_writer_array_end(w);
        return st == PW_OK ? PW_OK : rollback(w, m, st);
    }
    const uint8_t *p = NULL;
    PW__TRY(pw__gguf_value_payload(ctx, value, &p));
    uint64_t bits = 0;
    for (size_t i = pw__gguf_fixed_size(value->type); i-- > 0;) bits = (bits << 8) | p[i];
    return set_fixed(w, key, value->type, bits);
}
