/*
 * Internals of the GGUF module shared by the parser, the handle, the
 * metadata accessors and the writer.
 *
 * Everything parsed from a file is stored as byte offsets (into the file, or
 * into the handle's string pool), never as pointers: while a file opened for
 * streaming is parsed, its header buffer grows and moves, and offsets survive
 * that. Pointers are formed only when a caller asks.
 */
#ifndef PACKWISE_GGUF_INTERNAL_H
#define PACKWISE_GGUF_INTERNAL_H

#include "base/internal.h"
#include "packwise/gguf.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PW__GGUF_DEFAULT_ALIGNMENT 32u
/* Deepest array nesting accepted (an array of arrays is depth 2). */
#define PW__GGUF_MAX_DEPTH 16
/* Smallest encodings, used to bound counts by the bytes left before allocating. */
#define PW__GGUF_MIN_KV_BYTES 13u     /* key length 8 + type 4 + a one-byte value */
#define PW__GGUF_MIN_TENSOR_BYTES 32u /* name length 8 + n_dims 4 + ne 8 + type 4 + offset 8 */
#define PW__GGUF_MIN_STRING_BYTES 8u  /* length */
#define PW__GGUF_MIN_ARRAY_BYTES 12u  /* element type 4 + count 8 */
/* ggml refuses tensor names of GGML_MAX_NAME (64) bytes or more. */
#define PW__GGUF_MAX_NAME 63u

/* A string copied into the handle's pool, NUL-terminated there. */
typedef struct pw__gguf_str {
    uint64_t at;  /* pool offset */
    uint64_t len; /* bytes, without the NUL */
} pw__gguf_str;

/* One metadata value. Array elements of STRING or ARRAY type are nodes too,
 * stored contiguously from `aux`; fixed-size elements are read in place. */
typedef struct pw__gguf_node {
    uint64_t offset; /* payload offset in the file: the value, string bytes, or first element */
    uint64_t count;  /* ARRAY: elements; STRING: bytes; otherwise 1 */
    int64_t aux;     /* STRING: pool offset of its copy; ARRAY of STRING/ARRAY: first child
                        node; otherwise -1 */
    uint8_t type;
    uint8_t array_type;
} pw__gguf_node;

typedef struct pw__gguf_kv {
    pw__gguf_str key;
    uint64_t offset; /* byte offset of the record (its key length) */
    int64_t node;
} pw__gguf_kv;

typedef struct pw__gguf_tensor {
    pw__gguf_str name;
    uint64_t info_offset; /* byte offset of the record */
    uint64_t rel_offset;  /* as written: from the start of the data section */
    uint64_t bytes;       /* 0 when the type is unknown */
    int64_t ne[PW_MAX_RANK];
    int64_t elements;
    uint32_t gguf_type;
    int32_t n_dims;
    int format_known;
    pw_format format;
} pw__gguf_tensor;

/* Names sorted by bytes (ties by index), for duplicate checks and lookups
 * that cost O(n log n) and O(log n) whatever names a hostile file picks. */
typedef struct pw__gguf_name_entry {
    uint64_t at, len; /* the name in the pool */
    int64_t index;    /* of the key-value pair or tensor */
} pw__gguf_name_entry;

typedef struct pw__gguf_index {
    pw__gguf_name_entry *entries;
    int64_t n;
} pw__gguf_index;

struct pw_gguf {
    pw_allocator alloc;
    pw_gguf_orientation orientation;
    uint32_t version;
    uint64_t alignment;
    uint64_t data_offset;
    uint64_t file_size;
    /* File bytes [0, base_size): the whole file when mapped or in memory; the
     * header (everything before the data section) when streaming. */
    const uint8_t *base;
    uint64_t base_size;
    int whole_file; /* base holds every byte of the file */
    void *mapping;  /* munmap on close (NULL for memory images and streaming) */
    size_t mapping_bytes;
    uint8_t *header; /* owned header copy when streaming */
    int fd;          /* streaming only; -1 otherwise */
    int64_t n_tensors;
    int64_t n_kv;
    int64_t n_nodes;
    pw__gguf_tensor *tensors;
    pw__gguf_kv *kvs;
    pw__gguf_node *nodes;
    char *pool;
    uint64_t pool_len;
    pw__gguf_index tensor_index;
    pw__gguf_index key_index;
    uint64_t mtime_ns;       /* the file's modification time (0 for a memory image) */
    uint64_t fingerprint[2]; /* hash of the size, the modification time and every byte before
                                the data section */
};

/* The file's fingerprint (after a successful parse) and tensor t's identity in it
 * (see pw_view.source_id); both {0, 0} in a build without xxHash. */
void pw__gguf_fingerprint(pw_gguf *g);
void pw__gguf_tensor_source_id(const pw_gguf *g, int64_t index, uint64_t id[2]);

/* Memory of a handle, through the allocator of the context it was opened with. */
void *pw__gguf_alloc(const pw_allocator *a, size_t bytes);
void pw__gguf_free(const pw_allocator *a, void *p);
pw_allocator pw__gguf_allocator(const pw_context *ctx);

/* Parse and validate the header held in g (base/base_size/file_size/fd set,
 * whole_file or fd >= 0). Fills every table. Messages name field and offset. */
pw_status pw__gguf_parse(pw_context *ctx, pw_gguf *g);

/* Release everything the parse allocated (not the mapping or fd). */
void pw__gguf_free_tables(pw_gguf *g);

/* Sort entries[0..n) by name (tmp: n scratch entries). A merge sort: the
 * worst case stays O(n log n) and equal names keep file order. */
void pw__gguf_index_sort(const char *pool, pw__gguf_name_entry *entries,
                         pw__gguf_name_entry *tmp, int64_t n);
/* Index of the item named (s, len), or -1. */
int64_t pw__gguf_index_find(const pw_gguf *g, const pw__gguf_index *ix, const char *s,
                            uint64_t len);
/* FNV-1a of a name (the writer's duplicate checks). */
uint64_t pw__gguf_hash(const char *s, uint64_t len);

/* Little-endian loads from unaligned bytes. */
static inline uint16_t pw__le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t pw__le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static inline uint64_t pw__le64(const uint8_t *p) {
    return (uint64_t)pw__le32(p) | ((uint64_t)pw__le32(p + 4) << 32);
}

/* Size in the file of a fixed-size metadata type; 0 for STRING, ARRAY and unknown ids. */
size_t pw__gguf_fixed_size(uint32_t type);

/* Raw little-endian bytes of a fixed-size value handle (checked). */
pw_status pw__gguf_value_payload(pw_context *ctx, const pw_gguf_value *v, const uint8_t **p);

/* Strict UTF-8 (no overlongs, surrogates or code points above U+10FFFF). */
bool pw__utf8_valid(const uint8_t *s, uint64_t len);

#endif
