/*
 * The operator inside (public side: packwise/weight.h). One pw_weight per
 * weight of any kind: a plan made at creation (plan.c), forms made ready once
 * (weight.c: packed, copied, or taken from a cache), runs (run.c). The only
 * module that knows kernels, caches and sources together: kernel/ below it
 * is a leaf, cache/ knows keys and bytes, never kernels.
 */
#ifndef PACKWISE_OP_H
#define PACKWISE_OP_H

#include "base/hash.h"
#include "base/internal.h"
#include "cache/cache_internal.h"
#include "kernel/kernel.h"
#include "packwise/cache.h"
#include "packwise/qc4w.h"
#include "packwise/weight.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>

/* Batch classes. */
#define PW__GEMV 0 /* n = 1 */
#define PW__GEMM 1 /* n >= 2 */

/* What a kernel reads. */
typedef enum pw__form_kind {
    PW__FORM_SOURCE = 0, /* the source view's bytes, as they are */
    PW__FORM_COPY = 1,   /* a ROW_MAJOR copy of a view in another order */
    PW__FORM_PACKED = 2  /* a packer's private form */
} pw__form_kind;

/* A form a plan holds (COPY or PACKED), and its state once made ready. */
typedef struct pw__form {
    pw__form_kind kind;
    const pw__kernel *packer;  /* PACKED: the kernel whose pack function makes it */
    pw__pack_desc desc;        /* PACKED: what it is */
    uint64_t bytes;
    const uint8_t *data;       /* ready: the bytes kernels read */
    uint8_t *own;              /* ... when the weight owns them */
    pw_cache *cache;           /* ... when a cache holds them (a reference taken) */
    int from_cache;            /* served by the cache without packing */
    pw_view copy_view;         /* COPY: the view over data */
} pw__form;

/* A plan: per batch class, the kernel and what it reads. */
typedef struct pw__plan {
    pw_memory_policy policy;
    uint32_t serves;              /* PW_SERVE_* */
    const pw__kernel *k[2];       /* NULL: class not served */
    int form[2];                  /* index into forms, or -1: the source */
    int fallback[2];              /* k is the reference (no kernel of the policy serves it) */
    pw__form forms[2];
    int nforms;
} pw__plan;

struct pw_weight {
    pw_weight_kind kind;
    pw_view view;                 /* BLOCKS: the caller's view (borrowed bytes) */
    int64_t out, in;
    uint64_t source_bytes;
    char *name;                   /* owned copy ("" when none) */
    pw__plan plan;
    float min, max;               /* epilogue clamp */
    float *bias;                  /* owned copy, or NULL (QC4W, QB4W: in the packed tiles) */
    int32_t group;                /* QB4W: the block size B (the packer's desc->group); else 0 */
    pw_cache *cache;              /* options.cache (a reference), or NULL */
    pw__digest source_key;        /* the cache's source key (computed once, when needed) */
    int have_source_key;
    pw_allocator alloc;           /* the creating context's, for the forms and the struct */
    pthread_mutex_t lock;         /* serializes preparation */
    atomic_int ready[2];          /* per class: its form ready and its kernel announced */
    int released;                 /* the source's pages were handed back */
};

/* The bytes of form i of a prepared weight (tests, and pw_weight_evict). */
static inline const uint8_t *pw__weight_form_data(const pw_weight *w, int i) {
    return i < w->plan.nforms ? w->plan.forms[i].data : NULL;
}

/* Plan a weight: w->kind, view (BLOCKS), out, in, source_bytes set; fills w->plan under
 * `policy` (never DEFAULT) for the classes in `serves`, with `forced` (or NULL). QC4W
 * weights are planned with view NULL. */
pw_status pw__plan_make(pw_context *ctx, pw_weight *w, pw_memory_policy policy, uint32_t serves,
                        const pw__kernel *forced);

/* Bytes the budget of COMPACT allows for a source of `source_bytes` bytes. */
uint64_t pw__compact_budget(uint64_t source_bytes);

/* Make class c's form ready (packing, copying, or from the cache), under the weight's
 * lock; announces the class's kernel (trace). QC4W weights are made ready at creation. */
pw_status pw__weight_ready(pw_context *ctx, pw_weight *w, int c);

/* The packing of one form from a source, on the context's threads; one adapter
 * event. Used by the weight and by cache-file prepack. */
pw_status pw__pack_form(pw_context *ctx, const pw__kernel *packer, const pw__pack_desc *d,
                        const pw__source *src, const char *name, const char *from, uint8_t *dst);

/* The kind's name in messages: "QC4W", "QB4W", or the format's name. */
static inline const char *pw__kind_name(pw_weight_kind kind, pw_format format) {
    return kind == PW_WEIGHT_QC4W ? "QC4W" : kind == PW_WEIGHT_QB4W ? "QB4W" : pw_format_get(format)->name;
}

/*
 * Weights from raw int4 arrays (QC4W, QB4W: op/raw_int4.c), which no kernel reads as
 * they are: one packed form serving every batch size, packed now while the arrays are
 * borrowed. The kind's constructor validates its descriptor and fills the spec; the
 * job's h and f are set before `pack` runs (it does not run on a cache hit).
 */
typedef struct pw__raw_job {
    pw_weight *h;
    pw__form *f;
} pw__raw_job;
typedef struct pw__raw_spec {
    pw_weight_kind kind;
    const char *api;           /* "pw_weight_create_qc4w", for messages */
    const char *name;          /* the weights' name, never NULL */
    int64_t out, in;
    int32_t group;             /* QB4W's block size, else 0 */
    uint64_t source_bytes;     /* the raw arrays' bytes, bias excluded */
    const float **bias;        /* the descriptor's bias (may be NULL); options.bias lands here */
    pw__digest (*key)(const pw__raw_job *job); /* the cache's source key */
    pw__cache_pack_fn pack;    /* called with the job */
    pw__raw_job *job;
} pw__raw_spec;
pw_status pw__weight_create_raw(pw_context *ctx, const pw__raw_spec *s,
                                const pw_weight_options *options, pw_weight **out);
/* A transposed K x N nibble source as N rows of ceil(K/2) bytes, on the context's threads,
 * with one adapter event (from -> to) for the weight h; *nk is freed with pw__free. */
pw_status pw__int4_transpose(pw_context *ctx, const pw_weight *h, const uint8_t *data, int64_t k,
                             int64_t n, const char *from, const char *to, uint8_t **nk);

/* Creation steps shared by the view and raw-int4 constructors (weight.c). */
pw_status pw__take_options(pw_context *ctx, const pw_weight_options *options, pw_weight_options *o,
                           const char *fn);
pw_status pw__weight_new(pw_context *ctx, pw_weight_kind kind, const char *name, int64_t out,
                         int64_t in, const pw_weight_options *o, pw_weight **res);
pw_status pw__forced_kernel(pw_context *ctx, const char *name, pw_weight_kind kind, pw_format format,
                            int64_t in, const pw__kernel **out);
/* Make a PACKED form ready: pack(ctx, user, dst) fills it, through the weight's cache
 * (under `source`) when it has one; a hit packs nothing. */
pw_status pw__ready_packed(pw_context *ctx, pw_weight *w, pw__form *f, pw__digest source,
                           pw__cache_pack_fn pack, void *user);

void pw__trace_kernel(pw_context *ctx, const pw__kernel *k, const char *tensor);
void pw__trace_fallback(pw_context *ctx, const pw__kernel *k, const char *tensor, const char *reason);
void pw__trace_cache(pw_context *ctx, const char *tensor, const char *reason);

/* Grow the context's scratch to `bytes` (64-byte aligned); NULL when memory is out. */
uint8_t *pw__ctx_scratch(pw_context *ctx, size_t bytes);
/* The same for a call that runs other calls (which use pw__ctx_scratch meanwhile). */
uint8_t *pw__ctx_outer_scratch(pw_context *ctx, size_t bytes);

/* Whether kernel k reads view v's bytes in the order they are in. */
int pw__reads_as_is(const pw__kernel *k, const pw_view *v);
/* Whether kernel k reads bytes in layout l (an order, and nr for row-tiled) as they are. */
int pw__reads_layout(const pw__kernel *k, pw_layout l);

#endif
