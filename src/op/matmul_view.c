/*
 * pw_matmul_view: one-shot dispatch on a view (packwise/matmul.h), as a weight
 * that lives for one call. In place by default: the best kernel that reads the
 * view's layout as it is, else the reference kernel with a fallback event.
 * With the context's prepack_weights, the fastest plan instead, relaid out
 * for this call only (an adapter event every call: a pw_weight packs once).
 */
#include "op/op.h"

pw_status pw_matmul_view(pw_context *ctx, const float *x, int64_t n, const pw_view *w, float *y) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_matmul_view: ctx is NULL");
    PW__FAIL_IF(x == NULL || y == NULL || n < 1, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_view: x and y must be non-NULL and n >= 1 (n = %" PRId64 ")", n);
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.policy = pw_context_prepack_weights(ctx) ? PW_MEMORY_FASTEST : PW_MEMORY_IN_PLACE;
    o.serves = n >= 2 ? PW_SERVE_GEMM : PW_SERVE_GEMV;
    pw_weight *h = NULL;
    PW__TRY(pw_weight_create(ctx, w, &o, &h));
    pw_status st = pw_matmul_wt(ctx, x, n, h, y);
    pw_weight_destroy(h);
    return st;
}
