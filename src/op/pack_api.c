/*
 * A family's packed bytes on demand (packwise/fixtures.h): the fixtures of
 * private packed forms, made by the same packers the weights use. Packing
 * here is deterministic and single-form: the first kernel of the list that
 * names the family is its packer (every kernel of a family shares it).
 */
#include "op/op.h"

#include "kernel/qc4w.h"
#include "packwise/fixtures.h"

#include <inttypes.h>
#include <string.h>

static const pw__kernel *family_packer(pw_context *ctx, const char *family, pw_weight_kind kind,
                                       pw_format format, pw_status *st) {
    const pw__kernel *any = NULL;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.layout != PW_LAYOUT_PACKED || k->pack == NULL || k->info.family == NULL ||
            strcmp(k->info.family, family) != 0)
            continue;
        if (k->info.kind == kind && (kind != PW_WEIGHT_BLOCKS || k->info.format == format)) return k;
        any = k;
    }
    *st = any != NULL ? pw__fail(ctx, PW_ERR_UNSUPPORTED, "family %s packs %s weights, not these",
                                 family, pw__kind_name(any->info.kind, any->info.format))
                      : pw__fail(ctx, PW_ERR_NOT_FOUND,
                                 "no packed family named '%s' in this build (pw_kernel_info.family "
                                 "names them)",
                                 family);
    return NULL;
}

static pw_status finish(pw_context *ctx, const pw__kernel *k, const pw__pack_desc *d,
                        const pw__source *src, pw_packed_form *form, void *dst, uint64_t capacity) {
    if (form != NULL)
        *form = (pw_packed_form){k->info.family, d->nr, d->kr, d->sr, d->group, d->version, d->bytes};
    if (dst == NULL) return PW_OK;
    PW__FAIL_IF(capacity < d->bytes, ctx, PW_ERR_INVALID_ARGUMENT,
                "family %s packs %" PRIu64 " bytes, the buffer holds %" PRIu64, k->info.family,
                d->bytes, capacity);
    k->pack(d, src, 0, d->out, dst);
    return PW_OK;
}

pw_status pw_pack_family(pw_context *ctx, const pw_view *w, const char *family, pw_packed_form *form,
                         void *dst, uint64_t capacity) {
    PW__FAIL_IF(w == NULL || family == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_pack_family: NULL argument");
    PW__TRY(pw_view_check(ctx, w));
    PW__FAIL_IF(w->rank != 2 || w->block_axis != 1, ctx, PW_ERR_SHAPE,
                "pw_pack_family: the weight must be a 2-D [out, in] view");
    pw_status st = PW_OK;
    const pw__kernel *k = family_packer(ctx, family, PW_WEIGHT_BLOCKS, w->format, &st);
    if (k == NULL) return st;
    pw__pack_desc d;
    PW__TRY(k->pack_plan(ctx, k, w->format, w->shape[0], w->shape[1], &d));
    const pw__source src = {.view = w};
    return finish(ctx, k, &d, &src, form, dst, capacity);
}

pw_status pw_pack_family_qc4w(pw_context *ctx, const pw_qc4w_weights *w, const char *family,
                              pw_packed_form *form, void *dst, uint64_t capacity) {
    PW__FAIL_IF(w == NULL || family == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_pack_family_qc4w: NULL argument");
    pw_status st = PW_OK;
    const pw__kernel *k = family_packer(ctx, family, PW_WEIGHT_QC4W, PW_FORMAT_COUNT, &st);
    if (k == NULL) return st;
    uint64_t row_bytes, bytes;
    PW__FAIL_IF(w->data == NULL || w->scale == NULL || w->out < 1 || w->in < 1 ||
                    (w->zero_point != 0 && w->zero_point != 8),
                ctx, PW_ERR_INVALID_ARGUMENT, "pw_pack_family_qc4w: bad QC4W weights (see qc4w.h)");
    PW__TRY(pw__qc4w_raw_bytes(ctx, w, &row_bytes, &bytes));
    pw__pack_desc d;
    PW__TRY(k->pack_plan(ctx, k, PW_FORMAT_COUNT, w->out, w->in, &d));
    uint8_t *nk = NULL;
    const uint8_t *rows = w->data;
    if (dst != NULL && (w->flags & PW_QC4W_TRANSPOSED)) {
        nk = pw__calloc(ctx, (size_t)w->out, (size_t)((w->in + 1) / 2), 64);
        PW__FAIL_IF(nk == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_pack_family_qc4w: out of memory");
        pw__qc4w_transpose_rows(w->data, w->in, w->out, 0, w->out, nk);
        rows = nk;
    }
    const pw__qc4w_source q = {rows, w->zero_point, w->scale, w->bias};
    const pw__source src = {.qc4w = &q};
    st = finish(ctx, k, &d, &src, form, dst, capacity);
    pw__free(ctx, nk);
    return st;
}
