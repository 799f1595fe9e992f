/*
 * The QC4W kernels: their table (expanded from the QC4W section of
 * kernel/kernel_list.h), choice, the family check every run goes through,
 * and the threaded run over N tiles x panels of batch rows.
 */
#include "qc4w/qc4w.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#define PW_KERNEL(id)
#define PW_QC4W_KERNEL(id) extern const pw__qc4w_kernel pw__qk_##id;
#include "kernel/kernel_list.h"
#undef PW_QC4W_KERNEL
#undef PW_KERNEL

static const pw__qc4w_kernel *const kernels[] = {
#define PW_KERNEL(id)
#define PW_QC4W_KERNEL(id) &pw__qk_##id,
#include "kernel/kernel_list.h"
#undef PW_QC4W_KERNEL
#undef PW_KERNEL
};

size_t pw__qc4w_kernel_count(void) { return sizeof kernels / sizeof kernels[0]; }

const pw__qc4w_kernel *pw__qc4w_kernel_get(size_t i) {
    return i < pw__qc4w_kernel_count() ? kernels[i] : NULL;
}

const pw__qc4w_kernel *pw__qc4w_kernel_find(const char *name) {
    for (size_t i = 0; i < pw__qc4w_kernel_count(); ++i)
        if (strcasecmp(kernels[i]->name, name) == 0) return kernels[i];
    return NULL;
}

int pw__qc4w_kernel_usable(const pw_context *ctx, const pw__qc4w_kernel *k) {
    return (k->features & pw_context_usable_features(ctx)) == k->features;
}

const pw__qc4w_kernel *pw__qc4w_kernel_best(const pw_context *ctx, int64_t kk) {
    const pw__qc4w_kernel *best = NULL;
    for (size_t i = 0; i < pw__qc4w_kernel_count(); ++i) {
        const pw__qc4w_kernel *k = kernels[i];
        if (kk > k->max_k || !pw__qc4w_kernel_usable(ctx, k)) continue;
        /* Ties keep the first listed: the scalar kernel of this machine's SIMD family. */
        if (best == NULL || k->priority > best->priority) best = k;
    }
    return best;
}

pw_status pw__qc4w_kernel_plan(pw_context *ctx, const pw__qc4w_kernel *k, int64_t n, int64_t kk,
                               pw__pack_desc *desc) {
    return pw__qc4w_pack_plan(ctx, k->family, k->nr, k->kr, k->sr, n, kk, desc);
}

pw_status pw__qc4w_kernel_check(pw_context *ctx, const pw__qc4w_kernel *k, const pw__pack_desc *d) {
    PW__FAIL_IF(d == NULL || d->family == NULL, ctx, PW_ERR_FAMILY,
                "kernel %s reads family %s (nr=%d kr=%d sr=%d v%d) but the buffer has no family",
                k->name, k->family, (int)k->nr, (int)k->kr, (int)k->sr, PW__QC4W_PACK_VERSION);
    PW__FAIL_IF(strcmp(d->family, k->family) != 0 || d->nr != k->nr || d->kr != k->kr ||
                    d->sr != k->sr || d->version != PW__QC4W_PACK_VERSION ||
                    d->format != PW_FORMAT_COUNT,
                ctx, PW_ERR_FAMILY,
                "kernel %s reads family %s (nr=%d kr=%d sr=%d v%d) but the buffer is %s (nr=%d "
                "kr=%d sr=%d v%d): packed bytes are private to the family that made them; pack "
                "the raw QC4W weights again for this kernel",
                k->name, k->family, (int)k->nr, (int)k->kr, (int)k->sr, PW__QC4W_PACK_VERSION,
                d->family, (int)d->nr, (int)d->kr, (int)d->sr, (int)d->version);
    PW__FAIL_IF(d->in > k->max_k, ctx, PW_ERR_UNSUPPORTED,
                "kernel %s sums exactly in int32 only up to K = %" PRId64 ", not %" PRId64, k->name,
                k->max_k, d->in);
    return PW_OK;
}

typedef struct plan {
    const pw__qc4w_kernel *k;
    const pw__qc4w_call *c;
    pw__task_grid grid;
} plan;

static void run_task(void *p, size_t t) {
    const plan *pl = p;
    int64_t n0, n1, m0, m1;
    pw__task_grid_cell(&pl->grid, t, &n0, &n1, &m0, &m1);
    pl->k->run(pl->c, n0, n1, m0, m1);
}

pw_status pw__qc4w_gemm(pw_context *ctx, const pw__qc4w_kernel *k, const pw__qc4w_call *c,
                        int64_t n, int64_t batch) {
    PW__TRY(pw__qc4w_kernel_check(ctx, k, c->desc));
    PW__FAIL_IF(k->lhs_panel > 0 && batch > 1 && c->panels == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "kernel %s reads QD8 panels of %d rows, and the call has none", k->name,
                (int)k->lhs_panel);
    PW__FAIL_IF(n != c->desc->out, ctx, PW_ERR_SHAPE,
                "kernel %s: N = %" PRId64 " but the packed buffer holds %" PRId64 " channels",
                k->name, n, c->desc->out);
    const int threads = pw_context_threads(ctx);
    if (threads > 1) {
        /* Whole N tiles first: a tile's packed bytes are read once per task and stay
         * in cache across its row panels; rows are split in whole mr panels from 2 mr
         * rows up ([11008, 4096] batch 1 on 2 threads: 0.84 ms with 4 tasks per
         * thread, 0.77-0.78 ms with 16 and the L1 prefetch). */
        plan pl = {k, c, pw__task_grid_plan(threads, n, k->nr, batch, k->mr, 2 * k->mr)};
        pw__parallel_for(ctx, run_task, &pl, pl.grid.tasks);
        return PW_OK;
    }
    k->run(c, 0, n, 0, batch);
    return PW_OK;
}
