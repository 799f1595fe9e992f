/*
 * The iq4x32k4 family (kernel/iq4x.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the IQ4_NL definition
 * (bytes 0-1 d, byte 2 + j of a block: element j low, element j + 16 high,
 * each an index into the codebook), on a weight of 37 rows (one whole tile
 * and a part tile) x 3 blocks and on a narrowed, offset view of a wider one;
 * the plan's refusals; dispatch through a pw_weight (GEMV takes the family's
 * kernel of the context's level where there is one, GEMM the i8g kernel
 * under the fastest policy); which kernels of the family rank where; every
 * kernel of the family the context can run against the oracle on random
 * bytes (every index) and with every index at the codebook's ends against
 * activations of +-127; and a GEMM at a size that spans several passes.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "kernel/iq4x.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 576, BLOCK = 18 };

/* Index e (0..31) of an IQ4_NL block, from the format's definition. */
static int iq4_nl_index(const uint8_t *blk, int e) {
    const uint8_t byte = blk[2 + e % 16];
    return e < 16 ? byte & 15 : byte >> 4;
}

/* Where iq4x.h puts index k of row r (0..31) of a record: byte and shift. */
static size_t layout_byte(int r, int k) { return (size_t)(64 * (k / 4) + 4 * (r % 16) + k % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int k = 0; k < 32; ++k) {
        const int got = (rec[layout_byte(r, k)] >> layout_shift(r)) & 15;
        const int want = src ? iq4_nl_index(src, k) : 0;
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld k %d: index %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, k, got, want);
    }
    /* d (the block's bytes 0-1) at 512 + 2r */
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(512 + 2 * r + k), k, "d byte", k);
}

static const pw_test_tiling iq4x = {
    .format = PW_FORMAT_IQ4_NL,
    .other = PW_FORMAT_Q4_0,
    .family = "iq4x32k4",
    .nr = TILE,
    .kr = 4,
    .group = 32,
    .block_elems = 32,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__iq4x_pack_plan,
    .pack = pw__iq4x_pack,
    .check_record = check_record,
    .kernel_stem = "iq4_nl_iq4x32k4",
    .i8g_stem = "iq4_nl_i8g32",
};

/* Blocks of random bytes with a finite positive d: every kernel of the family against
 * the oracle, on 45 rows x 10 blocks and x 16 (both AVX-512 GEMV paths), n = 1, 3, 13. */
static void test_random_bytes(pw_context *ctx) {
    static const int64_t nbs[2] = {10, 16};
    pw_test_tiling_random_widths(ctx, &iq4x, 1, 14, nbs, 2);
}

/* Every index 0 (the codebook's -127) and, in turn, 15 (113): the AVX2 kernels' int16
 * pair sums of |value| x signed activation at their largest (2 * 127 * 127). */
static void test_codebook_ends(pw_context *ctx) {
    pw_test_tiling_at_fill(ctx, &iq4x, 37, 16, 5, 1, 0x00);
    pw_test_tiling_at_fill(ctx, &iq4x, 37, 16, 5, 1, 0xFF);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &iq4x, 1, PW_TEST_TILING_MAKER(pw__q4x_record_from_blocks), NULL,
                           NULL);
    test_random_bytes(ctx);
    test_codebook_ends(ctx);
    pw_test_tiling_kernels(ctx, &iq4x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
