/* Checks shared by the GEMV tiling tests (tiling_test.h). */
#include "tiling_test.h"

#include "kernel_oracle.h"
#include "pw_test.h"

#include "format/blocks.h"
#if defined(__x86_64__)
#include "base/x86_tune.h"
#endif

int pw_test_tiling_report(const pw_test_tiling_record *rec) { return (*rec->bad)++ < 5; }

void pw_test_tiling_byte(const pw_test_tiling_record *rec, size_t at, int from, const char *name,
                         int index) {
    const uint8_t got = rec->rec[at], want = rec->src ? rec->src[from] : 0;
    if (got != want && pw_test_tiling_report(rec))
        CHECK(0, "%s: row %lld block %lld: %s %d is %02x, want %02x", rec->what,
              (long long)rec->row, (long long)rec->block, name, index, got, want);
}

/* A rows x in weight of t->format quantized from N(0, 1) floats; the caller frees *bytes. */
static void make_weight(pw_context *ctx, const pw_test_tiling *t, int64_t rows, int64_t in,
                        uint64_t seed, uint8_t **bytes, uint64_t *nbytes) {
    pw_rng r = {seed};
    float *w = malloc(sizeof(float) * (size_t)(rows * in));
    for (int64_t i = 0; i < rows * in; ++i) w[i] = (float)pw_rng_gauss(&r);
    const int64_t blocks = rows * in / t->block_elems;
    *nbytes = (uint64_t)blocks * t->block_bytes;
    *bytes = malloc((size_t)*nbytes);
    CHECK_OK(pw_format_quantize(ctx, t->format, w, (size_t)blocks, *bytes), ctx);
    free(w);
}

/* Pack view v and hand every record to t->check_record. */
static void check_pack(pw_context *ctx, const pw_test_tiling *t, const pw_view *v,
                       const char *what) {
    const int64_t out = v->shape[0], in = v->shape[1], nb = in / t->block_elems;
    pw__pack_desc d;
    CHECK_OK(t->plan(ctx, t->format, out, in, &d), ctx);
    const int64_t tiles = (out + t->nr - 1) / t->nr;
    CHECK(strcmp(d.family, t->family) == 0 && d.nr == t->nr && d.kr == t->kr &&
              d.group == t->group && d.tiles == tiles &&
              d.tile_bytes == (uint64_t)nb * t->record_bytes &&
              d.bytes == (uint64_t)(tiles * nb) * t->record_bytes,
          "%s: plan %s nr=%d kr=%d group=%d tiles=%lld tile_bytes=%llu bytes=%llu", what,
          d.family, (int)d.nr, (int)d.kr, (int)d.group, (long long)d.tiles,
          (unsigned long long)d.tile_bytes, (unsigned long long)d.bytes);
    uint8_t *p = malloc((size_t)d.bytes);
    memset(p, 0xA5, (size_t)d.bytes); /* the packer must write every byte */
    t->pack(&d, v, 0, out, p);
    int bad = 0;
    for (int64_t tile = 0; tile < tiles; ++tile) {
        for (int64_t b = 0; b < nb; ++b) {
            for (int r = 0; r < t->nr && bad < 5; ++r) {
                const int64_t o = tile * t->nr + r;
                const pw_test_tiling_record rec = {
                    .rec = p + (uint64_t)tile * d.tile_bytes + (uint64_t)b * t->record_bytes,
                    .r = r,
                    .src = o < out ? pw_view_block_ptr(v, o, b) : NULL,
                    .what = what,
                    .row = o,
                    .block = b,
                    .bad = &bad,
                };
                t->check_record(&rec);
            }
        }
    }
    /* A whole number of tiles holds exactly the file's bytes. */
    if (out % t->nr == 0)
        CHECK(d.bytes == (uint64_t)(out * nb) * t->block_bytes,
              "%s: %llu packed bytes for %llu file bytes", what, (unsigned long long)d.bytes,
              (unsigned long long)((uint64_t)(out * nb) * t->block_bytes));
    free(p);
}

void pw_test_tiling_layout(pw_context *ctx, const pw_test_tiling *t) {
    const int64_t be = t->block_elems;
    char what[64];
    uint8_t *bytes;
    uint64_t nbytes;
    make_weight(ctx, t, 37, 3 * be, 7, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {37, 3 * be};
    CHECK_OK(pw_view_init(ctx, &v, t->format, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes, nbytes), ctx);
    snprintf(what, sizeof what, "37x%lld", (long long)(3 * be));
    check_pack(ctx, t, &v, what);
    free(bytes);

    /* Rows [5, 5 + 64) and blocks [1, 4) of a 75 x 5-block weight: two whole tiles. */
    make_weight(ctx, t, 75, 5 * be, 8, &bytes, &nbytes);
    const int64_t wide[2] = {75, 5 * be};
    pw_view w, n;
    CHECK_OK(pw_view_init(ctx, &w, t->format, 2, wide, PW_LAYOUT_ROW_MAJOR, bytes, nbytes), ctx);
    CHECK_OK(pw_view_narrow(ctx, &w, 0, 5, 64, &n), ctx);
    CHECK_OK(pw_view_narrow(ctx, &n, 1, be, 3 * be, &n), ctx);
    snprintf(what, sizeof what, "narrowed 64x%lld", (long long)(3 * be));
    check_pack(ctx, t, &n, what);
    free(bytes);
}

void pw_test_tiling_refusals(pw_context *ctx, const pw_test_tiling *t) {
    const int64_t be = t->block_elems;
    pw__pack_desc d;
    CHECK_STATUS(t->plan(ctx, t->other, 32, be, &d), PW_ERR_UNSUPPORTED, ctx);
    CHECK_STATUS(t->plan(ctx, t->format, 32, be + be / 2, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(t->plan(ctx, t->format, 0, be, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(t->plan(ctx, t->format, (int64_t)1 << 40, (int64_t)1 << 40, &d),
                 PW_ERR_OVERFLOW, ctx);
}

/* What the trace said: the last kernel run, and the adapter (packing) events. */
typedef struct events {
    int adapters;
    char kernel[64], to[32];
    uint64_t bytes;
} events;

static void on_event(void *user, const pw_trace_event *e) {
    events *ev = user;
    if (e->kind == PW_TRACE_KERNEL) {
        snprintf(ev->kernel, sizeof ev->kernel, "%s", e->kernel);
    } else if (e->kind == PW_TRACE_ADAPTER) {
        ev->adapters++;
        ev->bytes = e->bytes;
        snprintf(ev->to, sizeof ev->to, "%s", e->to);
    }
}

void pw_test_tiling_dispatch(pw_context *base, const pw_test_tiling *t) {
    events ev;
    memset(&ev, 0, sizeof ev);
    pw_context_options o;
    pw_context_options_init(&o);
    o.max_isa = pw_context_isa(base); /* the level this test run forces (PACKWISE_ISA) */
    o.trace = on_event;
    o.trace_user = &ev;
    o.threads = 1;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    if (ctx == NULL) return;
    const pw__kernel *simd = pw_test_tiling_level_kernel(ctx, t->kernel_stem, "");
    pw_context_clear_message(ctx);

    enum { OUT = 37, NB = 3, N = 4 };
    const int64_t in = NB * t->block_elems;
    uint8_t *bytes;
    uint64_t nbytes;
    make_weight(ctx, t, OUT, in, 9, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {OUT, in};
    CHECK_OK(pw_view_init(ctx, &v, t->format, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes, nbytes), ctx);
    float *x = malloc(sizeof(float) * (size_t)(N * in)), *y = malloc(sizeof(float) * N * OUT);
    pw_rng r = {10};
    for (int64_t i = 0; i < N * in; ++i) x[i] = (float)pw_rng_gauss(&r);
    pw_weight *h = NULL;
    pw_weight_options wo;
    pw_weight_options_init(&wo);
    wo.policy = PW_MEMORY_FASTEST; /* the tiling for GEMV; for GEMM the family's or the
                                    * i8g form (below) */
    CHECK_OK(pw_weight_create(ctx, &v, &wo, &h), ctx);

    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    if (simd) {
        CHECK(strcmp(ev.kernel, simd->info.name) == 0, "GEMV chose %s, want %s", ev.kernel,
              simd->info.name);
        CHECK(ev.adapters == 1 && strcmp(ev.to, t->family) == 0 &&
                  ev.bytes == 2 * NB * t->record_bytes,
              "GEMV packing: %d adapters to %s, %llu bytes", ev.adapters, ev.to,
              (unsigned long long)ev.bytes);
    } else {
        CHECK(strstr(ev.kernel, t->family) == NULL, "GEMV chose %s at isa %s", ev.kernel,
              pw_isa_name(pw_context_isa(ctx)));
    }
    const int gemv_adapters = ev.adapters;
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    CHECK(ev.adapters == gemv_adapters, "second GEMV packed again");

    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    /* on x86, and on Arm for the formats whose family GEMM llvm-mca puts ahead
     * (t->arm_family_gemm: kernel.h, PW__PRIO_I8G_X86 and PW__PRIO_I8G_ARM_BELOW), the
     * family's GEMM kernel of the level, reading the GEMV's form: no new packing. Else,
     * where the context runs i8mm, the format's i8mm GEMM kernel, reading its own 8-row
     * family (<i8g stem>x8k8_i8mm); on Arm's dotprod level and at the scalar level the
     * level's i8g kernel. */
    const pw__kernel *i8mm = pw_test_tiling_level_kernel(ctx, t->i8g_stem, "x8k8");
    const int x86 = simd != NULL && strncmp(simd->info.isa, "avx", 3) == 0;
    const int arm_first = t->arm_family_gemm == PW_TEST_ARM_FAMILY_GEMM ||
                          (t->arm_family_gemm == PW_TEST_ARM_FAMILY_GEMM_DOTPROD && i8mm == NULL);
    const int family_first = x86 || (simd != NULL && arm_first);
    if (family_first) {
        const pw__kernel *gemm = pw_test_tiling_level_kernel(ctx, t->kernel_stem, "_gemm");
        CHECK(gemm != NULL && strcmp(ev.kernel, gemm->info.name) == 0 &&
                  ev.adapters == gemv_adapters,
              "GEMM (n = %d) chose %s, want %s (%d adapters, then %d)", N, ev.kernel,
              gemm ? gemm->info.name : "none", gemv_adapters, ev.adapters);
    } else {
        CHECK(strstr(ev.kernel, t->family) == NULL && strstr(ev.kernel, "i8g") != NULL,
              "GEMM (n = %d) chose %s", N, ev.kernel);
    }
    if (simd && !family_first) {
        /* the i8g kernel of the GEMV's level; an i8mm GEMV's (tile32_neon.h) is dotprod's,
         * the i8g family having no i8mm build (its i8mm GEMM is the x8k8 family's, below) */
        const pw__kernel *i8g = pw_test_tiling_level_kernel(ctx, t->i8g_stem, "");
        const char *level = strcmp(simd->info.isa, "i8mm") == 0 ? "dotprod" : simd->info.isa;
        CHECK(i8g != NULL && strcmp(i8g->info.isa, level) == 0,
              "no i8g kernel %s at the level of %s", t->i8g_stem, simd->info.name);
        const pw__kernel *want = i8mm ? i8mm : i8g;
        CHECK(want != NULL && strcmp(ev.kernel, want->info.name) == 0,
              "GEMM (n = %d) chose %s, want %s", N, ev.kernel, want ? want->info.name : "none");
    }
    const int gemm_adapters = ev.adapters;
    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    CHECK(ev.adapters == gemm_adapters, "steady state packed again (%d adapters, then %d)",
          gemm_adapters, ev.adapters);

    pw_weight_destroy(h);
    free(x);
    free(y);
    free(bytes);
    pw_context_destroy(ctx);
}

/* The highest-priority kernel usable in ctx that reads t's family and serves n rows of X. */
static const pw__kernel *family_best(const pw_context *ctx, const pw_test_tiling *t, int64_t n) {
    const pw__kernel *best = NULL;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.family == NULL || strcmp(k->info.family, t->family) != 0 || n < k->min_n ||
            !pw__kernel_usable(ctx, k))
            continue;
        if (best == NULL || k->priority > best->priority) best = k;
    }
    return best;
}

static const pw__kernel *by_name(pw_context *ctx, const char *name) {
    size_t idx = 0;
    return pw_kernel_find(ctx, name, &idx) == PW_OK ? pw__kernel_list_get(idx) : NULL;
}

const pw__kernel *pw_test_tiling_level_kernel(pw_context *ctx, const char *stem,
                                              const char *infix) {
    static const char *const levels[] = {"avx512vnni", "avxvnni", "avx2", "i8mm", "dotprod"};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; ++i) {
        char name[96];
        snprintf(name, sizeof name, "%s%s_%s", stem, infix, levels[i]);
        const pw__kernel *k = by_name(ctx, name);
        if (k != NULL && pw__kernel_usable(ctx, k)) return k;
    }
    pw_context_clear_message(ctx);
    return NULL;
}

void pw_test_tiling_family_kernels(pw_context *ctx, const pw_test_tiling *t) {
    char name[96];
    snprintf(name, sizeof name, "%s_scalar", t->kernel_stem);
    const pw__kernel *scalar = by_name(ctx, name);
    CHECK(scalar != NULL, "no portable kernel %s", name);
    const pw__kernel *simd = pw_test_tiling_level_kernel(ctx, t->kernel_stem, "");
    const pw__kernel *gemm = pw_test_tiling_level_kernel(ctx, t->kernel_stem, "_gemm");
    const pw__kernel *gemv_want = simd ? simd : scalar;
    pw_context_clear_message(ctx);
    const pw__kernel *got = family_best(ctx, t, 1);
    CHECK(got == gemv_want, "%s at n = 1 at isa %s: %s, want %s", t->family,
          pw_isa_name(pw_context_isa(ctx)), got ? got->info.name : "none",
          gemv_want ? gemv_want->info.name : "none");
    /* every family GEMM kernel in the list, usable here or not: its shape, and its rank
     * against the i8g kernel of its level: above it on x86 (PW__PRIO_I8G_X86: the
     * family's GEMM is as fast or faster there, from half the bytes or less),
     * below it on Arm (not timed on hardware) */
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        const size_t stem = strlen(t->kernel_stem);
        if (strncmp(k->info.name, t->kernel_stem, stem) != 0 ||
            strncmp(k->info.name + stem, "_gemm_", 6) != 0)
            continue;
        CHECK(k->min_n == 2 && k->info.tile_batch >= 2 && strcmp(k->info.family, t->family) == 0,
              "%s: min_n %d, tile_batch %d, family %s", k->info.name, (int)k->min_n,
              (int)k->info.tile_batch, k->info.family);
        snprintf(name, sizeof name, "%s_%s", t->i8g_stem, k->info.name + stem + 6);
        const pw__kernel *i8g = by_name(ctx, name);
        pw_context_clear_message(ctx);
        const int above = strncmp(k->info.isa, "avx", 3) == 0 ||
                          (strcmp(k->info.isa, "dotprod") == 0 && t->arm_family_gemm);
        CHECK(i8g != NULL && (above ? k->priority > i8g->priority : k->priority < i8g->priority),
              "%s ranks %d, not %s %s", k->info.name, (int)k->priority, above ? "above" : "below",
              name);
        /* and the format's i8mm kernel, where there is one, on the same side */
        if (strcmp(k->info.isa, "dotprod") == 0) {
            snprintf(name, sizeof name, "%sx8k8_i8mm", t->i8g_stem);
            const pw__kernel *mm = by_name(ctx, name);
            pw_context_clear_message(ctx);
            const int above_mm = t->arm_family_gemm == PW_TEST_ARM_FAMILY_GEMM;
            CHECK(mm == NULL || (above_mm ? k->priority > mm->priority : k->priority < mm->priority),
                  "%s ranks %d, not %s %s (%d)", k->info.name, (int)k->priority,
                  above_mm ? "above" : "below", name, mm ? (int)mm->priority : 0);
        }
    }
    const int64_t ns[2] = {2, 33};
    for (int j = 0; j < 2; ++j) {
        const pw__kernel *want = gemm ? gemm : gemv_want;
        got = family_best(ctx, t, ns[j]);
        CHECK(got == want, "%s at n = %lld at isa %s: %s, want %s", t->family, (long long)ns[j],
              pw_isa_name(pw_context_isa(ctx)), got ? got->info.name : "none",
              want ? want->info.name : "none");
    }
}

void pw_test_tiling_gemm_large(pw_context *base, const pw_test_tiling *t) {
    enum { OUT = 37, IN = 12288, N = 131 };
    pw_context_options o;
    pw_context_options_init(&o);
    o.max_isa = pw_context_isa(base);
    o.threads = 1;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    if (ctx == NULL) return;
    uint8_t *bytes;
    uint64_t nbytes;
    make_weight(ctx, t, OUT, IN, 11, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, t->format, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes, nbytes), ctx);
    float *x = malloc(sizeof(float) * (size_t)N * IN);
    pw_rng r = {12};
    for (int64_t i = 0; i < (int64_t)N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    int ran = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        const size_t stem = strlen(t->kernel_stem);
        if (strncmp(k->info.name, t->kernel_stem, stem) != 0 ||
            strncmp(k->info.name + stem, "_gemm_", 6) != 0 || !pw__kernel_usable(ctx, k))
            continue;
        pw_test_kernel_vs_oracle(ctx, k, &v, x, N, "one call, two passes");
        ++ran;
    }
    const pw__kernel *best = pw_test_tiling_level_kernel(ctx, t->kernel_stem, "_gemm");
    CHECK(ran > 0 || best == NULL, "%s ran no GEMM kernel", t->family);
    free(x);
    free(bytes);
    pw_context_destroy(ctx);
}

void pw_test_tiling_vs_oracle(pw_context *ctx, const pw_test_tiling *t, const uint8_t *bytes,
                              int64_t out, int64_t nb, int n_max, pw_rng *rng, const char *what) {
    const int64_t in = nb * t->block_elems;
    float *x = malloc(sizeof(float) * (size_t)(n_max * in));
    CHECK(x != NULL, "out of memory");
    if (x == NULL) return;
    for (int64_t i = 0; i < n_max * in; ++i) x[i] = (float)pw_rng_gauss(rng);
    pw_test_tiling_vs_oracle_x(ctx, t, bytes, out, nb, n_max, x, what);
    free(x);
}

void pw_test_tiling_vs_oracle_x(pw_context *ctx, const pw_test_tiling *t, const uint8_t *bytes,
                                int64_t out, int64_t nb, int n_max, const float *x,
                                const char *what) {
    const int64_t in = nb * t->block_elems;
    pw_view v;
    const int64_t shape[2] = {out, in};
    CHECK_OK(pw_view_init(ctx, &v, t->format, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes,
                          (uint64_t)(out * nb) * t->block_bytes),
             ctx);
    int ran = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.family == NULL || strcmp(k->info.family, t->family) != 0 ||
            !pw__kernel_usable(ctx, k))
            continue;
        pw_test_kernel_vs_oracle(ctx, k, &v, x, 1, what);
        pw_test_kernel_vs_oracle(ctx, k, &v, x, 3, what);
        pw_test_kernel_vs_oracle(ctx, k, &v, x, n_max, what);
#if defined(__x86_64__)
        /* The GEMVs' paths that depend on the core (base/x86_tune.h: on Zen 5 the
         * AVX-512 q4x-family GEMVs read eight records a group, others take other
         * streams or loads), the other way too: every core's path runs on any machine. */
        const int zen5 = __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED);
        __atomic_store_n(&pw__x86_zen5, !zen5, __ATOMIC_RELAXED);
        pw_test_kernel_vs_oracle(ctx, k, &v, x, 1, what);
        __atomic_store_n(&pw__x86_zen5, zen5, __ATOMIC_RELAXED);
#endif
        ++ran;
    }
    CHECK(ran >= 1, "no %s kernel ran (the portable one always can)", t->family);
}

uint8_t *pw_test_tiling_random_blocks(const pw_test_tiling *t, int64_t n, int scales, pw_rng *r) {
    const size_t bb = (size_t)t->block_bytes;
    uint8_t *bytes = malloc((size_t)n * bb);
    CHECK(bytes != NULL, "out of memory");
    for (int64_t k = 0; bytes != NULL && k < n; ++k) {
        uint8_t *blk = bytes + (size_t)k * bb;
        for (size_t i = 0; i < bb; ++i) blk[i] = (uint8_t)(pw_rng_next(r) >> 24);
        for (int j = 0; j < scales; ++j) {
            const uint16_t h = pw__f32_to_f16((float)(0.001 + 0.01 * pw_rng_uniform(r)));
            memcpy(blk + t->scales_at + 2 * j, &h, 2);
        }
    }
    return bytes;
}

void pw_test_tiling_at_block(pw_context *ctx, const pw_test_tiling *t, int64_t out, int64_t nb,
                             int n, const uint8_t *block, const char *what) {
    const size_t bb = (size_t)t->block_bytes;
    const int64_t in = nb * t->block_elems;
    uint8_t *bytes = malloc((size_t)(out * nb) * bb);
    float *x = malloc(sizeof(float) * (size_t)(n * in));
    CHECK(bytes != NULL && x != NULL, "out of memory");
    if (bytes != NULL && x != NULL) {
        for (int64_t k = 0; k < out * nb; ++k) memcpy(bytes + (size_t)k * bb, block, bb);
        for (int sign = -1; sign <= 1; sign += 2) {
            for (int64_t i = 0; i < n * in; ++i) x[i] = (float)sign;
            pw_test_tiling_vs_oracle_x(ctx, t, bytes, out, nb, n, x, what);
        }
    }
    free(x);
    free(bytes);
}

void pw_test_tiling_at_fill(pw_context *ctx, const pw_test_tiling *t, int64_t out, int64_t nb,
                            int n, int scales, uint8_t fill) {
    uint8_t *blk = malloc((size_t)t->block_bytes);
    if (blk == NULL) { /* a check only when it fails: at_block counts the allocations */
        CHECK(0, "out of memory");
        return;
    }
    const uint16_t d = pw__f32_to_f16(0.001f), zero = 0;
    memset(blk, fill, (size_t)t->block_bytes);
    memcpy(blk + t->scales_at, &d, 2);
    for (int j = 1; j < scales; ++j) memcpy(blk + t->scales_at + 2 * j, &zero, 2);
    char what[64];
    snprintf(what, sizeof what, "at the bounds (0x%02X)", fill);
    pw_test_tiling_at_block(ctx, t, out, nb, n, blk, what);
    free(blk);
}

void pw_test_tiling_random_widths(pw_context *ctx, const pw_test_tiling *t, int scales,
                                  uint64_t seed, const int64_t *nbs, int count) {
    enum { OUT = 45, N = 13 };
    pw_rng r = {seed};
    for (int c = 0; c < count; ++c) {
        uint8_t *bytes = pw_test_tiling_random_blocks(t, OUT * nbs[c], scales, &r);
        pw_test_tiling_vs_oracle(ctx, t, bytes, OUT, nbs[c], N, &r, "random blocks");
        free(bytes);
    }
}

void pw_test_tiling_random(pw_context *ctx, const pw_test_tiling *t, int scales, uint64_t seed) {
    const int64_t nb = 3;
    pw_test_tiling_random_widths(ctx, t, scales, seed, &nb, 1);
}

void pw_test_tiling_at_bounds(pw_context *ctx, const pw_test_tiling *t, int64_t out, int64_t nb,
                              int n, int scales) {
    pw_test_tiling_at_fill(ctx, t, out, nb, n, scales, 0xFF);
}

int pw_test_tiling_avx512(pw_context *ctx) {
    const uint32_t need = PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI;
#if defined(__x86_64__)
    return (pw_context_usable_features(ctx) & need) == need;
#else
    (void)ctx;
    (void)need;
    return 0;
#endif
}

void pw_test_tiling_record_maker(pw_context *ctx, const pw_test_tiling *t, int scales,
                                 void (*make)(const uint8_t *src, uint8_t *rec), const char *name) {
    enum { OUT = 45, NB = 2 };
    const size_t bb = (size_t)t->block_bytes, rb = (size_t)t->record_bytes;
    pw_rng r = {29};
    uint8_t *bytes = pw_test_tiling_random_blocks(t, OUT * NB, scales, &r);
    uint8_t *src = calloc((size_t)t->nr, bb), *rec = aligned_alloc(64, (rb + 63) / 64 * 64);
    pw_view v;
    const int64_t shape[2] = {OUT, NB * t->block_elems};
    CHECK_OK(pw_view_init(ctx, &v, t->format, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes,
                          (uint64_t)(OUT * NB) * bb),
             ctx);
    pw__pack_desc d;
    CHECK_OK(t->plan(ctx, t->format, OUT, shape[1], &d), ctx);
    uint8_t *packed = malloc((size_t)d.bytes);
    CHECK(packed != NULL && src != NULL && rec != NULL, "out of memory");
    if (packed != NULL && src != NULL && rec != NULL) {
        t->pack(&d, &v, 0, OUT, packed);
        for (int tile = 0; tile * t->nr < OUT; ++tile) {
            for (int b = 0; b < NB; ++b) {
                memset(src, 0, (size_t)t->nr * bb);
                for (int row = 0; row < t->nr && tile * t->nr + row < OUT; ++row)
                    memcpy(src + (size_t)row * bb,
                           bytes + ((size_t)(tile * t->nr + row) * NB + (size_t)b) * bb, bb);
                memset(rec, 0x5A, rb);
                make(src, rec);
                const uint8_t *want = packed + (uint64_t)tile * d.tile_bytes + (uint64_t)b * rb;
                size_t first = rb;
                for (size_t i = 0; i < rb && first == rb; ++i)
                    if (rec[i] != want[i]) first = i;
                CHECK(first == rb, "%s: tile %d block %d: byte %zu is 0x%02x, the packer's 0x%02x",
                      name, tile, b, first, first < rb ? rec[first] : 0, first < rb ? want[first] : 0);
            }
        }
    }
    free(packed);
    free(rec);
    free(src);
    free(bytes);
}

void pw_test_tiling_packing(pw_context *ctx, const pw_test_tiling *t, int scales,
                            pw_test_tiling_maker make, const char *make_name,
                            pw_test_tiling_maker make_avx512, const char *avx512_name) {
    pw_test_tiling_layout(ctx, t);
    pw_test_tiling_refusals(ctx, t);
    pw_test_tiling_record_maker(ctx, t, scales, make, make_name);
    if (make_avx512 != NULL && pw_test_tiling_avx512(ctx))
        pw_test_tiling_record_maker(ctx, t, scales, make_avx512, avx512_name);
}

void pw_test_tiling_kernels(pw_context *ctx, const pw_test_tiling *t) {
    pw_test_tiling_dispatch(ctx, t);
    pw_test_tiling_family_kernels(ctx, t);
    pw_test_tiling_gemm_large(ctx, t);
}

/* Value e of row r (0..31) of a q2kx32k4 record: sub-block s, step u, lane j; step u in
 * load u % 2 of the sub-block, in its low 2 bits for u < 2, the next 2 for u >= 2; rows
 * 16..31 the high nibble (kernel/q2kx.h). */
static int q2kx_value(const uint8_t *rec, int r, int e) {
    const int s = e / 16, u = e % 16 / 4, j = e % 4;
    const uint8_t byte = rec[128 * s + 64 * (u & 1) + 4 * (r % 16) + j];
    const int nibble = r < 16 ? byte & 15 : byte >> 4;
    return u < 2 ? nibble & 3 : nibble >> 2;
}

void pw_test_tiling_q2_values(const pw_test_tiling_record *item, size_t qs_at, const char *name) {
    int q[256] = {0};
    if (item->src) {
        const uint8_t *qs = item->src + qs_at;
        for (int h = 0; h < 2; ++h)
            for (int l = 0; l < 32; ++l)
                for (int g = 0; g < 4; ++g) q[128 * h + 32 * g + l] = qs[32 * h + l] >> (2 * g) & 3;
    }
    for (int e = 0; e < 256; ++e) {
        const int got = q2kx_value(item->rec, item->r, e);
        if (got != q[e] && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld value %d: %s %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, e, name, got, q[e]);
    }
}
