/*
 * The q6kx32k4 family (kernel/q6kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q6_K definition
 * (walking the file's bytes forward: low nibble of ql[64h + m] is value
 * 128h + m, its high nibble value 128h + 64 + m, bits 2g of qh[32h + l] value
 * 128h + 32g + l), on a weight of 37 rows (one whole tile and a part tile) x
 * 3 blocks and on a narrowed, offset view of a wider one; the plan's
 * refusals; and dispatch through a pw_weight: GEMV (n = 1) takes the
 * family's AVX-512 kernel where the context can run it, GEMM (n >= 2) keeps
 * the i8g kernel, each form packed once. Numerical results of the kernels are
 * test_kernels.c's.
 */
#include "pw_test.h"

#include "kernel/q6kx.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 6720, BLOCK = 210 };

/* The 6-bit quants (0..63) of one Q6_K block, from the format's definition. */
static void q6_k_quants(const uint8_t *blk, int q[256]) {
    const uint8_t *ql = blk, *qh = blk + 128;
    for (int h = 0; h < 2; ++h) {
        for (int m = 0; m < 64; ++m) {
            q[128 * h + m] = ql[64 * h + m] & 15;
            q[128 * h + 64 + m] = ql[64 * h + m] >> 4;
        }
        for (int l = 0; l < 32; ++l)
            for (int g = 0; g < 4; ++g)
                q[128 * h + 32 * g + l] += 16 * (qh[32 * h + l] >> (2 * g) & 3);
    }
}

/* Where q6kx.h puts value e of row r (0..31) in a record: its 4 low bits (byte, shift)
 * and its 2 high bits (byte, shift). */
static size_t low_byte(int r, int e) {
    const int s = e / 16, i = e % 16 / 4, j = e % 4;
    return (size_t)(384 * s + 64 * i + 4 * (r % 16) + j);
}
static int low_shift(int r) { return r < 16 ? 0 : 4; }
static size_t high_byte(int r, int e) {
    const int s = e / 16, p = e % 16 / 8, j = e % 4;
    return (size_t)(384 * s + 256 + 64 * p + 4 * (r % 16) + j);
}
static int high_shift(int r, int e) {
    const int first = e % 8 < 4; /* first step of the pair: upper nibble */
    return (first ? 4 : 0) + (r < 16 ? 0 : 2);
}

static void make_q6_k(pw_context *ctx, int64_t rows, int64_t in, uint64_t seed, uint8_t **bytes,
                      uint64_t *nbytes) {
    pw_rng r = {seed};
    float *w = malloc(sizeof(float) * (size_t)(rows * in));
    for (int64_t i = 0; i < rows * in; ++i) w[i] = (float)pw_rng_gauss(&r);
    *nbytes = (uint64_t)(rows * in / 256 * BLOCK);
    *bytes = malloc((size_t)*nbytes);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q6_K, w, (size_t)(rows * in / 256), *bytes), ctx);
    free(w);
}

/* Pack view v and compare every byte with the layout. */
static void check_pack(pw_context *ctx, const pw_view *v, const char *what) {
    const int64_t out = v->shape[0], in = v->shape[1], nb = in / 256;
    pw__pack_desc d;
    CHECK_OK(pw__q6kx_pack_plan(ctx, PW_FORMAT_Q6_K, out, in, &d), ctx);
    const int64_t tiles = (out + TILE - 1) / TILE;
    CHECK(strcmp(d.family, "q6kx32k4") == 0 && d.nr == TILE && d.kr == 4 && d.group == 16 &&
              d.tiles == tiles && d.tile_bytes == (uint64_t)(nb * RECORD) &&
              d.bytes == (uint64_t)(tiles * nb * RECORD),
          "%s: plan %s nr=%d kr=%d tiles=%lld tile_bytes=%llu bytes=%llu", what, d.family,
          (int)d.nr, (int)d.kr, (long long)d.tiles, (unsigned long long)d.tile_bytes,
          (unsigned long long)d.bytes);
    uint8_t *p = malloc((size_t)d.bytes);
    memset(p, 0xA5, (size_t)d.bytes); /* the packer must write every byte */
    pw__q6kx_pack(&d, v, 0, out, p);
    int bad = 0;
    for (int64_t t = 0; t < tiles; ++t) {
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = p + (uint64_t)t * d.tile_bytes + (uint64_t)b * RECORD;
            for (int r = 0; r < TILE && bad < 5; ++r) {
                const int64_t o = t * TILE + r;
                const uint8_t *src = o < out ? pw_view_block_ptr(v, o, b) : NULL;
                int q[256] = {0};
                if (src) q6_k_quants(src, q);
                for (int e = 0; e < 256; ++e) {
                    const int lo = rec[low_byte(r, e)] >> low_shift(r) & 15;
                    const int hi = rec[high_byte(r, e)] >> high_shift(r, e) & 3;
                    if (lo + 16 * hi != q[e] && bad++ < 5)
                        CHECK(0, "%s: row %lld block %lld value %d: quant %d, want %d", what,
                              (long long)o, (long long)b, e, lo + 16 * hi, q[e]);
                }
                for (int s = 0; s < 16; ++s) {
                    const uint8_t want = src ? src[192 + s] : 0;
                    if (rec[6144 + 32 * s + r] != want && bad++ < 5)
                        CHECK(0, "%s: row %lld block %lld: scale %d is %02x, want %02x", what,
                              (long long)o, (long long)b, s, rec[6144 + 32 * s + r], want);
                }
                const uint8_t *dd = rec + 6656 + 2 * r;
                const uint8_t want0 = src ? src[208] : 0, want1 = src ? src[209] : 0;
                if ((dd[0] != want0 || dd[1] != want1) && bad++ < 5)
                    CHECK(0, "%s: row %lld block %lld: d bytes %02x%02x, want %02x%02x", what,
                          (long long)o, (long long)b, dd[1], dd[0], want1, want0);
            }
        }
    }
    /* A whole number of tiles holds exactly the file's bytes. */
    if (out % TILE == 0)
        CHECK(d.bytes == (uint64_t)(out * nb * BLOCK), "%s: %llu packed bytes for %lld file bytes",
              what, (unsigned long long)d.bytes, (long long)(out * nb * BLOCK));
    free(p);
}

static void test_layout(pw_context *ctx) {
    uint8_t *bytes;
    uint64_t nbytes;
    make_q6_k(ctx, 37, 768, 7, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {37, 768};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q6_K, 2, shape, bytes, nbytes), ctx);
    check_pack(ctx, &v, "37x768");
    free(bytes);

    /* Rows [5, 5 + 64) and blocks [1, 4) of a 75 x 1280 weight: two whole tiles. */
    make_q6_k(ctx, 75, 1280, 8, &bytes, &nbytes);
    const int64_t wide[2] = {75, 1280};
    pw_view w, n;
    CHECK_OK(pw_view_init(ctx, &w, PW_FORMAT_Q6_K, 2, wide, bytes, nbytes), ctx);
    CHECK_OK(pw_view_narrow(ctx, &w, 0, 5, 64, &n), ctx);
    CHECK_OK(pw_view_narrow(ctx, &n, 1, 256, 768, &n), ctx);
    check_pack(ctx, &n, "narrowed 64x768");
    free(bytes);
}

static void test_plan_refusals(pw_context *ctx) {
    pw__pack_desc d;
    CHECK_STATUS(pw__q6kx_pack_plan(ctx, PW_FORMAT_Q4_K, 32, 256, &d), PW_ERR_UNSUPPORTED, ctx);
    CHECK_STATUS(pw__q6kx_pack_plan(ctx, PW_FORMAT_Q6_K, 32, 384, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__q6kx_pack_plan(ctx, PW_FORMAT_Q6_K, 0, 256, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__q6kx_pack_plan(ctx, PW_FORMAT_Q6_K, (int64_t)1 << 40, (int64_t)1 << 40, &d),
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
    CHECK_OK(pw_kernel_find(ctx, "q6_k_q6kx32k4_scalar", &idx), ctx);
    const int simd = pw_kernel_find(ctx, "q6_k_q6kx32k4_avx512vnni", &idx) == PW_OK &&
                     pw_kernel_usable(ctx, idx);
    pw_context_clear_message(ctx);

    enum { OUT = 37, IN = 768, N = 4 };
    uint8_t *bytes;
    uint64_t nbytes;
    make_q6_k(ctx, OUT, IN, 9, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q6_K, 2, shape, bytes, nbytes), ctx);
    float *x = malloc(sizeof(float) * N * IN), *y = malloc(sizeof(float) * N * OUT);
    pw_rng r = {10};
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    pw_weight *h = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &h), ctx);

    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    if (simd) {
        CHECK(strcmp(ev.kernel, "q6_k_q6kx32k4_avx512vnni") == 0, "GEMV chose %s", ev.kernel);
        CHECK(ev.adapters == 1 && strcmp(ev.to, "q6kx32k4") == 0 &&
                  ev.bytes == (uint64_t)(2 * (IN / 256) * RECORD),
              "GEMV packing: %d adapters to %s, %llu bytes", ev.adapters, ev.to,
              (unsigned long long)ev.bytes);
    } else {
        CHECK(strstr(ev.kernel, "q6kx32k4") == NULL, "GEMV chose %s at isa %s", ev.kernel,
              pw_isa_name(pw_context_isa(ctx)));
    }
    const int gemv_adapters = ev.adapters;
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    CHECK(ev.adapters == gemv_adapters, "second GEMV packed again");

    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    CHECK(strstr(ev.kernel, "q6kx32k4") == NULL && strstr(ev.kernel, "i8g") != NULL,
          "GEMM (n = %d) chose %s", N, ev.kernel);
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

int main(void) {
    pw_context *ctx = pw_test_context();
    test_layout(ctx);
    test_plan_refusals(ctx);
    test_dispatch(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
