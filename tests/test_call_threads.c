// pw-test: tsan
/*
 * The threads of a call (base.h: pw_context_set_call_threads, spin_wait; weight.h:
 * pw_run_args.threads and .parallel_for; issue 15, item 3), beside the context's own
 * pool:
 * - every setting gives Y bit for bit as the context's own threads do (one product,
 *   n = 1 and n > 1, and pw_matmul_wt_many);
 * - a call's host parallel-for is the one that runs it, and only for that call;
 * - at most `threads` of the pool's threads take part (counted with pw__parallel_for
 *   itself), and 1 means the calling thread alone;
 * - counts outside [0, PW_MAX_THREADS] are refused, and Y is then untouched.
 */
#include "pw_test.h"

#include "base/internal.h"

#include <pthread.h>
#include <stdatomic.h>

/* [512, 2048]: a product of at least 2^20 multiply-adds, so it is split over threads */
enum { OUT = 512, IN = 2048, N = 5, POOL = 4 };

/* A host parallel-for that runs every index on the calling thread and counts calls. */
static atomic_int g_host_calls;
static void host_for(void *user, pw_parallel_task task, void *task_context, size_t range) {
    (void)user;
    atomic_fetch_add(&g_host_calls, 1);
    for (size_t i = 0; i < range; ++i) task(task_context, i);
}

static pw_weight *make_weight(pw_context *ctx, pw_format f, uint8_t **keep) {
    const pw_format_info *fi = pw_format_get(f);
    const size_t blocks = (size_t)(OUT * IN / fi->block_size);
    float *wf = malloc(sizeof(float) * OUT * IN);
    uint8_t *wb = malloc(blocks * (size_t)fi->block_bytes);
    REQUIRE(wf && wb, "malloc");
    pw_rng r = {11 + (uint64_t)f};
    for (int i = 0; i < OUT * IN; ++i) wf[i] = (float)pw_rng_gauss(&r) * 0.1f;
    CHECK_OK(pw_format_quantize(ctx, f, wf, blocks, wb), ctx);
    free(wf);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, f, 2, shape, PW_LAYOUT_ROW_MAJOR, wb, blocks * (size_t)fi->block_bytes),
             ctx);
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &w), ctx);
    *keep = wb;
    return w;
}

/* Y of w for x at n = 1 and n = N through pw_weight_run with the given threads. */
static void run_with(pw_context *ctx, const pw_weight *w, const float *x, int threads,
                     pw_parallel_for_fn fn, float *y1, float *yn) {
    pw_run_args a;
    pw_run_args_init(&a);
    a.threads = threads;
    a.parallel_for = fn;
    a.x = x;
    a.n = 1;
    a.y = y1;
    CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
    a.n = N;
    a.y = yn;
    CHECK_OK(pw_weight_run(ctx, w, &a), ctx);
}

static void same_results(pw_context *ctx, pw_format f) {
    uint8_t *keep;
    pw_weight *w = make_weight(ctx, f, &keep);
    const char *name = pw_format_get(f)->name;
    static float x[N * IN], r1[OUT], rn[N * OUT], y1[OUT], yn[N * OUT];
    pw_rng r = {5};
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    run_with(ctx, w, x, 0, NULL, r1, rn);
    const int counts[] = {1, 2, 3, POOL, POOL + 3, PW_MAX_THREADS};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        run_with(ctx, w, x, counts[c], NULL, y1, yn);
        CHECK(memcmp(r1, y1, sizeof r1) == 0 && memcmp(rn, yn, sizeof rn) == 0,
              "%s: args.threads = %d changed Y", name, counts[c]);
    }
    /* a call's host parallel-for runs that call and no other */
    atomic_store(&g_host_calls, 0);
    run_with(ctx, w, x, 3, host_for, y1, yn);
    const int host = atomic_load(&g_host_calls);
    CHECK(host >= 2 && memcmp(r1, y1, sizeof r1) == 0 && memcmp(rn, yn, sizeof rn) == 0,
          "%s: host parallel-for: %d calls, same Y %d", name, host,
          memcmp(rn, yn, sizeof rn) == 0);
    run_with(ctx, w, x, 0, NULL, y1, yn);
    CHECK(atomic_load(&g_host_calls) == host, "%s: the host parallel-for outlived its call", name);
    /* the calls' setting: every call until reset, pw_matmul_wt_many included */
    CHECK_OK(pw_context_set_call_threads(ctx, 2, host_for, NULL), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, N, w, yn), ctx);
    pw_product p[2] = {{w, y1, 0}, {w, yn, 0}};
    static float ym[OUT];
    CHECK_OK(pw_matmul_wt_many(ctx, x, 1, 0, p, 1), ctx);
    memcpy(ym, y1, sizeof ym);
    CHECK(atomic_load(&g_host_calls) >= host + 2 && memcmp(rn, yn, sizeof rn) == 0 &&
              memcmp(r1, ym, sizeof ym) == 0,
          "%s: pw_context_set_call_threads with a host parallel-for", name);
    CHECK_OK(pw_context_set_call_threads(ctx, 1, NULL, NULL), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, N, w, yn), ctx);
    CHECK(memcmp(rn, yn, sizeof rn) == 0, "%s: one call thread changed Y", name);
    CHECK_OK(pw_context_set_call_threads(ctx, 0, NULL, NULL), ctx);
    (void)p[1];
    /* refusals leave Y alone */
    pw_run_args a;
    pw_run_args_init(&a);
    a.x = x;
    a.n = N;
    a.y = yn;
    const int bad[] = {-1, PW_MAX_THREADS + 1};
    for (size_t b = 0; b < 2; ++b) {
        for (int i = 0; i < N * OUT; ++i) yn[i] = -7.0f;
        a.threads = bad[b];
        CHECK_STATUS(pw_weight_run(ctx, w, &a), PW_ERR_INVALID_ARGUMENT, ctx);
        int kept = 1;
        for (int i = 0; i < N * OUT; ++i) kept &= yn[i] == -7.0f;
        CHECK(kept, "%s: refused args.threads = %d wrote Y", name, bad[b]);
        CHECK_STATUS(pw_context_set_call_threads(ctx, bad[b], NULL, NULL), PW_ERR_INVALID_ARGUMENT, ctx);
    }
    pw_weight_destroy(w);
    free(keep);
}

/* Which threads ran the tasks: a small set of pthread ids under a lock. */
typedef struct seen {
    pthread_mutex_t lock;
    pthread_t ids[PW_MAX_THREADS];
    int distinct;
    atomic_int *hits;
} seen;

static void record(void *p, size_t i) {
    seen *s = p;
    atomic_fetch_add(&s->hits[i], 1);
    const pthread_t me = pthread_self();
    pthread_mutex_lock(&s->lock);
    int known = 0;
    for (int k = 0; k < s->distinct; ++k) known |= pthread_equal(s->ids[k], me);
    if (!known) s->ids[s->distinct++] = me;
    pthread_mutex_unlock(&s->lock);
}

static void at_most(pw_context *ctx, int threads) {
    enum { RANGE = 257 };
    atomic_int hits[RANGE];
    for (int i = 0; i < RANGE; ++i) atomic_init(&hits[i], 0);
    seen s;
    pthread_mutex_init(&s.lock, NULL);
    s.distinct = 0;
    s.hits = hits;
    CHECK_OK(pw_context_set_call_threads(ctx, threads, NULL, NULL), ctx);
    CHECK(pw__threads(ctx) == (threads == 0 || threads > POOL ? POOL : threads),
          "call threads %d: work split for %d", threads, pw__threads(ctx));
    int most = 0, caller_only = 1;
    for (int rep = 0; rep < 20; ++rep) {
        s.distinct = 0;
        pw__parallel_for(ctx, record, &s, RANGE);
        if (s.distinct > most) most = s.distinct;
        caller_only &= s.distinct == 1 && pthread_equal(s.ids[0], pthread_self());
    }
    CHECK_OK(pw_context_set_call_threads(ctx, 0, NULL, NULL), ctx);
    int once = 1;
    for (int i = 0; i < RANGE; ++i) once &= atomic_load(&hits[i]) == 20;
    const int cap = threads == 0 || threads > POOL ? POOL : threads;
    CHECK(once, "call threads %d: an index not run exactly once a call", threads);
    CHECK(most >= 1 && most <= cap, "call threads %d: %d threads ran one call's tasks (at most %d)",
          threads, most, cap);
    if (threads == 1) CHECK(caller_only, "one call thread: tasks ran beside the caller");
    pthread_mutex_destroy(&s.lock);
}

int main(void) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = POOL;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    REQUIRE(ctx != NULL && pw_context_threads(ctx) == POOL, "a context of %d threads", POOL);
    const pw_format fs[] = {PW_FORMAT_Q4_0, PW_FORMAT_Q4_K, PW_FORMAT_Q8_0};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; ++i) same_results(ctx, fs[i]);
    const int counts[] = {1, 2, 3, 0, POOL + 1};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) at_most(ctx, counts[i]);

    /* spin-wait: the same results; settable and refused on NULL */
    CHECK_OK(pw_context_set_spin_wait(ctx, 1), ctx);
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; ++i) same_results(ctx, fs[i]);
    CHECK_OK(pw_context_set_spin_wait(ctx, 0), ctx);
    CHECK_STATUS(pw_context_set_spin_wait(NULL, 1), PW_ERR_INVALID_ARGUMENT, NULL);
    CHECK_STATUS(pw_context_set_call_threads(NULL, 1, NULL, NULL), PW_ERR_INVALID_ARGUMENT, NULL);
    pw_context_destroy(ctx);

    o.spin_wait = 1;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    same_results(ctx, PW_FORMAT_Q4_0);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
