/*
 * The thread pools behind pw__parallel_for (src/base/pool.h), every backend the
 * build has: each index of a range runs exactly once, for ranges below, at and
 * far above the thread count, over many calls on one pool; every thread of a
 * pool really runs at once (tasks that wait for each other, with a bounded
 * wait); pools are created and destroyed many times; a pool of PW_MAX_THREADS
 * threads works, and the probe that guards pthreadpool's creation passes at
 * the cap; counts outside [2, PW_MAX_THREADS] are refused. The plain pool also:
 * each thread runs its own contiguous share first, a thread whose share is done
 * takes what another has not started from its end, and calls made after its
 * workers have gone to sleep (past the brief poll) still run every index.
 */
// pw-test: once
// pw-test: tsan
#include "pw_test.h"

#include "base/pool.h"

#include <stdatomic.h>
#include <time.h>

typedef struct count_job {
    atomic_int *hits; /* one counter per index */
} count_job;

static void count_task(void *p, size_t i) {
    count_job *j = p;
    atomic_fetch_add_explicit(&j->hits[i], 1, memory_order_relaxed);
}

/* Every index of every range runs exactly once, over many calls on one pool, some made
 * after a pause longer than the plain pool's brief poll (its workers asleep). */
static void exactly_once(pw_context *ctx, pw__pool_backend backend, int threads) {
    pw__pool *pool = NULL;
    CHECK_OK(pw__pool_create(ctx, backend, threads, &pool), ctx);
    if (pool == NULL) return;
    CHECK(pw__pool_threads(pool) == threads, "pool reports %d threads, made with %d",
          pw__pool_threads(pool), threads);
    const size_t ranges[] = {0, 1, 2, 3, (size_t)threads - 1, (size_t)threads,
                             (size_t)threads + 1, 7, 64, 1000};
    atomic_int *hits = calloc(1000, sizeof *hits);
    count_job j = {hits};
    for (int rep = 0; rep < 50; ++rep) {
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; ++r) {
            const size_t range = ranges[r];
            for (size_t i = 0; i < 1000; ++i) atomic_store(&hits[i], 0);
            if (rep % 10 == 9 && r % 3 == 0) { /* some calls find the workers asleep */
                struct timespec nap = {0, (long)(4 * PW__POOL_SPIN_BRIEF_NS)};
                nanosleep(&nap, NULL);
            }
            pw__pool_run(pool, count_task, &j, range, rep % 10 == 0); /* the long poll too */
            for (size_t i = 0; i < 1000; ++i) {
                const int want = i < range ? 1 : 0;
                if (atomic_load(&hits[i]) != want) {
                    CHECK(0, "%s pool, %d threads, range %zu (call %d): index %zu ran %d times",
                          pw__pool_backend_name(pool), threads, range, rep, i,
                          atomic_load(&hits[i]));
                    break;
                }
            }
        }
    }
    free(hits);
    pw__pool_destroy(ctx, pool);
}

/* Tasks that each wait until `threads` tasks have started: they finish only if every
 * thread of the pool runs at once. The wait is bounded so that a pool that runs its
 * tasks on fewer threads fails the check instead of hanging the test. */
typedef struct meet_job {
    atomic_int arrived;
    atomic_int timed_out;
    int threads;
} meet_job;

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void meet_task(void *p, size_t i) {
    (void)i;
    meet_job *j = p;
    atomic_fetch_add(&j->arrived, 1);
    const double deadline = seconds_now() + 20.0;
    while (atomic_load(&j->arrived) < j->threads) {
        if (seconds_now() > deadline) {
            atomic_store(&j->timed_out, 1);
            return;
        }
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
}

static void all_threads_run(pw_context *ctx, pw__pool_backend backend, int threads) {
    pw__pool *pool = NULL;
    CHECK_OK(pw__pool_create(ctx, backend, threads, &pool), ctx);
    if (pool == NULL) return;
    for (int rep = 0; rep < 3; ++rep) {
        meet_job j;
        atomic_init(&j.arrived, 0);
        atomic_init(&j.timed_out, 0);
        j.threads = threads;
        pw__pool_run(pool, meet_task, &j, (size_t)threads, 0);
        CHECK(!atomic_load(&j.timed_out), "%s pool of %d threads: only %d ran at once",
              pw__pool_backend_name(pool), threads, atomic_load(&j.arrived));
    }
    pw__pool_destroy(ctx, pool);
}

/* The plain pool's order: the caller (thread 0 of 2) owns [0, range / 2) and claims it
 * from the front; its first task holds it until the worker has run every other task (or
 * a bounded wait ends), which the worker can only do by taking the caller's share from
 * its back once its own is done. (Where the caller's thread starts late, as under qemu,
 * the worker may take the whole share, task 0 included, before the caller claims any.)
 * Each task records which thread ran it and in what order. */
typedef struct steal_job {
    pthread_t caller;
    atomic_int done;          /* tasks finished */
    atomic_int order;         /* next sequence number */
    int by_caller[64], seq[64];
    int range, timed_out;
} steal_job;

static void steal_task(void *p, size_t i) {
    steal_job *j = p;
    const int mine = pthread_equal(pthread_self(), j->caller) != 0;
    j->by_caller[i] = mine;
    j->seq[i] = atomic_fetch_add(&j->order, 1);
    if (mine) {
        const double deadline = seconds_now() + 20.0;
        while (atomic_load(&j->done) < j->range - 1) {
            if (seconds_now() > deadline) {
                j->timed_out = 1;
                break;
            }
            struct timespec nap = {0, 100000};
            nanosleep(&nap, NULL);
        }
    }
    atomic_fetch_add(&j->done, 1);
}

static void plain_slices(pw_context *ctx) {
    pw__pool *pool = NULL;
    CHECK_OK(pw__pool_create(ctx, PW__POOL_PLAIN, 2, &pool), ctx);
    if (pool == NULL) return;
    for (int rep = 0; rep < 3; ++rep) {
        steal_job j;
        memset(&j, 0, sizeof j);
        j.caller = pthread_self();
        j.range = 64;
        atomic_init(&j.done, 0);
        atomic_init(&j.order, 0);
        pw__pool_run(pool, steal_task, &j, 64, rep % 2);
        CHECK(!j.timed_out, "plain pool: the worker did not take the caller's unstarted tasks");
        int caller_tasks = 0, worker_front = 1, stolen_from_back = 1;
        for (int i = 0; i < 64; ++i) caller_tasks += j.by_caller[i];
        /* the worker's own share [32, 64) in order, then the caller's from 31 down to 1
         * (to 0 when the caller claimed none) */
        for (int i = 33; i < 64; ++i) worker_front &= j.seq[i] > j.seq[i - 1];
        for (int i = j.by_caller[0] ? 1 : 0; i < 31; ++i) stolen_from_back &= j.seq[i] > j.seq[i + 1];
        CHECK(caller_tasks == j.by_caller[0],
              "plain pool: the caller ran %d tasks, not only the first of its share", caller_tasks);
        CHECK(worker_front, "plain pool: the worker's own share did not run front to back");
        CHECK(stolen_from_back && j.seq[31] > j.seq[63],
              "plain pool: the caller's unstarted tasks were not taken from the back, after "
              "the worker's own");
    }
    pw__pool_destroy(ctx, pool);
}

/* Plain data written by the tasks and read by the caller after the run: a pool must
 * order them (ThreadSanitizer reports a missing happens-before here). */
typedef struct sum_job {
    int64_t *out;
} sum_job;

static void sum_task(void *p, size_t i) {
    sum_job *j = p;
    int64_t s = 0;
    for (int64_t k = 0; k <= (int64_t)i; ++k) s += k;
    j->out[i] = s;
}

static void results_visible(pw_context *ctx, pw__pool_backend backend) {
    pw__pool *pool = NULL;
    CHECK_OK(pw__pool_create(ctx, backend, 4, &pool), ctx);
    if (pool == NULL) return;
    int64_t out[257];
    sum_job j = {out};
    for (int rep = 0; rep < 20; ++rep) {
        memset(out, 0xff, sizeof out);
        pw__pool_run(pool, sum_task, &j, 257, 0);
        for (int64_t i = 0; i < 257; ++i)
            if (out[i] != i * (i + 1) / 2) {
                CHECK(0, "%s pool: task %lld wrote %lld", pw__pool_backend_name(pool),
                      (long long)i, (long long)out[i]);
                break;
            }
    }
    pw__pool_destroy(ctx, pool);
}

static void create_destroy(pw_context *ctx, pw__pool_backend backend, int reps) {
    for (int rep = 0; rep < reps; ++rep) {
        pw__pool *pool = NULL;
        CHECK_OK(pw__pool_create(ctx, backend, 2 + rep % 3, &pool), ctx);
        if (rep % 2) {
            atomic_int hits[3] = {0};
            count_job j = {hits};
            pw__pool_run(pool, count_task, &j, 3, 0);
            CHECK(hits[0] == 1 && hits[1] == 1 && hits[2] == 1, "create/destroy %d", rep);
        }
        pw__pool_destroy(ctx, pool);
    }
    pw__pool_destroy(ctx, NULL);
}

static void refused_counts(pw_context *ctx, pw__pool_backend backend) {
    const int bad[] = {-1, 0, 1, PW_MAX_THREADS + 1};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        pw__pool *pool = (pw__pool *)&ctx;
        CHECK_STATUS(pw__pool_create(ctx, backend, bad[k], &pool), PW_ERR_INVALID_ARGUMENT, ctx);
        CHECK(pool == NULL, "refused pool of %d threads left *out set", bad[k]);
    }
}

/* The cap itself is a working pool. */
static void largest_pool(pw_context *ctx, pw__pool_backend backend) {
    pw__pool *pool = NULL;
    CHECK_OK(pw__pool_create(ctx, backend, PW_MAX_THREADS, &pool), ctx);
    if (pool == NULL) return;
    atomic_int *hits = calloc(4 * PW_MAX_THREADS, sizeof *hits);
    count_job j = {hits};
    pw__pool_run(pool, count_task, &j, 4 * PW_MAX_THREADS, 0);
    int wrong = 0;
    for (int i = 0; i < 4 * PW_MAX_THREADS; ++i) wrong += atomic_load(&hits[i]) != 1;
    CHECK(wrong == 0, "%s pool of %d threads: %d indices not run once",
          pw__pool_backend_name(pool), PW_MAX_THREADS, wrong);
    free(hits);
    pw__pool_destroy(ctx, pool);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw__pool_backend backends[2] = {PW__POOL_PLAIN, PW__POOL_PTHREADPOOL};
    int nbackends = 1;
#ifdef PW_TEST_HAVE_PTHREADPOOL
    nbackends = 2;
#else
    pw__pool *none = NULL;
    CHECK_STATUS(pw__pool_create(ctx, PW__POOL_PTHREADPOOL, 2, &none), PW_ERR_UNSUPPORTED, ctx);
#endif
    for (int b = 0; b < nbackends; ++b) {
        const int counts[] = {2, 3, 8};
        for (size_t k = 0; k < 3; ++k) exactly_once(ctx, backends[b], counts[k]);
        all_threads_run(ctx, backends[b], 2);
        all_threads_run(ctx, backends[b], 8);
        results_visible(ctx, backends[b]);
        /* pthreadpool_create waits for its workers with sched_yield spins: 200 of them
         * took 8 s on a loaded 2-core machine, the plain pool 0.06 s. */
        create_destroy(ctx, backends[b], backends[b] == PW__POOL_PLAIN ? 200 : 20);
        refused_counts(ctx, backends[b]);
    }
    /* A pool at the cap (the plain one: pthreadpool's 1023 workers took 55 s to create
     * and run on a loaded 2-core machine), and the probe that guards pthreadpool. */
    largest_pool(ctx, PW__POOL_PLAIN);
    plain_slices(ctx);
    CHECK_OK(pw__threads_probe(ctx, PW_MAX_THREADS), ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
