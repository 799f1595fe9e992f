/*
 * The tq2x32k4 family (kernel/tq2x.h): the packer's bytes against the layout
 * the header documents, derived on its own from the TQ2_0 definition (qs
 * walked forward: bits 2g of qs[32h + l] are the trit of value 128h + 32g + l,
 * in q2kx32k4's quant bytes: pw_test_tiling_q2_values in tiling_test.c, which
 * Q2_K's test shares; then d), on a weight of 37 rows (one whole tile and a part
 * tile) x 3 blocks and on a narrowed, offset view of a wider one; the plan's
 * refusals; every kernel of the family (GEMV and GEMM) on blocks of random bytes
 * (trits 3 too, which ggml never writes but the format decodes as 2 d) and at the
 * sums' bounds against the reference; the record maker against the packer; and
 * dispatch through a pw_weight: GEMV takes the family's kernel of the context's
 * level where there is one, GEMM the i8g kernel under the fastest policy, each
 * form packed once; among the family's kernels alone, GEMV and GEMM take the
 * level's; and each GEMM kernel over a weight whose activations take two passes.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "kernel/tq2x.h"

#include <stdint.h>

enum { TILE = 32, RECORD = 2112, BLOCK = 66, D = 64 };

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const int r = item->r;
    pw_test_tiling_q2_values(item, 0, "trit");
    /* d (bytes 64-65) at 2048 + 2r */
    for (int k = 0; k < 2; ++k) pw_test_tiling_byte(item, (size_t)(2048 + 2 * r + k), D + k, "d byte", k);
}

static const pw_test_tiling tq2x = {
    .format = PW_FORMAT_TQ2_0,
    .other = PW_FORMAT_TQ1_0,
    .family = "tq2x32k4",
    .nr = TILE,
    .kr = 4,
    .group = 256,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .plan = pw__tq2x_pack_plan,
    .pack = pw__tq2x_pack,
    .check_record = check_record,
    .scales_at = D,
    .kernel_stem = "tq2_0_tq2x32k4",
    .i8g_stem = "tq2_0_i8g32",
    .arm_family_gemm = PW_TEST_ARM_FAMILY_GEMM_DOTPROD,
};

/*
 * Blocks of random bytes (every trit pattern, 3 included) with finite positive d:
 * every kernel of the family the context can run against the oracle, on 45 rows (a
 * whole and a part tile) x 3 blocks, n = 1, 3 and 13 (the GEMM kernels' panels split
 * 13 rows).
 */
static void test_random_blocks(pw_context *ctx) { pw_test_tiling_random(ctx, &tq2x, 1, 23); }

/*
 * At the sums' bounds: every trit at 3 (qs bytes 0xFF: the largest dot, 256 * 3 * 127,
 * and the largest lane of the AVX-512 kernels' whole-byte sum, 51 a byte), at 2 (0xAA,
 * the largest trit ggml writes) and at 0 (0x00: the dot zero, the -1 term alone), d =
 * 0.001, against activations all +1 and all -1 (int8 +-127), on 37 rows x 3 blocks,
 * n = 1, 3 and 5 (pw_test_tiling_at_fill).
 */
static void test_bounds(pw_context *ctx) {
    static const uint8_t fills[] = {0xFF, 0xAA, 0x00};
    for (size_t c = 0; c < sizeof fills; ++c) pw_test_tiling_at_fill(ctx, &tq2x, 37, 3, 5, 1, fills[c]);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_packing(ctx, &tq2x, 1, PW_TEST_TILING_MAKER(pw__tq2x_record_from_blocks),
                           PW_TEST_TILING_MAKER_AVX512(pw__tq2x_record_from_blocks_avx512));
    test_random_blocks(ctx);
    test_bounds(ctx);
    pw_test_tiling_kernels(ctx, &tq2x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
