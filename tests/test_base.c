/*
 * Base module: status strings, context creation and the ISA cap (option and
 * PACKWISE_ISA), allocator hooks, arena alignment and accounting, and the
 * trace line format of the command-line contract.
 */
// pw-test: once
#include "pw_test.h"

#include <stdint.h>

typedef struct counting {
    int allocs, frees;
} counting;

static void *count_alloc(void *user, size_t bytes, size_t alignment) {
    counting *c = user;
    c->allocs++;
    void *p = NULL;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, bytes ? bytes : 1))
        return NULL;
    return p;
}

static void count_free(void *user, void *p) {
    counting *c = user;
    if (p) c->frees++;
    free(p);
}

static void test_status(void) {
    CHECK(strcmp(pw_status_name(PW_OK), "PW_OK") == 0, "PW_OK name");
    CHECK(strcmp(pw_status_name(PW_ERR_BAD_FILE), "PW_ERR_BAD_FILE") == 0, "bad file name");
    CHECK(strcmp(pw_status_str(PW_OK), "success") == 0, "PW_OK text");
    CHECK(strcmp(pw_status_str((pw_status)999), "unknown status") == 0, "unknown status text");
    CHECK(PW_ERR_FAMILY == 15, "status values are fixed");
}

static void test_isa_cap(void) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.ignore_env = 1;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), ctx);
    const uint32_t cpu = pw_context_cpu_features(ctx);
    CHECK(pw_context_usable_features(ctx) == cpu, "no cap: usable %x != cpu %x",
          pw_context_usable_features(ctx), cpu);
    CHECK_OK(pw_context_set_isa(ctx, PW_ISA_SCALAR), ctx);
    CHECK(pw_context_usable_features(ctx) == 0, "scalar cap leaves features %x",
          pw_context_usable_features(ctx));
    CHECK(pw_context_isa(ctx) == PW_ISA_SCALAR, "scalar isa");
#if defined(__x86_64__)
    CHECK_OK(pw_context_set_isa(ctx, PW_ISA_AVX2), ctx);
    CHECK((pw_context_usable_features(ctx) & (PW_CPU_AVX512F | PW_CPU_AVX512VNNI | PW_CPU_AVXVNNI)) == 0,
          "avx2 cap leaves avx512 features");
    if (cpu & PW_CPU_AVX2) CHECK(pw_context_isa(ctx) == PW_ISA_AVX2, "avx2 level");
    /* avxvnni: the avx2 set plus AVX-VNNI, nothing of AVX-512; on a CPU without AVX-VNNI it
     * runs as avx2 (a cap never raises) */
    const uint32_t avx2_set = PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C;
    CHECK_OK(pw_context_set_isa(ctx, PW_ISA_AVXVNNI), ctx);
    CHECK(pw_context_usable_features(ctx) == (cpu & (avx2_set | PW_CPU_AVXVNNI)),
          "avxvnni cap: usable %x of cpu %x", pw_context_usable_features(ctx), cpu);
    if ((cpu & (avx2_set | PW_CPU_AVXVNNI)) == (avx2_set | PW_CPU_AVXVNNI))
        CHECK(pw_context_isa(ctx) == PW_ISA_AVXVNNI, "avxvnni level: %s",
              pw_isa_name(pw_context_isa(ctx)));
    else if ((cpu & avx2_set) == avx2_set)
        CHECK(pw_context_isa(ctx) == PW_ISA_AVX2, "avxvnni without AVX-VNNI runs as avx2");
    CHECK_STATUS(pw_context_set_isa(ctx, PW_ISA_I8MM), PW_ERR_INVALID_ARGUMENT, ctx);
#elif defined(__aarch64__)
    CHECK_OK(pw_context_set_isa(ctx, PW_ISA_NEON), ctx);
    CHECK((pw_context_usable_features(ctx) & (PW_CPU_DOTPROD | PW_CPU_I8MM)) == 0, "neon cap");
    CHECK_STATUS(pw_context_set_isa(ctx, PW_ISA_AVX2), PW_ERR_INVALID_ARGUMENT, ctx);
#endif
    pw_context_destroy(ctx);

    /* The environment variable lowers the cap; a bad value is refused with a message. */
    setenv("PACKWISE_ISA", "scalar", 1);
    CHECK_OK(pw_context_create(NULL, &ctx), NULL);
    CHECK(pw_context_usable_features(ctx) == 0, "PACKWISE_ISA=scalar leaves features");
    pw_context_destroy(ctx);
    setenv("PACKWISE_ISA", "sse9", 1);
    CHECK_STATUS(pw_context_create(NULL, &ctx), PW_ERR_INVALID_ARGUMENT, NULL);
    CHECK(ctx == NULL && strstr(pw_last_create_message(), "sse9") != NULL, "message: %s",
          pw_last_create_message());
    o.ignore_env = 1;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    pw_context_destroy(ctx);
#if defined(__x86_64__)
    /* The lower of option and environment by the levels' order, not the enum's values
     * (PW_ISA_AVXVNNI = 8 sits between AVX2 = 2 and AVX512 = 3). */
    const uint32_t no_avx512 = PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI;
    o.ignore_env = 0;
    o.max_isa = PW_ISA_AVXVNNI;
    setenv("PACKWISE_ISA", "avx512", 1);
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    CHECK((pw_context_usable_features(ctx) & no_avx512) == 0,
          "max_isa avxvnni under PACKWISE_ISA=avx512 leaves AVX-512 (%x)", pw_context_usable_features(ctx));
    pw_context_destroy(ctx);
    o.max_isa = PW_ISA_AVX512;
    setenv("PACKWISE_ISA", "AVXVNNI", 1);
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    CHECK((pw_context_usable_features(ctx) & no_avx512) == 0,
          "PACKWISE_ISA=avxvnni under max_isa avx512 leaves AVX-512 (%x)", pw_context_usable_features(ctx));
    pw_context_destroy(ctx);
    o.max_isa = PW_ISA_AVXVNNI;
    setenv("PACKWISE_ISA", "avx2", 1);
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    CHECK((pw_context_usable_features(ctx) & PW_CPU_AVXVNNI) == 0,
          "max_isa avxvnni under PACKWISE_ISA=avx2 leaves AVX-VNNI");
    pw_context_destroy(ctx);
    o.max_isa = PW_ISA_NATIVE;
    o.ignore_env = 1;
#endif
    unsetenv("PACKWISE_ISA");
    pw_isa isa;
    CHECK_OK(pw_isa_from_name("avxvnni", &isa), NULL);
    CHECK(isa == PW_ISA_AVXVNNI && strcmp(pw_isa_name(isa), "avxvnni") == 0, "parse avxvnni");
    CHECK_OK(pw_isa_from_name("AVX512", &isa), NULL);
    CHECK(isa == PW_ISA_AVX512, "parse avx512");
    CHECK(pw_isa_from_name("x", &isa) == PW_ERR_INVALID_ARGUMENT, "parse junk");
    o.struct_size = 0;
    CHECK_STATUS(pw_context_create(&o, &ctx), PW_ERR_INVALID_ARGUMENT, NULL);
}

static void test_allocator_and_arena(void) {
    counting c = {0, 0};
    pw_context_options o;
    pw_context_options_init(&o);
    o.allocator.alloc = count_alloc;
    o.allocator.free = count_free;
    o.allocator.user = &c;
    o.threads = 1;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    pw_arena *a = NULL;
    CHECK_OK(pw_arena_create(ctx, &a), ctx);
    for (int i = 0; i < 100; ++i) {
        void *p = pw_arena_alloc(a, (size_t)(i * 13 + 1));
        CHECK(p != NULL && ((uintptr_t)p % 64) == 0, "allocation %d not 64-byte aligned", i);
        memset(p, 0xab, (size_t)(i * 13 + 1));
    }
    void *big = pw_arena_alloc(a, 3u << 20);
    CHECK(big != NULL && ((uintptr_t)big % 64) == 0, "big allocation");
    void *after = pw_arena_alloc(a, 100);
    CHECK(after != NULL, "allocation after a big one");
    CHECK(pw_arena_alloc(a, SIZE_MAX - 8) == NULL, "overflowing allocation returned memory");
    CHECK(strstr(pw_context_message(ctx), "overflow") != NULL, "message: %s", pw_context_message(ctx));
    uint64_t used = pw_arena_used(a);
    CHECK(used >= (3u << 20), "arena used %llu", (unsigned long long)used);
    pw_arena_reset(a);
    CHECK(pw_arena_used(a) == 0, "reset arena still counts bytes");
    pw_arena_destroy(a);
    pw_arena_destroy(NULL);
    pw_context_destroy(ctx);
    CHECK(c.allocs > 0 && c.allocs == c.frees, "allocator: %d allocs, %d frees", c.allocs, c.frees);
    pw_context_destroy(NULL);
}

static void test_trace_format(void) {
    char line[256];
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_ADAPTER;
    e.tensor = "blk.0.attn_q.weight";
    e.bytes = 9437184;
    e.from = "row_major";
    e.to = "input_block_major";
    size_t n = pw_trace_format(&e, line, sizeof line);
    CHECK(strcmp(line, "trace adapter tensor=blk.0.attn_q.weight bytes=9437184 from=row_major "
                       "to=input_block_major") == 0,
          "adapter line: %s", line);
    CHECK(n == strlen(line), "length %zu", n);
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_FALLBACK;
    e.kernel = "ref_q4_0";
    e.reason = "no kernel reads row_major q4_0";
    pw_trace_format(&e, line, sizeof line);
    CHECK(strcmp(line, "trace fallback kernel=ref_q4_0 reason=\"no kernel reads row_major q4_0\"") == 0,
          "fallback line: %s", line);
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_WARNING;
    e.tensor = "w";
    e.reason = "no kernel reads it";
    pw_trace_format(&e, line, sizeof line);
    CHECK(strcmp(line, "trace warning tensor=w reason=\"no kernel reads it\"") == 0, "warning line: %s",
          line);
    char small[10];
    n = pw_trace_format(&e, small, sizeof small);
    CHECK(n > sizeof small && strlen(small) == sizeof small - 1, "truncation");
}

int main(void) {
    test_status();
    test_isa_cap();
    test_allocator_and_arena();
    test_trace_format();
    return pw_test_finish();
}
