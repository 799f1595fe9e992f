/*
 * Dispatch: ranking kernels for a weight's layout, and running a kernel over
 * the whole problem on the context's threads.
 */
#include "base/internal.h"
#include "kernel/kernel.h"

#include <string.h>
#include <strings.h>

size_t pw_kernel_count(void) { return pw__kernel_list_count(); }

const pw_kernel_info *pw_kernel_info_get(size_t index) {
    const pw__kernel *k = pw__kernel_list_get(index);
    return k ? &k->info : NULL;
}

pw_status pw_kernel_find(pw_context *ctx, const char *name, size_t *index) {
    PW__FAIL_IF(name == NULL || index == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_kernel_find: NULL argument");
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        if (strcasecmp(pw__kernel_list_get(i)->info.name, name) == 0) {
            *index = i;
            return PW_OK;
        }
    }
    return pw__fail(ctx, PW_ERR_NOT_FOUND,
                    "no kernel named '%s' in this build (packwise formats lists them)", name);
}

int pw__kernel_usable(const pw_context *ctx, const pw__kernel *k) {
    const uint32_t f = pw_context_usable_features(ctx);
    return (k->info.features & f) == k->info.features;
}

int pw_kernel_usable(const pw_context *ctx, size_t index) {
    const pw__kernel *k = pw__kernel_list_get(index);
    return k != NULL && pw__kernel_usable(ctx, k);
}

const pw__kernel *pw__kernel_pick(const pw_context *ctx, pw_format format, int64_t n,
                                  pw__kernel_accept accept, const void *arg) {
    const pw__kernel *best = NULL;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference || k->info.format != format || n < k->min_n) continue;
        if (!pw__kernel_usable(ctx, k) || !accept(k, arg)) continue;
        if (best == NULL || k->priority > best->priority) best = k;
    }
    return best;
}

typedef struct layout_family {
    pw_layout_class layout;
    const char *family;
} layout_family;

static int reads_layout_family(const pw__kernel *k, const void *arg) {
    const layout_family *lf = arg;
    if (k->info.layout != lf->layout) return 0;
    return lf->family == NULL || (k->info.family != NULL && strcmp(lf->family, k->info.family) == 0);
}

const pw__kernel *pw__kernel_best(const pw_context *ctx, pw_format format, pw_layout_class layout,
                                  const char *family, int64_t n) {
    const layout_family lf = {layout, family};
    return pw__kernel_pick(ctx, format, n, reads_layout_family, &lf);
}

/* What a pw_weight handle can reach once: the file's ROW_MAJOR bytes or a form it packs
 * (row-tiled and input-block-major orders come through pw_view_prepack by the caller). */
static int handle_can_feed(const pw__kernel *k, const void *arg) {
    (void)arg;
    const pw_layout_class l = k->info.layout;
    return l == PW_LAYOUT_BLOCKED_ROW_MAJOR || (l == PW_LAYOUT_PACKED && k->pack != NULL);
}

const pw__kernel *pw__kernel_for_weight(const pw_context *ctx, pw_format f, int64_t n) {
    return pw__kernel_pick(ctx, f, n, handle_can_feed, NULL);
}

const pw__kernel *pw__kernel_reference(pw_format format) {
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference && k->info.format == format) return k;
    }
    return NULL;
}

typedef struct run_plan {
    const pw__kernel *k;
    const pw__mm_call *call;
    pw__task_grid grid;
} run_plan;

static void run_task(void *p, size_t t) {
    const run_plan *rp = p;
    int64_t o0, o1, i0, i1;
    pw__task_grid_cell(&rp->grid, t, &o0, &o1, &i0, &i1);
    rp->k->run(rp->call, o0, o1, i0, i1);
}

void pw__kernel_run(pw_context *ctx, const pw__kernel *k, const pw__mm_call *call) {
    const int threads = pw_context_threads(ctx);
    /* Waking the pool costs microseconds: below ~1M multiply-adds one thread is faster. */
    const double macs = (double)call->out * (double)call->in * (double)call->n;
    if (threads > 1 && macs >= (double)(1 << 20)) {
        /* rows of X split from 4 mr-tiles up: smaller calls stream the weight once */
        const int64_t mr = k->info.tile_batch > 0 ? k->info.tile_batch : 1;
        run_plan rp = {k, call,
                       pw__task_grid_plan(threads, call->out, k->info.tile_rows, call->n, mr,
                                          4 * mr)};
        pw__parallel_for(ctx, run_task, &rp, rp.grid.tasks);
        return;
    }
    k->run(call, 0, call->out, 0, call->n);
}
