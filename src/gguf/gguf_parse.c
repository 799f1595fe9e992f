/*
 * GGUF header parser and validator. A GGUF file is untrusted input: every
 * count, length, offset, alignment and shape product is checked before it is
 * used, overflow included, and every refusal names the field and its byte
 * offset. Counts are bounded by the bytes left in the file before anything is
 * allocated for them, so memory stays proportional to the file's size however
 * large the header's claims.
 *
 * Layout (little-endian; v2 and v3 are identical for little-endian files):
 *
 *   "GGUF" | u32 version | u64 n_tensors | u64 n_kv
 *   n_kv x    { string key | u32 type | value }
 *   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 type | u64 offset }
 *   zero padding to `alignment` | tensor data (offsets relative to here)
 *
 *   string = u64 length + bytes;  array value = u32 element type + u64 count + elements
 */
#include "gguf/gguf_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct parser {
    pw_context *ctx;
    pw_gguf *g;
    uint64_t pos;       /* next byte to read */
    uint64_t node_cap;  /* nodes allocated */
    uint64_t pool_cap;  /* pool bytes allocated */
    char where[200];    /* the record being parsed, for messages */
} parser;

/* Fail naming the record being parsed, the field and its byte offset. */
static pw_status fail_at(parser *p, pw_status st, uint64_t offset, const char *field,
                         const char *fmt, ...) PW__PRINTF(5, 6);
static pw_status fail_at(parser *p, pw_status st, uint64_t offset, const char *field,
                         const char *fmt, ...) {
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return pw__fail(p->ctx, st, "GGUF %s: %s at byte offset %" PRIu64 ": %s", p->where, field,
                    offset, detail);
}

/* Make [pos, pos + n) readable at g->base. Streaming parses read the header
 * into a buffer that grows (by doubling, never past the file's end). */
static pw_status ensure(parser *p, uint64_t n, const char *field) {
    pw_gguf *g = p->g;
    uint64_t end;
    if (pw__add_overflow_u64(p->pos, n, &end) || end > g->file_size)
        return fail_at(p, PW_ERR_TRUNCATED, p->pos, field,
                       "needs %" PRIu64 " bytes but the file ends at byte %" PRIu64, n,
                       g->file_size);
    if (end <= g->base_size) return PW_OK;
    uint64_t cap = g->base_size < 65536 ? 65536 : g->base_size;
    while (cap < end) cap *= 2; /* end <= file_size < 2^63: no overflow */
    if (cap > g->file_size) cap = g->file_size;
    if (cap > SIZE_MAX)
        return fail_at(p, PW_ERR_OUT_OF_MEMORY, p->pos, field,
                       "a header of %" PRIu64 " bytes does not fit in memory", cap);
    uint8_t *buf = pw__gguf_alloc(&g->alloc, (size_t)cap);
    if (buf == NULL)
        return fail_at(p, PW_ERR_OUT_OF_MEMORY, p->pos, field,
                       "cannot allocate %" PRIu64 " bytes for the header", cap);
    if (g->base_size) memcpy(buf, g->header, (size_t)g->base_size);
    uint64_t have = g->base_size;
    while (have < cap) {
        ssize_t r = pread(g->fd, buf + have, (size_t)(cap - have), (off_t)have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            pw__gguf_free(&g->alloc, buf);
            return fail_at(p, PW_ERR_IO, have, field, "read failed: %s",
                           r < 0 ? strerror(errno) : "unexpected end of file");
        }
        have += (uint64_t)r;
    }
    pw__gguf_free(&g->alloc, g->header);
    g->header = buf;
    g->base = buf;
    g->base_size = cap;
    return PW_OK;
}

static pw_status read_u32(parser *p, const char *field, uint32_t *v) {
    PW__TRY(ensure(p, 4, field));
    *v = pw__le32(p->g->base + p->pos);
    p->pos += 4;
    return PW_OK;
}

static pw_status read_u64(parser *p, const char *field, uint64_t *v) {
    PW__TRY(ensure(p, 8, field));
    *v = pw__le64(p->g->base + p->pos);
    p->pos += 8;
    return PW_OK;
}

/* Copy file bytes [at, at + len) into the pool with a NUL after them. */
static pw_status pool_add(parser *p, uint64_t at, uint64_t len, pw__gguf_str *out) {
    pw_gguf *g = p->g;
    uint64_t need;
    if (pw__add_overflow_u64(g->pool_len, len, &need) ||
        pw__add_overflow_u64(need, 1, &need) || need > SIZE_MAX)
        return fail_at(p, PW_ERR_OVERFLOW, at, "string", "strings total more than memory holds");
    if (need > p->pool_cap) {
        uint64_t cap = p->pool_cap ? p->pool_cap : 4096;
        while (cap < need) cap = cap > UINT64_MAX / 2 ? need : cap * 2;
        if (cap > SIZE_MAX) cap = need;
        char *pool = pw__gguf_alloc(&g->alloc, (size_t)cap);
        if (pool == NULL)
            return fail_at(p, PW_ERR_OUT_OF_MEMORY, at, "string",
                           "cannot allocate %" PRIu64 " bytes for strings", cap);
        if (g->pool_len) memcpy(pool, g->pool, (size_t)g->pool_len);
        pw__gguf_free(&g->alloc, g->pool);
        g->pool = pool;
        p->pool_cap = cap;
    }
    if (len) memcpy(g->pool + g->pool_len, g->base + at, (size_t)len);
    g->pool[g->pool_len + len] = '\0';
    out->at = g->pool_len;
    out->len = len;
    g->pool_len = need;
    return PW_OK;
}

/* Reserve `count` contiguous nodes. The caller has bounded count by the file. */
static pw_status nodes_reserve(parser *p, uint64_t count, int64_t *first) {
    pw_gguf *g = p->g;
    uint64_t need;
    if (pw__add_overflow_u64((uint64_t)g->n_nodes, count, &need) ||
        need > SIZE_MAX / sizeof(pw__gguf_node))
        return fail_at(p, PW_ERR_OVERFLOW, p->pos, "value", "too many values");
    if (need > p->node_cap) {
        uint64_t cap = p->node_cap ? p->node_cap : 64;
        while (cap < need) cap *= 2;
        if (cap > SIZE_MAX / sizeof(pw__gguf_node)) cap = need;
        pw__gguf_node *nodes = pw__gguf_alloc(&g->alloc, (size_t)cap * sizeof *nodes);
        if (nodes == NULL)
            return fail_at(p, PW_ERR_OUT_OF_MEMORY, p->pos, "value",
                           "cannot allocate %" PRIu64 " metadata values", cap);
        if (g->n_nodes) memcpy(nodes, g->nodes, (size_t)g->n_nodes * sizeof *nodes);
        pw__gguf_free(&g->alloc, g->nodes);
        g->nodes = nodes;
        p->node_cap = cap;
    }
    *first = g->n_nodes;
    g->n_nodes = (int64_t)need;
    return PW_OK;
}

/* A string that must be usable as a C string and printable: a key or tensor name. */
static pw_status read_name(parser *p, const char *field, pw__gguf_str *out) {
    uint64_t len;
    const uint64_t len_at = p->pos;
    PW__TRY(read_u64(p, field, &len));
    PW__TRY(ensure(p, len, field));
    const uint8_t *s = p->g->base + p->pos;
    if (len == 0 && strcmp(field, "key") == 0) /* ggml aborts on an empty key */
        return fail_at(p, PW_ERR_BAD_FILE, len_at, field, "is empty");
    if (memchr(s, 0, (size_t)len) != NULL)
        return fail_at(p, PW_ERR_BAD_FILE, len_at, field, "contains a NUL byte");
    if (!pw__utf8_valid(s, len))
        return fail_at(p, PW_ERR_BAD_FILE, len_at, field, "is not valid UTF-8");
    PW__TRY(pool_add(p, p->pos, len, out));
    p->pos += len;
    return PW_OK;
}

static pw_status check_bools(parser *p, uint64_t at, uint64_t count) {
    const uint8_t *b = p->g->base + at;
    for (uint64_t i = 0; i < count; ++i)
        if (b[i] > 1)
            return fail_at(p, PW_ERR_BAD_FILE, at + i, "bool value", "is %u; GGUF bools are 0 or 1",
                           b[i]);
    return PW_OK;
}

/* Parse one value of `type` into node `slot` (already reserved). */
static pw_status parse_value(parser *p, uint32_t type, int depth, int64_t slot) {
    pw__gguf_node nd = {p->pos, 1, -1, (uint8_t)type, 0};
    const size_t fixed = pw__gguf_fixed_size(type);
    if (fixed) {
        PW__TRY(ensure(p, fixed, "value"));
        if (type == PW_GGUF_TYPE_BOOL) PW__TRY(check_bools(p, p->pos, 1));
        p->pos += fixed;
    } else if (type == PW_GGUF_TYPE_STRING) {
        uint64_t len;
        PW__TRY(read_u64(p, "string length", &len));
        PW__TRY(ensure(p, len, "string bytes"));
        pw__gguf_str s;
        PW__TRY(pool_add(p, p->pos, len, &s));
        nd.offset = p->pos;
        nd.count = len;
        nd.aux = (int64_t)s.at;
        p->pos += len;
    } else if (type == PW_GGUF_TYPE_ARRAY) {
        uint32_t et;
        const uint64_t et_at = p->pos;
        PW__TRY(read_u32(p, "array element type", &et));
        if (et > PW_GGUF_TYPE_FLOAT64)
            return fail_at(p, PW_ERR_BAD_FILE, et_at, "array element type",
                           "%" PRIu32 " is not a GGUF type (0..12)", et);
        if (et == PW_GGUF_TYPE_ARRAY && depth + 1 >= PW__GGUF_MAX_DEPTH)
            return fail_at(p, PW_ERR_BAD_FILE, et_at, "array element type",
                           "arrays nest deeper than %d levels", PW__GGUF_MAX_DEPTH);
        uint64_t n;
        const uint64_t n_at = p->pos;
        PW__TRY(read_u64(p, "array count", &n));
        nd.array_type = (uint8_t)et;
        nd.count = n;
        nd.offset = p->pos;
        const uint64_t left = p->g->file_size - p->pos;
        const size_t es = pw__gguf_fixed_size(et);
        const uint64_t min = es ? es
                                : (et == PW_GGUF_TYPE_STRING ? PW__GGUF_MIN_STRING_BYTES
                                                             : PW__GGUF_MIN_ARRAY_BYTES);
        uint64_t bytes;
        if (pw__mul_overflow_u64(n, min, &bytes) || bytes > left)
            return fail_at(p, PW_ERR_TRUNCATED, n_at, "array count",
                           "%" PRIu64 " %s elements need at least %" PRIu64
                           " bytes per element but only %" PRIu64 " bytes are left",
                           n, pw_gguf_type_name((pw_gguf_type)et), min, left);
        if (es) {
            PW__TRY(ensure(p, bytes, "array elements"));
            if (et == PW_GGUF_TYPE_BOOL) PW__TRY(check_bools(p, p->pos, n));
            p->pos += bytes;
        } else {
            int64_t first = -1;
            if (n) PW__TRY(nodes_reserve(p, n, &first));
            nd.aux = first;
            for (uint64_t i = 0; i < n; ++i)
                PW__TRY(parse_value(p, et, depth + 1, first + (int64_t)i));
        }
    } else {
        return fail_at(p, PW_ERR_BAD_FILE, p->pos, "value type",
                       "%" PRIu32 " is not a GGUF type (0..12)", type);
    }
    p->g->nodes[slot] = nd;
    return PW_OK;
}

/* Sort the names of `count` items and refuse the first duplicate in file
 * order. `name` gives item i's name, `offset` its record's byte offset. */
static pw_status index_build(parser *p, pw__gguf_index *ix, int64_t count, const char *what,
                             const char *field,
                             const pw__gguf_str *(*name)(const pw_gguf *, int64_t),
                             uint64_t (*offset)(const pw_gguf *, int64_t)) {
    pw_gguf *g = p->g;
    if (count == 0) return PW_OK;
    pw__gguf_name_entry *e = pw__gguf_alloc(&g->alloc, (size_t)count * sizeof *e);
    pw__gguf_name_entry *tmp = pw__gguf_alloc(&g->alloc, (size_t)count * sizeof *tmp);
    if (e == NULL || tmp == NULL) {
        pw__gguf_free(&g->alloc, e);
        pw__gguf_free(&g->alloc, tmp);
        return fail_at(p, PW_ERR_OUT_OF_MEMORY, p->pos, "header",
                       "cannot index %" PRId64 " names", count);
    }
    for (int64_t i = 0; i < count; ++i)
        e[i] = (pw__gguf_name_entry){name(g, i)->at, name(g, i)->len, i};
    pw__gguf_index_sort(g->pool, e, tmp, count);
    pw__gguf_free(&g->alloc, tmp);
    ix->entries = e;
    ix->n = count;
    int64_t first = -1, dup = -1; /* the later record of the earliest duplicate pair */
    for (int64_t k = 0; k + 1 < count; ++k)
        if (e[k].len == e[k + 1].len &&
            memcmp(g->pool + e[k].at, g->pool + e[k + 1].at, (size_t)e[k].len) == 0 &&
            (dup < 0 || e[k + 1].index < dup)) {
            first = e[k].index;
            dup = e[k + 1].index;
        }
    if (dup < 0) return PW_OK;
    const char *s = g->pool + name(g, dup)->at;
    snprintf(p->where, sizeof p->where, "%s %" PRId64 " ('%.120s')", what, dup, s);
    return fail_at(p, PW_ERR_DUPLICATE, offset(g, dup), field,
                   "'%.120s' is already used by the record at byte offset %" PRIu64, s,
                   offset(g, first));
}

static const pw__gguf_str *kv_name(const pw_gguf *g, int64_t i) { return &g->kvs[i].key; }
static uint64_t kv_offset(const pw_gguf *g, int64_t i) { return g->kvs[i].offset; }
static const pw__gguf_str *tensor_name(const pw_gguf *g, int64_t i) {
    return &g->tensors[i].name;
}
static uint64_t tensor_offset(const pw_gguf *g, int64_t i) { return g->tensors[i].info_offset; }

static pw_status parse_kvs(parser *p) {
    pw_gguf *g = p->g;
    for (int64_t i = 0; i < g->n_kv; ++i) {
        pw__gguf_kv *kv = &g->kvs[i];
        kv->offset = p->pos;
        snprintf(p->where, sizeof p->where, "key-value pair %" PRId64, i);
        PW__TRY(read_name(p, "key", &kv->key));
        const char *key = g->pool + kv->key.at;
        snprintf(p->where, sizeof p->where, "key-value pair %" PRId64 " ('%.120s')", i, key);
        uint32_t type;
        const uint64_t type_at = p->pos;
        PW__TRY(read_u32(p, "value type", &type));
        if (type > PW_GGUF_TYPE_FLOAT64)
            return fail_at(p, PW_ERR_BAD_FILE, type_at, "value type",
                           "%" PRIu32 " is not a GGUF type (0..12)", type);
        PW__TRY(nodes_reserve(p, 1, &kv->node));
        const uint64_t value_at = p->pos;
        PW__TRY(parse_value(p, type, 0, kv->node));
        if (strcmp(key, "general.alignment") == 0) {
            if (type != PW_GGUF_TYPE_UINT32)
                return fail_at(p, PW_ERR_BAD_FILE, type_at, "value type",
                               "general.alignment must be uint32, not %s",
                               pw_gguf_type_name((pw_gguf_type)type));
            const uint32_t a = pw__le32(g->base + value_at);
            if (a == 0 || (a & (a - 1)) != 0)
                return fail_at(p, PW_ERR_BAD_FILE, value_at, "value",
                               "general.alignment %" PRIu32 " is not a power of two", a);
            g->alignment = a;
        }
    }
    return PW_OK;
}

/* Validate one tensor record's shape and type and derive its size. */
static pw_status tensor_shape(parser *p, pw__gguf_tensor *t, const uint64_t *ne_at) {
    int64_t elements = 1;
    for (int d = 0; d < t->n_dims; ++d)
        if (pw__mul_overflow_i64(elements, t->ne[d], &elements))
            return fail_at(p, PW_ERR_OVERFLOW, ne_at[d], "ne",
                           "the element count overflows at ne[%d] = %" PRId64, d, t->ne[d]);
    t->elements = elements;
    pw_format f;
    t->format_known = pw_format_from_gguf_type(t->gguf_type, &f) == PW_OK;
    if (!t->format_known) return PW_OK; /* opens and inspects; loading it is refused */
    const pw_format_info *info = pw_format_get(f);
    if (info == NULL) {
        t->format_known = 0;
        return PW_OK;
    }
    t->format = f;
    if (t->ne[0] % info->block_size != 0)
        return fail_at(p, PW_ERR_SHAPE, ne_at[0], "ne[0]",
                       "a row of %" PRId64 " elements is not a whole number of %s blocks (%d)",
                       t->ne[0], info->name, (int)info->block_size);
    uint64_t bytes;
    if (pw__mul_overflow_u64((uint64_t)(elements / info->block_size),
                             (uint64_t)info->block_bytes, &bytes))
        return fail_at(p, PW_ERR_OVERFLOW, ne_at[0], "ne",
                       "%" PRId64 " elements of %s overflow a 64-bit byte count", elements,
                       info->name);
    t->bytes = bytes;
    return PW_OK;
}

static pw_status parse_tensor_records(parser *p) {
    pw_gguf *g = p->g;
    for (int64_t i = 0; i < g->n_tensors; ++i) {
        pw__gguf_tensor *t = &g->tensors[i];
        t->info_offset = p->pos;
        snprintf(p->where, sizeof p->where, "tensor record %" PRId64, i);
        PW__TRY(read_name(p, "name", &t->name));
        const char *name = g->pool + t->name.at;
        snprintf(p->where, sizeof p->where, "tensor record %" PRId64 " ('%.120s')", i, name);
        uint32_t n_dims;
        const uint64_t dims_at = p->pos;
        PW__TRY(read_u32(p, "n_dims", &n_dims));
        if (n_dims < 1 || n_dims > PW_MAX_RANK)
            return fail_at(p, PW_ERR_BAD_FILE, dims_at, "n_dims",
                           "%" PRIu32 " is outside 1..%d", n_dims, PW_MAX_RANK);
        t->n_dims = (int32_t)n_dims;
        uint64_t ne_at[PW_MAX_RANK];
        for (int d = 0; d < PW_MAX_RANK; ++d) t->ne[d] = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            uint64_t v;
            ne_at[d] = p->pos;
            PW__TRY(read_u64(p, "ne", &v));
            if (v > (uint64_t)INT64_MAX)
                return fail_at(p, PW_ERR_BAD_FILE, ne_at[d], "ne",
                               "ne[%" PRIu32 "] is negative (%" PRId64 ")", d, (int64_t)v);
            t->ne[d] = (int64_t)v;
        }
        PW__TRY(read_u32(p, "type", &t->gguf_type));
        const uint64_t off_at = p->pos;
        PW__TRY(read_u64(p, "offset", &t->rel_offset));
        PW__TRY(tensor_shape(p, t, ne_at));
        if (t->rel_offset % g->alignment != 0)
            return fail_at(p, PW_ERR_BAD_FILE, off_at, "offset",
                           "%" PRIu64 " is not a multiple of the alignment %" PRIu64,
                           t->rel_offset, g->alignment);
    }
    return PW_OK;
}

typedef struct extent {
    uint64_t begin, end;
    int64_t index;
} extent;

static int extent_cmp(const void *a, const void *b) {
    const extent *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Tensor data must lie inside the file and no two tensors may share a byte. */
static pw_status check_extents(parser *p) {
    pw_gguf *g = p->g;
    snprintf(p->where, sizeof p->where, "tensor data");
    extent *ex = g->n_tensors
                     ? pw__gguf_alloc(&g->alloc, (size_t)g->n_tensors * sizeof *ex)
                     : NULL;
    if (g->n_tensors && ex == NULL)
        return fail_at(p, PW_ERR_OUT_OF_MEMORY, p->pos, "tensors", "cannot sort the tensors");
    size_t n = 0;
    pw_status st = PW_OK;
    for (int64_t i = 0; i < g->n_tensors && st == PW_OK; ++i) {
        const pw__gguf_tensor *t = &g->tensors[i];
        snprintf(p->where, sizeof p->where, "tensor record %" PRId64 " ('%.120s')", i,
                 g->pool + t->name.at);
        const uint64_t off_at = t->info_offset + 8 + t->name.len + 4 + 8 * (uint64_t)t->n_dims + 4;
        uint64_t begin, end;
        if (pw__add_overflow_u64(g->data_offset, t->rel_offset, &begin) ||
            pw__add_overflow_u64(begin, t->bytes, &end) || end > g->file_size) {
            st = fail_at(p, PW_ERR_TRUNCATED, off_at, "offset",
                         "data at data section + %" PRIu64 " (%" PRIu64
                         " bytes) lies outside the file of %" PRIu64
                         " bytes (data section at %" PRIu64 ")",
                         t->rel_offset, t->bytes, g->file_size, g->data_offset);
            break;
        }
        if (t->bytes) ex[n++] = (extent){begin, end, i};
    }
    if (st == PW_OK && n > 1) {
        qsort(ex, n, sizeof *ex, extent_cmp);
        for (size_t k = 0; k + 1 < n; ++k) {
            if (ex[k].end <= ex[k + 1].begin) continue;
            const pw__gguf_tensor *a = &g->tensors[ex[k].index], *b = &g->tensors[ex[k + 1].index];
            snprintf(p->where, sizeof p->where, "tensor record %" PRId64 " ('%.120s')",
                     ex[k + 1].index, g->pool + b->name.at);
            st = fail_at(p, PW_ERR_BAD_FILE, b->info_offset, "offset",
                         "its data [%" PRIu64 ", %" PRIu64 ") overlaps tensor '%.120s' at [%" PRIu64
                         ", %" PRIu64 ")",
                         ex[k + 1].begin, ex[k + 1].end, g->pool + a->name.at, ex[k].begin,
                         ex[k].end);
            break;
        }
    }
    pw__gguf_free(&g->alloc, ex);
    return st;
}

pw_status pw__gguf_parse(pw_context *ctx, pw_gguf *g) {
    parser p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.g = g;
    snprintf(p.where, sizeof p.where, "header");
    PW__TRY(ensure(&p, 4, "magic"));
    if (memcmp(g->base, "GGUF", 4) != 0) {
        const uint8_t *m = g->base;
        return fail_at(&p, PW_ERR_BAD_FILE, 0, "magic",
                       "bytes %02x %02x %02x %02x are not \"GGUF\"; not a GGUF file", m[0], m[1],
                       m[2], m[3]);
    }
    p.pos = 4;
    PW__TRY(read_u32(&p, "version", &g->version));
    if (g->version != 0 && (g->version & 0xFFFFu) == 0)
        return fail_at(&p, PW_ERR_VERSION, 4, "version",
                       "reads as 0x%08" PRIx32 ": a big-endian GGUF file, which packwise does "
                       "not read (convert it to little-endian)", g->version);
    if (g->version == 1)
        return fail_at(&p, PW_ERR_VERSION, 4, "version",
                       "GGUF version 1 is not supported (32-bit counts); re-convert the model "
                       "to version 3");
    if (g->version != 2 && g->version != 3)
        return fail_at(&p, PW_ERR_VERSION, 4, "version",
                       "%" PRIu32 " is not a GGUF version packwise reads (2 or 3)", g->version);
    uint64_t n_tensors, n_kv;
    PW__TRY(read_u64(&p, "tensor count", &n_tensors));
    PW__TRY(read_u64(&p, "key-value count", &n_kv));
    const uint64_t left = g->file_size - p.pos;
    uint64_t kv_min, t_min, sum;
    if (pw__mul_overflow_u64(n_kv, PW__GGUF_MIN_KV_BYTES, &kv_min) || kv_min > left)
        return fail_at(&p, PW_ERR_TRUNCATED, 16, "key-value count",
                       "%" PRIu64 " pairs need at least %u bytes each but only %" PRIu64
                       " bytes are left",
                       n_kv, PW__GGUF_MIN_KV_BYTES, left);
    if (pw__mul_overflow_u64(n_tensors, PW__GGUF_MIN_TENSOR_BYTES, &t_min) ||
        pw__add_overflow_u64(t_min, kv_min, &sum) || sum > left)
        return fail_at(&p, PW_ERR_TRUNCATED, 8, "tensor count",
                       "%" PRIu64 " tensor records need at least %u bytes each but only %" PRIu64
                       " bytes are left after the key-value pairs' minimum",
                       n_tensors, PW__GGUF_MIN_TENSOR_BYTES, left - kv_min);
    g->n_kv = (int64_t)n_kv;
    g->n_tensors = (int64_t)n_tensors;
    g->alignment = PW__GGUF_DEFAULT_ALIGNMENT;
    if (n_kv) {
        g->kvs = pw__gguf_alloc(&g->alloc, (size_t)n_kv * sizeof *g->kvs);
        if (g->kvs == NULL)
            return fail_at(&p, PW_ERR_OUT_OF_MEMORY, 16, "key-value count",
                           "cannot allocate %" PRIu64 " pairs", n_kv);
        memset(g->kvs, 0, (size_t)n_kv * sizeof *g->kvs);
    }
    if (n_tensors) {
        g->tensors = pw__gguf_alloc(&g->alloc, (size_t)n_tensors * sizeof *g->tensors);
        if (g->tensors == NULL)
            return fail_at(&p, PW_ERR_OUT_OF_MEMORY, 8, "tensor count",
                           "cannot allocate %" PRIu64 " tensor records", n_tensors);
        memset(g->tensors, 0, (size_t)n_tensors * sizeof *g->tensors);
    }
    PW__TRY(parse_kvs(&p));
    PW__TRY(index_build(&p, &g->key_index, g->n_kv, "key-value pair", "key", kv_name,
                        kv_offset));
    PW__TRY(parse_tensor_records(&p));
    PW__TRY(index_build(&p, &g->tensor_index, g->n_tensors, "tensor record", "name",
                        tensor_name, tensor_offset));
    uint64_t end;
    snprintf(p.where, sizeof p.where, "header");
    if (pw__add_overflow_u64(p.pos, g->alignment - 1, &end))
        return fail_at(&p, PW_ERR_OVERFLOW, p.pos, "data section",
                       "aligning to %" PRIu64 " overflows", g->alignment);
    g->data_offset = end & ~(g->alignment - 1);
    PW__TRY(check_extents(&p));
    pw__gguf_fingerprint(g);
    return PW_OK;
}
