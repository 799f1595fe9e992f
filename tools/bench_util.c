/* Helpers shared by the bench sections: clock, median, test data, aligned buffers, cache flush. */
#include "bench.h"

#include <pthread.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


double pw_bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pw_bench_median(double *s, int n) {
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static double clock_now(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pw_bench_sampler_init(pw_bench_sampler *s, int threads) {
    memset(s, 0, sizeof *s);
    s->threads = threads > 1 ? threads : 1;
}

void pw_bench_sample_start(pw_bench_sampler *s) {
    s->cpu0 = clock_now(s->threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID);
    s->t0 = pw_bench_now();
}

void pw_bench_sample_stop(pw_bench_sampler *s) {
    const double wall = pw_bench_now() - s->t0;
    const double cpu =
        clock_now(s->threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID) - s->cpu0;
    if (s->nall == PW_BENCH_MAX_SAMPLES) return;
    /* One thread: its CPU time is the sample. More: wall time, undisturbed when the
     * threads were on a CPU for at least 80% of it between them. */
    double dt = s->threads == 1 ? cpu : wall;
    if (dt < 1e-9) dt = 1e-9;
    s->all[s->nall++] = dt;
    if (s->threads == 1 || cpu >= 0.8 * (double)s->threads * wall) s->clean[s->nclean++] = dt;
    s->spent += dt;
}

int pw_bench_sample_more(const pw_bench_sampler *s, int min, int max, double budget) {
    if (s->nall >= PW_BENCH_MAX_SAMPLES) return 0;
    if (s->nall < min) return 1;
    if (s->nclean >= min) return s->nall < max && s->spent < budget;
    return s->nall < 3 * max && s->spent < 4 * budget;
}

pw_bench_reps pw_bench_case_reps(int gemm, int quick) {
    pw_bench_reps r = {gemm ? 3 : 5, gemm ? 11 : 101, gemm ? 1.0 : 0.1};
    if (quick) r.min = 2, r.max = 3;
    return r;
}

double pw_bench_sample_median_of(pw_bench_sampler *s, int clean) {
    if (clean && s->nclean > 0) return pw_bench_median(s->clean, s->nclean);
    return s->nall > 0 ? pw_bench_median(s->all, s->nall) : 1e-9;
}

double pw_bench_sample_median(pw_bench_sampler *s) { return pw_bench_sample_median_of(s, 1); }

double pw_bench_sample_quantile(pw_bench_sampler *s, double q) {
    double *v = s->nclean > 0 ? s->clean : s->all;
    const int n = s->nclean > 0 ? s->nclean : s->nall;
    if (n == 0) return 1e-9;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[(int)(q * (double)(n - 1) + 0.5)];
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pw_bench_gaussian(float *dst, size_t count, uint64_t seed) {
    uint64_t state = seed;
    for (size_t i = 0; i < count; i += 2) {
        /* Box-Muller: two normals per 64-bit draw (53 bits for the radius, 11 for the angle). */
        const uint64_t z = splitmix64(&state);
        const double u1 = ((double)(z >> 11) + 1.0) * 0x1.0p-53, u2 = (double)(z & 0x7ff) / 2048.0;
        const double r = 0.02 * sqrt(-2.0 * log(u1));
        dst[i] = (float)(r * cos(6.283185307179586 * u2));
        if (i + 1 < count) dst[i + 1] = (float)(r * sin(6.283185307179586 * u2));
    }
}

void *pw_bench_alloc(size_t bytes) {
    /* As the library allocates its own buffers: large ones on huge pages where the
     * kernel grants them, so the read-bandwidth buffer shows what the memory can do
     * and a weight's bytes stream as a packed copy of them would. */
    const pw_allocator a = pw_allocator_default();
    return a.alloc(a.user, bytes, 64);
}

int pw_bench_flush(const void *p, size_t bytes) { return pw_memory_evict(p, bytes); }

void pw_bench_fill_distinct(void *p, size_t bytes) {
    uint64_t *w = p;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < bytes / 8; ++i) {
        x += 0x9e3779b97f4a7c15ull; /* a Weyl sequence, mixed: no two words alike */
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        w[i] = z ^ (z >> 27);
    }
    memset((uint8_t *)p + bytes / 8 * 8, 0x5a, bytes % 8);
}

/* --- the tracking allocator (bench.h) --- */

static void *tracker_alloc(void *user, size_t bytes, size_t alignment) {
    pw_bench_tracker *t = user;
    const pw_allocator lib = pw_allocator_default(); /* as the library allocates */
    void *p = lib.alloc(lib.user, bytes, alignment);
    if (p == NULL) return NULL;
    pthread_mutex_lock(&t->mu);
    if (t->count == t->capacity) {
        const size_t cap = t->capacity ? 2 * t->capacity : 64;
        pw_bench_block *grown = realloc(t->live, cap * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&t->mu);
            lib.free(lib.user, p);
            return NULL;
        }
        t->live = grown;
        t->capacity = cap;
    }
    t->live[t->count++] = (pw_bench_block){p, bytes};
    pthread_mutex_unlock(&t->mu);
    return p;
}

static void tracker_release(void *user, void *p) {
    pw_bench_tracker *t = user;
    if (p == NULL) return;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->count; ++i) {
        if (t->live[i].p == p) {
            t->live[i] = t->live[--t->count];
            break;
        }
    }
    pthread_mutex_unlock(&t->mu);
    const pw_allocator lib = pw_allocator_default();
    lib.free(lib.user, p);
}

void pw_bench_tracker_init(pw_bench_tracker *t) {
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
}

pw_allocator pw_bench_tracker_allocator(pw_bench_tracker *t) {
    return (pw_allocator){tracker_alloc, tracker_release, t};
}

void pw_bench_tracker_flush(pw_bench_tracker *t) {
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->count; ++i) pw_bench_flush(t->live[i].p, t->live[i].bytes);
    pthread_mutex_unlock(&t->mu);
}

int pw_bench_block_push(pw_bench_block **out, size_t *n, size_t *cap, void *p, size_t bytes) {
    if (*n == *cap) {
        const size_t grow = *cap ? 2 * *cap : 64;
        pw_bench_block *g = realloc(*out, grow * sizeof *g);
        if (g == NULL) return -1;
        *out = g;
        *cap = grow;
    }
    (*out)[(*n)++] = (pw_bench_block){p, bytes};
    return 0;
}

int pw_bench_tracker_blocks(pw_bench_tracker *t, size_t min_bytes, pw_bench_block **out, size_t *n,
                            size_t *cap) {
    int rc = 0;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; rc == 0 && i < t->count; ++i)
        if (t->live[i].bytes >= min_bytes) rc = pw_bench_block_push(out, n, cap, t->live[i].p, t->live[i].bytes);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

void pw_bench_tracker_free(pw_bench_tracker *t) {
    free(t->live);
    pthread_mutex_destroy(&t->mu);
    memset(t, 0, sizeof *t);
}
