/*
 * The q6kx32k4 family (kernel/q6kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q6_K definition
 * (walking the file's bytes forward: low nibble of ql[64h + m] is value
 * 128h + m, its high nibble value 128h + 64 + m, bits 2g of qh[32h + l] value
 * 128h + 32g + l), on a weight of 37 rows (one whole tile and a part tile) x
 * 3 blocks and on a narrowed, offset view of a wider one; the plan's
 * refusals; every kernel of the family (the GEMV and GEMM ones) on blocks of
 * random bytes and at the sums' bounds against the reference; and dispatch
 * through a pw_weight: GEMV (n = 1) takes the family's AVX-512 kernel where
 * the context can run it,
 * GEMM (n >= 2) keeps the i8g kernel, each form packed once. This file derives the layout; the
 * weights, the walk over the records and the plan and dispatch checks are
 * tiling_test.c's. Numerical results of the kernels are test_kernels.c's.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
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

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    int q[256] = {0};
    if (src) q6_k_quants(src, q);
    for (int e = 0; e < 256; ++e) {
        const int lo = rec[low_byte(r, e)] >> low_shift(r) & 15;
        const int hi = rec[high_byte(r, e)] >> high_shift(r, e) & 3;
        if (lo + 16 * hi != q[e] && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld value %d: quant %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, e, lo + 16 * hi, q[e]);
    }
    /* scale s (block byte 192 + s) at 6144 + 32s + r; d (bytes 208-209) at 6656 + 2r */
    for (int s = 0; s < 16; ++s)
        pw_test_tiling_byte(item, (size_t)(6144 + 32 * s + r), 192 + s, "scale", s);
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(6656 + 2 * r + k), 208 + k, "d byte", k);
}

static const pw_test_tiling q6kx = {
    .format = PW_FORMAT_Q6_K,
    .other = PW_FORMAT_Q4_K,
    .family = "q6kx32k4",
    .nr = TILE,
    .kr = 4,
    .group = 16,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q6kx_pack_plan,
    .pack = pw__q6kx_pack,
    .check_record = check_record,
    .scales_at = 208,
    .kernel_stem = "q6_k_q6kx32k4",
    .i8g_stem = "q6_k_i8g16",
    .arm_family_gemm = PW_TEST_ARM_FAMILY_GEMM,
};

/*
 * Blocks of random bytes (a quantizer rarely writes quants 0 and 63 or scales
 * near -128 and 127 side by side, where a kernel's integer sums are largest)
 * with finite positive d: every kernel of the family the context can run
 * against the oracle, on 45 rows (a whole and a part tile) x 3 blocks, n = 1,
 * 3 and 13 (the GEMM kernels' panels split 13 rows).
 */
static void test_random_blocks(pw_context *ctx) { pw_test_tiling_random(ctx, &q6kx, 1, 12); }

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q6kx, 1, PW_TEST_TILING_MAKER(pw__q6kx_record_from_blocks), NULL,
                           NULL);
    test_random_blocks(ctx);
    /* quants 63 (the AVX2 two-step int16 sums reach 2 x 2 x 63 x 127 = 32004), scales -1 */
    pw_test_tiling_at_bounds(ctx, &q6kx, 37, 3, 5, 1);
    pw_test_tiling_dispatch(ctx, &q6kx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
