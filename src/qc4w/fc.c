/*
 * The QC4W fully-connected operator: validate the raw weights, choose the
 * kernel, pack once (or share through the weights cache), then per run
 * quantize X to QD8 rows in scratch the operator keeps and run the kernel
 * over N tiles x batch panels on the context's threads.
 */
#include "qc4w/qc4w.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

struct pw_qc4w_fc {
    pw_context *ctx;
    const pw__qc4w_kernel *kernel;
    pw__pack_desc desc;
    const uint8_t *packed;   /* own or the cache's */
    uint8_t *own;            /* NULL when the cache holds the bytes */
    pw_weights_cache *cache; /* held while the operator lives */
    float min, max;
    uint8_t *lhs;            /* QD8 rows */
    size_t lhs_bytes;
    char name[64];
};

void pw_qc4w_weights_init(pw_qc4w_weights *w) {
    if (w == NULL) return;
    memset(w, 0, sizeof *w);
    w->struct_size = sizeof *w;
}

void pw_qc4w_fc_options_init(pw_qc4w_fc_options *o) {
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->min = -INFINITY;
    o->max = INFINITY;
}

static const char *wname(const pw_qc4w_weights *w) { return w->name ? w->name : "(unnamed)"; }

static pw_status check_weights(pw_context *ctx, const pw_qc4w_weights *w) {
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_qc4w_fc_create: weights is NULL");
    PW__FAIL_IF(w->struct_size == 0 || w->struct_size > sizeof *w, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qc4w_fc_create: weights.struct_size is %zu; use pw_qc4w_weights_init",
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
    uint64_t row_bytes, bytes;
    PW__TRY(pw__qc4w_raw_bytes(ctx, w, &row_bytes, &bytes));
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

static void trace_adapter(pw_context *ctx, const char *tensor, uint64_t bytes, const char *from,
                          const char *to) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_ADAPTER;
    e.tensor = tensor;
    e.bytes = bytes;
    e.from = from;
    e.to = to;
    pw__trace(ctx, &e);
}

typedef struct pack_job {
    const pw_qc4w_weights *w;
    const pw__pack_desc *desc;
    const uint8_t *nk;  /* N x K nibbles */
    uint8_t *tmp;       /* the transposed source's N x K copy, or NULL */
    uint8_t *dst;
    int64_t tiles_per_task;
} pack_job;

static void transpose_task(void *p, size_t t) {
    const pack_job *j = p;
    const int64_t rows = j->tiles_per_task * j->desc->nr;
    const int64_t n0 = (int64_t)t * rows;
    const int64_t n1 = n0 + rows < j->w->out ? n0 + rows : j->w->out;
    pw__qc4w_transpose_rows(j->w->data, j->w->in, j->w->out, n0, n1, j->tmp);
}

static void pack_task(void *p, size_t t) {
    const pack_job *j = p;
    const int64_t rows = j->tiles_per_task * j->desc->nr;
    const int64_t n0 = (int64_t)t * rows;
    const int64_t n1 = n0 + rows < j->w->out ? n0 + rows : j->w->out;
    pw__qc4w_pack(j->desc, j->nk, j->w->zero_point, j->w->scale, j->w->bias, n0, n1, j->dst);
}

/* Pack into dst (desc->bytes, 64-byte aligned): one adapter event per conversion. */
static pw_status pack_into(pw_context *ctx, void *user, uint8_t *dst) {
    pack_job *j = user;
    const pw_qc4w_weights *w = j->w;
    const int64_t want = 8 * (int64_t)pw_context_threads(ctx);
    j->tiles_per_task = (j->desc->tiles + want - 1) / want;
    const size_t tasks = (size_t)((j->desc->tiles + j->tiles_per_task - 1) / j->tiles_per_task);
    j->nk = w->data;
    j->dst = dst;
    if (w->flags & PW_QC4W_TRANSPOSED) {
        uint64_t row_bytes = (uint64_t)(w->in + 1) / 2, bytes = row_bytes * (uint64_t)w->out;
        j->tmp = pw__calloc(ctx, 1, (size_t)bytes, 64);
        PW__FAIL_IF(j->tmp == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                    "QC4W weights '%s': cannot allocate %" PRIu64 " bytes to transpose", wname(w),
                    bytes);
        pw__parallel_for(ctx, transpose_task, j, tasks);
        trace_adapter(ctx, w->name, bytes, "qc4w_kxn", "qc4w_nxk");
        j->nk = j->tmp;
    }
    pw__parallel_for(ctx, pack_task, j, tasks);
    pw__free(ctx, j->tmp);
    j->tmp = NULL;
    trace_adapter(ctx, w->name, j->desc->bytes, "qc4w_nxk", j->desc->family);
    return PW_OK;
}

static pw_status choose_kernel(pw_context *ctx, const pw_qc4w_weights *w, const char *forced,
                               const pw__qc4w_kernel **out) {
    const pw__qc4w_kernel *k;
    if (forced != NULL) {
        k = pw__qc4w_kernel_find(forced);
        PW__FAIL_IF(k == NULL, ctx, PW_ERR_NOT_FOUND,
                    "no QC4W kernel named '%s' in this build (e.g. qc4w_n16k8s2_scalar)", forced);
        PW__FAIL_IF(!pw__qc4w_kernel_usable(ctx, k), ctx, PW_ERR_UNSUPPORTED,
                    "kernel %s needs CPU features this context does not allow (isa %s; check "
                    "PACKWISE_ISA and the CPU)",
                    k->name, pw_isa_name(pw_context_isa(ctx)));
        PW__FAIL_IF(w->in > k->max_k, ctx, PW_ERR_UNSUPPORTED,
                    "kernel %s sums exactly in int32 only up to K = %" PRId64 "; '%s' has K = %" PRId64,
                    k->name, k->max_k, wname(w), w->in);
    } else {
        k = pw__qc4w_kernel_best(ctx, w->in);
        PW__FAIL_IF(k == NULL, ctx, PW_ERR_UNSUPPORTED, "no QC4W kernel for K = %" PRId64, w->in);
    }
    *out = k;
    return PW_OK;
}

pw_status pw_qc4w_fc_create(pw_context *ctx, const pw_qc4w_weights *weights,
                            const pw_qc4w_fc_options *options, pw_qc4w_fc **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qc4w_fc_create: ctx and out must be non-NULL");
    *out = NULL;
    PW__TRY(check_weights(ctx, weights));
    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    memcpy(&w, weights, weights->struct_size);
    pw_qc4w_fc_options o;
    pw_qc4w_fc_options_init(&o);
    if (options != NULL) {
        PW__FAIL_IF(options->struct_size == 0 || options->struct_size > sizeof o, ctx,
                    PW_ERR_INVALID_ARGUMENT,
                    "pw_qc4w_fc_create: options.struct_size is %zu; use pw_qc4w_fc_options_init",
                    options->struct_size);
        memcpy(&o, options, options->struct_size);
    }
    PW__FAIL_IF(isnan(o.min) || isnan(o.max) || o.min > o.max, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qc4w_fc_create '%s': clamp [%g, %g] must be ordered and not NaN", wname(&w),
                (double)o.min, (double)o.max);
    const pw__qc4w_kernel *k = NULL;
    PW__TRY(choose_kernel(ctx, &w, o.kernel, &k));
    pw__pack_desc desc;
    PW__TRY(pw__qc4w_kernel_plan(ctx, k, w.out, w.in, &desc));
    pw__qc4w_key key;
    if (o.cache != NULL)
        PW__TRY(pw__qc4w_key_compute(ctx, &w, k->family, k->nr, k->kr, k->sr, desc.version, &key));

    pw_qc4w_fc *op = pw__calloc(ctx, 1, sizeof *op, 64);
    PW__FAIL_IF(op == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_qc4w_fc_create: out of memory");
    op->ctx = ctx;
    op->kernel = k;
    op->desc = desc;
    op->min = o.min;
    op->max = o.max;
    pw__strlcpy(op->name, wname(&w), sizeof op->name);

    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_KERNEL;
    e.tensor = w.name;
    e.kernel = k->name;
    e.key = k->family;
    pw__trace(ctx, &e);

    pack_job job;
    memset(&job, 0, sizeof job);
    job.w = &w;
    job.desc = &op->desc;
    pw_status st;
    if (o.cache != NULL) {
        int hit = 0;
        st = pw__weights_cache_get(ctx, o.cache, &key, &op->desc, pack_into, &job, &op->packed, &hit);
        if (st == PW_OK) {
            op->cache = o.cache;
            memset(&e, 0, sizeof e);
            e.kind = PW_TRACE_CACHE;
            e.tensor = w.name;
            e.reason = hit ? "hit: packed weights shared" : "miss: packed and stored";
            pw__trace(ctx, &e);
        }
    } else {
        op->own = pw__alloc(ctx, (size_t)desc.bytes, 64);
        st = op->own == NULL ? pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                                        "QC4W weights '%s': cannot allocate %" PRIu64
                                        " bytes of packed weights",
                                        wname(&w), desc.bytes)
                             : pack_into(ctx, &job, op->own);
        op->packed = op->own;
    }
    if (st != PW_OK) {
        pw__free(ctx, op->own);
        pw__free(ctx, op);
        return st;
    }
    *out = op;
    return PW_OK;
}

void pw_qc4w_fc_destroy(pw_qc4w_fc *op) {
    if (op == NULL) return;
    pw__weights_cache_release(op->cache);
    pw__free(op->ctx, op->own);
    pw__free(op->ctx, op->lhs);
    pw__free(op->ctx, op);
}

const char *pw_qc4w_fc_kernel(const pw_qc4w_fc *op) { return op ? op->kernel->name : ""; }

uint64_t pw_qc4w_fc_packed_bytes(const pw_qc4w_fc *op) { return op ? op->desc.bytes : 0; }

const uint8_t *pw__qc4w_fc_packed(const pw_qc4w_fc *op) { return op->packed; }

typedef struct quant_job {
    pw__qd8_row_fn quantize;
    const float *x;
    int64_t k, kp, rows_per_task, batch;
    uint8_t *lhs, *panels;
    size_t row_bytes;
    int32_t panel_rows;
} quant_job;

static void quant_task(void *p, size_t t) {
    const quant_job *j = p;
    const int64_t m0 = (int64_t)t * j->rows_per_task;
    const int64_t m1 = m0 + j->rows_per_task < j->batch ? m0 + j->rows_per_task : j->batch;
    for (int64_t m = m0; m < m1; ++m)
        j->quantize(j->x + m * j->k, j->k, j->kp, j->lhs + (size_t)m * j->row_bytes);
    if (j->panels != NULL)
        pw__qd8_panel_rows(j->lhs, j->row_bytes, j->kp, j->panel_rows, m0, m1, j->panels);
}

static pw_status run(pw_context *ctx, pw_qc4w_fc *op, int64_t batch, const float *x, void *y,
                     int f16) {
    PW__FAIL_IF(ctx == NULL || op == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qc4w_fc_run: ctx and op must be non-NULL");
    PW__FAIL_IF(op->ctx != ctx, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qc4w_fc_run '%s': the operator belongs to another context", op->name);
    PW__FAIL_IF(x == NULL || y == NULL || batch < 1, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qc4w_fc_run '%s': x and y must be non-NULL and batch >= 1 (batch = %" PRId64 ")",
                op->name, batch);
    const int64_t k = op->desc.in, kp = op->desc.in_padded;
    const size_t row_bytes = pw__qd8_row_bytes(kp);
    /* Rows, then (for a kernel that reads them, batch > 1) panels, both 64-byte aligned. */
    const int32_t pr = batch > 1 ? op->kernel->lhs_panel : 0;
    size_t rows_bytes, need = 0;
    PW__FAIL_IF(__builtin_mul_overflow(row_bytes, (uint64_t)batch, &rows_bytes) ||
                    (pr > 0 && __builtin_add_overflow(rows_bytes, pw__qd8_panels_bytes(batch, kp, pr),
                                                      &need)),
                ctx, PW_ERR_OVERFLOW,
                "pw_qc4w_fc_run '%s': activation scratch for batch %" PRId64 " overflows",
                op->name, batch);
    if (pr == 0) need = rows_bytes;
    if (need > op->lhs_bytes) {
        uint8_t *s = pw__alloc(ctx, need, 64);
        PW__FAIL_IF(s == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                    "pw_qc4w_fc_run '%s': cannot allocate %zu bytes of activation scratch",
                    op->name, need);
        pw__free(ctx, op->lhs);
        op->lhs = s;
        op->lhs_bytes = need;
    }
    quant_job qj = {op->kernel->quantize ? op->kernel->quantize : pw__qd8_quantize_row,
                    x, k, kp, 1, batch, op->lhs, pr > 0 ? op->lhs + rows_bytes : NULL, row_bytes, pr};
    const int64_t want = 4 * (int64_t)pw_context_threads(ctx);
    qj.rows_per_task = (batch + want - 1) / want;
    pw__parallel_for(ctx, quant_task, &qj, (size_t)((batch + qj.rows_per_task - 1) / qj.rows_per_task));
    for (int64_t m = 0; m < batch; ++m) {
        const pw__qd8_header *h = pw__qd8_hdr(op->lhs + (size_t)m * row_bytes);
        PW__FAIL_IF(h->bad, ctx, PW_ERR_INVALID_ARGUMENT,
                    "pw_qc4w_fc_run '%s': x[%" PRId64 ", %" PRId64 "] = %g is not finite; "
                    "nothing was written",
                    op->name, m, h->bad_k, (double)x[m * k + h->bad_k]);
    }
    pw__qc4w_call c;
    memset(&c, 0, sizeof c);
    c.packed = op->packed;
    c.desc = &op->desc;
    c.lhs = op->lhs;
    c.lhs_row_bytes = row_bytes;
    c.panels = qj.panels;
    c.y = y;
    c.ldy = op->desc.out;
    c.f16 = f16;
    c.min = op->min;
    c.max = op->max;
    return pw__qc4w_gemm(ctx, op->kernel, &c, op->desc.out, batch);
}

pw_status pw_qc4w_fc_run(pw_context *ctx, pw_qc4w_fc *op, int64_t batch, const float *x, float *y) {
    return run(ctx, op, batch, x, y, 0);
}

pw_status pw_qc4w_fc_run_f16(pw_context *ctx, pw_qc4w_fc *op, int64_t batch, const float *x,
                             uint16_t *y) {
    return run(ctx, op, batch, x, y, 1);
}
