/*
 * 128-bit content hashes (XXH3-128) for cache keys and file identities, fed
 * with integers in little-endian byte order so that keys are the same on
 * every machine. Without xxHash in the build, pw__hash_available() is 0 and
 * the digests are zero: callers refuse to key anything then.
 */
#ifndef PACKWISE_BASE_HASH_H
#define PACKWISE_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct pw__hash {
    _Alignas(64) unsigned char state[640]; /* an XXH3_state_t (checked in hash.c) */
} pw__hash;

typedef struct pw__digest {
    uint64_t lo, hi;
} pw__digest;

int pw__hash_available(void);
void pw__hash_begin(pw__hash *h);
void pw__hash_bytes(pw__hash *h, const void *p, size_t n);
void pw__hash_u32(pw__hash *h, uint32_t v);
void pw__hash_u64(pw__hash *h, uint64_t v);
/* A string as u32 length then its bytes (no NUL). */
void pw__hash_str(pw__hash *h, const char *s);
pw__digest pw__hash_end(pw__hash *h);

/* 64-bit checksum of a buffer (XXH3-64). */
uint64_t pw__checksum64(const void *p, size_t n);

#endif
