/*
 * The q2kx32k4 family (kernel/q2kx.h): the packer's bytes against the layout
 * the header documents, derived here on its own from the Q2_K definition
 * (16 scale bytes, then qs walked forward: bits 2g of qs[32h + l] are the
 * quant of value 128h + 32g + l, then d and dmin), on a weight of 37 rows (one
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

/* The 2-bit quants (0..3) of one Q2_K block, from the format's definition, its qs
 * walked forward. */
static void q2_k_quants(const uint8_t *blk, int q[256]) {
    const uint8_t *qs = blk + QS;
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l)
            for (int g = 0; g < 4; ++g) q[128 * h + 32 * g + l] = qs[32 * h + l] >> (2 * g) & 3;
}

/* The quant of value e of row r (0..31) as q2kx.h lays it out: sub-block s, step u,
 * lane j; step u in load u % 2 of the sub-block, in its low 2 bits for u < 2, the next
 * 2 for u >= 2; rows 16..31 the high nibble. */
static int layout_quant(const uint8_t *rec, int r, int e) {
    const int s = e / 16, u = e % 16 / 4, j = e % 4;
    const uint8_t byte = rec[128 * s + 64 * (u & 1) + 4 * (r % 16) + j];
    const int nibble = r < 16 ? byte & 15 : byte >> 4;
    return u < 2 ? nibble & 3 : nibble >> 2;
}

/* Every byte of row r's share of a record against source block src (zeros past out). */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    int q[256] = {0};
    if (src) q2_k_quants(src, q);
    for (int e = 0; e < 256; ++e) {
        const int got = layout_quant(rec, r, e);
        if (got != q[e] && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld value %d: quant %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, e, got, q[e]);
    }
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
    enum { OUT = 37, NB = 3, N = 5 };
    const int64_t in = NB * 256;
    uint8_t *bytes = malloc((size_t)(OUT * NB * BLOCK));
    float *x = malloc(sizeof(float) * (size_t)(N * in));
    CHECK(bytes != NULL && x != NULL, "out of memory");
    if (bytes != NULL && x != NULL) {
        static const struct {
            uint8_t scales, qs;
            const char *what;
        } cases[] = {{0xFF, 0xFF, "at the bounds (scales and mins 15, q 3)"},
                     {0x0F, 0xFF, "at the bounds (scales 15, mins 0, q 3)"},
                     {0xF0, 0x00, "at the bounds (scales 0, mins 15, q 0)"}};
        const uint16_t d = pw__f32_to_f16(0.001f);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            for (int k = 0; k < OUT * NB; ++k) {
                uint8_t *blk = bytes + (size_t)k * BLOCK;
                memset(blk, cases[c].scales, QS);
                memset(blk + QS, cases[c].qs, D - QS);
                memcpy(blk + D, &d, 2);
                memcpy(blk + D + 2, &d, 2);
            }
            for (int sign = -1; sign <= 1; sign += 2) {
                for (int64_t i = 0; i < N * in; ++i) x[i] = (float)sign;
                pw_test_tiling_vs_oracle_x(ctx, &q2kx, bytes, OUT, NB, N, x, cases[c].what);
            }
        }
    }
    free(x);
    free(bytes);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    pw_test_tiling_layout(ctx, &q2kx);
    pw_test_tiling_refusals(ctx, &q2kx);
    test_random_blocks(ctx);
    pw_test_tiling_record_maker(ctx, &q2kx, 2, pw__q2kx_record_from_blocks,
                                "pw__q2kx_record_from_blocks");
#if defined(__x86_64__)
    if (pw_test_tiling_avx512(ctx)) /* the input-block-major AVX-512 GEMM's maker */
        pw_test_tiling_record_maker(ctx, &q2kx, 2, pw__q2kx_record_from_blocks_avx512,
                                    "pw__q2kx_record_from_blocks_avx512");
#endif
    test_bounds(ctx);
    pw_test_tiling_dispatch(ctx, &q2kx);
    pw_test_tiling_family_kernels(ctx, &q2kx);
    pw_test_tiling_gemm_large(ctx, &q2kx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
