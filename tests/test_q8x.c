/*
 * The q8x32k4 family (kernel/q8x.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q8_0 definition
 * (an fp16 d, then 32 int8 values in element order), on a weight of 37 rows
 * (one whole tile and a part tile) x 3 blocks and on a narrowed, offset view
 * of a wider one; the plan's refusals; and dispatch through a pw_weight: GEMV
 * (n = 1) takes the family's AVX-512 kernel where the context can run it
 * (else its AVX-VNNI, else its AVX2 kernel), GEMM (n >= 2) keeps the i8g
 * kernel, each form packed once, and the family's own best kernel for
 * n >= 2 is its GEMM kernel of the same level. This file derives
 * the layout; the weights, the walk over the records and the plan and
 * dispatch checks are tiling_test.c's. Numerical results of the kernels are
 * test_kernels.c's.
 */
#include "pw_test.h"
#include "tiling_test.h"

#include "kernel/q8x.h"

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
    .scalar_kernel = "q8_0_q8x32k4_scalar",
    .simd_kernel = "q8_0_q8x32k4_avx512vnni",
    .gemm_simd_kernel = "q8_0_i8g32_avx512vnni",
    .family_gemm_kernel = "q8_0_q8x32k4_gemm_avx512vnni",
    .level_kernels = {"q8_0_q8x32k4_avxvnni", "q8_0_q8x32k4_avx2"},
    .level_gemm_kernels = {"q8_0_q8x32k4_gemm_avxvnni", "q8_0_q8x32k4_gemm_avx2"},
};

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_layout(ctx, &q8x);
    pw_test_tiling_refusals(ctx, &q8x);
    pw_test_tiling_dispatch(ctx, &q8x);
    pw_test_tiling_family_kernels(ctx, &q8x);
    pw_test_tiling_gemm_large(ctx, &q8x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
