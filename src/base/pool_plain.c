/*
 * The plain thread pool: threads - 1 workers beside the caller, one job at a time.
 *
 * A job (task, task_context, range) is published under `lock` with a new generation
 * number and the workers are woken (`wake`). Each thread (the caller is thread 0) owns
 * a contiguous slice of the indices and runs it from the front, so a kernel's tasks on
 * one thread read one stream of the weight; a thread whose slice is done takes the
 * others' from their back, one index a compare-and-swap (packwise's task grids hand
 * out 4 to 16 tasks per thread, each far larger than that), which evens out a worker
 * that wakes late. Every worker checks out of every generation, even one with no index
 * left for it, and the caller waits until all have: once pw__plain_pool_run returns,
 * no worker reads the job again (task_context is usually on the caller's stack).
 *
 * Waits poll first, for at most the job's spin_ns (pool.h: brief by default, and then
 * only for a job that came soon after the last one), then sleep on a condition
 * variable: a worker after each job, for the next generation; the caller after its own
 * share, for the workers to check out. The generation and the
 * count of workers still in the job are atomics, written under `lock` and polled
 * without it; the sleeping path re-checks them under `lock`, so no wake-up is lost. A
 * pool idle for longer than spin_ns costs no CPU. Every pthread call that can fail is
 * checked; a pool that cannot create all its threads joins the ones it made and says
 * which one failed.
 */
#include "pool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* One poll's pause: tells the core that this is a spin (another hardware thread, or
 * the memory system, gets the slot). */
static inline void spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spin up to `ns` nanoseconds for *v to become x (until_equal) or to leave x: 1 when it
 * did, 0 when the time ran out first (or ns is 0). */
static int spin_for(const _Atomic uint64_t *v, uint64_t x, int until_equal, uint64_t ns) {
    if (ns == 0) return 0;
    const uint64_t end = now_ns() + ns;
    for (;;) {
        for (int k = 0; k < 64; ++k) {
            if ((atomic_load_explicit(v, memory_order_acquire) == x) == until_equal) return 1;
            spin_pause();
        }
        if (now_ns() >= end) return 0;
    }
}

/* A thread's contiguous share of a job's indices, [next, end) in one word so that its
 * owner (from the front) and the others (from the back, once theirs are done) claim
 * with one compare-and-swap. */
typedef struct pw__plain_slice {
    _Alignas(64) _Atomic uint64_t range; /* end << 32 | next, relative to the job's base */
} pw__plain_slice;

struct pw__plain_pool {
    pthread_mutex_t run_lock; /* one job at a time, even if a context is misused from two threads */
    pthread_mutex_t lock;     /* guards the fields below; generation and pending are also
                                 polled without it (atomics, written under it) */
    pthread_cond_t wake;      /* workers wait here for a new generation or stop */
    pthread_cond_t done;      /* the caller waits here for pending to reach 0 */
    _Atomic uint64_t generation; /* jobs published so far (and +1 at stop); written under lock */
    int stop;
    _Atomic uint64_t pending; /* workers not yet checked out of the current generation; under lock */
    uint64_t spin_ns;         /* the current job's: how long a worker polls for the next */
    uint64_t last_end;        /* now_ns() when the last job ended (0: none yet); run_lock */
    pw_parallel_task task;
    void *task_context;
    size_t base;              /* the job's first index (a range of 2^32 or more: in parts) */
    pw__plain_slice *slice;   /* one a thread (the caller's first); set under lock */
    atomic_int started;       /* workers that took their number */
    int workers;              /* threads created */
    pthread_t *threads;
};

/* Claim and run indices of slice v until it has none left: its owner from the front
 * (own), the others from the back, as pthreadpool's threads steal. */
static void run_slice(pw__plain_slice *v, int own, pw_parallel_task task, void *task_context,
                      size_t base) {
    uint64_t r = atomic_load_explicit(&v->range, memory_order_relaxed);
    for (;;) {
        const uint64_t next = r & 0xffffffffu, end = r >> 32;
        if (next >= end) return;
        const uint64_t want = own ? r + 1 : ((end - 1) << 32) | next;
        if (!atomic_compare_exchange_weak_explicit(&v->range, &r, want, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        task(task_context, base + (size_t)(own ? next : end - 1));
        r = atomic_load_explicit(&v->range, memory_order_relaxed);
    }
}

/* Thread `self`'s share of the job: its own slice in order, then what is left of the
 * others' (the next thread's first). */
static void claim_all(pw__plain_pool *p, int self, pw_parallel_task task, void *task_context,
                      size_t base) {
    const int n = p->workers + 1;
    for (int d = 0; d < n; ++d) run_slice(&p->slice[(self + d) % n], d == 0, task, task_context, base);
}

static void *worker_main(void *arg) {
    pw__plain_pool *p = arg;
    /* No job can be published before the pool is created, so a worker that starts late
     * has seen generation 0 (a job published meanwhile waits for this worker). */
    uint64_t seen = 0;
    const int self = atomic_fetch_add_explicit(&p->started, 1, memory_order_relaxed) + 1;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (atomic_load_explicit(&p->generation, memory_order_relaxed) == seen && !p->stop)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop) break;
        seen = atomic_load_explicit(&p->generation, memory_order_relaxed);
        const pw_parallel_task task = p->task;
        void *const task_context = p->task_context;
        const size_t base = p->base;
        const uint64_t spin_ns = p->spin_ns;
        pthread_mutex_unlock(&p->lock);
        claim_all(p, self, task, task_context, base);
        pthread_mutex_lock(&p->lock);
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release) == 1)
            pthread_cond_signal(&p->done);
        /* poll a while for the next job before sleeping on `wake`: a call that comes
         * soon (an engine's next product) finds this worker running */
        pthread_mutex_unlock(&p->lock);
        spin_for(&p->generation, seen, 0, spin_ns);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Stop and join the workers created so far (none may be in a job). */
static void stop_workers(pw__plain_pool *p) {
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release); /* ends a spin */
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int k = 0; k < p->workers; ++k) pthread_join(p->threads[k], NULL);
    p->workers = 0;
}

/* Release what init_sync made (`made` objects, in its order). */
static void destroy_sync(pw__plain_pool *p, int made) {
    if (made > 3) pthread_cond_destroy(&p->done);
    if (made > 2) pthread_cond_destroy(&p->wake);
    if (made > 1) pthread_mutex_destroy(&p->lock);
    if (made > 0) pthread_mutex_destroy(&p->run_lock);
}

/* The pool's mutexes and condition variables: how many were made (4 = all). */
static int init_sync(pw__plain_pool *p) {
    if (pthread_mutex_init(&p->run_lock, NULL) != 0) return 0;
    if (pthread_mutex_init(&p->lock, NULL) != 0) return 1;
    if (pthread_cond_init(&p->wake, NULL) != 0) return 2;
    if (pthread_cond_init(&p->done, NULL) != 0) return 3;
    return 4;
}

pw_status pw__plain_pool_create(pw_context *ctx, int threads, pw__plain_pool **out) {
    *out = NULL;
    PW__FAIL_IF(threads < 2 || threads > PW_MAX_THREADS, ctx, PW_ERR_INVALID_ARGUMENT,
                "thread pool: %d threads; a pool has 2 to %d", threads, PW_MAX_THREADS);
    pw__plain_pool *p = pw__calloc(ctx, 1, sizeof *p, 64);
    pthread_t *t = pw__calloc(ctx, (size_t)threads - 1, sizeof *t, sizeof(void *));
    pw__plain_slice *sl = pw__calloc(ctx, (size_t)threads, sizeof *sl, 64);
    const int made = p ? init_sync(p) : 0;
    if (p == NULL || t == NULL || sl == NULL || made < 4) {
        if (p) destroy_sync(p, made);
        pw__free(ctx, t);
        pw__free(ctx, sl);
        pw__free(ctx, p);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                        "thread pool: cannot allocate the state of %d threads", threads);
    }
    for (int k = 0; k < threads; ++k) atomic_init(&sl[k].range, 0);
    p->slice = sl;
    atomic_init(&p->started, 0);
    atomic_init(&p->generation, 0);
    atomic_init(&p->pending, 0);
    p->threads = t;
    for (int k = 0; k < threads - 1; ++k) {
        const int e = pthread_create(&p->threads[k], NULL, worker_main, p);
        if (e != 0) {
            stop_workers(p);
            destroy_sync(p, 4);
            pw__free(ctx, p->threads);
            pw__free(ctx, p->slice);
            pw__free(ctx, p);
            return pw__thread_create_failed(ctx, k + 1, threads, e);
        }
        p->workers++;
    }
    *out = p;
    return PW_OK;
}

void pw__plain_pool_destroy(pw_context *ctx, pw__plain_pool *p) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->run_lock);
    stop_workers(p);
    pthread_mutex_unlock(&p->run_lock);
    destroy_sync(p, 4);
    pw__free(ctx, p->threads);
    pw__free(ctx, p->slice);
    pw__free(ctx, p);
}

/* One job of at most 2^32 - 1 indices, [base, base + range). The workers poll after it
 * for spin_ns, or (adaptive) only when this job came within spin_ns of the last one's
 * end: calls in a burst (an engine's products) find them awake, a pool called now and
 * then lets them sleep at once and costs no CPU between calls. */
static void run_part(pw__plain_pool *p, pw_parallel_task task, void *task_context, size_t base,
                     uint64_t range, uint64_t spin_ns, int adaptive) {
    const uint64_t start = now_ns();
    const int burst = p->last_end != 0 && start - p->last_end < spin_ns;
    pthread_mutex_lock(&p->lock);
    p->task = task;
    p->task_context = task_context;
    p->base = base;
    const uint64_t n = (uint64_t)p->workers + 1;
    for (uint64_t k = 0; k < n; ++k) /* range * (k + 1) fits: range < 2^32, n <= 2^10 */
        atomic_store_explicit(&p->slice[k].range, (range * (k + 1) / n) << 32 | (range * k / n),
                              memory_order_relaxed);
    p->spin_ns = !adaptive || burst ? spin_ns : 0;
    atomic_store_explicit(&p->pending, (uint64_t)p->workers, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    claim_all(p, 0, task, task_context, base);

    /* the workers' last indices are running: poll for them before sleeping on `done` */
    spin_for(&p->pending, 0, 1, spin_ns);
    pthread_mutex_lock(&p->lock);
    while (atomic_load_explicit(&p->pending, memory_order_relaxed) != 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    p->last_end = now_ns();
}

void pw__plain_pool_run(pw__plain_pool *p, pw_parallel_task task, void *task_context,
                        size_t range, int spin) {
    /* pool.h: the long poll after every job with spin, else the brief one in a burst */
    const uint64_t spin_ns = spin ? PW__POOL_SPIN_LONG_NS : PW__POOL_SPIN_BRIEF_NS;
    pthread_mutex_lock(&p->run_lock);
    for (size_t base = 0; base < range;) {
        const size_t part = range - base < 0xffffffffu ? range - base : 0xffffffffu;
        run_part(p, task, task_context, base, part, spin_ns, !spin);
        base += part;
    }
    pthread_mutex_unlock(&p->run_lock);
}
