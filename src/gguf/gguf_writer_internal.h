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

struct pw_gguf_writer {
    pw_context *ctx;
    pw_allocator alloc;
    pw__gguf_dbuf kv;            /* the encoded metadata section */
    int64_t n_kv;
    pw__gguf_dbuf keys;          /* (u64 offset, u64 length) of each key in `kv`, for duplicates */
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

#endif
