/*
 * What test_q4x.c, test_q4kx.c and test_q6kx.c share: the checks of a
 * private GEMV tiling (a packed family of nr-row tiles, one record per tile
 * and source block) that do not depend on where its bytes go.
 *
 * Each test keeps its own derivation of the layout from the format's
 * definition (that is what makes it a golden test; Q2_K's and TQ2_0's, whose
 * quant bytes are the same, share pw_test_tiling_q2_values) and hands it in
 * as a per-record checker; this file makes the quantized weights, packs views
 * into buffers poisoned with 0xA5 (so a byte the packer skips shows), walks
 * the records, and checks the plan, its refusals, and dispatch through a
 * pw_weight.
 */
#ifndef PW_TILING_TEST_H
#define PW_TILING_TEST_H

#include "kernel/kernel.h"

#include <stdint.h>

/* One record of a packed buffer: tile row r's share of one source block. */
typedef struct pw_test_tiling_record {
    const uint8_t *rec; /* the record (record_bytes bytes) */
    int r;              /* row within the tile, 0 .. nr - 1 */
    const uint8_t *src; /* that row's source block; NULL on a padding row (packed as zeros) */
    const char *what;   /* the view's label, for messages */
    int64_t row, block; /* source row (>= out on a padding row) and block, for messages */
    int *bad;           /* mismatches reported so far in this buffer */
} pw_test_tiling_record;

/*
 * Whether a checker should report one more mismatch as a CHECK failure: the
 * first 5 of a buffer are reported (the rest repeat them); counts it.
 */
int pw_test_tiling_report(const pw_test_tiling_record *rec);

/*
 * Byte `at` of the record must equal byte `from` of the source block (0 on a
 * padding row); a mismatch is reported as "<name> <index> is .., want ..".
 */
void pw_test_tiling_byte(const pw_test_tiling_record *rec, size_t at, int from, const char *name,
                         int index);

typedef struct pw_test_tiling {
    pw_format format;       /* the source format */
    pw_format other;        /* a format the plan must refuse */
    const char *family;     /* descriptor family, e.g. "q4x32k4" */
    int32_t nr, kr, group;  /* expected rows per tile, k interleave, elements per scale */
    int64_t block_elems;    /* elements per source block */
    uint64_t block_bytes;   /* bytes per source block */
    uint64_t record_bytes;  /* bytes of one tile's share of one source block */
    size_t scales_at;       /* where a block's fp16 d (then dmin) lie: 0 unless set (Q6_K: 208) */
    /* the family's packer, in its view form (PW__VIEW_PACKER in kernel/kernel.h) */
    pw_status (*plan)(pw_context *ctx, pw_format format, int64_t out, int64_t in, pw__pack_desc *d);
    void (*pack)(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst);
    /* Compares every byte of rec->rec that belongs to row rec->r with rec->src. */
    void (*check_record)(const pw_test_tiling_record *rec);
    /* The family's kernels are named <kernel_stem>_<level> (GEMV) and
     * <kernel_stem>_gemm_<level> (GEMM over the same bytes), the portable one
     * <kernel_stem>_scalar (always registered); the i8g GEMM kernels of the format
     * <i8g_stem>_<level>. Levels, best first: pw_test_tiling_levels. */
    const char *kernel_stem; /* e.g. "q4_0_q4x32k4" */
    const char *i8g_stem;    /* e.g. "q4_0_i8g32" */
    /* Where on Arm the family's GEMM ranks above the format's i8g kernels (kernel.h,
     * PW__PRIO_I8G_ARM_BELOW), as on x86, so that fastest keeps the family's one form:
     * PW_TEST_ARM_FAMILY_GEMM above the dotprod and i8mm ones, PW_TEST_ARM_FAMILY_GEMM_DOTPROD
     * above the dotprod one only (an i8mm core runs the i8mm kernel), 0 below both */
    int arm_family_gemm;
} pw_test_tiling;
enum { PW_TEST_ARM_FAMILY_GEMM = 1, PW_TEST_ARM_FAMILY_GEMM_DOTPROD = 2 };

/*
 * The golden packer check on a weight of 37 rows (a whole tile and a part
 * tile) x 3 blocks, and on rows [5, 69) and blocks [1, 4) of a 75 x 5-block
 * weight (a narrowed, offset view; two whole tiles): the plan's parameters
 * and sizes, every record through t->check_record, and that whole tiles
 * take exactly the file's bytes.
 */
void pw_test_tiling_layout(pw_context *ctx, const pw_test_tiling *t);

/*
 * The plan refuses another format (UNSUPPORTED), an input width that is not
 * a whole number of blocks and zero rows (SHAPE), and a size past 64 bits
 * (OVERFLOW).
 */
void pw_test_tiling_refusals(pw_context *ctx, const pw_test_tiling *t);

/*
 * The kernel named <stem><infix>_<level> for the best level ctx can run that has
 * one (levels, best first: avx512vnni, avxvnni, avx2 on x86; i8mm, dotprod on
 * Arm), or NULL. Written out here, not taken from the kernels' priorities, so
 * that the dispatch checks compare dispatch with an order the test states.
 */
const pw__kernel *pw_test_tiling_level_kernel(pw_context *ctx, const char *stem,
                                              const char *infix);

/*
 * Dispatch through a pw_weight on 37 rows x 3 blocks, at the ISA level base
 * runs at (PACKWISE_ISA): GEMV (n = 1) takes the family's kernel of the best
 * level with one adapter event to t->family of the whole packed size where
 * one is usable, and no kernel of the family elsewhere; GEMM (n = 4) takes the
 * family's GEMM kernel of the level on x86 (and on Arm where t->arm_family_gemm),
 * packing nothing more, else an i8g kernel (where the family has a kernel: the
 * format's i8mm kernel <i8g stem>x8k8_i8mm where ctx runs one, else the i8g kernel
 * of the family kernel's level, which must exist); the second GEMV, the second GEMM
 * and a GEMV after them pack nothing more.
 */
void pw_test_tiling_dispatch(pw_context *base, const pw_test_tiling *t);

/*
 * Among the kernels of the family alone (what a policy that keeps one packed
 * form per weight chooses from), at the ISA level ctx runs at: n = 1 takes
 * the family's GEMV kernel of the best level, else the portable one; n = 2
 * and n = 33 take the family's GEMM kernel of the best level that has one.
 * Each family GEMM kernel ranks against the i8g kernels of its level as
 * kernel.h says: above them on x86 and, where t->arm_family_gemm, on Arm (the
 * i8mm one included), else below them.
 */
void pw_test_tiling_family_kernels(pw_context *ctx, const pw_test_tiling *t);

/*
 * Every family GEMM kernel ctx can run (each level's), against the oracle
 * (kernel_oracle.h) in one call on one thread (so no task split shortens its
 * loops): [37, 12288] x n = 131, i.e. a row block of 128 rows whose
 * activations (4.7 MB) take two passes over the input, then a 3-row block,
 * and a part tile.
 */
void pw_test_tiling_gemm_large(pw_context *ctx, const pw_test_tiling *t);

/*
 * Every kernel of t's family ctx can run (the portable one at least), against the oracle
 * (kernel_oracle.h), on the row-major weight `bytes` of `out` rows x `nb` blocks, with
 * N(0, 1) activations drawn from rng: n = 1, 3 and n_max (a GEMM kernel's panels split
 * n_max rows). `what` names the weight in messages.
 */
struct pw_rng;
void pw_test_tiling_vs_oracle(pw_context *ctx, const pw_test_tiling *t, const uint8_t *bytes,
                              int64_t out, int64_t nb, int n_max, struct pw_rng *rng, const char *what);

/* The same with the activations x (n_max rows of nb * block_elems) given. */
void pw_test_tiling_vs_oracle_x(pw_context *ctx, const pw_test_tiling *t, const uint8_t *bytes,
                                int64_t out, int64_t nb, int n_max, const float *x,
                                const char *what);

/*
 * n blocks of t's format of random bytes but for their `scales` fp16 fields at
 * t->scales_at (d, and dmin where 2), finite positive ones in [0.001, 0.011): the patterns a
 * quantizer rarely writes (every 6-bit scale and min, every high bit). The caller
 * frees the result.
 */
uint8_t *pw_test_tiling_random_blocks(const pw_test_tiling *t, int64_t n, int scales,
                                      struct pw_rng *r);

/*
 * Every kernel of t's family against the oracle at the sums' bounds: every byte of every
 * block 0xFF (each value and scale at its top) but d = 0.001 and, where scales is 2,
 * dmin = 0 (at t->scales_at), against activations all +1 and all -1 (int8 +-127), on out rows x nb
 * blocks, n = 1, 3 and n. Random data never reaches these sums (an int16 sum that
 * saturates there passes every random case).
 */
void pw_test_tiling_at_bounds(pw_context *ctx, const pw_test_tiling *t, int64_t out, int64_t nb,
                              int n, int scales);

/* The same with every byte of every block `fill` (but d, and dmin where scales is 2):
 * 0x00 puts the families whose values are signed (Q3_K, TQ1_0) at their other end. */
void pw_test_tiling_at_fill(pw_context *ctx, const pw_test_tiling *t, int64_t out, int64_t nb,
                            int n, int scales, uint8_t fill);

/* The same on a weight whose every block is `block` (t->block_bytes bytes), against
 * activations all -1, then all +1 (int8 -+127); `what` names the case in messages. */
void pw_test_tiling_at_block(pw_context *ctx, const pw_test_tiling *t, int64_t out, int64_t nb,
                             int n, const uint8_t *block, const char *what);

/* Every kernel of t's family against the oracle on pw_test_tiling_random_blocks (rng
 * seeded with seed, `scales` fp16 fields): 45 rows (a whole and a part tile) x 3
 * blocks, n = 1, 3 and 13 (the GEMM kernels' panels split 13 rows). */
void pw_test_tiling_random(pw_context *ctx, const pw_test_tiling *t, int scales, uint64_t seed);

/* The same on 45 rows x nbs[c] blocks for each c < count in turn, the blocks of each
 * drawn from the one rng seeded with seed. */
void pw_test_tiling_random_widths(pw_context *ctx, const pw_test_tiling *t, int scales,
                                  uint64_t seed, const int64_t *nbs, int count);

/*
 * A family's record maker (the input-block-major GEMM kernels' fill, kernel/tile32.h:
 * make(src, rec) from the 32 blocks of a tile's column, row r's at src + r * block
 * bytes) against its packer: on a weight of 45 rows (a whole tile and a part one) x 2
 * blocks of random bytes (pw_test_tiling_random_blocks, `scales` fp16 fields), each
 * record made from a column's blocks (zero blocks past `out`, as the fill hands them)
 * into a buffer of 0x5A bytes must equal the packed record byte for byte (so the maker
 * writes every byte).
 */
void pw_test_tiling_record_maker(pw_context *ctx, const pw_test_tiling *t, int scales,
                                 void (*make)(const uint8_t *src, uint8_t *rec), const char *name);

/* A record maker and its name for messages: PW_TEST_TILING_MAKER(f) gives both;
 * PW_TEST_TILING_MAKER_AVX512(f) the same for an AVX-512 maker on x86-64 and NULL, NULL
 * elsewhere (where f is not compiled). */
typedef void (*pw_test_tiling_maker)(const uint8_t *src, uint8_t *rec);
#define PW_TEST_TILING_MAKER(f) (f), #f
#if defined(__x86_64__)
#define PW_TEST_TILING_MAKER_AVX512(f) PW_TEST_TILING_MAKER(f)
#else
#define PW_TEST_TILING_MAKER_AVX512(f) NULL, NULL
#endif

/*
 * The packer's checks, in this order: pw_test_tiling_layout, pw_test_tiling_refusals,
 * pw_test_tiling_record_maker for make, and for make_avx512 where ctx runs the AVX-512
 * VNNI kernels (make_avx512 NULL: the family has no maker of its own there).
 */
void pw_test_tiling_packing(pw_context *ctx, const pw_test_tiling *t, int scales,
                            pw_test_tiling_maker make, const char *make_name,
                            pw_test_tiling_maker make_avx512, const char *avx512_name);

/* The kernel checks of a family with kernels at every level: pw_test_tiling_dispatch,
 * pw_test_tiling_family_kernels and pw_test_tiling_gemm_large, in this order. */
void pw_test_tiling_kernels(pw_context *ctx, const pw_test_tiling *t);

/*
 * Row item->r's 256 2-bit values in a record of q2kx32k4's layout (kernel/q2kx.h; TQ2_0's
 * tq2x32k4 has the same quant bytes, kernel/tq2x.h) against the 64 qs bytes at byte qs_at
 * of the source block, walked forward as Q2_K and TQ2_0 define them (bits 2g of
 * qs[32h + l] are value 128h + 32g + l); zeros on a padding row. `name` names a value in
 * messages ("quant", "trit").
 */
void pw_test_tiling_q2_values(const pw_test_tiling_record *item, size_t qs_at, const char *name);

/* Whether ctx runs the AVX-512 VNNI kernels (F, BW, VL and VNNI usable; 0 off x86-64):
 * the condition for calling their ISA-specific makers (pw__*_record_from_blocks_avx512). */
int pw_test_tiling_avx512(pw_context *ctx);

#endif
