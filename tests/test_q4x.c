/*
 * The q4x32k4 family (kernel/q4x.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q4_0 definition
 * (byte j of a block: element j low, element j + 16 high), on a weight of
 * 37 rows (one whole tile and a part tile) x 3 blocks and on a narrowed,
 * offset view of a wider one; the plan's refusals; and dispatch through a
 * pw_weight: GEMV (n = 1) takes the family's AVX-512 kernel where the
 * context can run it, GEMM (n >= 2) keeps the i8g kernel, each form packed
 * once. This file derives the layout; the weights, the walk over the
 * records and the plan and dispatch checks are tiling_test.c's. Numerical
 * results of the kernels are test_kernels.c's.
 */
// pw-test: tunes
#include "pw_test.h"
#include "tiling_test.h"

#include "kernel/q4x.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 576, BLOCK = 18 };

/* Nibble e (0..31) of a Q4_0 block, from the format's definition. */
static int q4_0_nibble(const uint8_t *blk, int e) {
    const uint8_t byte = blk[2 + e % 16];
    return e < 16 ? byte & 15 : byte >> 4;
}

/* Where q4x.h puts nibble k of row r (0..31) of a record: byte and shift. */
static size_t layout_byte(int r, int k) { return (size_t)(64 * (k / 4) + 4 * (r % 16) + k % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int k = 0; k < 32; ++k) {
        const int got = (rec[layout_byte(r, k)] >> layout_shift(r)) & 15;
        const int want = src ? q4_0_nibble(src, k) : 0;
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld k %d: nibble %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, k, got, want);
    }
    /* d (the block's bytes 0-1) at 512 + 2r */
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(512 + 2 * r + k), k, "d byte", k);
}

static const pw_test_tiling q4x = {
    .format = PW_FORMAT_Q4_0,
    .other = PW_FORMAT_Q8_0,
    .family = "q4x32k4",
    .nr = TILE,
    .kr = 4,
    .group = 32,
    .block_elems = 32,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q4x_pack_plan,
    .pack = pw__q4x_pack,
    .check_record = check_record,
    .kernel_stem = "q4_0_q4x32k4",
    .i8g_stem = "q4_0_i8g32",
};

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q4x, 1, PW_TEST_TILING_MAKER(pw__q4x_record_from_blocks), NULL,
                           NULL);
    pw_test_tiling_kernels(ctx, &q4x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
