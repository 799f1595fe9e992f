/* XXH3 behind one small interface (hash.h). */
#include "base/hash.h"

#include <string.h>

#if defined(PW_HAVE_XXHASH)
#define XXH_INLINE_ALL
#include <xxhash.h>
_Static_assert(sizeof(XXH3_state_t) <= sizeof(((pw__hash *)0)->state), "pw__hash holds an XXH3 state");
_Static_assert(_Alignof(XXH3_state_t) <= 64, "pw__hash is aligned for an XXH3 state");
#define STATE(h) ((XXH3_state_t *)(void *)(h)->state)
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "keys hash floats and packed bytes as little-endian memory"
#endif

int pw__hash_available(void) {
#if defined(PW_HAVE_XXHASH)
    return 1;
#else
    return 0;
#endif
}

void pw__hash_begin(pw__hash *h) {
#if defined(PW_HAVE_XXHASH)
    XXH3_128bits_reset(STATE(h));
#else
    memset(h, 0, sizeof *h);
#endif
}

void pw__hash_bytes(pw__hash *h, const void *p, size_t n) {
#if defined(PW_HAVE_XXHASH)
    if (n) XXH3_128bits_update(STATE(h), p, n);
#else
    (void)h, (void)p, (void)n;
#endif
}

void pw__hash_u32(pw__hash *h, uint32_t v) {
    uint8_t b[4];
    for (int i = 0; i < 4; ++i) b[i] = (uint8_t)(v >> (8 * i));
    pw__hash_bytes(h, b, 4);
}

void pw__hash_u64(pw__hash *h, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = (uint8_t)(v >> (8 * i));
    pw__hash_bytes(h, b, 8);
}

void pw__hash_str(pw__hash *h, const char *s) {
    const size_t n = s ? strlen(s) : 0;
    pw__hash_u32(h, (uint32_t)n);
    pw__hash_bytes(h, s, n);
}

pw__digest pw__hash_end(pw__hash *h) {
    pw__digest d = {0, 0};
#if defined(PW_HAVE_XXHASH)
    const XXH128_hash_t x = XXH3_128bits_digest(STATE(h));
    d.lo = x.low64;
    d.hi = x.high64;
#else
    (void)h;
#endif
    return d;
}

uint64_t pw__checksum64(const void *p, size_t n) {
#if defined(PW_HAVE_XXHASH)
    return XXH3_64bits(p, n);
#else
    (void)p, (void)n;
    return 0;
#endif
}
