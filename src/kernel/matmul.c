/*
 * x * W^T entry points: one-shot dispatch on a view (pw_matmul_view) and the
 * prepared-weight handle that packs at most once (pw_weight, pw_matmul_wt).
 */
#include "base/internal.h"
#include "cache/cache_format.h"
#include "format/format_internal.h"
#include "kernel/kernel.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PW__MAX_PACKED 2

typedef struct packed_form {
    const pw__kernel *packer; /* the kernel whose pack function made the bytes */
    pw__pack_desc desc;
    uint8_t *bytes;
    int borrowed; /* served from a cache file's mapping: not ours to free */
} packed_form;

struct pw_weight {
    pw_context *ctx;
    pw_view view;             /* the caller's weight (borrowed bytes) */
    const pw__kernel *forced; /* from options.kernel, or NULL */
    const pw_cache *cache;    /* from options.cache, or NULL */
    const pw__kernel *chosen[2]; /* [0]: n == 1, [1]: n >= 2; NULL until first needed */
    packed_form packed[PW__MAX_PACKED];
    int npacked;
    pw_view row_major;        /* a ROW_MAJOR copy when a row-major kernel runs on another order */
    uint8_t *row_major_bytes;
    uint8_t *scratch;         /* quantized activations */
    size_t scratch_bytes;
    char name[96];
};

static const char *view_name(const pw_view *v) { return v->name ? v->name : "(unnamed)"; }

static pw_status check_weight(pw_context *ctx, const pw_view *w, const char *fn) {
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "%s: weight view is NULL", fn);
    PW__TRY(pw_view_check(ctx, w));
    PW__FAIL_IF(w->rank != 2, ctx, PW_ERR_SHAPE, "%s '%s': the weight must be 2-D [out, in], not rank %d",
                fn, view_name(w), (int)w->rank);
    PW__FAIL_IF(w->block_axis != 1, ctx, PW_ERR_ORIENTATION,
                "%s '%s': the weight is labelled [in, out] = [%" PRId64 ", %" PRId64 "] (its blocks "
                "tile axis 0, as GGUF's ne order writes it); open the file with PW_ORIENT_OUT_IN so "
                "it is [out, in], and keep it that way: pw_matmul_wt computes x*W^T without "
                "transposing W",
                fn, view_name(w), w->shape[0], w->shape[1]);
    return PW_OK;
}

/* Does kernel k read view w's bytes as they are? */
/* Whether kernel k reads view arg's bytes in the order they are in. */
static int reads_as_is(const pw__kernel *k, const void *arg) {
    const pw_view *w = arg;
    const pw_order o = pw_view_order(w);
    switch (k->info.layout) {
    case PW_LAYOUT_BLOCKED_ROW_MAJOR: return o == PW_ORDER_ROW_MAJOR;
    case PW_LAYOUT_BLOCKED_INPUT_MAJOR: return o == PW_ORDER_INPUT_BLOCK_MAJOR;
    case PW_LAYOUT_ROW_TILED: return o == PW_ORDER_ROW_TILED && w->tile_rows == k->info.tile_rows;
    case PW_LAYOUT_PACKED: return 0;
    }
    return 0;
}

static void trace_kernel(pw_context *ctx, const pw__kernel *k, const char *tensor) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_KERNEL;
    e.kernel = k->info.name;
    e.key = k->info.key;
    e.tensor = tensor;
    pw__trace(ctx, &e);
}

static void trace_fallback(pw_context *ctx, const pw__kernel *k, const char *tensor,
                           const char *reason) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_FALLBACK;
    e.kernel = k->info.name;
    e.tensor = tensor;
    e.reason = reason;
    pw__trace(ctx, &e);
}

/* Quantize X into scratch in the kernel's activation form (grows scratch only when needed). */
static pw_status prepare_activations(pw_context *ctx, const pw__kernel *k, const float *x, int64_t n,
                                     int64_t in, uint8_t **scratch, size_t *scratch_bytes,
                                     pw__mm_call *call) {
    call->x = x;
    call->ldx = in;
    call->xq = NULL;
    call->xq_row_bytes = 0;
    const pw_activation a = k->info.activation;
    if (a == PW_ACT_F32) return PW_OK;
    const int64_t abs_ = pw__act_block_size(a);
    PW__FAIL_IF(in % abs_ != 0, ctx, PW_ERR_SHAPE,
                "kernel %s quantizes activations in blocks of %" PRId64 " but in is %" PRId64,
                k->info.name, abs_, in);
    const size_t row = (size_t)(in / abs_) * pw__act_block_bytes(a);
    size_t need;
    PW__FAIL_IF(__builtin_mul_overflow(row, (size_t)n, &need), ctx, PW_ERR_OVERFLOW,
                "activation scratch for n = %" PRId64 " overflows", n);
    if (need > *scratch_bytes) {
        uint8_t *s = pw__alloc(ctx, need, 64);
        PW__FAIL_IF(s == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                    "cannot allocate %zu bytes of activation scratch", need);
        pw__free(ctx, *scratch);
        *scratch = s;
        *scratch_bytes = need;
    }
    pw__act_quantize_rows(ctx, a, x, in, n, in, *scratch, row);
    call->xq = *scratch;
    call->xq_row_bytes = row;
    return PW_OK;
}

typedef struct pack_task {
    const pw__kernel *k;
    const pw__pack_desc *desc;
    const pw_view *w;
    uint8_t *dst;
    int64_t tiles_per_task;
} pack_task;

static void run_pack(void *p, size_t t) {
    const pack_task *pt = p;
    const int64_t nr = pt->desc->nr;
    const int64_t o0 = (int64_t)t * pt->tiles_per_task * nr;
    int64_t o1 = o0 + pt->tiles_per_task * nr;
    if (o1 > pt->desc->out) o1 = pt->desc->out;
    pt->k->pack(pt->desc, pt->w, o0, o1, pt->dst + (uint64_t)(o0 / nr) * pt->desc->tile_bytes);
}

/* Pack w for kernel k into a new buffer of the context's allocator; one adapter event. */
static pw_status pack_weight(pw_context *ctx, const pw__kernel *k, const pw_view *w,
                             packed_form *pf) {
    memset(pf, 0, sizeof *pf);
    PW__TRY(k->pack_plan(ctx, w->format, w->shape[0], w->shape[1], &pf->desc));
    PW__FAIL_IF(pf->desc.bytes > SIZE_MAX, ctx, PW_ERR_OVERFLOW, "packed size overflows");
    pf->bytes = pw__alloc(ctx, (size_t)pf->desc.bytes, 64);
    PW__FAIL_IF(pf->bytes == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "cannot allocate %" PRIu64 " bytes to pack '%s' for %s", pf->desc.bytes,
                view_name(w), k->info.name);
    pf->packer = k;
    pack_task pt = {k, &pf->desc, w, pf->bytes, 1};
    /* Small weights pack faster on the calling thread than by waking the pool. */
    const int64_t tasks_want = pf->desc.bytes < (1u << 20) ? 1 : 8 * (int64_t)pw_context_threads(ctx);
    pt.tiles_per_task = (pf->desc.tiles + tasks_want - 1) / tasks_want;
    if (pt.tiles_per_task < 1) pt.tiles_per_task = 1;
    pw__parallel_for(ctx, run_pack, &pt,
                     (size_t)((pf->desc.tiles + pt.tiles_per_task - 1) / pt.tiles_per_task));
    char from[32];
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_ADAPTER;
    e.tensor = w->name;
    e.bytes = pf->desc.bytes;
    e.from = pw_layout_name(pw_view_layout(w), from, sizeof from);
    e.to = pf->desc.family;
    pw__trace(ctx, &e);
    return PW_OK;
}

/* A kernel reading a packed buffer must be of the buffer's family and tile shape. */
static pw_status check_family(pw_context *ctx, const pw__kernel *k, const pw__pack_desc *d) {
    pw__pack_desc mine;
    PW__TRY(k->pack_plan(ctx, d->format, d->out, d->in, &mine));
    PW__FAIL_IF(strcmp(mine.family, d->family) != 0 || mine.nr != d->nr || mine.kr != d->kr ||
                    mine.sr != d->sr || mine.group != d->group || mine.version != d->version,
                ctx, PW_ERR_FAMILY,
                "kernel %s reads family %s (nr=%d kr=%d sr=%d v%d) but the buffer is %s (nr=%d "
                "kr=%d sr=%d v%d)",
                k->info.name, mine.family, (int)mine.nr, (int)mine.kr, (int)mine.sr,
                (int)mine.version, d->family, (int)d->nr, (int)d->kr, (int)d->sr, (int)d->version);
    return PW_OK;
}

pw_status pw_matmul_view(pw_context *ctx, const float *x, int64_t n, const pw_view *w, float *y) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_matmul_view: ctx is NULL");
    PW__TRY(check_weight(ctx, w, "pw_matmul_view"));
    PW__FAIL_IF(x == NULL || y == NULL || n < 1, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_view: x and y must be non-NULL and n >= 1 (n = %" PRId64 ")", n);
    const pw__kernel *k = pw__kernel_pick(ctx, w->format, n, reads_as_is, w);
    if (k == NULL && pw_context_prepack_weights(ctx)) {
        /* Allowed to relayout, for this call only: a one-shot handle packs and is dropped. */
        pw_weight *h = NULL;
        PW__TRY(pw_weight_create(ctx, w, NULL, &h));
        pw_status st = pw_matmul_wt(ctx, x, n, h, y);
        pw_weight_destroy(h);
        return st;
    }
    pw__mm_call call;
    memset(&call, 0, sizeof call);
    call.out = w->shape[0];
    call.in = w->shape[1];
    call.n = n;
    call.w = w;
    call.y = y;
    call.ldy = w->shape[0];
    if (k == NULL) {
        k = pw__kernel_reference(w->format);
        char reason[160], lay[32];
        snprintf(reason, sizeof reason, "no kernel reads %s %s", pw_layout_name(pw_view_layout(w), lay, sizeof lay),
                 pw_format_get(w->format)->name);
        trace_fallback(ctx, k, w->name, reason);
    } else {
        trace_kernel(ctx, k, w->name);
    }
    uint8_t *scratch = NULL;
    size_t scratch_bytes = 0;
    pw_status st = prepare_activations(ctx, k, x, n, call.in, &scratch, &scratch_bytes, &call);
    if (st == PW_OK) pw__kernel_run(ctx, k, &call);
    pw__free(ctx, scratch);
    return st;
}

void pw_weight_options_init(pw_weight_options *o) {
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

pw_status pw_weight_create(pw_context *ctx, const pw_view *w, const pw_weight_options *options,
                           pw_weight **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_create: NULL argument");
    *out = NULL;
    PW__TRY(check_weight(ctx, w, "pw_weight_create"));
    pw_weight_options o;
    pw_weight_options_init(&o);
    if (options != NULL) {
        PW__FAIL_IF(options->struct_size == 0 || options->struct_size > sizeof o, ctx,
                    PW_ERR_INVALID_ARGUMENT,
                    "pw_weight_create: options.struct_size is %zu; use pw_weight_options_init",
                    options->struct_size);
        memcpy(&o, options, options->struct_size);
    }
    const pw__kernel *forced = NULL;
    if (o.kernel != NULL) {
        size_t idx;
        PW__TRY(pw_kernel_find(ctx, o.kernel, &idx));
        forced = pw__kernel_list_get(idx);
        PW__FAIL_IF(forced->info.format != w->format, ctx, PW_ERR_UNSUPPORTED,
                    "kernel %s reads %s weights, not %s", forced->info.name,
                    pw_format_get(forced->info.format)->name, pw_format_get(w->format)->name);
        PW__FAIL_IF(!pw__kernel_usable(ctx, forced), ctx, PW_ERR_UNSUPPORTED,
                    "kernel %s needs CPU features this context does not allow (isa %s; check "
                    "PACKWISE_ISA and the CPU)",
                    forced->info.name, pw_isa_name(pw_context_isa(ctx)));
        const int fixed_order = forced->info.layout == PW_LAYOUT_ROW_TILED ||
                                forced->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR;
        PW__FAIL_IF(fixed_order && !reads_as_is(forced, w), ctx, PW_ERR_LAYOUT,
                    "kernel %s reads another block order than the weight '%s' has; prepack the "
                    "view first (pw_view_prepack)",
                    forced->info.name, view_name(w));
    }
    pw_weight *h = pw__calloc(ctx, 1, sizeof *h, 64);
    PW__FAIL_IF(h == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_weight_create: out of memory");
    h->ctx = ctx;
    h->view = *w;
    h->forced = forced;
    h->cache = o.cache;
    if (w->name) {
        pw__strlcpy(h->name, w->name, sizeof h->name);
        h->view.name = h->name;
    }
    *out = h;
    return PW_OK;
}

void pw_weight_destroy(pw_weight *h) {
    if (h == NULL) return;
    for (int i = 0; i < h->npacked; ++i)
        if (!h->packed[i].borrowed) pw__free(h->ctx, h->packed[i].bytes);
    pw__free(h->ctx, h->row_major_bytes);
    pw__free(h->ctx, h->scratch);
    pw__free(h->ctx, h);
}

uint64_t pw_weight_bytes(const pw_weight *h) {
    if (h == NULL) return 0;
    uint64_t b = h->scratch_bytes;
    for (int i = 0; i < h->npacked; ++i)
        if (!h->packed[i].borrowed) b += h->packed[i].desc.bytes;
    if (h->row_major_bytes) b += pw_view_bytes(&h->row_major);
    return b;
}

static void trace_cache(pw_context *ctx, const char *tensor, const char *reason) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_CACHE;
    e.tensor = tensor;
    e.reason = reason;
    pw__trace(ctx, &e);
}

/* Serve kernel k's packed form from the cache file when its entry matches in every
 * respect (layout, packer version, kernel, source content, packed checksum); otherwise
 * say why in a cache event and return 0 so the caller packs. */
static int from_cache(pw_context *ctx, pw_weight *h, const pw__kernel *k, packed_form *pf) {
    char why[256];
    const char *name = h->view.name ? h->view.name : "";
    pw__pack_desc d;
    pw__weights_key key;
    const uint8_t *bytes = NULL;
    const pw__cache_entry *e = NULL;
    if (k->pack_plan(ctx, h->view.format, h->view.shape[0], h->view.shape[1], &d) != PW_OK) {
        snprintf(why, sizeof why, "kernel %s cannot plan '%s': packing at load", k->info.name, name);
    } else if ((e = pw__cache_find(h->cache, name, d.family)) == NULL) {
        char refused[160];
        pw__cache_refused_summary(h->cache, refused, sizeof refused);
        snprintf(why, sizeof why, "no usable %s entry for '%s'%s: packing at load", d.family, name,
                 refused);
    } else if (e->info.format != h->view.format || e->info.rows != h->view.shape[0] || e->info.in != h->view.shape[1]) {
        snprintf(why, sizeof why, "entry for '%s' is for another format or shape: packing at load", name);
    } else if (strcmp(e->info.family, d.family) != 0 || e->info.nr != d.nr || e->info.kr != d.kr ||
               e->info.sr != d.sr || e->info.group != d.group || e->info.version != d.version ||
               e->info.bytes != d.bytes) {
        snprintf(why, sizeof why, "entry for '%s' is %s v%d, the kernel wants %s v%d: packing at load", name,
                 e->info.family, (int)e->info.version, d.family, (int)d.version);
    } else if (strcmp(e->info.kernel, k->info.name) != 0) {
        snprintf(why, sizeof why, "entry for '%s' was packed for %s, dispatch chose %s: packing at load", name,
                 e->info.kernel, k->info.name);
    } else if (pw__gguf_weight_key(ctx, &h->view, &d, &key) != PW_OK || key.lo != e->key.lo || key.hi != e->key.hi) {
        snprintf(why, sizeof why, "entry for '%s' was made from other source bytes: packing at load", name);
    } else if ((bytes = pw__cache_entry_data(h->cache, e, why, sizeof why)) == NULL) {
        const size_t n = strlen(why);
        snprintf(why + n, sizeof why - n, ": refused, packing at load");
    } else {
        memset(pf, 0, sizeof *pf);
        pf->packer = k;
        pf->desc = d;
        pf->bytes = (uint8_t *)(uintptr_t)bytes;
        pf->borrowed = 1;
        trace_cache(ctx, h->view.name, "served from the cache file");
        return 1;
    }
    trace_cache(ctx, h->view.name, why);
    return 0;
}

/* The packed form for kernel k, made on first use. */
static pw_status packed_for(pw_context *ctx, pw_weight *h, const pw__kernel *k, packed_form **pf) {
    for (int i = 0; i < h->npacked; ++i) {
        if (h->packed[i].packer == k || strcmp(h->packed[i].desc.family, k->info.family) == 0) {
            PW__TRY(check_family(ctx, k, &h->packed[i].desc));
            *pf = &h->packed[i];
            return PW_OK;
        }
    }
    PW__FAIL_IF(h->npacked == PW__MAX_PACKED, ctx, PW_ERR_UNSUPPORTED,
                "weight '%s' already holds %d packed forms", view_name(&h->view), PW__MAX_PACKED);
    if (h->cache != NULL && from_cache(ctx, h, k, &h->packed[h->npacked])) {
        *pf = &h->packed[h->npacked++];
        return PW_OK;
    }
    PW__TRY(pack_weight(ctx, k, &h->view, &h->packed[h->npacked]));
    *pf = &h->packed[h->npacked++];
    return PW_OK;
}

/* The weight as a ROW_MAJOR view, relaid out once if needed. */
static pw_status row_major_for(pw_context *ctx, pw_weight *h, const pw_view **v) {
    if (pw_view_order(&h->view) == PW_ORDER_ROW_MAJOR) {
        *v = &h->view;
        return PW_OK;
    }
    if (h->row_major_bytes == NULL) {
        pw_arena *a = NULL;
        PW__TRY(pw_arena_create(ctx, &a));
        pw_view tmp;
        pw_status st = pw_view_prepack(ctx, &h->view, (pw_layout){PW_ORDER_ROW_MAJOR, 0}, a, &tmp);
        if (st == PW_OK) {
            const uint64_t bytes = pw_view_bytes(&tmp);
            h->row_major_bytes = pw__alloc(ctx, (size_t)bytes, 64);
            if (h->row_major_bytes == NULL) {
                st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "cannot allocate %" PRIu64 " bytes", bytes);
            } else {
                memcpy(h->row_major_bytes, tmp.data, (size_t)bytes);
                h->row_major = tmp;
                h->row_major.data = h->row_major_bytes;
                h->row_major.storage = PW_STORAGE_BORROWED;
            }
        }
        pw_arena_destroy(a);
        PW__TRY(st);
    }
    *v = &h->row_major;
    return PW_OK;
}

pw_status pw_matmul_wt(pw_context *ctx, const float *x, int64_t n, pw_weight *h, float *y) {
    PW__FAIL_IF(ctx == NULL || h == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_wt: ctx and weight must be non-NULL");
    PW__FAIL_IF(h->ctx != ctx, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_wt: the weight handle belongs to another context");
    PW__FAIL_IF(x == NULL || y == NULL || n < 1, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_wt: x and y must be non-NULL and n >= 1 (n = %" PRId64 ")", n);
    const int cls = n >= 2;
    const pw__kernel *k = h->chosen[cls];
    if (k == NULL) {
        k = h->forced;
        if (k == NULL) {
            k = pw__kernel_for_weight(ctx, h->view.format, n);
            if (k == NULL) {
                k = pw__kernel_reference(h->view.format);
                char reason[160];
                snprintf(reason, sizeof reason, "no %s kernel for %s at isa %s",
                         cls ? "gemm" : "gemv", pw_format_get(h->view.format)->name,
                         pw_isa_name(pw_context_isa(ctx)));
                trace_fallback(ctx, k, h->view.name, reason);
            }
        }
        if (!k->info.is_reference) trace_kernel(ctx, k, h->view.name);
        h->chosen[cls] = k;
    }
    pw__mm_call call;
    memset(&call, 0, sizeof call);
    call.out = h->view.shape[0];
    call.in = h->view.shape[1];
    call.n = n;
    call.y = y;
    call.ldy = call.out;
    if (k->info.is_reference) {
        call.w = &h->view;
    } else if (k->info.layout == PW_LAYOUT_PACKED) {
        packed_form *pf = NULL;
        PW__TRY(packed_for(ctx, h, k, &pf));
        call.packed = pf->bytes;
        call.pack_desc = &pf->desc;
    } else if (k->info.layout == PW_LAYOUT_BLOCKED_ROW_MAJOR) {
        PW__TRY(row_major_for(ctx, h, &call.w));
    } else {
        call.w = &h->view;
    }
    PW__TRY(prepare_activations(ctx, k, x, n, call.in, &h->scratch, &h->scratch_bytes, &call));
    pw__kernel_run(ctx, k, &call);
    return PW_OK;
}
