/*
 * The q4kx32k4 family (kernel/q4kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q4_K definition
 * (bytes 0-1 d, 2-3 dmin, 4-15 packed scales, then 64-element chunk c in
 * bytes 16 + [32c, 32c + 32), its first 32 elements low, last 32 high), on a
 * weight of 37 rows (one whole tile and a part tile) x 3 super-blocks and on
 * a narrowed, offset view of a wider one; the plan's refusals; every kernel
 * of the family (GEMV and GEMM) on weights whose 6-bit scales and mins take
 * every value, against the reference; and dispatch through a pw_weight: GEMV
 * (n = 1) takes the family's AVX-512 kernel where the context can run it,
 * GEMM (n >= 2) keeps the i8g kernel, each form packed once. This file
 * derives the layout; the weights, the walk over the records and the plan and
 * dispatch checks are tiling_test.c's. Numerical results on quantized weights
 * are test_kernels.c's.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

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

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int e = 0; e < 256; ++e) {
        const int got = (rec[layout_byte(r, e)] >> layout_shift(r)) & 15;
        const int want = src ? q4_k_nibble(src, e) : 0;
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld e %d: nibble %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, e, got, want);
    }
    /* d at 4096 + 2r, dmin at 4160 + 2r: the block's bytes 0-1 and 2-3 */
    for (int k = 0; k < 4; ++k) {
        const int at = (k < 2 ? 4096 : 4160) + 2 * r + k % 2;
        pw_test_tiling_byte(item, (size_t)at, k, "d/dmin byte", k);
    }
    for (int i = 0; i < 12; ++i)
        pw_test_tiling_byte(item, layout_scale(r, i), 4 + i, "scale byte", i);
}

static const pw_test_tiling q4kx = {
    .format = PW_FORMAT_Q4_K,
    .other = PW_FORMAT_Q4_0,
    .family = "q4kx32k4",
    .nr = TILE,
    .kr = 4,
    .group = 32,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q4kx_pack_plan,
    .pack = pw__q4kx_pack,
    .check_record = check_record,
    .kernel_stem = "q4_k_q4kx32k4",
    .i8g_stem = "q4_k_i8g32",
    .arm_family_gemm = PW_TEST_ARM_FAMILY_GEMM,
};

/*
 * Blocks of random bytes (a quantizer rarely sets every 6-bit scale and min
 * pattern, the top two bits in particular; sub-blocks 4..7 take theirs from
 * other bytes) with finite positive d and dmin: every kernel of the family the
 * context can run against the oracle, on 45 rows (a whole and a part tile) x
 * 3 super-blocks, n = 1, 3 and 13 (the GEMM kernel's panels split 13 rows).
 */
static void test_random_scales(pw_context *ctx) { pw_test_tiling_random(ctx, &q4kx, 2, 11); }

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q4kx, 2, PW_TEST_TILING_MAKER(pw__q4kx_record_from_blocks), NULL,
                           NULL);
    test_random_scales(ctx);
    pw_test_tiling_dispatch(ctx, &q4kx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
