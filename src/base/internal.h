/*
 * Internal helpers shared by every module: failure reporting, checked
 * arithmetic, allocation through the context, tracing, and the context
 * struct itself. Not installed.
 */
#ifndef PACKWISE_INTERNAL_H
#define PACKWISE_INTERNAL_H

#include "packwise/base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PW__MESSAGE_CAPACITY 1024

struct pw_context {
    uint32_t cpu_features;    /* what the CPU has */
    uint32_t usable_features; /* cpu_features restricted by the cap */
    int32_t sme_bytes;        /* streaming vector length in bytes when the CPU has SME, else 0 */
    pw_isa cap;               /* PW_ISA_NATIVE = none */
    int threads;
    int prepack_weights;
    pw_trace_fn trace;
    void *trace_user;
    pw_allocator allocator;
    pw_parallel_for_fn parallel_for;
    void *parallel_for_user;
    struct pw__pool *pool; /* packwise's own pool (base/pool.h) when parallel_for is NULL and
                              threads > 1 */
    pw_memory_policy memory_policy; /* never DEFAULT */
    int spin_wait;          /* idle pool workers spin a while before they sleep */
    /* the threads of the calls made now (pw_context_set_call_threads, or one call's
     * pw_run_args): call_threads 0 = the context's; call_parallel_for NULL = the context's */
    int call_threads;
    pw_parallel_for_fn call_parallel_for;
    void *call_parallel_for_user;
    uint8_t *scratch;       /* the operator's per-call scratch (quantized X, ...), grown as needed */
    size_t scratch_bytes;
    uint8_t *outer;         /* scratch of a call that runs others (pw_matmul_wt_experts' gathered
                               rows), which use `scratch` meanwhile; grown as needed */
    size_t outer_bytes;
    char message[PW__MESSAGE_CAPACITY];
};

#if defined(__GNUC__)
#define PW__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PW__PRINTF(f, a)
#endif

/* Record a failure in ctx (if any) and return status. The message says what
 * and where; it must not end with a newline. */
pw_status pw__fail(pw_context *ctx, pw_status status, const char *fmt, ...) PW__PRINTF(3, 4);

/* Return status with a message when cond holds. */
#define PW__FAIL_IF(cond, ctx, status, ...)                                                  \
    do {                                                                                    \
        if (cond) return pw__fail((ctx), (status), __VA_ARGS__);                            \
    } while (0)

/* Propagate a non-OK status. */
#define PW__TRY(expr)                                                                       \
    do {                                                                                    \
        pw_status pw__s = (expr);                                                           \
        if (pw__s != PW_OK) return pw__s;                                                   \
    } while (0)

/* Checked arithmetic: true when the result overflowed. */
static inline bool pw__mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline bool pw__add_overflow_u64(uint64_t a, uint64_t b, uint64_t *r) {
    return __builtin_add_overflow(a, b, r);
}
static inline bool pw__mul_overflow_i64(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline bool pw__add_overflow_i64(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}

/* Allocation through the context's allocator (alignment a power of two <= 4096). */
void *pw__alloc(pw_context *ctx, size_t bytes, size_t alignment);
/* The default allocator (posix_memalign; large buffers 2 MiB aligned, with transparent
 * huge pages asked for); free() releases it. For allocator hooks that wrap it. */
void *pw__alloc_system(size_t bytes, size_t alignment);
void *pw__calloc(pw_context *ctx, size_t count, size_t size, size_t alignment);
void pw__free(pw_context *ctx, void *p);

/* Emit a trace event if a sink is set. */
void pw__trace(pw_context *ctx, const pw_trace_event *event);

/* Run task(task_context, i) for i in [0, range) on the threads of the calls made now:
 * the call's host parallel-for if one is set, else the context's hook or pool, on at
 * most pw__threads(ctx) of its threads. */
void pw__parallel_for(pw_context *ctx, pw_parallel_task task, void *task_context, size_t range);

/* The threads the work of the calls made now runs on (what work is split for): the
 * call's count (pw_context_set_call_threads, pw_run_args.threads) or the context's. */
int pw__threads(const pw_context *ctx);

/* Set the calls' threads (threads 0 and fn NULL: the context's own); the previous
 * setting goes to *saved_threads, *saved_fn, *saved_user when they are not NULL. */
void pw__call_threads_swap(pw_context *ctx, int threads, pw_parallel_for_fn fn, void *user,
                           int *saved_threads, pw_parallel_for_fn *saved_fn, void **saved_user);

/*
 * How a product over `out` outputs (in whole tiles of nr) and `n` rows of X (in
 * whole tiles of mr) splits into tasks: task t covers outputs [o0, o1) and rows
 * [i0, i1) (pw__task_grid_cell). Outputs are split first, into whole tiles, so a
 * task reads its weight bytes once. Rows of X are split only from `split_rows`
 * rows up and when there are too few tiles; a call with fewer rows streams its
 * weight once and gets 16 tasks per thread (a worker that wakes late, or a last
 * task still running while the other threads idle, costs a sixteenth of a
 * thread's share, not a quarter: GEMV [11008, 4096] on 2 threads measured 70-88%
 * of the read bandwidth with 4 per thread, 81-94% with 16), otherwise 4.
 */
typedef struct pw__task_grid {
    int64_t out, n;             /* the problem */
    int64_t o_chunk, i_chunk;   /* outputs and rows per task */
    int64_t o_tasks;            /* tasks along the outputs */
    size_t tasks;               /* all tasks */
} pw__task_grid;

pw__task_grid pw__task_grid_plan(int threads, int64_t out, int64_t nr, int64_t n, int64_t mr,
                                 int64_t split_rows);
void pw__task_grid_cell(const pw__task_grid *g, size_t t, int64_t *o0, int64_t *o1, int64_t *i0,
                        int64_t *i1);

/* CPU detection (cpu.c). */
uint32_t pw__detect_cpu_features(void);

/* PACKWISE_TUNE: which CPU's measured kernel settings (stream counts, prefetch hints and
 * distances) the kernels take. AUTO: the CPU's own, from CPUID; GENERIC: none of the
 * vendor settings; INTEL, ZEN4, ZEN5 (x86-64 only): that CPU's, on whatever CPU runs.
 * The settings change speed only, never which instructions run. Read once per process,
 * when the first context detects the CPU (base/cpu.c). */
enum { PW__TUNE_AUTO = 0, PW__TUNE_GENERIC, PW__TUNE_INTEL, PW__TUNE_ZEN4, PW__TUNE_ZEN5 };
/* The tuning a PACKWISE_TUNE value names (NULL or "" is auto), or -1 when it names none
 * of this architecture's. */
int pw__tune_from_name(const char *name);
#if defined(__x86_64__) || defined(_M_X64)
/* Whether the CPU has CLFLUSHOPT (CPUID read once per process). */
int pw__x86_has_clflushopt(void);
#endif
/* The streaming vector length (bytes) of the calling thread when the CPU has SME, else 0. */
int32_t pw__detect_sme_bytes(void);
uint32_t pw__features_for_isa(pw_isa isa);
pw_isa pw__isa_of_features(uint32_t features);
int pw__isa_rank(pw_isa isa); /* order within an architecture; native highest */

/* Bounded copy of a string into a fixed buffer; always NUL-terminates. */
void pw__strlcpy(char *dst, const char *src, size_t capacity);

#endif
