/*
 * The thread pool behind pw__parallel_for: backend choice, Debian's pthreadpool
 * behind a check that its threads can exist, and the thread-creation probe.
 *
 * The plain pool is the default: its workers poll briefly after each call before they
 * sleep (pool.h), which pthreadpool cannot do (its workers either yield at once or
 * poll about a million times). pthreadpool stays as the second backend, checked by
 * the same tests, for comparing the two.
 *
 * Why the probe: Debian 12's libpthreadpool (0.0~git20210507.1787867, built with
 * futexes) creates its workers in pthreadpool_create with the result of each
 * pthread_create ignored, then waits for all threads - 1 of them to check in
 * (a futex wait with no timeout). One failed creation (no address space for the
 * stack, RLIMIT_NPROC, the kernel's threads-max) and pthreadpool_create never
 * returns; pthreadpool_destroy would also join threads that were never created.
 * The library cannot see the failure through its API, so before calling it we
 * create the same number of threads ourselves, with the same (default)
 * attributes, all alive at once, and join them. This leaves a window: resources
 * taken by another thread of the process between the probe and pthreadpool's own
 * creations can still make pthreadpool wait. The plain pool (pool_plain.c) has no
 * such window and is what a build without pthreadpool uses.
 */
#include "pool.h"

#include <stdio.h>
#include <string.h>

#ifdef PW_HAVE_PTHREADPOOL
#include <pthreadpool.h>
#endif

struct pw__pool {
    pw__pool_backend backend; /* PLAIN or PTHREADPOOL, never DEFAULT */
    int threads;
    void *impl;               /* pw__plain_pool * or pthreadpool_t */
};

pw_status pw__thread_create_failed(pw_context *ctx, int index, int threads, int err) {
    char reason[128];
    /* The GNU strerror_r (the library is built with _GNU_SOURCE) returns the text. */
    const char *text = strerror_r(err, reason, sizeof reason);
    return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                    "cannot create worker thread %d of %d for a pool of %d threads "
                    "(pthread_create: %s); use fewer threads, or raise the limits on "
                    "processes and address space (ulimit -u, ulimit -v)",
                    index, threads - 1, threads, text);
}

typedef struct probe_gate {
    pthread_mutex_t lock;
    pthread_cond_t open_cv;
    int open;
} probe_gate;

static void *probe_main(void *arg) {
    probe_gate *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->open) pthread_cond_wait(&g->open_cv, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

pw_status pw__threads_probe(pw_context *ctx, int threads) {
    if (threads < 2) return PW_OK;
    pthread_t *t = pw__calloc(ctx, (size_t)threads - 1, sizeof *t, sizeof(void *));
    PW__FAIL_IF(t == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "thread pool: cannot allocate the state of %d threads", threads);
    probe_gate g = {.open = 0};
    if (pthread_mutex_init(&g.lock, NULL) != 0) {
        pw__free(ctx, t);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY, "thread pool: cannot create a mutex");
    }
    if (pthread_cond_init(&g.open_cv, NULL) != 0) {
        pthread_mutex_destroy(&g.lock);
        pw__free(ctx, t);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                        "thread pool: cannot create a condition variable");
    }
    int created = 0, err = 0;
    while (created < threads - 1 && (err = pthread_create(&t[created], NULL, probe_main, &g)) == 0)
        ++created;
    pthread_mutex_lock(&g.lock);
    g.open = 1;
    pthread_cond_broadcast(&g.open_cv);
    pthread_mutex_unlock(&g.lock);
    for (int k = 0; k < created; ++k) pthread_join(t[k], NULL);
    pthread_cond_destroy(&g.open_cv);
    pthread_mutex_destroy(&g.lock);
    pw__free(ctx, t);
    return err ? pw__thread_create_failed(ctx, created + 1, threads, err) : PW_OK;
}

pw_status pw__pool_create(pw_context *ctx, pw__pool_backend backend, int threads,
                          pw__pool **out) {
    *out = NULL;
    PW__FAIL_IF(threads < 2 || threads > PW_MAX_THREADS, ctx, PW_ERR_INVALID_ARGUMENT,
                "thread pool: %d threads; a pool has 2 to %d", threads, PW_MAX_THREADS);
    if (backend == PW__POOL_DEFAULT) backend = PW__POOL_PLAIN;
#ifndef PW_HAVE_PTHREADPOOL
    PW__FAIL_IF(backend == PW__POOL_PTHREADPOOL, ctx, PW_ERR_UNSUPPORTED,
                "thread pool: this build has no pthreadpool");
#endif
    pw__pool *pool = pw__calloc(ctx, 1, sizeof *pool, sizeof(void *));
    PW__FAIL_IF(pool == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "thread pool: cannot allocate the state of %d threads", threads);
    pool->backend = backend;
    pool->threads = threads;
    pw_status st = PW_OK;
    if (backend == PW__POOL_PLAIN) {
        pw__plain_pool *plain = NULL;
        st = pw__plain_pool_create(ctx, threads, &plain);
        pool->impl = plain;
    }
#ifdef PW_HAVE_PTHREADPOOL
    else {
        st = pw__threads_probe(ctx, threads);
        if (st == PW_OK) {
            pool->impl = pthreadpool_create((size_t)threads);
            if (pool->impl == NULL)
                st = pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                              "thread pool: pthreadpool_create(%d) failed", threads);
        }
    }
#endif
    if (st != PW_OK) {
        pw__free(ctx, pool);
        return st;
    }
    *out = pool;
    return PW_OK;
}

void pw__pool_destroy(pw_context *ctx, pw__pool *pool) {
    if (pool == NULL) return;
    if (pool->backend == PW__POOL_PLAIN) pw__plain_pool_destroy(ctx, pool->impl);
#ifdef PW_HAVE_PTHREADPOOL
    else pthreadpool_destroy((pthreadpool_t)pool->impl);
#endif
    pw__free(ctx, pool);
}

#ifdef PW_HAVE_PTHREADPOOL
typedef struct pool_task {
    pw_parallel_task task;
    void *context;
} pool_task;

static void pool_trampoline(void *p, size_t i) {
    const pool_task *t = p;
    t->task(t->context, i);
}
#endif

void pw__pool_run(pw__pool *pool, pw_parallel_task task, void *task_context, size_t range,
                  int spin) {
    if (pool->backend == PW__POOL_PLAIN) {
        pw__plain_pool_run(pool->impl, task, task_context, range, spin);
        return;
    }
#ifdef PW_HAVE_PTHREADPOOL
    pool_task t = {task, task_context};
    /* By default workers yield once the work is done instead of spinning for the next
     * call: on a shared machine a spinning pool steals the cores other processes need.
     * An engine that owns its cores asks for the spin (pw_context_options.spin_wait):
     * the next call then finds its workers awake. */
    pthreadpool_parallelize_1d((pthreadpool_t)pool->impl, pool_trampoline, &t, range,
                               spin ? 0 : PTHREADPOOL_FLAG_YIELD_WORKERS);
#else
    (void)spin;
#endif
}

int pw__pool_threads(const pw__pool *pool) { return pool ? pool->threads : 1; }

const char *pw__pool_backend_name(const pw__pool *pool) {
    if (pool == NULL) return "none";
    return pool->backend == PW__POOL_PLAIN ? "plain" : "pthreadpool";
}
