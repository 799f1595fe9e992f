/* The caller-owned context: CPU features, ISA cap, threads, allocator, trace sink. */
#include "internal.h"
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static _Thread_local char create_message[PW__MESSAGE_CAPACITY];

const char *pw_last_create_message(void) { return create_message; }

/* Buffers this large (packed weights, mostly) start on a 2 MiB boundary and ask for
 * transparent huge pages: a kernel streaming a weight then takes one TLB entry per
 * 2 MiB instead of per 4 KiB. On this project's machine (a VM, THP in madvise mode)
 * a cold read of a 48 MiB buffer measured 17.2-17.8 GB/s with huge pages against
 * 14.2-15.5 GB/s without, and GEMV over packed weights allocated late in a process
 * fell to 55-75% of the read bandwidth without them. The kernel may decline. */
#define PW__HUGE_MIN ((size_t)4 << 20)
#define PW__HUGE_ALIGN ((size_t)2 << 20)

void *pw__alloc_system(size_t bytes, size_t alignment) {
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    const int huge = bytes >= PW__HUGE_MIN && alignment < PW__HUGE_ALIGN;
    if (huge) alignment = PW__HUGE_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (huge) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

static void *default_alloc(void *user, size_t bytes, size_t alignment) {
    (void)user;
    return pw__alloc_system(bytes, alignment);
}

static void default_free(void *user, void *p) {
    (void)user;
    free(p);
}

pw_allocator pw_allocator_default(void) { return (pw_allocator){default_alloc, default_free, NULL}; }

void *pw__alloc(pw_context *ctx, size_t bytes, size_t alignment) {
    if (ctx == NULL) return default_alloc(NULL, bytes, alignment);
    return ctx->allocator.alloc(ctx->allocator.user, bytes, alignment);
}

void *pw__calloc(pw_context *ctx, size_t count, size_t size, size_t alignment) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return NULL;
    void *p = pw__alloc(ctx, bytes, alignment);
    if (p) memset(p, 0, bytes);
    return p;
}

void pw__free(pw_context *ctx, void *p) {
    if (p == NULL) return;
    if (ctx == NULL) {
        default_free(NULL, p);
        return;
    }
    ctx->allocator.free(ctx->allocator.user, p);
}

void pw_context_options_init(pw_context_options *o) {
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->max_isa = PW_ISA_NATIVE;
}

/* Threads for a count of 0: the online cores, at most PW_MAX_THREADS. */
static int online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n < PW_MAX_THREADS ? (int)n : PW_MAX_THREADS;
}

#define PW__STR2(x) #x
#define PW__STR(x) PW__STR2(x)

/* "" when a requested thread count is usable; otherwise why not. */
static const char *threads_refusal(int threads) {
    if (threads < 0) return "use 0 for all online cores";
    if (threads > PW_MAX_THREADS) return "at most PW_MAX_THREADS (" PW__STR(PW_MAX_THREADS) ")";
    return "";
}

static int isa_valid_here(pw_isa isa) {
    switch (isa) {
    case PW_ISA_NATIVE:
    case PW_ISA_SCALAR: return 1;
#if defined(__x86_64__) || defined(_M_X64)
    case PW_ISA_AVX2:
    case PW_ISA_AVXVNNI:
    case PW_ISA_AVX512: return 1;
#elif defined(__aarch64__)
    case PW_ISA_NEON:
    case PW_ISA_DOTPROD:
    case PW_ISA_I8MM:
    case PW_ISA_SME: return 1;
#endif
    default: return 0;
    }
}

/* The lower of two caps of this architecture; NATIVE means no cap. By rank, not by
 * enum value: avxvnni (8) sits between avx2 (2) and avx512 (3). */
static pw_isa lower_cap(pw_isa a, pw_isa b) {
    return pw__isa_rank(a) <= pw__isa_rank(b) ? a : b;
}

static void apply_cap(pw_context *ctx) {
    ctx->usable_features = ctx->cpu_features & pw__features_for_isa(ctx->cap);
}

/* Run on `threads` threads: a new pool first, then the old one goes. On failure the
 * context keeps its threads and pool, and ctx->message says why. */
static pw_status set_pool(pw_context *ctx, int threads) {
    pw__pool *pool = NULL;
    if (ctx->parallel_for == NULL && threads > 1)
        PW__TRY(pw__pool_create(ctx, PW__POOL_DEFAULT, threads, &pool));
    pw__pool_destroy(ctx, ctx->pool);
    ctx->pool = pool;
    ctx->threads = threads;
    return PW_OK;
}

pw_status pw_context_create(const pw_context_options *options, pw_context **out) {
    create_message[0] = '\0';
    if (out == NULL) {
        pw__strlcpy(create_message, "pw_context_create: out is NULL", sizeof create_message);
        return PW_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    pw_context_options o;
    pw_context_options_init(&o);
    if (options != NULL) {
        if (options->struct_size == 0 || options->struct_size > sizeof o) {
            snprintf(create_message, sizeof create_message,
                     "pw_context_create: options.struct_size is %zu; initialise options with "
                     "pw_context_options_init",
                     options->struct_size);
            return PW_ERR_INVALID_ARGUMENT;
        }
        memcpy(&o, options, options->struct_size);
    }
    if (!isa_valid_here(o.max_isa)) {
        snprintf(create_message, sizeof create_message,
                 "pw_context_create: max_isa '%s' is not an ISA of this architecture",
                 pw_isa_name(o.max_isa));
        return PW_ERR_INVALID_ARGUMENT;
    }
    if (threads_refusal(o.threads)[0] != '\0') {
        snprintf(create_message, sizeof create_message, "pw_context_create: threads is %d; %s",
                 o.threads, threads_refusal(o.threads));
        return PW_ERR_INVALID_ARGUMENT;
    }
    if ((o.allocator.alloc == NULL) != (o.allocator.free == NULL)) {
        pw__strlcpy(create_message,
                    "pw_context_create: allocator needs both alloc and free, or neither",
                    sizeof create_message);
        return PW_ERR_INVALID_ARGUMENT;
    }
    pw_isa cap = o.max_isa;
    const char *env = o.ignore_env ? NULL : getenv("PACKWISE_ISA");
    if (env != NULL && env[0] != '\0') {
        pw_isa env_isa;
        if (pw_isa_from_name(env, &env_isa) != PW_OK || !isa_valid_here(env_isa)) {
            snprintf(create_message, sizeof create_message,
                     "PACKWISE_ISA='%.64s' is not a level of this architecture (use scalar, "
#if defined(__aarch64__)
                     "neon, dotprod, i8mm or sme)",
#else
                     "avx2, avxvnni or avx512)",
#endif
                     env);
            return PW_ERR_INVALID_ARGUMENT;
        }
        cap = lower_cap(cap, env_isa);
    }
    const char *tune = o.ignore_env ? NULL : getenv("PACKWISE_TUNE");
    if (pw__tune_from_name(tune) < 0) {
        snprintf(create_message, sizeof create_message,
                 "PACKWISE_TUNE='%.64s' is not a tuning of this architecture (use "
#if defined(__x86_64__) || defined(_M_X64)
                 "auto, generic, intel, zen4 or zen5)",
#else
                 "auto or generic)",
#endif
                 tune);
        return PW_ERR_INVALID_ARGUMENT;
    }
    pw_allocator alloc = o.allocator;
    if (alloc.alloc == NULL) {
        alloc.alloc = default_alloc;
        alloc.free = default_free;
        alloc.user = NULL;
    }
    pw_context *ctx = alloc.alloc(alloc.user, sizeof *ctx, 64);
    if (ctx == NULL) {
        pw__strlcpy(create_message, "pw_context_create: out of memory", sizeof create_message);
        return PW_ERR_OUT_OF_MEMORY;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->allocator = alloc;
    ctx->cpu_features = pw__detect_cpu_features();
    ctx->sme_bytes = (ctx->cpu_features & PW_CPU_SME) ? pw__detect_sme_bytes() : 0;
    ctx->cap = cap;
    apply_cap(ctx);
    ctx->threads = 1;
    ctx->prepack_weights = o.prepack_weights != 0;
    ctx->trace = o.trace;
    ctx->trace_user = o.trace_user;
    ctx->parallel_for = o.parallel_for;
    ctx->parallel_for_user = o.parallel_for_user;
    if (o.memory_policy < PW_MEMORY_DEFAULT || o.memory_policy > PW_MEMORY_IN_PLACE) {
        snprintf(create_message, sizeof create_message,
                 "pw_context_create: memory_policy %d is not a pw_memory_policy", (int)o.memory_policy);
        alloc.free(alloc.user, ctx);
        return PW_ERR_INVALID_ARGUMENT;
    }
    ctx->memory_policy = o.memory_policy == PW_MEMORY_DEFAULT ? PW_MEMORY_COMPACT : o.memory_policy;
    ctx->spin_wait = o.spin_wait != 0;
    const pw_status st = set_pool(ctx, o.threads ? o.threads : online_cores());
    if (st != PW_OK) {
        snprintf(create_message, sizeof create_message, "pw_context_create: %.990s", ctx->message);
        alloc.free(alloc.user, ctx);
        return st;
    }
    *out = ctx;
    return PW_OK;
}

void pw_context_destroy(pw_context *ctx) {
    if (ctx == NULL) return;
    pw__pool_destroy(ctx, ctx->pool);
    pw__free(ctx, ctx->scratch);
    pw__free(ctx, ctx->outer);
    pw_allocator a = ctx->allocator;
    a.free(a.user, ctx);
}

const char *pw_context_message(const pw_context *ctx) { return ctx ? ctx->message : ""; }

void pw_context_clear_message(pw_context *ctx) {
    if (ctx) ctx->message[0] = '\0';
}

uint32_t pw_context_cpu_features(const pw_context *ctx) { return ctx ? ctx->cpu_features : 0; }

uint32_t pw_context_usable_features(const pw_context *ctx) {
    return ctx ? ctx->usable_features : 0;
}

int32_t pw_context_sme_vector_bytes(const pw_context *ctx) {
    return ctx != NULL && (ctx->usable_features & PW_CPU_SME) ? ctx->sme_bytes : 0;
}

pw_isa pw_context_isa(const pw_context *ctx) {
    return ctx ? pw__isa_of_features(ctx->usable_features) : PW_ISA_SCALAR;
}

pw_status pw_context_set_isa(pw_context *ctx, pw_isa max_isa) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_context_set_isa: ctx is NULL");
    PW__FAIL_IF(!isa_valid_here(max_isa), ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_context_set_isa: '%s' is not an ISA of this architecture",
                pw_isa_name(max_isa));
    ctx->cap = max_isa;
    apply_cap(ctx);
    return PW_OK;
}

void pw_context_set_trace(pw_context *ctx, pw_trace_fn trace, void *user) {
    if (ctx == NULL) return;
    ctx->trace = trace;
    ctx->trace_user = user;
}

void pw_context_set_prepack_weights(pw_context *ctx, int enabled) {
    if (ctx) ctx->prepack_weights = enabled != 0;
}

int pw_context_prepack_weights(const pw_context *ctx) { return ctx ? ctx->prepack_weights : 0; }

pw_status pw_context_set_memory_policy(pw_context *ctx, pw_memory_policy policy) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_context_set_memory_policy: ctx is NULL");
    PW__FAIL_IF(policy < PW_MEMORY_DEFAULT || policy > PW_MEMORY_IN_PLACE, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_context_set_memory_policy: %d is not a pw_memory_policy", (int)policy);
    ctx->memory_policy = policy == PW_MEMORY_DEFAULT ? PW_MEMORY_COMPACT : policy;
    return PW_OK;
}

pw_memory_policy pw_context_memory_policy(const pw_context *ctx) {
    return ctx ? ctx->memory_policy : PW_MEMORY_COMPACT;
}

int pw_context_threads(const pw_context *ctx) { return ctx ? ctx->threads : 1; }

pw_status pw_context_set_spin_wait(pw_context *ctx, int spin_wait) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_context_set_spin_wait: ctx is NULL");
    ctx->spin_wait = spin_wait != 0;
    return PW_OK;
}

pw_status pw_context_set_call_threads(pw_context *ctx, int threads, pw_parallel_for_fn parallel_for,
                                      void *parallel_for_user) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_context_set_call_threads: ctx is NULL");
    PW__FAIL_IF(threads < 0 || threads > PW_MAX_THREADS, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_context_set_call_threads: threads = %d is not in [0, %d]", threads, PW_MAX_THREADS);
    pw__call_threads_swap(ctx, threads, parallel_for, parallel_for_user, NULL, NULL, NULL);
    return PW_OK;
}

pw_status pw_context_set_threads(pw_context *ctx, int threads) {
    PW__FAIL_IF(ctx == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_context_set_threads: ctx is NULL");
    PW__FAIL_IF(threads_refusal(threads)[0] != '\0', ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_context_set_threads: threads is %d; %s", threads, threads_refusal(threads));
    if (threads == 0) threads = online_cores();
    if (threads == ctx->threads) return PW_OK;
    const pw_status st = set_pool(ctx, threads);
    if (st != PW_OK) {
        char why[PW__MESSAGE_CAPACITY];
        pw__strlcpy(why, ctx->message, sizeof why);
        return pw__fail(ctx, st, "pw_context_set_threads: %s; the context keeps its %d thread%s",
                        why, ctx->threads, ctx->threads == 1 ? "" : "s");
    }
    return PW_OK;
}

pw__task_grid pw__task_grid_plan(int threads, int64_t out, int64_t nr, int64_t n, int64_t mr,
                                 int64_t split_rows) {
    if (nr < 1) nr = 1;
    if (mr < 1) mr = 1;
    const int64_t tiles = (out + nr - 1) / nr;
    const int64_t want = (n < split_rows ? 16 : 4) * (int64_t)(threads > 1 ? threads : 1);
    int64_t i_tasks = 1;
    if (n >= split_rows && tiles < want) {
        i_tasks = (want + tiles - 1) / tiles;
        if (i_tasks > n / mr) i_tasks = n / mr;
        if (i_tasks < 1) i_tasks = 1;
    }
    int64_t i_chunk = (n + i_tasks - 1) / i_tasks;
    i_chunk = (i_chunk + mr - 1) / mr * mr;
    const int64_t o_tasks_want = (want + i_tasks - 1) / i_tasks;
    int64_t tiles_per = (tiles + o_tasks_want - 1) / o_tasks_want;
    if (tiles_per < 1) tiles_per = 1;
    pw__task_grid g;
    g.out = out;
    g.n = n;
    g.o_chunk = tiles_per * nr;
    g.i_chunk = i_chunk;
    g.o_tasks = (out + g.o_chunk - 1) / g.o_chunk;
    g.tasks = (size_t)(g.o_tasks * ((n + i_chunk - 1) / i_chunk));
    return g;
}

void pw__task_grid_cell(const pw__task_grid *g, size_t t, int64_t *o0, int64_t *o1, int64_t *i0,
                        int64_t *i1) {
    const int64_t ot = (int64_t)t % g->o_tasks, it = (int64_t)t / g->o_tasks;
    *o0 = ot * g->o_chunk;
    *i0 = it * g->i_chunk;
    *o1 = *o0 + g->o_chunk < g->out ? *o0 + g->o_chunk : g->out;
    *i1 = *i0 + g->i_chunk < g->n ? *i0 + g->i_chunk : g->n;
}

int pw__threads(const pw_context *ctx) {
    if (ctx->call_parallel_for != NULL) return ctx->call_threads > 0 ? ctx->call_threads : ctx->threads;
    if (ctx->call_threads > 0 && ctx->call_threads < ctx->threads) return ctx->call_threads;
    return ctx->threads;
}

void pw__call_threads_swap(pw_context *ctx, int threads, pw_parallel_for_fn fn, void *user,
                           int *saved_threads, pw_parallel_for_fn *saved_fn, void **saved_user) {
    if (saved_threads != NULL) *saved_threads = ctx->call_threads;
    if (saved_fn != NULL) *saved_fn = ctx->call_parallel_for;
    if (saved_user != NULL) *saved_user = ctx->call_parallel_for_user;
    ctx->call_threads = threads;
    ctx->call_parallel_for = fn;
    ctx->call_parallel_for_user = user;
}

/* The tasks [range * j / groups, range * (j + 1) / groups) of one group, in order: the
 * pool then runs `groups` items, so at most that many of its threads take part. */
typedef struct task_groups {
    pw_parallel_task task;
    void *context;
    size_t range, groups;
} task_groups;

static void run_group(void *p, size_t j) {
    const task_groups *g = p;
    for (size_t i = g->range * j / g->groups; i < g->range * (j + 1) / g->groups; ++i)
        g->task(g->context, i);
}

void pw__parallel_for(pw_context *ctx, pw_parallel_task task, void *task_context, size_t range) {
    if (range == 0) return;
    if (ctx->call_parallel_for != NULL) {
        ctx->call_parallel_for(ctx->call_parallel_for_user, task, task_context, range);
        return;
    }
    if (ctx->parallel_for != NULL) {
        ctx->parallel_for(ctx->parallel_for_user, task, task_context, range);
        return;
    }
    const int threads = pw__threads(ctx);
    if (ctx->pool != NULL && range > 1 && threads > 1) {
        if (threads < ctx->threads && (size_t)threads < range) {
            task_groups g = {task, task_context, range, (size_t)threads};
            pw__pool_run(ctx->pool, run_group, &g, g.groups, ctx->spin_wait);
        } else {
            pw__pool_run(ctx->pool, task, task_context, range, ctx->spin_wait);
        }
        return;
    }
    for (size_t i = 0; i < range; ++i) task(task_context, i);
}
