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

typedef struct transpose_job {
    const pw_qc4w_weights *w;
    uint8_t *dst;
    int64_t rows_per_task;
} transpose_job;

static void transpose_task(void *p, size_t t) {
    const transpose_job *j = p;
    const int64_t n0 = (int64_t)t * j->rows_per_task;
    const int64_t n1 = n0 + j->rows_per_task < j->w->out ? n0 + j->rows_per_task : j->w->out;
    pw__qc4w_transpose_rows(j->w->data, j->w->in, j->w->out, n0, n1, j->dst);
}

typedef struct qc4w_job {
    pw_weight *h;
    pw__form *f;
    const pw_qc4w_weights *w;
} qc4w_job;

/* Pack the raw weights (the cache's pack callback: on a hit nothing of this runs). A
 * transposed source is converted to N x K first, nibble by nibble: one adapter event. */
static pw_status pack_qc4w_cb(pw_context *ctx, void *user, uint8_t *dst) {
    const qc4w_job *j = user;
    const pw_qc4w_weights *w = j->w;
    const uint8_t *rows = w->data;
    uint8_t *nk = NULL;
    if (w->flags & PW_QC4W_TRANSPOSED) {
        const uint64_t nk_bytes = (uint64_t)(w->in + 1) / 2 * (uint64_t)w->out;
        nk = pw__calloc(ctx, 1, (size_t)nk_bytes, 64);
        PW__FAIL_IF(nk == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                    "QC4W weights '%s': cannot allocate %" PRIu64 " bytes to transpose", wname(w),
                    nk_bytes);
        transpose_job tj = {w, nk, 0};
        const int64_t tasks = 8 * (int64_t)pw__threads(ctx);
        tj.rows_per_task = (w->out + tasks - 1) / tasks;
        /* Destination rows are disjoint per task: any row split is safe. */
        pw__parallel_for(ctx, transpose_task, &tj, (size_t)((w->out + tj.rows_per_task - 1) / tj.rows_per_task));
        pw_trace_event e;
        memset(&e, 0, sizeof e);
        e.kind = PW_TRACE_ADAPTER;
        e.tensor = j->h->name;
        e.bytes = nk_bytes;
        e.from = "qc4w_kxn";
        e.to = "qc4w_nxk";
        pw__trace(ctx, &e);
        rows = nk;
    }
    const pw__qc4w_source q = {rows, w->zero_point, w->scale, w->bias};
    const pw__source src = {NULL, &q};
    const pw_status st = pw__pack_form(ctx, j->f->packer, &j->f->desc, &src, j->h->name, "qc4w_nxk", dst);
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
    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    memcpy(&w, weights, weights->struct_size);
    pw_weight_options o;
    PW__TRY(pw__take_options(ctx, options, &o, "pw_weight_create_qc4w"));
    PW__FAIL_IF(o.policy == PW_MEMORY_IN_PLACE, ctx, PW_ERR_UNSUPPORTED,
                "QC4W weights '%s': the in_place policy holds no copy, and no kernel reads raw "
                "QC4W weights (they are borrowed only while the weight is created); use compact",
                wname(&w));
    PW__FAIL_IF(o.bias != NULL && w.bias != NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "QC4W weights '%s': a bias in the descriptor and in the options; give one", wname(&w));
    if (w.bias == NULL) w.bias = o.bias; /* packed into the tiles with the scales */
    o.bias = NULL;
    const pw__kernel *forced;
    PW__TRY(pw__forced_kernel(ctx, o.kernel, PW_WEIGHT_QC4W, PW_FORMAT_COUNT, w.in, &forced));

    pw_weight *h = NULL;
    pw_status st = pw__weight_new(ctx, PW_WEIGHT_QC4W, wname(&w), w.out, w.in, &o, &h);
    if (st == PW_OK) {
        h->view.format = PW_FORMAT_COUNT;
        h->source_bytes = bytes + sizeof(float) * (uint64_t)w.out * (w.bias != NULL ? 2u : 1u);
        st = pw__plan_make(ctx, h, o.policy, o.serves, forced);
    }
    /* One form serves every class (QC4W kernels serve any n): pack it now. */
    pw__form *f = st == PW_OK && h->plan.nforms > 0 ? &h->plan.forms[0] : NULL;
    if (st == PW_OK && (f == NULL || f->kind != PW__FORM_PACKED || h->plan.nforms != 1))
        st = pw__fail(ctx, PW_ERR_UNSUPPORTED, "QC4W weights '%s': no single packed form serves "
                      "every batch size here", wname(&w));
    if (st == PW_OK) {
        const pw__digest key = h->cache != NULL ? pw__cache_qc4w_content(&w, row_bytes) : (pw__digest){0, 0};
        qc4w_job job = {h, f, &w};
        st = pw__ready_packed(ctx, h, f, key, pack_qc4w_cb, &job);
    }
    for (int c = 0; c < 2 && st == PW_OK; ++c)
        if (h->plan.k[c] != NULL) st = pw__weight_ready(ctx, h, c); /* checks and announces */
    if (st != PW_OK) {
        pw_weight_destroy(h);
        return st;
    }
    *out = h;
    return PW_OK;
}
