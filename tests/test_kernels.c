/*
 * Every kernel in the list against the reference, on shapes derived from its
 * block and tile sizes (XNNPACK style): in = 1, 2, 3 and 7 blocks; out = 1,
 * nr-1, nr, nr+1, 2nr+3 and 37; n = 1, 2, mr-1, mr, mr+1 and 33; plus
 * narrowed and offset views, and a tall weight for the input-block-major kernels. Runs under each PACKWISE_ISA level (ctest):
 * at native (or PACKWISE_ISA unset) every kernel the CPU can run, with the activations
 * quantized as the context's top level does; at a forced level only that level's own
 * kernels (their isa names it: "avx2" at avx2, "avx512vnni" at avx512, "scalar" at
 * scalar, ...), with its own quantizer. So every kernel runs at the top level and at its
 * own, and no run repeats the lower levels' kernels (under qemu each of those repeats
 * cost about two minutes). A forced level with no kernel of its own (sme) checks every
 * usable kernel, as native does.
 *
 * Oracle: the weight decoded by the format's decoder and the activations as
 * the kernel really sees them (quantized by the kernel's activation form and
 * dequantized back), multiplied in double. Integer products inside a group
 * are exact, so the only error is f32 rounding of at most in/16 scaled group
 * terms plus the final sum: |y - ref| <= 1e-5 * sum_k |w_k x_k| + 1e-30
 * (eps_f32 * 64 terms ~ 7.6e-6, rounded up).
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"

#include "format/format_internal.h"
#include "kernel/kernel.h"

static int g_cases, g_kernels, g_other_level;
/* The forced level whose kernels alone are checked (pw_test_forced_level); NULL: all. */
static const char *g_level;

/* The Gaussians every case draws from, made once: a window of them per seed. Drawn
 * afresh per case they were about 40% of this test's time (cos and log in Box-Muller),
 * and quantizing the same weights again for every kernel of a format another 35% (the
 * K-quant quantizers' searches); under qemu the test took about two minutes a level.
 * Windows at different seeds overlap, but each case is checked against its own oracle. */
enum { POOL = 1 << 20 };
static float *g_pool;

/* count N(0, 1) values for seed: a window of the pool. The largest asked for is a tall
 * weight's 251 x 768 (make_weight), well inside half the pool. */
static float *gauss_values(uint64_t seed, size_t count, float scale) {
    REQUIRE(count <= POOL / 2, "%zu Gaussians asked for, the pool gives up to %d", count, POOL / 2);
    float *v = malloc(sizeof(float) * (count ? count : 1));
    REQUIRE(v != NULL, "malloc");
    if (g_pool == NULL) {
        g_pool = malloc(sizeof(float) * POOL);
        REQUIRE(g_pool != NULL, "malloc");
        pw_rng r = {12345};
        for (size_t i = 0; i < POOL; ++i) g_pool[i] = (float)pw_rng_gauss(&r);
    }
    const size_t at = (size_t)((seed * 0x9E3779B97F4A7C15ull) >> 40) % (POOL - count + 1);
    for (size_t i = 0; i < count; ++i) v[i] = g_pool[at + i] * scale;
    return v;
}

/* Quantized weights already made, by format, shape and seed: kernels of one format
 * (and one tiling) ask for the same ones. */
typedef struct made_weight {
    pw_format f;
    int64_t rows, in;
    uint64_t seed, nbytes;
    unsigned char *bytes;
    struct made_weight *next;
} made_weight;
static made_weight *g_made;

/* Weights taller than 4 * TALL_PERIOD rows (the input-block-major kernels' tall cases)
 * repeat their first TALL_PERIOD rows: a prime, so that no pass of 256 or 8192 rows lines
 * up with the repeat (a kernel that read row r + 256 or r + 8192 for row r still fails),
 * and every row's output is still checked against the oracle. Quantizing up to 3.2
 * million values per format with the K-quant searches was two thirds of this test's
 * time under qemu (32 of 49 s at dotprod). */
enum { TALL_PERIOD = 251 };

/* rows x in Gaussian weights (scale 0.05) in format f, a copy the caller frees. */
static void make_weight(pw_context *ctx, pw_format f, int64_t rows, int64_t in, uint64_t seed,
                        unsigned char **bytes, uint64_t *nbytes) {
    made_weight *m = g_made;
    while (m != NULL && !(m->f == f && m->rows == rows && m->in == in && m->seed == seed)) m = m->next;
    if (m == NULL) {
        const pw_format_info *fi = pw_format_get(f);
        const int64_t made = rows > 4 * TALL_PERIOD ? TALL_PERIOD : rows;
        const size_t row_bytes = (size_t)(in / fi->block_size) * fi->block_bytes;
        float *x = gauss_values(seed, (size_t)(made * in), 0.05f);
        m = malloc(sizeof *m);
        REQUIRE(m != NULL, "malloc");
        *m = (made_weight){f, rows, in, seed, (uint64_t)rows * row_bytes, NULL, g_made};
        m->bytes = malloc((size_t)m->nbytes);
        REQUIRE(m->bytes != NULL, "malloc");
        CHECK_OK(pw_format_quantize(ctx, f, x, (size_t)(made * in / fi->block_size), m->bytes), ctx);
        for (int64_t r = made; r < rows; ++r)
            memcpy(m->bytes + (size_t)r * row_bytes, m->bytes + (size_t)(r % made) * row_bytes, row_bytes);
        free(x);
        g_made = m;
    }
    *nbytes = m->nbytes;
    *bytes = malloc((size_t)m->nbytes);
    REQUIRE(*bytes != NULL, "malloc");
    memcpy(*bytes, m->bytes, (size_t)m->nbytes);
}

static void free_made(void) {
    while (g_made != NULL) {
        made_weight *next = g_made->next;
        free(g_made->bytes);
        free(g_made);
        g_made = next;
    }
    free(g_pool);
}

/* Run kernel k on view w (forced by name) with Gaussian X and compare with the oracle. */
static void check_case(pw_context *ctx, const pw__kernel *k, const pw_view *w, int64_t n,
                       uint64_t seed, const char *what) {
    const int64_t in = w->shape[1];
    float *x = gauss_values(seed, (size_t)(n * in), 1.0f);
    pw_test_kernel_vs_oracle(ctx, k, w, x, n, what);
    ++g_cases;
    free(x);
}

static void check_kernel(pw_context *ctx, const pw__kernel *k) {
    if (!pw_test_at_level(g_level, k)) {
        ++g_other_level;
        return;
    }
    const pw_format f = k->info.format;
    const pw_format_info *fi = pw_format_get(f);
    const int64_t nr = k->info.tile_rows > 0 ? k->info.tile_rows : 1;
    const int64_t mr = k->info.tile_batch > 0 ? k->info.tile_batch : 1;
    /* Activations in blocks of 256 need in to be a multiple of 256. */
    int64_t unit = fi->block_size;
    const int64_t abs_ = pw__act_block_size(k->info.activation);
    if (abs_ > unit) unit = abs_;
    if (fi->block_size == 1) unit = abs_ > 16 ? abs_ : 16; /* float formats: 16-wide "blocks" */
    const int64_t in_blocks[] = {1, 2, 3, 7};
    const int64_t outs[] = {1, nr - 1, nr, nr + 1, 2 * nr + 3, 37};
    const int64_t ns[] = {1, 2, mr - 1, mr, mr + 1, 33};
    uint64_t seed = 1;
    for (size_t a = 0; a < 4; ++a) {
        const int64_t in = in_blocks[a] * unit;
        for (size_t b = 0; b < 6; ++b) {
            const int64_t out = outs[b];
            if (out < 1) continue;
            unsigned char *bytes;
            uint64_t nb;
            make_weight(ctx, f, out, in, seed++, &bytes, &nb);
            pw_view w;
            pw_test_view_for(ctx, k->info.layout, f, out, in, bytes, nb, &w);
            for (size_t c = 0; c < 6; ++c) {
                if (ns[c] < 1 || (c > 0 && ns[c] == ns[c - 1])) continue;
                check_case(ctx, k, &w, ns[c], seed++, "dense");
            }
            free(bytes);
        }
    }
    /* Rows of three 256-value groups (24 blocks of 32): kernels that read eight records at
     * a time where a row is a multiple of 256 long (q4x_avx512.c on Zen 5) take that path
     * only here among the shapes above. */
    if (unit < 256 && 256 % unit == 0) {
        const int64_t in = 768, out = 2 * nr + 3;
        unsigned char *bytes;
        uint64_t nb;
        make_weight(ctx, f, out, in, seed++, &bytes, &nb);
        pw_view w;
        pw_test_view_for(ctx, k->info.layout, f, out, in, bytes, nb, &w);
        check_case(ctx, k, &w, 1, seed++, "groups");
        check_case(ctx, k, &w, 2, seed++, "groups");
        free(bytes);
    }
    /* Narrowed and offset view: rows [3, 3+nr+2) and blocks [1, 4) of a wider weight. */
    {
        const int64_t rows = nr + 9, in = 5 * unit;
        unsigned char *bytes;
        uint64_t nb;
        make_weight(ctx, f, rows, in, 999, &bytes, &nb);
        pw_view w, v;
        pw_test_view_for(ctx, k->info.layout, f, rows, in, bytes, nb, &w);
        CHECK_OK(pw_view_narrow(ctx, &w, 0, 3, nr + 2, &v), ctx);
        CHECK_OK(pw_view_narrow(ctx, &v, 1, unit, 3 * unit, &v), ctx);
        check_case(ctx, k, &v, 1, 5, "narrowed");
        check_case(ctx, k, &v, mr + 1, 6, "narrowed");
        free(bytes);
    }
    /* Float formats (one element a block): lengths that are no multiple of a vector step
     * and a view narrowed to an odd element, so each kernel's tail and unaligned loads run
     * (the shapes above are whole multiples of 16 elements). */
    if (fi->block_size == 1) {
        const int64_t ins[] = {5, 37, 83};
        for (size_t a = 0; a < 3; ++a) {
            unsigned char *bytes;
            uint64_t nb;
            make_weight(ctx, f, nr + 2, ins[a], seed++, &bytes, &nb);
            pw_view w;
            pw_test_view_for(ctx, k->info.layout, f, nr + 2, ins[a], bytes, nb, &w);
            check_case(ctx, k, &w, 1, seed++, "tail");
            check_case(ctx, k, &w, mr + 1, seed++, "tail");
            free(bytes);
        }
        unsigned char *bytes;
        uint64_t nb;
        make_weight(ctx, f, nr + 4, 96, 555, &bytes, &nb);
        pw_view w, v;
        pw_test_view_for(ctx, k->info.layout, f, nr + 4, 96, bytes, nb, &w);
        CHECK_OK(pw_view_narrow(ctx, &w, 0, 1, nr + 2, &v), ctx);
        CHECK_OK(pw_view_narrow(ctx, &v, 1, 3, 53, &v), ctx);
        check_case(ctx, k, &v, 1, 556, "tail narrowed");
        check_case(ctx, k, &v, mr + 1, 557, "tail narrowed");
        free(bytes);
    }
    /* Input-block-major kernels read a column of many rows at a time: over a whole
     * task's rows (one call of all rows on one thread), or in passes of 8192 rows
     * (AVX-512 Q4_0/IQ4_NL groups, rm_q32_avx512.c) or 256 (rm_avx2.h). For 32-wide
     * blocks 8203 rows make a whole 8192-row pass and a short one of 11 rows (two quads
     * and a part quad); the others take 4133 (16 passes of 256 and a short one). */
    if (k->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR) {
        const int64_t rows = unit == 32 ? 8203 : 4133, in = 3 * unit;
        unsigned char *bytes;
        uint64_t nb;
        make_weight(ctx, f, rows, in, 777, &bytes, &nb);
        pw_view w;
        pw_test_view_for(ctx, k->info.layout, f, rows, in, bytes, nb, &w);
        CHECK_OK(pw_context_set_threads(ctx, 1), ctx);
        check_case(ctx, k, &w, 1, 7, "tall");
        check_case(ctx, k, &w, 3, 8, "tall");
        CHECK_OK(pw_context_set_threads(ctx, 0), ctx);
        free(bytes);
    }
    ++g_kernels;
}

/* Every key is the one macro's spelling of the descriptor's own fields: rebuilt here
 * from them, so a key and its kernel cannot disagree (and no key is spelled by hand). */
static void check_keys(void) {
    int checked = 0;
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        char fmt[16] = "qc4w", layout[64], want[160];
        if (k->kind == PW_WEIGHT_QB4W) snprintf(fmt, sizeof fmt, "qb4w");
        if (k->kind == PW_WEIGHT_BLOCKS) {
            const char *name = pw_format_get(k->format)->name;
            size_t j = 0;
            for (; name[j] && j + 1 < sizeof fmt; ++j)
                fmt[j] = (char)(name[j] >= 'A' && name[j] <= 'Z' ? name[j] - 'A' + 'a' : name[j]);
            fmt[j] = '\0';
        }
        if (k->is_reference) snprintf(layout, sizeof layout, "any_layout");
        else if (k->layout == PW_LAYOUT_PACKED) snprintf(layout, sizeof layout, "packed(%s)", k->family);
        else if (k->layout == PW_LAYOUT_BLOCKED_ROW_MAJOR) snprintf(layout, sizeof layout, "row_major");
        else if (k->layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR) snprintf(layout, sizeof layout, "input_block_major");
        else snprintf(layout, sizeof layout, "row_tiled_%d", (int)k->tile_rows);
        const char *act = k->activation == PW_ACT_Q8_32    ? "f32->q8_32"
                          : k->activation == PW_ACT_Q8_256 ? "f32->q8_256"
                          : k->activation == PW_ACT_QD8    ? "f32->qd8"
                                                           : "f32";
        snprintf(want, sizeof want, "matmul_wt:%s/%s x %s -> f32 :%s", fmt, layout, act, k->isa);
        CHECK(strcmp(k->key, want) == 0, "kernel %s: key '%s', its fields say '%s'", k->name, k->key, want);
        ++checked;
    }
    CHECK(checked > 0, "no kernel");
}

#if defined(__x86_64__)
#include "base/x86_tune.h"

/* Kernels whose code path depends on the CPU vendor (pw__x86_intel: the AVX-512 Q6_K
 * GEMV's stream count, the AVX-512 K-quant GEMMs' scale step in f32 or int32), checked
 * again with the flag flipped so that both paths run on any machine. */
static void check_vendor_kernel(pw_context *ctx, const pw__kernel *k) {
    if (strstr(k->info.name, "q2kx32k4") != NULL || strstr(k->info.name, "q3kx32k4") != NULL ||
        strstr(k->info.name, "q4kx32k4") != NULL ||
        strstr(k->info.name, "q5kx32k4") != NULL || strstr(k->info.name, "q6kx32k4") != NULL)
        check_kernel(ctx, k);
}

/* Kernels whose code path depends on per-core settings (base/x86_tune.h): on Zen 5
 * (pw__x86_zen5) the AVX2 and AVX-VNNI Q6_K GEMV's stream count, the AVX-VNNI Q4_K and
 * Q6_K GEMVs' activation loads and the AVX-512 input-block-major Q4_0/IQ4_NL GEMV's
 * column count; on Zen 4 (pw__x86_hw_streams) the
 * latter's Q4_0/IQ4_NL/Q8_0 prefetch distance over long runs, none for Q8_0 (elsewhere
 * these settings change prefetches alone). Each setting is flipped in
 * turn and its kernels checked again, so that every core's path runs on any machine
 * (the tests run on whatever CPU CI has). */
static const char *g_core_kernels; /* the flipped setting's kernels, '|'-separated names */

/* 1 when name is one of the '|'-separated names in list. */
static int listed(const char *list, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, '|');
        const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p += len + (end != NULL);
    }
    return 0;
}

static void check_core_kernel(pw_context *ctx, const pw__kernel *k) {
    if (listed(g_core_kernels, k->info.name)) check_kernel(ctx, k);
}

/* Every name in list names a kernel of this build (usable here or not), so that a
 * renamed kernel cannot drop out of the flipped checks unnoticed. */
static void check_listed_exist(const char *list) {
    int found = 0, names = 1;
    for (const char *p = list; *p != '\0'; ++p) names += *p == '|';
    for (size_t i = 0; i < pw_kernel_count(); ++i) found += listed(list, pw_kernel_info_get(i)->name);
    CHECK(found == names, "per-core kernels '%s': %d of %d names are kernels", list, found, names);
}
#endif

int main(void) {
    check_keys();
    pw_context *ctx = pw_test_context();
    g_level = pw_test_forced_level(ctx, PW_WEIGHT_BLOCKS);
    const int skipped = pw_test_each_usable_kernel(ctx, check_kernel);
#if defined(__x86_64__)
    const int vendor = pw__x86_intel;
    pw__x86_intel = !vendor;
    (void)pw_test_each_usable_kernel(ctx, check_vendor_kernel);
    pw__x86_intel = vendor;
    const char *const q32_ibm = "q4_0_ibm_avx512vnni|iq4_nl_ibm_avx512vnni|q8_0_ibm_avx512vnni";
    const struct {
        int *setting;
        const char *kernels;
    } core[] = {{&pw__x86_zen5, "q6_k_q6kx32k4_avx2|q6_k_q6kx32k4_avxvnni|q4_k_q4kx32k4_avxvnni|"
                                "q4_0_ibm_avx512vnni|iq4_nl_ibm_avx512vnni"},
                {&pw__x86_hw_streams, q32_ibm}};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; ++i) {
        const int saved = __atomic_load_n(core[i].setting, __ATOMIC_RELAXED);
        __atomic_store_n(core[i].setting, !saved, __ATOMIC_RELAXED);
        check_listed_exist(core[i].kernels);
        g_core_kernels = core[i].kernels;
        (void)pw_test_each_usable_kernel(ctx, check_core_kernel);
        __atomic_store_n(core[i].setting, saved, __ATOMIC_RELAXED);
    }
#endif
    CHECK(g_kernels > 0, "no kernel checked at isa %s", pw_isa_name(pw_context_isa(ctx)));
    printf("%d kernels checked on %d cases, %d not usable at isa %s, %d checks of lower levels' "
           "kernels left to their own runs\n",
           g_kernels, g_cases, skipped, pw_isa_name(pw_context_isa(ctx)), g_other_level);
    pw_context_destroy(ctx);
    free_made();
    return pw_test_finish();
}
