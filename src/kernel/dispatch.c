/*
 * Dispatch: ranking kernels for a weight's layout, and running a kernel over
 * the whole problem on the context's threads.
 */
#include "base/internal.h"
#include "kernel/kernel.h"

#include <math.h>
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
    return (k->info.features & f) == k->info.features &&
           (k->sme_bytes == 0 || k->sme_bytes == pw_context_sme_vector_bytes(ctx));
}

int pw_kernel_usable(const pw_context *ctx, size_t index) {
    const pw__kernel *k = pw__kernel_list_get(index);
    return k != NULL && pw__kernel_usable(ctx, k);
}

int pw__kernel_reads(const pw__kernel *k, pw_weight_kind kind, pw_format format, int64_t in) {
    if (k->info.kind != kind) return 0;
    if (kind == PW_WEIGHT_BLOCKS && k->info.format != format) return 0;
    return k->max_in == 0 || in <= k->max_in;
}

const pw__kernel *pw__kernel_pick(const pw_context *ctx, pw_weight_kind kind, pw_format format,
                                  int64_t in, int64_t n, pw__kernel_accept accept, const void *arg) {
    const pw__kernel *best = NULL;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference || !pw__kernel_reads(k, kind, format, in) || n < k->min_n) continue;
        if (!pw__kernel_usable(ctx, k) || (accept != NULL && !accept(k, arg))) continue;
        if (best == NULL || k->priority > best->priority) best = k;
    }
    return best;
}

const pw__kernel *pw__kernel_reference(pw_weight_kind kind, pw_format format) {
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference && k->info.kind == kind && k->info.format == format) return k;
    }
    return NULL;
}

pw_status pw__kernel_check_family(pw_context *ctx, const pw__kernel *k, const pw__pack_desc *d) {
    PW__FAIL_IF(d == NULL || d->family == NULL || k->pack_plan == NULL, ctx, PW_ERR_FAMILY,
                "kernel %s reads no packed buffer of this kind", k->info.name);
    pw__pack_desc mine;
    mine.group = d->group; /* QB4W: the block size is the buffer's (kernel.h) */
    PW__TRY(k->pack_plan(ctx, k, d->format, d->out, d->in, &mine));
    /* SME tiles follow the streaming vector length: say so in both lengths. */
    PW__FAIL_IF(mine.sme_bytes != 0 && d->sme_bytes != 0 && mine.sme_bytes != d->sme_bytes, ctx,
                PW_ERR_FAMILY,
                "kernel %s's tile is for a %d-bit streaming vector length (family %s), but the "
                "buffer was packed at %d bits (family %s): the tile follows the vector length; "
                "pack the source again on this machine",
                k->info.name, 8 * (int)mine.sme_bytes, mine.family, 8 * (int)d->sme_bytes, d->family);
    PW__FAIL_IF(strcmp(mine.family, d->family) != 0 || mine.sme_bytes != d->sme_bytes ||
                    mine.kind != d->kind || mine.nr != d->nr ||
                    mine.kr != d->kr || mine.sr != d->sr || mine.group != d->group ||
                    mine.version != d->version || mine.bytes != d->bytes,
                ctx, PW_ERR_FAMILY,
                "kernel %s reads family %s (nr=%d kr=%d sr=%d v%d) but the buffer is %s (nr=%d "
                "kr=%d sr=%d v%d): packed bytes are private to the family that made them; pack "
                "the source again for this kernel",
                k->info.name, mine.family, (int)mine.nr, (int)mine.kr, (int)mine.sr,
                (int)mine.version, d->family, (int)d->nr, (int)d->kr, (int)d->sr, (int)d->version);
    return PW_OK;
}

void pw__epilogue(float *y, uint16_t *y16, int64_t ldy, const float *bias, float min, float max,
                  int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
        float *row = y + i * ldy;
        for (int64_t o = o0; o < o1; ++o) {
            float v = bias != NULL ? row[o] + bias[o] : row[o];
            v = v < min ? min : (v > max ? max : v); /* NaN stays NaN */
            if (y16 != NULL)
                y16[i * ldy + o] = pw_f32_to_f16(v);
            else
                row[o] = v;
        }
    }
}

typedef struct run_plan {
    const pw__kernel *k;
    const pw__mm_call *call;   /* as the kernel sees it */
    pw__task_grid grid;
    int epilogue;              /* the dispatcher applies pw__epilogue after the kernel */
    uint16_t *y16;             /* its half output, or NULL */
    const float *bias;
    float min, max;
} run_plan;

static void run_cell(const run_plan *rp, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    rp->k->run(rp->call, o0, o1, i0, i1);
    if (rp->epilogue)
        pw__epilogue(rp->call->y, rp->y16, rp->call->ldy, rp->bias, rp->min, rp->max, o0, o1, i0, i1);
}

static void run_task(void *p, size_t t) {
    const run_plan *rp = p;
    int64_t o0, o1, i0, i1;
    pw__task_grid_cell(&rp->grid, t, &o0, &o1, &i0, &i1);
    run_cell(rp, o0, o1, i0, i1);
}

/* The task grid of one run on `threads` threads: rows of X split from 4 mr-tiles up (2 for
 * kernels reading QD8 panels), so smaller calls stream the weight once. */
static pw__task_grid plan_grid(const pw__kernel *k, const pw__mm_call *c, int threads) {
    const int64_t mr = k->info.tile_batch > 0 ? k->info.tile_batch : 1;
    const int64_t split = (k->info.activation == PW_ACT_QD8 ? 2 : 4) * mr;
    return pw__task_grid_plan(threads, c->out, k->info.tile_rows, c->n, mr, split);
}

/* Whether the dispatcher applies the epilogue after a kernel without its own: without
 * bias, clamp or half output there is nothing to do. */
static int needs_epilogue(const pw__mm_call *c, const float *bias, const uint16_t *y16) {
    return y16 != NULL || bias != NULL || c->min > -INFINITY || c->max < INFINITY;
}

void pw__kernel_run(pw_context *ctx, const pw__kernel *k, const pw__mm_call *call,
                    const float *bias, float *f32_scratch) {
    pw__mm_call c = *call;
    run_plan rp;
    memset(&rp, 0, sizeof rp);
    rp.k = k;
    rp.call = &c;
    if (!k->epilogue) {
        /* The kernel writes f32 sums (into scratch when the output is half); the
         * epilogue follows on the same rectangle. Without bias, clamp or half
         * output there is nothing to do. */
        rp.y16 = c.y16;
        if (c.y16 != NULL) {
            c.y = f32_scratch;
            c.y16 = NULL;
        }
        rp.bias = bias;
        rp.min = c.min;
        rp.max = c.max;
        rp.epilogue = needs_epilogue(&c, bias, rp.y16);
    }
    const int threads = pw__threads(ctx);
    /* Waking the pool costs microseconds: below ~1M multiply-adds one thread is faster. */
    const double macs = (double)c.out * (double)c.in * (double)c.n;
    if (threads > 1 && macs >= (double)(1 << 20)) {
        rp.grid = plan_grid(k, &c, threads);
        pw__parallel_for(ctx, run_task, &rp, rp.grid.tasks);
        return;
    }
    run_cell(&rp, 0, c.out, 0, c.n);
}

typedef struct many_plan {
    const run_plan *plans;
    const size_t *first; /* first[i]: the first task of plan i; first[count] = all tasks */
    size_t count;
} many_plan;

static void run_many_task(void *p, size_t t) {
    const many_plan *m = p;
    size_t lo = 0, hi = m->count; /* the plan whose tasks hold t: first[lo] <= t < first[lo + 1] */
    while (hi - lo > 1) {
        const size_t mid = (lo + hi) / 2;
        if (m->first[mid] <= t) lo = mid;
        else hi = mid;
    }
    const run_plan *rp = &m->plans[lo];
    int64_t o0, o1, i0, i1;
    pw__task_grid_cell(&rp->grid, t - m->first[lo], &o0, &o1, &i0, &i1);
    run_cell(rp, o0, o1, i0, i1);
}

void pw__kernel_run_many(pw_context *ctx, size_t count, const pw__kernel *const *ks,
                         const pw__mm_call *calls, const float *const *bias) {
    run_plan plans[PW__RUN_MANY_MAX];
    size_t first[PW__RUN_MANY_MAX + 1];
    if (count == 0 || count > PW__RUN_MANY_MAX) return;
    const int threads = pw__threads(ctx);
    double macs = 0;
    for (size_t i = 0; i < count; ++i) {
        const pw__kernel *k = ks[i];
        run_plan *rp = &plans[i];
        memset(rp, 0, sizeof *rp);
        rp->k = k;
        rp->call = &calls[i];
        if (!k->epilogue) {
            rp->bias = bias[i];
            rp->min = calls[i].min;
            rp->max = calls[i].max;
            rp->epilogue = needs_epilogue(&calls[i], bias[i], NULL);
        }
        macs += (double)calls[i].out * (double)calls[i].in * (double)calls[i].n;
    }
    if (threads > 1 && macs >= (double)(1 << 20)) {
        /* each product split as pw__kernel_run splits it; all of them in one dispatch */
        first[0] = 0;
        for (size_t i = 0; i < count; ++i) {
            plans[i].grid = plan_grid(ks[i], &calls[i], threads);
            first[i + 1] = first[i] + plans[i].grid.tasks;
        }
        many_plan m = {plans, first, count};
        pw__parallel_for(ctx, run_many_task, &m, first[count]);
    } else {
        for (size_t i = 0; i < count; ++i) run_cell(&plans[i], 0, calls[i].out, 0, calls[i].n);
    }
}
