/*
 * The plain thread pool: threads - 1 workers beside the caller, one job at a time.
 *
 * A job (task, task_context, range) is published under `lock` with a new generation
 * number and the workers are woken (`wake`); the caller and the workers then claim
 * indices from one atomic counter, one index a claim (packwise's task grids hand out 4
 * to 16 tasks per thread, each far larger than a compare-and-swap, and a dynamic claim
 * evens out a worker that wakes late). Every worker checks out of every generation, even
 * one with no index left for it, and the caller waits on `done` until all have: once
 * pw__plain_pool_run returns, no worker reads the job again (task_context is usually
 * on the caller's stack).
 *
 * Nothing here spins: an idle worker sleeps on the condition variable, so a pool on a
 * shared machine costs no CPU between calls. Every pthread call that can fail is
 * checked; a pool that cannot create all its threads joins the ones it made and says
 * which one failed.
 */
#include "pool.h"

#include <stdatomic.h>
#include <stdint.h>

struct pw__plain_pool {
    pthread_mutex_t run_lock; /* one job at a time, even if a context is misused from two threads */
    pthread_mutex_t lock;     /* guards every field below but next */
    pthread_cond_t wake;      /* workers wait here for a new generation or stop */
    pthread_cond_t done;      /* the caller waits here for pending to reach 0 */
    uint64_t generation;      /* jobs published so far */
    int stop;
    int pending;              /* workers not yet checked out of the current generation */
    pw_parallel_task task;
    void *task_context;
    size_t range;
    atomic_size_t next;       /* next index to claim; never passes range */
    int workers;              /* threads created */
    pthread_t *threads;
};

/* Run the job's indices until none is left. */
static void claim_all(atomic_size_t *next, pw_parallel_task task, void *task_context,
                      size_t range) {
    size_t i = atomic_load_explicit(next, memory_order_relaxed);
    for (;;) {
        do {
            if (i >= range) return;
        } while (!atomic_compare_exchange_weak_explicit(next, &i, i + 1, memory_order_relaxed,
                                                        memory_order_relaxed));
        task(task_context, i);
        i = atomic_load_explicit(next, memory_order_relaxed);
    }
}

static void *worker_main(void *arg) {
    pw__plain_pool *p = arg;
    /* No job can be published before the pool is created, so a worker that starts late
     * has seen generation 0 (a job published meanwhile waits for this worker). */
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && !p->stop) pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop) break;
        seen = p->generation;
        const pw_parallel_task task = p->task;
        void *const task_context = p->task_context;
        const size_t range = p->range;
        pthread_mutex_unlock(&p->lock);
        claim_all(&p->next, task, task_context, range);
        pthread_mutex_lock(&p->lock);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Stop and join the workers created so far (none may be in a job). */
static void stop_workers(pw__plain_pool *p) {
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
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
    const int made = p ? init_sync(p) : 0;
    if (p == NULL || t == NULL || made < 4) {
        if (p) destroy_sync(p, made);
        pw__free(ctx, t);
        pw__free(ctx, p);
        return pw__fail(ctx, PW_ERR_OUT_OF_MEMORY,
                        "thread pool: cannot allocate the state of %d threads", threads);
    }
    atomic_init(&p->next, 0);
    p->threads = t;
    for (int k = 0; k < threads - 1; ++k) {
        const int e = pthread_create(&p->threads[k], NULL, worker_main, p);
        if (e != 0) {
            stop_workers(p);
            destroy_sync(p, 4);
            pw__free(ctx, p->threads);
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
    pw__free(ctx, p);
}

void pw__plain_pool_run(pw__plain_pool *p, pw_parallel_task task, void *task_context,
                        size_t range) {
    pthread_mutex_lock(&p->run_lock);
    pthread_mutex_lock(&p->lock);
    p->task = task;
    p->task_context = task_context;
    p->range = range;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->pending = p->workers;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    claim_all(&p->next, task, task_context, range);

    pthread_mutex_lock(&p->lock);
    while (p->pending != 0) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->run_lock);
}
