/*
 * The tq1x32k4 family (kernel/tq1x.h): the trit identity the kernels decode with,
 * on every byte and trit; the packer's bytes against the layout the header
 * documents, derived here on its own from the TQ1_0 definition (trit k of qs[m]
 * is value 32k + m, of qs[32 + m] value 160 + 16k + m, of qh[j] value 240 + 4k +
 * j; each value's trit also taken from the format's decoder), on a weight of 37
 * rows (one whole tile and a part tile) x 3 blocks and on a narrowed, offset view
 * of a wider one; the plan's refusals; every kernel of the family (GEMV and GEMM)
 * on blocks of random bytes and at the sums' bounds against the reference; the
 * record maker against the packer; and dispatch through a pw_weight.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"
#include "format/format_internal.h"
#include "kernel/tq1x.h"

#include <math.h>
#include <stdint.h>

enum { TILE = 32, RECORD = 1728, BLOCK = 54, D = 52 };

/* Trit k of byte b by the format's definition: ((uint8_t)(b * 3^k) * 3) >> 8. */
static int format_trit(int b, int k) {
    int p = 1;
    for (int i = 0; i < k; ++i) p *= 3;
    return ((uint8_t)(b * p) * 3) >> 8;
}

/* The compare form the kernels use ([v >= 86] + [v >= 171] of v = b * 3^k mod 256,
 * the times-3 steps as byte adds) is the format's trit, for all 256 bytes and k. */
static void test_trit_identity(void) {
    for (int b = 0; b < 256; ++b) {
        uint8_t v = (uint8_t)b;
        for (int k = 0; k < 5; ++k) {
            CHECK(pw__tq1x_trit(v) == format_trit(b, k), "byte %d trit %d: %d, want %d", b, k,
                  pw__tq1x_trit(v), format_trit(b, k));
            v = (uint8_t)(v + v + v);
        }
    }
}

/* Where the format keeps value e: its byte in the block and its trit. */
static void format_place(int e, int *byte, int *k) {
    if (e < 160) {
        *byte = e % 32;
        *k = e / 32;
    } else if (e < 240) {
        *byte = 32 + (e - 160) % 16;
        *k = (e - 160) / 16;
    } else {
        *byte = 48 + (e - 240) % 4;
        *k = (e - 240) / 4;
    }
}

/* Every byte of row r's share of a record against source block src (zeros past out):
 * by tq1x.h, trit k of byte j of dword g (at 128 g + 64 (r / 16) + 4 (r % 16) + j) is
 * value 32k + 4g + j (g < 8), 160 + 16k + 4(g - 8) + j (g < 12), 240 + 4k + j (g = 12);
 * its byte must be the format's byte of that value, its trit the decoder's. */
static void check_record(const pw_test_tiling_record *item) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    float v[256] = {0};
    float d = 0.0f;
    if (src) {
        pw__format(PW_FORMAT_TQ1_0)->decode(src, 1, v);
        uint16_t h;
        memcpy(&h, src + D, 2);
        d = pw__f16_to_f32(h);
    }
    for (int g = 0; g < 13; ++g)
        for (int j = 0; j < 4; ++j) {
            const size_t at = (size_t)(128 * g + 64 * (r / 16) + 4 * (r % 16) + j);
            for (int k = 0; k < (g < 12 ? 5 : 4); ++k) {
                const int e = g < 8 ? 32 * k + 4 * g + j
                              : g < 12 ? 160 + 16 * k + 4 * (g - 8) + j
                                       : 240 + 4 * k + j;
                int byte, fk;
                format_place(e, &byte, &fk);
                CHECK(fk == k, "value %d: trit %d, the format's %d", e, k, fk);
                if (k == 0) pw_test_tiling_byte(item, at, byte, "trit byte", byte);
                const int want = src ? (int)lrintf(v[e] / d) + 1 : 0;
                const int got = format_trit(rec[at], k);
                if (got != want && pw_test_tiling_report(item))
                    CHECK(0, "%s: row %lld block %lld value %d: trit %d, want %d", item->what,
                          (long long)item->row, (long long)item->block, e, got, want);
            }
        }
    for (int k = 0; k < 2; ++k)
        pw_test_tiling_byte(item, (size_t)(1664 + 2 * r + k), D + k, "d byte", k);
}

static const pw_test_tiling tq1x = {
    .format = PW_FORMAT_TQ1_0,
    .other = PW_FORMAT_TQ2_0,
    .family = "tq1x32k4",
    .nr = TILE,
    .kr = 4,
    .group = 256,
    .block_elems = 256,
    .block_bytes = BLOCK,
    .record_bytes = RECORD,
    .scales_at = D,
    .plan = pw__tq1x_pack_plan,
    .pack = pw__tq1x_pack,
    .check_record = check_record,
    .kernel_stem = "tq1_0_tq1x32k4",
    .i8g_stem = "tq1_0_i8g32",
};

/*
 * Blocks of random bytes (every byte value, so every trit pattern and the qh bytes'
 * padding trit) with finite positive d: every kernel of the family the context can
 * run against the oracle, on 45 rows (a whole and a part tile) x 3 blocks, n = 1, 3
 * and 13 (the GEMM kernels' panels split 13 rows).
 */
static void test_random_blocks(pw_context *ctx) { pw_test_tiling_random(ctx, &tq1x, 1, 17); }

/*
 * At the sums' bounds: every trit 2 (bytes 0xFF: sum t x.qs at 2 * 256 * 127) and every
 * trit 0 (bytes 0x00: the -x.sum term alone), d = 0.001, against activations all +1
 * and all -1 (int8 +-127), on 37 rows x 3 blocks, n = 1, 3 and 5.
 */
static void test_bounds(pw_context *ctx) {
    enum { OUT = 37, NB = 3, N = 5 };
    pw_test_tiling_at_fill(ctx, &tq1x, OUT, NB, N, 1, 0xFF);
    pw_test_tiling_at_fill(ctx, &tq1x, OUT, NB, N, 1, 0x00);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    test_trit_identity();
    pw_test_tiling_packing(ctx, &tq1x, 1, PW_TEST_TILING_MAKER(pw__tq1x_record_from_blocks), NULL,
                           NULL);
    test_random_blocks(ctx);
    test_bounds(ctx);
    pw_test_tiling_kernels(ctx, &tq1x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
