/*
 * The q3kx32k4 family (kernel/q3kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q3_K definition
 * (walking the file's bytes forward: hmask[l] bit b is the high bit of value
 * 32b + l, bits 2g of qs[32h + l] the low 2 bits of value 128h + 32g + l,
 * then 12 packed scale bytes and d), on a weight of 37 rows (one whole tile
 * and a part tile) x 3 blocks and on a narrowed, offset view of a wider one;
 * the plan's refusals; every kernel of the family (GEMV and GEMM) on blocks of
 * random bytes (every scale and high-bit pattern) and at the sums' bounds
 * (every quant and scale at either end) against the reference; and dispatch
 * through a pw_weight: GEMV takes the family's kernel of the context's level
 * where there is one, GEMM the i8g kernel under the fastest policy, each form
 * packed once; among the family's kernels alone, GEMV and GEMM take the
 * level's; and each GEMM kernel over a weight whose activations take two passes.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "kernel/q3kx.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 3520, BLOCK = 110 };

/* The 3-bit quants (0..7: low2 + 4 x the hmask bit) of one Q3_K block, from the
 * format's definition, its bytes walked forward. */
static void q3_k_quants(const uint8_t *blk, int q[256]) {
    const uint8_t *hmask = blk, *qs = blk + 32;
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l)
            for (int g = 0; g < 4; ++g) q[128 * h + 32 * g + l] = qs[32 * h + l] >> (2 * g) & 3;
    for (int l = 0; l < 32; ++l)
        for (int b = 0; b < 8; ++b) q[32 * b + l] += 4 * (hmask[l] >> b & 1);
}

/* The quant of value e of row r (0..31) as q3kx.h lays it out: steps 0..2 of a
 * sub-block in bits 0-2 of a nibble of their own load, step 3's bit k in bit 3 of
 * the nibble of load k. */
static int layout_quant(const uint8_t *rec, int r, int e) {
    const int s = e / 16, u = e % 16 / 4, j = e % 4, sh = r < 16 ? 0 : 4;
    const uint8_t *at = rec + 192 * s + 4 * (r % 16) + j;
    if (u < 3) return at[64 * u] >> sh & 7;
    return (at[0] >> (3 + sh) & 1) | (at[64] >> (3 + sh) & 1) << 1 | (at[128] >> (3 + sh) & 1) << 2;
}

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    int q[256] = {0};
    if (src) q3_k_quants(src, q);
    for (int e = 0; e < 256; ++e) {
        const int got = layout_quant(rec, r, e);
        if (got != q[e] && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld value %d: quant %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, e, got, q[e]);
    }
    /* scale byte i (block byte 96 + i) at 3072 + 192 (r / 16) + 16 i + r % 16; d (bytes
     * 108-109) at 3456 + 2r */
    for (int i = 0; i < 12; ++i)
        pw_test_tiling_byte(item, (size_t)(3072 + 192 * (r / 16) + 16 * i + r % 16), 96 + i,
                            "scale byte", i);
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(3456 + 2 * r + k), 108 + k, "d byte", k);
}

static const pw_test_tiling q3kx = {
    .format = PW_FORMAT_Q3_K,
    .other = PW_FORMAT_Q4_K,
    .family = "q3kx32k4",
    .nr = TILE,
    .kr = 4,
    .group = 16,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q3kx_pack_plan,
    .pack = pw__q3kx_pack,
    .check_record = check_record,
    .scales_at = 108,
    .kernel_stem = "q3_k_q3kx32k4",
    .i8g_stem = "q3_k_i8g16",
    .arm_family_gemm = PW_TEST_ARM_FAMILY_GEMM,
};

/*
 * Blocks of random bytes (every 6-bit scale and high-bit pattern, which a quantizer of
 * smooth data rarely writes side by side) with finite positive d (the block's last two
 * bytes): every kernel of the family the context can run against the oracle, on 45 rows
 * (a whole and a part tile) x 3 blocks, n = 1, 3 and 13 (the GEMM kernels' panels split
 * 13 rows).
 */
static void test_random_blocks(pw_context *ctx) { pw_test_tiling_random(ctx, &q3kx, 1, 12); }

/*
 * At the sums' bounds: every quant and scale at one end, all bytes 0xFF (q = 7, scale 63:
 * weights 31 x 3) or all 0x00 (q = 0, scale 0: weights -32 x -4, the largest product),
 * d = 0.001, against activations all +1 and all -1 (int8 +-127), on 37 rows x 3 blocks,
 * n = 1, 3 and 5. Random data never reaches these sums (an int16 sum that saturates
 * there passes every random case).
 */
static void test_bounds(pw_context *ctx) {
    enum { OUT = 37, NB = 3, N = 5 };
    pw_test_tiling_at_fill(ctx, &q3kx, OUT, NB, N, 1, 0xFF);
    pw_test_tiling_at_fill(ctx, &q3kx, OUT, NB, N, 1, 0x00);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q3kx, 1, PW_TEST_TILING_MAKER(pw__q3kx_record_from_blocks),
                           PW_TEST_TILING_MAKER_AVX512(pw__q3kx_record_from_blocks_avx512));
    test_random_blocks(ctx);
    test_bounds(ctx);
    pw_test_tiling_kernels(ctx, &q3kx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
