/*
 * QB4W weights through the operator (packwise/qb4w.h): validate the raw
 * descriptor, then the raw-int4 creation steps (op/raw_int4.c) with QB4W's
 * packer; and GGUF Q4_0 re-expressed as QB4W.
 */
#include "op/op.h"

#include "cache/cache_internal.h"
#include "format/blocks.h"
#include "kernel/qb4w.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void pw_qb4w_weights_init(pw_qb4w_weights *w) {
    if (w == NULL) return;
    memset(w, 0, sizeof *w);
    w->struct_size = sizeof *w;
    w->scale_type = PW_DTYPE_F32;
}

int64_t pw_qb4w_blocks(const pw_qb4w_weights *w) {
    if (w == NULL || w->block_size < 1 || w->in < 1) return 0;
    return (w->in + w->block_size - 1) / w->block_size;
}

static const char *wname(const pw_qb4w_weights *w) { return w->name ? w->name : "(unnamed)"; }

static pw_status check_weights(pw_context *ctx, const pw_qb4w_weights *w, uint64_t *source_bytes) {
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_weight_create_qb4w: weights is NULL");
    PW__FAIL_IF(w->struct_size == 0 || w->struct_size > sizeof *w, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_create_qb4w: weights.struct_size is %zu; use pw_qb4w_weights_init",
                w->struct_size);
    PW__FAIL_IF(w->out < 1 || w->in < 1, ctx, PW_ERR_SHAPE,
                "QB4W weights '%s': N (out) = %" PRId64 " and K (in) = %" PRId64 " must both be >= 1",
                wname(w), w->out, w->in);
    PW__FAIL_IF(w->block_size < PW__QB4W_MIN_B || w->block_size > PW__QB4W_MAX_B ||
                    (w->block_size & (w->block_size - 1)) != 0,
                ctx, PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': block_size %d is not a power of two in %d .. %d", wname(w),
                (int)w->block_size, PW__QB4W_MIN_B, PW__QB4W_MAX_B);
    PW__FAIL_IF(w->scale_type != PW_DTYPE_F32 && w->scale_type != PW_DTYPE_F16 &&
                    w->scale_type != PW_DTYPE_BF16,
                ctx, PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': scale_type %d is not F32, F16 or BF16", wname(w), (int)w->scale_type);
    PW__FAIL_IF(w->zero_kind != PW_QB4W_ZERO_CONST && w->zero_kind != PW_QB4W_ZERO_U4 &&
                    w->zero_kind != PW_QB4W_ZERO_U8,
                ctx, PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': zero_kind %d is not CONST, U4 or U8%s", wname(w), (int)w->zero_kind,
                w->zero_kind == 0 ? " (the zero points were not named: a default could be the wrong "
                                    "one, so there is none)" : "");
    PW__FAIL_IF(w->zero_kind == PW_QB4W_ZERO_CONST && w->zero_point != 0 && w->zero_point != 8, ctx,
                PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': constant zero point %d is not supported; use 8 (unsigned nibbles, "
                "value - 8) or 0 (signed nibbles), or per-block zero points (U4, U8)",
                wname(w), (int)w->zero_point);
    PW__FAIL_IF((w->flags & ~(uint32_t)PW_QB4W_TRANSPOSED) != 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': unknown flags 0x%x", wname(w),
                (unsigned)(w->flags & ~(uint32_t)PW_QB4W_TRANSPOSED));
    PW__FAIL_IF(w->data == NULL || w->scales == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': data and scales must be non-NULL (bias may be NULL)", wname(w));
    PW__FAIL_IF(w->zero_kind != PW_QB4W_ZERO_CONST && w->zero_points == NULL, ctx,
                PW_ERR_INVALID_ARGUMENT,
                "QB4W weights '%s': zero_kind %s needs zero_points (NULL given)", wname(w),
                w->zero_kind == PW_QB4W_ZERO_U4 ? "U4" : "U8");
    uint64_t data_bytes, scales, zero_bytes;
    PW__TRY(pw__qb4w_raw_sizes(ctx, w, &data_bytes, &scales, &zero_bytes));
    const int64_t nb = pw_qb4w_blocks(w);
    for (int64_t n = 0; n < w->out; ++n) {
        for (int64_t b = 0; b < nb; ++b) {
            const float s = pw__qb4w_scale_at(w, n, b);
            PW__FAIL_IF(!isfinite(s), ctx, PW_ERR_INVALID_ARGUMENT,
                        "QB4W weights '%s': scale of row %" PRId64 ", block %" PRId64 " is %g, not finite",
                        wname(w), n, b, (double)s);
            PW__FAIL_IF(w->zero_kind == PW_QB4W_ZERO_U8 && w->zero_points[n * nb + b] > 15, ctx,
                        PW_ERR_INVALID_ARGUMENT,
                        "QB4W weights '%s': zero point of row %" PRId64 ", block %" PRId64
                        " is %d; 4-bit weights take zero points 0 .. 15",
                        wname(w), n, b, (int)w->zero_points[n * nb + b]);
        }
        PW__FAIL_IF(w->bias != NULL && !isfinite(w->bias[n]), ctx, PW_ERR_INVALID_ARGUMENT,
                    "QB4W weights '%s': bias[%" PRId64 "] = %g is not finite", wname(w), n,
                    (double)w->bias[n]);
    }
    *source_bytes = data_bytes + scales * (w->scale_type == PW_DTYPE_F32 ? 4u : 2u) + zero_bytes;
    return PW_OK;
}

typedef struct qb4w_job {
    pw__raw_job raw; /* first: the shared creation fills it */
    pw_qb4w_weights w;
} qb4w_job;

static pw__digest qb4w_key(const pw__raw_job *raw) {
    const qb4w_job *j = (const qb4w_job *)(const void *)raw;
    return pw__cache_qb4w_content(&j->w);
}

/* Pack the raw weights (the cache's pack callback: on a hit nothing of this runs). A
 * transposed source is converted to N x K first, nibble by nibble: one adapter event. */
static pw_status pack_qb4w_cb(pw_context *ctx, void *user, uint8_t *dst) {
    const qb4w_job *j = user;
    const pw_qb4w_weights *w = &j->w;
    const uint8_t *rows = w->data;
    uint8_t *nk = NULL;
    if (w->flags & PW_QB4W_TRANSPOSED) {
        PW__TRY(pw__int4_transpose(ctx, j->raw.h, w->data, w->in, w->out, "qb4w_kxn", "qb4w_nxk", &nk));
        rows = nk;
    }
    const pw__qb4w_source q = {rows, w, w->bias};
    const pw__source src = {.qb4w = &q};
    const pw_status st = pw__pack_form(ctx, j->raw.f->packer, &j->raw.f->desc, &src, j->raw.h->name,
                                       "qb4w_nxk", dst);
    pw__free(ctx, nk);
    return st;
}

pw_status pw_weight_create_qb4w(pw_context *ctx, const pw_qb4w_weights *weights,
                                const pw_weight_options *options, pw_weight **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_create_qb4w: ctx and out must be non-NULL");
    *out = NULL;
    uint64_t bytes = 0;
    PW__TRY(check_weights(ctx, weights, &bytes));
    qb4w_job job;
    memset(&job, 0, sizeof job);
    pw_qb4w_weights_init(&job.w);
    memcpy(&job.w, weights, weights->struct_size);
    const pw__raw_spec spec = {PW_WEIGHT_QB4W, "pw_weight_create_qb4w", wname(&job.w), job.w.out,
                               job.w.in, job.w.block_size, bytes, &job.w.bias, qb4w_key,
                               pack_qb4w_cb, &job.raw};
    return pw__weight_create_raw(ctx, &spec, options, out);
}

pw_status pw_qb4w_from_q4_0(pw_context *ctx, const pw_view *v, uint8_t *data, size_t data_bytes,
                            uint16_t *scales, size_t scales_count, pw_qb4w_weights *weights) {
    PW__FAIL_IF(v == NULL || data == NULL || scales == NULL || weights == NULL, ctx,
                PW_ERR_INVALID_ARGUMENT, "pw_qb4w_from_q4_0: NULL argument");
    PW__TRY(pw_view_check(ctx, v));
    PW__FAIL_IF(v->format != PW_FORMAT_Q4_0, ctx, PW_ERR_UNSUPPORTED,
                "pw_qb4w_from_q4_0: '%s' is %s, not Q4_0", v->name ? v->name : "(unnamed)",
                pw_format_get(v->format)->name);
    PW__FAIL_IF(v->rank != 2 || v->block_axis != 1, ctx, PW_ERR_SHAPE,
                "pw_qb4w_from_q4_0: the weight must be a 2-D [out, in] view");
    const int64_t n = v->shape[0], k = v->shape[1], nb = k / 32;
    PW__FAIL_IF(data_bytes != (uint64_t)n * (uint64_t)(k / 2) || scales_count != (uint64_t)n * (uint64_t)nb,
                ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_qb4w_from_q4_0: [%" PRId64 ", %" PRId64 "] needs %" PRIu64 " data bytes and %" PRIu64
                " scales; %zu and %zu given",
                n, k, (uint64_t)n * (uint64_t)(k / 2), (uint64_t)n * (uint64_t)nb, data_bytes, scales_count);
    for (int64_t r = 0; r < n; ++r) {
        for (int64_t b = 0; b < nb; ++b) {
            /* Q4_0: f16 d, then 16 bytes; byte i holds value i (low) and i + 16 (high). */
            const uint8_t *blk = pw_view_block_ptr(v, r, b);
            scales[r * nb + b] = pw__rd_u16(blk);
            uint8_t *out = data + r * (k / 2) + b * 16;
            for (int i = 0; i < 16; ++i) {
                /* values 2i and 2i + 1 of the block: low halves below 16, high halves above */
                const int v0 = 2 * i, v1 = 2 * i + 1;
                const int n0 = v0 < 16 ? blk[2 + v0] & 15 : blk[2 + v0 - 16] >> 4;
                const int n1 = v1 < 16 ? blk[2 + v1] & 15 : blk[2 + v1 - 16] >> 4;
                out[i] = (uint8_t)(n0 | n1 << 4);
            }
        }
    }
    pw_qb4w_weights_init(weights);
    weights->out = n;
    weights->in = k;
    weights->block_size = 32;
    weights->data = data;
    weights->scales = scales;
    weights->scale_type = PW_DTYPE_F16;
    weights->zero_kind = PW_QB4W_ZERO_CONST;
    weights->zero_point = 8;
    weights->name = v->name;
    return PW_OK;
}
