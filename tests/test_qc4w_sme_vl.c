/*
 * The streaming vector length is part of an SME family's identity
 * (kernel/arm/qc4w_gemm_sme.c): a packed buffer or a cache entry made at one
 * length is refused at another, with a message naming both lengths, and
 * through a cache the weight is packed again, with a trace event saying why.
 *
 *   (no arguments)  any machine; without SME the test says so and passes.
 *                   A buffer packed for the family of another length is
 *                   refused by the usable SME kernel, naming both lengths.
 *                   And mode 0 of the tile (whole panels, UZP1/UZP2 of two
 *                   panel vectors), which the kernel runs only where the
 *                   outer product is the architecture's, against a model of
 *                   the MOPA this machine has: the architecture's, or qemu
 *                   7.2's pairwise one (lane 2r+e of the rows with column
 *                   2c+e, into ZA row 2r). Every row's lane meets the
 *                   channels of one parity there, so the panel pairing is
 *                   checked under emulation too.
 *   write PATH      (tests/sme.cmake: qemu at 256 bits) packs the weight
 *                   through a cache, saves the cache file to PATH and a
 *                   packed buffer to PATH.packed.
 *   read PATH       (qemu at 512 bits) the buffer is refused naming 256 and
 *                   512 bits; the cache file's entry is not used (trace
 *                   event: miss, packed and stored, naming both families)
 *                   and the outputs equal the portable kernel's bit for bit.
 */
// pw-test: once
#include "pw_test.h"

#include "kernel/kernel.h"
#include "kernel/qc4w.h"

enum { N = 75, K = 200, B = 21 };

static uint8_t nibbles[N * ((K + 1) / 2)];
static float scale[N], bias[N], x[B * K];

typedef struct events {
    char kernel[128];
    char cache[512];
    int caches;
} events;

static void on_event(void *user, const pw_trace_event *e) {
    events *ev = user;
    if (e->kind == PW_TRACE_KERNEL && e->kernel != NULL)
        snprintf(ev->kernel, sizeof ev->kernel, "%s", e->kernel);
    if (e->kind == PW_TRACE_CACHE && e->reason != NULL) {
        snprintf(ev->cache, sizeof ev->cache, "%s", e->reason);
        ev->caches++;
    }
}

static void weights_init(pw_qc4w_weights *w) {
    pw_qc4w_weights_init(w);
    w->out = N;
    w->in = K;
    w->data = nibbles;
    w->scale = scale;
    w->bias = bias;
    w->name = "fc";
}

static void run_op(pw_context *ctx, pw_cache *cache, float *y) {
    pw_qc4w_weights w;
    weights_init(&w);
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.cache = cache;
    pw_weight *op = NULL;
    CHECK_OK(pw_weight_create_qc4w(ctx, &w, &o, &op), ctx);
    if (op != NULL) CHECK_OK(pw_matmul_wt(ctx, x, B, op, y), ctx);
    pw_weight_destroy(op);
}

static const pw__kernel *sme_kernel(int32_t bytes) {
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.kind == PW_WEIGHT_QC4W && k->sme_bytes == bytes) return k;
    }
    return NULL;
}

/* The usable kernel refuses a buffer described as packed by `other`, naming both lengths. */
static void refuse_buffer(pw_context *ctx, const pw__kernel *mine, const pw__kernel *other) {
    pw__pack_desc d;
    CHECK_OK(other->pack_plan(ctx, other, PW_FORMAT_COUNT, N, K, &d), ctx);
    const pw_status st = pw__kernel_check_family(ctx, mine, &d);
    char want_mine[32], want_other[32];
    snprintf(want_mine, sizeof want_mine, "%d-bit", 8 * (int)mine->sme_bytes);
    snprintf(want_other, sizeof want_other, "%d bits", 8 * (int)other->sme_bytes);
    const char *msg = pw_context_message(ctx);
    CHECK(st == PW_ERR_FAMILY && strstr(msg, want_mine) && strstr(msg, want_other),
          "%s given %s's buffer: status %d, message '%s'", mine->info.name, other->info.family,
          (int)st, msg);
    printf("refused: %s\n", msg);
}

#if defined(__aarch64__)
/* Signed value k (0..7) of channel c in a kr = 8, sr = 2 chunk. */
static int chunk_value(const uint8_t *chunk, int32_t c, int k) {
    const uint8_t b = chunk[4 * c + k % 4];
    return ((k < 4 ? b & 15 : b >> 4) ^ 8) - 8;
}

/* Mode 0 over 3 chunks of random bytes against the model of this machine's MOPA. */
static void tile_mode0(int32_t svl) {
    const int32_t rows = svl / 4, nr = svl;
    const int form = pw__qc4w_sme_mopa_form(svl);
    REQUIRE(form == 1 || form == 2, "no usable outer product here (form %d)", form);
    enum { CHUNKS = 3 };
    uint8_t *w = malloc((size_t)(CHUNKS * 4 * svl)), *a = malloc((size_t)(CHUNKS * 2 * svl));
    int32_t *acc = malloc(sizeof(int32_t) * (size_t)(rows * nr));
    pw_rng r = {77};
    for (int32_t i = 0; i < CHUNKS * 4 * svl; ++i) w[i] = (uint8_t)pw_rng_next(&r);
    for (int32_t i = 0; i < CHUNKS * 2 * svl; ++i) a[i] = (uint8_t)pw_rng_next(&r);
    pw__qc4w_sme_tile(w, a, CHUNKS, acc, rows, 0);
    int bad = 0;
    for (int32_t i = 0; i < rows; ++i)
        for (int32_t c = 0; c < nr; ++c) {
            /* The architecture: row i with channel c. qemu 7.2: ZA row 2r holds lane
             * 2r + (c & 1) with channel c; odd ZA rows stay zero. */
            const int32_t lane = form == 1 ? i : i + (c & 1);
            int32_t want = 0;
            if (form == 1 || i % 2 == 0)
                for (int j = 0; j < CHUNKS; ++j)
                    for (int k = 0; k < 8; ++k)
                        want += a[j * 2 * svl + 8 * lane + k] * chunk_value(w + j * 4 * svl, c, k);
            if (acc[i * nr + c] != want && bad++ < 3)
                CHECK(0, "mode 0 at %d bits (MOPA form %d): ZA row %d, channel %d: %d, model %d",
                      8 * (int)svl, form, (int)i, (int)c, (int)acc[i * nr + c], (int)want);
        }
    printf("mode 0 at %d bits against the %s MOPA: %d of %d sums differ\n", 8 * (int)svl,
           form == 1 ? "architecture's" : "pairwise (qemu 7.2)", bad, (int)(rows * nr));
    free(w);
    free(a);
    free(acc);
}
#endif

static pw_context *context(events *ev, pw_isa isa) {
    pw_context_options co;
    pw_context_options_init(&co);
    co.trace = on_event;
    co.trace_user = ev;
    co.max_isa = isa;
    co.threads = 1;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&co, &ctx), NULL);
    return ctx;
}

int main(int argc, char **argv) {
    pw_rng r = {19};
    for (size_t i = 0; i < sizeof nibbles; ++i) nibbles[i] = (uint8_t)pw_rng_next(&r);
    for (int i = 0; i < N; ++i) {
        scale[i] = 0.01f + 0.001f * (float)i;
        bias[i] = 0.1f * (float)(i % 7) - 0.3f;
    }
    for (int i = 0; i < B * K; ++i) x[i] = (float)pw_rng_gauss(&r);
    events ev;
    memset(&ev, 0, sizeof ev);
    pw_context *ctx = context(&ev, PW_ISA_NATIVE);
    REQUIRE(ctx != NULL, "no context");
    const int32_t svl = pw_context_sme_vector_bytes(ctx);
    const pw__kernel *mine = sme_kernel(svl);
    if (argc < 3) {
        if (svl == 0 || mine == NULL) {
            printf("skipped: no SME here (or not at this ISA level)\n");
        } else {
            const pw__kernel *other = sme_kernel(svl == 32 ? 64 : 32);
            REQUIRE(other != NULL, "no SME family of another length");
            refuse_buffer(ctx, mine, other);
#if defined(__aarch64__)
            tile_mode0(svl);
#endif
        }
        pw_context_destroy(ctx);
        return pw_test_finish();
    }
    const int writing = strcmp(argv[1], "write") == 0;
    REQUIRE(writing || strcmp(argv[1], "read") == 0, "usage: test_qc4w_sme_vl [write|read PATH]");
    const int32_t want_svl = writing ? 32 : 64;
    REQUIRE(svl == want_svl && mine != NULL,
            "%s needs SME at %d bits (qemu -cpu max,sme-default-vector-length=%d); here: %d bits",
            argv[1], 8 * (int)want_svl, (int)want_svl, 8 * (int)svl);
    char packed_path[600];
    snprintf(packed_path, sizeof packed_path, "%s.packed", argv[2]);
    pw_qc4w_weights w;
    weights_init(&w);
    float y[B * N], y_ref[B * N];
    if (writing) {
        pw_cache *cache = NULL;
        CHECK_OK(pw_cache_create(ctx, &cache), ctx);
        run_op(ctx, cache, y);
        CHECK(strcmp(ev.kernel, mine->info.name) == 0, "kernel %s, want %s", ev.kernel, mine->info.name);
        CHECK_OK(pw_cache_save(ctx, cache, argv[2]), ctx);
        pw_cache_close(cache);
        pw_packed_form form;
        CHECK_OK(pw_pack_family_qc4w(ctx, &w, mine->info.family, &form, NULL, 0), ctx);
        uint8_t *buf = malloc((size_t)form.bytes);
        CHECK_OK(pw_pack_family_qc4w(ctx, &w, mine->info.family, &form, buf, form.bytes), ctx);
        FILE *f = fopen(packed_path, "wb");
        REQUIRE(f != NULL && fwrite(buf, 1, (size_t)form.bytes, f) == (size_t)form.bytes,
                "cannot write %s", packed_path);
        fclose(f);
        free(buf);
        printf("wrote %s (family %s) and %s\n", argv[2], mine->info.family, packed_path);
    } else {
        /* The buffer made at 256 bits, described as its family describes it. */
        const pw__kernel *made = sme_kernel(32);
        size_t n = 0;
        unsigned char *buf = pw_test_read_file(packed_path, &n);
        pw__pack_desc d;
        CHECK_OK(made->pack_plan(ctx, made, PW_FORMAT_COUNT, N, K, &d), ctx);
        REQUIRE(buf != NULL && n == d.bytes, "%s: %zu bytes, the 256-bit family packs %llu",
                packed_path, n, (unsigned long long)d.bytes);
        free(buf);
        refuse_buffer(ctx, mine, made);
        /* The cache file made at 256 bits: not served, packed again for 512. */
        pw_cache *cache = NULL;
        CHECK_OK(pw_cache_open(ctx, argv[2], &cache), ctx);
        REQUIRE(cache != NULL, "cannot open %s", argv[2]);
        ev.caches = 0;
        run_op(ctx, cache, y);
        pw_cache_stats st;
        pw_cache_get_stats(cache, &st);
        CHECK(st.misses == 1 && st.file_served == 0, "cache: %llu misses, %llu served from the file",
              (unsigned long long)st.misses, (unsigned long long)st.file_served);
        CHECK(ev.caches == 1 && strstr(ev.cache, "packed and stored") &&
                  strstr(ev.cache, made->info.family) && strstr(ev.cache, mine->info.family),
              "cache event (%d): '%s'", ev.caches, ev.cache);
        CHECK(strcmp(ev.kernel, mine->info.name) == 0, "kernel %s, want %s", ev.kernel, mine->info.name);
        printf("cache: %s\n", ev.cache);
        pw_cache_close(cache);
        /* Same bits as the portable kernel of the contract. */
        events ev2;
        memset(&ev2, 0, sizeof ev2);
        pw_context *scalar = context(&ev2, PW_ISA_SCALAR);
        run_op(scalar, NULL, y_ref);
        CHECK(memcmp(y, y_ref, sizeof y) == 0, "outputs at 512 bits differ from the scalar kernel's");
        pw_context_destroy(scalar);
    }
    pw_context_destroy(ctx);
    return pw_test_finish();
}
