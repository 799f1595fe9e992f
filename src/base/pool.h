/*
 * packwise's own thread pool: the threads a context runs pw__parallel_for on
 * when the caller gave no parallel-for hook.
 *
 * Two backends behind one interface:
 * - the plain pool (pool_plain.c), the default: a mutex and two condition
 *   variables, every thread creation checked, each thread's share of a call one
 *   contiguous range (the others' taken from its end once theirs are done, as
 *   pthreadpool does), and a bounded poll before any wait: after a call in a
 *   burst its workers poll for the next one PW__POOL_SPIN_BRIEF_NS before they
 *   sleep, so an engine's back-to-back products do not pay a wake-up each. pthreadpool
 *   offers only yielding at once or polling about a million times.
 *   Measured on the project's Zen 5 VM (2 vCPUs; a loop of [256, 4096] Q4_0 GEMV
 *   calls, 2 threads): 18.2-20.4 us a call with pthreadpool's workers yielding,
 *   11.5-12.2 with them spinning, 10.1-11.1 with the plain pool's brief poll (8.7
 *   on one thread); [11008, 4096] and [4096, 4096] cold GEMVs read at the same
 *   rate with either within the machine's noise (packwise bench --batch 1
 *   --threads 2, two rounds in turn).
 * - Debian's pthreadpool, kept as the second backend (the tests run both). Its
 *   pthreadpool_create ignores a failed pthread_create and then waits forever
 *   for the missing worker to check in, so pool.c first checks that the threads
 *   can exist (pw__threads_probe). Its futex waits are not instrumented by
 *   ThreadSanitizer, where every hand-off through them would look like a race.
 *
 * Not installed; used by context.c and by the tests.
 */
#ifndef PACKWISE_POOL_H
#define PACKWISE_POOL_H

#include "internal.h"

#include <pthread.h>

typedef struct pw__pool pw__pool;

/* How long the plain pool polls before it waits on a condition variable: its
 * workers for the next call after each call, the caller for the workers' last
 * tasks. Brief by default, and the workers poll only after a call that came within
 * that time of the previous one's end (a burst, as an engine's products are): a
 * pool called now and then costs no CPU between calls, and one in a burst at most
 * this much a worker per call. Long with spin, after every call (an engine that
 * owns its cores). */
#define PW__POOL_SPIN_BRIEF_NS 50000u
#define PW__POOL_SPIN_LONG_NS 10000000u

/* Which backend a pool uses. */
typedef enum pw__pool_backend {
    PW__POOL_DEFAULT = 0,     /* the plain pool */
    PW__POOL_PLAIN = 1,       /* pool_plain.c */
    PW__POOL_PTHREADPOOL = 2  /* Debian's pthreadpool (refused in a build without it) */
} pw__pool_backend;

/*
 * A pool of `threads` threads counting the caller (threads - 1 are created;
 * 2 <= threads <= PW_MAX_THREADS). Memory comes from ctx's allocator; a
 * failure (a thread that cannot be created, memory) leaves a message in ctx,
 * creates nothing that outlives the call and returns PW_ERR_OUT_OF_MEMORY.
 */
pw_status pw__pool_create(pw_context *ctx, pw__pool_backend backend, int threads,
                          pw__pool **out);

/* Stop and join every worker, release the pool. Accepts NULL. */
void pw__pool_destroy(pw_context *ctx, pw__pool *pool);

/*
 * task(task_context, i) once for every i in [0, range), on the caller and the
 * workers; returns when every call has returned and no worker touches
 * task_context any more. Calls on one pool are serialised. spin nonzero: the
 * workers spin-wait for the next call a while (pthreadpool's own spin, about a
 * million polls) before they sleep, instead of yielding at once; the plain pool
 * always sleeps.
 */
void pw__pool_run(pw__pool *pool, pw_parallel_task task, void *task_context, size_t range,
                  int spin);

/* Threads of the pool, counting the caller. */
int pw__pool_threads(const pw__pool *pool);

/* "pthreadpool" or "plain". */
const char *pw__pool_backend_name(const pw__pool *pool);

/*
 * Whether threads - 1 threads can exist at once beside the caller's: creates
 * them (default attributes, as pthreadpool does), holds them until the last is
 * up, then releases and joins them all. PW_ERR_OUT_OF_MEMORY with a message in
 * ctx naming the thread that failed and pthread_create's reason.
 */
pw_status pw__threads_probe(pw_context *ctx, int threads);

/* The plain backend (pool_plain.c), for pool.c. */
typedef struct pw__plain_pool pw__plain_pool;
pw_status pw__plain_pool_create(pw_context *ctx, int threads, pw__plain_pool **out);
void pw__plain_pool_destroy(pw_context *ctx, pw__plain_pool *pool);
void pw__plain_pool_run(pw__plain_pool *pool, pw_parallel_task task, void *task_context,
                        size_t range, int spin);

/*
 * The failure of pthread_create (error err) for worker `index` (1-based, of
 * threads - 1): PW_ERR_OUT_OF_MEMORY with a message in ctx.
 */
pw_status pw__thread_create_failed(pw_context *ctx, int index, int threads, int err);

#endif
