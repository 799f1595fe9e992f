/*
 * The QB4W kernel families (blockwise int4, include/packwise/qb4w.h): the
 * packed right-hand side, the packer and its unpacker, the descriptor macro,
 * the oracle and the portable kernel. Kernels keep the contract of
 * kernel/kernel.h with .epilogue set, and the per-block steps below.
 *
 * Which terms are stored, and why. With QD8 activations x ~ (q - zp) * a_s
 * and weights w = s_b * (u - z_b) (u the unsigned nibble, z_b the block's
 * zero point, both 0 .. 15), one row's product is
 *
 *   a_s * sum_b s_b * sum_{k in b} (q_k - zp) (u_k - z_b)
 *
 * Expanding the product gives four terms per block: q.u, the activation's
 * zero point times the block's weight sum (zp * sum u), the weight's zero
 * point times the block's activation sum (z_b * sum q), and B * zp * z_b.
 * Two choices remove all but one of them from the inner loop:
 * - the weight's zero point is taken off each value before the multiply:
 *   w' = u - z_b is in -15 .. 15, an int8 (one subtraction per weight vector,
 *   shared by every row of X), which folds the z_b terms in, so no
 *   activation block sum is needed;
 * - the activations enter as qu = q + 128 (0 .. 255, unsigned: what x86's
 *   vpdpbusd multiplies) and the offset and zero point together, (zp + 128),
 *   multiply the weight sum ws_b = sum_{k in b} (u_k - z_b). As a block's
 *   scale multiplies both, their sum over blocks is one number per channel,
 *   stored once: F = sum_b ws_b * s_b. Then
 *
 *   sum_b s_b sum_k (q_k - zp) w'_k = sum_b s_b d_b + (neg_zp - 128) * F,
 *   d_b = sum_{k in b} qu_k w'_k   (exact; |d_b| <= 256 * 255 * 15 < 2^24)
 *
 * So the tile stores per block and channel the zero point (u8) and the scale
 * (f32, exact from f16 and bf16), and per channel F (f32) and the bias. The
 * float work per block and row of X is one conversion and one fused
 * multiply-add. Kernels that multiply signed bytes (Arm sdot, smmla) form
 * d_b as sum q w' + 128 * ws_b, with ws_b summed from the tile's nibbles.
 * The price of folding the zero point into F: acc and the correction can be
 * large against their sum (128 * F against the result), so y carries an
 * error of a few f32 ulps of 128 * |F| * a_s; exact integers would need the
 * correction per block and row of X (two more operations each).
 *
 * Packed RHS (families "qb4w_n<nr>k<kr>s<sr>", made only by pw__qb4w_pack
 * with nr, kr, sr from a kernel descriptor and B = desc->group from the
 * weights). nb = ceil(K / B) blocks; N padded to whole tiles of nr channels.
 * Tile t holds channels n = t*nr + c (c < nr):
 *
 *   records of G = 64 / nr blocks (nr divides 64), the last of the blocks left
 *   (nb - G * floor((nb - 1) / G) of them), each record, for its g blocks:
 *     data    g blocks of B / kr chunks each, each chunk | ch 0: kr/2 bytes | ch 1 |
 *             ... | ch nr-1 |; chunk j of block b = k in [b*B + j*kr, b*B + j*kr + kr)
 *     scale   f32 [g][nr]
 *     zero    u8  [g][nr]
 *   F       f32 [nr]      F = 0; for b in order: F = fmaf((float)ws_b, s_b, F)
 *   bias    f32 [nr]      0 when the weights have no bias
 *   (zero bytes up to a multiple of 64)
 *
 * A whole record is a multiple of 64 bytes (G * nr = 64 zero bytes, 4 * 64 scale bytes,
 * 32 * B data bytes), so every record starts on a cache line. The record keeps a
 * block's scales and zero points next to its data: a GEMV reads each tile in address
 * order (the four blocks' data, then their scales and zero points), which hardware
 * prefetchers follow; with all the data before all the scales and zero points (version
 * 2) a tile was three streams that needed software prefetch (x86/qb4w_avx512.h has the
 * figures).
 *
 * Inside a chunk, value j of a channel is the UNSIGNED nibble u at the slot
 * QC4W's sr gives (kernel/qc4w.h: sr = 1 the raw pairing, sr = 2 byte j %
 * (kr/2), low nibble for the first half). k past K inside the last block
 * holds u = z_b (so u - z_b = 0 and ws_b counts only real k). Channels of a
 * partial last tile are zero throughout. Little-endian; tiles start at
 * multiples of tile_bytes from a 64-byte aligned base. desc: kind
 * PW_WEIGHT_QB4W, format PW_FORMAT_COUNT, group = B, in_padded = nb * B.
 *
 * The kernel contract (kernel/kernel.h, with .epilogue): y[m, n] for n in
 * [n0, n1), m in [m0, m1), from the QD8 rows (padded to Kq = round_up(K, 32)
 * values; a kernel multiplies block b over its first min(B, Kq - b*B) values
 * only, never reading a QD8 row or panel past Kq):
 *
 *   d_b  = sum_{k in b} (q[m, k] + 128) * (u[n, k] - z_b)             (exact int32)
 *   acc  = 0;  for b = 0 .. nb-1:  acc = fmaf((float)d_b, s_b, acc)    (fused, one rounding)
 *   t    = acc + (float)(neg_zp[m] - 128) * F[n]                        (f32 mul, then add)
 *   v    = t * a_scale[m] + bias[n]                                     (f32 mul, then add)
 *   y    = min(max(v, min), max), as half into y16 when set (nearest even), else f32
 *
 * Every ISA packwise targets has a correctly rounded fused multiply-add
 * (x86 FMA3, which the AVX2 level requires; Arm's vfma; C's fmaf), so every
 * kernel gives the oracle's bits.
 */
#ifndef PACKWISE_KERNEL_QB4W_H
#define PACKWISE_KERNEL_QB4W_H

#include "base/internal.h"
#include "kernel/kernel.h"
#include "kernel/qc4w.h"
#include "packwise/qb4w.h"
#include "quant/act.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define PW__QB4W_PACK_VERSION 3 /* bump when the packed bytes change */
#define PW__QB4W_MIN_B 16
#define PW__QB4W_MAX_B 256

/* ------------------------------------------------------------------------ */
/* Raw weights                                                              */
/* ------------------------------------------------------------------------ */

/* What a packer reads: N rows of ceil(K/2) bytes (a transposed source converted first)
 * and the raw descriptor's scales, zero points and bias (bias may come from options). */
typedef struct pw__qb4w_source {
    const uint8_t *nk;
    const pw_qb4w_weights *w;
    const float *bias;
} pw__qb4w_source;

/* Sizes of the raw arrays: data bytes, scales (elements), zero-point bytes (0 for CONST);
 * PW_ERR_* on overflow. */
pw_status pw__qb4w_raw_sizes(pw_context *ctx, const pw_qb4w_weights *w, uint64_t *data_bytes,
                             uint64_t *scale_count, uint64_t *zero_bytes);

/* Unsigned nibble u of w[n, k] (0 .. 15) read from N x K rows `nk` (stride ceil(K/2));
 * signed sources (CONST 0) are flipped so that u - 8 is the value. */
static inline int pw__qb4w_nibble(const uint8_t *nk, int64_t k_in, int64_t n, int64_t k,
                                  int flip) {
    const int64_t stride = (k_in + 1) / 2;
    return ((nk[n * stride + k / 2] >> ((k & 1) * 4)) & 15) ^ flip;
}
/* The zero point of block b of row n (0 .. 15 after the descriptor's checks). */
int pw__qb4w_zero_at(const pw_qb4w_weights *w, int64_t n, int64_t b);
/* The scale of block b of row n, as f32. */
float pw__qb4w_scale_at(const pw_qb4w_weights *w, int64_t n, int64_t b);

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

#define PW__QB4W_FAMILY_NAME(NR, KR, SR) "qb4w_n" #NR "k" #KR "s" #SR
#define PW__QB4W_KERNEL(NR, KR, SR, isa_, features_, run_, priority_, mr_, panel_)            \
    {.info = {.name = PW__QB4W_FAMILY_NAME(NR, KR, SR) "_" isa_,                             \
              .key = PW__KEY("qb4w", "packed(" PW__QB4W_FAMILY_NAME(NR, KR, SR) ")", QD8, isa_), \
              .kind = PW_WEIGHT_QB4W,                                                       \
              .format = PW_FORMAT_COUNT,                                                    \
              .layout = PW_LAYOUT_PACKED,                                                   \
              .family = PW__QB4W_FAMILY_NAME(NR, KR, SR),                                   \
              .tile_rows = NR,                                                              \
              .tile_batch = mr_,                                                            \
              .activation = PW_ACT_QD8,                                                     \
              .features = features_,                                                        \
              .isa = isa_},                                                                 \
     .run = run_,                                                                           \
     .pack_plan = pw__qb4w_plan,                                                            \
     .pack = pw__qb4w_pack_source,                                                          \
     .priority = priority_,                                                                 \
     .min_n = 1,                                                                            \
     .nr = NR,                                                                              \
     .kr = KR,                                                                              \
     .sr = SR,                                                                              \
     .max_in = INT64_C(1) << 40,                                                            \
     .xq_panel = panel_,                                                                    \
     .epilogue = 1}

/* The descriptor's pack_plan: the tile from the kernel; B is set afterwards by
 * pw__qb4w_set_block (the plan's interface carries no block size). */
pw_status pw__qb4w_plan(pw_context *ctx, const pw__kernel *k, pw_format format, int64_t out,
                        int64_t in, pw__pack_desc *desc);
void pw__qb4w_pack_source(const pw__pack_desc *desc, const pw__source *src, int64_t o0, int64_t o1,
                          uint8_t *dst);

/* Fill desc for N x K weights in blocks of B packed with (nr, kr, sr) under `family`. */
pw_status pw__qb4w_pack_plan(pw_context *ctx, const char *family, int32_t nr, int32_t kr, int32_t sr,
                             int32_t block, int64_t n, int64_t k, pw__pack_desc *desc);

/* Pack channels [n0, n1) (n0 a multiple of nr; n1 too, or N) of src into dst (the whole
 * buffer's base). */
void pw__qb4w_pack(const pw__pack_desc *desc, const pw__qb4w_source *src, int64_t n0, int64_t n1,
                   uint8_t *dst);

/* Unpack to the raw form that `like` describes (its zero kind, zero point and scale type;
 * data N x ceil(K/2) with an odd K's unused nibble 0; zero_points in like's layout with
 * an odd n_blocks' unused nibble 0): the bit-exact inverse of pw__qb4w_pack. scales is
 * N x n_blocks elements of like->scale_type; zero_points and bias may be NULL to skip. */
void pw__qb4w_unpack(const pw__pack_desc *desc, const uint8_t *packed, const pw_qb4w_weights *like,
                     uint8_t *data, void *scales, uint8_t *zero_points, float *bias);

/* Byte offsets inside a tile (the layout above): records of 64 / nr blocks, the last
 * record of the blocks left; F and the bias after the last record. */
static inline int64_t pw__qb4w_blocks_of(const pw__pack_desc *d) { return d->in_padded / d->group; }
/* Bytes of one block's data (nr channels x B nibbles). */
static inline uint64_t pw__qb4w_block_data_bytes(const pw__pack_desc *d) {
    return (uint64_t)d->nr * (uint64_t)d->group / 2u;
}
/* Where block b's data, scales and zero points lie in a tile of nr channels, nb blocks and
 * data_bytes of data per block (kernels pass constants and step through it). */
typedef struct pw__qb4w_at {
    uint64_t data, scale, zero;
} pw__qb4w_at;
static inline pw__qb4w_at pw__qb4w_at_of(int32_t nr, int64_t nb, uint64_t data_bytes, int64_t b) {
    const uint64_t g = 64u / (uint64_t)nr, r = (uint64_t)b / g, i = (uint64_t)b % g;
    const uint64_t left = (uint64_t)nb - r * g, blocks = left < g ? left : g;
    const uint64_t at = r * g * (data_bytes + 5u * (uint64_t)nr);
    const pw__qb4w_at a = {at + i * data_bytes, at + blocks * data_bytes + 4u * i * (uint64_t)nr,
                           at + blocks * (data_bytes + 4u * (uint64_t)nr) + i * (uint64_t)nr};
    return a;
}
static inline pw__qb4w_at pw__qb4w_block_at(const pw__pack_desc *d, int64_t b) {
    return pw__qb4w_at_of(d->nr, pw__qb4w_blocks_of(d), pw__qb4w_block_data_bytes(d), b);
}
static inline uint64_t pw__qb4w_data_offset(const pw__pack_desc *d, int64_t b) {
    return pw__qb4w_block_at(d, b).data;
}
static inline uint64_t pw__qb4w_scale_offset(const pw__pack_desc *d, int64_t b) {
    return pw__qb4w_block_at(d, b).scale;
}
static inline uint64_t pw__qb4w_zero_offset(const pw__pack_desc *d, int64_t b) {
    return pw__qb4w_block_at(d, b).zero;
}
static inline uint64_t pw__qb4w_fsum_offset(const pw__pack_desc *d) {
    return (uint64_t)pw__qb4w_blocks_of(d) * (pw__qb4w_block_data_bytes(d) + 5u * (uint64_t)d->nr);
}
static inline uint64_t pw__qb4w_bias_offset(const pw__pack_desc *d) {
    return pw__qb4w_fsum_offset(d) + 4u * (uint64_t)d->nr;
}
/* Values of block b a kernel multiplies: min(B, Kq - b*B), Kq the QD8 rows' padding. */
static inline int64_t pw__qb4w_block_values(const pw__pack_desc *d, int64_t b) {
    const int64_t left = pw__qd8_k_padded(d->in) - b * d->group;
    return left < d->group ? left : d->group;
}

/* The oracle: plain loops over the raw weights and the QD8 rows, by the contract (d_b
 * from (q + 128) * (u - z) directly, F from the raw values, not from the packed tile). */
void pw__qb4w_reference(const pw_qb4w_weights *w, const float *bias, const uint8_t *lhs,
                        size_t lhs_row_bytes, int64_t batch, float min, float max, int f16, void *y,
                        int64_t ldy);

/* The portable packed kernel, generic over (nr, kr, sr, B). */
void pw__qb4w_run_scalar(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1);

/* The contract's f32 steps. */
static inline float pw__qb4w_block_step(float acc, int32_t d, float scale) {
    return fmaf((float)d, scale, acc);
}
static inline float pw__qb4w_finish(float acc, int32_t neg_zp, float fsum, float a_scale, float bias,
                                    float min, float max) {
    const float corr = (float)(neg_zp - 128) * fsum;
    const float t = acc + corr;
    float v = t * a_scale;
    v = v + bias;
    v = v < min ? min : v;
    return v > max ? max : v;
}

#endif
