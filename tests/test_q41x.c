/*
 * The q41x32k4 and q51x32k4 families (kernel/q41x.h): the packer's bytes against
 * the layout the header documents, derived here on its own from the Q4_1 and Q5_1
 * definitions (bytes 0-1 d, 2-3 m; Q5_1 then 4-7 qh, a little-endian uint32 whose
 * bit e is bit 4 of element e; then byte j of the nibbles holding element j low
 * and j + 16 high), on a weight of 37 rows (one whole tile and a part tile) x 3
 * blocks and on a narrowed, offset view of a wider one; the plan's refusals;
 * dispatch through a pw_weight; which kernels of each family rank where; every
 * kernel of each family the context can run against the oracle on blocks of random
 * bytes (every qh pattern, positive minima) and at the sums' bounds; and a GEMM at
 * a size that spans several passes.
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"
#include "tiling_test.h"

#include "format/blocks.h"

#include "kernel/q41x.h"

#include <stdint.h>

enum { TILE = 32 };

/* Element e (0..31) of a block, 4 or 5 bits, from the format's definition: the nibbles
 * at byte 4 (Q4_1) or 8 (Q5_1, after qh at 4). */
static int block_value(const uint8_t *blk, int e, int q5) {
    const uint8_t byte = blk[(q5 ? 8 : 4) + e % 16];
    const int low = e < 16 ? byte & 15 : byte >> 4;
    if (!q5) return low;
    const uint32_t qh = (uint32_t)blk[4] | (uint32_t)blk[5] << 8 | (uint32_t)blk[6] << 16 |
                        (uint32_t)blk[7] << 24;
    return low + 16 * (int)(qh >> e & 1);
}

/* Where q41x.h (through q4x.h and q5x.h) puts element k of row r (0..31) of a record:
 * the nibble's byte and shift, the plane byte and bit of its bit 4 (Q5_1), d and m. */
static size_t layout_byte(int r, int k) { return (size_t)(64 * (k / 4) + 4 * (r % 16) + k % 4); }
static int layout_shift(int r) { return r < 16 ? 0 : 4; }
static size_t layout_plane_byte(int r, int k) {
    return (size_t)(576 + 64 * (r / 16) + 4 * (r % 16) + k % 4);
}
static int layout_plane_bit(int k) { return k / 4; }
static size_t layout_d(int r) { return (size_t)(512 + 2 * r); }
static size_t layout_m(int r, int q5) { return (size_t)((q5 ? 704 : 576) + 2 * r); }

static void check_record_any(const pw_test_tiling_record *item, int q5) {
    const uint8_t *rec = item->rec, *src = item->src;
    const int r = item->r;
    for (int k = 0; k < 32; ++k) {
        int got = (rec[layout_byte(r, k)] >> layout_shift(r)) & 15;
        if (q5) got += 16 * (rec[layout_plane_byte(r, k)] >> layout_plane_bit(k) & 1);
        const int want = src ? block_value(src, k, q5) : 0;
        if (got != want && pw_test_tiling_report(item))
            CHECK(0, "%s: row %lld block %lld k %d: value %d, want %d", item->what,
                  (long long)item->row, (long long)item->block, k, got, want);
    }
    for (int k = 0; k < 2; ++k) {
        pw_test_tiling_byte(item, layout_d(r) + (size_t)k, k, "d byte", k);
        pw_test_tiling_byte(item, layout_m(r, q5) + (size_t)k, 2 + k, "m byte", k);
    }
}
static void check_q4_1(const pw_test_tiling_record *item) { check_record_any(item, 0); }
static void check_q5_1(const pw_test_tiling_record *item) { check_record_any(item, 1); }

static const pw_test_tiling families[2] = {
    {
        .format = PW_FORMAT_Q4_1,
        .other = PW_FORMAT_Q4_0,
        .family = "q41x32k4",
        .nr = TILE,
        .kr = 4,
        .group = 32,
        .block_elems = 32,
        .block_bytes = 20,
        .record_bytes = 640,
        .plan = pw__q41x_pack_plan,
        .pack = pw__q41x_pack,
        .check_record = check_q4_1,
        .kernel_stem = "q4_1_q41x32k4",
        .i8g_stem = "q4_1_i8g32",
    },
    {
        .format = PW_FORMAT_Q5_1,
        .other = PW_FORMAT_Q5_0,
        .family = "q51x32k4",
        .nr = TILE,
        .kr = 4,
        .group = 32,
        .block_elems = 32,
        .block_bytes = 24,
        .record_bytes = 768,
        .plan = pw__q51x_pack_plan,
        .pack = pw__q51x_pack,
        .check_record = check_q5_1,
        .kernel_stem = "q5_1_q51x32k4",
        .i8g_stem = "q5_1_i8g32",
    },
};

/* Blocks of random bytes with finite positive d and m: every kernel of the family
 * against the oracle, on 45 rows (a whole and a part tile) x 10 blocks (the AVX-512
 * GEMV's grouped path needs whole groups of 8: 320 values take the other) and x 16,
 * n = 1, 3 and 13. */
static void test_random_bytes(pw_context *ctx, const pw_test_tiling *t) {
    enum { OUT = 45, N = 13 };
    const int nbs[2] = {10, 16};
    pw_rng r = {29};
    for (int c = 0; c < 2; ++c) {
        uint8_t *bytes = pw_test_tiling_random_blocks(t, OUT * nbs[c], 2, &r);
        pw_test_tiling_vs_oracle(ctx, t, bytes, OUT, nbs[c], N, &r, "random bytes");
        free(bytes);
    }
}

int main(void) {
    pw_context *ctx = pw_test_context();
    for (int i = 0; i < 2; ++i) {
        const pw_test_tiling *t = &families[i];
        pw_test_tiling_layout(ctx, t);
        pw_test_tiling_record_maker(ctx, t, 2,
                                    i ? pw__q51x_record_from_blocks : pw__q41x_record_from_blocks,
                                    i ? "pw__q51x_record_from_blocks" : "pw__q41x_record_from_blocks");
        pw_test_tiling_refusals(ctx, t);
        pw_test_tiling_dispatch(ctx, t);
        pw_test_tiling_family_kernels(ctx, t);
        test_random_bytes(ctx, t);
        pw_test_tiling_at_bounds(ctx, t, 37, 16, 5, 2); /* the AVX2 int16 sums' bound */
        pw_test_tiling_gemm_large(ctx, t);
    }
    pw_context_destroy(ctx);
    return pw_test_finish();
}
