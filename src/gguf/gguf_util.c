/* Small helpers of the GGUF module: allocation, name hashing, UTF-8, type tables. */
#include "gguf/gguf_internal.h"
#include "base/hash.h"

static void *default_alloc(void *user, size_t bytes, size_t alignment) {
    (void)user;
    return pw__alloc(NULL, bytes, alignment);
}

static void default_free(void *user, void *p) {
    (void)user;
    pw__free(NULL, p);
}

pw_allocator pw__gguf_allocator(const pw_context *ctx) {
    if (ctx != NULL) return ctx->allocator;
    pw_allocator a = {default_alloc, default_free, NULL};
    return a;
}

void *pw__gguf_alloc(const pw_allocator *a, size_t bytes) {
    return a->alloc(a->user, bytes ? bytes : 1, 16);
}

void pw__gguf_free(const pw_allocator *a, void *p) {
    if (p != NULL) a->free(a->user, p);
}

/* FNV-1a, 64-bit: for the writer, whose names come from its caller. */
uint64_t pw__gguf_hash(const char *s, uint64_t len) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < len; ++i) {
        h ^= (uint8_t)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static int name_cmp(const char *pool, const pw__gguf_name_entry *a, const char *s,
                    uint64_t len) {
    const uint64_t n = a->len < len ? a->len : len;
    const int c = n ? memcmp(pool + a->at, s, (size_t)n) : 0;
    if (c != 0) return c;
    return a->len < len ? -1 : a->len > len;
}

static int entry_cmp(const char *pool, const pw__gguf_name_entry *a,
                     const pw__gguf_name_entry *b) {
    const int c = name_cmp(pool, a, pool + b->at, b->len);
    if (c != 0) return c;
    return a->index < b->index ? -1 : a->index > b->index;
}

void pw__gguf_index_sort(const char *pool, pw__gguf_name_entry *e, pw__gguf_name_entry *tmp,
                         int64_t n) {
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            const int64_t mid = lo + width < n ? lo + width : n;
            const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = entry_cmp(pool, &e[j], &e[i]) < 0 ? e[j++] : e[i++];
            while (i < mid) tmp[k++] = e[i++];
            while (j < hi) tmp[k++] = e[j++];
        }
        memcpy(e, tmp, (size_t)n * sizeof *e);
    }
}

int64_t pw__gguf_index_find(const pw_gguf *g, const pw__gguf_index *ix, const char *s,
                            uint64_t len) {
    int64_t lo = 0, hi = ix->n; /* the first entry >= (s, len) is in [lo, hi] */
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (name_cmp(g->pool, &ix->entries[mid], s, len) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < ix->n && name_cmp(g->pool, &ix->entries[lo], s, len) == 0)
        return ix->entries[lo].index;
    return -1;
}

bool pw__utf8_valid(const uint8_t *s, uint64_t len) {
    uint64_t i = 0;
    while (i < len) {
        const uint8_t c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        int n;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            n = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (len - i <= (uint64_t)n) return false;
        for (int k = 1; k <= n; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += (uint64_t)n + 1;
    }
    return true;
}

size_t pw__gguf_fixed_size(uint32_t type) {
    switch (type) {
    case PW_GGUF_TYPE_UINT8:
    case PW_GGUF_TYPE_INT8:
    case PW_GGUF_TYPE_BOOL: return 1;
    case PW_GGUF_TYPE_UINT16:
    case PW_GGUF_TYPE_INT16: return 2;
    case PW_GGUF_TYPE_UINT32:
    case PW_GGUF_TYPE_INT32:
    case PW_GGUF_TYPE_FLOAT32: return 4;
    case PW_GGUF_TYPE_UINT64:
    case PW_GGUF_TYPE_INT64:
    case PW_GGUF_TYPE_FLOAT64: return 8;
    default: return 0;
    }
}

size_t pw_gguf_type_size(pw_gguf_type type) { return pw__gguf_fixed_size((uint32_t)type); }

const char *pw_gguf_type_name(pw_gguf_type type) {
    static const char *const names[] = {"uint8", "int8",   "uint16", "int16", "uint32",
                                        "int32", "float32", "bool",   "string", "array",
                                        "uint64", "int64",  "float64"};
    const unsigned t = (unsigned)type;
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

const char *pw_gguf_tensor_type_name(uint32_t gguf_type) {
    /* ggml's type ids, including ids ggml has since retired, so old files still read well. */
    static const char *const names[] = {
        "f32",     "f16",    "q4_0",    "q4_1",  "q4_2" /* removed */, "q4_3" /* removed */,
        "q5_0",    "q5_1",   "q8_0",    "q8_1",  "q2_K",   "q3_K",   "q4_K",   "q5_K",
        "q6_K",    "q8_K",   "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s",
        "iq2_s",   "iq4_xs", "i8",      "i16",   "i32",    "i64",    "f64",    "iq1_m",
        "bf16",    "q4_0_4_4" /* removed */, "q4_0_4_8" /* removed */,
        "q4_0_8_8" /* removed */, "tq1_0", "tq2_0", "iq4_nl_4_4" /* removed */,
        "iq4_nl_4_8" /* removed */, "iq4_nl_8_8" /* removed */, "mxfp4"};
    return gguf_type < sizeof names / sizeof names[0] ? names[gguf_type] : NULL;
}

void pw__gguf_fingerprint(pw_gguf *g) {
    /* The header, metadata and tensor table are the bytes before the data section;
     * every mode of opening keeps them in base. The modification time tells apart two
     * files whose headers are equal and whose tensors are not (a model quantized twice
     * with the same tool): a cache is made for one file, and a copy that keeps its
     * time (cp -p, rsync -a) keeps its cache. */
    const uint64_t n = g->data_offset < g->base_size ? g->data_offset : g->base_size;
    pw__hash h;
    pw__hash_begin(&h);
    pw__hash_bytes(&h, "packwise-gguf-file", 18);
    pw__hash_u64(&h, g->file_size);
    pw__hash_u64(&h, g->mtime_ns);
    pw__hash_u64(&h, n);
    pw__hash_bytes(&h, g->base, (size_t)n);
    const pw__digest d = pw__hash_end(&h);
    g->fingerprint[0] = d.lo;
    g->fingerprint[1] = d.hi;
}

void pw__gguf_tensor_source_id(const pw_gguf *g, int64_t index, uint64_t id[2]) {
    id[0] = id[1] = 0;
    if (!pw__hash_available()) return;
    const pw__gguf_tensor *t = &g->tensors[index];
    pw__hash h;
    pw__hash_begin(&h);
    pw__hash_bytes(&h, "packwise-gguf-tensor", 20);
    pw__hash_u64(&h, g->fingerprint[0]);
    pw__hash_u64(&h, g->fingerprint[1]);
    pw__hash_u64(&h, (uint64_t)index);
    pw__hash_str(&h, g->pool + t->name.at);
    pw__hash_u32(&h, t->gguf_type);
    for (int d = 0; d < PW_MAX_RANK; ++d) pw__hash_u64(&h, (uint64_t)t->ne[d]);
    pw__hash_u64(&h, t->rel_offset);
    pw__hash_u64(&h, t->bytes);
    /* Samples of the tensor's own bytes (its first, middle and last 64): the
     * modification time alone does not tell apart two files written within one tick
     * of the kernel's coarse file clock (milliseconds), and two quantizations of one
     * model share every header byte. Three samples read at most a few pages. */
    if (g->whole_file) {
        const uint8_t *data = g->base + g->data_offset + t->rel_offset;
        const uint64_t take = t->bytes < 64 ? t->bytes : 64;
        const uint64_t at[3] = {0, (t->bytes - take) / 2, t->bytes - take};
        for (int k = 0; k < 3; ++k) pw__hash_bytes(&h, data + at[k], (size_t)take);
    }
    const pw__digest dg = pw__hash_end(&h);
    id[0] = dg.lo;
    id[1] = dg.hi;
}
