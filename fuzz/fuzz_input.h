/*
 * What the fuzz targets share: PROPERTY (an invariant that must hold; abort() so
 * libFuzzer and the replay driver report the input) and a reader that takes
 * little-endian integers from the input, zeros once it is used up.
 */
#ifndef PACKWISE_FUZZ_INPUT_H
#define PACKWISE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define PROPERTY(cond)                                                                      \
    do {                                                                                    \
        if (!(cond)) abort();                                                               \
    } while (0)

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

/* The next `bytes` bytes (at most 8) as a little-endian integer. */
static inline uint64_t take(input *in, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
        uint64_t b = 0;
        if (in->n > 0) {
            b = *in->p++;
            --in->n;
        }
        v |= b << (8 * i);
    }
    return v;
}

#endif
