/*
 * The q4x32k4 family (kernel/q4x.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q4_0 definition
 * (byte j of a block: element j low, element j + 16 high), on a weight of
 * 37 rows (one whole tile and a part tile) x 3 blocks and on a narrowed,
 * offset view of a wider one; the plan's refusals; and dispatch through a
 * pw_weight: GEMV (n = 1) takes the family's AVX-512 kernel where the
 * context can run it, GEMM (n >= 2) keeps the i8g kernel, each form packed
 * once. Numerical results of the kernels are test_kernels.c's.
 */
#include "pw_test.h"

#include "kernel/q4x.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 576 };

/* Nibble e (0..31) of a Q4_0 block, from the format's definition. */
static int q4_0_nibble(const uint8_t *blk, int e) {
    const uint8_t byte = blk[2 + e % 16];
    return e < 16 ? byte & 15 : byte >> 4;
}

/* Where q4x.h puts nibble k of row r (0..31) of a record: byte and shift. */
static size_t layout_byte(int r, int k) { return (size_t)(64 * (k / 4) + 4 * (r % 16) + k % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }

static void make_q4_0(pw_context *ctx, int64_t rows, int64_t in, uint64_t seed, uint8_t **bytes,
                      uint64_t *nbytes) {
    pw_rng r = {seed};
    float *w = malloc(sizeof(float) * (size_t)(rows * in));
    for (int64_t i = 0; i < rows * in; ++i) w[i] = (float)pw_rng_gauss(&r);
    *nbytes = (uint64_t)(rows * in / 32 * 18);
    *bytes = malloc((size_t)*nbytes);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_0, w, (size_t)(rows * in / 32), *bytes), ctx);
    free(w);
}

/* Pack view v and compare every byte with the layout. */
static void check_pack(pw_context *ctx, const pw_view *v, const char *what) {
    const int64_t out = v->shape[0], in = v->shape[1], nb = in / 32;
    pw__pack_desc d;
    CHECK_OK(pw__q4x_pack_plan(ctx, PW_FORMAT_Q4_0, out, in, &d), ctx);
    const int64_t tiles = (out + TILE - 1) / TILE;
    CHECK(strcmp(d.family, "q4x32k4") == 0 && d.nr == TILE && d.kr == 4 && d.group == 32 &&
              d.tiles == tiles && d.tile_bytes == (uint64_t)(nb * RECORD) &&
              d.bytes == (uint64_t)(tiles * nb * RECORD),
          "%s: plan %s nr=%d kr=%d tiles=%lld tile_bytes=%llu bytes=%llu", what, d.family, (int)d.nr,
          (int)d.kr, (long long)d.tiles, (unsigned long long)d.tile_bytes, (unsigned long long)d.bytes);
    uint8_t *p = malloc((size_t)d.bytes);
    memset(p, 0xA5, (size_t)d.bytes); /* the packer must write every byte */
    pw__q4x_pack(&d, v, 0, out, p);
    int bad = 0;
    for (int64_t t = 0; t < tiles; ++t) {
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = p + (uint64_t)t * d.tile_bytes + (uint64_t)b * RECORD;
            for (int r = 0; r < TILE && bad < 5; ++r) {
                const int64_t o = t * TILE + r;
                const uint8_t *src = o < out ? pw_view_block_ptr(v, o, b) : NULL;
                for (int k = 0; k < 32; ++k) {
                    const int got = (rec[layout_byte(r, k)] >> layout_shift(r)) & 15;
                    const int want = src ? q4_0_nibble(src, k) : 0;
                    if (got != want && bad++ < 5)
                        CHECK(0, "%s: row %lld block %lld k %d: nibble %d, want %d", what,
                              (long long)o, (long long)b, k, got, want);
                }
                const uint8_t *dd = rec + 512 + 2 * r;
                const uint8_t want0 = src ? src[0] : 0, want1 = src ? src[1] : 0;
                if ((dd[0] != want0 || dd[1] != want1) && bad++ < 5)
                    CHECK(0, "%s: row %lld block %lld: d bytes %02x%02x, want %02x%02x", what,
                          (long long)o, (long long)b, dd[1], dd[0], want1, want0);
            }
        }
    }
    /* A whole number of tiles holds exactly the file's bytes. */
    if (out % TILE == 0)
        CHECK(d.bytes == (uint64_t)(out * nb * 18), "%s: %llu packed bytes for %lld file bytes", what,
              (unsigned long long)d.bytes, (long long)(out * nb * 18));
    free(p);
}

static void test_layout(pw_context *ctx) {
    uint8_t *bytes;
    uint64_t nbytes;
    make_q4_0(ctx, 37, 96, 7, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {37, 96};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, bytes, nbytes), ctx);
    check_pack(ctx, &v, "37x96");
    free(bytes);

    /* Rows [5, 5 + 64) and blocks [1, 4) of a 75 x 160 weight: two whole tiles. */
    make_q4_0(ctx, 75, 160, 8, &bytes, &nbytes);
    const int64_t wide[2] = {75, 160};
    pw_view w, n;
    CHECK_OK(pw_view_init(ctx, &w, PW_FORMAT_Q4_0, 2, wide, bytes, nbytes), ctx);
    CHECK_OK(pw_view_narrow(ctx, &w, 0, 5, 64, &n), ctx);
    CHECK_OK(pw_view_narrow(ctx, &n, 1, 32, 96, &n), ctx);
    check_pack(ctx, &n, "narrowed 64x96");
    free(bytes);
}

static void test_plan_refusals(pw_context *ctx) {
    pw__pack_desc d;
    CHECK_STATUS(pw__q4x_pack_plan(ctx, PW_FORMAT_Q8_0, 32, 64, &d), PW_ERR_UNSUPPORTED, ctx);
    CHECK_STATUS(pw__q4x_pack_plan(ctx, PW_FORMAT_Q4_0, 32, 48, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__q4x_pack_plan(ctx, PW_FORMAT_Q4_0, 0, 64, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__q4x_pack_plan(ctx, PW_FORMAT_Q4_0, (int64_t)1 << 40, (int64_t)1 << 40, &d),
                 PW_ERR_OVERFLOW, ctx);
}

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

static void test_dispatch(pw_context *base) {
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
    size_t idx = 0;
    CHECK_OK(pw_kernel_find(ctx, "q4_0_q4x32k4_scalar", &idx), ctx);
    const int simd = pw_kernel_find(ctx, "q4_0_q4x32k4_avx512vnni", &idx) == PW_OK &&
                     pw_kernel_usable(ctx, idx);
    pw_context_clear_message(ctx);

    enum { OUT = 37, IN = 96, N = 4 };
    uint8_t *bytes;
    uint64_t nbytes;
    make_q4_0(ctx, OUT, IN, 9, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, bytes, nbytes), ctx);
    float x[N * IN], y[N * OUT];
    pw_rng r = {10};
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    pw_weight *h = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &h), ctx);

    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    if (simd) {
        CHECK(strcmp(ev.kernel, "q4_0_q4x32k4_avx512vnni") == 0, "GEMV chose %s", ev.kernel);
        CHECK(ev.adapters == 1 && strcmp(ev.to, "q4x32k4") == 0 &&
                  ev.bytes == (uint64_t)(2 * (IN / 32) * RECORD),
              "GEMV packing: %d adapters to %s, %llu bytes", ev.adapters, ev.to,
              (unsigned long long)ev.bytes);
    } else {
        CHECK(strstr(ev.kernel, "q4x32k4") == NULL, "GEMV chose %s at isa %s", ev.kernel,
              pw_isa_name(pw_context_isa(ctx)));
    }
    const int gemv_adapters = ev.adapters;
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    CHECK(ev.adapters == gemv_adapters, "second GEMV packed again");

    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    CHECK(strstr(ev.kernel, "q4x32k4") == NULL, "GEMM (n = %d) chose %s", N, ev.kernel);
    const int gemm_adapters = ev.adapters;
    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    CHECK(ev.adapters == gemm_adapters, "steady state packed again (%d adapters, then %d)",
          gemm_adapters, ev.adapters);

    pw_weight_destroy(h);
    free(bytes);
    pw_context_destroy(ctx);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    test_layout(ctx);
    test_plan_refusals(ctx);
    test_dispatch(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
