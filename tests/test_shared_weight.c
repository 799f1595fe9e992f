// pw-test: tsan
/*
 * One prepared weight shared by several serving threads, each with its own
 * context (packwise/weight.h, Threads): the packed bytes are held once, and
 * every thread's 1,000 products are bit-identical to one thread's.
 *
 * For each weight kind (a Q4_0 view under compact and under fastest, a Q4_K
 * view through a shared cache, raw QC4W weights), two threads start together
 * on a weight nobody has prepared yet (so the first products race to prepare
 * it: the weight's lock must make that one preparation), then each runs 1,000
 * products alternating n = 1 and n = 5 on its own context with 1 or 2
 * threads, comparing every result with the single-threaded run made before.
 * The ThreadSanitizer suite runs this test.
 */
#include "pw_test.h"

#include <pthread.h>

enum { OUT = 96, IN = 512, NB = 5, ITERS = 1000 };

static float g_x[NB * IN];

typedef struct shared {
    const pw_weight *w;
    const float *want1, *want5; /* the single-thread results, n = 1 and n = 5 */
    pthread_barrier_t *start;
    int threads;                /* the thread's context's pool */
    int mismatches;
    pw_status st;
    int adapters;
} shared;

static void count_adapters(void *user, const pw_trace_event *e) {
    if (e->kind == PW_TRACE_ADAPTER) ++*(int *)user;
}

static void *serve(void *p) {
    shared *s = p;
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = s->threads;
    o.trace = count_adapters;
    o.trace_user = &s->adapters;
    pw_context *ctx = NULL;
    s->st = pw_context_create(&o, &ctx);
    pthread_barrier_wait(s->start);
    if (s->st != PW_OK) return NULL;
    float y[NB * OUT];
    for (int i = 0; i < ITERS && s->st == PW_OK; ++i) {
        const int n = i % 2 ? NB : 1;
        s->st = pw_matmul_wt(ctx, g_x, n, s->w, y);
        if (s->st == PW_OK && memcmp(y, n == 1 ? s->want1 : s->want5, sizeof(float) * (size_t)(n * OUT)) != 0)
            ++s->mismatches;
    }
    pw_context_destroy(ctx);
    return NULL;
}

/* Two threads share w (unprepared); returns the adapter events they saw between them. */
static int run_shared(const char *what, pw_weight *w, const float *want1, const float *want5) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    shared s[2];
    pthread_t t[2];
    for (int i = 0; i < 2; ++i) {
        s[i] = (shared){w, want1, want5, &start, i + 1, 0, PW_OK, 0};
        REQUIRE(pthread_create(&t[i], NULL, serve, &s[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < 2; ++i)
        CHECK(s[i].st == PW_OK && s[i].mismatches == 0, "%s, thread %d: %s, %d of %d products differ "
              "from one thread's", what, i, pw_status_name(s[i].st), s[i].mismatches, ITERS);
    return s[0].adapters + s[1].adapters;
}

/* The single-thread results of a weight made the same way (its own preparation). */
static void expected(pw_context *ctx, pw_weight *w, float *want1, float *want5) {
    CHECK_OK(pw_matmul_wt(ctx, g_x, 1, w, want1), ctx);
    CHECK_OK(pw_matmul_wt(ctx, g_x, NB, w, want5), ctx);
}

static void view_weights(pw_context *ctx) {
    pw_rng r = {3};
    float wf[OUT * IN];
    for (int i = 0; i < OUT * IN; ++i) wf[i] = (float)pw_rng_gauss(&r);
    static unsigned char q40[OUT * IN / 32 * 18], q4k[OUT * IN / 256 * 144];
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_0, wf, OUT * IN / 32, q40), ctx);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_K, wf, OUT * IN / 256, q4k), ctx);
    const int64_t shape[2] = {OUT, IN};
    pw_view v40, v4k;
    CHECK_OK(pw_view_init(ctx, &v40, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, q40, sizeof q40), ctx);
    CHECK_OK(pw_view_init(ctx, &v4k, PW_FORMAT_Q4_K, 2, shape, PW_LAYOUT_ROW_MAJOR, q4k, sizeof q4k), ctx);
    v40.name = "q4_0";
    v4k.name = "q4_k";
    float want1[OUT], want5[NB * OUT];
    for (int policy = PW_MEMORY_COMPACT; policy <= PW_MEMORY_FASTEST; ++policy) {
        pw_weight_options o;
        pw_weight_options_init(&o);
        o.policy = (pw_memory_policy)policy;
        pw_weight *ref = NULL, *w = NULL;
        CHECK_OK(pw_weight_create(ctx, &v40, &o, &ref), ctx);
        expected(ctx, ref, want1, want5);
        CHECK_OK(pw_weight_create(ctx, &v40, &o, &w), ctx);
        const int adapters = run_shared(pw_memory_policy_name(o.policy), w, want1, want5);
        const pw_weight_info in = pw_test_weight_info(w);
        CHECK(in.prepared && adapters == in.forms, "%s: %d adapter events for %d forms (each packed once)",
              pw_memory_policy_name(o.policy), adapters, (int)in.forms);
        pw_weight_destroy(w);
        pw_weight_destroy(ref);
    }
    /* Through a cache: one entry, one packing, whichever thread asks first. */
    pw_cache *cache = NULL;
    CHECK_OK(pw_cache_create(ctx, &cache), ctx);
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.policy = PW_MEMORY_FASTEST;
    pw_weight *ref = NULL, *w = NULL;
    CHECK_OK(pw_weight_create(ctx, &v4k, &o, &ref), ctx);
    expected(ctx, ref, want1, want5);
    o.cache = cache;
    CHECK_OK(pw_weight_create(ctx, &v4k, &o, &w), ctx);
    run_shared("q4_k through a cache", w, want1, want5);
    pw_cache_stats st;
    pw_cache_get_stats(cache, &st);
    CHECK(st.misses == (uint64_t)pw_test_weight_info(w).forms && st.hits == 0, "cache: %llu misses, %llu hits",
          (unsigned long long)st.misses, (unsigned long long)st.hits);
    pw_cache_close(cache);
    pw_weight_destroy(w);
    pw_weight_destroy(ref);
}

static void qc4w_weight(pw_context *ctx) {
    pw_rng r = {4};
    static uint8_t nib[OUT * IN / 2];
    float scale[OUT];
    for (size_t i = 0; i < sizeof nib; ++i) nib[i] = (uint8_t)pw_rng_next(&r);
    for (int i = 0; i < OUT; ++i) scale[i] = 0.02f;
    pw_qc4w_weights q;
    pw_qc4w_weights_init(&q);
    q.out = OUT;
    q.in = IN;
    q.data = nib;
    q.scale = scale;
    q.name = "qc4w";
    pw_weight *w = NULL;
    CHECK_OK(pw_weight_create_qc4w(ctx, &q, NULL, &w), ctx);
    float want1[OUT], want5[NB * OUT];
    expected(ctx, w, want1, want5);
    run_shared("qc4w", w, want1, want5);
    pw_weight_destroy(w);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_rng r = {2};
    for (int i = 0; i < NB * IN; ++i) g_x[i] = (float)pw_rng_gauss(&r);
    view_weights(ctx);
    qc4w_weight(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
