// pw-test: once
/*
 * A cache file prepacked at one ISA level, used at a lower one (issue 16): every weight
 * is either served from the file with no adapter event (the form its kernels read at
 * that level is in the file), or packed with a cache trace event that says why the
 * file could not serve it (the family the file holds against the one the kernel reads,
 * for instance). Never a silent repack, never a wrong form: the products agree with the
 * same weight made without any cache. At the level the file was made, under the same
 * policy, every form is served.
 *
 * Weights: Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q8_0, Q2_K, TQ1_0, TQ2_0, Q3_K, Q4_K, Q5_K
 * and Q6_K at 96 x 768 (3 K-quant blocks, 24 Q4_0 blocks per row); files prepacked
 * under compact and under fastest at the native level; used at native, at avxvnni and avx2 (x86) or neon (Arm), and at scalar, under compact and
 * fastest. On x86 also a file prepacked at avxvnni, which must serve avx2 whole: the
 * AVX2 and AVX-VNNI kernels read the same packed bytes (x86/avx2_level.h). Under compact,
 * a weight whose kernel at the lower level reads the 32-row family (q4x32k4, q8x32k4,
 * q41x32k4, q5x32k4, q51x32k4, iq4x32k4, q2kx32k4, tq1x32k4, tq2x32k4, q3kx32k4,
 * q4kx32k4, q5kx32k4, q6kx32k4: one packed form for every ISA) that its native kernel read must be served
 * from the native file.
 */
#include "pw_test.h"

#include <math.h>
#include <unistd.h>

enum { OUT = 96, IN = 768, NW = 13 }; /* 96 rows: whole 32-row tiles, so compact packs too */
static const pw_format formats[NW] = {PW_FORMAT_Q4_0, PW_FORMAT_Q4_1, PW_FORMAT_Q5_0,
                                      PW_FORMAT_Q5_1, PW_FORMAT_IQ4_NL, PW_FORMAT_Q8_0,
                                      PW_FORMAT_Q2_K, PW_FORMAT_TQ1_0, PW_FORMAT_TQ2_0,
                                      PW_FORMAT_Q3_K, PW_FORMAT_Q4_K, PW_FORMAT_Q5_K,
                                      PW_FORMAT_Q6_K};

typedef struct events {
    int adapters, caches;
    char reason[512];
} events;

static void on_trace(void *user, const pw_trace_event *e) {
    events *ev = user;
    if (e->kind == PW_TRACE_ADAPTER) ev->adapters++;
    if (e->kind == PW_TRACE_CACHE) {
        ev->caches++;
        snprintf(ev->reason, sizeof ev->reason, "%s", e->reason ? e->reason : "");
    }
}

static char gguf_path[512];

/* The GEMV kernel's 32-row family at the native level, per tensor (use_cache at native
 * under either policy fills it; the file made there holds that form). */
static char native_family[NW][32];

/* The 32-row family a kernel name reads ("q4kx32k4" of "q4_k_q4kx32k4_avx2"), or "". */
static void family_of(const char *kernel, char *out, size_t size) {
    out[0] = '\0';
    const char *x = strstr(kernel, "x32k4");
    if (x == NULL) return;
    const char *b = x;
    while (b > kernel && b[-1] != '_') --b;
    const size_t n = (size_t)(x + 5 - b);
    if (n < size) {
        memcpy(out, b, n);
        out[n] = '\0';
    }
}

static void write_gguf(pw_context *ctx) {
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    float *x = malloc(sizeof(float) * OUT * IN);
    uint8_t *q[NW];
    pw_rng r = {77};
    for (int i = 0; i < NW; ++i) {
        const pw_format_info *fi = pw_format_get(formats[i]);
        const size_t blocks = (size_t)(OUT * IN / fi->block_size);
        for (int k = 0; k < OUT * IN; ++k) x[k] = (float)pw_rng_gauss(&r);
        q[i] = malloc(blocks * (size_t)fi->block_bytes);
        CHECK_OK(pw_format_quantize(ctx, formats[i], x, blocks, q[i]), ctx);
        char name[32];
        snprintf(name, sizeof name, "w.%s", fi->name);
        const int64_t ne[2] = {IN, OUT};
        CHECK_OK(pw_gguf_writer_add_tensor(w, name, formats[i], 2, ne, q[i], blocks * (size_t)fi->block_bytes),
                 ctx);
    }
    CHECK_OK(pw_gguf_writer_write(w, gguf_path), ctx);
    pw_gguf_writer_destroy(w);
    for (int i = 0; i < NW; ++i) free(q[i]);
    free(x);
}

static pw_context *context_at(pw_isa isa, pw_memory_policy policy, events *ev) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.max_isa = isa;
    o.ignore_env = 1;
    o.memory_policy = policy;
    o.threads = 1;
    o.trace = on_trace;
    o.trace_user = ev;
    pw_context *ctx = NULL;
    REQUIRE(pw_context_create(&o, &ctx) == PW_OK, "context: %s", pw_last_create_message());
    return ctx;
}

/* Every weight of the GGUF through the cache at `isa` under `policy`: returns how many
 * forms were served; fails a check for a silent repack or a wrong product. */
static int use_cache(pw_isa isa, pw_memory_policy policy, const char *cache_path, int expect_all,
                     int *packed) {
    events ev;
    memset(&ev, 0, sizeof ev);
    pw_context *ctx = context_at(isa, policy, &ev);
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, gguf_path, &go, &g), ctx);
    pw_cache *c = NULL;
    CHECK_OK(pw_cache_open(ctx, cache_path, &c), ctx);
    int served = 0;
    float x[2 * IN], y[2 * OUT], y_plain[2 * OUT];
    pw_rng r = {5};
    for (int i = 0; i < 2 * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    for (int64_t t = 0; g && c && t < pw_gguf_tensor_count(g); ++t) {
        pw_view v;
        CHECK_OK(pw_gguf_tensor_view(ctx, g, t, &v), ctx);
        pw_weight_options o;
        pw_weight_options_init(&o);
        o.cache = c;
        pw_weight *w = NULL, *plain = NULL;
        memset(&ev, 0, sizeof ev);
        CHECK_OK(pw_weight_create(ctx, &v, &o, &w), ctx);
        CHECK_OK(pw_weight_prepare(ctx, w), ctx);
        const pw_weight_info info = pw_test_weight_info(w);
        const int all_served = info.from_cache == info.forms;
        served += info.from_cache;
        *packed += info.forms - info.from_cache;
        if (all_served) {
            CHECK(ev.adapters == 0, "%s at %s/%s: served from the file, yet %d adapter events", v.name,
                  pw_isa_name(isa), pw_memory_policy_name(policy), ev.adapters);
        } else {
            /* packed here: a cache event says why the file could not serve it */
            CHECK(ev.caches >= 1 && strstr(ev.reason, "miss: packed and stored; ") &&
                      strstr(ev.reason, "cache file"),
                  "%s at %s/%s: %d of %d forms packed, cache event '%s'", v.name, pw_isa_name(isa),
                  pw_memory_policy_name(policy), info.forms - info.from_cache, info.forms, ev.reason);
        }
        /* under compact a weight holds one form: when the kernel at this level reads the
         * 32-row family (*_<family>x32k4_<level>, bytes every level shares) that the native
         * level's kernel read when the file was made, the file holds exactly that form, so
         * it must be served, not repacked */
        char family[32];
        family_of(info.kernel_gemv, family, sizeof family);
        if (isa == PW_ISA_NATIVE && t < NW) snprintf(native_family[t], sizeof native_family[t], "%s", family);
        if (policy == PW_MEMORY_COMPACT && isa != PW_ISA_NATIVE && family[0] != '\0' && t < NW &&
            strcmp(family, native_family[t]) == 0)
            CHECK(all_served && info.forms == 1, "%s at %s/compact: GEMV reads %s, yet %d of %d forms "
                  "served (%s)", v.name, pw_isa_name(isa), info.kernel_gemv, info.from_cache,
                  info.forms, ev.reason);
        if (expect_all)
            CHECK(all_served, "%s at the level the file was made: %d of %d forms served (%s)", v.name,
                  info.from_cache, info.forms, ev.reason);
        /* the same products as a weight made without the cache */
        pw_weight_options po;
        pw_weight_options_init(&po);
        CHECK_OK(pw_weight_create(ctx, &v, &po, &plain), ctx);
        for (int64_t n = 1; n <= 2; ++n) {
            CHECK_OK(pw_matmul_wt(ctx, x, n, w, y), ctx);
            CHECK_OK(pw_matmul_wt(ctx, x, n, plain, y_plain), ctx);
            CHECK(memcmp(y, y_plain, sizeof(float) * (size_t)(n * OUT)) == 0,
                  "%s at %s/%s, n = %lld: the cache-served product differs", v.name, pw_isa_name(isa),
                  pw_memory_policy_name(policy), (long long)n);
        }
        pw_weight_destroy(w);
        pw_weight_destroy(plain);
    }
    pw_cache_close(c);
    pw_gguf_close(g);
    pw_context_destroy(ctx);
    return served;
}

/* A cache file of the GGUF's weights prepacked at `isa` under `policy`. */
static void prepack_at(pw_isa isa, pw_memory_policy policy, const char *cache_path) {
    events ev;
    memset(&ev, 0, sizeof ev);
    pw_context *ctx = context_at(isa, policy, &ev);
    pw_cache_prepack_options po;
    pw_cache_prepack_options_init(&po);
    po.policy = policy;
    CHECK_OK(pw_cache_prepack(ctx, gguf_path, cache_path, &po), ctx);
    pw_context_destroy(ctx);
}

int main(void) {
    snprintf(gguf_path, sizeof gguf_path, "%s/test_cache_isa_%d.gguf", PW_TEST_BINARY_DIR, (int)getpid());
    pw_context *ctx = pw_test_context();
    write_gguf(ctx);
    /* the levels below native; the last (scalar) is used under the other policy */
#if defined(__aarch64__)
    const pw_isa lower[] = {PW_ISA_NEON, PW_ISA_SCALAR};
#else
    const pw_isa lower[] = {PW_ISA_AVXVNNI, PW_ISA_AVX2, PW_ISA_SCALAR};
#endif
    const int nlower = (int)(sizeof lower / sizeof lower[0]);
    const pw_memory_policy policies[2] = {PW_MEMORY_COMPACT, PW_MEMORY_FASTEST};
    for (int m = 0; m < 2; ++m) {
        char cache_path[600];
        snprintf(cache_path, sizeof cache_path, "%s/test_cache_isa_%d_%s.pwc", PW_TEST_BINARY_DIR,
                 (int)getpid(), pw_memory_policy_name(policies[m]));
        prepack_at(PW_ISA_NATIVE, policies[m], cache_path);
        int packed = 0;
        const int at_native = use_cache(PW_ISA_NATIVE, policies[m], cache_path, 1, &packed);
        for (int u = 0; u < nlower; ++u) {
            const pw_memory_policy pu = policies[u < nlower - 1 ? m : 1 - m];
            int repacked = 0;
            const int s = use_cache(lower[u], pu, cache_path, 0, &repacked);
            printf("file made under %s at native (%d forms served there): at %s under %s, %d forms "
                   "served, %d packed with a reason\n",
                   pw_memory_policy_name(policies[m]), at_native, pw_isa_name(lower[u]),
                   pw_memory_policy_name(pu), s, repacked);
        }
        unlink(cache_path);
    }
#if !defined(__aarch64__)
    /* avxvnni and avx2 kernels read the same packed bytes (i8g GEMM under fastest): a file
     * made at avxvnni serves avx2 whole, and the other way round, with no adapter event */
    for (int m = 0; m < 2; ++m) {
        const pw_isa made[2] = {PW_ISA_AVXVNNI, PW_ISA_AVX2};
        for (int d = 0; d < 2; ++d) {
            char cache_path[600];
            snprintf(cache_path, sizeof cache_path, "%s/test_cache_isa_%d_%s_%s.pwc",
                     PW_TEST_BINARY_DIR, (int)getpid(), pw_isa_name(made[d]),
                     pw_memory_policy_name(policies[m]));
            prepack_at(made[d], policies[m], cache_path);
            int packed = 0;
            const int here = use_cache(made[d], policies[m], cache_path, 1, &packed);
            const int there = use_cache(made[1 - d], policies[m], cache_path, 1, &packed);
            CHECK(packed == 0 && here == there, "file made at %s under %s: %d forms served there, "
                  "%d at %s, %d packed", pw_isa_name(made[d]), pw_memory_policy_name(policies[m]),
                  here, there, pw_isa_name(made[1 - d]), packed);
            printf("file made under %s at %s: %d forms served there, %d at %s\n",
                   pw_memory_policy_name(policies[m]), pw_isa_name(made[d]), here, there,
                   pw_isa_name(made[1 - d]));
            unlink(cache_path);
        }
    }
#endif
    unlink(gguf_path);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
