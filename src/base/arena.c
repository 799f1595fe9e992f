/*
 * Arena: a list of chunks from the context's allocator. Every allocation is
 * 64-byte aligned (one cache line, and the widest vector load). Large
 * requests get a chunk of their own so a prepacked weight is not rounded up
 * to a doubling.
 */
#include "internal.h"

#include <string.h>

#define PW__ARENA_ALIGN 64u
#define PW__ARENA_CHUNK (1u << 20)

typedef struct chunk {
    struct chunk *next;
    size_t capacity; /* usable bytes after the header */
    size_t used;
} chunk;

/* Header padded so the payload starts 64-byte aligned. */
#define PW__CHUNK_HEADER ((sizeof(chunk) + PW__ARENA_ALIGN - 1) & ~(size_t)(PW__ARENA_ALIGN - 1))

struct pw_arena {
    pw_context *ctx;
    chunk *head;
    uint64_t used;
};

pw_status pw_arena_create(pw_context *ctx, pw_arena **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_arena_create: NULL argument");
    *out = NULL;
    pw_arena *a = pw__alloc(ctx, sizeof *a, 16);
    PW__FAIL_IF(a == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_arena_create: out of memory");
    a->ctx = ctx;
    a->head = NULL;
    a->used = 0;
    *out = a;
    return PW_OK;
}

void pw_arena_reset(pw_arena *arena) {
    if (arena == NULL) return;
    chunk *c = arena->head;
    while (c) {
        chunk *next = c->next;
        pw__free(arena->ctx, c);
        c = next;
    }
    arena->head = NULL;
    arena->used = 0;
}

void pw_arena_destroy(pw_arena *arena) {
    if (arena == NULL) return;
    pw_arena_reset(arena);
    pw__free(arena->ctx, arena);
}

void *pw_arena_alloc(pw_arena *arena, size_t bytes) {
    if (arena == NULL) return NULL;
    size_t rounded;
    if (bytes > SIZE_MAX - PW__ARENA_ALIGN) {
        pw__fail(arena->ctx, PW_ERR_OVERFLOW, "pw_arena_alloc: %zu bytes overflows", bytes);
        return NULL;
    }
    rounded = (bytes + PW__ARENA_ALIGN - 1) & ~(size_t)(PW__ARENA_ALIGN - 1);
    chunk *c = arena->head;
    if (c == NULL || c->capacity - c->used < rounded) {
        size_t cap = rounded > PW__ARENA_CHUNK ? rounded : PW__ARENA_CHUNK;
        if (cap > SIZE_MAX - PW__CHUNK_HEADER) {
            pw__fail(arena->ctx, PW_ERR_OVERFLOW, "pw_arena_alloc: %zu bytes overflows", bytes);
            return NULL;
        }
        chunk *n = pw__alloc(arena->ctx, PW__CHUNK_HEADER + cap, PW__ARENA_ALIGN);
        if (n == NULL) {
            pw__fail(arena->ctx, PW_ERR_OUT_OF_MEMORY, "pw_arena_alloc: cannot allocate %zu bytes",
                     bytes);
            return NULL;
        }
        n->capacity = cap;
        n->used = 0;
        if (c != NULL && rounded > PW__ARENA_CHUNK) {
            /* A big private chunk goes behind the head so the head's free space stays usable. */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            arena->head = n;
        }
        c = n;
    }
    void *p = (unsigned char *)c + PW__CHUNK_HEADER + c->used;
    c->used += rounded;
    arena->used += bytes;
    return p;
}

uint64_t pw_arena_used(const pw_arena *arena) { return arena ? arena->used : 0; }
