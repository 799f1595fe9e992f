/*
 * A weight's life (packwise/weight.h): creation and planning, forms made
 * ready once (packed, copied, or taken from a cache), the source handed back
 * once nothing reads it, information, destruction.
 */
#include "op/op.h"

#include "cache/cache_internal.h"
#include "format/format_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *pw_memory_policy_name(pw_memory_policy p) {
    switch (p) {
    case PW_MEMORY_DEFAULT: return "default";
    case PW_MEMORY_COMPACT: return "compact";
    case PW_MEMORY_FASTEST: return "fastest";
    case PW_MEMORY_IN_PLACE: return "in_place";
    }
    return "unknown";
}

pw_status pw_memory_policy_from_name(const char *name, pw_memory_policy *out) {
    PW__FAIL_IF(name == NULL || out == NULL, NULL, PW_ERR_INVALID_ARGUMENT,
                "pw_memory_policy_from_name: NULL argument");
    for (int p = PW_MEMORY_COMPACT; p <= PW_MEMORY_IN_PLACE; ++p) {
        if (strcmp(name, pw_memory_policy_name((pw_memory_policy)p)) == 0) {
            *out = (pw_memory_policy)p;
            return PW_OK;
        }
    }
    return PW_ERR_INVALID_ARGUMENT;
}

void pw_weight_options_init(pw_weight_options *o) {
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->min = -INFINITY;
    o->max = INFINITY;
}

/* ------------------------------------------------------------------------ */
/* Trace                                                                    */
/* ------------------------------------------------------------------------ */

void pw__trace_kernel(pw_context *ctx, const pw__kernel *k, const char *tensor) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_KERNEL;
    e.kernel = k->info.name;
    e.key = k->info.key;
    e.tensor = tensor;
    pw__trace(ctx, &e);
}

void pw__trace_fallback(pw_context *ctx, const pw__kernel *k, const char *tensor, const char *reason) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_FALLBACK;
    e.kernel = k->info.name;
    e.tensor = tensor;
    e.reason = reason;
    pw__trace(ctx, &e);
}

void pw__trace_cache(pw_context *ctx, const char *tensor, const char *reason) {
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_CACHE;
    e.tensor = tensor;
    e.reason = reason;
    pw__trace(ctx, &e);
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

/* *buf of at least `bytes`, grown (never shrunk) as calls need more. */
static uint8_t *grown(pw_context *ctx, uint8_t **buf, size_t *have, size_t bytes) {
    if (bytes > *have) {
        uint8_t *s = pw__alloc(ctx, bytes, 64);
        if (s == NULL) return NULL;
        pw__free(ctx, *buf);
        *buf = s;
        *have = bytes;
    }
    return *buf;
}

uint8_t *pw__ctx_scratch(pw_context *ctx, size_t bytes) {
    return grown(ctx, &ctx->scratch, &ctx->scratch_bytes, bytes);
}

uint8_t *pw__ctx_outer_scratch(pw_context *ctx, size_t bytes) {
    return grown(ctx, &ctx->outer, &ctx->outer_bytes, bytes);
}

/* ------------------------------------------------------------------------ */
/* Packing                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct pack_task {
    const pw__kernel *k;
    const pw__pack_desc *desc;
    const pw__source *src;
    uint8_t *dst;
    int64_t tiles_per_task;
} pack_task;

static void run_pack(void *p, size_t t) {
    const pack_task *pt = p;
    const int64_t nr = pt->desc->nr;
    const int64_t o0 = (int64_t)t * pt->tiles_per_task * nr;
    int64_t o1 = o0 + pt->tiles_per_task * nr;
    if (o1 > pt->desc->out) o1 = pt->desc->out;
    pt->k->pack(pt->desc, pt->src, o0, o1, pt->dst + (uint64_t)(o0 / nr) * pt->desc->tile_bytes);
}

pw_status pw__pack_form(pw_context *ctx, const pw__kernel *packer, const pw__pack_desc *d,
                        const pw__source *src, const char *name, const char *from, uint8_t *dst) {
    pack_task pt = {packer, d, src, dst, 1};
    /* Small weights pack faster on the calling thread than by waking the pool. */
    const int64_t tasks_want = d->bytes < (1u << 20) ? 1 : 8 * (int64_t)pw__threads(ctx);
    pt.tiles_per_task = (d->tiles + tasks_want - 1) / tasks_want;
    if (pt.tiles_per_task < 1) pt.tiles_per_task = 1;
    pw__parallel_for(ctx, run_pack, &pt, (size_t)((d->tiles + pt.tiles_per_task - 1) / pt.tiles_per_task));
    trace_adapter(ctx, name, d->bytes, from, d->family);
    return PW_OK;
}

typedef struct view_job {
    pw_weight *w;
    pw__form *f;
    const char *from;
} view_job;

/* Pack a view form (the cache's pack callback). */
static pw_status pack_view_cb(pw_context *ctx, void *user, uint8_t *dst) {
    const view_job *j = user;
    const pw__source src = {.view = &j->w->view};
    return pw__pack_form(ctx, j->f->packer, &j->f->desc, &src, j->w->name, j->from, dst);
}

/* The weight's source key for the cache, computed once (a view's content is hashed
 * only when it has no file identity). */
static pw__digest source_key(pw_weight *w) {
    if (!w->have_source_key) {
        w->source_key = pw__cache_view_key(&w->view);
        w->have_source_key = 1;
    }
    return w->source_key;
}

static void cache_key_of(const pw_weight *w, const pw__form *f, pw__digest source, pw__cache_key *k) {
    memset(k, 0, sizeof *k);
    k->source = source;
    k->kind = w->kind;
    k->format = w->kind == PW_WEIGHT_BLOCKS ? w->view.format : PW_FORMAT_COUNT;
    k->rows = w->out;
    k->in = w->in;
    pw__strlcpy(k->family, f->desc.family, sizeof k->family);
    k->nr = f->desc.nr;
    k->kr = f->desc.kr;
    k->sr = f->desc.sr;
    k->group = f->desc.group;
    k->version = f->desc.version;
    k->bytes = f->desc.bytes;
}

/* Make a PACKED form ready: pack(ctx, user, dst) fills it, through the weight's cache
 * (under `source`) when it has one. */
pw_status pw__ready_packed(pw_context *ctx, pw_weight *w, pw__form *f, pw__digest source,
                          pw__cache_pack_fn pack, void *user) {
    if (w->cache != NULL && strlen(f->desc.family) < PW__CACHE_FAMILY_LEN) {
        pw__cache_key key;
        cache_key_of(w, f, source, &key);
        const uint8_t *bytes = NULL;
        pw__cache_how how;
        char why[320];
        PW__TRY(pw__cache_get(ctx, w->cache, &key, w->name, pack, user, &bytes, &how, why, sizeof why));
        f->data = bytes;
        f->cache = w->cache;
        f->from_cache = how != PW__CACHE_PACKED;
        char reason[400];
        if (how == PW__CACHE_FILE)
            snprintf(reason, sizeof reason, "served from the cache file");
        else if (how == PW__CACHE_MEMORY)
            snprintf(reason, sizeof reason, "hit: packed weights shared");
        else
            snprintf(reason, sizeof reason, "miss: packed and stored%s%s", why[0] ? "; " : "", why);
        pw__trace_cache(ctx, w->name, reason);
        return PW_OK;
    }
    f->own = pw__alloc(ctx, (size_t)f->desc.bytes, 64);
    PW__FAIL_IF(f->own == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "cannot allocate %" PRIu64 " bytes to pack '%s' for %s", f->desc.bytes, w->name,
                f->packer->info.name);
    PW__TRY(pack(ctx, user, f->own));
    f->data = f->own;
    return PW_OK;
}

/* A ROW_MAJOR copy of the weight's view. */
static pw_status ready_copy(pw_context *ctx, pw_weight *w, pw__form *f) {
    const pw__format_traits *t = pw__format(w->view.format);
    const int64_t bpr = w->in / t->info.block_size, bb = t->info.block_bytes;
    f->own = pw__alloc(ctx, (size_t)f->bytes, 64);
    PW__FAIL_IF(f->own == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "cannot allocate %" PRIu64 " bytes for a row-major copy of '%s'", f->bytes, w->name);
    for (int64_t o = 0; o < w->out; ++o)
        for (int64_t b = 0; b < bpr; ++b)
            memcpy(f->own + (uint64_t)(o * bpr + b) * (uint64_t)bb, pw_view_block_ptr(&w->view, o, b),
                   (size_t)bb);
    int64_t shape[2] = {w->out, w->in};
    PW__TRY(pw_view_init(ctx, &f->copy_view, w->view.format, 2, shape, PW_LAYOUT_ROW_MAJOR, f->own, f->bytes));
    f->copy_view.name = w->name;
    f->data = f->own;
    char from[32];
    trace_adapter(ctx, w->name, f->bytes, pw_layout_name(pw_view_layout(&w->view), from, sizeof from),
                  "row_major");
    return PW_OK;
}

/* Hand the source's whole pages back to the file once nothing reads them. */
static void release_source(pw_weight *w) {
    if (w->released || w->kind != PW_WEIGHT_BLOCKS || w->view.storage != PW_STORAGE_MAPPED) return;
    for (int c = 0; c < 2; ++c)
        if (w->plan.k[c] != NULL && (w->plan.form[c] < 0 || !atomic_load(&w->ready[c]))) return;
    const pw__format_traits *t = pw__format(w->view.format);
    const int64_t bpr = w->in / t->info.block_size;
    const uint8_t *first = pw_view_block_ptr(&w->view, 0, 0);
    const uint8_t *last = pw_view_block_ptr(&w->view, w->out - 1, bpr - 1) + t->info.block_bytes;
    if (w->view.strides[0] < 0 || w->view.strides[1] < 0 || last <= first) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = ((uintptr_t)first + page - 1) & ~(page - 1), e = (uintptr_t)last & ~(page - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_DONTNEED);
    w->released = 1;
}

pw_status pw__weight_ready(pw_context *ctx, pw_weight *w, int c) {
    pthread_mutex_lock(&w->lock);
    pw_status st = PW_OK;
    if (!atomic_load_explicit(&w->ready[c], memory_order_acquire)) {
        const int fi = w->plan.form[c];
        pw__form *f = fi >= 0 ? &w->plan.forms[fi] : NULL;
        if (f != NULL && f->data == NULL) {
            if (f->kind == PW__FORM_COPY) {
                st = ready_copy(ctx, w, f);
            } else {
                char from[32];
                view_job job = {w, f, pw_layout_name(pw_view_layout(&w->view), from, sizeof from)};
                const pw__digest key = w->cache != NULL ? source_key(w) : (pw__digest){0, 0};
                st = pw__ready_packed(ctx, w, f, key, pack_view_cb, &job);
            }
            if (st == PW_OK && f->data != NULL && f->kind == PW__FORM_PACKED)
                st = pw__kernel_check_family(ctx, w->plan.k[c], &f->desc);
        }
        if (st == PW_OK) {
            const pw__kernel *k = w->plan.k[c];
            /* One event per kernel: a kernel serving both classes is announced once. */
            const int told = atomic_load_explicit(&w->ready[1 - c], memory_order_relaxed) &&
                             w->plan.k[1 - c] == k;
            if (told) {
            } else if (w->plan.fallback[c]) {
                char reason[240], lay[32];
                snprintf(reason, sizeof reason, "no %s kernel reads %s %s under the %s policy (isa %s)",
                         c == PW__GEMV ? "gemv" : "gemm",
                         pw_layout_name(pw_view_layout(&w->view), lay, sizeof lay),
                         pw_format_get(w->view.format)->name, pw_memory_policy_name(w->plan.policy),
                         pw_isa_name(pw_context_isa(ctx)));
                pw__trace_fallback(ctx, k, w->name, reason);
            } else {
                pw__trace_kernel(ctx, k, w->name);
            }
            atomic_store_explicit(&w->ready[c], 1, memory_order_release);
            release_source(w);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

pw_status pw__take_options(pw_context *ctx, const pw_weight_options *options, pw_weight_options *o,
                              const char *fn) {
    pw_weight_options_init(o);
    if (options != NULL) {
        PW__FAIL_IF(options->struct_size == 0 || options->struct_size > sizeof *o, ctx,
                    PW_ERR_INVALID_ARGUMENT, "%s: options.struct_size is %zu; use pw_weight_options_init",
                    fn, options->struct_size);
        memcpy(o, options, options->struct_size);
    }
    PW__FAIL_IF(isnan(o->min) || isnan(o->max) || o->min > o->max, ctx, PW_ERR_INVALID_ARGUMENT,
                "%s: clamp [%g, %g] must be ordered and not NaN", fn, (double)o->min, (double)o->max);
    PW__FAIL_IF(o->policy < PW_MEMORY_DEFAULT || o->policy > PW_MEMORY_IN_PLACE, ctx,
                PW_ERR_INVALID_ARGUMENT, "%s: policy %d is not a pw_memory_policy", fn, (int)o->policy);
    PW__FAIL_IF((o->serves & ~(uint32_t)(PW_SERVE_GEMV | PW_SERVE_GEMM)) != 0, ctx,
                PW_ERR_INVALID_ARGUMENT, "%s: serves 0x%x has unknown bits", fn, (unsigned)o->serves);
    if (o->serves == 0) o->serves = PW_SERVE_GEMV | PW_SERVE_GEMM;
    if (o->policy == PW_MEMORY_DEFAULT) o->policy = pw_context_memory_policy(ctx);
    return PW_OK;
}

/* A new weight with its name, options and lock; the caller plans it. */
pw_status pw__weight_new(pw_context *ctx, pw_weight_kind kind, const char *name, int64_t out,
                            int64_t in, const pw_weight_options *o, pw_weight **res) {
    pw_weight *w = pw__calloc(ctx, 1, sizeof *w, 64);
    PW__FAIL_IF(w == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_weight_create: out of memory");
    const size_t n = name ? strlen(name) : 0;
    w->name = pw__alloc(ctx, n + 1, 16);
    if (w->name == NULL || pthread_mutex_init(&w->lock, NULL) != 0) {
        pw__free(ctx, w->name);
        pw__free(ctx, w);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_weight_create: out of memory");
    }
    if (n) memcpy(w->name, name, n);
    w->name[n] = '\0';
    w->kind = kind;
    w->out = out;
    w->in = in;
    w->min = o->min;
    w->max = o->max;
    w->alloc = ctx->allocator;
    atomic_init(&w->ready[0], 0);
    atomic_init(&w->ready[1], 0);
    *res = w;
    if (o->bias != NULL) {
        for (int64_t i = 0; i < out; ++i)
            PW__FAIL_IF(!isfinite(o->bias[i]), ctx, PW_ERR_INVALID_ARGUMENT,
                        "weight '%s': bias[%" PRId64 "] = %g is not finite", w->name, i,
                        (double)o->bias[i]);
        w->bias = pw__alloc(ctx, sizeof(float) * (size_t)out, 64);
        PW__FAIL_IF(w->bias == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "weight '%s': out of memory", w->name);
        memcpy(w->bias, o->bias, sizeof(float) * (size_t)out);
    }
    if (o->cache != NULL) {
        pw__cache_retain(o->cache);
        w->cache = o->cache;
    }
    return PW_OK;
}

pw_status pw__forced_kernel(pw_context *ctx, const char *name, pw_weight_kind kind, pw_format format,
                               int64_t in, const pw__kernel **out) {
    *out = NULL;
    if (name == NULL) return PW_OK;
    size_t idx;
    PW__TRY(pw_kernel_find(ctx, name, &idx));
    const pw__kernel *k = pw__kernel_list_get(idx);
    PW__FAIL_IF(k->info.kind != kind || (kind == PW_WEIGHT_BLOCKS && k->info.format != format), ctx,
                PW_ERR_UNSUPPORTED, "kernel %s reads %s weights, not %s", k->info.name,
                pw__kind_name(k->info.kind, k->info.format), pw__kind_name(kind, format));
    PW__FAIL_IF(!pw__kernel_usable(ctx, k), ctx, PW_ERR_UNSUPPORTED,
                "kernel %s needs CPU features this context does not allow (isa %s; check "
                "PACKWISE_ISA and the CPU)",
                k->info.name, pw_isa_name(pw_context_isa(ctx)));
    PW__FAIL_IF(k->max_in != 0 && in > k->max_in, ctx, PW_ERR_UNSUPPORTED,
                "kernel %s sums exactly in int32 only up to in = %" PRId64 ", not %" PRId64,
                k->info.name, k->max_in, in);
    *out = k;
    return PW_OK;
}

static const char *view_name(const pw_view *v) { return v->name ? v->name : ""; }

pw_status pw_weight_create(pw_context *ctx, const pw_view *v, const pw_weight_options *options,
                           pw_weight **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_create: NULL argument");
    *out = NULL;
    PW__FAIL_IF(v == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_weight_create: weight view is NULL");
    PW__TRY(pw_view_check(ctx, v));
    PW__FAIL_IF(v->rank != 2, ctx, PW_ERR_SHAPE,
                "pw_weight_create '%s': the weight must be 2-D [out, in], not rank %d (take one "
                "expert of a 3-D [E, out, in] weight with pw_view_select(), or all of them with "
                "pw_weight_create_experts())",
                view_name(v), (int)v->rank);
    PW__FAIL_IF(v->block_axis != 1, ctx, PW_ERR_ORIENTATION,
                "pw_weight_create '%s': the weight is labelled [in, out] = [%" PRId64 ", %" PRId64
                "] (its blocks tile axis 0, as GGUF's ne order writes it); open the file with "
                "PW_ORIENT_OUT_IN so it is [out, in], and keep it that way: pw_matmul_wt computes "
                "x*W^T without transposing W",
                view_name(v), v->shape[0], v->shape[1]);
    pw_weight_options o;
    PW__TRY(pw__take_options(ctx, options, &o, "pw_weight_create"));
    const pw__kernel *forced;
    PW__TRY(pw__forced_kernel(ctx, o.kernel, PW_WEIGHT_BLOCKS, v->format, v->shape[1], &forced));
    pw_weight *w = NULL;
    pw_status st = pw__weight_new(ctx, PW_WEIGHT_BLOCKS, v->name, v->shape[0], v->shape[1], &o, &w);
    if (st == PW_OK) {
        w->view = *v;
        w->view.name = w->name;
        w->source_bytes = pw_view_bytes(v);
        st = pw__plan_make(ctx, w, o.policy, o.serves, forced);
    }
    if (st != PW_OK) {
        pw_weight_destroy(w);
        return st;
    }
    *out = w;
    return PW_OK;
}

pw_status pw_weight_prepare(pw_context *ctx, pw_weight *w) {
    PW__FAIL_IF(ctx == NULL || w == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_prepare: ctx and weight must be non-NULL");
    for (int c = 0; c < 2; ++c)
        if (w->plan.k[c] != NULL && !atomic_load_explicit(&w->ready[c], memory_order_acquire))
            PW__TRY(pw__weight_ready(ctx, w, c));
    return PW_OK;
}

void pw_weight_destroy(pw_weight *w) {
    if (w == NULL) return;
    const pw_allocator a = w->alloc;
    for (int i = 0; i < w->plan.nforms; ++i) {
        pw__form *f = &w->plan.forms[i];
        if (f->own != NULL) a.free(a.user, f->own);
        if (f->cache != NULL) pw__cache_release(f->cache);
    }
    if (w->cache != NULL) pw__cache_release(w->cache);
    if (w->bias != NULL) a.free(a.user, w->bias);
    if (w->name != NULL) a.free(a.user, w->name);
    pthread_mutex_destroy(&w->lock);
    a.free(a.user, w);
}

uint64_t pw_weight_bytes(const pw_weight *w) {
    if (w == NULL) return 0;
    uint64_t b = 0;
    for (int i = 0; i < w->plan.nforms; ++i)
        if (w->plan.forms[i].own != NULL) b += w->plan.forms[i].bytes;
    return b;
}

pw_status pw_weight_info_get(const pw_weight *w, pw_weight_info *info) {
    if (w == NULL || info == NULL || info->struct_size == 0) return PW_ERR_INVALID_ARGUMENT;
    pw_weight_info r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.name = w->name;
    r.kind = w->kind;
    r.out = w->out;
    r.in = w->in;
    r.policy = w->plan.policy;
    r.kernel_gemv = w->plan.k[PW__GEMV] ? w->plan.k[PW__GEMV]->info.name : "";
    r.kernel_gemm = w->plan.k[PW__GEMM] ? w->plan.k[PW__GEMM]->info.name : "";
    r.source_bytes = w->source_bytes;
    r.prepared = 1;
    for (int i = 0; i < w->plan.nforms; ++i) {
        r.packed_bytes += w->plan.forms[i].bytes;
        r.from_cache += w->plan.forms[i].from_cache;
    }
    r.forms = w->plan.nforms;
    for (int c = 0; c < 2; ++c) {
        if (w->plan.k[c] == NULL) continue;
        if (w->plan.form[c] < 0) r.reads_source = 1;
        if (!atomic_load(&((pw_weight *)(uintptr_t)w)->ready[c])) r.prepared = 0;
    }
    const size_t n = info->struct_size < sizeof r ? info->struct_size : sizeof r;
    memcpy(info, &r, n);
    info->struct_size = n;
    return PW_OK;
}

pw_status pw_weight_create_experts(pw_context *ctx, const pw_view *v, const pw_weight_options *options,
                                   pw_weight **experts, size_t count) {
    PW__FAIL_IF(ctx == NULL || v == NULL || (experts == NULL && count > 0), ctx,
                PW_ERR_INVALID_ARGUMENT, "pw_weight_create_experts: NULL argument");
    for (size_t e = 0; e < count; ++e) experts[e] = NULL;
    PW__TRY(pw_view_check(ctx, v));
    PW__FAIL_IF(v->rank != 3, ctx, PW_ERR_SHAPE,
                "pw_weight_create_experts '%s': the weight must be 3-D [E, out, in], not rank %d",
                view_name(v), (int)v->rank);
    PW__FAIL_IF((uint64_t)v->shape[0] != (uint64_t)count, ctx, PW_ERR_SHAPE,
                "pw_weight_create_experts '%s': the weight has %" PRId64 " experts but experts[] "
                "has room for %zu",
                view_name(v), v->shape[0], count);
    for (size_t e = 0; e < count; ++e) {
        pw_view one;
        char name[256];
        snprintf(name, sizeof name, "%s[%zu]", view_name(v), e);
        pw_status st = pw_view_select(ctx, v, 0, (int64_t)e, &one);
        one.name = name;
        if (st == PW_OK) st = pw_weight_create(ctx, &one, options, &experts[e]);
        if (st != PW_OK) {
            for (size_t k = 0; k <= e; ++k) {
                pw_weight_destroy(experts[k]);
                experts[k] = NULL;
            }
            return st;
        }
    }
    return PW_OK;
}
