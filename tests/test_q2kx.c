/*
 * The q2kx32k4 family (kernel/q2kx.h): the packer's bytes against the layout
 * the header documents, derived on its own from the Q2_K definition (16 scale
 * bytes, then qs walked forward: bits 2g of qs[32h + l] are the quant of value
 * 128h + 32g + l, by pw_test_tiling_q2_values in tiling_test.c, which TQ2_0's
 * test shares; then d and dmin), on a weight of 37 rows (one
 * whole tile and a part tile) x 3 blocks and on a narrowed, offset view of a
 * wider one; the plan's refusals; every kernel of the family (GEMV and GEMM)
 * on blocks of random bytes (every scale and min pattern) and at the sums'
 * bounds (every quant, scale and min at its top) against the reference; and
 * dispatch through a pw_weight: GEMV takes the family's kernel of the
 * context's level where there is one, GEMM the i8g kernel under the fastest
 * policy, each form packed once; among the family's kernels alone, GEMV and
 * GEMM take the level's; and each GEMM kernel over a weight whose activations
 * take two passes.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "kernel/q2kx.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 2688, BLOCK = 84, QS = 16, D = 80 };

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const int r = item->r;
    pw_test_tiling_q2_values(item, QS, "quant");
    /* scale byte s (block byte s) at 2048 + 32 s + r; d (bytes 80-81) at 2560 + 2r,
     * dmin (bytes 82-83) at 2624 + 2r */
    for (int s = 0; s < 16; ++s)
        pw_test_tiling_byte(item, (size_t)(2048 + 32 * s + r), s, "scale byte", s);
    for (int k = 0; k < 2; ++k) {
        pw_test_tiling_byte(item, (size_t)(2560 + 2 * r + k), D + k, "d byte", k);
        pw_test_tiling_byte(item, (size_t)(2624 + 2 * r + k), D + 2 + k, "dmin byte", k);
    }
}

static const pw_test_tiling q2kx = {
    .format = PW_FORMAT_Q2_K,
    .other = PW_FORMAT_Q3_K,
    .family = "q2kx32k4",
    .nr = TILE,
    .kr = 4,
    .group = 16,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__q2kx_pack_plan,
    .pack = pw__q2kx_pack,
    .check_record = check_record,
    .scales_at = D,
    .kernel_stem = "q2_k_q2kx32k4",
    .i8g_stem = "q2_k_i8g16",
    .arm_family_gemm = PW_TEST_ARM_FAMILY_GEMM,
};

/*
 * Blocks of random bytes (every scale and min pair, which a quantizer of smooth data
 * rarely writes side by side) with finite positive d and dmin (the block's last four
 * bytes): every kernel of the family the context can run against the oracle, on 45
 * rows (a whole and a part tile) x 3 blocks, n = 1, 3 and 13 (the GEMM kernels' panels
 * split 13 rows).
 */
static void test_random_blocks(pw_context *ctx) { pw_test_tiling_random(ctx, &q2kx, 2, 13); }

/*
 * At the sums' bounds: every quant at 3 (qs bytes 0xFF) and every scale byte 0xFF
 * (scale and min 15), 0x0F (scale 15, min 0: the scaled dots alone at their top) or
 * 0xF0 (min 15 with quants 0: the min sums alone), d = dmin = 0.001, against
 * activations all +1 and all -1 (int8 +-127), on 37 rows x 3 blocks, n = 1, 3 and 5.
 * Random data never reaches these sums (an int16 sum that saturates there passes every
 * random case).
 */
static void test_bounds(pw_context *ctx) {
    static const struct {
        uint8_t scales, qs;
        const char *what;
    } cases[] = {{0xFF, 0xFF, "at the bounds (scales and mins 15, q 3)"},
                 {0x0F, 0xFF, "at the bounds (scales 15, mins 0, q 3)"},
                 {0xF0, 0x00, "at the bounds (scales 0, mins 15, q 0)"}};
    const uint16_t d = pw__f32_to_f16(0.001f);
    uint8_t blk[BLOCK];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        memset(blk, cases[c].scales, QS);
        memset(blk + QS, cases[c].qs, D - QS);
        memcpy(blk + D, &d, 2);
        memcpy(blk + D + 2, &d, 2);
        pw_test_tiling_at_block(ctx, &q2kx, 37, 3, 5, blk, cases[c].what);
    }
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &q2kx, 2, PW_TEST_TILING_MAKER(pw__q2kx_record_from_blocks),
                           PW_TEST_TILING_MAKER_AVX512(pw__q2kx_record_from_blocks_avx512));
    test_random_blocks(ctx);
    test_bounds(ctx);
    pw_test_tiling_kernels(ctx, &q2kx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
