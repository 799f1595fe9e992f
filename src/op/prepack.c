/*
 * pw_cache_prepack: pack every 2-D weight of a GGUF into the forms the
 * planner gives it under the policy (the same plan pw_weight_create makes on
 * this context) and write them to a weights-cache file, streaming. Each form
 * is packed a chunk of tiles at a time on the context's threads; each chunk
 * is written out and checksummed, the source's content hash is taken on the
 * way (for the full check), and the source pages done with are released
 * (madvise), so resident memory stays near one chunk. The file is written as
 * a temporary in the destination's folder, synced and renamed over the
 * destination: a kill at any moment leaves the previous cache or the new one.
 */
#include "op/op.h"

#include "base/file_io.h"
#include "cache/cache_internal.h"
#include "format/format_internal.h"
#include "packwise.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void pw_cache_prepack_options_init(pw_cache_prepack_options *o) {
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

typedef struct plan_entry {
    pw_view view;
    const pw__kernel *kernel;
    pw__pack_desc desc;
} plan_entry;

/* The packed forms a weight over view v would plan under `policy` on this context
 * (what pw_weight_create would hold); COPY forms are not written (they are the
 * file's own bytes in another order, and a GGUF is always row-major). */
static pw_status forms_for(pw_context *ctx, const pw_view *v, pw_memory_policy policy,
                           plan_entry *e, int *n) {
    *n = 0;
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.policy = policy;
    pw_weight *w = NULL;
    PW__TRY(pw_weight_create(ctx, v, &o, &w));
    for (int i = 0; i < w->plan.nforms; ++i) {
        const pw__form *f = &w->plan.forms[i];
        if (f->kind != PW__FORM_PACKED) continue;
        e[*n].view = *v;
        e[*n].kernel = f->packer;
        e[*n].desc = f->desc;
        ++*n;
    }
    pw_weight_destroy(w);
    return PW_OK;
}

/* Drop the resident pages of [p, p + n) of a read-only file mapping (whole pages inside). */
static void release_pages(const void *p, uint64_t n) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

typedef struct chunk_task {
    const pw__kernel *k;
    const pw__pack_desc *d;
    const pw__source *w;
    uint8_t *buf;
    int64_t t0;     /* first tile of the chunk */
    int64_t per;    /* tiles per task */
    int64_t t_end;  /* one past the chunk's last tile */
} chunk_task;

static void pack_chunk_task(void *p, size_t i) {
    const chunk_task *c = p;
    const int64_t a = c->t0 + (int64_t)i * c->per;
    const int64_t b = a + c->per < c->t_end ? a + c->per : c->t_end;
    const int64_t nr = c->d->nr;
    const int64_t o1 = b * nr < c->d->out ? b * nr : c->d->out;
    c->k->pack(c->d, c->w, a * nr, o1, c->buf + (uint64_t)(a - c->t0) * c->d->tile_bytes);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pack entry i chunk by chunk into the writer, releasing the source rows done with. */
static pw_status pack_entry(pw_context *ctx, pw__cache_writer *wr, int64_t i, const plan_entry *e,
                            uint64_t chunk_bytes, uint8_t *buf) {
    const pw__pack_desc *d = &e->desc;
    int64_t tiles_per_chunk = (int64_t)(chunk_bytes / d->tile_bytes);
    if (tiles_per_chunk < 1) tiles_per_chunk = 1;
    const pw__format_traits *t = pw__format(e->view.format);
    const uint64_t row_bytes = (uint64_t)(e->view.shape[1] / t->info.block_size) * (uint64_t)t->info.block_bytes;
    for (int64_t t0 = 0; t0 < d->tiles; t0 += tiles_per_chunk) {
        const int64_t t1 = t0 + tiles_per_chunk < d->tiles ? t0 + tiles_per_chunk : d->tiles;
        const int64_t threads = pw__threads(ctx);
        const pw__source src = {.view = &e->view};
        chunk_task ct = {e->kernel, d, &src, buf, t0, (t1 - t0 + 4 * threads - 1) / (4 * threads), t1};
        if (ct.per < 1) ct.per = 1;
        pw__parallel_for(ctx, pack_chunk_task, &ct, (size_t)((t1 - t0 + ct.per - 1) / ct.per));
        PW__TRY(pw__cache_writer_data(wr, i, (uint64_t)t0 * d->tile_bytes, buf, (uint64_t)(t1 - t0) * d->tile_bytes));
        /* The source rows of these tiles are done with. */
        const int64_t o0 = t0 * d->nr, o1 = t1 * d->nr < d->out ? t1 * d->nr : d->out;
        release_pages(pw_view_block_ptr(&e->view, o0, 0), (uint64_t)(o1 - o0) * row_bytes);
    }
    return PW_OK;
}

pw_status pw_cache_prepack(pw_context *ctx, const char *gguf_path, const char *cache_path,
                           const pw_cache_prepack_options *options) {
    PW__FAIL_IF(ctx == NULL || gguf_path == NULL || cache_path == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_cache_prepack: NULL argument");
    PW__FAIL_IF(!pw__hash_available(), ctx, PW_ERR_UNSUPPORTED,
                "weights-cache files need xxHash (libxxhash-dev)");
    pw_cache_prepack_options o;
    pw_cache_prepack_options_init(&o);
    if (options != NULL) {
        PW__FAIL_IF(options->struct_size == 0 || options->struct_size > sizeof o, ctx, PW_ERR_INVALID_ARGUMENT,
                    "pw_cache_prepack: options.struct_size is %zu; use pw_cache_prepack_options_init",
                    options->struct_size);
        memcpy(&o, options, options->struct_size);
    }
    const uint64_t chunk = o.chunk_bytes ? o.chunk_bytes : (16u << 20);
    PW__TRY(pw__refuse_same_file(ctx, cache_path, gguf_path)); /* it would replace the model */
    PW__FAIL_IF(o.policy < PW_MEMORY_DEFAULT || o.policy > PW_MEMORY_IN_PLACE, ctx,
                PW_ERR_INVALID_ARGUMENT, "pw_cache_prepack: policy %d is not a pw_memory_policy",
                (int)o.policy);
    const pw_memory_policy policy = o.policy == PW_MEMORY_DEFAULT ? pw_context_memory_policy(ctx) : o.policy;
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    PW__TRY(pw_gguf_open(ctx, gguf_path, &go, &g));
    pw_status st = PW_OK;
    const int64_t nt = pw_gguf_tensor_count(g);
    const size_t cap = nt ? 2 * (size_t)nt : 1; /* a GEMM and a GEMV form per tensor at most */
    plan_entry *plan = pw__calloc(ctx, cap, sizeof *plan, 64);
    pw__cache_record *recs = pw__calloc(ctx, cap, sizeof *recs, 64);
    uint8_t *buf = NULL;
    pw__cache_writer *wr = NULL;
    int64_t n = 0;
    uint64_t max_tile = 0;
    if (plan == NULL || recs == NULL) st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_prepack: out of memory");
    for (int64_t i = 0; i < nt && st == PW_OK; ++i) {
        pw_gguf_tensor_info info;
        st = pw_gguf_tensor_info_get(ctx, g, i, &info);
        if (st != PW_OK || !info.format_known || info.rank != 2 || strlen(info.name) == 0) continue;
        pw_view v;
        st = pw_gguf_tensor_view(ctx, g, i, &v);
        int got = 0;
        if (st == PW_OK) st = forms_for(ctx, &v, policy, &plan[n], &got);
        for (int j = 0; j < got; ++j, ++n) {
            plan_entry *e = &plan[n];
            pw__cache_record *r = &recs[n];
            memset(r, 0, sizeof *r);
            r->name = e->view.name;
            r->kernel = e->kernel->info.name;
            r->key.source = pw__cache_view_key(&e->view);
            r->key.kind = PW_WEIGHT_BLOCKS;
            r->key.format = info.format;
            r->key.rows = info.shape[0];
            r->key.in = info.shape[1];
            pw__strlcpy(r->key.family, e->desc.family, sizeof r->key.family);
            r->key.nr = e->desc.nr;
            r->key.kr = e->desc.kr;
            r->key.sr = e->desc.sr;
            r->key.group = e->desc.group;
            r->key.version = e->desc.version;
            r->key.bytes = e->desc.bytes;
            if (e->desc.tile_bytes > max_tile) max_tile = e->desc.tile_bytes;
        }
    }
    if (st == PW_OK) {
        buf = pw__alloc(ctx, (size_t)(chunk > max_tile ? chunk : max_tile), 64);
        if (buf == NULL) st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "pw_cache_prepack: out of memory");
    }
    if (st == PW_OK) st = pw__cache_writer_open(ctx, cache_path, recs, n, &wr);
    for (int64_t i = 0; i < n && st == PW_OK; ++i) {
        plan_entry *e = &plan[i];
        const double t0 = now_s();
        /* The content hash, for the full check; the source pages it reads are
         * released as the packing goes through them. */
        const pw__digest content = pw__cache_view_content(&e->view);
        st = pack_entry(ctx, wr, i, e, chunk, buf);
        if (st == PW_OK) st = pw__cache_writer_end_entry(wr, i, &content);
        if (st == PW_OK && o.progress)
            o.progress(o.progress_user, e->view.name, i, n, pw_view_bytes(&e->view), e->desc.bytes, now_s() - t0);
    }
    if (st == PW_OK) {
        st = pw__cache_writer_commit(wr);
        wr = NULL;
    }
    pw__cache_writer_abort(wr);
    pw__free(ctx, recs);
    pw__free(ctx, buf);
    pw__free(ctx, plan);
    pw_gguf_close(g);
    return st;
}
