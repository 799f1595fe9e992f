/*
 * Dispatch and the x * W^T entry points: pack once through a pw_weight
 * handle (one adapter event over 100 calls, no allocation in steady state),
 * the reference fall-back event when no kernel reads a layout and prepack is
 * off, per-call adapters when pw_matmul_view may prepack, refusal of weights
 * labelled [in, out], forced kernels, and thread-count independence.
 * Shapes: 37 rows x 3 blocks (odd rows, several blocks per row).
 */
// pw-test: tsan
#include "pw_test.h"

#include "kernel/kernel.h"

#include <math.h>

typedef struct events {
    int kernel, adapter, fallback;
    uint64_t adapter_bytes;
    char reason[160], kernel_name[64];
} events;

static void on_event(void *user, const pw_trace_event *e) {
    events *ev = user;
    if (e->kind == PW_TRACE_KERNEL) {
        ev->kernel++;
        snprintf(ev->kernel_name, sizeof ev->kernel_name, "%s", e->kernel);
    } else if (e->kind == PW_TRACE_ADAPTER) {
        ev->adapter++;
        ev->adapter_bytes += e->bytes;
    } else if (e->kind == PW_TRACE_FALLBACK) {
        ev->fallback++;
        snprintf(ev->reason, sizeof ev->reason, "%s", e->reason ? e->reason : "");
    }
}

typedef struct counting {
    long allocs;
} counting;

static void *count_alloc(void *user, size_t bytes, size_t alignment) {
    ((counting *)user)->allocs++;
    void *p = NULL;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, bytes ? bytes : 1) ? NULL : p;
}

static void count_free(void *user, void *p) {
    (void)user;
    free(p);
}

enum { OUT = 37, IN = 96, N = 5 };

static unsigned char wbytes[OUT * 3 * 18];
static float x[N * IN], y[N * OUT], y2[N * OUT], yref[N * OUT], ymag[N * OUT];

static pw_context *make_ctx(events *ev, counting *c, int threads) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.trace = on_event;
    o.trace_user = ev;
    o.threads = threads;
    if (c) {
        o.allocator.alloc = count_alloc;
        o.allocator.free = count_free;
        o.allocator.user = c;
    }
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    return ctx;
}

static void setup(void) {
    pw_context *ctx = pw_test_context();
    pw_rng r = {42};
    float w[OUT * IN];
    for (int i = 0; i < OUT * IN; ++i) w[i] = (float)pw_rng_gauss(&r);
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_0, w, OUT * 3, wbytes), ctx);
    /* Oracle: decoded weight times f32 x, in double. */
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, wbytes, sizeof wbytes), ctx);
    float wf[OUT * IN];
    CHECK_OK(pw_view_to_float(ctx, &v, wf, OUT * IN), ctx);
    for (int i = 0; i < N; ++i)
        for (int o = 0; o < OUT; ++o) {
            double s = 0, m = 0;
            for (int k = 0; k < IN; ++k) {
                s += (double)wf[o * IN + k] * x[i * IN + k];
                m += fabs((double)wf[o * IN + k] * x[i * IN + k]);
            }
            yref[i * OUT + o] = (float)s;
            ymag[i * OUT + o] = (float)m;
        }
    pw_context_destroy(ctx);
}

/* Kernels quantize x to int8 per block: each x is off by at most half a step, max|x|/254 of
 * its block. Those errors are independent, so for Gaussian data the sum drifts from the f32
 * oracle by ~0.2% of sum |w x| (measured); 1% leaves room while catching any wrong block. */
static int close_to_ref(const float *got, int n) {
    for (int i = 0; i < n * OUT; ++i)
        if (!(fabsf(got[i] - yref[i]) <= 0.01f * ymag[i])) return 0;
    return 1;
}

static void test_pack_once(void) {
    events ev = {0};
    counting c = {0};
    pw_context *ctx = make_ctx(&ev, &c, 1);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, wbytes, sizeof wbytes), ctx);
    v.name = "blk.0.w";
    pw_weight *h = NULL;
    pw_weight_options wo;
    pw_weight_options_init(&wo);
    wo.policy = PW_MEMORY_FASTEST; /* a packed GEMM form, made at the first GEMM call */
    CHECK_OK(pw_weight_create(ctx, &v, &wo, &h), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    CHECK(close_to_ref(y, N), "first GEMM result");
    const long allocs_after_first = c.allocs;
    for (int call = 1; call < 100; ++call) CHECK_OK(pw_matmul_wt(ctx, x, N, h, y2), ctx);
    CHECK(ev.adapter == 1, "%d adapter events over 100 GEMM calls, expected exactly 1", ev.adapter);
    CHECK(ev.kernel == 1, "%d kernel events, expected 1 (chosen once)", ev.kernel);
    CHECK(c.allocs == allocs_after_first, "%ld allocations in 99 steady-state calls",
          c.allocs - allocs_after_first);
    CHECK(memcmp(y, y2, sizeof y) == 0, "repeated calls differ");
    /* GEMV on the same handle: no new packing beyond the one form per kernel layout,
     * and no allocation for n <= the largest n seen. */
    const int adapters_before = ev.adapter;
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y2), ctx);
    const long a1 = c.allocs;
    for (int call = 0; call < 99; ++call) CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y2), ctx);
    CHECK(c.allocs == a1, "GEMV steady state allocated %ld times", c.allocs - a1);
    CHECK(ev.adapter <= adapters_before + 1, "GEMV packed more than once");
    CHECK(close_to_ref(y2, 1), "GEMV result");
    CHECK(pw_weight_bytes(h) > 0, "handle reports no bytes");
    pw_weight_destroy(h);
    pw_context_destroy(ctx);
}

static void test_fallback_and_prepack(void) {
    events ev = {0};
    pw_context *ctx = make_ctx(&ev, NULL, 1);
    pw_view rm, ibm;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &rm, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, wbytes, sizeof wbytes), ctx);
    pw_arena *a = NULL;
    CHECK_OK(pw_arena_create(ctx, &a), ctx);
    CHECK_OK(pw_view_prepack(ctx, &rm, (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0}, a, &ibm), ctx);
    memset(&ev, 0, sizeof ev);
    /* Prepack off (the default): the bytes are read as they are, by an input-block-major
     * kernel where one is usable (AVX2, AVX-512, dotprod), else by the reference kernel,
     * traced as a fallback; never relaid out. */
    int ibm_kernel = 0;
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        ibm_kernel |= k->format == PW_FORMAT_Q4_0 && !k->is_reference && k->kind == PW_WEIGHT_BLOCKS &&
                      k->layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR && pw_kernel_usable(ctx, i);
    }
    CHECK_OK(pw_matmul_view(ctx, x, N, &ibm, y), ctx);
    if (ibm_kernel) {
        CHECK(ev.fallback == 0 && ev.adapter == 0 && strstr(ev.kernel_name, "_ibm_") != NULL,
              "fallback %d adapter %d kernel %s", ev.fallback, ev.adapter, ev.kernel_name);
        CHECK(close_to_ref(y, N), "input-block-major kernel result");
    } else {
        CHECK(ev.fallback == 1 && ev.adapter == 0, "fallback %d adapter %d", ev.fallback, ev.adapter);
        CHECK(strstr(ev.reason, "input_block_major") && strstr(ev.reason, "Q4_0"), "reason: %s", ev.reason);
        CHECK(close_to_ref(y, N), "fallback result");
    }
    /* Prepack on: the fastest kernel, whatever it reads: an input-block-major one where
     * one ranks with the best (its bytes read as they are: no adapter), else a kernel of
     * another layout at the price of an adapter per call. */
    int best = -1, best_ibm = -1;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference || k->info.format != PW_FORMAT_Q4_0 ||
            k->info.kind != PW_WEIGHT_BLOCKS || k->min_n > N || !pw__kernel_usable(ctx, k))
            continue;
        if (k->priority > best) best = k->priority;
        if (k->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR && k->priority > best_ibm)
            best_ibm = k->priority;
    }
    const int as_is = best_ibm == best;
    pw_context_set_prepack_weights(ctx, 1);
    memset(&ev, 0, sizeof ev);
    for (int i = 0; i < 3; ++i) CHECK_OK(pw_matmul_view(ctx, x, N, &ibm, y2), ctx);
    CHECK(ev.fallback == 0 && ev.adapter == (as_is ? 0 : 3) &&
              (strstr(ev.kernel_name, "_ibm_") != NULL) == as_is,
          "prepack on: fallback %d adapter %d kernel %s (want 0, %d)", ev.fallback, ev.adapter,
          ev.kernel_name, as_is ? 0 : 3);
    CHECK(close_to_ref(y2, N), "prepacked result");
    pw_arena_destroy(a);
    pw_context_destroy(ctx);
}

static void test_refusals(void) {
    events ev = {0};
    pw_context *ctx = make_ctx(&ev, NULL, 1);
    pw_view rm, tr;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &rm, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, wbytes, sizeof wbytes), ctx);
    /* A block-aligned weight labelled [in, out] (as AS_STORED gives): 64 x 96 both aligned. */
    const int64_t sq[2] = {64, 96};
    static unsigned char sqb[64 * 3 * 18];
    pw_view s;
    CHECK_OK(pw_view_init(ctx, &s, PW_FORMAT_Q4_0, 2, sq, PW_LAYOUT_ROW_MAJOR, sqb, sizeof sqb), ctx);
    CHECK_OK(pw_view_transpose(ctx, &s, &tr), ctx);
    pw_weight *h = NULL;
    CHECK_STATUS(pw_weight_create(ctx, &tr, NULL, &h), PW_ERR_ORIENTATION, ctx);
    CHECK(strstr(pw_context_message(ctx), "PW_ORIENT_OUT_IN") != NULL, "message: %s", pw_context_message(ctx));
    CHECK_STATUS(pw_matmul_view(ctx, x, 1, &tr, y), PW_ERR_ORIENTATION, ctx);
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.kernel = "no_such_kernel";
    CHECK_STATUS(pw_weight_create(ctx, &rm, &o, &h), PW_ERR_NOT_FOUND, ctx);
    o.kernel = "ref_q8_0";
    CHECK_STATUS(pw_weight_create(ctx, &rm, &o, &h), PW_ERR_UNSUPPORTED, ctx);
    CHECK_STATUS(pw_matmul_view(ctx, x, 0, &rm, y), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_matmul_view(ctx, NULL, 1, &rm, y), PW_ERR_INVALID_ARGUMENT, ctx);
    /* A kernel needing features the cap hides is refused, not run. */
    pw_context_set_isa(ctx, PW_ISA_SCALAR);
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        if (k->features == 0 || k->format != PW_FORMAT_Q4_0) continue;
        o.kernel = k->name;
        CHECK_STATUS(pw_weight_create(ctx, &rm, &o, &h), PW_ERR_UNSUPPORTED, ctx);
        break;
    }
    pw_context_destroy(ctx);
}

/* Every kernel computes each output independently: the thread split cannot change bits. */
static void test_threads(void) {
    events ev = {0};
    for (int n = 1; n <= N; n += N - 1) {
        pw_context *c1 = make_ctx(&ev, NULL, 1), *c2 = make_ctx(&ev, NULL, 2);
        pw_view v;
        const int64_t shape[2] = {OUT, IN};
        CHECK_OK(pw_view_init(c1, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, wbytes, sizeof wbytes), c1);
        pw_weight *h1 = NULL, *h2 = NULL;
        CHECK_OK(pw_weight_create(c1, &v, NULL, &h1), c1);
        CHECK_OK(pw_weight_create(c2, &v, NULL, &h2), c2);
        CHECK_OK(pw_matmul_wt(c1, x, n, h1, y), c1);
        CHECK_OK(pw_matmul_wt(c2, x, n, h2, y2), c2);
        CHECK(memcmp(y, y2, sizeof(float) * (size_t)(n * OUT)) == 0, "1 vs 2 threads differ at n=%d", n);
        /* A weight prepared in one context runs from another: same bits. */
        CHECK_OK(pw_matmul_wt(c1, x, n, h2, y2), c1);
        CHECK(memcmp(y, y2, sizeof(float) * (size_t)(n * OUT)) == 0, "a weight of c2 run in c1 differs at n=%d", n);
        pw_weight_destroy(h1);
        pw_weight_destroy(h2);
        pw_context_destroy(c1);
        pw_context_destroy(c2);
    }
}

/* A host engine's parallel-for: runs the tasks itself (here serially, in reverse order). */
typedef struct host_pool {
    int calls;
    size_t tasks;
} host_pool;

static void host_parallel_for(void *user, pw_parallel_task task, void *task_context, size_t range) {
    host_pool *p = user;
    p->calls++;
    p->tasks += range;
    for (size_t i = range; i-- > 0;) task(task_context, i);
}

static void test_host_parallel_for(void) {
    host_pool pool = {0, 0};
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = 3;
    o.parallel_for = host_parallel_for;
    o.parallel_for_user = &pool;
    pw_context *ctx = NULL, *c1 = make_ctx(&(events){0}, NULL, 1);
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    /* Big enough (4M multiply-adds) that the work is split into tasks at all. */
    enum { BO = 512, BI = 2048, BN = 4 };
    float *w = malloc(sizeof(float) * BO * BI), *bx = malloc(sizeof(float) * BN * BI);
    float *by = malloc(sizeof(float) * BN * BO), *by1 = malloc(sizeof(float) * BN * BO);
    unsigned char *q = malloc(BO * (BI / 32) * 18);
    pw_rng r = {11};
    for (int i = 0; i < BO * BI; ++i) w[i] = (float)pw_rng_gauss(&r);
    for (int i = 0; i < BN * BI; ++i) bx[i] = (float)pw_rng_gauss(&r);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_0, w, BO * (BI / 32), q), ctx);
    pw_view v;
    const int64_t shape[2] = {BO, BI};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, q, BO * (BI / 32) * 18), ctx);
    pw_weight *h = NULL, *h1 = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &h), ctx);
    CHECK_OK(pw_weight_create(c1, &v, NULL, &h1), c1);
    CHECK_OK(pw_matmul_wt(ctx, bx, BN, h, by), ctx);
    CHECK_OK(pw_matmul_wt(c1, bx, BN, h1, by1), c1);
    CHECK(pool.calls >= 1 && pool.tasks >= 2, "host parallel-for called %d times for %zu tasks", pool.calls,
          pool.tasks);
    CHECK(memcmp(by, by1, sizeof(float) * BN * BO) == 0, "host parallel-for changed the products");
    pw_weight_destroy(h);
    pw_weight_destroy(h1);
    pw_context_destroy(ctx);
    pw_context_destroy(c1);
    free(w);
    free(bx);
    free(by);
    free(by1);
    free(q);
}

/* The epilogue of every weight kind's run: bias added, clamped, f16 out, row strides, at
 * every policy (the fast kernels leave it to the dispatcher, the QC4W ones apply it
 * themselves: both must give the plain product's numbers through the same f32 steps). */
static void test_epilogue(void) {
    pw_context *ctx = pw_test_context();
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, wbytes, sizeof wbytes), ctx);
    float bias[OUT];
    for (int o = 0; o < OUT; ++o) bias[o] = (float)(o % 7) - 3.0f;
    for (int policy = PW_MEMORY_COMPACT; policy <= PW_MEMORY_IN_PLACE; ++policy) {
        for (int n = 1; n <= N; n += N - 1) {
            pw_weight_options o;
            pw_weight_options_init(&o);
            o.policy = (pw_memory_policy)policy;
            pw_weight *plain = NULL, *h = NULL;
            CHECK_OK(pw_weight_create(ctx, &v, &o, &plain), ctx);
            CHECK_OK(pw_matmul_wt(ctx, x, n, plain, y), ctx);
            o.bias = bias;
            o.min = -1.5f;
            o.max = 2.0f;
            CHECK_OK(pw_weight_create(ctx, &v, &o, &h), ctx);
            /* f32 with strided rows: y2 rows OUT + 3 apart, x rows IN + 5 apart */
            static float xs[N * (IN + 5)], ys[N * (OUT + 3)];
            for (int i = 0; i < n; ++i) memcpy(xs + i * (IN + 5), x + i * IN, sizeof(float) * IN);
            for (int i = 0; i < N * (OUT + 3); ++i) ys[i] = -777.0f;
            pw_run_args a;
            pw_run_args_init(&a);
            a.n = n;
            a.x = xs;
            a.ldx = IN + 5;
            a.y = ys;
            a.ldy = OUT + 3;
            CHECK_OK(pw_weight_run(ctx, h, &a), ctx);
            uint16_t h16[N * OUT];
            pw_run_args_init(&a);
            a.n = n;
            a.x = x;
            a.y = h16;
            a.y_type = PW_DTYPE_F16;
            CHECK_OK(pw_weight_run(ctx, h, &a), ctx);
            int bad = 0, clamped = 0;
            for (int i = 0; i < n; ++i) {
                for (int oo = 0; oo < OUT; ++oo) {
                    float want = y[i * OUT + oo] + bias[oo];
                    want = want < -1.5f ? -1.5f : (want > 2.0f ? 2.0f : want);
                    clamped += want == -1.5f || want == 2.0f;
                    bad += memcmp(&ys[i * (OUT + 3) + oo], &want, 4) != 0;
                    bad += h16[i * OUT + oo] != pw_f32_to_f16(want);
                }
                for (int oo = OUT; oo < OUT + 3 && i + 1 < n; ++oo) bad += ys[i * (OUT + 3) + oo] != -777.0f;
            }
            CHECK(bad == 0 && clamped > 0, "%s n=%d: %d outputs off the plain product + bias, clamped "
                  "(%d clamped)", pw_memory_policy_name(o.policy), n, bad, clamped);
            pw_weight_destroy(plain);
            pw_weight_destroy(h);
        }
    }
    pw_context_destroy(ctx);
}

int main(void) {
    setup();
    test_host_parallel_for();
    test_pack_once();
    test_fallback_and_prepack();
    test_refusals();
    test_threads();
    test_epilogue();
    return pw_test_finish();
}
