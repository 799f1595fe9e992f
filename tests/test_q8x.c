/*
 * The q8x32k4 family (kernel/q8x.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q8_0 definition
 * (an fp16 d, then 32 int8 values in element order), on a weight of 37 rows
 * (one whole tile and a part tile) x 3 blocks and on a narrowed, offset view
 * of a wider one; the plan's refusals; and dispatch through a pw_weight: GEMV
 * (n = 1) takes the family's AVX-512 kernel where the context can run it,
 * GEMM (n >= 2) keeps the i8g kernel, each form packed once, and the
 * family's own best kernel for n >= 2 is its GEMM kernel. This file derives
 * the layout; the weights, the walk over the records and the plan and
 * dispatch checks are tiling_test.c's. Numerical results of the kernels are
 * test_kernels.c's.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "kernel/kernel.h"
#include "kernel/q8x.h"

#include <stdlib.h>
#include <string.h>

#include <stdint.h>

enum { TILE = 32, RECORD = 1088, BLOCK = 34 };

/* Where q8x.h puts value k of row r (0..31) of a record: 8 steps of 128 bytes,
 * each rows 0..15 then rows 16..31, 4 bytes a row. */
static size_t layout_byte(int r, int k) {
    return (size_t)(128 * (k / 4) + (r < 16 ? 0 : 64) + 4 * (r % 16) + k % 4);
}

/* Every byte of row r's share of a record against source block src (a zero
 * block past out: q = 0 stored as 0x80, d = 0). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int k = 0; k < 32; ++k) {
        /* Q8_0: value k is the int8 at byte 2 + k; stored with its sign bit flipped */
        const int q = src ? (int8_t)src[2 + k] : 0;
        const uint8_t got = rec[layout_byte(r, k)], want = (uint8_t)(q + 128);
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld k %d: byte %02x, want %02x (q = %d)", item->what,
                  (long long)item->row, (long long)item->block, k, got, want, q);
    }
    /* d (the block's bytes 0-1) at 1024 + 2r */
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(1024 + 2 * r + k), k, "d byte", k);
}

static const pw_test_tiling q8x = {
    .format = PW_FORMAT_Q8_0,
    .other = PW_FORMAT_Q4_0,
    .family = "q8x32k4",
    .nr = TILE,
    .kr = 4,
    .group = 32,
    .block_elems = 32,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q8x_pack_plan,
    .pack = pw__q8x_pack,
    .check_record = check_record,
    .kernel_stem = "q8_0_q8x32k4",
    .i8g_stem = "q8_0_i8g32",
};

#if defined(__x86_64__)
#include "base/x86_tune.h" /* pw__x86_gemv_ymm: q8x_avx512.c's 256-bit record function */

/*
 * q8x_avx512.c's two GEMV record functions, chosen by pw__x86_gemv_ymm (512 bits, and
 * 256 bits on AMD Zen 4), whichever this CPU takes: every kernel of the family against
 * the oracle under each, and the same bits from both on a weight of 37 rows x 5 blocks of
 * random quants (q = -128 included) through the forced AVX-512 kernel.
 */
static void test_gemv_widths(pw_context *ctx) {
    static const char name[] = "q8_0_q8x32k4_avx512vnni";
    size_t idx;
    if (pw_kernel_find(ctx, name, &idx) != PW_OK ||
        !pw__kernel_usable(ctx, pw__kernel_list_get(idx))) {
        pw_context_clear_message(ctx);
        return;
    }
    enum { OUT = 37, NB = 5, IN = NB * 32 };
    const int saved = pw__x86_gemv_ymm;
    uint8_t *bytes = malloc((size_t)OUT * NB * BLOCK);
    float *x = malloc(sizeof(float) * IN), *y[2] = {malloc(sizeof(float) * OUT),
                                                    malloc(sizeof(float) * OUT)};
    CHECK(bytes && x && y[0] && y[1], "out of memory");
    if (bytes && x && y[0] && y[1]) {
        pw_rng r = {21};
        for (int b = 0; b < OUT * NB; ++b) {
            uint8_t *blk = bytes + (size_t)b * BLOCK;
            const uint16_t d = pw__f32_to_f16((float)(0.001 + 0.01 * pw_rng_uniform(&r)));
            memcpy(blk, &d, 2);
            for (int k = 0; k < 32; ++k) blk[2 + k] = (uint8_t)(pw_rng_next(&r) >> 24);
        }
        for (int i = 0; i < IN; ++i) x[i] = (float)pw_rng_gauss(&r);
        pw_view v;
        const int64_t shape[2] = {OUT, IN};
        CHECK_OK(pw_view_init(ctx, &v, PW_FORMAT_Q8_0, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes,
                              (uint64_t)OUT * NB * BLOCK),
                 ctx);
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.kernel = name;
        pw_weight *h = NULL;
        CHECK_OK(pw_weight_create(ctx, &v, &wo, &h), ctx);
        for (int ymm = 0; ymm < 2 && h != NULL; ++ymm) {
            pw__x86_gemv_ymm = ymm;
            pw_test_tiling_vs_oracle(ctx, &q8x, bytes, OUT, NB, 3, &r,
                                     ymm ? "256-bit GEMV" : "512-bit GEMV");
            CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y[ymm]), ctx);
        }
        CHECK(h == NULL || memcmp(y[0], y[1], sizeof(float) * OUT) == 0,
              "%s: the 256-bit record function gave other bits than the 512-bit one", name);
        pw_weight_destroy(h);
    }
    pw__x86_gemv_ymm = saved;
    free(bytes);
    free(x);
    free(y[0]);
    free(y[1]);
}
#endif

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q8x, 1, PW_TEST_TILING_MAKER(pw__q8x_record_from_blocks), NULL,
                           NULL);
    pw_test_tiling_kernels(ctx, &q8x);
#if defined(__x86_64__)
    test_gemv_widths(ctx);
#endif
    pw_context_destroy(ctx);
    return pw_test_finish();
}
