/*
 * QC4W weights through the operator (packwise/qc4w.h): validate the raw
 * descriptor, plan like any weight, and pack the one form now, while the raw
 * arrays are borrowed (a transposed source is first converted to N x K,
 * nibble by nibble: one adapter event).
 */
#include "op/op.h"

#include "cache/cache_internal.h"
#include "kernel/qc4w.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void pw_qc4w_weights_init(pw_qc4w_weights *w) {
    if (w == NULL) return;
    memset(w, 0, sizeof *w);
    w->struct_size = sizeof *w;
}

static const char *wname(const pw_qc4w_weights *w) { return w->name ? w->name : "(unnamed)"; }

static pw_status check_weights(pw_context *ctx, const pw_qc4w_weights *w, uint64_t *row_bytes,
                               uint64_t *bytes) {
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_weight_create_qc4w: weights is NULL");
    PW__FAIL_IF(w->struct_size == 0 || w->struct_size > sizeof *w, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_create_qc4w: weights.struct_size is %zu; use pw_qc4w_weights_init",
                w->struct_size);
    PW__FAIL_IF(w->out < 1 || w->in < 1, ctx, PW_ERR_SHAPE,
                "QC4W weights '%s': N (out) = %" PRId64 " and K (in) = %" PRId64
                " must both be >= 1",
                wname(w), w->out, w->in);
    PW__FAIL_IF(w->zero_point != 0 && w->zero_point != 8, ctx, PW_ERR_INVALID_ARGUMENT,
                "QC4W weights '%s': kernel zero point %d is not supported; use 0 (signed nibbles "
                "-8..7) or 8 (unsigned nibbles 0..15, value - 8)",
                wname(w), (int)w->zero_point);
    PW__FAIL_IF((w->flags & ~(uint32_t)PW_QC4W_TRANSPOSED) != 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "QC4W weights '%s': unknown flags 0x%x", wname(w),
                (unsigned)(w->flags & ~(uint32_t)PW_QC4W_TRANSPOSED));
    PW__FAIL_IF(w->data == NULL || w->scale == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "QC4W weights '%s': data and scale must be non-NULL (bias may be NULL)", wname(w));
    PW__TRY(pw__qc4w_raw_bytes(ctx, w, row_bytes, bytes));
    PW__FAIL_IF((uint64_t)w->out > SIZE_MAX / (2 * sizeof(float)), ctx, PW_ERR_OVERFLOW,
                "QC4W weights '%s': N = %" PRId64 " overflows", wname(w), w->out);
    for (int64_t n = 0; n < w->out; ++n) {
        PW__FAIL_IF(!isfinite(w->scale[n]), ctx, PW_ERR_INVALID_ARGUMENT,
                    "QC4W weights '%s': scale[%" PRId64 "] = %g is not finite", wname(w), n,
                    (double)w->scale[n]);
        PW__FAIL_IF(w->bias != NULL && !isfinite(w->bias[n]), ctx, PW_ERR_INVALID_ARGUMENT,
                    "QC4W weights '%s': bias[%" PRId64 "] = %g is not finite", wname(w), n,
                    (double)w->bias[n]);
    }
    return PW_OK;
}

typedef struct qc4w_job {
    pw__raw_job raw; /* first: the shared creation fills it */
    pw_qc4w_weights w;
    uint64_t row_bytes;
} qc4w_job;

static pw__digest qc4w_key(const pw__raw_job *raw) {
    const qc4w_job *j = (const qc4w_job *)(const void *)raw;
    return pw__cache_qc4w_content(&j->w, j->row_bytes);
}

/* Pack the raw weights (the cache's pack callback: on a hit nothing of this runs). A
 * transposed source is converted to N x K first, nibble by nibble: one adapter event. */
static pw_status pack_qc4w_cb(pw_context *ctx, void *user, uint8_t *dst) {
    const qc4w_job *j = user;
    const pw_qc4w_weights *w = &j->w;
    const uint8_t *rows = w->data;
    uint8_t *nk = NULL;
    if (w->flags & PW_QC4W_TRANSPOSED) {
        PW__TRY(pw__int4_transpose(ctx, j->raw.h, w->data, w->in, w->out, "qc4w_kxn", "qc4w_nxk", &nk));
        rows = nk;
    }
    const pw__qc4w_source q = {rows, w->zero_point, w->scale, w->bias};
    const pw__source src = {.qc4w = &q};
    const pw_status st = pw__pack_form(ctx, j->raw.f->packer, &j->raw.f->desc, &src, j->raw.h->name,
                                       "qc4w_nxk", dst);
    pw__free(ctx, nk);
    return st;
}

pw_status pw_weight_create_qc4w(pw_context *ctx, const pw_qc4w_weights *weights,
                                const pw_weight_options *options, pw_weight **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_create_qc4w: ctx and out must be non-NULL");
    *out = NULL;
    uint64_t row_bytes, bytes;
    PW__TRY(check_weights(ctx, weights, &row_bytes, &bytes));
    qc4w_job job;
    memset(&job, 0, sizeof job);
    pw_qc4w_weights_init(&job.w);
    memcpy(&job.w, weights, weights->struct_size);
    job.row_bytes = row_bytes;
    const pw__raw_spec spec = {PW_WEIGHT_QC4W, "pw_weight_create_qc4w", wname(&job.w), job.w.out,
                               job.w.in, 0, bytes + sizeof(float) * (uint64_t)job.w.out,
                               &job.w.bias, qc4w_key, pack_qc4w_cb, &job.raw};
    return pw__weight_create_raw(ctx, &spec, options, out);
}
