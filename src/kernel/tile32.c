/* The plan shared by the 32-row GEMV tilings (kernel/tile32.h). */
#include "kernel/tile32.h"

#include "base/internal.h"

#include <inttypes.h>
#include <string.h>

pw_status pw__tile32_plan(pw_context *ctx, const pw__tile32_family *f, pw_format format,
                          int64_t out, int64_t in, pw__pack_desc *d) {
    const pw_format_info *fi = pw_format_get(f->format);
    PW__FAIL_IF(format != f->format, ctx, PW_ERR_UNSUPPORTED, "the %s family packs %s only, not %s",
                f->family, fi->name,
                pw_format_get(format) ? pw_format_get(format)->name : "this format");
    const int64_t bv = fi->block_size;
    PW__FAIL_IF(out < 1 || in < 1 || in % bv != 0, ctx, PW_ERR_SHAPE,
                "%s pack: weight [%" PRId64 ", %" PRId64 "] is not whole %s blocks (in a "
                "multiple of %" PRId64 ")",
                f->family, out, in, fi->name, bv);
    memset(d, 0, sizeof *d);
    d->family = f->family;
    d->format = format;
    d->nr = PW__TILE32_NR;
    d->kr = f->kr;
    d->sr = 1;
    d->group = f->group;
    d->version = f->version;
    d->out = out;
    d->in = in;
    d->in_padded = in;
    d->tiles = (out + PW__TILE32_NR - 1) / PW__TILE32_NR;
    uint64_t tb;
    PW__FAIL_IF(pw__mul_overflow_u64((uint64_t)(in / bv), f->record_bytes, &tb) ||
                    pw__mul_overflow_u64(tb, (uint64_t)d->tiles, &d->bytes),
                ctx, PW_ERR_OVERFLOW,
                "%s pack: packed size of [%" PRId64 ", %" PRId64 "] overflows", f->family, out, in);
    d->tile_bytes = tb;
    return PW_OK;
}
