/* Random valid blocks for measurements (pw_format_synthesize, format.h). */
#include "base/internal.h"
#include "format/blocks.h"
#include "format/format_internal.h"

#include <string.h>

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Byte offsets of a block's fp16 scale fields (d, then dmin where the format has one). */
static int scale_fields(pw_format f, size_t off[2]) {
    switch (f) {
    case PW_FORMAT_Q4_0: off[0] = offsetof(pw__block_q4_0, d); return 1;
    case PW_FORMAT_Q8_0: off[0] = offsetof(pw__block_q8_0, d); return 1;
    case PW_FORMAT_IQ4_NL: off[0] = offsetof(pw__block_iq4_nl, d); return 1;
    case PW_FORMAT_Q6_K: off[0] = offsetof(pw__block_q6_K, d); return 1;
    case PW_FORMAT_Q4_K:
        off[0] = offsetof(pw__block_q4_K, d);
        off[1] = offsetof(pw__block_q4_K, dmin);
        return 2;
    case PW_FORMAT_Q5_K:
        off[0] = offsetof(pw__block_q5_K, d);
        off[1] = offsetof(pw__block_q5_K, dmin);
        return 2;
    default: return 0;
    }
}

pw_status pw_format_synthesize(pw_context *ctx, pw_format f, void *dst, size_t blocks, uint64_t seed) {
    const pw__format_traits *t = pw__format(f);
    size_t off[2];
    const int nscales = t != NULL ? scale_fields(f, off) : 0;
    PW__FAIL_IF(nscales == 0, ctx, PW_ERR_UNSUPPORTED,
                "pw_format_synthesize: no synthetic blocks for %s (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, "
                "IQ4_NL)",
                t ? t->info.name : "an unknown format");
    PW__FAIL_IF(dst == NULL && blocks > 0, ctx, PW_ERR_INVALID_ARGUMENT, "pw_format_synthesize: dst is NULL");
    size_t bytes;
    PW__FAIL_IF(__builtin_mul_overflow(blocks, (size_t)t->info.block_bytes, &bytes), ctx, PW_ERR_OVERFLOW,
                "pw_format_synthesize: %zu blocks overflow", blocks);
    uint8_t *p = dst;
    uint64_t s = seed;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        const uint64_t v = next(&s);
        memcpy(p + i, &v, 8);
    }
    for (size_t i = bytes & ~(size_t)7; i < bytes; ++i) p[i] = (uint8_t)next(&s);
    for (size_t b = 0; b < blocks; ++b) {
        uint8_t *blk = p + b * (size_t)t->info.block_bytes;
        const uint16_t d = pw__f32_to_f16(0.001f + (float)(next(&s) % 1000) * 1e-5f);
        for (int k = 0; k < nscales; ++k) memcpy(blk + off[k], &d, 2);
    }
    return PW_OK;
}
