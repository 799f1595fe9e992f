/*
 * Packer of the i8g32x8k8 family (layout in i8mm_pack.h). Portable C: it
 * runs once per weight, and the block splitters are the i8g family's, so
 * scale * q + min reproduces the decoded value exactly as in i8g.
 */
#include "kernel/arm/i8mm_pack.h"

#include "base/internal.h"
#include "format/format_internal.h"
#include "kernel/i8g.h"

#include <inttypes.h>
#include <string.h>

pw_status pw__i8mm_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    int has_min = 0;
    const pw_format_info *fi = pw_format_get(format);
    const char *name = fi ? fi->name : "this format";
    PW__FAIL_IF(pw__i8g_group(format, &has_min, NULL) != PW__I8MM_GROUP, ctx, PW_ERR_UNSUPPORTED,
                "the %s family has no form for %s (it needs an i8g group of 32)", PW__I8MM_FAMILY,
                name);
    PW__FAIL_IF(out < 1 || in < 1 || in % fi->block_size != 0, ctx, PW_ERR_SHAPE,
                "%s pack: weight [%" PRId64 ", %" PRId64 "] is not whole %s blocks",
                PW__I8MM_FAMILY, out, in, name);
    memset(d, 0, sizeof *d);
    d->family = PW__I8MM_FAMILY;
    d->format = format;
    d->nr = PW__I8MM_NR;
    d->kr = PW__I8MM_KR;
    d->sr = 1;
    d->group = PW__I8MM_GROUP;
    d->version = PW__I8MM_VERSION;
    d->out = out;
    d->in = in;
    d->in_padded = in; /* every block of these formats is a whole number of groups */
    d->tiles = (out + PW__I8MM_NR - 1) / PW__I8MM_NR;
    uint64_t tb;
    const uint64_t groups = (uint64_t)(in / PW__I8MM_GROUP);
    PW__FAIL_IF(pw__mul_overflow_u64(groups, pw__i8mm_group_bytes(has_min), &tb) ||
                    pw__mul_overflow_u64(tb, (uint64_t)d->tiles, &d->bytes),
                ctx, PW_ERR_OVERFLOW,
                "%s pack: packed size of [%" PRId64 ", %" PRId64 "] overflows", PW__I8MM_FAMILY,
                out, in);
    d->tile_bytes = tb;
    return PW_OK;
}

void pw__i8mm_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1,
                   uint8_t *dst) {
    int has_min = 0;
    pw__i8g_group(d->format, &has_min, NULL);
    const int bs = pw__format(d->format)->info.block_size;
    const int64_t bpr = d->in / bs;
    const int groups_per_block = bs / PW__I8MM_GROUP;
    const uint64_t rec = pw__i8mm_group_bytes(has_min);
    int8_t q[256];
    float s[16], m[16];
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8MM_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__I8MM_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__I8MM_NR && t0 + r < d->out; ++r) {
            /* row r sits in pair r / 2, half r % 2 of every step */
            const int row_off = 16 * (r / 2) + 8 * (r % 2);
            for (int64_t b = 0; b < bpr; ++b) {
                memset(m, 0, sizeof m);
                pw__i8g_split(d->format, pw_view_block_ptr(w, t0 + r, b), q, s, m);
                for (int j = 0; j < groups_per_block; ++j) {
                    uint8_t *gr = tile + (uint64_t)(b * groups_per_block + j) * rec;
                    for (int st = 0; st < PW__I8MM_GROUP / PW__I8MM_KR; ++st)
                        memcpy(gr + 64 * st + row_off, q + j * PW__I8MM_GROUP + PW__I8MM_KR * st,
                               PW__I8MM_KR);
                    uint8_t *meta = gr + PW__I8MM_GROUP * PW__I8MM_NR;
                    memcpy(meta + 4 * r, &s[j], 4);
                    if (has_min) memcpy(meta + 32 + 4 * r, &m[j], 4);
                }
            }
        }
    }
}
