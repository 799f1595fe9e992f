/*
 * The q4kx32k4 family (kernel/q4kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q4_K definition
 * (bytes 0-1 d, 2-3 dmin, 4-15 packed scales, then 64-element chunk c in
 * bytes 16 + [32c, 32c + 32), its first 32 elements low, last 32 high), on a
 * weight of 37 rows (one whole tile and a part tile) x 3 super-blocks and on
 * a narrowed, offset view of a wider one; the plan's refusals; a GEMV through
 * the family's kernels on weights whose 6-bit scales and mins take every
 * value, against the reference; and dispatch through a pw_weight: GEMV
 * (n = 1) takes the family's AVX-512 kernel where the context can run it,
 * GEMM (n >= 2) keeps the i8g kernel, each form packed once. Numerical
 * results on quantized weights are test_kernels.c's.
 */
#include "kernel_oracle.h"
#include "pw_test.h"

#include "format/blocks.h"
#include "kernel/q4kx.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 4608, BLOCK = 144 };

/* Nibble e (0..255) of a Q4_K block, from the format's definition. */
static int q4_k_nibble(const uint8_t *blk, int e) {
    const uint8_t byte = blk[16 + 32 * (e / 64) + e % 32];
    return e % 64 < 32 ? byte & 15 : byte >> 4;
}

/* Where q4kx.h puts nibble e of row r (0..31) of a record: byte and shift; and
 * packed scale byte i of row r. */
static size_t layout_byte(int r, int e) { return (size_t)(64 * (e / 4) + 4 * (r % 16) + e % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }
static size_t layout_scale(int r, int i) {
    return (size_t)(4224 + 192 * (r / 16) + 16 * i + r % 16);
}

static void make_q4_k(pw_context *ctx, int64_t rows, int64_t in, uint64_t seed, uint8_t **bytes,
                      uint64_t *nbytes) {
    pw_rng r = {seed};
    float *w = malloc(sizeof(float) * (size_t)(rows * in));
    for (int64_t i = 0; i < rows * in; ++i) w[i] = (float)pw_rng_gauss(&r);
    *nbytes = (uint64_t)(rows * in / 256 * BLOCK);
    *bytes = malloc((size_t)*nbytes);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_K, w, (size_t)(rows * in / 256), *bytes), ctx);
    free(w);
}

/* Pack view v and compare every byte with the layout. */
static void check_pack(pw_context *ctx, const pw_view *v, const char *what) {
    const int64_t out = v->shape[0], in = v->shape[1], nb = in / 256;
    pw__pack_desc d;
    CHECK_OK(pw__q4kx_pack_plan(ctx, PW_FORMAT_Q4_K, out, in, &d), ctx);
    const int64_t tiles = (out + TILE - 1) / TILE;
    CHECK(strcmp(d.family, "q4kx32k4") == 0 && d.nr == TILE && d.kr == 4 && d.group == 32 &&
              d.tiles == tiles && d.tile_bytes == (uint64_t)(nb * RECORD) &&
              d.bytes == (uint64_t)(tiles * nb * RECORD),
          "%s: plan %s nr=%d kr=%d tiles=%lld tile_bytes=%llu bytes=%llu", what, d.family,
          (int)d.nr, (int)d.kr, (long long)d.tiles, (unsigned long long)d.tile_bytes,
          (unsigned long long)d.bytes);
    uint8_t *p = malloc((size_t)d.bytes);
    memset(p, 0xA5, (size_t)d.bytes); /* the packer must write every byte */
    pw__q4kx_pack(&d, v, 0, out, p);
    int bad = 0;
    for (int64_t t = 0; t < tiles; ++t) {
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t *rec = p + (uint64_t)t * d.tile_bytes + (uint64_t)b * RECORD;
            for (int r = 0; r < TILE && bad < 5; ++r) {
                const int64_t o = t * TILE + r;
                const uint8_t *src = o < out ? pw_view_block_ptr(v, o, b) : NULL;
                for (int e = 0; e < 256; ++e) {
                    const int got = (rec[layout_byte(r, e)] >> layout_shift(r)) & 15;
                    const int want = src ? q4_k_nibble(src, e) : 0;
                    if (got != want && bad++ < 5)
                        CHECK(0, "%s: row %lld block %lld e %d: nibble %d, want %d", what,
                              (long long)o, (long long)b, e, got, want);
                }
                /* d at 4096 + 2r, dmin at 4160 + 2r: the block's bytes 0-1 and 2-3 */
                for (int k = 0; k < 4; ++k) {
                    const uint8_t got = rec[(k < 2 ? 4096 : 4160) + 2 * r + k % 2];
                    const uint8_t want = src ? src[k] : 0;
                    if (got != want && bad++ < 5)
                        CHECK(0, "%s: row %lld block %lld: d/dmin byte %d is %02x, want %02x", what,
                              (long long)o, (long long)b, k, got, want);
                }
                for (int i = 0; i < 12; ++i) {
                    const uint8_t got = rec[layout_scale(r, i)], want = src ? src[4 + i] : 0;
                    if (got != want && bad++ < 5)
                        CHECK(0, "%s: row %lld block %lld: scale byte %d is %02x, want %02x", what,
                              (long long)o, (long long)b, i, got, want);
                }
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
    make_q4_k(ctx, 37, 768, 7, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {37, 768};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_K, 2, shape, bytes, nbytes), ctx);
    check_pack(ctx, &v, "37x768");
    free(bytes);

    /* Rows [5, 5 + 64) and blocks [1, 4) of a 75 x 1280 weight: two whole tiles. */
    make_q4_k(ctx, 75, 1280, 8, &bytes, &nbytes);
    const int64_t wide[2] = {75, 1280};
    pw_view w, n;
    CHECK_OK(pw_view_init(ctx, &w, PW_FORMAT_Q4_K, 2, wide, bytes, nbytes), ctx);
    CHECK_OK(pw_view_narrow(ctx, &w, 0, 5, 64, &n), ctx);
    CHECK_OK(pw_view_narrow(ctx, &n, 1, 256, 768, &n), ctx);
    check_pack(ctx, &n, "narrowed 64x768");
    free(bytes);
}

static void test_plan_refusals(pw_context *ctx) {
    pw__pack_desc d;
    CHECK_STATUS(pw__q4kx_pack_plan(ctx, PW_FORMAT_Q4_0, 32, 256, &d), PW_ERR_UNSUPPORTED, ctx);
    CHECK_STATUS(pw__q4kx_pack_plan(ctx, PW_FORMAT_Q4_K, 32, 384, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__q4kx_pack_plan(ctx, PW_FORMAT_Q4_K, 0, 256, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__q4kx_pack_plan(ctx, PW_FORMAT_Q4_K, (int64_t)1 << 40, (int64_t)1 << 40, &d),
                 PW_ERR_OVERFLOW, ctx);
}

/*
 * Blocks of random bytes (a quantizer rarely sets every 6-bit scale and min
 * pattern, the top two bits in particular; sub-blocks 4..7 take theirs from
 * other bytes) with finite positive d and dmin: every kernel of the family the
 * context can run against the oracle, on 45 rows (a whole and a part tile) x
 * 3 super-blocks, n = 1 and 3.
 */
static void test_random_scales(pw_context *ctx) {
    enum { OUT = 45, NB = 3, IN = NB * 256 };
    pw_rng r = {11};
    uint8_t *bytes = malloc((size_t)(OUT * NB * BLOCK));
    for (int k = 0; k < OUT * NB; ++k) {
        uint8_t *blk = bytes + (size_t)k * BLOCK;
        for (int i = 4; i < BLOCK; ++i) blk[i] = (uint8_t)(pw_rng_next(&r) >> 24);
        const uint16_t d = pw__f32_to_f16((float)(0.001 + 0.01 * pw_rng_uniform(&r)));
        const uint16_t dmin = pw__f32_to_f16((float)(0.001 + 0.01 * pw_rng_uniform(&r)));
        memcpy(blk, &d, 2);
        memcpy(blk + 2, &dmin, 2);
    }
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_K, 2, shape, bytes, (uint64_t)(OUT * NB * BLOCK)),
             ctx);
    float x[3 * IN];
    for (int i = 0; i < 3 * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    int ran = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.family == NULL || strcmp(k->info.family, "q4kx32k4") != 0 ||
            !pw__kernel_usable(ctx, k))
            continue;
        pw_test_kernel_vs_oracle(ctx, k, &v, x, 1, "random scales");
        pw_test_kernel_vs_oracle(ctx, k, &v, x, 3, "random scales");
        ++ran;
    }
    CHECK(ran >= 1, "no q4kx32k4 kernel ran (the portable one always can)");
    free(bytes);
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
    CHECK_OK(pw_kernel_find(ctx, "q4_k_q4kx32k4_scalar", &idx), ctx);
    const int simd = pw_kernel_find(ctx, "q4_k_q4kx32k4_avx512vnni", &idx) == PW_OK &&
                     pw_kernel_usable(ctx, idx);
    pw_context_clear_message(ctx);

    enum { OUT = 37, IN = 768, N = 4 };
    uint8_t *bytes;
    uint64_t nbytes;
    make_q4_k(ctx, OUT, IN, 9, &bytes, &nbytes);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q4_K, 2, shape, bytes, nbytes), ctx);
    float x[N * IN], y[N * OUT];
    pw_rng r = {10};
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    pw_weight *h = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, NULL, &h), ctx);

    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    if (simd) {
        CHECK(strcmp(ev.kernel, "q4_k_q4kx32k4_avx512vnni") == 0, "GEMV chose %s", ev.kernel);
        CHECK(ev.adapters == 1 && strcmp(ev.to, "q4kx32k4") == 0 &&
                  ev.bytes == (uint64_t)(2 * (IN / 256) * RECORD),
              "GEMV packing: %d adapters to %s, %llu bytes", ev.adapters, ev.to,
              (unsigned long long)ev.bytes);
    } else {
        CHECK(strstr(ev.kernel, "q4kx32k4") == NULL, "GEMV chose %s at isa %s", ev.kernel,
              pw_isa_name(pw_context_isa(ctx)));
    }
    const int gemv_adapters = ev.adapters;
    CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
    CHECK(ev.adapters == gemv_adapters, "second GEMV packed again");

    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    CHECK(strstr(ev.kernel, "q4kx32k4") == NULL, "GEMM (n = %d) chose %s", N, ev.kernel);
    if (simd)
        CHECK(strcmp(ev.kernel, "q4_k_i8g32_avx512vnni") == 0, "GEMM (n = %d) chose %s", N,
              ev.kernel);
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
    test_random_scales(ctx);
    test_dispatch(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
