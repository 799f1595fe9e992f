/*
 * The q5x32k4 family (kernel/q5x.h): the packer's bytes against the layout the
 * header documents, derived here on its own from the Q5_0 definition (bytes
 * 0-1 d, 2-5 qh, a little-endian uint32 whose bit e is bit 4 of element e,
 * then byte 6 + j holding element j low and j + 16 high), on a weight of 37
 * rows (one whole tile and a part tile) x 3 blocks and on a narrowed, offset
 * view of a wider one; the plan's refusals; dispatch through a pw_weight (GEMV
 * takes the family's kernel of the context's level where there is one, GEMM the
 * i8g kernel under the fastest policy); which kernels of the family rank where;
 * every kernel of the family the context can run against the oracle on blocks of
 * random bytes (every qh pattern) and at the sums' bounds; and a GEMM at a size that
 * spans several passes.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"

#include "kernel/q5x.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 704, BLOCK = 22 };

/* Element e (0..31) of a Q5_0 block as 5 bits, from the format's definition. */
static int q5_0_value(const uint8_t *blk, int e) {
    const uint8_t byte = blk[6 + e % 16];
    const uint32_t qh = (uint32_t)blk[2] | (uint32_t)blk[3] << 8 | (uint32_t)blk[4] << 16 |
                        (uint32_t)blk[5] << 24;
    return (e < 16 ? byte & 15 : byte >> 4) + 16 * (int)(qh >> e & 1);
}

/* Where q5x.h puts element k of row r (0..31) of a record: the nibble's byte and shift,
 * the plane byte and bit of its bit 4. */
static size_t layout_byte(int r, int k) { return (size_t)(64 * (k / 4) + 4 * (r % 16) + k % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }
static size_t layout_plane_byte(int r, int k) {
    return (size_t)(576 + 64 * (r / 16) + 4 * (r % 16) + k % 4);
}
static int layout_plane_bit(int k) { return k / 4; }

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int k = 0; k < 32; ++k) {
        const int got = ((rec[layout_byte(r, k)] >> layout_shift(r)) & 15) +
                        16 * (rec[layout_plane_byte(r, k)] >> layout_plane_bit(k) & 1);
        const int want = src ? q5_0_value(src, k) : 0;
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld k %d: value %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, k, got, want);
    }
    /* d (the block's bytes 0-1) at 512 + 2r */
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(512 + 2 * r + k), k, "d byte", k);
}

static const pw_test_tiling q5x = {
    .format = PW_FORMAT_Q5_0,
    .other = PW_FORMAT_Q4_0,
    .family = "q5x32k4",
    .nr = TILE,
    .kr = 4,
    .group = 32,
    .block_elems = 32,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q5x_pack_plan,
    .pack = pw__q5x_pack,
    .check_record = check_record,
    .kernel_stem = "q5_0_q5x32k4",
    .i8g_stem = "q5_0_i8g32",
};

/* Blocks of random bytes with a finite positive d: every kernel of the family against
 * the oracle, on 45 rows (a whole and a part tile) x 10 blocks (the AVX-512 GEMV's
 * grouped path needs whole groups of 8: 320 values take the other) and x 16, n = 1, 3
 * and 13. */
static void test_random_bytes(pw_context *ctx) {
    static const int64_t nbs[2] = {10, 16};
    pw_test_tiling_random_widths(ctx, &q5x, 1, 13, nbs, 2);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q5x, 1, PW_TEST_TILING_MAKER(pw__q5x_record_from_blocks), NULL,
                           NULL);
    test_random_bytes(ctx);
    pw_test_tiling_at_bounds(ctx, &q5x, 37, 16, 5, 1); /* the AVX2 int16 sums' bound */
    pw_test_tiling_kernels(ctx, &q5x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
