/*
 * The q5kx32k4 family (kernel/q5kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q5_K definition
 * (bytes 0-1 d, 2-3 dmin, 4-15 packed scales, 16-47 qh, then 64-element
 * chunk c in bytes 48 + [32c, 32c + 32), its first 32 elements low, last 32
 * high, each element's bit 4 in qh[e % 32] at bit 2c for the low 32 and 2c + 1
 * for the high, as ggml's dequantize_row_q5_K walks them), on a weight of 37
 * rows (one whole tile and a part tile) x 3 super-blocks and on a narrowed,
 * offset view of a wider one; the plan's refusals; every kernel of the family
 * (GEMV and GEMM) on blocks of random bytes (every 6-bit scale, min and qh bit
 * pattern) and at the sums' bounds against the reference; and dispatch
 * through a pw_weight: GEMV takes the family's kernel of the context's level
 * where there is one, GEMM the i8g kernel under the fastest policy, each form
 * packed once.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "kernel/q5kx.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 5632, BLOCK = 176 };

/* Element e (0..255) of a Q5_K block as 5 bits, from the format's definition. */
static int q5_k_value(const uint8_t *blk, int e) {
    const int c = e / 64, high = e % 64 >= 32, l = e % 32;
    const uint8_t byte = blk[48 + 32 * c + l];
    const int nib = high ? byte >> 4 : byte & 15;
    const int u = 1 << (2 * c + high);
    return nib + (blk[16 + l] & u ? 16 : 0);
}

/* Where q5kx.h puts element e of row r (0..31) of a record: the nibble's byte and
 * shift, the bit-4 byte and bit; and packed scale byte i of row r. */
static size_t layout_byte(int r, int e) { return (size_t)(64 * (e / 4) + 4 * (r % 16) + e % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }
static size_t layout_bit_byte(int r, int e) {
    return (size_t)(4608 + 128 * (e / 32) + 64 * (r / 16) + 4 * (r % 16) + e % 4);
}
static int layout_bit(int r, int e) { (void)r; return (e / 4) % 8; }
static size_t layout_scale(int r, int i) {
    return (size_t)(4224 + 192 * (r / 16) + 16 * i + r % 16);
}

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int e = 0; e < 256; ++e) {
        const int got = ((rec[layout_byte(r, e)] >> layout_shift(r)) & 15) +
                        16 * (rec[layout_bit_byte(r, e)] >> layout_bit(r, e) & 1);
        const int want = src ? q5_k_value(src, e) : 0;
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld e %d: value %d, want %d", item->what,
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

static const pw_test_tiling q5kx = {
    .format = PW_FORMAT_Q5_K,
    .other = PW_FORMAT_Q4_K,
    .family = "q5kx32k4",
    .nr = TILE,
    .kr = 4,
    .group = 32,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q5kx_pack_plan,
    .pack = pw__q5kx_pack,
    .check_record = check_record,
    .kernel_stem = "q5_k_q5kx32k4",
    .i8g_stem = "q5_k_i8g32",
};

/*
 * Blocks of random bytes (every 6-bit scale and min pattern and every qh bit, which a
 * quantizer of smooth data rarely sets all of) with finite positive d and dmin: every
 * kernel of the family the context can run against the oracle, on 45 rows (a whole and
 * a part tile) x 3 super-blocks, n = 1, 3 and 13 (the GEMM kernel's panels split 13
 * rows).
 */
static void test_random_bytes(pw_context *ctx) { pw_test_tiling_random(ctx, &q5kx, 2, 12); }

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q5kx, 2, PW_TEST_TILING_MAKER(pw__q5kx_record_from_blocks), NULL,
                           NULL);
    test_random_bytes(ctx);
    pw_test_tiling_at_bounds(ctx, &q5kx, 37, 2, 5, 2); /* the AVX2 int16 sums' bound */
    pw_test_tiling_dispatch(ctx, &q5kx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
