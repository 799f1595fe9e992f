/* Internals of the GGUF writer shared by its metadata half and its tensor/output half. */
#ifndef PACKWISE_GGUF_WRITER_INTERNAL_H
#define PACKWISE_GGUF_WRITER_INTERNAL_H

#include "gguf/gguf_internal.h"

typedef struct pw__gguf_dbuf {
    uint8_t *p;
    uint64_t len, cap;
} pw__gguf_dbuf;

typedef struct pw__gguf_wtensor {
    char name[PW__GGUF_MAX_NAME + 1];
    uint32_t gguf_type;
    int32_t n_dims;
    int64_t ne[PW_MAX_RANK];
    const void *data; /* borrowed; NULL = zeros */
    uint64_t bytes;
} pw__gguf_wtensor;

typedef struct pw__gguf_frame {
    uint64_t count_at; /* where the array's count is patched in */
    uint64_t count;
    pw_gguf_type element;
} pw__gguf_frame;

/* Open-addressing set of item indices by name (slots hold index + 1, 0 = empty),
 * so duplicate checks stay O(1) for models with many tensors. */
typedef struct pw__gguf_nameset {
    int64_t *slots;
    uint64_t mask;  /* capacity - 1 (a power of two), or 0 before the first add */
    int64_t count;
} pw__gguf_nameset;

struct pw_gguf_writer {
    pw_context *ctx;
    pw_allocator alloc;
    pw__gguf_dbuf kv; /* the encoded metadata section */
    int64_t n_kv;
    pw__gguf_dbuf keys; /* (u64 offset, u64 length) of each key in `kv` */
    pw__gguf_nameset key_set;
    pw__gguf_nameset tensor_set;
    int64_t alignment_at; /* offset in `kv` of general.alignment's value, or -1 */
    uint32_t alignment;
    pw__gguf_wtensor *tensors;
    int64_t n_tensors, tensor_cap;
    pw__gguf_frame stack[PW__GGUF_MAX_DEPTH];
    int depth; /* open arrays */
};

/* Growable byte buffer through the writer's allocator; failures name the writer. */
pw_status pw__gguf_dbuf_reserve(pw_gguf_writer *w, pw__gguf_dbuf *b, uint64_t extra);
pw_status pw__gguf_dbuf_put(pw_gguf_writer *w, pw__gguf_dbuf *b, const void *src, uint64_t n);
/* Append the low n bytes of v, little-endian. */
pw_status pw__gguf_dbuf_put_le(pw_gguf_writer *w, pw__gguf_dbuf *b, uint64_t v, size_t n);
void pw__gguf_le_bytes(uint8_t *dst, uint64_t v, size_t n);

/* Name of item i of a set: a key (KEY_SET) or a tensor name (TENSOR_SET). */
typedef enum pw__gguf_set_kind { PW__GGUF_KEY_SET, PW__GGUF_TENSOR_SET } pw__gguf_set_kind;
/* Index of the item named (s, len), or -1. */
int64_t pw__gguf_nameset_find(const pw_gguf_writer *w, pw__gguf_set_kind kind, const char *s,
                              uint64_t len);
/* Add item i, whose name is not in the set yet. */
pw_status pw__gguf_nameset_add(pw_gguf_writer *w, pw__gguf_set_kind kind, int64_t i);

#endif
